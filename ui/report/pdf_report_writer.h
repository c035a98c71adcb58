#pragma once
// The PDF report (vector, fonts embedded): page 1 verdict, chart and components; page 2 the step timeline and
// the layer table (continued on more pages as needed); last page the assumptions.
#include "batchfit/result.h"
#include "report/report_data.h"

#include <QRectF>

class QIODevice;

namespace batchfit {

class BlockPainter;
class ReportCanvas;
class ReportSections;
class TablePainter;

class PdfReportWriter {
public:
    explicit PdfReportWriter(const ReportData& data) : m_data(data) {}
    /// Writes the whole document to `device` (open for writing).
    Status write(QIODevice& device) const;

private:
    struct Layout;
    Layout plan(const BlockPainter& blocks, const TablePainter& layers) const;
    void paintFirstPage(ReportCanvas& canvas, BlockPainter& blocks, const ReportSections& sections) const;
    double paintTimeline(ReportCanvas& canvas, BlockPainter& blocks, const ReportSections& sections) const;
    void paintLastPage(BlockPainter& blocks, const ReportSections& sections) const;
    void paintFooter(ReportCanvas& canvas, const ReportSections& sections, int page, int pages) const;
    QRectF content() const;

    const ReportData& m_data;
};

} // namespace batchfit
