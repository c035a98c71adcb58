#pragma once
// The serving chart: GPU memory against concurrent sequences at one context length, stacked (outside PyTorch,
// weights, the profile's activation peak, CUDA graphs, the KV cache the sequences take) against the GPU's
// capacity and the end of the KV cache the engine sized: sequences fit while the stack stays under it.
#include "batchfit/serving.h"

#include <QChartView>

class QAreaSeries;
class QLineSeries;
class QValueAxis;

namespace batchfit {

/// Memory against concurrency for one serving estimate.
class ServingChart : public QChartView {
    Q_OBJECT

public:
    explicit ServingChart(QWidget* parent = nullptr);

    /// Draws `e` (the engine's start-up figures) for 1..`maxSequences` sequences of `context` tokens, with a
    /// marker at `current`.
    void show(const ServingModel& model, const ServingEstimate& e, std::int64_t context,
              std::int64_t maxSequences, std::int64_t current);
    /// The stack's names, bottom to top (the legend and the tests read them).
    QStringList layerNames() const;

private:
    QAreaSeries* addLayer(const QString& name, const QColor& color);

    QValueAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
    std::vector<QAreaSeries*> m_layers;
    QLineSeries* m_capacity = nullptr;
    QLineSeries* m_share = nullptr;
    QLineSeries* m_utilization = nullptr;
    QLineSeries* m_marker = nullptr;
};

} // namespace batchfit
