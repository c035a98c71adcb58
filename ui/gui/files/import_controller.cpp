#include "gui/files/import_controller.h"

#include "batchfit/hf_cache.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/files/import_hf_dialog.h"
#include "gui/files/import_onnx_dialog.h"
#include "gui/shell/app_settings.h"

#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressDialog>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <optional>

namespace batchfit {

namespace {

std::string localPath(const QString& path) {
    return QFile::encodeName(path).toStdString();
}

/// Clears a flag when the scope ends, however it ends.
struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
};

} // namespace

ImportController::ImportController(Document* doc, FileController* files, QWidget* dialogParent)
    : QObject(files), m_doc(doc), m_files(files), m_parent(dialogParent) {}

QString ImportController::onnxUnavailableReason() {
    if (onnxImportAvailable()) return QString();
    return tr(
        "This build has no ONNX support: rebuild BatchFit with libonnx-dev and libprotobuf-dev installed "
        "(CMake option BATCHFIT_WITH_ONNX).");
}

void ImportController::showError(const QString& text) {
    m_lastError = text;
    QMessageBox box(QMessageBox::Critical, tr("Cannot Import Model"), text, QMessageBox::Ok, m_parent);
    box.setTextInteractionFlags(Qt::TextSelectableByMouse);
    box.exec();
}

bool ImportController::importHf() {
    if (m_running || !m_files->maybeSave()) return false;
    const QString path =
        QFileDialog::getOpenFileName(m_parent, tr("Import Hugging Face Config"),
                                     m_files->settings()->lastFolder(QStringLiteral("hf-import")),
                                     tr("Hugging Face configs (config.json *.json);;All files (*)"));
    if (path.isEmpty()) return false;
    m_files->settings()->rememberFolder(QStringLiteral("hf-import"), path);
    return importHfWithDialog(path);
}

bool ImportController::importHfModelId() {
    if (m_running || !m_files->maybeSave()) return false;
    bool ok = false;
    // What the cache holds, to choose from; another id can still be typed.
    QStringList cached;
    for (const std::string& id : listCachedHfModels()) cached << QString::fromStdString(id);
    const QString where = QDir::toNativeSeparators(QString::fromStdString(hfHubCacheDir()));
    const QString label =
        cached.isEmpty()
            ? tr("No model config in %1 yet. Model id (ORG/NAME), looked up offline there:").arg(where)
            : tr("%n model(s) in %1 (offline). Choose one, or type a model id (ORG/NAME):", nullptr,
                 static_cast<int>(cached.size()))
                  .arg(where);
    const QString id = QInputDialog::getItem(m_parent, tr("Import from the Hugging Face Cache"), label,
                                             cached, 0, true, &ok);
    if (!ok || id.trimmed().isEmpty()) return false;
    return importHfModelId(id.trimmed());
}

bool ImportController::importHfModelId(const QString& id) {
    auto path = findCachedHfConfig(id.toStdString());
    if (!path) {
        showError(QString::fromStdString(path.error().message));
        return false;
    }
    return importHfWithDialog(QFile::decodeName(QByteArray::fromStdString(*path)));
}

bool ImportController::importHfWithDialog(const QString& path) {
    // The core's defaults for this config (its maximum positions, the family's attention) seed the dialog;
    // a config it cannot read goes straight to the import, which explains the problem.
    auto preview = importHfConfigFile(localPath(path));
    if (!preview || preview->inputShape.empty()) return importHfPath(path, {}, false);
    HfImportDialog dialog(path, *preview, m_parent);
    if (dialog.exec() != QDialog::Accepted) return false;
    return importHfPath(path, dialog.options(), false);
}

bool ImportController::importOnnx() {
    if (!onnxImportAvailable()) {
        showError(onnxUnavailableReason());
        return false;
    }
    if (m_running || !m_files->maybeSave()) return false;
    const QString path = QFileDialog::getOpenFileName(
        m_parent, tr("Import ONNX Model"), m_files->settings()->lastFolder(QStringLiteral("onnx-import")),
        tr("ONNX models (*.onnx);;All files (*)"));
    if (path.isEmpty()) return false;
    m_files->settings()->rememberFolder(QStringLiteral("onnx-import"), path);
    OnnxImportDialog dialog(path, m_parent);
    if (dialog.exec() != QDialog::Accepted) return false;
    return importOnnxPath(path, dialog.options(), false);
}

bool ImportController::importHfPath(const QString& path, const HfImportOptions& options, bool prompt) {
    const std::string file = localPath(path);
    const bool ok = runImport(
        path,
        [file, options](const std::function<bool()>& cancelled) {
            HfImportOptions o = options;
            o.cancelled = cancelled;
            return importHfConfigFile(file, o);
        },
        prompt);
    if (ok) emit hfConfigImported(path);
    return ok;
}

bool ImportController::importOnnxPath(const QString& path, const OnnxImportOptions& options, bool prompt) {
    const std::string file = localPath(path);
    return runImport(
        path,
        [file, options](const std::function<bool()>& cancelled) {
            OnnxImportOptions o = options;
            o.cancelled = cancelled;
            return importOnnxFile(file, o);
        },
        prompt);
}

void ImportController::cancel() {
    if (m_cancel) m_cancel->store(true);
    emit cancelRequested();
}

bool ImportController::runImport(const QString& path, Job job, bool prompt) {
    if (m_running) return false;
    if (prompt && !m_files->maybeSave()) return false;
    m_running = true;
    Reset reset{m_running};
    m_lastError.clear();

    // The worker owns everything it touches: a cancelled import is abandoned, not waited for.
    auto flag = std::make_shared<std::atomic<bool>>(false);
    m_cancel = flag;
    auto out = std::make_shared<std::optional<Result<Model>>>();
    const std::function<bool()> cancelled = [flag] { return flag->load(); };
    QFutureWatcher<void> watcher;
    QFuture<void> future = QtConcurrent::run([job = std::move(job), cancelled, out] {
        try {
            out->emplace(job(cancelled));
        } catch (const std::exception& e) {
            out->emplace(makeError(std::string("the import failed: ") + e.what()));
        }
    });
    watcher.setFuture(future);
    emit importStarted();

    // Quick imports finish before the progress dialog would appear; meanwhile clicks and keys wait.
    {
        QEventLoop loop;
        connect(&watcher, &QFutureWatcherBase::finished, &loop, &QEventLoop::quit);
        connect(this, &ImportController::cancelRequested, &loop, &QEventLoop::quit);
        QTimer::singleShot(m_progressDelayMs, &loop, &QEventLoop::quit);
        if (!future.isFinished() && !flag->load()) loop.exec(QEventLoop::ExcludeUserInputEvents);
    }
    if (!future.isFinished() && !flag->load()) {
        QProgressDialog progress(tr("Importing %1…").arg(QFileInfo(path).fileName()), tr("Cancel"), 0, 0,
                                 m_parent);
        progress.setWindowTitle(tr("Importing Model"));
        progress.setWindowModality(Qt::WindowModal);
        progress.setMinimumDuration(0);
        progress.setAutoClose(false);
        progress.setAutoReset(false);
        QEventLoop loop;
        connect(&watcher, &QFutureWatcherBase::finished, &loop, &QEventLoop::quit);
        connect(this, &ImportController::cancelRequested, &loop, &QEventLoop::quit);
        connect(&progress, &QProgressDialog::canceled, this, &ImportController::cancel);
        progress.show();
        if (!future.isFinished() && !flag->load()) loop.exec();
    }
    if (flag->load()) {
        m_lastError = QStringLiteral("cancelled");
        return false;
    }
    future.waitForFinished();
    if (!out->has_value()) return false;
    Result<Model>& model = **out;
    if (!model) {
        // The core's message names the file and what is wrong with it.
        showError(tr("The model was not imported; the current one is unchanged.\n\n%1")
                      .arg(QString::fromStdString(model.error().message)));
        return false;
    }
    m_doc->loadUnsavedModel(std::move(*model));
    return true;
}

} // namespace batchfit
