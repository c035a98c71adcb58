// MemoryChart's measured points (File > Load Measurements…): split from memory_chart.cpp to keep files short.
#include "gui/charts/memory_chart.h"
#include "gui/estimation/byte_format.h"

#include <QCursor>
#include <QDir>
#include <QFileInfo>
#include <QLegend>
#include <QLegendMarker>
#include <QMessageBox>
#include <QScatterSeries>
#include <QToolTip>
#include <algorithm>
#include <cmath>

namespace batchfit {

bool MemoryChart::loadMeasurements(const QString& path) {
    auto loaded = loadMeasurementFile(QDir::toNativeSeparators(path).toStdString());
    if (!loaded) {
        m_measurementError = QString::fromStdString(loaded.error().message);
        QMessageBox::warning(
            this, tr("Cannot Load Measurements"),
            tr("%1\n\nThe measured points shown before, if any, are unchanged.").arg(m_measurementError));
        return false;
    }
    m_measurementError.clear();
    m_measurement = std::move(*loaded);
    m_measurementFile = QFileInfo(path).fileName();
    rebuildSeries();
    emit measurementsChanged();
    // Points of another model load without complaint otherwise (and read as a -99% error).
    m_measurementWarning.clear();
    if (auto why = measurementMismatch(*m_measurement, m_comparisons, m_modelName.toStdString())) {
        m_measurementWarning = tr("%1: %2").arg(m_measurementFile, QString::fromStdString(*why));
        QMessageBox::warning(this, tr("Measurements of Another Model?"), m_measurementWarning);
    }
    return true;
}

void MemoryChart::clearMeasurements() {
    if (!m_measurement) return;
    m_measurement.reset();
    m_measurementFile.clear();
    rebuildSeries();
    emit measurementsChanged();
}

void MemoryChart::rebuildMeasured() {
    m_comparisons.clear();
    if (m_measurement && m_estimator) {
        // The core pairs each measured batch with the estimate of the same figure.
        if (auto cmp = compareMeasurement(*m_estimator, *m_measurement)) m_comparisons = std::move(*cmp);
    }
    QList<QPointF> measured;
    QList<QPointF> estimated;
    if (m_measurement) {
        for (const MeasuredStep& m : m_measurement->points)
            measured.append({xOf(m.batch), yOf(ByteFormat::toGib(m.chartBytes()))});
    }
    for (const MeasurementComparison& c : m_comparisons)
        estimated.append({xOf(c.measured.batch), yOf(ByteFormat::toGib(c.estimatedBytes))});
    m_measured->replace(measured);
    m_measuredEstimate->replace(estimated);
    // The chart's own legend lists only the measured points (the components have the legend under the chart).
    m_chart->legend()->setVisible(m_measurement.has_value());
    for (QLegendMarker* marker : m_chart->legend()->markers())
        marker->setVisible(marker->series() == m_measured || marker->series() == m_measuredEstimate);
}

bool MemoryChart::measuredPointsCrowded() const {
    return m_measurement && !m_logMemory && measuredTopGib() < 0.1 * memoryRange().second;
}

std::int64_t MemoryChart::measuredMaxBatch() const {
    std::int64_t most = 0;
    if (m_measurement)
        for (const MeasuredStep& m : m_measurement->points) most = std::max(most, m.batch);
    return most;
}

double MemoryChart::measuredTopGib() const {
    std::uint64_t top = 0;
    if (m_measurement)
        for (const MeasuredStep& m : m_measurement->points)
            if (m.batch <= m_range) top = std::max(top, m.chartBytes());
    for (const MeasurementComparison& c : m_comparisons)
        if (c.measured.batch <= m_range) top = std::max(top, c.estimatedBytes);
    return ByteFormat::toGib(top);
}

void MemoryChart::onMeasuredHover(const QPointF& point, bool state) {
    m_hoverTip = state && m_measurement;
    if (!m_hoverTip) {
        QToolTip::hideText();
        return;
    }
    const std::int64_t b = batchAt(point.x());
    auto near = [b](std::int64_t batch) { return std::abs(batch - b); };
    const auto& pts = m_measurement->points;
    const auto it =
        std::min_element(pts.begin(), pts.end(), [&](const MeasuredStep& x, const MeasuredStep& y) {
            return near(x.batch) < near(y.batch);
        });
    if (it == pts.end()) return;
    const auto cmp =
        std::find_if(m_comparisons.begin(), m_comparisons.end(),
                     [&](const MeasurementComparison& c) { return c.measured.batch == it->batch; });
    QString html =
        tr("<b>batch %1</b> — measured (%2)").arg(it->batch).arg(m_measurementFile.toHtmlEscaped());
    html += QStringLiteral("<table>");
    auto row = [&html](const QString& label, const QString& value) {
        html += QStringLiteral("<tr><td>%1</td><td align=right>&nbsp;%2</td></tr>").arg(label, value);
    };
    row(tr("figure"), it->maxMemoryAllocated
                          ? tr("max_memory_allocated vs the estimated peak allocated")
                          : tr("parameters + gradients + optimizer states + saved activations"));
    row(tr("measured"), ByteFormat::bytes(it->chartBytes()));
    if (cmp != m_comparisons.end()) {
        row(tr("estimated"), ByteFormat::bytes(cmp->estimatedBytes));
        const double pct = 100.0 * cmp->error;
        row(tr("error"), (pct < 0 ? QStringLiteral("−") : QStringLiteral("+")) +
                             QLocale().toString(std::fabs(pct), 'f', 1) + QLatin1Char('%'));
    } else {
        row(tr("estimated"), tr("not available"));
    }
    html += QStringLiteral("</table>");
    QToolTip::showText(QCursor::pos(), html, this);
}

} // namespace batchfit
