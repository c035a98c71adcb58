#include "gui/shell/app_settings.h"

#include "batchfit/allocator_config.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>

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
const QString kCustomGib = QStringLiteral("gpu/customGib");
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

double AppSettings::customGpuGib() const {
    const double v = m_settings->value(kCustomGib, 24.0).toDouble();
    return v > 0 && v <= 4096 ? v : 24.0;
}
void AppSettings::setCustomGpuGib(double gib) {
    m_settings->setValue(kCustomGib, gib);
}

TrainingConfig AppSettings::trainingConfig() const {
    TrainingConfig c;
    const QSettings& s = *m_settings;
    if (auto v = parseOptimizer(str(s.value("training/optimizer")))) c.optimizer = *v;
    if (auto v = parseOptimizerImpl(str(s.value("training/impl")))) c.impl = *v;
    if (auto v = parsePrecision(str(s.value("training/precision")))) c.precision = *v;
    if (auto v = parseCheckpointing(str(s.value("training/checkpointing")))) c.checkpointing = *v;
    if (auto v = parseCheckpointMode(str(s.value("training/checkpointMode")))) c.checkpointMode = *v;
    c.amsgrad = s.value("training/amsgrad", c.amsgrad).toBool();
    c.rmspropMomentum = s.value("training/rmspropMomentum", c.rmspropMomentum).toBool();
    c.rmspropCentered = s.value("training/rmspropCentered", c.rmspropCentered).toBool();
    c.checkpointEvery =
        std::max<qint64>(1, s.value("training/checkpointEvery", qint64(c.checkpointEvery)).toLongLong());
    c.accumulationSteps = std::clamp<qint64>(
        s.value("training/accumulation", qint64(c.accumulationSteps)).toLongLong(), 1, 4096);
    c.zeroGradSetToNone = s.value("training/setToNone", c.zeroGradSetToNone).toBool();
    c.optimizerOffload = s.value("training/offload", c.optimizerOffload).toBool();
    c.firstStep = s.value("training/firstStep", c.firstStep).toBool();
    if (auto v = parseTorchRules(str(s.value("training/torch")))) c.torch = *v;
    c.marginFraction = std::clamp(s.value("training/margin", c.marginFraction).toDouble(), 0.0, 0.9);
    const qint64 ctx = s.value("training/contextBytes", qint64(-1)).toLongLong();
    if (ctx >= 0) c.cudaContextBytes = static_cast<std::uint64_t>(ctx);
    // PYTORCH_CUDA_ALLOC_CONF, canonical; text the core refuses (an older or newer version's) is dropped
    if (auto v = parseAllocConf(str(s.value("training/allocConf")))) c.allocConf = allocConfText(*v);
    return c;
}

void AppSettings::setTrainingConfig(const TrainingConfig& c) {
    QSettings& s = *m_settings;
    s.setValue("training/optimizer", qstr(optimizerName(c.optimizer)));
    s.setValue("training/impl", qstr(optimizerImplName(c.impl)));
    s.setValue("training/precision", qstr(precisionName(c.precision)));
    s.setValue("training/checkpointing", qstr(checkpointingName(c.checkpointing)));
    s.setValue("training/amsgrad", c.amsgrad);
    s.setValue("training/rmspropMomentum", c.rmspropMomentum);
    s.setValue("training/rmspropCentered", c.rmspropCentered);
    s.setValue("training/checkpointEvery", qint64(c.checkpointEvery));
    s.setValue("training/checkpointMode", qstr(checkpointModeName(c.checkpointMode)));
    s.setValue("training/accumulation", qint64(c.accumulationSteps));
    s.setValue("training/setToNone", c.zeroGradSetToNone);
    s.setValue("training/offload", c.optimizerOffload);
    s.setValue("training/firstStep", c.firstStep);
    s.setValue("training/torch", qstr(torchRulesName(c.torch)));
    s.setValue("training/margin", c.marginFraction);
    s.setValue("training/contextBytes", c.cudaContextBytes ? qint64(*c.cudaContextBytes) : qint64(-1));
    s.setValue("training/allocConf", qstr(c.allocConf));
}

std::int64_t AppSettings::batch() const {
    bool ok = false;
    const qint64 b = m_settings->value(kBatch, 64).toLongLong(&ok);
    return ok && b >= 1 ? std::min<qint64>(b, qint64(1) << 31) : 64;
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
