#include "gui/charts/timeline_chart.h"

#include "gui/estimation/byte_format.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QToolTip>
#include <QValueAxis>
#include <cmath>

namespace batchfit {

namespace {

QString phaseTitle(Phase p) {
    switch (p) {
    case Phase::Setup:
        return TimelineChart::tr("setup");
    case Phase::Forward:
        return TimelineChart::tr("forward");
    case Phase::Backward:
        return TimelineChart::tr("backward");
    case Phase::OptimizerStep:
        return TimelineChart::tr("optimizer step");
    }
    return {};
}

} // namespace

// Built with its chart: QChartView(QWidget*) would make a default one that setChart() leaks.
TimelineChart::TimelineChart(QWidget* parent) : QChartView(new QChart, parent) {
    m_chart = chart();
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_chart->setBackgroundRoundness(0);
    m_chart->legend()->hide(); // same colours as the main chart; the peak is named in the title
    setRenderHint(QPainter::Antialiasing);

    for (auto& b : m_bounds) b = new QLineSeries(m_chart);
    for (int i = 0; i < kComponentCount; ++i) {
        auto* area =
            new QAreaSeries(m_bounds[static_cast<std::size_t>(i + 1)], m_bounds[static_cast<std::size_t>(i)]);
        area->setName(ComponentStyle::name(i));
        m_areas[static_cast<std::size_t>(i)] = area;
        m_chart->addSeries(area);
        connect(area, &QAreaSeries::hovered, this, &TimelineChart::onHover);
    }
    m_peakLine = new QLineSeries;
    m_peakLine->setName(tr("Peak"));
    m_chart->addSeries(m_peakLine);

    m_x = new QCategoryAxis(this);
    m_x->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
    m_x->setTitleText(tr("one training step, op by op"));
    m_y = new QValueAxis(this);
    m_y->setTitleText(tr("live memory (GiB)"));
    m_y->setLabelFormat(QStringLiteral("%.1f"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (auto* s : m_chart->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    setToolTip(tr("Live memory after each op of one step: activations grow through the forward pass and are "
                  "freed through the backward pass. Hover for the op."));
    applyPalette();
}

void TimelineChart::applyPalette() {
    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::WindowText);
    m_chart->setBackgroundBrush(pal.color(QPalette::Base));
    m_chart->legend()->setLabelColor(text);
    m_chart->setTitleBrush(text);
    for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(m_x), static_cast<QAbstractAxis*>(m_y)}) {
        a->setLabelsColor(text);
        a->setTitleBrush(text);
        a->setGridLineColor(pal.color(QPalette::Mid));
        a->setLinePenColor(pal.color(QPalette::Mid));
    }
    for (int i = 0; i < kComponentCount; ++i) {
        QColor c = ComponentStyle::color(i);
        m_areas[static_cast<std::size_t>(i)]->setColor(c);
        m_areas[static_cast<std::size_t>(i)]->setPen(QPen(c.darker(115), 1));
    }
    m_peakLine->setPen(QPen(ComponentStyle::oomColor(), 2, Qt::DashLine));
}

void TimelineChart::changeEvent(QEvent* event) {
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) applyPalette();
}

void TimelineChart::clear() {
    for (auto* b : m_bounds) b->clear();
    m_peakLine->clear();
    m_points.clear();
    m_peakIndex = -1;
    m_chart->setTitle({});
}

void TimelineChart::setEstimate(const Estimate& e) {
    m_points = e.timeline;
    std::array<QList<QPointF>, kComponentCount + 1> lines;
    for (auto& l : lines) l.reserve(static_cast<qsizetype>(m_points.size()));
    m_peakIndex = -1;
    int labelMatch = -1;
    for (int i = 0; i < static_cast<int>(m_points.size()); ++i) {
        const TimelinePoint& p = m_points[static_cast<std::size_t>(i)];
        std::uint64_t stacked = 0;
        lines[0].append({double(i), 0.0});
        for (int c = 0; c < kComponentCount; ++c) {
            stacked += p.live.bytes[c]; // stacked for display only
            lines[static_cast<std::size_t>(c + 1)].append({double(i), ByteFormat::toGib(stacked)});
        }
        // The core names the peak's op and phase; mark the timeline point it refers to.
        if (p.phase == e.peakPhase && p.label == e.peakLabel) {
            if (labelMatch < 0) labelMatch = i;
            if (m_peakIndex < 0 && p.live.total() == e.peakAllocatedBytes) m_peakIndex = i;
        }
    }
    if (m_peakIndex < 0) m_peakIndex = labelMatch;
    for (std::size_t i = 0; i < lines.size(); ++i) m_bounds[i]->replace(lines[i]);

    const double peakGib = ByteFormat::toGib(e.peakAllocatedBytes);
    m_y->setRange(0, std::max(0.1, peakGib * 1.1));
    m_y->applyNiceNumbers();
    const int n = static_cast<int>(m_points.size());
    m_x->setRange(0, std::max(1, n - 1));
    for (const QString& label : m_x->categoriesLabels()) m_x->remove(label);
    // One category per phase, ending at the phase's last op.
    for (int i = 0; i < n; ++i) {
        const Phase ph = m_points[static_cast<std::size_t>(i)].phase;
        if (i + 1 == n || m_points[static_cast<std::size_t>(i + 1)].phase != ph) {
            QString label = phaseTitle(ph);
            while (m_x->categoriesLabels().contains(label)) label += QLatin1Char(' ');
            m_x->append(label, i + 0.5);
        }
    }
    if (m_peakIndex >= 0) {
        m_peakLine->replace(QList<QPointF>{{double(m_peakIndex), 0.0}, {double(m_peakIndex), m_y->max()}});
        m_chart->setTitle(tr("Peak %1 during %2: %3")
                              .arg(ByteFormat::bytes(e.peakAllocatedBytes), phaseTitle(e.peakPhase),
                                   QString::fromStdString(e.peakLabel)));
    } else {
        m_peakLine->clear();
        m_chart->setTitle(tr("Peak %1").arg(ByteFormat::bytes(e.peakAllocatedBytes)));
    }
}

bool TimelineChart::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip && m_hoverTip) return true; // keep the op's detail
    return QChartView::event(event);
}

void TimelineChart::onHover(const QPointF& point, bool state) {
    const int i = static_cast<int>(std::lround(point.x()));
    m_hoverTip = state && i >= 0 && i < static_cast<int>(m_points.size());
    if (!m_hoverTip) {
        QToolTip::hideText();
        return;
    }
    const TimelinePoint& p = m_points[static_cast<std::size_t>(i)];
    QToolTip::showText(QCursor::pos(),
                       tr("<b>%1</b> (%2)<br>live: %3")
                           .arg(QString::fromStdString(p.label).toHtmlEscaped(), phaseTitle(p.phase),
                                ByteFormat::bytes(p.live.total())),
                       this);
}

} // namespace batchfit
