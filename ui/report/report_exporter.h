#pragma once
// Report export, one call: computes with the core, renders, and writes atomically. Format by extension.
#include "batchfit/result.h"
#include "report/report_data.h"
#include "report/report_format.h"
#include "report/report_request.h"

#include <QByteArray>
#include <QImage>
#include <QSize>
#include <QString>

namespace batchfit {

/// Writes the report for `request` to `path` (.pdf, .png, .json, .md or .csv). PDF and PNG need a
/// QGuiApplication (see ensureGuiApplication). On failure nothing is written (an existing file stays as it
/// was) and the message names the path and the reason.
Status exportReport(const ReportRequest& request, const QString& path);
/// Same, from data already computed (lets a caller tell estimation errors from write errors).
Status writeReport(const ReportData& data, const QString& path);
/// The report's bytes in `format`, without touching the disk.
Result<QByteArray> renderReport(const ReportData& data, ReportFormat format);
/// The report's chart (capacity line, batch marker, legend), e.g. for "Copy chart to clipboard". With
/// `titled`, two lines above it say what it is: the set-up line and the verdict, as the report prints them.
QImage renderReportChart(const ReportData& data, QSize pixels, int dpi = 96, bool titled = false);

} // namespace batchfit
