#include "gui/shell/app_settings.h"

#include "batchfit/settings.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <map>

namespace batchfit {

namespace {

const QString kGeometry = QStringLiteral("window/geometry");
const QString kState = QStringLiteral("window/state");
const QString kSplitters = QStringLiteral("window/splitters/");
const QString kLastModel = QStringLiteral("model/lastPath");
const QString kLastPreset = QStringLiteral("model/lastPreset");
const QString kRecent = QStringLiteral("model/recentFiles");
const QString kReportDir = QStringLiteral("report/lastDir");
const QString kLanguage = QStringLiteral("ui/language");
const QString kGpu = QStringLiteral("gpu/id");
const QString kCustomGib = QStringLiteral("gpu/customGib"); // before the settings table
const QString kCustomBytes = QStringLiteral("gpu/customBytes");
const QString kBatch = QStringLiteral("view/batch");
const QString kLog = QStringLiteral("view/logScale");
const QString kWelcome = QStringLiteral("view/welcomeDismissed");

std::string str(const QVariant& v) {
    return v.toString().toStdString();
}
QString qstr(std::string_view v) {
    return QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size()));
}

} // namespace

AppSettings::AppSettings()
    : m_settings(std::make_unique<QSettings>(QStringLiteral("BatchFit"), QStringLiteral("batchfit"))) {}

AppSettings::AppSettings(const QString& iniPath)
    : m_settings(std::make_unique<QSettings>(iniPath, QSettings::IniFormat)) {}

QByteArray AppSettings::windowGeometry() const {
    return m_settings->value(kGeometry).toByteArray();
}
void AppSettings::setWindowGeometry(const QByteArray& g) {
    m_settings->setValue(kGeometry, g);
}
QByteArray AppSettings::windowState() const {
    return m_settings->value(kState).toByteArray();
}
void AppSettings::setWindowState(const QByteArray& s) {
    m_settings->setValue(kState, s);
}
QByteArray AppSettings::splitterState(const QString& name) const {
    return m_settings->value(kSplitters + name).toByteArray();
}
void AppSettings::setSplitterState(const QString& name, const QByteArray& s) {
    m_settings->setValue(kSplitters + name, s);
}

QString AppSettings::lastModelPath() const {
    return m_settings->value(kLastModel).toString();
}
void AppSettings::setLastModelPath(const QString& path) {
    m_settings->setValue(kLastModel, path);
}
QString AppSettings::lastPresetId() const {
    return m_settings->value(kLastPreset).toString();
}
void AppSettings::setLastPresetId(const QString& id) {
    m_settings->setValue(kLastPreset, id);
}

QByteArray AppSettings::headerState(const QString& name) const {
    return m_settings->value(QStringLiteral("headers/") + name).toByteArray();
}
void AppSettings::setHeaderState(const QString& name, const QByteArray& s) {
    m_settings->setValue(QStringLiteral("headers/") + name, s);
}

QString AppSettings::lastFolder(const QString& kind) const {
    const QString dir = m_settings->value(QStringLiteral("folders/") + kind).toString();
    return !dir.isEmpty() && QFileInfo(dir).isDir() ? dir : QDir::homePath();
}
void AppSettings::rememberFolder(const QString& kind, const QString& filePath) {
    if (filePath.isEmpty()) return;
    m_settings->setValue(QStringLiteral("folders/") + kind, QFileInfo(filePath).absolutePath());
}

QString AppSettings::lastReportDir() const {
    return m_settings->value(kReportDir).toString();
}
void AppSettings::setLastReportDir(const QString& dir) {
    m_settings->setValue(kReportDir, dir);
}

QStringList AppSettings::recentFiles() const {
    return m_settings->value(kRecent).toStringList();
}

void AppSettings::addRecentFile(const QString& path) {
    QStringList list = recentFiles();
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > kMaxRecentFiles) list.removeLast();
    m_settings->setValue(kRecent, list);
}

void AppSettings::removeRecentFile(const QString& path) {
    QStringList list = recentFiles();
    list.removeAll(path);
    m_settings->setValue(kRecent, list);
}

QString AppSettings::language() const {
    return m_settings->value(kLanguage).toString();
}
void AppSettings::setLanguage(const QString& lang) {
    m_settings->setValue(kLanguage, lang);
}

QString AppSettings::gpuId() const {
    return m_settings->value(kGpu, QStringLiteral("rtx-4090")).toString();
}
void AppSettings::setGpuId(const QString& id) {
    m_settings->setValue(kGpu, id);
}

std::uint64_t AppSettings::customGpuBytes() const {
    const SettingInfo& info = *findSetting("gpu_memory_bytes");
    if (auto v = parseSettingText(info, str(m_settings->value(kCustomBytes))))
        if (const auto* n = std::get_if<std::int64_t>(&*v)) return static_cast<std::uint64_t>(*n);
    // Before the settings table: GiB as a double (24 when unset or broken)
    const double gib = m_settings->value(kCustomGib, 24.0).toDouble();
    const double bytes = std::round(gib * double(1u << 30));
    return gib > 0 && bytes <= info.max ? static_cast<std::uint64_t>(bytes) : std::uint64_t{24} << 30;
}
void AppSettings::setCustomGpuBytes(std::uint64_t bytes) {
    const SettingInfo& info = *findSetting("gpu_memory_bytes");
    m_settings->setValue(kCustomBytes, qstr(settingText(info, static_cast<std::int64_t>(bytes))));
}

namespace {

/// The setting's key in the settings file: "training/checkpoint_every", "training/lora.rank".
QString storedKey(const SettingInfo& s) {
    return QStringLiteral("training/") + QString::fromStdString(s.key);
}

/// The keys settings files had before the settings table, for the settings they had.
QString legacyKey(const std::string& key) {
    static const std::map<std::string, const char*> keys = {{"optimizer_impl", "impl"},
                                                            {"checkpoint_mode", "checkpointMode"},
                                                            {"rmsprop_momentum", "rmspropMomentum"},
                                                            {"rmsprop_centered", "rmspropCentered"},
                                                            {"checkpoint_every", "checkpointEvery"},
                                                            {"accumulation_steps", "accumulation"},
                                                            {"zero_grad_set_to_none", "setToNone"},
                                                            {"optimizer_offload", "offload"},
                                                            {"first_step", "firstStep"},
                                                            {"margin_fraction", "margin"},
                                                            {"alloc_conf", "allocConf"}};
    const auto it = keys.find(key);
    if (it != keys.end()) return QStringLiteral("training/") + QLatin1String(it->second);
    return QStringLiteral("training/") + QString::fromStdString(key);
}

bool isConfigSetting(const SettingInfo& s) {
    return s.key != "gpu" && s.key != "gpu_memory_bytes" && s.key != "batch";
}

} // namespace

TrainingConfig AppSettings::trainingConfig() const {
    // Every setting of the table, each read on its own: one broken or out-of-range value keeps its default
    // and the others are kept (nothing is clamped into range).
    TrainingSetup setup;
    const QSettings& st = *m_settings;
    for (const SettingInfo& s : settingsTable()) {
        if (!isConfigSetting(s)) continue;
        const QString key = st.contains(storedKey(s)) ? storedKey(s) : legacyKey(s.key);
        if (!st.contains(key)) continue;
        QString text = st.value(key).toString();
        if (s.type == SettingType::Switch &&
            (text == QLatin1String("true") || text == QLatin1String("false")))
            text = text == QLatin1String("true") ? QStringLiteral("on") : QStringLiteral("off");
        if (auto v = parseSettingText(s, str(text))) s.set(setup, *v);
    }
    if (!st.contains(storedKey(*findSetting("cuda_context_bytes"))) && st.contains("training/contextBytes") &&
        st.value("training/contextBytes").toLongLong() >= 0)
        setup.config.cudaContextBytes =
            static_cast<std::uint64_t>(st.value("training/contextBytes").toLongLong());
    return setup.config;
}

void AppSettings::setTrainingConfig(const TrainingConfig& c) {
    TrainingSetup setup;
    setup.config = c;
    for (const SettingInfo& s : settingsTable()) {
        if (!isConfigSetting(s)) continue;
        const SettingValue v = s.get(setup);
        if (std::holds_alternative<std::monostate>(v))
            m_settings->remove(storedKey(s));
        else
            m_settings->setValue(storedKey(s), qstr(settingText(s, v)));
    }
}

std::int64_t AppSettings::batch() const {
    bool ok = false;
    const qint64 b = m_settings->value(kBatch, 64).toLongLong(&ok);
    const SettingInfo& info = *findSetting("batch");
    return ok && b >= info.min && b <= info.max ? b : 64; // out of range: the default, never a clamped value
}
void AppSettings::setBatch(std::int64_t b) {
    m_settings->setValue(kBatch, qint64(b));
}
bool AppSettings::logScale() const {
    return m_settings->value(kLog, false).toBool();
}
void AppSettings::setLogScale(bool on) {
    m_settings->setValue(kLog, on);
}
bool AppSettings::logMemoryScale() const {
    return m_settings->value(QStringLiteral("view/logMemoryScale"), false).toBool();
}
void AppSettings::setLogMemoryScale(bool on) {
    m_settings->setValue(QStringLiteral("view/logMemoryScale"), on);
}
bool AppSettings::welcomeDismissed() const {
    return m_settings->value(kWelcome, false).toBool();
}
void AppSettings::setWelcomeDismissed(bool on) {
    m_settings->setValue(kWelcome, on);
}

bool AppSettings::sync() {
    m_settings->sync();
    return m_settings->status() == QSettings::NoError;
}

} // namespace batchfit
