#pragma once
// The data-parallel rows of the training set-up: GPUs and strategy, and the framework knobs that change
// one GPU's memory behind an "Advanced" fold.
#include "batchfit/parallel_config.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QHBoxLayout;
class QToolButton;

namespace batchfit {

class SettingSpinBox;

/// Adds its rows to a form; emits every change as a new ParallelConfig.
class ParallelEditor : public QWidget {
    Q_OBJECT

public:
    /// The widgets go into `form`, the GPU count at the end of `gpuRow` (this object only owns the logic).
    ParallelEditor(QFormLayout* form, QHBoxLayout* gpuRow, QWidget* parent);

    /// Shows a configuration without emitting anything.
    void setParallel(const ParallelConfig& parallel);
    /// The GPU count, in the GPU row.
    QWidget* countField() const;
    /// The first and last of the rows under the fine-tuning fields (strategy ... advanced).
    QWidget* firstField() const;
    QWidget* lastField() const;
    static QString strategyTitle(ParallelStrategy s);

signals:
    void parallelEdited(const batchfit::ParallelConfig& parallel, const QString& what, int mergeId);

private:
    void emitEdit(const QString& what, int mergeId = -1);
    void updateVisible();

    ParallelConfig m_parallel;
    bool m_updating = false;
    QFormLayout* m_form = nullptr;
    SettingSpinBox* m_gpus = nullptr;
    QWidget* m_strategyRow = nullptr;
    QComboBox* m_strategy = nullptr;
    QToolButton* m_advanced = nullptr;
    QWidget* m_tpRow = nullptr;
    SettingSpinBox* m_tp = nullptr;
    QCheckBox* m_sequenceParallel = nullptr;
    SettingSpinBox* m_pp = nullptr;
    SettingSpinBox* m_micro = nullptr;
    QWidget* m_ddpRow = nullptr;
    SettingSpinBox* m_bucketCap = nullptr;
    QCheckBox* m_bucketView = nullptr;
    QWidget* m_zeroRow = nullptr;
    SettingSpinBox* m_reduceBucket = nullptr;
    QComboBox* m_overlap = nullptr;
    QComboBox* m_zeroImpl = nullptr;
    QWidget* m_fsdpRow = nullptr;
    SettingSpinBox* m_perNode = nullptr;
    QCheckBox* m_limitGathers = nullptr;
    QCheckBox* m_prefetchPre = nullptr;
    QCheckBox* m_reshard = nullptr;
};

} // namespace batchfit
