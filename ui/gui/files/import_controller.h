#pragma once
// File > Import: Hugging Face config.json and ONNX models, imported off the GUI thread behind a progress
// dialog with Cancel. The imported model replaces the current one like File > Open, untitled and unsaved.
#include "batchfit/hf_import.h"
#include "batchfit/model.h"
#include "batchfit/onnx_import.h"
#include "batchfit/result.h"

#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>

class QWidget;

namespace batchfit {

class Document;
class FileController;

/// Runs the core importers in a worker thread. Failures show a dialog that names the file and keep the
/// current model; a cancelled import keeps it silently.
class ImportController : public QObject {
    Q_OBJECT

public:
    /// The importer, run in a worker thread; it polls `cancelled` and gives up when it returns true.
    using Job = std::function<Result<Model>(const std::function<bool()>& cancelled)>;

    ImportController(Document* doc, FileController* files, QWidget* dialogParent);

    /// Asks for a config.json, then for the sequence length and attention, then importHfPath().
    bool importHf();
    /// Asks for a model id and imports its config.json from the local Hugging Face cache (offline).
    bool importHfModelId();
    /// The same for `id` ("mistralai/Mistral-7B-v0.1"): the import dialog, then importHfPath(); an id not in
    /// the cache is an error message saying where it looked.
    bool importHfModelId(const QString& id);
    /// Asks for an .onnx file and the loss, then importOnnxPath(). Without ONNX support says why.
    bool importOnnx();
    bool importHfPath(const QString& path, const HfImportOptions& options, bool prompt = true);
    bool importOnnxPath(const QString& path, const OnnxImportOptions& options, bool prompt = true);
    /// The common part: the unsaved-changes prompt, `job` in a worker thread, then the model replaced or the
    /// error shown. `path` names the file in the progress dialog.
    bool runImport(const QString& path, Job job, bool prompt = true);
    /// The import dialog for the config at `path`, then importHfPath().
    bool importHfWithDialog(const QString& path);

    /// Abandons the running import (the progress dialog's Cancel): the current model stays.
    void cancel();
    bool isRunning() const { return m_running; }
    /// How long an import runs before the progress dialog appears (quick imports show none).
    void setProgressDelay(int ms) { m_progressDelayMs = ms; }
    /// The last error shown, or "cancelled" (tests).
    QString lastError() const { return m_lastError; }

    /// Why File > Import > ONNX is disabled, or empty when this build can import ONNX.
    static QString onnxUnavailableReason();

signals:
    /// The worker thread has the job (tests cancel here).
    void importStarted();
    /// cancel() was called.
    void cancelRequested();
    /// A Hugging Face config.json was imported (serving mode reads it too).
    void hfConfigImported(const QString& path);

private:
    void showError(const QString& text);

    Document* m_doc;
    FileController* m_files;
    QWidget* m_parent;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    bool m_running = false;
    int m_progressDelayMs = 400;
    QString m_lastError;
};

} // namespace batchfit
