#include "report/report_text.h"

#include "report/report_language.h"

#include <QTranslator>

namespace batchfit {
namespace {

QString stripZeros(QString s, const QLocale& locale) {
    const QString point = locale.decimalPoint();
    if (!s.contains(point)) return s;
    while (s.endsWith(QLatin1Char('0'))) s.chop(1);
    if (s.endsWith(point)) s.chop(point.size());
    return s;
}

} // namespace

QString ReportText::tr(const char* source, const char* disambiguation, int n) {
    QString out;
    if (const QTranslator* t = ReportLanguage::currentTranslator())
        out = t->translate("batchfit::ReportText", source, disambiguation, n);
    if (out.isEmpty()) out = QString::fromUtf8(source);
    if (n >= 0) out.replace(QLatin1String("%n"), ReportLanguage::currentLocale().toString(n));
    return out;
}

QString ReportText::bytes(std::uint64_t b) {
    if (b < 1024) return QStringLiteral("%1 B").arg(b);
    static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB"};
    // Display only: the value in the largest unit that keeps it >= 1, to three significant digits; GiB is the
    // largest, so a table never mixes GiB and TiB (issue 30).
    double v = static_cast<double>(b);
    int unit = 0;
    while (v >= 1024.0 && unit < 3) {
        v /= 1024.0;
        ++unit;
    }
    const int decimals = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
    const QLocale locale = ReportLanguage::currentLocale();
    return stripZeros(locale.toString(v, 'f', decimals), locale) + QLatin1Char(' ') +
           QLatin1String(kUnits[unit]);
}

QString ReportText::exactBytes(std::uint64_t b) {
    return ReportLanguage::currentLocale().toString(static_cast<qulonglong>(b));
}

QString ReportText::number(std::int64_t n) {
    return ReportLanguage::currentLocale().toString(static_cast<qlonglong>(n));
}

QString ReportText::percentOf(std::uint64_t part, std::uint64_t whole) {
    if (whole == 0) return QStringLiteral("—");
    const double pct = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
    return ReportLanguage::currentLocale().toString(pct, 'f', 1) + QLatin1Char('%');
}

QString ReportText::fraction(double f) {
    const QLocale locale = ReportLanguage::currentLocale();
    return stripZeros(locale.toString(100.0 * f, 'f', 2), locale) + QLatin1Char('%');
}

QString ReportText::date(const QDateTime& t) {
    return t.toString(QStringLiteral("yyyy-MM-dd HH:mm"));
}

QString ReportText::componentLabel(Component c) {
    switch (c) {
    case Component::Parameters:
        return tr("Parameters");
    case Component::Gradients:
        return tr("Gradients");
    case Component::OptimizerStates:
        return tr("Optimizer states");
    case Component::Activations:
        return tr("Activations");
    case Component::Temporaries:
        return tr("Temporaries");
    }
    return {};
}

QString ReportText::phaseLabel(Phase p) {
    switch (p) {
    case Phase::Setup:
        return tr("Setup");
    case Phase::Forward:
        return tr("Forward");
    case Phase::Backward:
        return tr("Backward");
    case Phase::OptimizerStep:
        return tr("Optimizer step");
    }
    return {};
}

QString ReportText::overheadLabel() {
    return tr("Allocator reserve + CUDA context");
}

} // namespace batchfit
