#pragma once
// Shared helpers of the report tests: the lazy QGuiApplication, requests for presets, poppler-utils.
#include "report/report_request.h"

#include <QString>
#include <QStringList>
#include <string>

namespace batchfit::test {

/// Creates the QGuiApplication on first use (offscreen), as the CLI does.
void ensureApp();
/// A request for a preset on a GPU (catalogue id, or "24GiB"), with a fixed date.
ReportRequest presetRequest(const std::string& preset, std::int64_t batch,
                            const std::string& gpu = "rtx-4090");
/// Runs a program; returns its stdout, sets `rc` (-1 if it did not start).
QString runProgram(const QString& program, const QStringList& args, int* rc = nullptr);
/// pdftotext of pages [first, last] (0: from the start / to the end), layout preserved.
QString pdfText(const QString& path, int first = 0, int last = 0);
int pdfPages(const QString& path);
/// The entries of a directory (names), for "nothing was written" checks.
QStringList dirEntries(const QString& dir);

} // namespace batchfit::test
