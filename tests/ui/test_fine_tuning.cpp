// Frozen layers in the GUI: the layer tree's Trains column, "Freeze Layers Before This One", undo, the status
// bar.
#include "batchfit/estimator.h"
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/document/model_edits.h"
#include "gui/files/file_controller.h"
#include "gui/models/layer_tree_model.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSignalSpy>
#include <QSpinBox>
#include <QToolButton>
#include <QTreeView>
#include <QUndoStack>

using namespace batchfit;

namespace {

Layer op(const char* name, const char* type) {
    Layer l;
    l.name = name;
    l.op = type;
    return l;
}

/// a, blk{fc, act}, head{x{y}}, loss
Model nested() {
    Model m;
    m.name = "nested";
    m.inputShape = {16};
    Layer blk;
    blk.name = "blk";
    blk.layers = {op("fc", "linear"), op("act", "relu")};
    Layer inner;
    inner.name = "x";
    inner.layers = {op("y", "linear")};
    Layer head;
    head.name = "head";
    head.layers = {inner, op("z", "linear")};
    m.layers = {op("a", "linear"), blk, head, op("loss", "cross_entropy")};
    return m;
}

QModelIndex rowNamed(const LayerTreeModel& tree, const QString& name, int column,
                     const QModelIndex& parent = {}) {
    for (int r = 0; r < tree.rowCount(parent); ++r)
        if (tree.data(tree.index(r, LayerTreeModel::NameColumn, parent)).toString() == name)
            return tree.index(r, column, parent);
    return {};
}

struct Window : test::AppWithSettings {
    MainWindow window{&temp.settings()};
    Window() {
        window.restoreSettings();
        window.document()->setGpu(customGpu(24.0));
        REQUIRE(window.files()->loadPreset(QStringLiteral("resnet50"), false));
        window.resize(1400, 900);
        window.show();
        REQUIRE(window.waitForIdle());
    }
};

} // namespace

TEST_CASE("freezing edits: a layer, a layer inside a frozen block, everything before a layer",
          "[edits][frozen]") {
    SECTION("unfreezing a layer inside a frozen block keeps its siblings frozen") {
        Model m = nested();
        m.layers[2].trainable = false; // head
        const LayerAddress y =
            LayerAddress::top(2).child(LayerAddress::Branch::Main, 0).child(LayerAddress::Branch::Main, 0);
        REQUIRE(ModelEdits::setTrainable(m, y, true) == y);
        CHECK(m.layers[2].trainable);
        CHECK(m.layers[2].layers[0].trainable);                // x: on the path, made trainable
        CHECK(m.layers[2].layers[0].layers[0].trainable);      // y
        CHECK_FALSE(m.layers[2].layers[1].trainable);          // z: was frozen through head, still is
        CHECK(ModelEdits::setTrainable(m, y, true).isEmpty()); // nothing changes the second time
        REQUIRE(ModelEdits::setTrainable(m, LayerAddress::top(0), false) == LayerAddress::top(0));
        CHECK_FALSE(m.layers[0].trainable);
    }
    SECTION("freeze everything before a nested layer") {
        Model m = nested();
        const LayerAddress z = LayerAddress::top(2).child(LayerAddress::Branch::Main, 1);
        REQUIRE(ModelEdits::freezeBefore(m, z) == z);
        CHECK_FALSE(m.layers[0].trainable);           // a
        CHECK_FALSE(m.layers[1].trainable);           // blk, wholly before
        CHECK(m.layers[1].layers[0].trainable);       // its children inherit (their own flags stay true)
        CHECK(m.layers[2].trainable);                 // head holds z
        CHECK_FALSE(m.layers[2].layers[0].trainable); // x, before z
        CHECK(m.layers[2].layers[1].trainable);       // z
        CHECK(m.layers[3].trainable);                 // loss, after
        CHECK(ModelEdits::freezeBefore(m, z).isEmpty());
        REQUIRE(ModelEdits::trainAll(m));
        CHECK(m == nested());
        CHECK_FALSE(ModelEdits::trainAll(m));
    }
}

TEST_CASE("the Trains column shows what the core trains; ticking it is an undoable edit",
          "[window][frozen][undo]") {
    Window f;
    MainWindow& w = f.window;
    LayerTreeModel* tree = w.layerPanel()->treeModel();
    const Model before = w.document()->model();
    const std::uint64_t all = w.result()->estimator->parameterCount();
    REQUIRE(w.result()->estimator->trainableParameterCount() == all);

    auto* treeView = w.layerPanel()->findChild<QTreeView*>();
    REQUIRE(treeView);
    CHECK(treeView->header()->isSectionHidden(LayerTreeModel::TrainableColumn)); // full training: not shown
    const QModelIndex fc = rowNamed(*tree, QStringLiteral("fc"), LayerTreeModel::TrainableColumn);
    const QModelIndex layer1 = rowNamed(*tree, QStringLiteral("layer1"), LayerTreeModel::TrainableColumn);
    REQUIRE(fc.isValid());
    REQUIRE(layer1.isValid());
    CHECK(tree->data(fc, Qt::CheckStateRole).toInt() == Qt::Checked);
    CHECK(tree->flags(fc).testFlag(Qt::ItemIsUserCheckable));
    const QModelIndex pool = rowNamed(*tree, QStringLiteral("avgpool"), LayerTreeModel::TrainableColumn);
    if (pool.isValid()) { // a layer without parameters has no box
        CHECK_FALSE(tree->flags(pool).testFlag(Qt::ItemIsUserCheckable));
        CHECK_FALSE(tree->data(pool, Qt::CheckStateRole).isValid());
    }
    CHECK_FALSE(
        tree->data(tree->inputIndex().siblingAtColumn(LayerTreeModel::TrainableColumn), Qt::CheckStateRole)
            .isValid());

    // "Freeze Layers Before This One" on fc: a frozen backbone, only the classifier trains.
    w.layerPanel()->select(tree->addressOf(fc));
    QAction* freeze = nullptr;
    for (QAction* a : w.layerPanel()->editActions())
        if (a->text().remove(QLatin1Char('&')) == QStringLiteral("Freeze Layers Before This One")) freeze = a;
    REQUIRE(freeze);
    REQUIRE(freeze->isEnabled());
    const int steps = w.document()->undoStack()->count();
    freeze->trigger();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->undoStack()->count() == steps + 1);
    const std::uint64_t fcParams = 2048 * 1000 + 1000;
    CHECK(w.result()->estimator->trainableParameterCount() == fcParams);
    auto* view = w.layerPanel()->findChild<QTreeView*>();
    REQUIRE(view);
    CHECK_FALSE(
        view->header()->isSectionHidden(LayerTreeModel::TrainableColumn)); // shown once something is frozen
    CHECK(w.result()->estimator->parameterCount() == all);
    const QModelIndex fc2 = rowNamed(*tree, QStringLiteral("fc"), LayerTreeModel::TrainableColumn);
    const QModelIndex layer1b = rowNamed(*tree, QStringLiteral("layer1"), LayerTreeModel::TrainableColumn);
    CHECK(tree->data(fc2, Qt::CheckStateRole).toInt() == Qt::Checked);
    CHECK(tree->data(layer1b, Qt::CheckStateRole).toInt() == Qt::Unchecked);
    CHECK(w.shownEstimate()->gradientBytes == 4 * fcParams);
    const auto* info = w.findChild<QLabel*>(QStringLiteral("modelInfo"));
    REQUIRE(info);
    CHECK(info->text().contains(QStringLiteral("2,049,000 of 25,557,032 parameters trainable")));

    // Ticking layer4 in the tree trains it again (through the document, undoable).
    const QModelIndex layer4 = rowNamed(*tree, QStringLiteral("layer4"), LayerTreeModel::TrainableColumn);
    REQUIRE(layer4.isValid());
    QSignalSpy toggled(tree, &LayerTreeModel::trainableToggled);
    REQUIRE(tree->setData(layer4, Qt::Checked, Qt::CheckStateRole));
    CHECK(toggled.count() == 1);
    REQUIRE(w.waitForIdle());
    CHECK(w.result()->estimator->trainableParameterCount() > fcParams);
    CHECK(w.document()->undoStack()->undoText().startsWith(QStringLiteral("Train layer4")));

    w.document()->undoStack()->undo();
    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->model() == before);
    CHECK(w.result()->estimator->trainableParameterCount() == all);
}

TEST_CASE("choosing LoRA in the training set-up trains adapters only, undoably", "[window][lora][undo]") {
    Window f;
    MainWindow& w = f.window;
    auto* mode = w.findChild<QComboBox*>(QStringLiteral("fineTuningBox"));
    auto* rank = w.findChild<QDoubleSpinBox*>(QStringLiteral("loraRank"));
    auto* targets = w.findChild<QLineEdit*>(QStringLiteral("loraTargets"));
    REQUIRE(mode);
    REQUIRE(rank);
    REQUIRE(targets);
    CHECK_FALSE(rank->isVisible()); // full training: LoRA's rows are hidden
    // ResNet-50 has no PEFT default: name its classifier
    mode->setCurrentIndex(1);
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().lora.rank == 16);
    CHECK(rank->isVisible());
    CHECK(targets->placeholderText().contains(QStringLiteral("no PEFT default")));
    // the picker lists the model's linears: pick fc
    auto* picker = w.findChild<QToolButton*>(QStringLiteral("loraTargetPicker"));
    REQUIRE(picker);
    QMenu* menu = picker->menu();
    REQUIRE(menu);
    QMetaObject::invokeMethod(menu, "aboutToShow");
    QAction* fc = nullptr;
    for (QAction* a : menu->actions())
        if (a->text() == QStringLiteral("fc")) fc = a;
    REQUIRE(fc);
    fc->trigger();
    REQUIRE(w.waitForIdle());
    CHECK(targets->text() == QStringLiteral("fc"));
    REQUIRE(w.result());
    CHECK(w.document()->config().lora.targets == std::vector<std::string>{"fc"});
    CHECK(w.result()->estimator->trainableParameterCount() == 16u * (2048 + 1000));
    rank->setValue(8);
    REQUIRE(w.waitForIdle());
    CHECK(w.result()->estimator->trainableParameterCount() == 8u * (2048 + 1000));
    QUndoStack* undo = w.document()->undoStack();
    while (w.document()->config().lora.rank > 0 && undo->canUndo()) undo->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().lora.rank == 0);
    CHECK(mode->currentIndex() == 0);
    CHECK(w.result()->estimator->trainableParameterCount() == w.result()->estimator->parameterCount());
}
