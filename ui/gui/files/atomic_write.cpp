#include "gui/files/atomic_write.h"

#include <QSaveFile>
#include <cerrno>

namespace batchfit {

QString writeFileAtomically(const QString& path, const QByteArray& bytes) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return file.errorString();
    // QFileDevice loses errno on a short write ("Unknown error"); keep it to name the real cause.
    errno = 0;
    if (file.write(bytes) != bytes.size() || !file.flush()) {
        const int err = errno;
        const QString reason = err != 0 ? qt_error_string(err) : file.errorString();
        file.cancelWriting();
        return reason;
    }
    if (!file.commit()) return file.errorString();
    return {};
}

} // namespace batchfit
