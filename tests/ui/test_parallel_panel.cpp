// The Parallelism rows of the training set-up: GPUs and strategy, the knobs behind "Advanced settings", the
// verdict per GPU, undo; and QLoRA's rows in the Fine-tuning combo.
#include "batchfit/estimator.h"
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/models/breakdown_model.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QToolButton>
#include <QUndoStack>

using namespace batchfit;

namespace {

struct Window : test::AppWithSettings {
    MainWindow window{&temp.settings()};
    explicit Window(const char* preset) {
        window.restoreSettings();
        window.document()->setGpu(customGpu(80.0));
        REQUIRE(window.files()->loadPreset(QString::fromLatin1(preset), false));
        window.resize(1400, 900);
        window.show();
        REQUIRE(window.waitForIdle());
    }
};

} // namespace

TEST_CASE("choosing GPUs and a strategy makes the estimate one GPU's, undoably", "[window][parallel][undo]") {
    Window f("gpt2-small");
    MainWindow& w = f.window;
    auto* gpus = w.findChild<QDoubleSpinBox*>(QStringLiteral("parallelGpus"));
    auto* strategy = w.findChild<QComboBox*>(QStringLiteral("parallelStrategy"));
    auto* advanced = w.findChild<QToolButton*>(QStringLiteral("parallelAdvanced"));
    REQUIRE(gpus);
    REQUIRE(strategy);
    REQUIRE(advanced);
    CHECK_FALSE(advanced->isVisible()); // one GPU: no framework knobs
    CHECK(w.document()->config().parallel.gpus == 1);
    const QString before = w.verdictText();
    CHECK_FALSE(before.contains(QStringLiteral("per GPU")));

    gpus->setValue(8); // several GPUs: DDP unless a strategy is chosen
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().parallel.gpus == 8);
    CHECK(w.document()->config().parallel.strategy == ParallelStrategy::Ddp);
    CHECK(w.verdictText().contains(QStringLiteral("per GPU")));
    CHECK(advanced->isVisible());

    strategy->setCurrentIndex(strategy->findData(static_cast<int>(ParallelStrategy::Fsdp)));
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().parallel.strategy == ParallelStrategy::Fsdp);
    // the FSDP knobs, behind the fold
    advanced->setChecked(true);
    bool fsdpKnob = false;
    for (QCheckBox* c : w.findChildren<QCheckBox*>())
        if (c->text() == QStringLiteral("limit all-gathers")) fsdpKnob = c->isVisible();
    CHECK(fsdpKnob);

    // ddp, fsdp: two edits; undo returns to one GPU
    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().parallel.strategy == ParallelStrategy::Ddp);
    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().parallel.gpus == 1);
    CHECK(gpus->value() == 1);
    CHECK(w.verdictText() == before);
}

TEST_CASE("Sequence parallel: only with tensor parallelism, cleared by TP 1, smaller activations, undoably",
          "[window][parallel][undo]") {
    Window f("gpt2-small");
    MainWindow& w = f.window;
    auto* gpus = w.findChild<QDoubleSpinBox*>(QStringLiteral("parallelGpus"));
    auto* advanced = w.findChild<QToolButton*>(QStringLiteral("parallelAdvanced"));
    auto* tp = w.findChild<QDoubleSpinBox*>(QStringLiteral("parallelTp"));
    auto* sp = w.findChild<QCheckBox*>(QStringLiteral("parallelSequence"));
    REQUIRE(gpus);
    REQUIRE(advanced);
    REQUIRE(tp);
    REQUIRE(sp);
    gpus->setValue(8);
    REQUIRE(w.waitForIdle());
    advanced->setChecked(true);
    CHECK(sp->isVisible());
    CHECK_FALSE(sp->isEnabled()); // TP 1: nothing to split over
    tp->setValue(4);
    REQUIRE(w.waitForIdle());
    CHECK(sp->isEnabled());
    REQUIRE(w.shownEstimate());
    const std::uint64_t tpOnly = w.shownEstimate()->savedActivationBytes;
    sp->setChecked(true);
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().parallel.sequenceParallel);
    REQUIRE(w.shownEstimate());
    CHECK(w.shownEstimate()->savedActivationBytes < tpOnly); // norms, dropouts, residuals split 4 ways
    tp->setValue(1);
    REQUIRE(w.waitForIdle());
    CHECK_FALSE(w.document()->config().parallel.sequenceParallel);
    CHECK_FALSE(sp->isChecked());
    CHECK_FALSE(sp->isEnabled());
    w.document()->undoStack()->undo(); // TP 4 with sequence parallelism again
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().parallel.tp == 4);
    CHECK(w.document()->config().parallel.sequenceParallel);
    CHECK(sp->isChecked());
    CHECK(sp->isEnabled());
}

TEST_CASE("QLoRA in the Fine-tuning combo: quantization rows, checkpointing on, undo",
          "[window][qlora][undo]") {
    Window f("llama-2-7b");
    MainWindow& w = f.window;
    auto* mode = w.findChild<QComboBox*>(QStringLiteral("fineTuningBox"));
    auto* kind = w.findChild<QComboBox*>(QStringLiteral("quantKind"));
    auto* prepare = w.findChild<QCheckBox*>(QStringLiteral("kbitPrepare"));
    REQUIRE(mode);
    REQUIRE(kind);
    REQUIRE(prepare);
    CHECK_FALSE(kind->isVisible());
    REQUIRE(w.document()->config().checkpointing == Checkpointing::None);
    mode->setCurrentIndex(2); // QLoRA
    REQUIRE(w.waitForIdle());
    const TrainingConfig c = w.document()->config();
    CHECK(c.quant.kind == QuantKind::Nf4);
    CHECK(c.quant.doubleQuant);
    CHECK(c.lora.rank == 16);
    CHECK(c.checkpointing == Checkpointing::EveryBlock); // prepare_model_for_kbit_training's default
    CHECK(kind->isVisible());
    CHECK(prepare->isVisible());
    kind->setCurrentIndex(kind->findData(static_cast<int>(QuantKind::Int8)));
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().quant.kind == QuantKind::Int8);
    w.document()->undoStack()->undo();
    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK_FALSE(w.document()->config().quant.enabled());
    CHECK(w.document()->config().checkpointing == Checkpointing::None);
    CHECK_FALSE(kind->isVisible());
}

TEST_CASE("ZeRO-3 on one GPU with parameter offload is shown as it is, with its host memory",
          "[window][parallel][offload]") {
    Window f("gpt2-small");
    MainWindow& w = f.window;
    TrainingConfig c = w.document()->config();
    c.parallel.strategy = ParallelStrategy::Zero3; // ZeRO-Infinity's use: one GPU, shards from the host
    c.paramOffload = true;
    w.document()->resetConfig(c);
    REQUIRE(w.waitForIdle());
    auto* gpus = w.findChild<QDoubleSpinBox*>(QStringLiteral("parallelGpus"));
    auto* offload = w.findChild<QCheckBox*>(QStringLiteral("paramOffloadBox"));
    REQUIRE(gpus);
    REQUIRE(offload);
    CHECK(gpus->value() == 1); // not the 8 a strategy chosen by hand brings along
    CHECK(offload->isChecked());
    CHECK(w.document()->config() == c);
    // the breakdown's last row is the host memory: the shards, their gradients and the optimizer states
    BreakdownModel* b = w.breakdown();
    const int last = b->rowCount() - 1;
    CHECK(b->data(b->index(last, 0), Qt::DisplayRole).toString().contains(QStringLiteral("Host memory")));
    offload->click();
    REQUIRE(w.waitForIdle());
    CHECK_FALSE(w.document()->config().paramOffload);
    CHECK(gpus->value() == 1);
}
