// Bad values are refused at the field, with a reason; the display never shows a value the model does not
// hold.
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/models/attribute_table_model.h"
#include "gui/models/layer_tree_model.h"
#include "gui/panels/batch_panel.h"
#include "gui/panels/budget_bar.h"
#include "gui/panels/eliding_label.h"
#include "gui/panels/layer_editor.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTest>

using namespace batchfit;

namespace {

struct Window : test::AppWithSettings {
    MainWindow w{&temp.settings()};
    Window(const char* preset) {
        w.restoreSettings();
        w.document()->setGpu(customGpu(24.0));
        REQUIRE(w.files()->loadPreset(QString::fromLatin1(preset), false));
        w.resize(1366, 768);
        w.show();
        REQUIRE(w.waitForIdle());
    }
    /// Selects the first layer with op `op` and returns the index of attribute `key`.
    QModelIndex attribute(const char* op, const char* key, int* layerIndex = nullptr) {
        const Model& m = w.document()->model();
        int found = -1;
        for (int i = 0; i < static_cast<int>(m.layers.size()) && found < 0; ++i)
            if (m.layers[static_cast<std::size_t>(i)].op == op) found = i;
        REQUIRE(found >= 0);
        if (layerIndex) *layerIndex = found;
        w.layerPanel()->select(LayerAddress::top(found));
        AttributeTableModel* attrs = w.layerPanel()->editor()->attributes();
        for (int r = 0; r < attrs->rowCount(); ++r)
            if (attrs->keyAt(r) == QLatin1String(key))
                return attrs->index(r, AttributeTableModel::ValueColumn);
        FAIL("no attribute " << key);
        return {};
    }
};

} // namespace

TEST_CASE("a value the core refuses is not applied and the cell keeps the model's value", "[validation]") {
    Window f("resnet50");
    const Model before = f.w.document()->model();
    const QModelIndex channels = f.attribute("conv2d", "out_channels");
    AttributeTableModel* attrs = f.w.layerPanel()->editor()->attributes();
    const QString shown = attrs->data(channels).toString();
    REQUIRE(shown == QStringLiteral("64"));

    for (const char* bad : {"-5", "0", "1000000000000"}) {
        INFO(bad);
        attrs->setData(channels, QString::fromLatin1(bad));
        CHECK(f.w.document()->model() == before);
        CHECK(attrs->data(channels).toString() == shown); // never a value the model does not hold
        const QString why = attrs->rejection(QStringLiteral("out_channels"));
        CHECK(why.contains(QString::fromLatin1(bad)));
        CHECK(why.contains(QStringLiteral("stays 64")));
        CHECK(attrs->data(channels, Qt::ToolTipRole).toString() == why); // at the field
        CHECK(f.w.layerPanel()->editor()->problemText() == why);
        CHECK(f.w.document()->undoStack()->count() == 0);
    }
    CHECK(attrs->rejection(QStringLiteral("out_channels")).contains(QStringLiteral("too large")));
    // A good value clears the mark and is an edit.
    attrs->setData(channels, QStringLiteral("32"));
    CHECK(attrs->rejection(QStringLiteral("out_channels")).isEmpty());
    CHECK(f.w.document()->undoStack()->count() == 1);
}

TEST_CASE("an edit that breaks a later layer is kept, and that layer is marked in the stack",
          "[validation]") {
    Window f("resnet50");
    // tiny-cnn's residual block adds its input (16 channels) to its output: 8 channels in conv1 break the
    // merge further down, an edit the user may be half-way through. It is applied; the problem names the
    // block, which turns red in the stack.
    REQUIRE(f.w.files()->openPath(QStringLiteral(BATCHFIT_TEST_DATA "/models/tiny-cnn.json"), false));
    REQUIRE(f.w.waitForIdle());
    const QModelIndex channels = f.attribute("conv2d", "out_channels");
    AttributeTableModel* attrs = f.w.layerPanel()->editor()->attributes();
    REQUIRE(attrs->setData(channels, QStringLiteral("8")));
    CHECK(attrs->rejection(QStringLiteral("out_channels")).isEmpty());
    CHECK(f.w.document()->undoStack()->count() == 1);
    REQUIRE(f.w.waitForIdle());
    LayerTreeModel* tree = f.w.layerPanel()->treeModel();
    const QModelIndex marked = tree->problemIndex();
    REQUIRE(marked.isValid());
    CHECK(tree->data(marked).toString().startsWith(QStringLiteral("block")));
    CHECK(tree->data(marked, Qt::ForegroundRole).isValid());
    CHECK(tree->data(marked, Qt::ToolTipRole).toString().contains(QStringLiteral("block[0].merge")));
    CHECK(f.w.layerPanel()->editor()->problemText().startsWith(QStringLiteral("The model has a problem: ")));
    f.w.document()->undoStack()->undo();
    REQUIRE(f.w.waitForIdle());
    CHECK_FALSE(tree->problemIndex().isValid());
}

TEST_CASE("the batch box refuses -5 with a word instead of turning it into 5", "[validation]") {
    Window f("resnet50");
    f.w.setBatch(32);
    QSpinBox* spin = f.w.batchPanel()->spinBox();
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, QStringLiteral("-5"));
    CHECK(spin->text() == QStringLiteral("-5")); // typed as typed
    QTest::keyClick(spin, Qt::Key_Return);
    CHECK(spin->value() == 32);
    CHECK(f.w.batch() == 32);
    CHECK(f.w.batchPanel()->noteText().contains(QStringLiteral("'-5' is not a batch size")));
    CHECK(f.w.batchPanel()->noteText().contains(QStringLiteral("stays 32")));
}

TEST_CASE("a long problem takes the verdict's line and moves nothing", "[validation]") {
    Window f("llama-2-7b");
    BatchPanel* panel = f.w.batchPanel();
    f.w.setBatch(8);
    REQUIRE(f.w.waitForIdle());
    const int height = panel->height();
    const QRect bar = panel->budgetBar()->geometry();
    panel->showProblem(
        QStringLiteral("No estimate at batch 2147483647: ") +
        QStringLiteral("the activations of layers[3].self_attn need more than 2^62 bytes; ").repeated(4));
    QCoreApplication::processEvents();
    CHECK(panel->height() == height);
    CHECK(panel->budgetBar()->geometry().top() == bar.top());
    CHECK(panel->verdictLabel()->isElided());
    CHECK(f.w.verdictText().contains(QStringLiteral("2^62")));
}
