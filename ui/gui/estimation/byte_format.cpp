#include "gui/estimation/byte_format.h"

#include <QLocale>

namespace batchfit {

namespace {
constexpr double kKiB = 1024.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
} // namespace

QString ByteFormat::bytes(std::uint64_t bytes) {
    const double b = static_cast<double>(bytes);
    if (b >= kGiB * kKiB) return tr("%1 TiB").arg(b / (kGiB * kKiB), 0, 'f', 2);
    if (b >= kGiB) return tr("%1 GiB").arg(b / kGiB, 0, 'f', 2);
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
    if (v.fits) {
        const double share =
            v.capacityBytes ? static_cast<double>(requiredBytes) / static_cast<double>(v.capacityBytes) : 0.0;
        return tr("fits: %1 of %2 GiB — %3%")
            .arg(gibNumber(requiredBytes), gibNumber(v.capacityBytes))
            .arg(static_cast<int>(share * 100.0 + 0.5));
    }
    const auto shortBy = static_cast<std::uint64_t>(-v.headroomBytes);
    if (toGib(shortBy) >= 0.1) return tr("out of memory by %1 GiB").arg(gibNumber(shortBy));
    return tr("out of memory by %1").arg(bytes(shortBy));
}

QString ByteFormat::count(std::uint64_t n) {
    return QLocale().toString(static_cast<qulonglong>(n));
}

QString ByteFormat::percent(double share) {
    return tr("%1%").arg(share * 100.0, 0, 'f', 1);
}

} // namespace batchfit
