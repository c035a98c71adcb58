#pragma once
// File handling: new, open, import, presets, save (atomic, QSaveFile), save as, recent files, unsaved-changes
// prompt.
#include <QObject>
#include <QString>

class QWidget;

namespace batchfit {

class AppSettings;
class Document;
class ImportController;

/// Moves models between the Document and files or presets; reports failures in dialogs that say what and
/// where.
class FileController : public QObject {
    Q_OBJECT

public:
    FileController(Document* doc, AppSettings* settings, QWidget* dialogParent);

    /// A small starter model (after the unsaved-changes prompt).
    bool newModel();
    /// Asks for a file, then openPath().
    bool open();
    /// Loads a model file. On failure shows an error dialog and keeps the current model.
    bool openPath(const QString& path, bool prompt = true);
    /// Loads a built-in preset.
    bool loadPreset(const QString& id, bool prompt = true);
    /// Saves to the current file, or asks for one.
    bool save();
    bool saveAs();
    /// Writes atomically (QSaveFile); on failure shows a dialog and leaves the old file intact.
    bool saveTo(const QString& path);
    /// When the model has unsaved changes: asks Save / Discard / Cancel. True if it is fine to continue.
    bool maybeSave();
    /// The settings the dialogs remember their folders in.
    AppSettings* settings() const { return m_settings; }
    /// The last error message shown (tests).
    QString lastError() const { return m_lastError; }
    /// The warnings of the last file opened (an unknown GPU id), empty when none.
    QString lastWarning() const { return m_lastWarning; }
    /// File > Import (Hugging Face config, ONNX).
    ImportController* imports() const { return m_imports; }
    /// With nobody to answer a dialog (--screenshot), errors go to stderr instead of a modal message box.
    void setHeadless(bool headless) { m_headless = headless; }

signals:
    void recentFilesChanged();

private:
    void showError(const QString& title, const QString& text);

    Document* m_doc;
    AppSettings* m_settings;
    QWidget* m_parent;
    ImportController* m_imports;
    QString m_lastError;
    QString m_lastWarning;
    bool m_headless = false;
};

} // namespace batchfit
