#include "gui/document/document.h"

#include "gui/document/config_edit_command.h"
#include "gui/document/gpu_edit_command.h"
#include "gui/document/model_edit_command.h"

#include <QFileInfo>

namespace batchfit {

Document::Document(QObject* parent) : QObject(parent), m_gpu(customGpu(24.0)) {}

QString Document::displayName() const {
    if (!m_filePath.isEmpty()) return QFileInfo(m_filePath).fileName();
    if (!m_model.name.empty()) return QString::fromStdString(m_model.name);
    return tr("Untitled");
}

namespace {
/// What makes two GPUs the same for an estimate (GpuSpec has no operator==: its source text does not count).
bool sameGpu(const GpuSpec& a, const GpuSpec& b) {
    return a.id == b.id && a.memoryBytes == b.memoryBytes && a.contextBytes == b.contextBytes;
}
/// Set-ups equal apart from the batch.
bool sameSetup(const TrainingSetup& a, const TrainingSetup& b) {
    return a.gpuId == b.gpuId && a.customGpuBytes == b.customGpuBytes && a.config == b.config &&
           a.serving == b.serving;
}
} // namespace

bool Document::isModified() const {
    if (m_model != m_savedModel) return true;
    return !m_filePath.isEmpty() && !sameSetup(setup(), m_savedSetup);
}

void Document::loadModel(Model model, const QString& filePath, const QString& presetId,
                         const std::optional<TrainingSetup>& setup) {
    m_undo.clear();
    m_model = std::move(model);
    m_savedModel = m_model;
    m_filePath = filePath;
    m_presetId = filePath.isEmpty() ? presetId : QString();
    if (setup) {
        applyConfigState(setup->config);
        if (auto gpu = setupGpu(*setup)) setGpu(*gpu); // the parser checked the id
        m_batch = setup->batch;
        m_serving = setup->serving;
    }
    m_savedSetup = this->setup();
    emit fileChanged();
    emit modelReplaced();
    if (setup) emit batchRequested(setup->batch);
    if (setup) emit servingChanged();
    emit modelChanged();
    updateModified();
}

TrainingSetup Document::setup() const {
    TrainingSetup s = makeTrainingSetup(m_gpu, m_batch, m_config);
    s.serving = m_serving;
    return s;
}

void Document::setServing(const ServingConfig& serving) {
    if (serving == m_serving) return;
    m_serving = serving;
    updateModified();
}

void Document::loadUnsavedModel(Model model) {
    loadModel(std::move(model), QString(), QString());
    m_savedModel = Model{}; // nothing of it is on disk
    updateModified();
}

void Document::markSaved(const QString& filePath) {
    m_savedModel = m_model;
    m_savedSetup = setup();
    m_filePath = filePath;
    m_presetId.clear();
    emit fileChanged();
    updateModified();
}

void Document::editModel(Model after, const QString& text, const LayerAddress& focus, int mergeId) {
    if (after == m_model) return;
    m_undo.push(new ModelEditCommand(this, m_model, std::move(after), focus, text, mergeId));
}

void Document::editConfig(const TrainingConfig& after, const QString& text, int mergeId) {
    if (after == m_config) return;
    m_undo.push(new ConfigEditCommand(this, m_config, after, text, mergeId));
}

void Document::resetConfig(const TrainingConfig& config) {
    applyConfigState(config);
}

void Document::editGpu(const GpuSpec& after, const QString& text) {
    if (sameGpu(after, m_gpu)) return;
    m_undo.push(new GpuEditCommand(this, m_gpu, after, text));
}

void Document::setGpu(const GpuSpec& gpu) {
    if (sameGpu(gpu, m_gpu)) return;
    m_gpu = gpu;
    emit gpuChanged();
    updateModified();
}

void Document::applyModelState(const Model& model, const LayerAddress& focus) {
    m_model = model;
    emit modelChanged();
    emit focusRequested(focus);
    updateModified();
}

void Document::applyConfigState(const TrainingConfig& config) {
    if (config == m_config) return;
    m_config = config;
    emit configChanged();
    updateModified();
}

void Document::updateModified() {
    const bool modified = isModified();
    if (modified == m_lastModified) return;
    m_lastModified = modified;
    emit modifiedChanged(modified);
}

} // namespace batchfit
