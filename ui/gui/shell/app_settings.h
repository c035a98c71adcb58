#pragma once
// The one typed wrapper around QSettings: everything the app remembers between runs.
#include "batchfit/training_config.h"

#include <QByteArray>
#include <QSettings>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <memory>

namespace batchfit {

/// Typed access to the persistent settings. Unknown or broken stored values fall back to defaults.
class AppSettings {
public:
    static constexpr int kMaxRecentFiles = 8;

    /// The user's settings (organisation "BatchFit", application "batchfit").
    AppSettings();
    /// Settings in an INI file (tests, screenshots).
    explicit AppSettings(const QString& iniPath);

    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray& g);
    QByteArray windowState() const;
    void setWindowState(const QByteArray& s);
    /// A splitter's positions (QSplitter::saveState) by its object name, empty before the first exit.
    QByteArray splitterState(const QString& name) const;
    void setSplitterState(const QString& name, const QByteArray& s);
    /// A table or tree header's columns (QHeaderView::saveState: order, widths, hidden) by object name.
    QByteArray headerState(const QString& name) const;
    void setHeaderState(const QString& name, const QByteArray& s);

    /// The model file open at exit (empty when a preset or an unsaved model was open).
    QString lastModelPath() const;
    void setLastModelPath(const QString& path);
    /// The preset open at exit, or empty.
    QString lastPresetId() const;
    void setLastPresetId(const QString& id);

    /// The folder of the last exported report (empty until the first export).
    QString lastReportDir() const;
    void setLastReportDir(const QString& dir);

    /// The folder a file dialog of this kind ("models", "hf-import", "onnx-import", "measurements") last
    /// used, while it still exists; the home folder before the first use.
    QString lastFolder(const QString& kind) const;
    /// Remembers the folder of `filePath` for dialogs of this kind.
    void rememberFolder(const QString& kind, const QString& filePath);

    QStringList recentFiles() const;
    /// Puts `path` first, drops duplicates and keeps at most kMaxRecentFiles.
    void addRecentFile(const QString& path);
    void removeRecentFile(const QString& path);

    /// "en", "zh_CN" or empty (follow the system).
    QString language() const;
    void setLanguage(const QString& lang);

    /// Catalogue id, or "custom".
    QString gpuId() const;
    void setGpuId(const QString& id);
    /// A custom GPU's capacity in bytes, exact (24 GiB before one is set).
    std::uint64_t customGpuBytes() const;
    void setCustomGpuBytes(std::uint64_t bytes);

    /// Every setting of the settings table (batchfit/settings.h) under "training/<key>", as the command line
    /// writes it; a value the table refuses keeps its default, and is never clamped.
    TrainingConfig trainingConfig() const;
    void setTrainingConfig(const TrainingConfig& c);

    std::int64_t batch() const;
    void setBatch(std::int64_t b);
    bool logScale() const;
    /// The chart's memory axis in powers of two.
    bool logMemoryScale() const;
    void setLogMemoryScale(bool on);
    void setLogScale(bool on);
    bool welcomeDismissed() const;
    void setWelcomeDismissed(bool on);

    /// Writes pending changes to storage. False if they could not be written.
    bool sync();

private:
    std::unique_ptr<QSettings> m_settings;
};

} // namespace batchfit
