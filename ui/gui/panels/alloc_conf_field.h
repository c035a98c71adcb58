#pragma once
// The caching-allocator replay's rows of the training set-up, behind an "Advanced" fold beside the PyTorch
// choice: PYTORCH_CUDA_ALLOC_CONF, the sequence lengths of earlier batches and the samples per epoch (whose
// last, smaller batch is replayed), each checked by the core's parser before it changes the set-up.
#include <QLineEdit>
#include <QWidget>
#include <cstdint>
#include <optional>
#include <vector>

class QBoxLayout;
class QFormLayout;
class QToolButton;

namespace batchfit {

/// Adds its rows to a form (the field, and under it the parser's message while the text is refused), shown
/// while the "Advanced" toggle it puts in `toggleRow` is on (it turns on by itself for a set-up that has
/// options, or a refused text). Emits
/// the canonical text (batchfit::allocConfText) when the user commits text the core accepts and that
/// differs from the set-up's; refused text changes nothing.
class ElidingLabel;

class AllocConfField : public QWidget {
    Q_OBJECT

public:
    /// The widgets go into `form` (this object only owns the logic).
    AllocConfField(QFormLayout* form, QBoxLayout* toggleRow, QWidget* parent);

    /// Shows the set-up's text (canonical) without emitting; clears a refusal.
    void setAllocConf(const QString& canonical);
    /// Shows TrainingConfig::replaySequences without emitting; clears a refusal.
    void setReplaySequences(const std::vector<std::int64_t>& seqs);
    /// Shows TrainingConfig::epochSamples without emitting; clears a refusal.
    void setEpochSamples(std::optional<std::int64_t> samples);
    QLineEdit* lineEdit() const { return m_edit; }
    QLineEdit* epochEdit() const { return m_epochEdit; }
    /// The parser's message while the samples per epoch are refused; empty otherwise.
    QString epochProblem() const { return m_epochProblem; }
    QLineEdit* sequencesEdit() const { return m_seqEdit; }
    /// The parser's message while the sequence lengths are refused; empty otherwise.
    QString sequencesProblem() const { return m_seqProblem; }
    QToolButton* advancedButton() const { return m_advanced; }
    /// The parser's message while the text is refused; empty otherwise.
    QString problem() const { return m_problem; }

signals:
    void allocConfEdited(const QString& canonical);
    void replaySequencesEdited(const std::vector<std::int64_t>& seqs);
    void epochSamplesEdited(std::optional<std::int64_t> samples);

private:
    /// Checks the text; true (and the canonical text in `canonical`) when the core accepts it.
    bool check(QString* canonical);
    void commit();
    void showProblem(const QString& message);
    void updateVisible();
    void commitSequences();
    void showSequencesProblem(const QString& message);
    void commitEpoch();
    void showEpochProblem(const QString& message);
    /// Marks a refused field (tint, tooltip with the message) or clears the mark.
    void markField(QLineEdit* edit, const QString& tip, const QString& message);

    QFormLayout* m_form = nullptr;
    QLineEdit* m_edit = nullptr;
    QToolButton* m_advanced = nullptr;
    ElidingLabel* m_message = nullptr;
    QString m_tip;     ///< the field's tooltip while the text is accepted
    QString m_current; ///< the set-up's canonical text
    QString m_problem;
    QLineEdit* m_seqEdit = nullptr;
    QString m_seqTip, m_seqCurrent, m_seqProblem;
    QLineEdit* m_epochEdit = nullptr;
    QString m_epochTip, m_epochCurrent, m_epochProblem;
};

} // namespace batchfit
