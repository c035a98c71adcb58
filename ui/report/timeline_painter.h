#pragma once
// The step timeline: live memory by component after each op of one training step, phases shaded,
// the peak marked and labelled.
#include "report/chart_legend.h"
#include "report/report_canvas.h"
#include "report/report_data.h"

namespace batchfit {

class PlotFrame;

class TimelinePainter {
public:
    explicit TimelinePainter(const ReportData& data) : m_data(data) {}
    /// Paints the chart and its legend inside `rect` (points). Draws nothing without a timeline.
    void paint(ReportCanvas& canvas, const QRectF& rect) const;

private:
    void paintPhases(ReportCanvas& canvas, const PlotFrame& frame) const;
    void paintBands(ReportCanvas& canvas, const PlotFrame& frame) const;
    void paintPeak(ReportCanvas& canvas, const PlotFrame& frame) const;

    const ReportData& m_data;
};

} // namespace batchfit
