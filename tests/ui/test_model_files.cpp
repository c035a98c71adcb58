#include "batchfit/gpu.h"
#include "batchfit/model_io.h"
#include "batchfit/presets.h"
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QFile>
#include <QTemporaryDir>

using namespace batchfit;

TEST_CASE("save then open round-trips the model", "[files]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("mobilenet_v2"), false));
    Model edited = w.document()->model();
    edited.name = "mobilenet edited";
    edited.inputShape = {3, 160, 160};
    w.document()->editModel(edited, QStringLiteral("edit"), {});
    CHECK(w.isWindowModified());

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("model.json"));
    REQUIRE(w.files()->saveTo(path));
    CHECK_FALSE(w.isWindowModified());
    CHECK(w.document()->filePath().endsWith(QStringLiteral("model.json")));
    QFile file(path);
    REQUIRE(file.open(QIODevice::ReadOnly));
    CHECK(file.readAll().toStdString() == serializeModelDocument(edited, w.document()->setup()));
    CHECK(temp.settings().recentFiles().value(0).endsWith(QStringLiteral("model.json")));

    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    REQUIRE(w.files()->openPath(path, false));
    CHECK(w.document()->model() == edited);
    CHECK(w.windowTitle().startsWith(QStringLiteral("model.json")));
    CHECK(w.document()->undoStack()->count() == 0);
}

TEST_CASE("the training set-up is saved with the model and comes back when the file is opened",
          "[files][setup]") {
    test::app();
    test::TempSettings temp;
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("setup.json"));
    TrainingConfig config;
    config.optimizer = OptimizerKind::Lion;
    config.precision = Precision::AmpBf16;
    config.accumulationSteps = 4;
    {
        MainWindow w(&temp.settings());
        REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
        w.document()->editGpu(*findGpu("a100-80gb"), QStringLiteral("GPU"));
        w.document()->editConfig(config, QStringLiteral("config"));
        CHECK_FALSE(w.isWindowModified()); // a preset keeps no set-up: the next preset keeps this one
        w.setBatch(24);
        REQUIRE(w.files()->saveTo(path));
        // With a file, a set-up change is an unsaved change, and undo takes it back.
        w.document()->editGpu(*findGpu("t4"), QStringLiteral("GPU"));
        CHECK(w.isWindowModified());
        w.document()->undoStack()->undo();
        CHECK_FALSE(w.isWindowModified());
        w.setBatch(30); // the batch shown is saved, but moving it is not an edit
        CHECK_FALSE(w.isWindowModified());
    }
    QFile file(path);
    REQUIRE(file.open(QIODevice::ReadOnly));
    const std::string text = file.readAll().toStdString();
    CHECK(text.find("\"version\": 3") != std::string::npos);
    CHECK(text.find("\"gpu\": \"a100-80gb\"") != std::string::npos);

    MainWindow other(&temp.settings()); // starts with another set-up: the file's must replace it
    REQUIRE(other.files()->loadPreset(QStringLiteral("mobilenet_v2"), false));
    other.document()->resetConfig(TrainingConfig{});
    other.document()->setGpu(*findGpu("rtx-3060"));
    other.setBatch(2);
    REQUIRE(other.files()->openPath(path, false));
    CHECK(other.document()->gpu().id == "a100-80gb");
    CHECK(other.document()->config() == config);
    REQUIRE(other.waitForIdle(30000));
    CHECK(other.batch() == 24); // the file's batch, not the start-up reset to the largest that fits
    CHECK_FALSE(other.isWindowModified());
}

TEST_CASE("a corrupted file shows an error and keeps the old model", "[files][errors]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    Model typed = w.document()->model();
    typed.description = "something the user typed";
    w.document()->editModel(typed, QStringLiteral("typed"), {});

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("broken.json"));
    QFile file(path);
    REQUIRE(file.open(QIODevice::WriteOnly));
    file.write("{\n  \"format\": \"batchfit-model\",\n  \"version\": 1,\n  \"layers\": [ {\"name\": \"x\", ");
    file.close();

    test::ModalWatcher watcher;
    CHECK_FALSE(w.files()->openPath(path, false));
    REQUIRE(watcher.texts().size() == 1);
    const QString message = watcher.texts().first();
    CHECK(message.contains(QStringLiteral("broken.json"))); // where
    CHECK(message.contains(QStringLiteral("current one is unchanged")));
    CHECK(w.document()->model() == typed); // nothing typed is lost
    CHECK(w.isWindowModified());

    CHECK_FALSE(w.files()->openPath(dir.filePath(QStringLiteral("missing.json")), false));
    CHECK(w.files()->lastError().contains(QStringLiteral("missing.json")));
}

TEST_CASE("saving over a file that cannot be written keeps the old file", "[files][errors]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    test::ModalWatcher watcher;
    CHECK_FALSE(w.files()->saveTo(QStringLiteral("/nonexistent-dir/x/model.json")));
    REQUIRE(watcher.texts().size() == 1);
    CHECK(watcher.texts().first().contains(QStringLiteral("model.json")));
    CHECK(w.document()->filePath().isEmpty());
}
