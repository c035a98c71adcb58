#include "gui/files/autosave.h"

#include "batchfit/model_io.h"
#include "gui/document/document.h"
#include "gui/estimation/byte_format.h"
#include "gui/files/atomic_write.h"
#include "gui/shell/app_settings.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QLockFile>
#include <QStandardPaths>
#include <QUndoStack>
#include <QUuid>

namespace batchfit {

QString Autosave::defaultDirectory() {
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
        .filePath(QStringLiteral("autosave"));
}

Autosave::Autosave(Document* doc, const QString& directory, QObject* parent) : QObject(parent), m_doc(doc) {
    QDir().mkpath(directory);
    const QString session = QStringLiteral("session-%1-%2")
                                .arg(QCoreApplication::applicationPid())
                                .arg(QUuid::createUuid().toString(QUuid::Id128).left(8));
    m_base = QDir(directory).filePath(session);
    m_lock = std::make_unique<QLockFile>(m_base + kLockSuffix);
    if (!m_lock->tryLock(0))
        m_lastError = tr("%1 could not be locked; a restart may offer this session's autosave while it runs.")
                          .arg(QDir::toNativeSeparators(m_base + kLockSuffix));

    m_timer.setSingleShot(true);
    m_timer.setInterval(kDefaultDelayMs);
    connect(&m_timer, &QTimer::timeout, this, &Autosave::writeNow);
    // Every edit, undo or redo moves the stack's index; loads and saves change the modified state.
    connect(m_doc->undoStack(), &QUndoStack::indexChanged, this, &Autosave::changed);
    connect(m_doc, &Document::modelChanged, this, &Autosave::changed);
    connect(m_doc, &Document::configChanged, this, &Autosave::changed);
    connect(m_doc, &Document::gpuChanged, this, &Autosave::changed);
    connect(m_doc, &Document::modifiedChanged, this, &Autosave::changed);
    connect(m_doc, &Document::fileChanged, this, &Autosave::changed);
}

Autosave::~Autosave() {
    if (!m_abandoned) removeFiles();
}

void Autosave::setDelay(int ms) {
    m_timer.setInterval(ms);
}

QString Autosave::modelPath() const {
    return m_base + kModelSuffix;
}

QString Autosave::sidecarPath() const {
    return m_base + kSidecarSuffix;
}

void Autosave::changed() {
    if (m_abandoned) return;
    if (m_doc->isModified()) {
        m_timer.start(); // restarts: writes once the user pauses
    } else {
        m_timer.stop();
        removeFiles();
    }
}

bool Autosave::writeNow() {
    m_timer.stop();
    if (m_abandoned) return false;
    if (!m_doc->isModified()) {
        removeFiles();
        return true;
    }
    // The model first: it is what a restore looks for; the sidecar only adds where it came from.
    const QString reason =
        writeFileAtomically(modelPath(), QByteArray::fromStdString(serializeModel(m_doc->model())));
    if (!reason.isEmpty()) {
        m_lastError = tr("Autosave failed: %1 could not be written: %2")
                          .arg(QDir::toNativeSeparators(modelPath()), reason);
        emit failed(m_lastError);
        return false;
    }
    const SidecarState state{m_doc->filePath(), m_doc->presetId(), QString::fromStdString(m_doc->gpu().id),
                             m_doc->config(), m_doc->gpu().memoryBytes};
    if (state != m_sidecar) {
        m_sidecar.reset();
        AppSettings sidecar(sidecarPath());
        sidecar.setLastModelPath(state.filePath);
        sidecar.setLastPresetId(state.presetId);
        sidecar.setTrainingConfig(state.config);
        sidecar.setGpuId(state.gpuId);
        sidecar.setCustomGpuBytes(state.gpuBytes);
        if (!sidecar.sync()) {
            m_lastError =
                tr("Autosave failed: %1 could not be written.").arg(QDir::toNativeSeparators(sidecarPath()));
            emit failed(m_lastError);
            return false;
        }
        m_sidecar = state;
    }
    m_lastError.clear();
    emit written(modelPath());
    return true;
}

void Autosave::abandon() {
    m_timer.stop();
    m_abandoned = true;
    m_lock.reset(); // unlocks and removes the lock file, as the OS would after a crash
}

void Autosave::removeFiles() {
    m_sidecar.reset();
    QFile::remove(modelPath());
    QFile::remove(sidecarPath());
}

} // namespace batchfit
