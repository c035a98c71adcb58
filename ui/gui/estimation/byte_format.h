#pragma once
// Formatting of core figures (bytes, batch sizes, verdicts) for display. Only formatting: no estimation.
#include "batchfit/estimate.h"

#include <QCoreApplication>
#include <QString>
#include <cstdint>

namespace batchfit {

/// Turns byte counts and verdicts from the core into short, translated text.
class ByteFormat {
    Q_DECLARE_TR_FUNCTIONS(batchfit::ByteFormat)

public:
    /// "5.47 GiB", "196.0 MiB", "512 B": the largest binary unit that keeps the number >= 1.
    static QString bytes(std::uint64_t bytes);
    /// "17.9" — bytes in GiB with one decimal (for "17.9 of 24.0 GiB").
    static QString gibNumber(std::uint64_t bytes, int decimals = 1);
    /// Bytes in GiB as a double, for chart axes.
    static double toGib(std::uint64_t bytes);
    /// "fits: 17.9 of 24.0 GiB — 74%" or "out of memory by 2.1 GiB".
    static QString verdict(const Verdict& v, std::uint64_t requiredBytes);
    /// "1,234" in the current locale.
    static QString count(std::uint64_t n);
    /// A share in 0..1 as "12.3%".
    static QString percent(double share);
};

} // namespace batchfit
