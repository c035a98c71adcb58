#include "report/report_format.h"

#include <QFileInfo>

namespace batchfit {

std::optional<ReportFormat> reportFormatForPath(const QString& path) {
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == QLatin1String("pdf")) return ReportFormat::Pdf;
    if (ext == QLatin1String("png")) return ReportFormat::Png;
    if (ext == QLatin1String("json")) return ReportFormat::Json;
    if (ext == QLatin1String("md") || ext == QLatin1String("markdown")) return ReportFormat::Markdown;
    if (ext == QLatin1String("csv")) return ReportFormat::Csv;
    return std::nullopt;
}

QString reportExtensionsText() {
    return QStringLiteral(".pdf, .png, .json, .md, .csv");
}

} // namespace batchfit
