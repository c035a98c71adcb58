#pragma once
// The training set-up: GPU, optimizer, precision, checkpointing, accumulation, margin, CUDA context and the
// caching allocator's options.
#include "batchfit/gpu.h"
#include "batchfit/lora_targets.h"
#include "batchfit/training_config.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QFormLayout;

namespace batchfit {

class AllocConfField;
class LoraEditor;
class ParallelEditor;
class SettingSpinBox;

/// Options form. Emits every change as a new TrainingConfig (the caller pushes it as an undo step).
class TrainingPanel : public QWidget {
    Q_OBJECT

public:
    explicit TrainingPanel(QWidget* parent = nullptr);

    /// Shows a set-up without emitting anything.
    void setConfig(const TrainingConfig& config);
    /// Selects a GPU (a catalogue entry by id, or a custom capacity) without emitting anything.
    void setGpu(const GpuSpec& gpu);
    /// The model's linears LoRA can target, for the target picker.
    void setLoraTargetInfo(const LoraTargetInfo& info);
    GpuSpec currentGpu() const;
    /// The PYTORCH_CUDA_ALLOC_CONF row (tests).
    AllocConfField* allocConfField() const { return m_allocConf; }

    /// Display names (translated) for the option values.
    static QString optimizerTitle(OptimizerKind k);
    static QString precisionTitle(Precision p);
    static QString checkpointingTitle(Checkpointing c);

signals:
    /// `what` names the change for the undo history; changes with the same mergeId merge.
    void configEdited(const batchfit::TrainingConfig& config, const QString& what, int mergeId);
    void gpuEdited(const batchfit::GpuSpec& gpu);

private:
    void buildGpuList(); ///< training_panel_lists.cpp
    /// The GPU list's item for a capacity typed in (TrainingSetup's "custom").
    static QString customGpuId() { return QStringLiteral("custom"); }
    /// The GPU picker's search text of an item (names, id, Chinese name and note).
    static constexpr int kGpuSearchRole = Qt::UserRole + 7;
    void emitEdit(const QString& what, int mergeId = -1);
    void updateEnabled();
    void showRecipe(); ///< the LM-loss box or GRPO's prompt tokens
    void onGpuChanged();
    void setUpGpuSearch(); ///< the picker's search: an editable box whose completer filters the list

    TrainingConfig m_config;
    GpuSpec m_shownGpu; ///< the GPU last set, exact (a custom GPU's bytes and architecture)
    bool m_updating = false;
    QComboBox* m_gpu = nullptr;
    SettingSpinBox* m_customGib = nullptr;
    QComboBox* m_optimizer = nullptr;
    QComboBox* m_impl = nullptr;
    QCheckBox* m_amsgrad = nullptr;
    QComboBox* m_precision = nullptr;
    QComboBox* m_checkpointing = nullptr;
    SettingSpinBox* m_checkpointEvery = nullptr;
    QComboBox* m_checkpointMode = nullptr;
    QComboBox* m_lmLoss = nullptr;
    QComboBox* m_activationOffload = nullptr;
    QComboBox* m_recipe = nullptr; ///< TrainingConfig::recipe and refLogps
    SettingSpinBox* m_promptTokens = nullptr; ///< TrainingConfig::promptTokens (shown under GRPO)
    QCheckBox* m_paramOffload = nullptr;
    SettingSpinBox* m_accumulation = nullptr;
    SettingSpinBox* m_margin = nullptr;
    QCheckBox* m_contextOverride = nullptr;
    SettingSpinBox* m_contextMib = nullptr;
    QCheckBox* m_setToNone = nullptr;
    QCheckBox* m_offload = nullptr;
    QCheckBox* m_eagerLoading = nullptr;
    QCheckBox* m_firstStep = nullptr;
    QComboBox* m_torch = nullptr;
    AllocConfField* m_allocConf = nullptr;
    LoraEditor* m_lora = nullptr;
    ParallelEditor* m_parallel = nullptr;
    QHBoxLayout* m_gpuRow = nullptr;
    QFormLayout* m_form = nullptr;
};

} // namespace batchfit
