#include "report/csv_report_writer.h"

#include <QString>

namespace batchfit {
namespace {

QString field(const QString& s) {
    if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n')))
        return s;
    QString q = s;
    q.replace(QLatin1Char('"'), QLatin1String("\"\""));
    return QLatin1Char('"') + q + QLatin1Char('"');
}

QString number(double v) {
    return QString::number(v, 'f', 4);
}

} // namespace

QByteArray CsvReportWriter::render() const {
    const Estimate& e = m_data.estimate;
    const std::uint64_t cap = m_data.verdict.capacityBytes;
    const QString batch = QString::number(m_data.request.batch);
    QString out =
        QStringLiteral("table,name,op,batch,bytes,output_bytes,percent_of_capacity,share_of_peak\r\n");
    auto row = [&](const char* table, const QString& name, const QString& op, const QString& b,
                   std::uint64_t bytes, const QString& output, const QString& share) {
        const QString pct =
            cap ? number(100.0 * static_cast<double>(bytes) / static_cast<double>(cap)) : QString();
        out += QStringList{QLatin1String(table),   field(name), field(op), b,
                           QString::number(bytes), output,      pct,       share}
                   .join(QLatin1Char(',')) +
               QStringLiteral("\r\n");
    };
    for (Component c : {Component::Parameters, Component::Gradients, Component::OptimizerStates,
                        Component::Activations, Component::Temporaries})
        row("at_peak", QString::fromStdString(componentName(c)), {}, batch, e.atPeak[c], {}, {});
    row("overhead", QStringLiteral("allocator_reserve"), {}, batch,
        m_data.verdict.fits && m_data.verdict.cacheReleased ? m_data.verdict.reserveBytes
                                                            : e.allocatorReserveBytes,
        {}, {});
    row("overhead", QStringLiteral("cuda_context"), {}, batch, e.cudaContextBytes, {}, {});
    row("total", QStringLiteral("peak_allocated"), {}, batch, e.peakAllocatedBytes, {}, {});
    // What this GPU shows (the verdict's figure); with cache flushes, also what a GPU large enough would.
    row("total", QStringLiteral("required"), {}, batch, m_data.verdict.requiredBytes, {}, {});
    if (m_data.verdict.fits && m_data.verdict.cacheReleased)
        row("total", QStringLiteral("required_on_a_large_gpu"), {}, batch, e.requiredBytes, {}, {});
    row("total", QStringLiteral("usable"), {}, {}, m_data.verdict.usableBytes, {}, {});
    row("total", QStringLiteral("capacity"), {}, {}, cap, {}, {});
    if (m_data.maxBatch.largest > 0)
        row("total", QStringLiteral("required_at_largest_batch"), {},
            QString::number(m_data.maxBatch.largest), m_data.maxBatch.requiredAtLargest, {}, {});
    for (const auto& l : m_data.topLayers)
        row("layer", QString::fromStdString(l.path), QString::fromStdString(l.op), batch, l.savedBytes,
            QString::number(l.outputBytes), number(l.shareOfPeak));
    for (const auto& m : m_data.request.measured) {
        row("measured", m.label, {}, QString::number(m.batch), m.bytes, {}, {});
        if (m.estimatedBytes > 0) // the estimate of the same figure at that batch
            row("estimated_for_measured", m.label, {}, QString::number(m.batch), m.estimatedBytes, {}, {});
    }
    return out.toUtf8();
}

} // namespace batchfit
