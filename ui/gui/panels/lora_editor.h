#pragma once
// The fine-tuning rows of the training set-up: full training or LoRA, and LoRA's rank, alpha, dropout,
// targets.
#include "batchfit/lora_targets.h"
#include "batchfit/training_config.h"

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLineEdit;
class QMenu;
class QToolButton;
class QSpinBox;

namespace batchfit {

/// Adds its rows to a form; emits every change as a new LoraConfig (rank 0: full training).
class LoraEditor : public QWidget {
    Q_OBJECT

public:
    /// The widgets go into `form` (this object only owns the logic).
    LoraEditor(QFormLayout* form, QWidget* parent);

    /// Shows a configuration without emitting anything.
    void setLora(const LoraConfig& lora);
    /// The model's targetable linear names (the picker's menu) and PEFT's default (the placeholder).
    void setTargetInfo(const LoraTargetInfo& info);
    QWidget* firstField() const;
    QWidget* lastField() const;

signals:
    void loraEdited(const batchfit::LoraConfig& lora, const QString& what, int mergeId);

private:
    void emitEdit(const QString& what, int mergeId = -1);
    void updateEnabled();
    void setTargets(std::vector<std::string> targets, const QString& what);
    void fillPicker();

    LoraConfig m_lora;
    LoraConfig m_lastLora; ///< what LoRA was set to before switching to full training
    bool m_updating = false;
    QComboBox* m_mode = nullptr;
    QSpinBox* m_rank = nullptr;
    QDoubleSpinBox* m_alpha = nullptr;
    QDoubleSpinBox* m_dropout = nullptr;
    QLineEdit* m_targets = nullptr;
    QFormLayout* m_form = nullptr;
    QWidget* m_row = nullptr;
    QWidget* m_targetRow = nullptr;
    QToolButton* m_picker = nullptr;
    QMenu* m_pickerMenu = nullptr;
    LoraTargetInfo m_info;
};

} // namespace batchfit
