// The real app, killed: `batchfit` runs with its data folder in a temporary HOME, makes an unsaved edit
// (hidden --test-edit), autosaves, and gets SIGKILL. The next start (AutosaveRestore, as BatchFitApp::run
// uses it) must offer that autosave and restore exactly the edited model over its original file.
#include "batchfit/estimator.h"
#include "batchfit/model_io.h"
#include "batchfit/presets.h"
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/files/autosave.h"
#include "gui/files/autosave_restore.h"
#include "gui/files/file_controller.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QProcess>
#include <QTemporaryDir>

using namespace batchfit;

#ifdef BATCHFIT_GUI_EXE

TEST_CASE("a killed batchfit's unsaved edit is restored on the next start", "[autosave][process]") {
    test::app();
    QTemporaryDir home;
    REQUIRE(home.isValid());
    auto preset = loadPreset("mobilenet_v2");
    REQUIRE(preset);
    const Model original = *preset;
    Model edited = original;
    edited.name = "edited, then killed";
    edited.inputShape = {3, 192, 192};
    edited.layers.pop_back();
    const QString originalPath = home.filePath(QStringLiteral("net.json"));
    const QString editPath = home.filePath(QStringLiteral("edit.json"));
    REQUIRE(saveModelFile(original, originalPath.toStdString()));
    REQUIRE(saveModelFile(edited, editPath.toStdString()));

    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("HOME"), home.path());
    env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("share")));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    QProcess app;
    app.setProcessEnvironment(env);
    app.setProcessChannelMode(QProcess::MergedChannels);
    app.start(QStringLiteral(BATCHFIT_GUI_EXE),
              {QStringLiteral("--model"), originalPath, QStringLiteral("--test-edit"), editPath});
    REQUIRE(app.waitForStarted());

    // Where the app keeps its data: $XDG_DATA_HOME/<organisation>/<application>/autosave.
    const QString dir = home.filePath(QStringLiteral("share/BatchFit/batchfit/autosave"));
    QString base;
    QDeadlineTimer deadline(60000);
    while (base.isEmpty() && !deadline.hasExpired() && app.state() == QProcess::Running) {
        const QStringList found =
            QDir(dir).entryList({QStringLiteral("*") + Autosave::kModelSuffix}, QDir::Files);
        if (!found.isEmpty()) {
            const QString b = QDir(dir).filePath(found.first()).chopped(Autosave::kModelSuffix.size());
            if (QFile::exists(b + Autosave::kSidecarSuffix)) base = b;
        }
        app.waitForFinished(50);
    }
    INFO(app.readAll().toStdString());
    REQUIRE(app.state() == QProcess::Running);
    REQUIRE_FALSE(base.isEmpty());
    {
        AutosaveRestore whileRunning(dir); // the running app holds its lock
        CHECK_FALSE(whileRunning.found());
    }

    app.kill(); // SIGKILL: no clean-up runs
    REQUIRE(app.waitForFinished(10000));
    CHECK(app.exitStatus() == QProcess::CrashExit);
    CHECK(QFile::exists(base + Autosave::kLockSuffix)); // left behind, naming a process that is gone

    test::TempSettings temp;
    MainWindow next(&temp.settings());
    REQUIRE(next.files()->loadPreset(QStringLiteral("resnet50"), false));
    AutosaveRestore restore(dir);
    REQUIRE(restore.found());
    CHECK(restore.modelPath() == base + Autosave::kModelSuffix);
    CHECK(restore.originalPath() == QFileInfo(originalPath).absoluteFilePath());
    test::ModalWatcher answer(QMessageBox::Yes);
    CHECK(restore.offer(next.document(), &next, nullptr) == AutosaveRestore::Outcome::Restored);
    CHECK(answer.texts().value(0).contains(QStringLiteral("did not close normally")));

    CHECK(serializeModel(next.document()->model()) == serializeModel(edited));
    CHECK(next.document()->filePath() == QFileInfo(originalPath).absoluteFilePath());
    CHECK(next.isWindowModified());
    CHECK(QDir(dir).entryList(QDir::Files).isEmpty()); // restored: the old autosave and lock are gone
    auto onDisk = loadModelFile(originalPath.toStdString());
    REQUIRE(onDisk);
    CHECK(*onDisk == original); // the kill and the restore never touched the user's file

    // The restored model estimates like the edited one.
    REQUIRE(next.waitForIdle(30000));
    REQUIRE(next.shownEstimate());
    auto est = Estimator::create(edited, next.document()->config(), next.document()->gpu());
    REQUIRE(est);
    auto e = est->estimate(next.batch());
    REQUIRE(e);
    CHECK(next.shownEstimate()->requiredBytes == e->requiredBytes);
}

#endif
