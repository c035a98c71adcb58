#include "batchfit/fit_plan.h"
#include "batchfit/what_if.h"
#include "catch_compat.h"
#include "gui/charts/component_style.h"
#include "gui/charts/memory_chart.h"
#include "gui/charts/timeline_chart.h"
#include "gui/document/document.h"
#include "gui/estimation/estimation_service.h"
#include "gui/files/file_controller.h"
#include "gui/models/attribute_table_model.h"
#include "gui/models/breakdown_model.h"
#include "gui/models/layer_tree_model.h"
#include "gui/models/lever_model.h"
#include "gui/panels/batch_panel.h"
#include "gui/panels/eliding_label.h"
#include "gui/panels/layer_editor.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/panels/training_panel.h"
#include "gui/panels/what_if_panel.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QHelpEvent>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSet>
#include <QSlider>
#include <QTabWidget>
#include <QToolTip>
#include <QUndoStack>
#include <QValueAxis>

using namespace batchfit;

namespace {

/// A window with ResNet-50 on a custom 24 GiB GPU, the estimate shown.
struct Fixture : test::AppWithSettings {
    MainWindow window{&temp.settings()};
    Fixture() {
        window.restoreSettings();
        window.document()->setGpu(customGpu(24.0));
        REQUIRE(window.files()->loadPreset(QStringLiteral("resnet50"), false));
        window.resize(1400, 900);
        window.show();
        REQUIRE(window.waitForIdle());
    }
};

} // namespace

TEST_CASE("loading a preset fills the tree, the chart and the tables", "[window]") {
    Fixture f;
    MainWindow& w = f.window;
    REQUIRE(w.result());
    CHECK(w.layerPanel()->treeModel()->rowCount() > 10);
    CHECK(w.memoryChart()->stackPointCount() > 20);
    CHECK(w.breakdown()->rowCount() >= 8);
    CHECK(w.shownEstimate().has_value());
    CHECK(w.verdictText().startsWith(QStringLiteral("fits")));
    CHECK(w.windowTitle().contains(QStringLiteral("ResNet-50")));
    CHECK_FALSE(w.isWindowModified());
    const auto* welcome = w.findChild<ElidingLabel*>(QStringLiteral("welcomeText"));
    REQUIRE(welcome);
    CHECK(welcome->fullText().contains(QStringLiteral("ResNet-50 is loaded")));

    // The timeline tab marks the peak the core names.
    w.tabs()->setCurrentWidget(w.timelineChart());
    QCoreApplication::processEvents();
    CHECK(w.timelineChart()->peakIndex() >= 0);

    // Another preset replaces everything.
    REQUIRE(w.files()->loadPreset(QStringLiteral("gpt2-small"), false));
    REQUIRE(w.waitForIdle());
    CHECK(w.windowTitle().contains(QStringLiteral("GPT-2")));
    CHECK(welcome->fullText().contains(QStringLiteral("GPT-2 small is loaded")));
    CHECK_FALSE(welcome->fullText().contains(QStringLiteral("ResNet")));
    CHECK(w.result()->estimator->parameterCount() > 100000000);
}

TEST_CASE("a layer edit changes the estimate and undo restores it exactly", "[window][undo]") {
    Fixture f;
    MainWindow& w = f.window;
    w.setBatch(32);
    const Model before = w.document()->model();
    const std::uint64_t peakBefore = w.shownEstimate()->peakAllocatedBytes;
    const std::uint64_t requiredBefore = w.shownEstimate()->requiredBytes;

    // Duplicate the first top-level block (layer1 in ResNet-50): more activations.
    int blockIndex = -1;
    for (int i = 0; i < static_cast<int>(before.layers.size()); ++i)
        if (before.layers[static_cast<std::size_t>(i)].isBlock()) {
            blockIndex = i;
            break;
        }
    REQUIRE(blockIndex >= 0);
    w.layerPanel()->select(LayerAddress::top(blockIndex));
    w.layerPanel()->duplicateCurrent();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->model().layers.size() == before.layers.size() + 1);
    CHECK(w.isWindowModified());
    CHECK(w.shownEstimate()->peakAllocatedBytes > peakBefore);

    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->model() == before);
    CHECK(w.shownEstimate()->peakAllocatedBytes == peakBefore);
    CHECK(w.shownEstimate()->requiredBytes == requiredBefore);
    CHECK_FALSE(w.isWindowModified());

    w.document()->undoStack()->redo();
    REQUIRE(w.waitForIdle());
    CHECK(w.shownEstimate()->peakAllocatedBytes > peakBefore);
}

TEST_CASE("the slider's verdict flips at the solver's largest batch", "[window][slider]") {
    Fixture f;
    MainWindow& w = f.window;
    const MaxBatch m = w.result()->maxBatch;
    REQUIRE(m.largest > 8);
    REQUIRE_FALSE(m.capped);
    QSlider* slider = w.batchPanel()->slider();
    REQUIRE(slider->maximum() > m.largest); // linear axis: the slider's value is the batch

    slider->setValue(static_cast<int>(m.largest));
    CHECK(w.batch() == m.largest);
    CHECK(w.verdictText().startsWith(QStringLiteral("fits")));
    CHECK(w.memoryChart()->markerBatch() == Approx(static_cast<double>(m.largest)));

    slider->setValue(static_cast<int>(m.largest + 1));
    CHECK(w.batch() == m.largest + 1);
    CHECK(w.verdictText().startsWith(QStringLiteral("out of memory")));

    // "Largest batch that fits" jumps back.
    w.batchPanel()->maxButton()->click();
    CHECK(w.batch() == m.largest);
    CHECK(w.verdictText().startsWith(QStringLiteral("fits")));
}

TEST_CASE("a what-if lever applies in one click and undoes", "[window][whatif]") {
    Fixture f;
    MainWindow& w = f.window;
    REQUIRE(w.waitForIdle(60000, true));
    LeverModel* levers = w.whatIfPanel()->model();
    REQUIRE(levers->rowCount() > 0);
    const Lever best = *levers->lever(0);
    CHECK(best.maxBatch >= best.baselineMaxBatch);
    const TrainingConfig before = w.document()->config();
    const std::int64_t maxBefore = w.result()->maxBatch.largest;

    emit w.whatIfPanel()->applyRequested(best);
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config() == best.config);
    CHECK(w.result()->maxBatch.largest * best.config.accumulationSteps == best.maxBatch);
    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config() == before);
    CHECK(w.result()->maxBatch.largest == maxBefore);
}

TEST_CASE("an invalid edit keeps the last chart and explains the problem", "[window][errors]") {
    Fixture f;
    MainWindow& w = f.window;
    Model broken = w.document()->model();
    broken.inputShape = {5}; // conv2d needs [C, H, W]
    w.document()->editModel(broken, QStringLiteral("break"), {});
    REQUIRE(w.waitForIdle());
    CHECK(w.verdictText().contains(QStringLiteral("problem")));
    CHECK(w.result()); // the last good estimator is kept
    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.verdictText().startsWith(QStringLiteral("fits")));
}

TEST_CASE("the layer editor applies valid attribute edits and explains invalid ones", "[window][editor]") {
    Fixture f;
    MainWindow& w = f.window;
    const Model before = w.document()->model();
    int fc = -1;
    for (int i = 0; i < static_cast<int>(before.layers.size()); ++i)
        if (before.layers[static_cast<std::size_t>(i)].op == "linear") fc = i;
    REQUIRE(fc >= 0);
    w.layerPanel()->select(LayerAddress::top(fc));
    AttributeTableModel* attrs = w.layerPanel()->editor()->attributes();
    int row = -1;
    for (int r = 0; r < attrs->rowCount(); ++r)
        if (attrs->keyAt(r) == QStringLiteral("out_features")) row = r;
    REQUIRE(row >= 0);
    const QModelIndex value = attrs->index(row, AttributeTableModel::ValueColumn);

    // Text that does not parse is refused with a reason that quotes it; the cell shows the model's value.
    const QString shownBefore = attrs->data(value).toString();
    CHECK_FALSE(attrs->setData(value, QStringLiteral("a thousand")));
    CHECK(attrs->data(value).toString() == shownBefore);
    CHECK(attrs->rejection(QStringLiteral("out_features")).contains(QStringLiteral("'a thousand'")));
    CHECK(w.layerPanel()->editor()->problemText().contains(QStringLiteral("out_features")));
    CHECK(w.document()->model() == before);

    // A valid value is an undoable edit that the estimate follows.
    const std::uint64_t paramsBefore = w.result()->estimator->parameterCount();
    REQUIRE(attrs->setData(value, QStringLiteral("2000")));
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->model().layers[static_cast<std::size_t>(fc)].attrs.getInt("out_features") == 2000);
    CHECK(w.result()->estimator->parameterCount() > paramsBefore);
    CHECK(w.layerPanel()->editor()->problemText().isEmpty());
    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->model() == before);
    CHECK(w.result()->estimator->parameterCount() == paramsBefore);
}

TEST_CASE("the set-up, GPU, batch and window state survive a restart", "[window][settings]") {
    test::app();
    test::TempSettings temp;
    TrainingConfig config;
    config.optimizer = OptimizerKind::AdamW;
    config.precision = Precision::AmpBf16;
    config.accumulationSteps = 4;
    {
        MainWindow first(&temp.settings());
        first.restoreSettings();
        first.document()->setGpu(customGpu(40.0));
        first.document()->editConfig(config, QStringLiteral("set-up"));
        first.setBatch(48);
        first.setLogScale(true);
        first.saveSettings();
    }
    MainWindow second(&temp.settings());
    second.restoreSettings();
    CHECK(second.document()->config() == config);
    CHECK(second.document()->gpu().memoryBytes == customGpu(40.0).memoryBytes);
    CHECK(second.batch() == 48);
    CHECK(second.memoryChart()->logScale());
}

TEST_CASE("on the log batch axis each arrow press moves to a new batch, about 9% at a time",
          "[window][slider]") {
    Fixture f;
    MainWindow& w = f.window;
    w.setLogScale(true);
    w.setBatch(1);
    QSlider* slider = w.batchPanel()->slider();
    std::vector<std::int64_t> seen{w.batchPanel()->batch()};
    for (int i = 0; i < 20; ++i) {
        slider->triggerAction(QAbstractSlider::SliderSingleStepAdd);
        seen.push_back(w.batchPanel()->batch());
    }
    CHECK(seen[1] == 2); // one press from 1 is 2, not 20 presses
    for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i] > seen[i - 1]);
    CHECK(seen.back() >= 20);
    // Far from 1 the steps follow the axis: a ratio, not +1.
    w.setBatch(100);
    slider->triggerAction(QAbstractSlider::SliderSingleStepAdd);
    const double ratio = static_cast<double>(w.batchPanel()->batch()) / 100.0;
    CHECK(ratio > 1.05);
    CHECK(ratio < 1.15);
    slider->triggerAction(QAbstractSlider::SliderSingleStepSub);
    CHECK(w.batchPanel()->batch() == 100);
    w.setLogScale(false);
}

TEST_CASE("hover details on the chart are not replaced by the chart's general tooltip",
          "[window][tooltips]") {
    Fixture f;
    MainWindow& w = f.window;
    MemoryChart* chart = w.memoryChart();
    QAreaSeries* area = nullptr;
    for (QAbstractSeries* s : chart->chart()->series())
        if (auto* a = qobject_cast<QAreaSeries*>(s);
            a && a->name() == ComponentStyle::name(Component::Activations))
            area = a;
    REQUIRE(area);
    emit area->hovered(QPointF(64, 1.0), true); // what Qt Charts emits when the pointer enters the area
    const QString detail = QToolTip::text();
    CHECK(detail.contains(QStringLiteral("batch 64")));
    // About a second later Qt asks the widget for its tooltip: the detail must stay.
    const QPoint inside = chart->rect().center();
    QHelpEvent help(QEvent::ToolTip, inside, chart->mapToGlobal(inside));
    QCoreApplication::sendEvent(chart->viewport(), &help);
    QCoreApplication::sendEvent(chart, &help);
    CHECK(QToolTip::text() == detail);
    emit area->hovered(QPointF(64, 1.0), false);
    QHelpEvent later(QEvent::ToolTip, inside, chart->mapToGlobal(inside));
    QCoreApplication::sendEvent(chart, &later);
    CHECK(QToolTip::text() == chart->toolTip()); // away from the areas the general tooltip is back
}

TEST_CASE("a new model starts at a batch that fits, and the chart's range follows its data",
          "[window][chart]") {
    Fixture f; // ResNet-50 on 24 GiB at batch 64
    MainWindow& w = f.window;
    w.setBatch(320); // does not fit ResNet-50 (largest 259)
    REQUIRE(w.waitForIdle());
    CHECK(w.verdictText().startsWith(QStringLiteral("out of memory")));

    // MobileNetV2 at 320 does not fit either (largest 300 with the allocator replay): the batch moves to its
    // largest multiple of 8.
    REQUIRE(w.files()->loadPreset(QStringLiteral("mobilenet_v2"), false));
    REQUIRE(w.waitForIdle());
    const MaxBatch m = w.result()->maxBatch;
    REQUIRE(m.largestMultipleOf8 > 0);
    CHECK(w.batch() == m.largestMultipleOf8);
    CHECK(w.verdictText().startsWith(QStringLiteral("fits")));

    // A batch that fits the next model stays.
    w.setBatch(8);
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    REQUIRE(w.waitForIdle());
    CHECK(w.batch() == 8);

    // Llama-2-7B fits no batch on 24 GiB: batch 1, and the y axis reaches the data, not 1.15x the capacity.
    REQUIRE(w.files()->loadPreset(QStringLiteral("llama-2-7b"), false));
    REQUIRE(w.waitForIdle(60000));
    CHECK(w.batch() == 1);
    std::uint64_t dataTop = 0;
    for (const auto& p : w.result()->sweep) dataTop = std::max(dataTop, p.requiredBytes);
    const auto axes = w.memoryChart()->chart()->axes(Qt::Vertical, w.memoryChart()->measuredSeries());
    REQUIRE(axes.size() == 1);
    const double yMax = qobject_cast<QValueAxis*>(axes.first())->max();
    CHECK(yMax >= static_cast<double>(dataTop) / (1ull << 30));
    CHECK(yMax >= 24.0); // the capacity line stays on the chart

    // The log memory axis, from the checkbox by the chart: powers of two from a floor above zero to above the
    // data; the menu action follows; every area point sits inside the axis.
    auto* box = w.findChild<QCheckBox*>(QStringLiteral("logMemoryBox"));
    REQUIRE(box);
    box->setChecked(true);
    CHECK(w.memoryChart()->logMemoryScale());
    const auto logAxes = w.memoryChart()->chart()->axes(Qt::Vertical, w.memoryChart()->measuredSeries());
    REQUIRE(logAxes.size() == 1);
    CHECK(qobject_cast<QCategoryAxis*>(logAxes.first())); // ticks at powers of two, labelled in GiB
    for (QAbstractAxis* a : w.memoryChart()->chart()->axes(Qt::Vertical)) // only the axis in use is drawn
        CHECK(a->isVisible() == (a == logAxes.first()));
    const auto [lo, hi] = w.memoryChart()->memoryRange();
    CHECK(lo > 0);
    CHECK(lo < 24.0 / 8 * 8); // below the capacity line, which stays on the chart
    CHECK(hi >= static_cast<double>(dataTop) / (1ull << 30));
    CHECK(std::exp2(std::round(std::log2(hi))) == hi); // a power of two
    CHECK(std::exp2(std::round(std::log2(lo))) == lo);
    for (QAbstractSeries* s : w.memoryChart()->chart()->series()) // the series hold log2(GiB)
        if (auto* line = qobject_cast<QLineSeries*>(s))
            for (const QPointF& p : line->points())
                CHECK((p.y() >= std::log2(lo) - 1e-9 && p.y() <= std::log2(hi) + 1e-9));
    QAction* menu = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
        if (a->text().contains(QStringLiteral("Memory Axis"))) menu = a;
    REQUIRE(menu);
    CHECK(menu->isChecked());
    menu->trigger(); // off again, from the menu: the checkbox follows
    CHECK_FALSE(box->isChecked());
    const auto linearAxes = w.memoryChart()->chart()->axes(Qt::Vertical, w.memoryChart()->measuredSeries());
    REQUIRE(linearAxes.size() == 1);
    CHECK(qobject_cast<QValueAxis*>(linearAxes.first()));
    for (QAbstractAxis* a : w.memoryChart()->chart()->axes(Qt::Vertical))
        CHECK(a->isVisible() == (a == linearAxes.first()));
}

TEST_CASE("the what-if panel hides levers that gain nothing and says so", "[window][whatif]") {
    Fixture f; // ResNet-50, 24 GiB: 8-bit Adam and SGD gain about 0.4% (x1.00)
    MainWindow& w = f.window;
    REQUIRE(w.waitForIdle(60000, true));
    LeverModel* levers = w.whatIfPanel()->model();
    REQUIRE(levers->rowCount() > 0);
    for (int r = 0; r < levers->rowCount(); ++r) {
        INFO(levers->lever(r)->id);
        CHECK(leverHelps(*levers->lever(r)));
    }
    CHECK(w.whatIfPanel()->statusText().contains(QStringLiteral("not shown")));

    REQUIRE(w.files()->loadPreset(QStringLiteral("llama-2-7b"), false));
    REQUIRE(w.waitForIdle(120000, true));
    // Full training of a 7B model on 24 GiB: only QLoRA (4-bit base weights, checkpointing) makes it fit; it
    // comes first, then every other change by what it saves at batch 1
    REQUIRE(levers->rowCount() > 1);
    CHECK(levers->lever(0)->id == "qlora");
    for (int r = 1; r < levers->rowCount(); ++r) CHECK(levers->lever(r)->maxBatch == 0);
    w.document()->setGpu(customGpu(4.0)); // below even the 4-bit weights
    REQUIRE(w.waitForIdle(120000, true));
    // each alone still does not fit: every change is listed, ranked by what it saves at batch 1
    REQUIRE(levers->rowCount() > 0);
    CHECK(w.whatIfPanel()->statusText().startsWith(QStringLiteral("Not even batch 1 fits")));
    for (int r = 1; r < levers->rowCount(); ++r)
        if (!leverChangesTraining(*levers->lever(r)) &&
            levers->lever(r)->maxBatch == levers->lever(r - 1)->maxBatch)
            CHECK(levers->lever(r - 1)->savedBytesAtOne >= levers->lever(r)->savedBytesAtOne);
    CHECK(levers->data(levers->index(0, LeverModel::GainColumn))
              .toString()
              .startsWith(QStringLiteral("saves")));
}

TEST_CASE("levers combined, applied together, and the smallest GPU that fits", "[window][whatif][plan]") {
    Fixture f; // ResNet-50, 24 GiB
    MainWindow& w = f.window;
    w.setBatch(2000);                      // far past the largest (259): no single lever gets there
    w.document()->setGpu(customGpu(20.0)); // a new request, aimed at the batch shown
    REQUIRE(w.waitForIdle(60000, true));
    const FitPlan plan = w.service()->planFor(2000); // the start of the whole plan that the batch shown needs
    REQUIRE(plan.steps.size() >= 2);
    CHECK(plan.target == 2000);
    const QString text = w.whatIfPanel()->planText();
    CHECK(text.contains(QStringLiteral("2000")));
    INFO(text.toStdString());
    CHECK(text.contains(QStringLiteral("together"), Qt::CaseInsensitive));
    CHECK(text.contains(LeverModel::title(plan.steps.front())));
    // The smallest catalogue GPU named is the core's answer for this set-up.
    const auto smallest =
        smallestGpuThatFits(fitAcrossCatalogue(w.document()->model(), w.document()->config()), 2000);
    if (smallest) CHECK(text.contains(QString::fromStdString(smallest->gpu.name)));

    // the text follows the slider without a new request: a batch that fits needs no plan, and back
    w.setBatch(1);
    CHECK(w.whatIfPanel()->planText().isEmpty());
    w.setBatch(2000);
    CHECK(w.whatIfPanel()->planText() == text);

    const TrainingConfig before = w.document()->config();
    const TrainingConfig planned = plan.config;
    auto* together = w.whatIfPanel()->findChild<QPushButton*>();
    QPushButton* applyTogether = nullptr;
    for (auto* b : w.whatIfPanel()->findChildren<QPushButton*>())
        if (b->text().contains(QStringLiteral("Together"))) applyTogether = b;
    REQUIRE(together);
    REQUIRE(applyTogether);
    REQUIRE(applyTogether->isVisibleTo(w.whatIfPanel()));
    applyTogether->click();
    REQUIRE(w.waitForIdle(60000, true));
    CHECK(w.document()->config() == planned);
    CHECK(w.result()->maxBatch.largest == plan.maxMicroBatch); // the plan applied fits what it said
    w.document()->undoStack()->undo();                         // one step undoes the whole plan
    REQUIRE(w.waitForIdle(60000, true));
    CHECK(w.document()->config() == before);
}

TEST_CASE("the memory axis never repeats a label, with or without an estimate", "[window][chart]") {
    test::app();
    auto labels = [](MemoryChart& chart) {
        auto* y =
            qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical, chart.measuredSeries()).first());
        QStringList out;
        const int n = y->tickCount();
        for (int i = 0; i < n; ++i) {
            const double v = y->min() + (y->max() - y->min()) * i / (n - 1);
            out << QString::asprintf(y->labelFormat().toLatin1().constData(), v);
        }
        return out;
    };
    MemoryChart empty; // before the first estimate
    const QStringList none = labels(empty);
    CHECK(QSet<QString>(none.begin(), none.end()).size() == none.size());
    Fixture f; // a real estimate on 24 GiB: whole GiB
    const QStringList real = labels(*f.window.memoryChart());
    CHECK(QSet<QString>(real.begin(), real.end()).size() == real.size());
    CHECK_FALSE(real.join(QString()).contains(QLatin1Char('.')));
}

TEST_CASE("changing the GPU is undoable, and typing a custom capacity is one step", "[window][undo]") {
    Fixture f; // custom 24 GiB
    MainWindow& w = f.window;
    QUndoStack* undo = w.document()->undoStack();
    const int steps = undo->count();
    const auto a100 = findGpu("a100-80gb");
    REQUIRE(a100);
    emit w.trainingPanel()->gpuEdited(*a100); // what picking it in the GPU list does
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->gpu().id == "a100-80gb");
    CHECK(w.result()->gpu.id == "a100-80gb");
    CHECK(undo->count() == steps + 1);
    for (double gib : {3.0, 32.0, 32.5}) emit w.trainingPanel()->gpuEdited(customGpu(gib));
    REQUIRE(w.waitForIdle());
    CHECK(undo->count() == steps + 2); // the three capacities merged
    CHECK(w.document()->gpu().memoryBytes == customGpu(32.5).memoryBytes);
    undo->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->gpu().id == "a100-80gb");
    undo->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->gpu().id == "custom");
    CHECK(w.document()->gpu().memoryBytes == customGpu(24.0).memoryBytes);
    CHECK(w.result()->gpu.memoryBytes == customGpu(24.0).memoryBytes);
}

TEST_CASE("the PyTorch choice in the set-up is an undoable edit the estimate follows", "[window][torch]") {
    Fixture f;
    MainWindow& w = f.window;
    auto* box = w.findChild<QComboBox*>(QStringLiteral("torchRulesBox"));
    REQUIRE(box);
    CHECK(box->currentData().toInt() == static_cast<int>(TorchRules::Torch2));
    const int steps = w.document()->undoStack()->count();
    box->setCurrentIndex(box->findData(static_cast<int>(TorchRules::Torch113)));
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().torch == TorchRules::Torch113);
    CHECK(w.document()->undoStack()->count() == steps + 1);
    w.document()->undoStack()->undo();
    CHECK(w.document()->config().torch == TorchRules::Torch2);
    CHECK(box->currentData().toInt() == static_cast<int>(TorchRules::Torch2));
}
