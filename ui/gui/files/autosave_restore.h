#pragma once
// Start-up: finds an autosave left by a session that did not close normally and offers to restore it.
#include <QCoreApplication>
#include <QDateTime>
#include <QString>
#include <memory>

class QLockFile;
class QWidget;

namespace batchfit {

class Autosave;
class Document;

/// Claims the newest autosave whose session is gone (its lock is free, or held by a process that no longer
/// runs); autosaves of sessions still running are left alone. Holds that session's lock until destroyed.
class AutosaveRestore {
    Q_DECLARE_TR_FUNCTIONS(batchfit::AutosaveRestore)

public:
    enum class Outcome { NothingToRestore, Restored, Discarded, Kept, Failed };

    explicit AutosaveRestore(const QString& directory);
    ~AutosaveRestore();

    /// True when an autosave was claimed.
    bool found() const { return m_lock != nullptr; }
    QString modelPath() const;
    /// When it was written.
    QDateTime savedAt() const { return m_savedAt; }
    /// The file the model came from, or empty.
    QString originalPath() const;
    /// The question the prompt asks.
    QString question() const;

    /// Asks Restore / Discard (Escape keeps it for the next start). Restore loads it into `doc`; then
    /// `session` (if any) writes it at once, and only then the old autosave is removed.
    Outcome offer(Document* doc, QWidget* parent, Autosave* session);
    /// Loads the claimed autosave into `doc` as unsaved changes over its original file (or preset), with the
    /// saved training set-up and GPU. On failure returns false with a message in `error`.
    bool restoreInto(Document* doc, QString* error) const;
    /// Removes the claimed autosave's files.
    void discard();

private:
    QString m_base; ///< directory/<session>, without suffix
    QDateTime m_savedAt;
    std::unique_ptr<QLockFile> m_lock;
};

} // namespace batchfit
