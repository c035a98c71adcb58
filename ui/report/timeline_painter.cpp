#include "report/timeline_painter.h"

#include "report/component_palette.h"
#include "report/plot_frame.h"
#include "report/report_text.h"

#include <algorithm>

namespace batchfit {
namespace {

constexpr Component kStack[] = {Component::Parameters, Component::Gradients, Component::OptimizerStates,
                                Component::Activations, Component::Temporaries};

QColor phaseTint(Phase p) {
    switch (p) {
    case Phase::Setup:
        return QColor(0xF5, 0xF5, 0xF5);
    case Phase::Forward:
        return QColor(0xFF, 0xFF, 0xFF);
    case Phase::Backward:
        return QColor(0xF3, 0xF6, 0xFA);
    case Phase::OptimizerStep:
        return QColor(0xF6, 0xF3, 0xF8);
    }
    return Qt::white;
}

} // namespace

void TimelinePainter::paint(ReportCanvas& canvas, const QRectF& rect) const {
    const auto& tl = m_data.estimate.timeline;
    if (tl.empty()) return;
    const QFont legendFont = canvas.font(7.5);
    ChartLegend lg;
    for (Component c : kStack)
        lg.add(ChartLegend::Kind::Swatch, ComponentPalette::color(c), ReportText::componentLabel(c));
    lg.add(ChartLegend::Kind::Marker, ComponentPalette::capacity(), ReportText::tr("Peak"));
    const double legendHeight = lg.height(canvas, legendFont, rect.width());

    const double top = canvas.lineHeight(canvas.font(7.5)) + 4;
    PlotFrame frame(canvas, QRectF(rect.left(), rect.top(), rect.width(), rect.height() - legendHeight - 6),
                    ChartAxis::bytes(static_cast<double>(m_data.estimate.peakAllocatedBytes) * 1.3, 5),
                    std::nullopt, static_cast<double>(std::max<std::size_t>(tl.size() - 1, 1)),
                    ReportText::tr("Ops in execution order"), top);
    paintPhases(canvas, frame);
    frame.paint();
    QPainter& p = canvas.painter();
    p.save();
    p.setClipRect(frame.plot().adjusted(0, -0.5, 0.5, 0));
    paintBands(canvas, frame);
    p.restore();
    paintPeak(canvas, frame);
    lg.paint(canvas, legendFont,
             QRectF(rect.left(), rect.bottom() - legendHeight, rect.width(), legendHeight));
}

void TimelinePainter::paintPhases(ReportCanvas& canvas, const PlotFrame& frame) const {
    const auto& tl = m_data.estimate.timeline;
    QPainter& p = canvas.painter();
    const QRectF& plot = frame.plot();
    const QFont font = canvas.font(7.5, true);
    const double line = canvas.lineHeight(font);
    std::size_t start = 0;
    for (std::size_t i = 1; i <= tl.size(); ++i) {
        if (i < tl.size() && tl[i].phase == tl[start].phase) continue;
        // A phase spans its ops; the band reaches half an op either side.
        const double x0 = std::max(plot.left(), frame.mapX(static_cast<double>(start) - 0.5));
        const double x1 = std::min(plot.right(), frame.mapX(static_cast<double>(i - 1) + 0.5));
        p.fillRect(QRectF(x0, plot.top(), x1 - x0, plot.height()), phaseTint(tl[start].phase));
        if (x0 > plot.left() + 3 && x0 < plot.right() - 3) { // no rule for a band a few points wide
            p.save();
            p.setPen(QPen(QColor(0xBD, 0xBD, 0xBD), 0.6));
            p.drawLine(QPointF(x0, plot.top() - line - 2), QPointF(x0, plot.bottom()));
            p.restore();
        }
        const QString label = ReportText::phaseLabel(tl[start].phase);
        if (x1 - x0 >= canvas.textWidth(label, font) + 6)
            canvas.drawText(QRectF(x0, plot.top() - line - 2, x1 - x0, line), Qt::AlignCenter, label, font,
                            ComponentPalette::mutedText());
        start = i;
    }
}

void TimelinePainter::paintBands(ReportCanvas& canvas, const PlotFrame& frame) const {
    const auto& tl = m_data.estimate.timeline;
    QPainter& p = canvas.painter();
    QPolygonF lower;
    for (std::size_t i = 0; i < tl.size(); ++i)
        lower << QPointF(frame.mapX(static_cast<double>(i)), frame.mapY(0));
    for (Component c : kStack) {
        QPolygonF upper = lower;
        for (std::size_t i = 0; i < tl.size(); ++i)
            upper[static_cast<qsizetype>(i)].ry() -=
                frame.mapY(0) - frame.mapY(static_cast<double>(tl[i].live[c]));
        QPolygonF poly = upper;
        for (auto it = lower.crbegin(); it != lower.crend(); ++it) poly << *it;
        p.setPen(Qt::NoPen);
        p.setBrush(ComponentPalette::color(c));
        p.drawPolygon(poly);
        lower = upper;
    }
    p.setPen(QPen(QColor(0x42, 0x42, 0x42), 0.8));
    p.setBrush(Qt::NoBrush);
    p.drawPolyline(lower);
}

void TimelinePainter::paintPeak(ReportCanvas& canvas, const PlotFrame& frame) const {
    if (m_data.timelinePeak < 0) return;
    const Estimate& e = m_data.estimate;
    QPainter& p = canvas.painter();
    const QRectF& plot = frame.plot();
    const QPointF peak = frame.map(m_data.timelinePeak, static_cast<double>(e.peakAllocatedBytes));
    p.save();
    p.setPen(QPen(ComponentPalette::capacity(), 0.9));
    p.drawLine(QPointF(peak.x(), plot.bottom()), peak);
    p.restore();
    ChartLegend::paintSample(p, ChartLegend::Kind::Marker, ComponentPalette::capacity(),
                             QRectF(peak - QPointF(5, 5), QSizeF(10, 10)));

    const QFont bold = canvas.font(8, true);
    const QFont font = canvas.font(7.5);
    const QString head =
        ReportText::tr("Peak %1 (%2)")
            .arg(ReportText::bytes(e.peakAllocatedBytes), ReportText::phaseLabel(e.peakPhase));
    const double maxWidth = plot.width() * 0.55;
    const QString op = canvas.elided(QString::fromStdString(e.peakLabel), font, maxWidth);
    const double w = std::max(canvas.textWidth(head, bold), canvas.textWidth(op, font)) + 8;
    const double h = canvas.lineHeight(bold) + canvas.lineHeight(font) + 4;
    // Above the curve (the axis leaves 30% over the peak), beside the peak line on the side with more room.
    const bool right = peak.x() + 8 + w <= plot.right() || peak.x() - plot.left() < plot.right() - peak.x();
    QRectF box(right ? peak.x() + 8 : peak.x() - 8 - w, std::max(plot.top() + 2, peak.y() - h - 4), w, h);
    box.moveLeft(std::clamp(box.left(), plot.left() + 2, plot.right() - w - 2));
    p.save();
    p.setPen(QPen(ComponentPalette::capacity(), 0.6));
    p.setBrush(QColor(255, 255, 255, 235));
    p.drawRoundedRect(box, 2, 2);
    p.restore();
    canvas.drawText(QRectF(box.left() + 4, box.top() + 2, w - 8, canvas.lineHeight(bold)),
                    Qt::AlignLeft | Qt::AlignVCenter, head, bold, ComponentPalette::text());
    canvas.drawText(
        QRectF(box.left() + 4, box.top() + 2 + canvas.lineHeight(bold), w - 8, canvas.lineHeight(font)),
        Qt::AlignLeft | Qt::AlignVCenter, op, font, ComponentPalette::mutedText());
}

} // namespace batchfit
