#pragma once
// The live stacked chart: memory components over batch size, the GPU's capacity and usable lines, the
// out-of-memory region and a marker at the current batch.
#include "batchfit/measurement.h"
#include "gui/charts/component_style.h"
#include "gui/estimation/estimation_result.h"

#include <QChartView>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

class QAreaSeries;
class QCategoryAxis;
class QGraphicsLineItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace batchfit {

/// Stacked areas from the core's sweep (SweepPoint::atPeak); x linear or log2. One category axis serves both
/// scales (in log mode the x values are log2(batch) and the ticks are labelled 1, 2, 4, ...).
class MemoryChart : public QChartView {
    Q_OBJECT

public:
    explicit MemoryChart(QWidget* parent = nullptr);

    /// Shows a new sweep, capacity and solver result.
    void setResult(const EstimationResult& result);
    /// Moves the current-batch marker.
    void setBatch(std::int64_t batch);
    void setLogScale(bool log);
    bool logScale() const { return m_log; }
    /// Memory axis in powers of two (areas below its floor are drawn from the floor): a 7B model far past the
    /// capacity and the capacity line are both readable.
    void setLogMemoryScale(bool log);
    bool logMemoryScale() const { return m_logMemory; }
    /// The memory axis's range in GiB (whichever scale is on; in log mode the series hold log2 of GiB).
    std::pair<double, double> memoryRange() const;
    /// Greys the chart while the shown estimate is stale (the model or set-up is invalid).
    void setStale(bool stale);

    /// Reads a tools/torch_measure.py file and draws its points. On failure shows an error dialog, keeps the
    /// points shown before and returns false.
    bool loadMeasurements(const QString& path);
    void clearMeasurements();
    bool hasMeasurements() const { return m_measurement.has_value(); }
    /// True when the measured points sit in the bottom tenth of a linear memory axis (a small model on a
    /// large GPU): the log memory axis spreads them.
    bool measuredPointsCrowded() const;
    /// The largest measured batch (0 without measurements): the chart's range should reach it.
    std::int64_t measuredMaxBatch() const;
    /// The chart's x range is 1..batchRange().
    std::int64_t batchRange() const { return m_range; }
    /// The loaded points next to the current estimate (empty without a measurement or an estimate).
    const std::vector<MeasurementComparison>& measuredComparisons() const { return m_comparisons; }
    /// The "measured" series (one point per measured batch) and the estimates of the same figures.
    QScatterSeries* measuredSeries() const { return m_measured; }
    QScatterSeries* measuredEstimateSeries() const { return m_measuredEstimate; }
    QString lastMeasurementError() const { return m_measurementError; }
    /// Set when the loaded points look like another model's (measurementMismatch), else empty.
    QString measurementWarning() const { return m_measurementWarning; }
    /// The model's name, for the mismatch warning.
    void setModelName(const QString& name) { m_modelName = name; }

    /// For tests: points in each stacked area's upper line, and the batch under the marker.
    int stackPointCount() const;
    double markerBatch() const;
    QChart* memoryChart() const { return m_chart; }

signals:
    /// Measurements were loaded or cleared.
    void measurementsChanged();
    /// The user clicked or dragged in the plot: the batch under the mouse.
    void batchPicked(std::int64_t batch);

protected:
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;
    /// While a hover detail is shown, the chart's general tooltip does not replace it.
    bool event(QEvent* event) override;

private:
    double xOf(std::int64_t batch) const;
    std::int64_t batchAt(double x) const;
    void applyPalette();
    void rebuildSeries();
    void updateAxes();
    /// How many batch labels fit the plot's width side by side.
    int xLabelBudget() const;
    void placeLineLabels();
    void placeMarker();
    void onHover(const QPointF& point, bool state);
    void pickAt(const QPoint& pos);
    void rebuildMeasured();
    void onMeasuredHover(const QPointF& point, bool state);
    double measuredTopGib() const;
    /// The memory axis in use (m_y, or m_yLog in log mode).
    QAbstractAxis* memoryAxis() const;
    /// The y a value in GiB is drawn at: itself, or in log mode log2 of it (at least the axis floor).
    double yOf(double gib) const;

    QChart* m_chart = nullptr;
    std::array<QLineSeries*, ComponentStyle::kSlotCount + 1> m_bounds{}; ///< [0] is the zero line
    std::array<QAreaSeries*, ComponentStyle::kSlotCount> m_areas{};
    QLineSeries* m_capacity = nullptr;
    QLineSeries* m_usable = nullptr;
    QScatterSeries* m_measured = nullptr;
    QScatterSeries* m_measuredEstimate = nullptr;
    QLineSeries* m_oomUpper = nullptr;
    QLineSeries* m_oomLower = nullptr;
    QAreaSeries* m_oom = nullptr;
    QCategoryAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
    QCategoryAxis* m_yLog = nullptr;       ///< log mode: y values are log2(GiB), ticks labelled in GiB
    double m_yFloor = 1.0 / 64;            ///< log mode: the axis starts here (GiB)
    QGraphicsLineItem* m_marker = nullptr; ///< a scene item: moving it repaints only a thin strip
    QGraphicsSimpleTextItem* m_capacityLabel = nullptr;
    QGraphicsSimpleTextItem* m_usableLabel = nullptr;

    std::vector<SweepPoint> m_points;
    std::shared_ptr<const Estimator> m_estimator;
    std::optional<Measurement> m_measurement;
    QString m_measurementFile;
    QString m_measurementWarning;
    QString m_modelName;
    QString m_measurementError;
    std::vector<MeasurementComparison> m_comparisons;
    std::uint64_t m_capacityBytes = 0;
    std::uint64_t m_usableBytes = 0;
    std::int64_t m_maxBatch = 0;
    bool m_capped = false;
    std::int64_t m_range = 16;
    int m_xLabelBudget = 13;
    bool m_hoverTip = false; ///< a hover detail (an area's values, a measured point) is on screen
    std::int64_t m_batch = 1;
    bool m_log = false;
    bool m_logMemory = false;
    bool m_inUpdateAxes = false; ///< updateAxes() is running (its layout changes call it again)
};

} // namespace batchfit
