#include "gui/charts/memory_chart.h"

#include "gui/charts/chart_data.h"
#include "gui/estimation/byte_format.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QChart>
#include <QFontMetrics>
#include <QGraphicsLineItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLineSeries>
#include <QMouseEvent>
#include <QScatterSeries>
#include <QScopeGuard>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace batchfit {

// QChartView(QWidget*) would make a default chart that setChart() releases without deleting: start with ours.
MemoryChart::MemoryChart(QWidget* parent) : QChartView(new QChart, parent) {
    m_chart = chart();
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_chart->setBackgroundRoundness(0);
    m_chart->legend()->hide(); // a wrapping legend (ComponentStyle::legendHtml) sits under the chart
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(220);

    for (auto& b : m_bounds) b = new QLineSeries(m_chart);
    for (int i = 0; i < ComponentStyle::kSlotCount; ++i) {
        auto* area =
            new QAreaSeries(m_bounds[static_cast<std::size_t>(i + 1)], m_bounds[static_cast<std::size_t>(i)]);
        area->setName(ComponentStyle::name(i));
        m_areas[static_cast<std::size_t>(i)] = area;
        m_chart->addSeries(area);
        connect(area, &QAreaSeries::hovered, this, &MemoryChart::onHover);
    }
    m_oomUpper = new QLineSeries(m_chart);
    m_oomLower = new QLineSeries(m_chart);
    m_oom = new QAreaSeries(m_oomUpper, m_oomLower);
    m_oom->setName(tr("Does not fit"));
    m_chart->addSeries(m_oom);
    m_capacity = new QLineSeries;
    m_capacity->setName(tr("GPU capacity"));
    m_chart->addSeries(m_capacity);
    m_usable = new QLineSeries;
    m_usable->setName(tr("Usable (capacity − margin)"));
    m_chart->addSeries(m_usable);
    m_measuredEstimate = new QScatterSeries;
    m_measuredEstimate->setName(tr("estimate of the measured figure"));
    m_measuredEstimate->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_measuredEstimate->setMarkerSize(9);
    m_chart->addSeries(m_measuredEstimate);
    m_measured = new QScatterSeries;
    m_measured->setName(tr("measured"));
    m_measured->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
    m_measured->setMarkerSize(12);
    m_chart->addSeries(m_measured);
    connect(m_measured, &QScatterSeries::hovered, this, &MemoryChart::onMeasuredHover);
    connect(m_measuredEstimate, &QScatterSeries::hovered, this, &MemoryChart::onMeasuredHover);

    m_x = new QCategoryAxis(this);
    m_x->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_y = new QValueAxis(this);
    m_y->setTitleText(tr("GPU memory (GiB)"));
    m_y->setLabelFormat(QStringLiteral("%.0f"));
    m_yLog = new QCategoryAxis(this); // attached instead of m_y in log mode (setLogMemoryScale)
    m_yLog->setTitleText(tr("GPU memory (GiB, log)"));
    m_yLog->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    m_chart->addAxis(m_yLog, Qt::AlignLeft);
    m_yLog->setVisible(false);
    for (auto* s : m_chart->series()) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    m_chart->legend()->setAlignment(Qt::AlignTop); // lists only the measured points (rebuildMeasured)
    m_chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);

    m_marker = new QGraphicsLineItem;
    m_marker->setZValue(30);
    scene()->addItem(m_marker);
    m_capacityLabel = new QGraphicsSimpleTextItem(m_chart);
    m_usableLabel = new QGraphicsSimpleTextItem(m_chart);
    m_capacityLabel->setZValue(20);
    m_usableLabel->setZValue(20);
    connect(m_chart, &QChart::plotAreaChanged, this, [this] {
        if (xLabelBudget() != m_xLabelBudget) updateAxes(); // as many batch ticks as fit the new width
        placeLineLabels();
        placeMarker();
    });

    setToolTip(tr(
        "Memory of one training step by batch size. Hover an area for its values; click to pick a batch."));
    applyPalette();
    updateAxes();
}

double MemoryChart::xOf(std::int64_t batch) const {
    const double b = static_cast<double>(std::max<std::int64_t>(batch, 1));
    return m_log ? std::log2(b) : b;
}

std::int64_t MemoryChart::batchAt(double x) const {
    const double b = m_log ? std::exp2(x) : x;
    return std::clamp<std::int64_t>(std::llround(b), 1, m_range);
}

void MemoryChart::applyPalette() {
    const QPalette pal = palette();
    const QColor text = pal.color(QPalette::WindowText);
    const QColor base = pal.color(QPalette::Base);
    m_chart->setBackgroundBrush(base);
    m_chart->setPlotAreaBackgroundVisible(false);
    for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(m_x), static_cast<QAbstractAxis*>(m_y),
                             static_cast<QAbstractAxis*>(m_yLog)}) {
        a->setLabelsColor(text);
        a->setTitleBrush(text);
        a->setGridLineColor(pal.color(QPalette::Mid));
        a->setLinePenColor(pal.color(QPalette::Mid));
    }
    for (int i = 0; i < ComponentStyle::kSlotCount; ++i) {
        auto* area = m_areas[static_cast<std::size_t>(i)];
        const QColor c = ComponentStyle::color(i);
        area->setColor(c);
        area->setPen(QPen(c.darker(115), 1));
    }
    QColor oom = ComponentStyle::oomColor();
    oom.setAlpha(ComponentStyle::isDark(base) ? 70 : 38);
    m_oom->setBrush(oom);
    m_oom->setPen(Qt::NoPen);
    const QColor cap = ComponentStyle::readableOn(ComponentStyle::capacityColor(), base);
    m_capacity->setPen(QPen(cap, 2));
    m_usable->setPen(QPen(cap, 1.5, Qt::DashLine));
    m_capacityLabel->setBrush(cap);
    m_usableLabel->setBrush(cap);
    m_marker->setPen(QPen(text, 2));
    m_measured->setColor(text);
    m_measured->setBorderColor(base);
    m_measuredEstimate->setBrush(Qt::NoBrush);
    m_measuredEstimate->setPen(QPen(text, 1.5));
    m_chart->legend()->setLabelColor(text);
}

bool MemoryChart::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip && m_hoverTip) return true; // keep the hovered values on screen
    return QChartView::event(event);
}

void MemoryChart::changeEvent(QEvent* event) {
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) applyPalette();
}

void MemoryChart::setResult(const EstimationResult& r) {
    m_points = r.sweep;
    m_capacityBytes = r.gpu.memoryBytes;
    m_usableBytes = r.usableBytes;
    m_maxBatch = r.maxBatch.largest;
    m_capped = r.maxBatch.capped;
    m_range = r.chartMax;
    m_estimator = r.estimator;
    rebuildSeries();
}

QAbstractAxis* MemoryChart::memoryAxis() const {
    return m_logMemory ? static_cast<QAbstractAxis*>(m_yLog) : static_cast<QAbstractAxis*>(m_y);
}

double MemoryChart::yOf(double gib) const {
    return m_logMemory ? std::log2(std::max(gib, m_yFloor)) : gib;
}

std::pair<double, double> MemoryChart::memoryRange() const {
    if (m_logMemory) return {std::exp2(m_yLog->min()), std::exp2(m_yLog->max())};
    return {m_y->min(), m_y->max()};
}

void MemoryChart::setLogMemoryScale(bool log) {
    if (log == m_logMemory) return;
    QAbstractAxis* from = memoryAxis();
    m_logMemory = log;
    QAbstractAxis* to = memoryAxis();
    // Both axes stay in the chart and only the one in use is visible: Qt 6.4 went on drawing an axis taken
    // out with removeAxis once it had been laid out.
    for (auto* s : m_chart->series()) {
        s->detachAxis(from);
        s->attachAxis(to);
    }
    from->setVisible(false);
    to->setVisible(true);
    rebuildSeries();
}

void MemoryChart::rebuildSeries() {
    if (m_logMemory) {
        // The floor: a power of two at or below the smallest positive stacked value at the smallest batch,
        // and at most 2^16 below the top, so the step's components stay apart instead of squeezed at the
        // bottom.
        double smallest = 1.0;
        for (const auto& p : m_points) {
            std::uint64_t stacked = 0;
            for (int c = 0; c < kComponentCount; ++c)
                if ((stacked += p.atPeak.bytes[c]) > 0) {
                    smallest = std::min(smallest, ByteFormat::toGib(stacked));
                    break;
                }
        }
        const double cap = std::max(ByteFormat::toGib(m_capacityBytes), 1.0);
        m_yFloor = std::exp2(std::floor(std::log2(std::max(smallest, cap / 65536.0))));
    }
    std::array<QList<QPointF>, ComponentStyle::kSlotCount + 1> lines;
    for (auto& l : lines) l.reserve(static_cast<qsizetype>(m_points.size()));
    for (const auto& p : m_points) {
        const double x = xOf(p.batch);
        std::uint64_t stacked = 0;
        lines[0].append({x, yOf(0.0)});
        for (int c = 0; c < kComponentCount; ++c) {
            stacked +=
                p.atPeak.bytes[c]; // stacking for display: the core's components drawn on top of each other
            lines[static_cast<std::size_t>(c + 1)].append({x, yOf(ByteFormat::toGib(stacked))});
        }
        lines[ComponentStyle::kSlotCount].append({x, yOf(ByteFormat::toGib(p.gpuRequiredBytes()))});
    }
    for (std::size_t i = 0; i < lines.size(); ++i) m_bounds[i]->replace(lines[i]);
    rebuildMeasured();
    updateAxes();
    placeMarker();
}

void MemoryChart::updateAxes() {
    // Setting ranges re-lays the chart out, and a new plot width can ask for another label count: one pass.
    if (m_inUpdateAxes) return;
    m_inUpdateAxes = true;
    const auto done = qScopeGuard([this] { m_inUpdateAxes = false; });
    const double capGib = ByteFormat::toGib(m_capacityBytes);
    // The range follows the data (a 7B model on a 24 GiB card is a curve, not a solid block) and always shows
    // the capacity line.
    std::uint64_t dataTop = 0;
    for (const auto& p : m_points) dataTop = std::max(dataTop, p.gpuRequiredBytes());
    const double top = std::max({capGib * 1.15, measuredTopGib() * 1.15, ByteFormat::toGib(dataTop) * 1.05});
    m_y->setRange(0, std::max(1.0, std::ceil(top)));
    m_y->setTickCount(6);
    m_y->applyNiceNumbers();
    // Whole GiB unless the range is small (no estimate yet, a tiny GPU): "0 0 0 1 1 1" says nothing.
    m_y->setLabelFormat(m_y->max() <= 5.0 ? QStringLiteral("%.1f") : QStringLiteral("%.0f"));
    // Log mode: powers of two from the floor to the first one above the data and the capacity.
    {
        for (const QString& label : m_yLog->categoriesLabels()) m_yLog->remove(label);
        const int lo = static_cast<int>(std::lround(std::log2(m_yFloor)));
        const int hi = std::max(lo + 1, static_cast<int>(std::ceil(std::log2(std::max(top, m_yFloor * 2)))));
        const double height = m_chart->plotArea().height();
        const int fit =
            height > 1.0
                ? std::max(2, static_cast<int>(height / (2.2 * QFontMetrics(m_yLog->labelsFont()).height())))
                : 8;
        int every = 1;
        while ((hi - lo) / every + 1 > fit) ++every;
        m_yLog->setStartValue(lo);
        m_yLog->setRange(lo, hi);
        for (int k = lo; k <= hi; k += every) m_yLog->append(QString::number(std::exp2(k), 'g', 4), k);
    }
    // In the series' units: GiB, or log2 of GiB.
    const double yTop = m_logMemory ? m_yLog->max() : m_y->max();
    const double yBottom = m_logMemory ? m_yLog->min() : 0.0;

    for (const QString& label : m_x->categoriesLabels()) m_x->remove(label);
    const double left = 0.0; // log mode: log2(1) = 0
    const double right = xOf(m_range);
    m_x->setStartValue(left);
    m_x->setRange(left, right);
    m_xLabelBudget = xLabelBudget();
    // The last batch label is centred on the plot's right edge: leave it room ("65536" was cut to "6553").
    const int halfLabel = QFontMetrics(m_x->labelsFont()).horizontalAdvance(QString::number(m_range)) / 2;
    // Only on a change: a new margin moves the plot area, whose signal calls this again.
    const QMargins margins(4, 4, std::max(4, halfLabel + 2), 4);
    if (m_chart->margins() != margins) m_chart->setMargins(margins);
    if (m_log) {
        const int octaves = static_cast<int>(std::lround(right));
        int every = 1;
        while (octaves / every + 1 > m_xLabelBudget && every < octaves) ++every;
        for (int k = 0; k <= octaves; k += every) m_x->append(QString::number(std::int64_t{1} << k), k);
        m_x->setTitleText(tr("batch size (log₂)"));
    } else {
        std::int64_t step = 1;
        while (m_range / step + 1 > std::min(m_xLabelBudget, 9)) step *= 2;
        for (std::int64_t v = 0; v <= m_range; v += step)
            m_x->append(QString::number(v), static_cast<double>(v));
        m_x->setTitleText(tr("batch size"));
    }

    m_capacity->replace(QList<QPointF>{{left, yOf(capGib)}, {right, yOf(capGib)}});
    const double usable = yOf(ByteFormat::toGib(m_usableBytes));
    m_usable->replace(QList<QPointF>{{left, usable}, {right, usable}});
    m_capacityLabel->setText(tr("capacity %1").arg(ByteFormat::bytes(m_capacityBytes)));
    m_usableLabel->setText(tr("usable %1").arg(ByteFormat::bytes(m_usableBytes)));
    m_capacityLabel->setVisible(m_capacityBytes > 0);
    m_usableLabel->setVisible(m_capacityBytes > 0);
    placeLineLabels();
    if (m_capped || m_maxBatch >= m_range || m_capacityBytes == 0) {
        m_oomUpper->clear();
        m_oomLower->clear();
    } else {
        const double from = xOf(m_maxBatch + 1);
        m_oomUpper->replace(QList<QPointF>{{from, yTop}, {right, yTop}});
        m_oomLower->replace(QList<QPointF>{{from, yBottom}, {right, yBottom}});
    }
}

int MemoryChart::xLabelBudget() const {
    const double width = m_chart->plotArea().width();
    if (width <= 1.0) return 13;
    // The widest label is the range's own number; leave a gap of two digits between labels.
    const QFontMetrics fm(m_x->labelsFont());
    const int label =
        fm.horizontalAdvance(QString::number(m_range)) + fm.horizontalAdvance(QStringLiteral("00"));
    return std::clamp(static_cast<int>(width / std::max(label, 1)), 2, 13);
}

void MemoryChart::placeLineLabels() {
    if (m_capacityBytes == 0) return;
    const QRectF plot = m_chart->plotArea();
    const QPointF cap =
        m_chart->mapToPosition(QPointF(xOf(m_range), yOf(ByteFormat::toGib(m_capacityBytes))), m_capacity);
    const QPointF use =
        m_chart->mapToPosition(QPointF(xOf(m_range), yOf(ByteFormat::toGib(m_usableBytes))), m_usable);
    const QRectF capBox = m_capacityLabel->boundingRect();
    const QRectF useBox = m_usableLabel->boundingRect();
    m_capacityLabel->setPos(plot.right() - capBox.width() - 4, cap.y() - capBox.height() - 1);
    m_usableLabel->setPos(plot.right() - useBox.width() - 4, std::max(use.y() + 1, cap.y() + 1));
}

void MemoryChart::setBatch(std::int64_t batch) {
    m_batch = batch;
    placeMarker();
}

void MemoryChart::placeMarker() {
    const QRectF plot = m_chart->plotArea();
    const QPointF p = m_chart->mapToPosition(QPointF(xOf(std::min(m_batch, m_range)), yOf(0.0)), m_capacity);
    m_marker->setLine(QLineF(m_chart->mapToScene(QPointF(p.x(), plot.top())),
                             m_chart->mapToScene(QPointF(p.x(), plot.bottom()))));
}

void MemoryChart::setLogScale(bool log) {
    if (log == m_log) return;
    m_log = log;
    rebuildSeries();
}

void MemoryChart::setStale(bool stale) {
    for (auto* a : m_areas) a->setOpacity(stale ? 0.35 : 1.0);
}

int MemoryChart::stackPointCount() const {
    return static_cast<int>(m_bounds.back()->count());
}

double MemoryChart::markerBatch() const {
    const QPointF v = m_chart->mapToValue(m_chart->mapFromScene(m_marker->line().p1()), m_capacity);
    return m_log ? std::exp2(v.x()) : v.x();
}

void MemoryChart::onHover(const QPointF& point, bool state) {
    m_hoverTip = state && !m_points.empty();
    if (!m_hoverTip) {
        QToolTip::hideText();
        return;
    }
    const std::int64_t b = batchAt(point.x());
    auto it = std::lower_bound(m_points.begin(), m_points.end(), b,
                               [](const SweepPoint& p, std::int64_t v) { return p.batch < v; });
    if (it == m_points.end()) --it;
    if (it != m_points.begin() && std::abs(std::prev(it)->batch - b) < std::abs(it->batch - b)) --it;
    QString html = tr("<b>batch %1</b>").arg(it->batch);
    html += QStringLiteral("<table>");
    for (int c = kComponentCount - 1; c >= 0; --c)
        html += QStringLiteral(
                    "<tr><td><span style='color:%1'>■</span> %2</td><td align=right>&nbsp;%3</td></tr>")
                    .arg(ComponentStyle::color(c).name(), ComponentStyle::name(c),
                         ByteFormat::bytes(it->atPeak.bytes[c]));
    html += QStringLiteral("<tr><td><b>%1</b></td><td align=right>&nbsp;<b>%2</b></td></tr></table>")
                .arg(it->fit && it->fit->fits && it->fit->cacheReleased
                         ? tr("needs here (fits with cache flushes)")
                         : tr("needs (with overhead)"),
                     ByteFormat::bytes(it->gpuRequiredBytes()));
    QToolTip::showText(QCursor::pos(), html, this);
}

void MemoryChart::pickAt(const QPoint& pos) {
    const QPointF scenePos = mapToScene(pos);
    const QPointF chartPos = m_chart->mapFromScene(scenePos);
    if (!m_chart->plotArea().contains(chartPos)) return;
    emit batchPicked(batchAt(m_chart->mapToValue(chartPos, m_capacity).x()));
}

void MemoryChart::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) pickAt(event->position().toPoint());
    QChartView::mousePressEvent(event);
}

void MemoryChart::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) pickAt(event->position().toPoint());
    QChartView::mouseMoveEvent(event);
}

} // namespace batchfit
