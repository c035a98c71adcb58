#include "report/report_exporter.h"

#include "batchfit/json_report.h"
#include "report/component_palette.h"
#include "report/csv_report_writer.h"
#include "report/markdown_report_writer.h"
#include "report/pdf_report_writer.h"
#include "report/png_report_writer.h"
#include "report/report_canvas.h"
#include "report/report_language.h"
#include "report/report_sections.h"
#include "report/sweep_chart_painter.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QSaveFile>
#include <cmath>

namespace batchfit {
namespace {

Error writeError(const QString& path, const QString& reason) {
    return makeError(QStringLiteral("cannot write report to '%1': %2")
                         .arg(QDir::toNativeSeparators(path), reason)
                         .toStdString());
}

Error unknownFormat(const QString& path) {
    const QString suffix = QFileInfo(path).suffix();
    return writeError(path, QStringLiteral("unknown format '%1' (use %2)")
                                .arg(suffix.isEmpty() ? QStringLiteral("(none)") : QLatin1Char('.') + suffix,
                                     reportExtensionsText()));
}

bool haveGuiApplication() {
    return qobject_cast<QGuiApplication*>(QCoreApplication::instance()) != nullptr;
}

QByteArray jsonReport(const ReportData& d) {
    Estimate e = d.estimate;
    e.timeline.clear(); // as `batchfit-cli estimate --json` without --timeline
    const ReportInput in{.model = &d.request.model,
                         .config = &d.request.config,
                         .gpu = d.request.gpu,
                         .estimate = &e,
                         .verdict = d.verdict,
                         .maxBatch = d.maxBatch,
                         .topLayers = d.request.topLayers,
                         .measured = d.request.comparisons.empty() ? nullptr : &d.request.comparisons};
    return QByteArray::fromStdString(estimateJson(in));
}

} // namespace

Result<QByteArray> renderReport(const ReportData& data, ReportFormat format) {
    const ReportLanguage language(data.request.language);
    if (!language.ok()) return makeError(language.error().toStdString());
    if ((format == ReportFormat::Pdf || format == ReportFormat::Png) && !haveGuiApplication())
        return makeError("PDF and PNG reports need a QGuiApplication (call ensureGuiApplication() first)");
    switch (format) {
    case ReportFormat::Pdf: {
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        if (auto s = PdfReportWriter(data).write(buffer); !s) return s.error();
        return buffer.data();
    }
    case ReportFormat::Png: {
        const QImage image = PngReportWriter(data).render();
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        if (image.isNull() || !image.save(&buffer, "PNG"))
            return makeError("the PNG image could not be rendered");
        return buffer.data();
    }
    case ReportFormat::Json:
        return jsonReport(data);
    case ReportFormat::Markdown:
        return MarkdownReportWriter(data).render();
    case ReportFormat::Csv:
        return CsvReportWriter(data).render();
    }
    return makeError("unknown report format");
}

Status writeReport(const ReportData& data, const QString& path) {
    const auto format = reportFormatForPath(path);
    if (!format) return unknownFormat(path);
    auto bytes = renderReport(data, *format);
    if (!bytes) return writeError(path, QString::fromStdString(bytes.error().message));
    if (QFileInfo(path).isDir()) return writeError(path, QStringLiteral("it is a directory"));
    // Rendered in memory first; QSaveFile writes a temporary file next to the target and renames it on
    // commit, so a failure leaves no partial file and an existing report intact.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return writeError(path, file.errorString());
    if (file.write(*bytes) != bytes->size()) {
        const QString reason = file.errorString();
        file.cancelWriting();
        return writeError(path, reason);
    }
    if (!file.commit()) return writeError(path, file.errorString());
    return Ok{};
}

Status exportReport(const ReportRequest& request, const QString& path) {
    if (!reportFormatForPath(path)) return unknownFormat(path); // before the estimate: fail fast
    auto data = buildReportData(request);
    if (!data) return writeError(path, QString::fromStdString(data.error().message));
    return writeReport(*data, path);
}

QImage renderReportChart(const ReportData& data, QSize pixels, int dpi, bool titled) {
    const ReportLanguage language(data.request.language);
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    const int dpm = static_cast<int>(std::lround(std::max(36, dpi) / 0.0254));
    image.setDotsPerMeterX(dpm);
    image.setDotsPerMeterY(dpm);
    image.fill(Qt::white);
    QPainter painter(&image);
    ReportCanvas canvas(painter, std::max(36, dpi) / 72.0);
    const double margin = 8;
    const QSizeF points = QSizeF(pixels) / canvas.pixelsPerPoint();
    const double width = points.width() - 2 * margin;
    double top = margin;
    if (titled) { // a pasted chart says which model, set-up and verdict it shows
        const ReportSections sections(data);
        const QFont title = canvas.font(11, true);
        const QFont sub = canvas.font(8.5);
        canvas.drawText(QRectF(margin, top, width, canvas.lineHeight(title)),
                        Qt::AlignLeft | Qt::AlignVCenter, canvas.elided(sections.modelName(), title, width),
                        title, ComponentPalette::text());
        top += canvas.lineHeight(title) + 1;
        const QString setup = sections.setupLine() + QStringLiteral(" — ");
        const double setupWidth = std::min(canvas.textWidth(setup, sub), width / 2);
        canvas.drawText(QRectF(margin, top, setupWidth, canvas.lineHeight(sub)),
                        Qt::AlignLeft | Qt::AlignVCenter, canvas.elided(setup, sub, setupWidth), sub,
                        ComponentPalette::mutedText());
        canvas.drawText(QRectF(margin + setupWidth, top, width - setupWidth, canvas.lineHeight(sub)),
                        Qt::AlignLeft | Qt::AlignVCenter,
                        canvas.elided(sections.verdictHeadline(), sub, width - setupWidth), sub,
                        sections.fits() ? ComponentPalette::fits() : ComponentPalette::doesNotFit());
        top += canvas.lineHeight(sub) + 6;
    }
    SweepChartPainter(data).paint(canvas, QRectF(margin, top, width, points.height() - margin - top));
    return image;
}

} // namespace batchfit
