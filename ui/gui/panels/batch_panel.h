#pragma once
// The batch-size slider with its spin box, the "largest batch that fits" button, the verdict and the budget
// bar.
#include "batchfit/estimate.h"

#include <QFont>
#include <QWidget>
#include <cstdint>

class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;

namespace batchfit {

class BatchSpinBox;
class BudgetBar;
class ElidingLabel;

/// Batch selection and the answer at that batch. Emits batchChanged on every slider tick or spin step.
class BatchPanel : public QWidget {
    Q_OBJECT

public:
    explicit BatchPanel(QWidget* parent = nullptr);

    std::int64_t batch() const { return m_batch; }
    /// Sets the batch without emitting (clamped to 1..kMaxBatch).
    void setBatch(std::int64_t batch);
    /// The slider covers 1..maxBatch; logarithmic spacing when `log` is set.
    void setSliderRange(std::int64_t maxBatch, bool log);
    /// Shows the solver's answer next to the button.
    void setMaxBatch(const MaxBatch& m);
    /// Shows the verdict and the budget at the current batch; a token-sequence model's verdict names the
    /// sequence length it was estimated at (`sequence` > 0).
    void showVerdict(const Estimate& estimate, const Verdict& verdict, std::int64_t sequence = 0);
    /// Shows a message instead of a verdict (invalid model, batch too large to count).
    void showProblem(const QString& message);

    QSlider* slider() const { return m_slider; }
    QSpinBox* spinBox() const;
    QPushButton* maxButton() const { return m_maxButton; }
    /// The verdict, or a problem in its place: one line, the whole text in fullText() (and the tooltip when
    /// cut).
    ElidingLabel* verdictLabel() const { return m_verdict; }
    /// The note under the budget bar (largest batch, or why a typed batch was refused).
    QString noteText() const;
    BudgetBar* budgetBar() const { return m_bar; }

signals:
    void batchChanged(std::int64_t batch);
    void maxBatchRequested();

private:
    int sliderPosition(std::int64_t batch) const;
    std::int64_t batchAtPosition(int position) const;
    void onSlider(int position);
    void onSpin(int value);
    void showRefused(const QString& typed);
    static QString verdictTip();

    QSlider* m_slider = nullptr;
    BatchSpinBox* m_spin = nullptr;
    QPushButton* m_maxButton = nullptr;
    QLabel* m_maxLabel = nullptr;
    ElidingLabel* m_verdict = nullptr;
    BudgetBar* m_bar = nullptr;
    QFont m_bigFont;
    std::int64_t m_batch = 1;
    std::int64_t m_rangeMax = 512;
    bool m_log = false;
    bool m_updating = false;
};

} // namespace batchfit
