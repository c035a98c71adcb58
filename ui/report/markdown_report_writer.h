#pragma once
// The report's text and tables as Markdown (GitHub-flavoured tables), for tickets and notebooks.
#include "report/report_data.h"

#include <QByteArray>

namespace batchfit {

class MarkdownReportWriter {
public:
    explicit MarkdownReportWriter(const ReportData& data) : m_data(data) {}
    /// UTF-8 Markdown in the current report language.
    QByteArray render() const;

private:
    const ReportData& m_data;
};

} // namespace batchfit
