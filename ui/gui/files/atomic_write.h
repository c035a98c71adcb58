#pragma once
// Writing a whole file atomically (QSaveFile), reporting the OS's reason when it fails.
#include <QByteArray>
#include <QString>

namespace batchfit {

/// Writes `bytes` to `path` through a temporary file and a rename: the old file is untouched unless the new
/// one is complete. Returns an empty string, or why it failed ("No space left on device", "Permission
/// denied", ...). Unlike a bare QSaveFile::commit() (Qt 6.4), a failed final flush (a full disk) is caught
/// instead of committing a truncated file.
QString writeFileAtomically(const QString& path, const QByteArray& bytes);

} // namespace batchfit
