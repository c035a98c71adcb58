#pragma once
// The PNG report: one image with the verdict, the stacked chart and the component table, for chat or a
// ticket.
#include "report/report_data.h"

#include <QImage>

namespace batchfit {

class BlockPainter;
class ReportCanvas;
class ReportSections;

class PngReportWriter {
public:
    explicit PngReportWriter(const ReportData& data) : m_data(data) {}
    /// The image at request.pngSize (height 0: as tall as needed) and request.dpi. When a fixed height is too
    /// small for the content at that dpi, text and chart are scaled down to fit.
    QImage render() const;

private:
    struct Layout;
    Layout measure(ReportCanvas& canvas, const BlockPainter& blocks, const ReportSections& sections,
                   double width, double height) const;
    void paint(ReportCanvas& canvas, BlockPainter& blocks, const ReportSections& sections,
               const Layout& l) const;

    const ReportData& m_data;
};

} // namespace batchfit
