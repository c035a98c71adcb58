#include "report/plot_frame.h"

#include "report/component_palette.h"

#include <algorithm>

namespace batchfit {

PlotFrame::PlotFrame(ReportCanvas& canvas, const QRectF& area, ChartAxis yAxis,
                     std::optional<ChartAxis> xAxis, double xMax, QString xTitle, double top)
    : m_canvas(canvas), m_y(std::move(yAxis)), m_x(std::move(xAxis)), m_xMax(xMax > 0 ? xMax : 1),
      m_xTitle(std::move(xTitle)), m_tickFont(canvas.font(7.5)) {
    double labelWidth = 0;
    for (const auto& l : m_y.labels()) labelWidth = std::max(labelWidth, canvas.textWidth(l, m_tickFont));
    const double line = canvas.lineHeight(m_tickFont);
    double bottom = 3;
    if (m_x) bottom += line + 2;
    if (!m_xTitle.isEmpty()) bottom += line + 1;
    // Half a label to the right so the last x tick label stays inside the area.
    double right = 4;
    if (m_x && !m_x->labels().empty())
        right = std::max(right, canvas.textWidth(m_x->labels().back(), m_tickFont) / 2);
    m_plot = QRectF(area.left() + labelWidth + 6, area.top() + top, area.width() - labelWidth - 6 - right,
                    area.height() - top - bottom);
}

QPointF PlotFrame::map(double x, double y) const {
    return QPointF(m_plot.left() + x / m_xMax * m_plot.width(),
                   m_plot.bottom() - m_y.fraction(y) * m_plot.height());
}

void PlotFrame::paint() {
    QPainter& p = m_canvas.painter();
    const double line = m_canvas.lineHeight(m_tickFont);
    const QColor muted = ComponentPalette::mutedText();
    p.save();
    p.setPen(QPen(ComponentPalette::grid(), 0.5));
    for (std::size_t i = 0; i < m_y.ticks().size(); ++i) {
        const double y = mapY(m_y.ticks()[i]);
        if (i > 0) p.drawLine(QPointF(m_plot.left(), y), QPointF(m_plot.right(), y));
        m_canvas.drawText(QRectF(m_plot.left() - 200, y - line / 2, 196, line),
                          Qt::AlignRight | Qt::AlignVCenter, m_y.labels()[i], m_tickFont, muted);
    }
    double below = m_plot.bottom() + 3;
    if (m_x) {
        for (std::size_t i = 0; i < m_x->ticks().size(); ++i) {
            const double x = mapX(m_x->ticks()[i]);
            p.setPen(QPen(QColor(0x9E, 0x9E, 0x9E), 0.5));
            p.drawLine(QPointF(x, m_plot.bottom()), QPointF(x, m_plot.bottom() + 2.5));
            m_canvas.drawText(QRectF(x - 50, below, 100, line), Qt::AlignHCenter | Qt::AlignTop,
                              m_x->labels()[i], m_tickFont, muted);
        }
        below += line + 2;
    }
    if (!m_xTitle.isEmpty())
        m_canvas.drawText(QRectF(m_plot.left(), below, m_plot.width(), line), Qt::AlignHCenter | Qt::AlignTop,
                          m_xTitle, m_tickFont, muted);
    p.setPen(QPen(QColor(0x75, 0x75, 0x75), 0.8));
    p.drawLine(m_plot.bottomLeft(), m_plot.bottomRight());
    p.drawLine(m_plot.bottomLeft(), m_plot.topLeft());
    p.restore();
}

} // namespace batchfit
