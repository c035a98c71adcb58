// File > Import (issues 5 and 7, GUI side): Hugging Face configs and ONNX models through ImportController,
// the dialogs only a thin front. The resnet18 case reads the file the ctest "onnx: resnet18 exported by
// torch" writes (or $BATCHFIT_RESNET18_ONNX).
#include "batchfit/hf_import.h"
#include "batchfit/onnx_import.h"
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/estimation/estimation_result.h"
#include "gui/files/file_controller.h"
#include "gui/files/import_controller.h"
#include "gui/files/import_hf_dialog.h"
#include "gui/models/layer_tree_model.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/shell/language.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QProgressDialog>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QThread>
#include <QUndoStack>
#include <atomic>
#include <memory>

using namespace batchfit;

namespace {

QString data(const QString& file) {
    return QStringLiteral(BATCHFIT_TEST_DATA "/") + file;
}

/// A window showing ResNet-50 with an unsaved edit: what an import must not lose when it fails.
struct Fixture : test::AppWithSettings {
    MainWindow window{&temp.settings()};
    Model typed;
    Fixture() {
        window.document()->setGpu(customGpu(24.0));
        REQUIRE(window.files()->loadPreset(QStringLiteral("resnet50"), false));
        typed = window.document()->model();
        typed.description = "something the user typed";
        window.document()->editModel(typed, QStringLiteral("typed"), {});
        REQUIRE(window.waitForIdle());
    }
    ImportController* imports() { return window.files()->imports(); }
    void checkUnchanged() {
        CHECK(window.document()->model() == typed);
        CHECK(window.isWindowModified());
        CHECK(window.document()->undoStack()->count() == 1); // the edit can still be undone
    }
};

std::uint64_t shownParameters(MainWindow& w) {
    REQUIRE(w.waitForIdle(60000));
    REQUIRE(w.result());
    return w.result()->estimator->parameterCount();
}

} // namespace

TEST_CASE("importing the gpt2 config fills the tree and has the gpt2-small preset's parameters", "[import]") {
    Fixture f;
    MainWindow& w = f.window;
    test::ModalWatcher watcher;
    HfImportOptions eager; // the preset is Hugging Face's eager GPT-2; an import defaults to SDPA
    eager.attention = "eager";
    REQUIRE(f.imports()->importHfPath(data(QStringLiteral("hf/gpt2.json")), eager, false));
    REQUIRE(w.waitForIdle());
    CHECK(watcher.texts().isEmpty());
    CHECK(w.document()->model() ==
          *importHfConfigFile(data(QStringLiteral("hf/gpt2.json")).toStdString(), eager));
    // One row per top-level layer, after the input row.
    CHECK(w.layerPanel()->treeModel()->rowCount() ==
          static_cast<int>(w.document()->model().layers.size()) + 1);
    CHECK(w.layerPanel()->treeModel()->rowCount() > 5);
    CHECK(w.windowTitle().startsWith(QStringLiteral("gpt2"))); // the file it came from, not the class
    // Untitled and unsaved: Save asks for a name (the watcher closes the file dialog).
    CHECK(w.document()->filePath().isEmpty());
    CHECK(w.isWindowModified());
    CHECK(w.document()->undoStack()->count() == 0);
    REQUIRE(w.shownEstimate());
    const Estimate imported = *w.shownEstimate();
    CHECK_FALSE(w.files()->save());
    CHECK(watcher.texts().value(0) == QStringLiteral("Save Model As"));

    REQUIRE(w.files()->loadPreset(QStringLiteral("gpt2-small"), false));
    REQUIRE(w.waitForIdle());
    REQUIRE(w.shownEstimate());
    const Estimate preset = *w.shownEstimate();
    CHECK(imported.parameterCount == preset.parameterCount);
    CHECK(imported.parameterCount == 124439808ull);
    // transformers 5's GPT-2 saves more than the torch 1.13 preset (its Python GELU; test_hf_import.cpp has
    // the exact difference)
    CHECK(imported.savedActivationBytes > preset.savedActivationBytes);
    CHECK(imported.optimizerStateBytes == preset.optimizerStateBytes);
}

TEST_CASE("the import options reach the core", "[import]") {
    Fixture f;
    HfImportOptions o;
    o.sequenceLength = 256;
    o.attention = "flash";
    test::ModalWatcher watcher;
    REQUIRE(f.imports()->importHfPath(data(QStringLiteral("hf/llama-2-7b.json")), o, false));
    CHECK(f.window.document()->model().inputShape == Shape{256});
    CHECK(f.window.document()->model() ==
          *importHfConfigFile(data(QStringLiteral("hf/llama-2-7b.json")).toStdString(), o));
}

TEST_CASE("the Hugging Face dialog starts at the config's defaults and sets only what changed", "[import]") {
    test::app();
    const Model preview = *importHfConfigFile(data(QStringLiteral("hf/gpt2.json")).toStdString());
    HfImportDialog dialog(data(QStringLiteral("hf/gpt2.json")), preview);
    CHECK(dialog.sequenceBox()->value() == 1024); // gpt2's n_positions, smaller than 2048
    CHECK(dialog.sequenceBox()->maximum() == 1024);
    CHECK(dialog.attentionBox()->currentData().toString() ==
          QStringLiteral("flash")); // SDPA, transformers' default
    CHECK_FALSE(dialog.options().sequenceLength);
    CHECK_FALSE(dialog.options().attention);
    dialog.sequenceBox()->setValue(512);
    dialog.attentionBox()->setCurrentIndex(dialog.attentionBox()->findData(QStringLiteral("eager")));
    CHECK(dialog.options().sequenceLength == 512);
    CHECK(dialog.options().attention == std::optional<std::string>("eager"));
}

TEST_CASE("the Hugging Face dialog starts at a training length, not at Mistral's 32,768", "[import]") {
    test::app();
    const QString path = data(QStringLiteral("hf/mistral-7b.json"));
    const Model preview = *importHfConfigFile(path.toStdString());
    HfImportDialog dialog(path, preview);
    CHECK(dialog.sequenceBox()->value() == HfImportDialog::kTrainingSequence);
    CHECK(dialog.sequenceBox()->maximum() == 32768);
    auto* maximum = dialog.findChild<QLabel*>(QStringLiteral("sequenceMaximum"));
    REQUIRE(maximum);
    CHECK(maximum->text().contains(QStringLiteral("32,768")));
    CHECK(dialog.options().sequenceLength == 2048); // the core's default is the maximum: the dialog says 2048
    const Model imported = *importHfConfigFile(path.toStdString(), dialog.options());
    CHECK(imported.inputShape == Shape{2048});
}

TEST_CASE("the Hugging Face dialog shows a ViT's image instead of a sequence length", "[import]") {
    test::app();
    const QString path = data(QStringLiteral("hf/vit-base-patch16-224.json"));
    const Model preview = *importHfConfigFile(path.toStdString());
    HfImportDialog dialog(path, preview);
    CHECK(dialog.sequenceBox() == nullptr);
    auto* image = dialog.findChild<QLabel*>(QStringLiteral("imageInput"));
    REQUIRE(image);
    CHECK(image->text().contains(QStringLiteral("3 × 224 × 224")));
    CHECK_FALSE(dialog.options().sequenceLength); // a sequence length would be refused for a ViT
    const auto imported = importHfConfigFile(path.toStdString(), dialog.options());
    REQUIRE(imported);
    CHECK(imported->inputShape == Shape{3, 224, 224});
}

TEST_CASE("a malformed or refused config keeps the old model and names the file", "[import][errors]") {
    Fixture f;
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("config.json"));
    QFile file(path);
    REQUIRE(file.open(QIODevice::WriteOnly));
    file.write(R"({"model_type": "llama", "hidden_size": "big"})");
    file.close();

    test::ModalWatcher watcher;
    CHECK_FALSE(f.imports()->importHfPath(path, {}, false));
    REQUIRE(watcher.texts().size() == 1);
    const QString message = watcher.texts().first();
    CHECK(message.contains(path));                               // which file
    CHECK(message.contains(QStringLiteral("$.hidden_size")));    // where in it
    CHECK(message.contains(QStringLiteral("positive integer"))); // what was expected
    CHECK(message.contains(QStringLiteral("current one is unchanged")));
    f.checkUnchanged();

    CHECK_FALSE(f.imports()->importHfPath(data(QStringLiteral("hf/granitemoe-refused.json")), {}, false));
    CHECK(f.imports()->lastError().contains(QStringLiteral("granitemoe-refused.json")));
    CHECK(f.imports()->lastError().contains(QStringLiteral("mixture of experts")));
    f.checkUnchanged();

    CHECK_FALSE(f.imports()->importHfPath(dir.filePath(QStringLiteral("missing.json")), {}, false));
    CHECK(f.imports()->lastError().contains(QStringLiteral("missing.json")));
    f.checkUnchanged();
}

TEST_CASE("ONNX import: the menu says when it is missing, models import with the core's counts",
          "[import][onnx]") {
    Fixture f;
    MainWindow& w = f.window;
    auto* action = w.findChild<QAction*>(QStringLiteral("importOnnxAction"));
    REQUIRE(action);
    REQUIRE(w.findChild<QAction*>(QStringLiteral("importHfAction")));
    test::ModalWatcher watcher;
    if (!onnxImportAvailable()) {
        CHECK_FALSE(action->isEnabled());
        CHECK(action->toolTip().contains(QStringLiteral("no ONNX support")));
        CHECK_FALSE(f.imports()->importOnnxPath(data(QStringLiteral("onnx/tiny_cnn.onnx")), {}, false));
        CHECK(f.imports()->lastError().contains(QStringLiteral("tiny_cnn.onnx")));
        CHECK(f.imports()->lastError().contains(QStringLiteral("libonnx-dev")));
        f.checkUnchanged();
        return;
    }
    CHECK(action->isEnabled());
    CHECK(ImportController::onnxUnavailableReason().isEmpty());

    REQUIRE(f.imports()->importOnnxPath(data(QStringLiteral("onnx/tiny_cnn.onnx")), {}, false));
    CHECK(shownParameters(w) == 1570);
    CHECK(w.document()->model() == *importOnnxFile(data(QStringLiteral("onnx/tiny_cnn.onnx")).toStdString()));
    CHECK(w.isWindowModified());
    CHECK(watcher.texts().isEmpty());

    // A graph with operators BatchFit cannot map is refused, the old model kept.
    const Model before = w.document()->model();
    CHECK_FALSE(f.imports()->importOnnxPath(data(QStringLiteral("onnx/unknown_ops.onnx")), {}, false));
    CHECK(f.imports()->lastError().contains(QStringLiteral("unknown_ops.onnx")));
    CHECK(w.document()->model() == before);
    CHECK(watcher.texts().size() == 1);
    OnnxImportOptions opaque;
    opaque.allowOpaque = true; // the dialog's check box
    REQUIRE(f.imports()->importOnnxPath(data(QStringLiteral("onnx/unknown_ops.onnx")), opaque, false));
    CHECK(w.document()->model() ==
          *importOnnxFile(data(QStringLiteral("onnx/unknown_ops.onnx")).toStdString(), opaque));

    QString resnet = qEnvironmentVariable("BATCHFIT_RESNET18_ONNX");
    if (resnet.isEmpty()) resnet = QStringLiteral(BATCHFIT_ONNX_WORKDIR "/resnet18.onnx");
    if (!QFileInfo::exists(resnet)) {
        WARN("no resnet18.onnx (run the ctest \"onnx: resnet18 exported by torch\" first): "
             << resnet.toStdString());
        return;
    }
    f.imports()->setProgressDelay(600000); // the watcher would close the progress dialog, i.e. cancel
    REQUIRE(f.imports()->importOnnxPath(resnet, {}, false));
    CHECK(shownParameters(w) == 11689512ull);
    CHECK(watcher.texts().size() == 1); // only the refusal above
}

TEST_CASE("a cancelled import keeps the old model", "[import][cancel]") {
    Fixture f;
    ImportController* imports = f.imports();
    {
        // Cancelled as soon as the worker has it: nothing replaced, nothing reported.
        test::ModalWatcher watcher;
        auto connection =
            QObject::connect(imports, &ImportController::importStarted, imports, &ImportController::cancel);
        CHECK_FALSE(imports->importHfPath(data(QStringLiteral("hf/gpt2.json")), {}, false));
        QObject::disconnect(connection);
        CHECK(imports->lastError() == QStringLiteral("cancelled"));
        CHECK(watcher.texts().isEmpty());
        f.checkUnchanged();
    }

    // A long import: its progress dialog's Cancel button stops the worker, which sees the core's hook fire.
    imports->setProgressDelay(0);
    auto sawCancel = std::make_shared<std::atomic<bool>>(false);
    const Model other = *importHfConfigFile(data(QStringLiteral("hf/gpt2.json")).toStdString());
    auto job = [sawCancel, other](const std::function<bool()>& cancelled) -> Result<Model> {
        for (int i = 0; i < 2000; ++i) { // at most 10 s: a hook that never fires fails the test, not hangs it
            if (cancelled()) {
                sawCancel->store(true);
                return makeError("gpt2.json: import cancelled");
            }
            QThread::msleep(5);
        }
        return other;
    };
    bool clicked = false;
    QTimer clicker;
    clicker.setInterval(20);
    QObject::connect(&clicker, &QTimer::timeout, [&] {
        auto* progress = f.window.findChild<QProgressDialog*>();
        if (!progress || !progress->isVisible() || clicked) return;
        for (auto* button : progress->findChildren<QPushButton*>()) {
            if (button->text() == QStringLiteral("Cancel")) {
                clicked = true;
                button->click();
            }
        }
    });
    clicker.start();
    CHECK_FALSE(imports->runImport(data(QStringLiteral("hf/gpt2.json")), job, false));
    clicker.stop();
    CHECK(clicked);
    CHECK(imports->lastError() == QStringLiteral("cancelled"));
    CHECK_FALSE(imports->isRunning());
    f.checkUnchanged();
    for (int i = 0; i < 400 && !sawCancel->load(); ++i) QThread::msleep(5);
    CHECK(sawCancel->load());
}

// Hidden ("[.screens]"): the import dialog in English and Chinese, for looking at.
TEST_CASE("render the import dialog for review", "[.screens]") {
    test::app();
    const QString path = data(QStringLiteral("hf/llama-2-7b.json"));
    const Model preview = *importHfConfigFile(path.toStdString());
    const QString dir = qEnvironmentVariable("BATCHFIT_SHOTS", QDir::tempPath());
    for (const QString& lang : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
        REQUIRE(Language::install(lang));
        HfImportDialog dialog(path, preview);
        dialog.show();
        QCoreApplication::processEvents();
        CHECK(dialog.grab().save(QDir(dir).filePath(QStringLiteral("bf-import-hf-%1.png").arg(lang))));
    }
    REQUIRE(Language::install(QStringLiteral("en")));
}

TEST_CASE("a model id that is not in the Hugging Face cache says where it looked, and keeps the model",
          "[import][cache]") {
    Fixture f;
    QTemporaryDir cache;
    const QByteArray old = qgetenv("HF_HUB_CACHE");
    qputenv("HF_HUB_CACHE", cache.path().toLocal8Bit());
    const Model before = f.window.document()->model();
    test::ModalWatcher watcher;
    CHECK_FALSE(f.imports()->importHfModelId(QStringLiteral("test-org/absent")));
    const QString said = watcher.texts().join(QLatin1Char('\n'));
    INFO(said.toStdString());
    CHECK(said.contains(QStringLiteral("no config.json for 'test-org/absent'")));
    CHECK(said.contains(cache.path()));
    CHECK(f.window.document()->model() == before);
    if (old.isEmpty())
        qunsetenv("HF_HUB_CACHE");
    else
        qputenv("HF_HUB_CACHE", old);
}
