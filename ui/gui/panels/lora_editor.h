#pragma once
// The fine-tuning rows of the training set-up: full training, LoRA or QLoRA, with LoRA's rank, alpha,
// dropout, targets and QLoRA's quantization.
#include "batchfit/lora_targets.h"
#include "batchfit/training_config.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLineEdit;
class QMenu;
class QToolButton;

namespace batchfit {

class SettingSpinBox;

/// Adds its rows to a form; emits every change as a new LoraConfig (rank 0: full training) and QuantConfig
/// (enabled: QLoRA).
class LoraEditor : public QWidget {
    Q_OBJECT

public:
    /// The widgets go into `form` (this object only owns the logic).
    LoraEditor(QFormLayout* form, QWidget* parent);

    /// Shows a configuration without emitting anything.
    void setFineTuning(const LoraConfig& lora, const QuantConfig& quant);
    /// The model's targetable linear names (the picker's menu) and PEFT's default (the placeholder).
    void setTargetInfo(const LoraTargetInfo& info);
    QWidget* firstField() const;
    QWidget* lastField() const;

signals:
    /// `quantSwitchedOn`: QLoRA was just chosen (the panel applies prepare_model_for_kbit_training's
    /// checkpointing default).
    void fineTuningEdited(const batchfit::LoraConfig& lora, const batchfit::QuantConfig& quant,
                          const QString& what, int mergeId, bool quantSwitchedOn);

private:
    void emitEdit(const QString& what, int mergeId = -1, bool quantSwitchedOn = false);
    void buildQuantRows(QFormLayout* form, QWidget* parent);
    void setMode(int mode);
    void updateEnabled();
    void setTargets(std::vector<std::string> targets, const QString& what);
    void fillPicker();

    LoraConfig m_lora;
    LoraConfig m_lastLora; ///< what LoRA was set to before switching to full training
    QuantConfig m_quant;
    QuantConfig m_lastQuant; ///< what QLoRA's quantization was before switching it off
    bool m_updating = false;
    QComboBox* m_mode = nullptr;
    SettingSpinBox* m_rank = nullptr;
    SettingSpinBox* m_alpha = nullptr;
    SettingSpinBox* m_dropout = nullptr;
    QCheckBox* m_dora = nullptr;
    QLineEdit* m_targets = nullptr;
    QFormLayout* m_form = nullptr;
    QWidget* m_row = nullptr;
    QWidget* m_targetRow = nullptr;
    QWidget* m_quantRow = nullptr;
    QComboBox* m_quantKind = nullptr;
    QCheckBox* m_doubleQuant = nullptr;
    QComboBox* m_computeDtype = nullptr;
    QCheckBox* m_prepare = nullptr;
    QToolButton* m_picker = nullptr;
    QMenu* m_pickerMenu = nullptr;
    LoraTargetInfo m_info;
};

} // namespace batchfit
