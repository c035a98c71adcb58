#include "gui/serving/serving_chart.h"

#include "gui/charts/component_style.h"

#include <QAreaSeries>
#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace batchfit {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int kPoints = 160; ///< samples along the x-axis
} // namespace

// The chart is handed to QChartView's constructor: a view made without one creates its own default chart, and
// setChart() then releases that one without deleting it (a leak LeakSanitizer reports).
ServingChart::ServingChart(QWidget* parent) : QChartView(new QChart, parent) {
    QChart* chart = this->chart();
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(220);
    m_x = new QValueAxis(chart);
    m_x->setTitleText(tr("concurrent sequences"));
    m_x->setLabelFormat(QStringLiteral("%d"));
    m_y = new QValueAxis(chart);
    m_y->setTitleText(tr("GPU memory (GiB)"));
    chart->addAxis(m_x, Qt::AlignBottom);
    chart->addAxis(m_y, Qt::AlignLeft);
    addLayer(tr("Outside PyTorch"), ComponentStyle::color(ComponentStyle::kOverheadSlot));
    addLayer(tr("Weights"), ComponentStyle::color(Component::Parameters));
    addLayer(tr("Activation peak"), ComponentStyle::color(Component::Activations).lighter(130));
    addLayer(tr("CUDA graphs"), ComponentStyle::color(Component::Temporaries));
    addLayer(tr("KV cache used"), ComponentStyle::color(Component::OptimizerStates));
    auto line = [&](const QString& name, const QColor& color, Qt::PenStyle style) {
        auto* s = new QLineSeries(chart);
        s->setName(name);
        QPen pen(color, 2, style);
        s->setPen(pen);
        chart->addSeries(s);
        s->attachAxis(m_x);
        s->attachAxis(m_y);
        return s;
    };
    m_capacity = line(tr("capacity"), ComponentStyle::capacityColor(), Qt::SolidLine);
    m_share = line(tr("KV cache ends"), palette().color(QPalette::WindowText), Qt::DashLine);
    m_utilization = line(tr("utilization × capacity"), ComponentStyle::capacityColor(), Qt::DotLine);
    m_marker = line(tr("chosen"), palette().color(QPalette::WindowText), Qt::SolidLine);
    for (QLegendMarker* marker : chart->legend()->markers(m_marker)) marker->setVisible(false);
}

QAreaSeries* ServingChart::addLayer(const QString& name, const QColor& color) {
    auto* upper = new QLineSeries(chart());
    auto* lower = new QLineSeries(chart());
    auto* area = new QAreaSeries(upper, lower);
    area->setName(name);
    area->setColor(color);
    area->setBorderColor(color.darker(115));
    chart()->addSeries(area);
    area->attachAxis(m_x);
    area->attachAxis(m_y);
    m_layers.push_back(area);
    return area;
}

QStringList ServingChart::layerNames() const {
    QStringList names;
    for (const QAreaSeries* a : m_layers) names << a->name();
    return names;
}

void ServingChart::show(const ServingModel& model, const ServingEstimate& e, std::int64_t context,
                        std::int64_t maxSequences, std::int64_t current) {
    maxSequences = std::max<std::int64_t>(maxSequences, 2);
    const double fixed[] = {
        static_cast<double>(e.contextBytes + e.nonTorchBytes), static_cast<double>(e.weightBytes),
        static_cast<double>(e.activationBytes + e.marginBytes), static_cast<double>(e.cudaGraphBytes)};
    double top = static_cast<double>(e.totalBytes);
    std::vector<QList<QPointF>> bounds(m_layers.size() + 1);
    for (int i = 0; i <= kPoints; ++i) {
        const double x = 1 + (static_cast<double>(maxSequences) - 1) * i / kPoints;
        const auto n = static_cast<std::int64_t>(std::llround(x));
        double y = 0;
        bounds[0].append({x, 0});
        for (std::size_t k = 0; k < m_layers.size(); ++k) {
            y += k < 4 ? fixed[k] : static_cast<double>(servingCacheBytes(model, e, n, context));
            bounds[k + 1].append({x, y / kGiB});
        }
        top = std::max(top, y);
    }
    for (std::size_t k = 0; k < m_layers.size(); ++k) {
        m_layers[k]->lowerSeries()->replace(bounds[k]);
        m_layers[k]->upperSeries()->replace(bounds[k + 1]);
    }
    const double cap = static_cast<double>(e.totalBytes) / kGiB;
    const double share = static_cast<double>(servingKvEndBytes(e)) / kGiB;
    const double last = static_cast<double>(maxSequences);
    m_capacity->replace({{1, cap}, {last, cap}});
    m_share->replace({{1, share}, {last, share}});
    // vLLM's gpu_memory_utilization (SGLang's mem_fraction_static) of the capacity; generate() has none.
    const bool engine = e.config.engine != ServingEngine::Hf && e.config.engine != ServingEngine::HfStatic;
    const double util = static_cast<double>(e.requestedBytes) / kGiB;
    m_utilization->replace(engine ? QList<QPointF>{{1, util}, {last, util}} : QList<QPointF>{});
    const double y = top / kGiB * 1.08;
    m_marker->replace({{static_cast<double>(current), 0}, {static_cast<double>(current), y}});
    m_x->setRange(1, last);
    m_y->setRange(0, y);
}

} // namespace batchfit
