#include "catch_compat.h"
#include "gui_test_support.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>

using namespace batchfit;

TEST_CASE("settings round-trip through the typed wrapper", "[settings]") {
    test::TempSettings temp;
    AppSettings& s = temp.settings();
    TrainingConfig c;
    c.optimizer = OptimizerKind::AdamW;
    c.impl = OptimizerImpl::Fused;
    c.precision = Precision::AmpBf16;
    c.checkpointing = Checkpointing::EveryKthBlock;
    c.checkpointEvery = 100;                     // beyond the old GUI's 64
    c.accumulationSteps = 5000;                  // beyond the old GUI's 4096
    c.marginFraction = 0.6;                      // beyond the old GUI's 50%
    c.cudaContextBytes = std::uint64_t{1} << 40; // 1 TiB, beyond the old GUI's 16 GiB
    c.optimizerOffload = true;
    s.setTrainingConfig(c);
    s.setBatch(96);
    s.setGpuId(QStringLiteral("custom"));
    const std::uint64_t capacity = (std::uint64_t{16} << 40) + 1; // 16 TiB and a byte: exact, not GiB
    s.setCustomGpuBytes(capacity);
    for (int i = 0; i < 10; ++i) s.addRecentFile(QStringLiteral("/tmp/m%1.json").arg(i));
    s.addRecentFile(QStringLiteral("/tmp/m5.json"));
    s.sync();

    AppSettings again(temp.dir() + QStringLiteral("/test.ini"));
    CHECK(again.trainingConfig() == c);
    CHECK(again.batch() == 96);
    CHECK(again.gpuId() == QStringLiteral("custom"));
    CHECK(again.customGpuBytes() == capacity);
    const QStringList recent = again.recentFiles();
    CHECK(recent.size() == AppSettings::kMaxRecentFiles);
    CHECK(recent.first() == QStringLiteral("/tmp/m5.json"));
    CHECK(recent.count(QStringLiteral("/tmp/m5.json")) == 1);
}

TEST_CASE("broken stored settings fall back to defaults", "[settings]") {
    test::TempSettings temp;
    {
        QSettings raw(temp.dir() + QStringLiteral("/test.ini"), QSettings::IniFormat);
        raw.setValue("training/optimizer", "nonsense");
        raw.setValue("training/accumulation", -4);
        raw.setValue("view/batch", "abc");
        raw.setValue("gpu/customGib", -1);
    }
    AppSettings s(temp.dir() + QStringLiteral("/test.ini"));
    CHECK(s.trainingConfig().optimizer == TrainingConfig{}.optimizer);
    CHECK(s.trainingConfig().accumulationSteps == 1);
    CHECK(s.batch() == 64);
    CHECK(s.customGpuBytes() == std::uint64_t{24} << 30);
}

TEST_CASE("file dialogs remember their last folder, per kind, while it exists", "[settings]") {
    test::TempSettings temp;
    AppSettings& s = temp.settings();
    CHECK(s.lastFolder(QStringLiteral("models")) == QDir::homePath());
    QTemporaryDir models, measured;
    s.rememberFolder(QStringLiteral("models"), models.filePath(QStringLiteral("net.json")));
    s.rememberFolder(QStringLiteral("measurements"), measured.filePath(QStringLiteral("m.json")));
    CHECK(s.lastFolder(QStringLiteral("models")) == QFileInfo(models.path()).absoluteFilePath());
    CHECK(s.lastFolder(QStringLiteral("measurements")) == QFileInfo(measured.path()).absoluteFilePath());
    CHECK(s.lastFolder(QStringLiteral("onnx-import")) == QDir::homePath());
    measured.remove();
    CHECK(s.lastFolder(QStringLiteral("measurements")) ==
          QDir::homePath()); // a deleted folder is not offered
}
