#pragma once
// The stacked chart: memory by component over batch sizes, the overheads, the capacity and usable lines,
// the chosen batch and the largest batch that fits.
#include "report/chart_legend.h"
#include "report/report_canvas.h"
#include "report/report_data.h"

#include <vector>

namespace batchfit {

class PlotFrame;

class SweepChartPainter {
public:
    explicit SweepChartPainter(const ReportData& data) : m_data(data) {}
    /// Paints the chart and its legend inside `rect` (points).
    void paint(ReportCanvas& canvas, const QRectF& rect) const;

private:
    ChartLegend legend() const;
    void paintBands(ReportCanvas& canvas, const PlotFrame& frame) const;
    void paintCapacity(ReportCanvas& canvas, const PlotFrame& frame) const;
    void paintMarkers(ReportCanvas& canvas, const PlotFrame& frame) const;
    void paintMeasured(ReportCanvas& canvas, const PlotFrame& frame, std::vector<QRectF>& taken) const;

    const ReportData& m_data;
};

} // namespace batchfit
