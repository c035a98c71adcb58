#pragma once
// The report's tables as one CSV (RFC 4180, C locale, exact bytes): at_peak, overhead, total, layer and
// measured rows, for spreadsheets and scripts.
#include "report/report_data.h"

#include <QByteArray>

namespace batchfit {

class CsvReportWriter {
public:
    explicit CsvReportWriter(const ReportData& data) : m_data(data) {}
    /// Header: table,name,op,batch,bytes,output_bytes,percent_of_capacity,share_of_peak.
    QByteArray render() const;

private:
    const ReportData& m_data;
};

} // namespace batchfit
