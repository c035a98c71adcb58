#pragma once
// A chart axis from 0 with round ticks (1-2-5 steps), for batch sizes or bytes.
#include <QString>
#include <cstdint>
#include <vector>

namespace batchfit {

class ChartAxis {
public:
    /// Ticks 0, step, ... up to at least `max`, with about `count` intervals; labels as plain numbers.
    static ChartAxis numbers(double max, int count);
    /// Same in one binary unit (MiB, GiB, ...): "0", "5 GiB", "10 GiB".
    static ChartAxis bytes(double max, int count);

    double max() const { return m_ticks.empty() ? 1.0 : m_ticks.back(); }
    const std::vector<double>& ticks() const { return m_ticks; }
    const std::vector<QString>& labels() const { return m_labels; }
    /// 0..1 position of a value along the axis.
    double fraction(double v) const { return v / max(); }

private:
    std::vector<double> m_ticks;
    std::vector<QString> m_labels;
};

} // namespace batchfit
