#include "gui/files/autosave_restore.h"

#include "batchfit/gpu.h"
#include "batchfit/model_io.h"
#include "batchfit/presets.h"
#include "gui/document/document.h"
#include "gui/files/autosave.h"
#include "gui/shell/app_settings.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QLockFile>
#include <QMessageBox>
#include <QPushButton>

namespace batchfit {

AutosaveRestore::AutosaveRestore(const QString& directory) {
    // Newest first; a session that is still running holds its lock and is skipped.
    const QFileInfoList files = QDir(directory).entryInfoList({QStringLiteral("*") + Autosave::kModelSuffix},
                                                              QDir::Files, QDir::Time);
    for (const QFileInfo& f : files) {
        const QString base = f.absoluteFilePath().chopped(Autosave::kModelSuffix.size());
        auto lock = std::make_unique<QLockFile>(base + Autosave::kLockSuffix);
        lock->setStaleLockTime(0); // stale only when its process is gone, never because it is old
        if (!lock->tryLock(0)) continue;
        m_lock = std::move(lock);
        m_base = base;
        m_savedAt = f.lastModified();
        return;
    }
}

AutosaveRestore::~AutosaveRestore() = default;

QString AutosaveRestore::modelPath() const {
    return m_base + Autosave::kModelSuffix;
}

QString AutosaveRestore::originalPath() const {
    const QString sidecar = m_base + Autosave::kSidecarSuffix;
    return found() && QFile::exists(sidecar) ? AppSettings(sidecar).lastModelPath() : QString();
}

QString AutosaveRestore::question() const {
    return tr("BatchFit did not close normally. Restore the unsaved model from %1?")
        .arg(QLocale().toString(m_savedAt, QLocale::ShortFormat));
}

AutosaveRestore::Outcome AutosaveRestore::offer(Document* doc, QWidget* parent, Autosave* session) {
    if (!found()) return Outcome::NothingToRestore;
    QMessageBox box(QMessageBox::Question, tr("Restore Unsaved Model"), question(),
                    QMessageBox::Yes | QMessageBox::Discard, parent);
    box.button(QMessageBox::Yes)->setText(tr("&Restore"));
    box.button(QMessageBox::Discard)->setText(tr("&Discard"));
    box.setDefaultButton(QMessageBox::Yes);
    const QString original = originalPath();
    box.setInformativeText(
        original.isEmpty() ? tr("The model had not been saved to a file yet.")
                           : tr("It holds unsaved changes to %1.").arg(QDir::toNativeSeparators(original)));
    box.exec();
    const auto answer = box.standardButton(box.clickedButton());
    if (answer == QMessageBox::Discard) {
        discard();
        return Outcome::Discarded;
    }
    if (answer != QMessageBox::Yes) return Outcome::Kept;
    QString error;
    if (!restoreInto(doc, &error)) {
        QMessageBox::critical(
            parent, tr("Cannot Restore Model"),
            tr("The autosave %1 could not be restored; it is kept for the next start.\n\n%2")
                .arg(QDir::toNativeSeparators(modelPath()), error));
        return Outcome::Failed;
    }
    // Remove the old autosave only once this session holds its own copy.
    if (!session || session->writeNow()) discard();
    return Outcome::Restored;
}

bool AutosaveRestore::restoreInto(Document* doc, QString* error) const {
    if (!found()) return false;
    auto restored = loadModelFile(modelPath().toStdString());
    if (!restored) {
        if (error) *error = QString::fromStdString(restored.error().message);
        return false;
    }
    const QString sidecarPath = m_base + Autosave::kSidecarSuffix;
    const bool haveSidecar = QFile::exists(sidecarPath);
    const AppSettings sidecar(sidecarPath);
    const QString original = haveSidecar ? sidecar.lastModelPath() : QString();
    const QString preset = haveSidecar && original.isEmpty() ? sidecar.lastPresetId() : QString();

    // The restored model is an undoable edit over what is on disk (or the preset), so it shows as modified,
    // Save writes it back to the original file, and Undo shows the saved version.
    Model base;
    std::optional<TrainingSetup>
        baseSetup; // the original file's saved set-up: the sidecar's counts as an edit
    bool haveBase = false;
    if (!original.isEmpty()) {
        if (auto d = loadModelDocument(original.toStdString()))
            base = std::move(d->model), baseSetup = d->setup, haveBase = true;
    } else if (!preset.isEmpty()) {
        if (auto m = loadPreset(preset.toStdString())) base = std::move(*m), haveBase = true;
    }
    if (!haveBase) base.name = restored->name;
    const auto applySidecar = [&] {
        doc->resetConfig(sidecar.trainingConfig());
        GpuSpec gpu = customGpuOfBytes(sidecar.customGpuBytes());
        if (sidecar.gpuId() != QLatin1String("custom"))
            if (auto g = findGpu(sidecar.gpuId().toStdString())) gpu = *g;
        doc->setGpu(gpu);
    };
    // Against a file that stores a set-up, the session's set-up is an unsaved change; against a file without
    // one (or a preset) there is nothing to differ from, so it is simply the set-up.
    if (haveSidecar && !baseSetup) applySidecar();
    doc->loadModel(std::move(base), original, preset, baseSetup);
    doc->editModel(std::move(*restored), tr("Restore Autosave"), {});
    if (haveSidecar && baseSetup) applySidecar();
    return true;
}

void AutosaveRestore::discard() {
    if (!found()) return;
    QFile::remove(modelPath());
    QFile::remove(m_base + Autosave::kSidecarSuffix);
    m_lock.reset(); // removes the lock file
    m_base.clear();
}

} // namespace batchfit
