#pragma once
// The open document: the model, the training set-up and the GPU, with undo history and file identity.
#include "batchfit/gpu.h"
#include "batchfit/model.h"
#include "batchfit/training_config.h"
#include "gui/document/layer_address.h"

#include <QObject>
#include <QString>
#include <QUndoStack>

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
    /// True when the model differs from what was last opened or saved.
    bool isModified() const { return m_model != m_savedModel; }
    /// File name, or the model's name for presets and new models.
    QString displayName() const;

    /// Replaces the model (open, preset, new): clears the undo history and counts as saved.
    void loadModel(Model model, const QString& filePath, const QString& presetId);
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
    void modifiedChanged(bool modified);
    void fileChanged();
    /// An edit, undo or redo asks to select this layer.
    void focusRequested(const batchfit::LayerAddress& address);

private:
    void updateModified();

    Model m_model;
    Model m_savedModel;
    TrainingConfig m_config;
    GpuSpec m_gpu;
    QString m_filePath;
    QString m_presetId;
    QUndoStack m_undo;
    bool m_lastModified = false;
};

} // namespace batchfit
