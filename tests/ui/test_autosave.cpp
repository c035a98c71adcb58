// Autosave and restore inside the test process: a session's files, the crash left behind (Autosave::abandon)
// and the next start's offer. The killed-process version is in test_autosave_kill.cpp.
#include "batchfit/model_io.h"
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/files/autosave.h"
#include "gui/files/autosave_restore.h"
#include "gui/files/file_controller.h"
#include "gui/shell/app_settings.h"
#include "gui/shell/language.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QAbstractButton>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QUndoStack>

using namespace batchfit;

namespace {

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QStringList autosaves(const QString& dir) {
    return QDir(dir).entryList({QStringLiteral("*") + Autosave::kModelSuffix}, QDir::Files);
}

Model renamed(const Model& m, const char* name) {
    Model r = m;
    r.name = name;
    r.inputShape = {3, 200, 200};
    return r;
}

} // namespace

TEST_CASE("autosave writes the edited model once the user pauses, and removes it when saved", "[autosave]") {
    test::app();
    test::TempSettings temp;
    QTemporaryDir dir;
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("mobilenet_v2"), false));
    Autosave autosave(w.document(), dir.path());
    autosave.setDelay(20);
    QSignalSpy written(&autosave, &Autosave::written);
    CHECK_FALSE(autosave.pending()); // nothing unsaved, nothing to write

    const Model edited = renamed(w.document()->model(), "autosaved");
    w.document()->editModel(edited, QStringLiteral("edit"), {});
    CHECK(autosave.pending());
    REQUIRE(written.wait(5000));
    CHECK(readAll(autosave.modelPath()).toStdString() == serializeModel(edited));
    const AppSettings sidecar(autosave.sidecarPath());
    CHECK(sidecar.lastPresetId() == QStringLiteral("mobilenet_v2"));
    CHECK(sidecar.lastModelPath().isEmpty());

    // A change of the set-up while the model is unsaved is written too.
    TrainingConfig c = w.document()->config();
    c.optimizer = OptimizerKind::Sgd;
    w.document()->editConfig(c, QStringLiteral("optimizer"));
    REQUIRE(written.wait(5000));
    CHECK(AppSettings(autosave.sidecarPath()).trainingConfig().optimizer == OptimizerKind::Sgd);

    QTemporaryDir out;
    REQUIRE(w.files()->saveTo(out.filePath(QStringLiteral("saved.json"))));
    CHECK_FALSE(QFile::exists(autosave.modelPath()));
    CHECK_FALSE(QFile::exists(autosave.sidecarPath()));
    CHECK_FALSE(autosave.pending());

    // Undoing back to the saved state also removes it.
    w.document()->editModel(renamed(edited, "again"), QStringLiteral("edit"), {});
    REQUIRE(autosave.writeNow());
    CHECK(QFile::exists(autosave.modelPath()));
    w.document()->undoStack()->undo();
    CHECK_FALSE(QFile::exists(autosave.modelPath()));
}

TEST_CASE("an orderly end removes the autosave and its lock", "[autosave]") {
    test::app();
    test::TempSettings temp;
    QTemporaryDir dir;
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    {
        Autosave autosave(w.document(), dir.path());
        w.document()->editModel(renamed(w.document()->model(), "x"), QStringLiteral("edit"), {});
        REQUIRE(autosave.writeNow());
        CHECK(autosaves(dir.path()).size() == 1);
    }
    CHECK(QDir(dir.path()).entryList(QDir::Files).isEmpty());
    AutosaveRestore next(dir.path());
    CHECK_FALSE(next.found());
}

TEST_CASE("the default folder is the app's data folder", "[autosave]") {
    test::app(); // test mode: QStandardPaths points into ~/.qttest, never at the user's data
    CHECK(QStandardPaths::isTestModeEnabled());
    CHECK(Autosave::defaultDirectory() ==
          QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave"));
}

TEST_CASE("after a crash the next start restores the model as unsaved changes to its file", "[autosave]") {
    test::app();
    test::TempSettings temp;
    QTemporaryDir dir;
    QTemporaryDir files;
    const QString original = files.filePath(QStringLiteral("net.json"));
    Model edited;
    TrainingConfig config;
    {
        MainWindow crashed(&temp.settings());
        REQUIRE(crashed.files()->loadPreset(QStringLiteral("mobilenet_v2"), false));
        REQUIRE(crashed.files()->saveTo(original));
        Autosave autosave(crashed.document(), dir.path());
        edited = renamed(crashed.document()->model(), "unsaved work");
        crashed.document()->editModel(edited, QStringLiteral("edit"), {});
        config = crashed.document()->config();
        config.precision = Precision::AmpBf16;
        config.accumulationSteps = 4;
        crashed.document()->editConfig(config, QStringLiteral("set-up"));
        crashed.document()->setGpu(customGpu(40.0));
        REQUIRE(autosave.writeNow());
        autosave.abandon(); // what a crash leaves: the files, and a lock nobody holds
    }
    const QByteArray onDisk = readAll(original);

    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    Autosave session(w.document(), dir.path());
    AutosaveRestore restore(dir.path());
    REQUIRE(restore.found());
    CHECK(restore.originalPath() == QFileInfo(original).absoluteFilePath());
    test::ModalWatcher answer(QMessageBox::Yes);
    CHECK(restore.offer(w.document(), &w, &session) == AutosaveRestore::Outcome::Restored);
    REQUIRE(answer.texts().size() == 1);
    CHECK(answer.texts().first().contains(QStringLiteral("did not close normally")));

    CHECK(w.document()->model() == edited);
    CHECK(w.document()->filePath() == QFileInfo(original).absoluteFilePath());
    CHECK(w.isWindowModified()); // the title shows the *
    CHECK(w.document()->config() == config);
    CHECK(w.document()->gpu().memoryBytes == customGpu(40.0).memoryBytes);
    CHECK(readAll(original) == onDisk); // nothing was written over the user's file
    // The restored work is in this session's autosave at once; the old one is gone.
    CHECK(autosaves(dir.path()) == QStringList{QFileInfo(session.modelPath()).fileName()});
    CHECK(readAll(session.modelPath()).toStdString() == serializeModel(edited));

    // Undo goes back to the model on disk; the crashed session's set-up (precision, GPU) is still unsaved
    // against the set-up the file stores. Back to that too, nothing is unsaved and the autosave goes.
    w.document()->undoStack()->undo();
    auto disk = parseModelDocument(onDisk.toStdString(), "net.json");
    REQUIRE(disk);
    REQUIRE(disk->setup);
    CHECK(w.document()->model() == disk->model);
    CHECK(w.isWindowModified());
    w.document()->resetConfig(disk->setup->config);
    w.document()->setGpu(*setupGpu(*disk->setup));
    CHECK(serializeModelDocument(w.document()->model(), w.document()->setup()) == onDisk.toStdString());
    CHECK_FALSE(w.isWindowModified());
    CHECK(autosaves(dir.path()).isEmpty());
}

TEST_CASE("a model that was never saved is restored without a file", "[autosave]") {
    test::app();
    test::TempSettings temp;
    QTemporaryDir dir;
    Model edited;
    {
        MainWindow crashed(&temp.settings());
        REQUIRE(crashed.files()->newModel());
        Autosave autosave(crashed.document(), dir.path());
        edited = renamed(crashed.document()->model(), "scratch");
        crashed.document()->editModel(edited, QStringLiteral("edit"), {});
        REQUIRE(autosave.writeNow());
        autosave.abandon();
    }
    MainWindow w(&temp.settings());
    AutosaveRestore restore(dir.path());
    REQUIRE(restore.found());
    CHECK(restore.originalPath().isEmpty());
    test::ModalWatcher answer(QMessageBox::Yes);
    CHECK(restore.offer(w.document(), &w, nullptr) == AutosaveRestore::Outcome::Restored);
    CHECK(w.document()->model() == edited);
    CHECK(w.document()->filePath().isEmpty());
    CHECK(w.document()->isModified());
    CHECK(autosaves(dir.path()).isEmpty());
}

TEST_CASE("a running session's autosave is never offered to another", "[autosave]") {
    test::app();
    test::TempSettings temp;
    QTemporaryDir dir;
    MainWindow running(&temp.settings());
    REQUIRE(running.files()->loadPreset(QStringLiteral("resnet50"), false));
    Autosave autosave(running.document(), dir.path());
    running.document()->editModel(renamed(running.document()->model(), "live"), QStringLiteral("edit"), {});
    REQUIRE(autosave.writeNow());

    AutosaveRestore second(dir.path());
    CHECK_FALSE(second.found());
    test::ModalWatcher watcher(QMessageBox::Yes);
    MainWindow other(&temp.settings());
    CHECK(second.offer(other.document(), &other, nullptr) == AutosaveRestore::Outcome::NothingToRestore);
    CHECK(watcher.texts().isEmpty());
    CHECK(QFile::exists(autosave.modelPath()));
}

TEST_CASE("Discard removes the autosave and keeps the current model", "[autosave]") {
    test::app();
    test::TempSettings temp;
    QTemporaryDir dir;
    {
        MainWindow crashed(&temp.settings());
        REQUIRE(crashed.files()->loadPreset(QStringLiteral("resnet50"), false));
        Autosave autosave(crashed.document(), dir.path());
        crashed.document()->editModel(renamed(crashed.document()->model(), "x"), QStringLiteral("e"), {});
        REQUIRE(autosave.writeNow());
        autosave.abandon();
    }
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("mobilenet_v2"), false));
    const Model before = w.document()->model();
    AutosaveRestore restore(dir.path());
    REQUIRE(restore.found());
    test::ModalWatcher answer(QMessageBox::Discard);
    CHECK(restore.offer(w.document(), &w, nullptr) == AutosaveRestore::Outcome::Discarded);
    CHECK(w.document()->model() == before);
    CHECK_FALSE(w.document()->isModified());
    CHECK(QDir(dir.path()).entryList(QDir::Files).isEmpty());
}

TEST_CASE("a damaged autosave is reported by name and kept", "[autosave][errors]") {
    test::app();
    test::TempSettings temp;
    QTemporaryDir dir;
    const QString broken = dir.filePath(QStringLiteral("session-1-dead") + Autosave::kModelSuffix);
    {
        QFile f(broken);
        REQUIRE(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"batchfit-model\", \"layers\": [");
    }
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    const Model before = w.document()->model();
    AutosaveRestore restore(dir.path());
    REQUIRE(restore.found());
    test::ModalWatcher answer(QMessageBox::Yes);
    CHECK(restore.offer(w.document(), &w, nullptr) == AutosaveRestore::Outcome::Failed);
    REQUIRE(answer.texts().size() == 2);
    CHECK(answer.texts().at(1).contains(QStringLiteral("session-1-dead.batchfit.json")));
    CHECK(answer.texts().at(1).contains(QStringLiteral("kept")));
    CHECK(w.document()->model() == before);
    CHECK(QFile::exists(broken));
}

TEST_CASE("an autosave that cannot be written says where and why, and keeps the changes",
          "[autosave][errors]") {
    test::app();
    test::TempSettings temp;
    QTemporaryDir dir;
    const QString notAFolder = dir.filePath(QStringLiteral("file"));
    {
        QFile f(notAFolder);
        REQUIRE(f.open(QIODevice::WriteOnly));
    }
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    Autosave autosave(w.document(), notAFolder + QStringLiteral("/autosave")); // works as root too
    QSignalSpy failed(&autosave, &Autosave::failed);
    const Model edited = renamed(w.document()->model(), "kept");
    w.document()->editModel(edited, QStringLiteral("edit"), {});
    CHECK_FALSE(autosave.writeNow());
    REQUIRE(failed.size() == 1);
    const QString message = failed.first().first().toString();
    CHECK(message.contains(QDir::toNativeSeparators(autosave.modelPath())));
    CHECK(message == autosave.lastError());
    CHECK(w.document()->model() == edited);
    CHECK(w.document()->isModified());
}

// Hidden: QT_QPA_PLATFORM=offscreen batchfit_ui_tests "[.screens][autosave]" writes the restore prompt in
// English and Chinese to $BATCHFIT_SHOTS (or /tmp) for looking at.
TEST_CASE("screenshot: the restore prompt", "[.screens][autosave]") {
    test::app();
    const QString shots = qEnvironmentVariable("BATCHFIT_SHOTS", QDir::tempPath());
    for (const QString& lang : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
        REQUIRE(Language::install(lang));
        test::TempSettings temp;
        QTemporaryDir dir;
        QTemporaryDir files;
        {
            MainWindow crashed(&temp.settings());
            REQUIRE(crashed.files()->loadPreset(QStringLiteral("resnet50"), false));
            REQUIRE(crashed.files()->saveTo(files.filePath(QStringLiteral("resnet50-finetune.json"))));
            Autosave autosave(crashed.document(), dir.path());
            crashed.document()->editModel(renamed(crashed.document()->model(), "x"), QStringLiteral("e"), {});
            REQUIRE(autosave.writeNow());
            autosave.abandon();
        }
        MainWindow w(&temp.settings());
        w.resize(1200, 760);
        w.show();
        AutosaveRestore restore(dir.path());
        REQUIRE(restore.found());
        bool saved = false;
        QTimer grabber;
        grabber.setInterval(50);
        QObject::connect(&grabber, &QTimer::timeout, [&] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box || !box->isVisible()) return;
            saved =
                box->grab().save(QDir(shots).filePath(QStringLiteral("bf-restore-prompt-%1.png").arg(lang)));
            box->button(QMessageBox::Yes)->click();
        });
        grabber.start();
        CHECK(restore.offer(w.document(), &w, nullptr) == AutosaveRestore::Outcome::Restored);
        CHECK(saved);
        CHECK(w.isWindowModified());
        w.waitForIdle(30000);
        CHECK(w.grab().save(QDir(shots).filePath(QStringLiteral("bf-restored-%1.png").arg(lang))));
    }
    Language::install(QStringLiteral("en"));
}
