#pragma once
// Autosave: while the model has unsaved changes, writes it and the training set-up to the app's data folder a
// few seconds after the last edit, so that a crash or a kill loses at most those seconds.
#include "batchfit/training_config.h"

#include <QObject>
#include <QString>
#include <QTimer>
#include <cstdint>
#include <memory>
#include <optional>

class QLockFile;

namespace batchfit {

class Document;

/// One running session's autosave, in `directory`:
///   <session>.batchfit.json  the model (core serializer), written atomically (QSaveFile);
///   <session>.ini            the file or preset it came from, the set-up and the GPU (AppSettings keys);
///   <session>.lock           held while the session runs. A lock whose process is gone marks an autosave
///                            that AutosaveRestore offers on the next start.
/// The files exist only while the model has unsaved changes; saving, undoing back to the saved state or an
/// orderly end (the destructor: the user saved or discarded) removes them.
class Autosave : public QObject {
    Q_OBJECT

public:
    static constexpr int kDefaultDelayMs = 3000;
    static inline const QString kModelSuffix = QStringLiteral(".batchfit.json");
    static inline const QString kSidecarSuffix = QStringLiteral(".ini");
    static inline const QString kLockSuffix = QStringLiteral(".lock");

    /// <AppDataLocation>/autosave (tests redirect it with QStandardPaths::setTestModeEnabled or
    /// XDG_DATA_HOME).
    static QString defaultDirectory();

    Autosave(Document* doc, const QString& directory, QObject* parent = nullptr);
    ~Autosave() override;

    /// Idle time after the last change before writing (default kDefaultDelayMs).
    void setDelay(int ms);
    /// This session's model autosave (present only while there are unsaved changes).
    QString modelPath() const;
    QString sidecarPath() const;
    /// Writes now when the model has unsaved changes, else removes the autosave. False on failure
    /// (lastError).
    bool writeNow();
    /// True while a write is scheduled.
    bool pending() const { return m_timer.isActive(); }
    QString lastError() const { return m_lastError; }
    /// Ends the session the way a crash does: keeps the files and frees the lock (tests).
    void abandon();

signals:
    void written(const QString& modelPath);
    void failed(const QString& message);

private:
    void changed();
    void removeFiles();

    /// What the sidecar holds, to rewrite it only when it changes (it costs more than the model: a lock and a
    /// sync).
    struct SidecarState {
        QString filePath, presetId, gpuId;
        TrainingConfig config;
        std::uint64_t gpuBytes = 0;
        bool operator==(const SidecarState&) const = default;
    };

    Document* m_doc;
    std::optional<SidecarState> m_sidecar; ///< as last written; empty when the file is not there
    QString m_base;                        ///< directory/<session>, without suffix
    std::unique_ptr<QLockFile> m_lock;
    QTimer m_timer;
    QString m_lastError;
    bool m_abandoned = false;
};

} // namespace batchfit
