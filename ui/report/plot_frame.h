#pragma once
// The frame of a chart: the plot rectangle inside an area, byte ticks on the left, optional number ticks
// below.
#include "report/chart_axis.h"
#include "report/report_canvas.h"

#include <optional>

namespace batchfit {

class PlotFrame {
public:
    /// Reserves room in `area` for the tick labels, `xTitle` (if any) and `top` points above the plot.
    PlotFrame(ReportCanvas& canvas, const QRectF& area, ChartAxis yAxis, std::optional<ChartAxis> xAxis,
              double xMax, QString xTitle, double top);

    const QRectF& plot() const { return m_plot; }
    QPointF map(double x, double y) const;
    double mapX(double x) const { return map(x, 0).x(); }
    double mapY(double y) const { return map(0, y).y(); }
    const QFont& tickFont() const { return m_tickFont; }
    /// Grid, tick labels, the x title and the base line.
    void paint();

private:
    ReportCanvas& m_canvas;
    ChartAxis m_y;
    std::optional<ChartAxis> m_x;
    double m_xMax;
    QString m_xTitle;
    QFont m_tickFont;
    QRectF m_plot;
};

} // namespace batchfit
