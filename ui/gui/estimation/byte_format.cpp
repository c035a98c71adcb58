#include "gui/estimation/byte_format.h"

#include "batchfit/verdict_text.h"

#include <QLocale>

namespace batchfit {

namespace {
constexpr double kKiB = 1024.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
} // namespace

QString ByteFormat::bytes(std::uint64_t bytes) {
    const double b = static_cast<double>(bytes);
    // GiB is the largest unit: a breakdown, a budget and the verdict never mix GiB with TiB (issue 30), and
    // thousands are grouped as the locale writes them ("1,618.44 GiB").
    if (b >= kGiB) return tr("%1 GiB").arg(QLocale().toString(b / kGiB, 'f', 2));
    if (b >= kKiB * kKiB) return tr("%1 MiB").arg(b / (kKiB * kKiB), 0, 'f', 1);
    if (b >= kKiB) return tr("%1 KiB").arg(b / kKiB, 0, 'f', 1);
    return tr("%1 B").arg(bytes);
}

QString ByteFormat::gibNumber(std::uint64_t bytes, int decimals) {
    return QString::number(toGib(bytes), 'f', decimals);
}

double ByteFormat::toGib(std::uint64_t bytes) {
    return static_cast<double>(bytes) / kGiB;
}

QString ByteFormat::verdict(const Verdict& v, std::uint64_t requiredBytes) {
    // The same words and figures as the CLI and the report (batchfit::verdictHeadline), translatable.
    const VerdictFigures f = verdictFigures(v, requiredBytes);
    const auto gib = [](double x) { return QString::number(x, 'f', 2); };
    if (v.fits && v.cacheReleased)
        return tr("fits with cache flushes: %1 of %2 GiB usable (%3%)")
            .arg(gib(f.requiredGib), gib(f.usableGib))
            .arg(f.percentOfUsable);
    if (v.fits)
        return tr("fits: %1 of %2 GiB usable (%3%)")
            .arg(gib(f.requiredGib), gib(f.usableGib))
            .arg(f.percentOfUsable);
    return tr("out of memory by %1 GiB").arg(gib(f.shortGib)); // the budget bar below shows needs and usable
}

QString ByteFormat::count(std::uint64_t n) {
    return QLocale().toString(static_cast<qulonglong>(n));
}

QString ByteFormat::percent(double share) {
    return tr("%1%").arg(share * 100.0, 0, 'f', 1);
}

} // namespace batchfit
