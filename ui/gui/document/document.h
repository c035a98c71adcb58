#pragma once
// The open document: the model, the training set-up and the GPU, with undo history and file identity.
#include "batchfit/gpu.h"
#include "batchfit/model.h"
#include "batchfit/training_config.h"
#include "batchfit/training_setup.h"
#include "gui/document/layer_address.h"

#include <QObject>
#include <QString>
#include <QUndoStack>
#include <optional>

namespace batchfit {

/// Owns what the user edits. Model and set-up edits go through the undo stack; loading clears it.
class Document : public QObject {
    Q_OBJECT

public:
    explicit Document(QObject* parent = nullptr);

    const Model& model() const { return m_model; }
    const TrainingConfig& config() const { return m_config; }
    const GpuSpec& gpu() const { return m_gpu; }
    QUndoStack* undoStack() { return &m_undo; }

    /// The file the model was opened from or saved to (empty for presets and new models).
    QString filePath() const { return m_filePath; }
    /// The preset the model came from, while it has no file.
    QString presetId() const { return m_presetId; }
    /// The batch shown (saved with the set-up; moving it is not an edit).
    std::int64_t batch() const { return m_batch; }
    void setBatch(std::int64_t batch) { m_batch = batch; }
    /// GPU, batch, training configuration and serving set-up, as a model file stores them.
    TrainingSetup setup() const;
    /// The serving set-up (serving mode), saved with the model file.
    const ServingConfig& serving() const { return m_serving; }
    /// Sets the serving set-up (no undo: serving mode has its own form); counts as a change of the set-up.
    void setServing(const ServingConfig& serving);
    /// True when the model differs from what was last opened or saved, or, for a document with a file, the
    /// set-up does (GPU or configuration; the batch alone does not count). A preset or new model keeps no
    /// set-up of its own: loading another one keeps the current set-up, so nothing is lost.
    bool isModified() const;
    /// File name, or the model's name for presets and new models.
    QString displayName() const;

    /// Replaces the model (open, preset, new): clears the undo history and counts as saved. A set-up (from a
    /// model file that stores one) replaces GPU, configuration and batch; without one they stay.
    void loadModel(Model model, const QString& filePath, const QString& presetId,
                   const std::optional<TrainingSetup>& setup = std::nullopt);
    /// Replaces the model with one that has no file yet (an import): clears the undo history and counts as
    /// modified, so Save asks for a name.
    void loadUnsavedModel(Model model);
    /// Records that the current model was saved to `filePath`.
    void markSaved(const QString& filePath);

    /// Pushes an undoable model edit. Edits with the same mergeId on the same layer merge into one step.
    void editModel(Model after, const QString& text, const LayerAddress& focus, int mergeId = -1);
    /// Pushes an undoable change of the training set-up.
    void editConfig(const TrainingConfig& after, const QString& text, int mergeId = -1);
    /// Sets the training set-up without undo (start-up, restoring settings).
    void resetConfig(const TrainingConfig& config);
    /// Sets the GPU without undo (start-up, restoring settings, the undo commands).
    void setGpu(const GpuSpec& gpu);
    /// Pushes an undoable change of GPU.
    void editGpu(const GpuSpec& after, const QString& text);

    // Used by the undo commands.
    void applyModelState(const Model& model, const LayerAddress& focus);
    void applyConfigState(const TrainingConfig& config);

signals:
    /// The model changed (edit, undo, redo or load).
    void modelChanged();
    /// A different model was loaded (the layer tree should reset its expansion).
    void modelReplaced();
    void configChanged();
    void gpuChanged();
    /// A loaded file brought its serving set-up.
    void servingChanged();
    void modifiedChanged(bool modified);
    void fileChanged();
    /// A loaded file asks for this batch (its saved set-up).
    void batchRequested(std::int64_t batch);
    /// An edit, undo or redo asks to select this layer.
    void focusRequested(const batchfit::LayerAddress& address);

private:
    void updateModified();

    Model m_model;
    Model m_savedModel;
    TrainingSetup m_savedSetup;
    TrainingConfig m_config;
    ServingConfig m_serving;
    GpuSpec m_gpu;
    std::int64_t m_batch = 64;
    QString m_filePath;
    QString m_presetId;
    QUndoStack m_undo;
    bool m_lastModified = false;
};

} // namespace batchfit
