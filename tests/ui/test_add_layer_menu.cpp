// Add Layer: ops grouped by family, with a search field; the layer stack shows its memory columns first.
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/document/op_catalogue.h"
#include "gui/files/file_controller.h"
#include "gui/models/layer_tree_model.h"
#include "gui/panels/add_layer_menu.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QHeaderView>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTest>
#include <QTreeView>

using namespace batchfit;

TEST_CASE("Add Layer lists every op once, grouped by family", "[layers][add]") {
    test::app();
    AddLayerMenu menu;
    QStringList listed;
    int families = 0;
    for (QAction* a : menu.actions())
        if (QMenu* sub = a->menu()) {
            ++families;
            for (QAction* op : sub->actions()) {
                listed << op->text();
                CHECK(OpCatalogue::familyName(OpCatalogue::family(op->text())) == a->text());
            }
        }
    CHECK(families >= 9);
    QStringList all = OpCatalogue::ops();
    all.sort();
    listed.sort();
    CHECK(listed == all); // none lost, none twice
    CHECK(OpCatalogue::family(QStringLiteral("rmsnorm")) == OpCatalogue::Family::Normalization);
    CHECK(OpCatalogue::family(QStringLiteral("opaque")) == OpCatalogue::Family::Other);
}

TEST_CASE("the Add Layer search filters by name, description and family; Enter adds the first",
          "[layers][add]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    AddLayerMenu* menu = w.layerPanel()->addLayerMenu();
    menu->searchField()->setText(QStringLiteral("norm"));
    const QStringList norms = menu->matches();
    for (const char* op : {"batchnorm2d", "layernorm", "groupnorm", "rmsnorm"})
        CHECK(norms.contains(QString::fromLatin1(op)));
    CHECK_FALSE(norms.contains(QStringLiteral("conv2d")));
    menu->searchField()->setText(QStringLiteral("convolution")); // a family name
    CHECK(menu->matches().contains(QStringLiteral("conv2d")));
    menu->searchField()->setText(QStringLiteral("zzzz"));
    CHECK(menu->matches().isEmpty());

    menu->searchField()->setText(QStringLiteral("rmsnorm"));
    REQUIRE(menu->matches().value(0) == QStringLiteral("rmsnorm"));
    const std::size_t before = w.document()->model().layers.size();
    QTest::keyClick(menu->searchField(), Qt::Key_Return);
    CHECK(w.document()->model().layers.size() == before + 1);
    bool added = false;
    for (const Layer& l : w.document()->model().layers) added |= l.op == "rmsnorm";
    CHECK(added);
}

TEST_CASE("the layer stack shows activations, share and parameters right after the name", "[layers]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    auto* tree = w.layerPanel()->findChild<QTreeView*>();
    REQUIRE(tree);
    QHeaderView* h = tree->header();
    CHECK(h->visualIndex(LayerTreeModel::NameColumn) == 0);
    // Trains (fine-tuning) sits next to the name, hidden while nothing is frozen
    CHECK(h->visualIndex(LayerTreeModel::TrainableColumn) == 1);
    CHECK(h->isSectionHidden(LayerTreeModel::TrainableColumn));
    CHECK(h->visualIndex(LayerTreeModel::ActivationColumn) == 2);
    CHECK(h->visualIndex(LayerTreeModel::ShareColumn) == 3);
    CHECK(h->visualIndex(LayerTreeModel::ParametersColumn) == 4);
    // Those four fit a dock of 400 px (the width it gets on a 1366 x 768 screen).
    int width = 0;
    for (int c : {int(LayerTreeModel::NameColumn), int(LayerTreeModel::ActivationColumn),
                  int(LayerTreeModel::ShareColumn), int(LayerTreeModel::ParametersColumn)})
        width += h->sectionSize(c);
    CHECK(width <= 400);
}
