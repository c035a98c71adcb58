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
    c.checkpointEvery = 3;
    c.accumulationSteps = 8;
    c.marginFraction = 0.1;
    c.cudaContextBytes = 300u * 1024u * 1024u;
    c.optimizerOffload = true;
    s.setTrainingConfig(c);
    s.setBatch(96);
    s.setGpuId(QStringLiteral("custom"));
    s.setCustomGpuGib(40.0);
    for (int i = 0; i < 10; ++i) s.addRecentFile(QStringLiteral("/tmp/m%1.json").arg(i));
    s.addRecentFile(QStringLiteral("/tmp/m5.json"));
    s.sync();

    AppSettings again(temp.dir() + QStringLiteral("/test.ini"));
    CHECK(again.trainingConfig() == c);
    CHECK(again.batch() == 96);
    CHECK(again.gpuId() == QStringLiteral("custom"));
    CHECK(again.customGpuGib() == Approx(40.0));
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
    CHECK(s.customGpuGib() == Approx(24.0));
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
