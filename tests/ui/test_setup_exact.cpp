// Issue 30 in the GUI: one answer on every surface, nothing changed behind the user's back, and an unknown
// GPU opened with a warning.
#include "batchfit/estimator.h"
#include "batchfit/gpu.h"
#include "batchfit/model_io.h"
#include "batchfit/presets.h"
#include "catch_compat.h"
#include "gui/charts/chart_data.h"
#include "gui/document/document.h"
#include "gui/estimation/estimation_result.h"
#include "gui/estimation/estimation_service.h"
#include "gui/files/file_controller.h"
#include "gui/models/breakdown_model.h"
#include "gui/panels/setting_spin_box.h"
#include "gui/panels/training_panel.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QFile>
#include <QMessageBox>
#include <QTemporaryDir>
#include <QToolButton>

using namespace batchfit;

namespace {

SettingSpinBox* box(MainWindow& w, const std::string& key) {
    for (auto* b : w.trainingPanel()->findChildren<SettingSpinBox*>())
        if (b->setting() && b->setting()->key == key) return b;
    for (auto* b : w.findChildren<SettingSpinBox*>())
        if (b->setting() && b->setting()->key == key) return b;
    return nullptr;
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const std::string& text) {
    const QString path = dir.filePath(name);
    QFile f(path);
    REQUIRE(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(text));
    return path;
}

} // namespace

TEST_CASE("values beyond the old editors' ranges open, survive an unrelated edit and save unchanged",
          "[files][setup][clamp]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    QTemporaryDir dir;
    // The review's file: every value was clamped by a widget (64, 4096, 50%, 16 GiB, 4096 GiB) and written
    // back.
    TrainingSetup s;
    s.gpuId = "custom";
    s.customGpuBytes = (std::uint64_t{16} << 40) + 1; // 16 TiB and one byte
    s.batch = 8;
    s.config.checkpointing = Checkpointing::EveryKthBlock;
    s.config.checkpointEvery = 100;
    s.config.accumulationSteps = 5000;
    s.config.marginFraction = 0.6;
    s.config.cudaContextBytes = std::uint64_t{1} << 40;
    s.config.lora.rank = 65536; // the table's largest (the old box stopped at 4096)
    s.config.lora.alpha = 123456.5;
    s.config.lora.dora = true;
    s.config.stepsPerGeneration = 6; // no editor in the GUI: kept as the file says
    s.config.numIterations = 3;
    s.config.parallel.gpus = 100000;
    s.config.parallel.strategy = ParallelStrategy::Fsdp;
    s.config.parallel.gpusPerNode = 5000;
    s.config.parallel.reduceBucketSize = 123456789;
    const QString path =
        writeFile(dir, QStringLiteral("review.json"), serializeModelDocument(*loadPreset("gpt2-small"), s));
    REQUIRE(w.files()->openPath(path, false));
    w.waitForIdle(120000);
    CHECK(w.document()->setup() == s);
    // the boxes hold the exact values; those they can only show rounded are marked
    CHECK(box(w, "checkpoint_every")->integer() == 100);
    CHECK(box(w, "accumulation_steps")->integer() == 5000);
    CHECK(box(w, "margin_fraction")->real() == 0.6);
    CHECK(box(w, "cuda_context_bytes")->integer() == std::int64_t{1} << 40);
    CHECK(box(w, "gpu_memory_bytes")->integer() == static_cast<std::int64_t>(s.customGpuBytes));
    CHECK_FALSE(box(w, "gpu_memory_bytes")->isExact());
    CHECK(box(w, "gpu_memory_bytes")->prefix().startsWith(QStringLiteral("≈")));
    CHECK(box(w, "checkpoint_every")->isExact());
    CHECK(box(w, "parallel.reduce_bucket_size")->integer() == 123456789);
    CHECK(box(w, "lora.alpha")->real() == 123456.5);
    auto* dora = w.findChild<QCheckBox*>(QStringLiteral("loraDora"));
    REQUIRE(dora);
    CHECK(dora->isChecked());

    // An unrelated edit (offload) changes only offload.
    QCheckBox* offload = nullptr;
    for (auto* c : w.trainingPanel()->findChildren<QCheckBox*>())
        if (c->text().contains(QStringLiteral("Offload optimizer"))) offload = c;
    REQUIRE(offload);
    offload->click();
    TrainingSetup expected = s;
    expected.config.optimizerOffload = true;
    CHECK(w.document()->setup().config == expected.config);
    CHECK(w.document()->gpu().memoryBytes == s.customGpuBytes);
    // Saved: the same values, byte for byte what the core writes for them.
    REQUIRE(w.files()->saveTo(path));
    auto back = loadModelDocument(path.toStdString());
    REQUIRE(back);
    REQUIRE(back->setup);
    CHECK(back->setup->config == expected.config);
    CHECK(back->setup->customGpuBytes == s.customGpuBytes);

    // A user's edit of a box writes what the box shows, and only then.
    box(w, "checkpoint_every")->setValue(7);
    CHECK(w.document()->config().checkpointEvery == 7);
    CHECK(w.document()->config().accumulationSteps == 5000);
}

TEST_CASE("a file with an unknown GPU opens on the default GPU with a warning", "[files][setup]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    QTemporaryDir dir;
    std::string text = serializeModelDocument(*loadPreset("resnet50"), TrainingSetup{});
    const std::string id = "\"" + TrainingSetup{}.gpuId + "\"";
    text.replace(text.find(id), id.size(), "\"rtx-9090\"");
    const QString path = writeFile(dir, QStringLiteral("future.json"), text);
    REQUIRE(w.files()->openPath(path, false));
    CHECK(w.files()->lastWarning().contains(QStringLiteral("rtx-9090")));
    CHECK(w.files()->lastWarning().contains(QStringLiteral("future.json")));
    CHECK(w.document()->gpu().id == TrainingSetup{}.gpuId);
    auto* warning = w.findChild<QMessageBox*>(QStringLiteral("openWarning"));
    REQUIRE(warning);
    CHECK(warning->isVisible());
    warning->close();
}

TEST_CASE("one answer: verdict, breakdown, chart and largest batch agree where the cache is flushed",
          "[window][one-answer]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.document()->setGpu(*findGpu("rtx-4090"));
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    w.resize(1366, 768);
    w.show();
    REQUIRE(w.waitForIdle(120000));
    const GpuSpec gpu = *findGpu("rtx-4090");
    auto est = Estimator::create(*loadPreset("resnet50"), w.document()->config(), gpu);
    REQUIRE(est);
    const std::uint64_t usable = est->usableBytes(gpu.memoryBytes);
    const std::int64_t largest = w.result()->maxBatch.largest;
    int flushed = 0;
    for (std::int64_t b = largest - 20; b <= largest + 1; ++b) {
        INFO("batch " << b);
        w.setBatch(b);
        auto v = est->verdict(b, gpu.memoryBytes);
        REQUIRE(v);
        const QString verdict = w.verdictText();
        const BreakdownModel* bd = w.breakdown();
        const auto total = bd->data(bd->index(BreakdownModel::RequiredRow, BreakdownModel::BytesColumn),
                                    BreakdownModel::kBytesRole)
                               .toULongLong();
        if (v->fits) {
            CHECK(verdict.startsWith(v->cacheReleased ? QStringLiteral("fits with cache flushes")
                                                      : QStringLiteral("fits:")));
            // the bold total is what this GPU holds: never above the usable memory beside "fits"
            CHECK(total == v->requiredBytes);
            CHECK(total <= usable);
            flushed += v->cacheReleased;
        } else {
            CHECK(verdict.startsWith(QStringLiteral("out of memory")));
        }
        CHECK(v->fits == (b <= largest)); // the largest batch: the same decision
        // the chart's point at this batch, when sampled, carries the same decision and figure
        for (const SweepPoint& p : w.result()->sweep)
            if (p.batch == b) {
                REQUIRE(p.fit);
                CHECK(p.fit->fits == v->fits);
                CHECK(p.gpuRequiredBytes() == v->requiredBytes);
            }
    }
    CHECK(flushed > 0);
}

TEST_CASE("at 1366x768 every fold open keeps the window within the screen", "[window][layout][folds]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.restoreSettings();
    REQUIRE(w.files()->loadPreset(QStringLiteral("llama-2-7b"), false));
    const QRect screen(0, 27, 1366, 741); // a 1366x768 laptop's available area
    w.setGeometry(screen);
    w.show();
    REQUIRE(w.waitForIdle(120000));
    // QLoRA rows, several GPUs with the strategy row, the advanced folds, checkpointing's mode row
    TrainingConfig c = w.document()->config();
    c.lora.rank = 16;
    c.quant.kind = QuantKind::Nf4;
    c.checkpointing = Checkpointing::EveryBlock;
    c.parallel.gpus = 8;
    c.parallel.strategy = ParallelStrategy::Fsdp;
    w.document()->editConfig(c, QStringLiteral("folds"));
    for (auto* b : w.findChildren<QToolButton*>())
        if (b->isCheckable() && b->isVisible()) b->setChecked(true); // every "Advanced" fold open
    REQUIRE(w.waitForIdle(120000));
    QApplication::processEvents();
    INFO("window " << w.width() << "x" << w.height() << ", least " << w.minimumSizeHint().height());
    CHECK(w.minimumSizeHint().height() <= screen.height());
    CHECK(w.frameGeometry().height() <= screen.height() + 40);
    CHECK(w.height() <= screen.height());
}

TEST_CASE("one estimate request per change: a new model whose batch does not fit asks once",
          "[window][requests]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.document()->setGpu(*findGpu("rtx-4090"));
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    REQUIRE(w.waitForIdle(120000, true));
    w.setBatch(200);
    REQUIRE(w.waitForIdle(120000, true));
    const std::uint64_t before = w.service()->requestedGeneration();
    // llama-2-7b at batch 200 does not fit: the batch moves to the largest that does, without a second
    // request
    REQUIRE(w.files()->loadPreset(QStringLiteral("llama-2-7b"), false));
    REQUIRE(w.waitForIdle(120000, true));
    CHECK(w.service()->requestedGeneration() == before + 1);
    CHECK(w.batch() != 200);
    // a set-up edit: one more
    TrainingConfig c = w.document()->config();
    c.precision = Precision::AmpBf16;
    w.document()->editConfig(c, QStringLiteral("bf16"));
    REQUIRE(w.waitForIdle(120000, true));
    CHECK(w.service()->requestedGeneration() == before + 2);
    // moving the batch asks for nothing
    w.setBatch(1);
    REQUIRE(w.waitForIdle(120000, true));
    CHECK(w.service()->requestedGeneration() == before + 2);
}

TEST_CASE("the GPU picker groups the catalogue by family and searches names, ids and Chinese notes",
          "[window][gpus][catalogue]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    QComboBox* picker = nullptr;
    for (auto* c : w.trainingPanel()->findChildren<QComboBox*>())
        if (c->findData(QStringLiteral("rtx-4090")) >= 0) picker = c;
    REQUIRE(picker);
    // every catalogue card, under a heading of its family (headings are not selectable)
    for (const GpuSpec& g : gpuCatalogue()) {
        INFO(g.id);
        const int row = picker->findData(QString::fromStdString(g.id));
        REQUIRE(row > 0);
        CHECK(picker->itemText(row).contains(QStringLiteral(" · "))); // "RTX 4090 · 23.99 GiB"
        CHECK_FALSE(picker->itemText(row).startsWith(QStringLiteral("NVIDIA")));
    }
    for (const std::string& family : gpuFamilies()) {
        const int row = picker->findText(QString::fromStdString(family));
        REQUIRE(row >= 0);
        CHECK_FALSE(picker->model()->flags(picker->model()->index(row, 0)) & Qt::ItemIsEnabled);
    }
    // the search: any part of the name, the id or the Chinese note
    QCompleter* completer = picker->completer();
    REQUIRE(completer);
    auto matches = [&](const QString& text) {
        completer->setCompletionPrefix(text);
        QStringList ids;
        for (int i = 0; i < completer->completionCount(); ++i) {
            completer->setCurrentRow(i);
            ids << completer->currentIndex().data(Qt::UserRole).toString();
        }
        return ids;
    };
    CHECK(matches(QStringLiteral("4090")).contains(QStringLiteral("rtx-4090")));
    CHECK(matches(QStringLiteral("4090")).contains(QStringLiteral("rtx-4090-d")));
    CHECK(matches(QStringLiteral("h20")).contains(QStringLiteral("h20")));
    CHECK(matches(QStringLiteral("特供")).contains(QStringLiteral("a800-80gb")));
    CHECK_FALSE(matches(QStringLiteral("4090")).contains(QStringLiteral("a100-80gb")));
}
