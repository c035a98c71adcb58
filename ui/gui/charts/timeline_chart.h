#pragma once
// When the peak happens: live memory per component through one training step (forward, backward, optimizer).
#include "batchfit/estimate.h"
#include "gui/charts/component_style.h"

#include <QChartView>
#include <array>
#include <vector>

class QAreaSeries;
class QCategoryAxis;
class QLineSeries;
class QValueAxis;

namespace batchfit {

/// Stacked areas over the step's ops from Estimate::timeline, with the peak marked and labelled with its op.
class TimelineChart : public QChartView {
    Q_OBJECT

public:
    explicit TimelineChart(QWidget* parent = nullptr);

    /// Shows an estimate made with a timeline (Estimator::estimate(batch, true)).
    void setEstimate(const Estimate& estimate);
    void clear();
    /// Index of the marked peak in the timeline, or -1 (tests).
    int peakIndex() const { return m_peakIndex; }

protected:
    void changeEvent(QEvent* event) override;
    /// While an op's detail is shown, the chart's general tooltip does not replace it.
    bool event(QEvent* event) override;

private:
    void applyPalette();
    void onHover(const QPointF& point, bool state);

    QChart* m_chart = nullptr;
    std::array<QLineSeries*, kComponentCount + 1> m_bounds{};
    std::array<QAreaSeries*, kComponentCount> m_areas{};
    QLineSeries* m_peakLine = nullptr;
    QCategoryAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
    std::vector<TimelinePoint> m_points;
    int m_peakIndex = -1;
    bool m_hoverTip = false; ///< an op's detail is on screen
};

} // namespace batchfit
