#pragma once
// The report formats, chosen by the output file's extension.
#include <QString>
#include <optional>

namespace batchfit {

enum class ReportFormat { Pdf, Png, Json, Markdown, Csv };

/// The format for a path's extension (case-insensitive: .pdf, .png, .json, .md, .csv), if known.
std::optional<ReportFormat> reportFormatForPath(const QString& path);
/// ".pdf, .png, .json, .md, .csv": for messages and file dialogs.
QString reportExtensionsText();

} // namespace batchfit
