// Saves that fail: the message names the file and the OS's reason, the old file is intact and the changes
// stay open (still modified), so nothing is lost. These tests also run as root, where chmod does not stop
// writes.
#include "batchfit/model_io.h"
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <csignal>
#include <cstring>
#include <sys/resource.h>

using namespace batchfit;

namespace {

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

/// While alive, files this process writes may not grow past `bytes` (a full disk; applies to root too).
class FileSizeLimit {
public:
    explicit FileSizeLimit(rlim_t bytes) {
        getrlimit(RLIMIT_FSIZE, &m_old);
        m_oldHandler = std::signal(SIGXFSZ, SIG_IGN); // write() then fails with EFBIG
        rlimit limit = m_old;
        limit.rlim_cur = bytes;
        m_ok = setrlimit(RLIMIT_FSIZE, &limit) == 0;
    }
    ~FileSizeLimit() {
        setrlimit(RLIMIT_FSIZE, &m_old);
        std::signal(SIGXFSZ, m_oldHandler);
    }
    bool ok() const { return m_ok; }

private:
    rlimit m_old{};
    void (*m_oldHandler)(int) = nullptr;
    bool m_ok = false;
};

struct Edited {
    test::TempSettings temp;
    QTemporaryDir dir;
    MainWindow w{&temp.settings()};
    QString path = dir.filePath(QStringLiteral("model.json"));
    QByteArray old;

    Edited() {
        REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
        REQUIRE(w.files()->saveTo(path));
        old = readAll(path);
        Model m = w.document()->model();
        m.name = "changed after the save";
        m.inputShape = {3, 256, 256};
        w.document()->editModel(m, QStringLiteral("edit"), {});
        REQUIRE(w.document()->isModified());
    }
};

} // namespace

TEST_CASE("a save that runs out of space keeps the old file and the changes", "[files][errors][autosave]") {
    test::app();
    Edited e;
    const Model changed = e.w.document()->model();
    test::ModalWatcher watcher;
    bool saved = true;
    {
        FileSizeLimit full(1024); // the model's JSON is far larger
        REQUIRE(full.ok());
        saved = e.w.files()->save();
    }
    CHECK_FALSE(saved);
    REQUIRE(watcher.texts().size() == 1);
    const QString message = watcher.texts().first();
    CHECK(message.contains(QDir::toNativeSeparators(e.path)));
    CHECK(message.contains(QString::fromLocal8Bit(std::strerror(EFBIG)))); // the OS's reason
    CHECK(message.contains(QStringLiteral("previous file")));
    CHECK(readAll(e.path) == e.old); // intact
    CHECK(QDir(e.dir.path()).entryList(QDir::Files) ==
          QStringList{QStringLiteral("model.json")}); // no debris
    CHECK(e.w.document()->isModified());
    CHECK(e.w.isWindowModified());
    CHECK(e.w.document()->model() == changed);
    CHECK(e.w.files()->save()); // with space again, the same save works
    CHECK(readAll(e.path).toStdString() == serializeModelDocument(changed, e.w.document()->setup()));
}

TEST_CASE("a save into a folder that cannot be written says why", "[files][errors][autosave]") {
    test::app();
    Edited e;
    QFile::setPermissions(e.dir.path(), QFile::ReadOwner | QFile::ExeOwner);
    QFile probe(e.dir.filePath(QStringLiteral("probe")));
    const bool chmodBlocks = !probe.open(QIODevice::WriteOnly);
    probe.close();
    probe.remove();
    QString target = e.path;
    if (!chmodBlocks) {
        // Root ignores the read-only folder: aim at a "folder" that is a regular file instead.
        WARN("running as root: chmod does not block writes; saving below a regular file instead");
        QFile::setPermissions(e.dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        target = e.path + QStringLiteral("/model.json");
    }
    test::ModalWatcher watcher;
    CHECK_FALSE(e.w.files()->saveTo(target));
    QFile::setPermissions(e.dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    REQUIRE(watcher.texts().size() == 1);
    const QString message = watcher.texts().first();
    CHECK(message.contains(QDir::toNativeSeparators(target)));
    CHECK(message.contains(QString::fromLocal8Bit(std::strerror(chmodBlocks ? EACCES : ENOTDIR))));
    CHECK(readAll(e.path) == e.old);
    CHECK(e.w.document()->isModified());
    CHECK(e.w.document()->filePath() == QFileInfo(e.path).absoluteFilePath()); // still the original file
}
