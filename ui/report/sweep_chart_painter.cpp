#include "report/sweep_chart_painter.h"

#include "report/component_palette.h"
#include "report/plot_frame.h"
#include "report/report_language.h"
#include "report/report_text.h"

#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace batchfit {
namespace {

constexpr Component kStack[] = {Component::Parameters, Component::Gradients, Component::OptimizerStates,
                                Component::Activations, Component::Temporaries};
const QColor kRequiredLine(0x42, 0x42, 0x42);

QPolygonF band(const std::vector<QPointF>& lower, const std::vector<QPointF>& upper) {
    QPolygonF poly;
    for (const auto& p : upper) poly << p;
    for (auto it = lower.rbegin(); it != lower.rend(); ++it) poly << *it;
    return poly;
}

} // namespace

ChartLegend SweepChartPainter::legend() const {
    ChartLegend l;
    for (Component c : kStack)
        l.add(ChartLegend::Kind::Swatch, ComponentPalette::color(c), ReportText::componentLabel(c));
    l.add(ChartLegend::Kind::Swatch, ComponentPalette::overhead(), ReportText::overheadLabel());
    l.add(ChartLegend::Kind::Line, kRequiredLine, ReportText::tr("Required (nvidia-smi)"));
    l.add(ChartLegend::Kind::Line, ComponentPalette::capacity(), ReportText::tr("GPU capacity"));
    l.add(ChartLegend::Kind::DashedLine, ComponentPalette::capacity(),
          ReportText::tr("Usable (minus margin)"));
    l.add(ChartLegend::Kind::Marker, ComponentPalette::marker(), ReportText::tr("Chosen batch"));
    if (m_data.maxBatch.largest > 0 && !m_data.maxBatch.capped)
        l.add(ChartLegend::Kind::Marker, ComponentPalette::fits(), ReportText::tr("Largest batch that fits"));
    if (!m_data.request.measured.empty())
        l.add(ChartLegend::Kind::Cross, ComponentPalette::marker(), ReportText::tr("Measured"));
    if (std::any_of(m_data.request.measured.begin(), m_data.request.measured.end(),
                    [](const MeasuredPoint& m) { return m.estimatedBytes > 0; }))
        l.add(ChartLegend::Kind::Ring, ComponentPalette::marker(),
              ReportText::tr("Estimate of the measured figure (label: its error)"));
    return l;
}

void SweepChartPainter::paint(ReportCanvas& canvas, const QRectF& rect) const {
    const QFont legendFont = canvas.font(7.5);
    const ChartLegend lg = legend();
    const double legendHeight = lg.height(canvas, legendFont, rect.width());

    double yMax = static_cast<double>(m_data.verdict.capacityBytes);
    for (const auto& p : m_data.sweep) yMax = std::max(yMax, static_cast<double>(p.gpuRequiredBytes()));
    for (const auto& m : m_data.request.measured)
        if (m.batch <= m_data.sweepMax)
            yMax = std::max({yMax, static_cast<double>(m.bytes), static_cast<double>(m.estimatedBytes)});
    const ChartAxis xAxis = ChartAxis::numbers(static_cast<double>(m_data.sweepMax), 6);
    const double top = canvas.lineHeight(canvas.font(7.5)) + 4;
    PlotFrame frame(canvas, QRectF(rect.left(), rect.top(), rect.width(), rect.height() - legendHeight - 6),
                    ChartAxis::bytes(yMax * 1.04, 5), xAxis, xAxis.max(), ReportText::tr("Micro-batch size"),
                    top);
    frame.paint();

    QPainter& p = canvas.painter();
    p.save();
    p.setClipRect(frame.plot().adjusted(0, -0.5, 0.5, 0));
    paintBands(canvas, frame);
    paintCapacity(canvas, frame);
    p.restore();
    paintMarkers(canvas, frame);
    // Under the usable line at the left, where the stack is lowest; on top of the markers to stay readable.
    const QString label = ReportText::tr("capacity %1 · usable %2")
                              .arg(ReportText::bytes(m_data.verdict.capacityBytes),
                                   ReportText::bytes(m_data.verdict.usableBytes));
    canvas.drawLabel(
        QPointF(frame.plot().left() + 3, frame.mapY(static_cast<double>(m_data.verdict.usableBytes)) + 1.5),
        Qt::AlignRight | Qt::AlignBottom, label, canvas.font(7.5), ComponentPalette::capacity().darker(115),
        true);
    lg.paint(canvas, legendFont,
             QRectF(rect.left(), rect.bottom() - legendHeight, rect.width(), legendHeight));
}

void SweepChartPainter::paintBands(ReportCanvas& canvas, const PlotFrame& frame) const {
    QPainter& p = canvas.painter();
    // Each band's lower edge is the previous band's upper edge (plot coordinates, not bytes).
    std::vector<QPointF> lower;
    for (const auto& pt : m_data.sweep)
        lower.emplace_back(frame.mapX(static_cast<double>(pt.batch)), frame.mapY(0));
    for (Component c : kStack) {
        std::vector<QPointF> upper = lower;
        for (std::size_t i = 0; i < upper.size(); ++i)
            upper[i].ry() -= frame.mapY(0) - frame.mapY(static_cast<double>(m_data.sweep[i].atPeak[c]));
        p.setPen(Qt::NoPen);
        p.setBrush(ComponentPalette::color(c));
        p.drawPolygon(band(lower, upper));
        lower = std::move(upper);
    }
    std::vector<QPointF> required;
    for (const auto& pt : m_data.sweep)
        required.emplace_back(frame.mapX(static_cast<double>(pt.batch)),
                              frame.mapY(static_cast<double>(pt.gpuRequiredBytes())));
    p.setBrush(ComponentPalette::overhead());
    p.drawPolygon(band(lower, required));
    p.setPen(QPen(kRequiredLine, 1.2));
    p.setBrush(Qt::NoBrush);
    p.drawPolyline(required.data(), static_cast<int>(required.size()));
}

void SweepChartPainter::paintCapacity(ReportCanvas& canvas, const PlotFrame& frame) const {
    QPainter& p = canvas.painter();
    const QRectF& plot = frame.plot();
    const double cap = frame.mapY(static_cast<double>(m_data.verdict.capacityBytes));
    const double usable = frame.mapY(static_cast<double>(m_data.verdict.usableBytes));
    p.setPen(QPen(ComponentPalette::capacity(), 1.4));
    p.drawLine(QPointF(plot.left(), cap), QPointF(plot.right(), cap));
    QPen dashed(ComponentPalette::capacity(), 1.2);
    dashed.setDashPattern({4, 3});
    p.setPen(dashed);
    p.drawLine(QPointF(plot.left(), usable), QPointF(plot.right(), usable));
}

void SweepChartPainter::paintMarkers(ReportCanvas& canvas, const PlotFrame& frame) const {
    QPainter& p = canvas.painter();
    const QRectF& plot = frame.plot();
    const QFont font = canvas.font(7.5, true);
    auto clampedLabel = [&](double x, double y, const QString& s) {
        QRectF r = canvas.labelRect(QPointF(x, y), Qt::AlignTop, s, font);
        r.moveLeft(std::clamp(r.left(), plot.left(), plot.right() - r.width()));
        return r;
    };

    const double bx = frame.mapX(static_cast<double>(m_data.request.batch));
    const double by = frame.mapY(static_cast<double>(m_data.verdict.requiredBytes));
    QPen pen(ComponentPalette::marker(), 0.9);
    pen.setDashPattern({2, 2});
    p.save();
    p.setPen(pen);
    p.drawLine(QPointF(bx, plot.bottom()), QPointF(bx, plot.top()));
    p.restore();
    ChartLegend::paintSample(p, ChartLegend::Kind::Marker, ComponentPalette::marker(),
                             QRectF(bx - 5, by - 5, 10, 10));
    const QRectF batchLabel = clampedLabel(
        bx, plot.top() - 1, ReportText::tr("batch %1").arg(ReportText::number(m_data.request.batch)));
    canvas.drawText(batchLabel, Qt::AlignCenter,
                    ReportText::tr("batch %1").arg(ReportText::number(m_data.request.batch)), font,
                    ComponentPalette::marker());

    std::vector<QRectF> taken{batchLabel};
    const MaxBatch& m = m_data.maxBatch;
    if (m.largest > 0 && !m.capped) {
        const double mx = frame.mapX(static_cast<double>(m.largest));
        const double my = frame.mapY(static_cast<double>(m.requiredAtLargest));
        ChartLegend::paintSample(p, ChartLegend::Kind::Marker, ComponentPalette::fits(),
                                 QRectF(mx - 5, my - 5, 10, 10));
        const QString text = ReportText::tr("max %1").arg(ReportText::number(m.largest));
        QRectF r = clampedLabel(mx, plot.top() - 1, text);
        if (r.intersects(batchLabel.adjusted(-3, 0, 3, 0)))
            r = clampedLabel(mx, my - 4, text); // into the plot
        p.save();
        QPen thin(ComponentPalette::fits(), 0.7);
        thin.setDashPattern({1.5, 2});
        p.setPen(thin);
        p.drawLine(QPointF(mx, std::min(r.bottom(), my)), QPointF(mx, my));
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(255, 255, 255, 225));
        p.drawRoundedRect(r, 1.5, 1.5);
        p.restore();
        canvas.drawText(r, Qt::AlignCenter, text, font, ComponentPalette::fits());
        taken.push_back(r);
    }
    paintMeasured(canvas, frame, taken);
}

// Each measured point: a cross at the measured figure and a ring at the estimate of the same figure, joined;
// then the labels "batch N: +x.x%" (the estimate's error) beside the crosses, stacked upwards with a leader
// line where points crowd (measurements are often taken at small batches, at the chart's left edge).
void SweepChartPainter::paintMeasured(ReportCanvas& canvas, const PlotFrame& frame,
                                      std::vector<QRectF>& taken) const {
    QPainter& p = canvas.painter();
    const QRectF& plot = frame.plot();
    const QFont font = canvas.font(6.5);
    const QLocale locale = ReportLanguage::currentLocale();
    std::vector<std::pair<QPointF, QString>> labels;
    for (const auto& pt : m_data.request.measured) {
        if (pt.batch < 1 || pt.batch > m_data.sweepMax) continue;
        const QPointF c = frame.map(static_cast<double>(pt.batch), static_cast<double>(pt.bytes));
        QString text = pt.label;
        if (pt.estimatedBytes > 0) {
            const QPointF e =
                frame.map(static_cast<double>(pt.batch), static_cast<double>(pt.estimatedBytes));
            p.save();
            p.setPen(QPen(ComponentPalette::marker(), 0.6));
            p.drawLine(c, e);
            p.restore();
            ChartLegend::paintSample(p, ChartLegend::Kind::Ring, ComponentPalette::marker(),
                                     QRectF(e - QPointF(5, 5), QSizeF(10, 10)));
            const double err = 100.0 * relativeError(pt.estimatedBytes, pt.bytes);
            text = ReportText::tr("batch %1: %2")
                       .arg(ReportText::number(pt.batch),
                            (err < 0 ? QStringLiteral("−") : QStringLiteral("+")) +
                                locale.toString(std::fabs(err), 'f', std::fabs(err) < 9.95 ? 1 : 0) +
                                QLatin1Char('%'));
        }
        // a white halo keeps the cross readable on the coloured bands
        ChartLegend::paintSample(p, ChartLegend::Kind::Ring, Qt::white,
                                 QRectF(c - QPointF(5, 5), QSizeF(10, 10)));
        ChartLegend::paintSample(p, ChartLegend::Kind::Cross, ComponentPalette::marker(),
                                 QRectF(c - QPointF(5, 5), QSizeF(10, 10)));
        if (!text.isEmpty()) labels.emplace_back(c, text);
    }
    std::stable_sort(labels.begin(), labels.end(),
                     [](const auto& a, const auto& b) { return a.first.x() < b.first.x(); });
    for (const auto& [c, text] : labels) {
        QRectF r = canvas.labelRect(c + QPointF(7, 0), Qt::AlignRight | Qt::AlignVCenter, text, font);
        if (r.right() > plot.right()) r.moveRight(c.x() - 7);
        // Up past every label it would cover (the chart's own labels and the measured ones before it).
        for (bool moved = true; moved;) {
            moved = false;
            for (const QRectF& t : taken)
                if (t.intersects(r.adjusted(-1, -1, 1, 1))) {
                    r.moveBottom(t.top() - 1.5);
                    moved = true;
                }
        }
        if (r.top() < plot.top() || r.left() < plot.left()) continue; // no room: the cross stays unlabelled
        if (std::fabs(r.center().y() - c.y()) > 1) {
            p.save();
            p.setPen(QPen(ComponentPalette::mutedText(), 0.5));
            p.drawLine(c, QPointF(r.left() < c.x() ? r.right() : r.left(), r.center().y()));
            p.restore();
        }
        p.save();
        p.setPen(QPen(ComponentPalette::grid().darker(120), 0.4));
        p.setBrush(QColor(255, 255, 255, 235));
        p.drawRoundedRect(r, 1.5, 1.5);
        p.restore();
        canvas.drawText(r, Qt::AlignCenter, text, font, ComponentPalette::marker());
        taken.push_back(r);
    }
}

} // namespace batchfit
