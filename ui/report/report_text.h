#pragma once
// The report's words and numbers in the current report language (see ReportLanguage).
#include "batchfit/estimate.h"

#include <QDateTime>
#include <QString>
#include <cstdint>

namespace batchfit {

class ReportText {
public:
    /// Translates from the context "batchfit::ReportText" with the current report language's translator.
    static QString tr(const char* source, const char* disambiguation = nullptr, int n = -1);

    /// "5.47 GiB", "512 MiB": three significant digits, IEC units.
    static QString bytes(std::uint64_t b);
    /// "5,498,889,732": the exact count with the locale's grouping.
    static QString exactBytes(std::uint64_t b);
    static QString number(std::int64_t n);
    /// part / whole as a percentage with one decimal ("27.3%"); "—" when whole is 0.
    static QString percentOf(std::uint64_t part, std::uint64_t whole);
    /// A fraction (0.05) as a percentage ("5%"), up to two decimals.
    static QString fraction(double f);
    static QString date(const QDateTime& t);

    static QString componentLabel(Component c);
    static QString phaseLabel(Phase p);
    static QString overheadLabel();
};

} // namespace batchfit
