#include "report/chart_axis.h"

#include "report/report_language.h"

#include <cmath>

namespace batchfit {
namespace {

double niceStep(double range, int count) {
    const double raw = range / std::max(1, count);
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (decade * m >= raw * 0.999) return decade * m;
    return decade * 10.0;
}

QString trimmed(double v, int decimals) {
    const QLocale locale = ReportLanguage::currentLocale();
    QString s = locale.toString(v, 'f', decimals);
    if (decimals > 0) {
        while (s.endsWith(QLatin1Char('0'))) s.chop(1);
        if (s.endsWith(locale.decimalPoint())) s.chop(locale.decimalPoint().size());
    }
    return s;
}

} // namespace

ChartAxis ChartAxis::numbers(double max, int count) {
    ChartAxis a;
    if (!(max > 0)) max = 1;
    const double step = std::max(1.0, niceStep(max, count));
    const int n = static_cast<int>(std::ceil(max / step - 1e-9));
    for (int i = 0; i <= n; ++i) {
        a.m_ticks.push_back(i * step);
        a.m_labels.push_back(trimmed(i * step, 0));
    }
    return a;
}

ChartAxis ChartAxis::bytes(double max, int count) {
    static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB"};
    ChartAxis a;
    if (!(max > 0)) max = 1;
    // Display only: the axis counts in the binary unit that keeps its range >= 1, GiB at most, as the tables do.
    int unit = 0;
    double scale = 1;
    while (max / scale >= 1024.0 && unit < 3) {
        scale *= 1024.0;
        ++unit;
    }
    const double step = niceStep(max / scale, count);
    const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
    const int n = static_cast<int>(std::ceil(max / scale / step - 1e-9));
    for (int i = 0; i <= n; ++i) {
        a.m_ticks.push_back(i * step * scale);
        a.m_labels.push_back(i == 0 ? QStringLiteral("0")
                                    : trimmed(i * step, decimals) + QLatin1Char(' ') +
                                          QLatin1String(kUnits[unit]));
    }
    return a;
}

} // namespace batchfit
