#include "gui/files/file_controller.h"

#include "batchfit/model_io.h"
#include "batchfit/presets.h"
#include "gui/document/document.h"
#include "gui/files/atomic_write.h"
#include "gui/files/import_controller.h"
#include "gui/shell/app_settings.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QRegularExpression>
#include <cstdio>

namespace batchfit {

namespace {

QString modelFilter() {
    return FileController::tr("BatchFit models (*.json);;All files (*)");
}

Model starterModel() {
    Model m;
    m.name = "untitled";
    m.inputShape = {784};
    auto layer = [](const char* name, const char* op) {
        Layer l;
        l.name = name;
        l.op = op;
        return l;
    };
    Layer fc1 = layer("fc1", "linear");
    fc1.attrs.set("out_features", std::int64_t{256});
    Layer fc2 = layer("fc2", "linear");
    fc2.attrs.set("out_features", std::int64_t{10});
    m.layers = {fc1, layer("relu", "relu"), fc2, layer("loss", "cross_entropy")};
    return m;
}

} // namespace

FileController::FileController(Document* doc, AppSettings* settings, QWidget* dialogParent)
    : QObject(dialogParent), m_doc(doc), m_settings(settings), m_parent(dialogParent),
      m_imports(new ImportController(doc, this, dialogParent)) {}

void FileController::showError(const QString& title, const QString& text) {
    m_lastError = text;
    if (m_headless) {
        std::fprintf(stderr, "batchfit: %s: %s\n", qPrintable(title), qPrintable(text));
        return;
    }
    QMessageBox box(QMessageBox::Critical, title, text, QMessageBox::Ok, m_parent);
    box.setTextInteractionFlags(Qt::TextSelectableByMouse);
    box.exec();
}

bool FileController::newModel() {
    if (!maybeSave()) return false;
    m_doc->loadModel(starterModel(), QString(), QString());
    return true;
}

bool FileController::open() {
    if (!maybeSave()) return false;
    const QString dir = m_doc->filePath().isEmpty() ? m_settings->lastFolder(QStringLiteral("models"))
                                                    : QFileInfo(m_doc->filePath()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(m_parent, tr("Open Model"), dir, modelFilter());
    if (path.isEmpty()) return false;
    m_settings->rememberFolder(QStringLiteral("models"), path);
    return openPath(path, false);
}

bool FileController::openPath(const QString& path, bool prompt) {
    if (prompt && !maybeSave()) return false;
    QFile file(path);
    const QString title = tr("Cannot Open Model");
    if (!file.open(QIODevice::ReadOnly)) {
        showError(title,
                  tr("%1 could not be read: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
        return false;
    }
    if (static_cast<std::size_t>(file.size()) > kMaxModelFileBytes) {
        showError(title, tr("%1 is larger than %2 MiB; it is not a BatchFit model.")
                             .arg(QDir::toNativeSeparators(path))
                             .arg(kMaxModelFileBytes / (1024 * 1024)));
        return false;
    }
    const QByteArray bytes = file.readAll();
    auto doc = parseModelDocument(bytes.toStdString(), QDir::toNativeSeparators(path).toStdString());
    if (!doc) {
        // The core's message names the file, the JSON path and what was expected.
        showError(title, tr("The model was not opened; the current one is unchanged.\n\n%1")
                             .arg(QString::fromStdString(doc.error().message)));
        return false;
    }
    // A file saved with its set-up (version 2) brings back its GPU, optimizer, precision, ... and batch.
    m_doc->loadModel(std::move(doc->model), QFileInfo(path).absoluteFilePath(), QString(), doc->setup);
    // What was read but could not be used (a GPU id this catalogue lacks): opened anyway, and said so,
    // without blocking (the box is not modal to the application).
    m_lastWarning.clear();
    for (const std::string& w : doc->warnings)
        m_lastWarning +=
            (m_lastWarning.isEmpty() ? QString() : QStringLiteral("\n")) + QString::fromStdString(w);
    if (!m_lastWarning.isEmpty()) {
        auto* box =
            new QMessageBox(QMessageBox::Warning, tr("Opened with a Warning"),
                            tr("%1\n\nChoose the GPU in the set-up; Save stores it.").arg(m_lastWarning),
                            QMessageBox::Ok, m_parent);
        box->setObjectName(QStringLiteral("openWarning"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->setTextInteractionFlags(Qt::TextSelectableByMouse);
        box->open();
    }
    m_settings->addRecentFile(QFileInfo(path).absoluteFilePath());
    emit recentFilesChanged();
    return true;
}

bool FileController::loadPreset(const QString& id, bool prompt) {
    if (prompt && !maybeSave()) return false;
    auto model = batchfit::loadPreset(id.toStdString());
    if (!model) {
        showError(tr("Cannot Load Preset"), QString::fromStdString(model.error().message));
        return false;
    }
    m_doc->loadModel(std::move(*model), QString(), id);
    return true;
}

bool FileController::save() {
    if (m_doc->filePath().isEmpty()) return saveAs();
    return saveTo(m_doc->filePath());
}

bool FileController::saveAs() {
    QString suggestion = m_doc->filePath();
    if (suggestion.isEmpty()) {
        // A file name from the model's name: an imported "meta-llama/Meta-Llama-3-8B" becomes
        // meta-llama_Meta-Llama-3-8B.json, never a folder.
        QString base =
            m_doc->presetId().isEmpty() ? QString::fromStdString(m_doc->model().name) : m_doc->presetId();
        static const QRegularExpression unsafe(QStringLiteral("[/\\\\:*?\"<>|\\s]+"));
        base.replace(unsafe, QStringLiteral("_"));
        suggestion =
            QDir(m_settings->lastFolder(QStringLiteral("models")))
                .filePath((base.isEmpty() ? QStringLiteral("model") : base) + QStringLiteral(".json"));
    }
    QString path = QFileDialog::getSaveFileName(m_parent, tr("Save Model As"), suggestion, modelFilter());
    if (path.isEmpty()) return false;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
    m_settings->rememberFolder(QStringLiteral("models"), path);
    return saveTo(path);
}

bool FileController::saveTo(const QString& path) {
    const QString reason = writeFileAtomically(
        path, QByteArray::fromStdString(serializeModelDocument(m_doc->model(), m_doc->setup())));
    if (!reason.isEmpty()) {
        showError(tr("Cannot Save Model"),
                  tr("%1 could not be written: %2\n\nThe previous file, if any, is unchanged. The model is "
                     "still open with its changes; save it somewhere else with File → Save As….")
                      .arg(QDir::toNativeSeparators(path), reason));
        return false;
    }
    m_doc->markSaved(QFileInfo(path).absoluteFilePath());
    m_settings->addRecentFile(QFileInfo(path).absoluteFilePath());
    emit recentFilesChanged();
    return true;
}

bool FileController::maybeSave() {
    if (!m_doc->isModified()) return true;
    const auto answer = QMessageBox::warning(
        m_parent, tr("Unsaved Changes"),
        tr("The model \"%1\" has changes that are not saved. Save them first?").arg(m_doc->displayName()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save) return save();
    return answer == QMessageBox::Discard;
}

} // namespace batchfit
