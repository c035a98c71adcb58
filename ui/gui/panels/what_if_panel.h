#pragma once
// "What would help?": the levers not yet pulled, ranked by the largest batch each allows; one click applies
// one.
#include "batchfit/fit_plan.h"
#include "batchfit/what_if.h"

#include <QWidget>

class QLabel;
class QPushButton;
class QTableView;

namespace batchfit {

class LeverModel;

/// Table of levers with an Apply button (also on double-click and Enter).
class WhatIfPanel : public QWidget {
    Q_OBJECT

public:
    explicit WhatIfPanel(QWidget* parent = nullptr);

    void setLevers(std::vector<Lever> levers, std::int64_t currentMaxBatch);
    /// Levers combined to make `target` fit (nothing shown when the plan has no steps) and the smallest
    /// catalogue GPU on which `target` fits at the current set-up.
    void setPlan(const FitPlan& plan, std::int64_t target, const std::optional<GpuFit>& smallestGpu);
    /// The plan's text below the table (empty when there is none).
    QString planText() const;
    /// Shows "working…" until the next setLevers().
    void setPending();
    /// Empties the table and says why (e.g. the model has a problem).
    void setUnavailable(const QString& reason);
    LeverModel* model() const { return m_model; }
    /// The line above the table (what is shown, what was left out).
    QString statusText() const;
    QTableView* view() const { return m_view; }

signals:
    void applyRequested(const batchfit::Lever& lever);

private:
    void finishLevers(); ///< column widths and the first row selected, after setLevers()
    void applyCurrent();
    void clearPlan();

    LeverModel* m_model = nullptr;
    QTableView* m_view = nullptr;
    QPushButton* m_apply = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_planText = nullptr;
    QPushButton* m_applyPlan = nullptr;
    std::optional<Lever> m_planLever; ///< the plan as one lever (its config has every step)
};

} // namespace batchfit
