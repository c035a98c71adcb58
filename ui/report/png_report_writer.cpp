#include "report/png_report_writer.h"

#include "report/block_painter.h"
#include "report/component_palette.h"
#include "report/report_canvas.h"
#include "report/report_sections.h"
#include "report/sweep_chart_painter.h"
#include "report/table_painter.h"

#include <algorithm>
#include <cmath>

namespace batchfit {
namespace {

constexpr double kMargin = 18;
constexpr double kGap = 12;
constexpr double kMinChart = 140;
constexpr double kSideBySideWidth = 720; // points: narrower images stack the chart over the table

} // namespace

struct PngReportWriter::Layout {
    double width = 0; // content width, points
    double header = 0;
    double verdict = 0;
    bool sideBySide = true;
    double chartWidth = 0;
    double chartHeight = 0;
    double table = 0; // title + peak line + table
    double footer = 0;
    double total = 0; // image height, points
};

PngReportWriter::Layout PngReportWriter::measure(ReportCanvas& canvas, const BlockPainter& blocks,
                                                 const ReportSections& sections, double width,
                                                 double height) const {
    Layout l;
    l.width = width - 2 * kMargin;
    l.header = canvas.lineHeight(canvas.font(15, true)) + canvas.lineHeight(canvas.font(8.5)) + 2;
    l.verdict = blocks.verdictHeight(l.width);
    l.sideBySide = width >= kSideBySideWidth;
    const double tableWidth = l.sideBySide ? l.width * 0.45 : l.width;
    l.chartWidth = l.sideBySide ? l.width - tableWidth - kGap : l.width;
    const ReportTable components = sections.componentTable();
    const TablePainter table(canvas, components, 8);
    l.table = blocks.headingHeight(10) + blocks.paragraphHeight(sections.peakLine(), tableWidth, 8) + 4 +
              table.height(static_cast<int>(components.rows.size()));
    l.footer = canvas.lineHeight(canvas.font(7)) + 2;
    const double natural =
        l.sideBySide ? std::max(l.table - blocks.headingHeight(10), l.chartWidth * 0.6) : l.chartWidth * 0.6;
    const double fixed = 2 * kMargin + l.header + kGap + l.verdict + kGap + blocks.headingHeight(10) + kGap +
                         l.footer + (l.sideBySide ? 0 : l.table + kGap);
    l.chartHeight = height > 0 ? std::max(kMinChart, height - fixed) : natural;
    if (l.sideBySide) l.chartHeight = std::max(l.chartHeight, l.table - blocks.headingHeight(10));
    l.total = fixed + l.chartHeight;
    return l;
}

QImage PngReportWriter::render() const {
    const QSize size = m_data.request.pngSize;
    const int widthPx = std::max(200, size.width());
    double dpi = std::clamp(m_data.request.dpi, 36, 1200);
    ReportSections sections(m_data);
    // Measure at the dpi; when a fixed height cannot hold the content, lower the dpi (smaller text) and
    // retry.
    for (int attempt = 0; attempt < 8; ++attempt) {
        QImage probe(1, 1, QImage::Format_RGB32);
        probe.setDotsPerMeterX(static_cast<int>(std::lround(dpi / 0.0254)));
        probe.setDotsPerMeterY(static_cast<int>(std::lround(dpi / 0.0254)));
        QPainter p(&probe);
        ReportCanvas canvas(p, dpi / 72.0);
        BlockPainter blocks(canvas, sections);
        const double width = widthPx / canvas.pixelsPerPoint();
        const double height = size.height() > 0 ? size.height() / canvas.pixelsPerPoint() : 0;
        const Layout l = measure(canvas, blocks, sections, width, height);
        p.end();
        if (height > 0 && l.total > height + 0.5 && attempt < 7) {
            dpi *= std::max(0.5, height / l.total * 0.99);
            continue;
        }
        const int heightPx =
            size.height() > 0 ? size.height() : static_cast<int>(std::ceil(l.total * dpi / 72.0));
        QImage image(widthPx, heightPx, QImage::Format_RGB32);
        image.setDotsPerMeterX(probe.dotsPerMeterX());
        image.setDotsPerMeterY(probe.dotsPerMeterY());
        image.fill(Qt::white);
        QPainter painter(&image);
        ReportCanvas out(painter, dpi / 72.0);
        BlockPainter outBlocks(out, sections);
        paint(out, outBlocks, sections, l);
        painter.end();
        return image;
    }
    return {};
}

void PngReportWriter::paint(ReportCanvas& canvas, BlockPainter& blocks, const ReportSections& sections,
                            const Layout& l) const {
    const double x = kMargin;
    double y = kMargin;
    const QFont title = canvas.font(15, true);
    const QFont sub = canvas.font(8.5);
    canvas.drawText(QRectF(x, y, l.width, canvas.lineHeight(title)), Qt::AlignLeft | Qt::AlignVCenter,
                    canvas.elided(sections.modelName(), title, l.width), title, ComponentPalette::text());
    y += canvas.lineHeight(title) + 2;
    canvas.drawText(QRectF(x, y, l.width, canvas.lineHeight(sub)), Qt::AlignLeft | Qt::AlignVCenter,
                    canvas.elided(sections.setupLine(), sub, l.width), sub, ComponentPalette::mutedText());
    y = kMargin + l.header + kGap;
    blocks.verdict(QRectF(x, y, l.width, l.verdict));
    y += l.verdict + kGap;

    const double bodyTop = y;
    blocks.heading(sections.chartTitle(), x, y, l.chartWidth, 10);
    y += blocks.headingHeight(10);
    SweepChartPainter(m_data).paint(canvas, QRectF(x, y, l.chartWidth, l.chartHeight));

    const double tx = l.sideBySide ? x + l.chartWidth + kGap : x;
    const double tw = l.sideBySide ? l.width - l.chartWidth - kGap : l.width;
    double ty = l.sideBySide ? bodyTop : y + l.chartHeight + kGap;
    ty += blocks.heading(sections.componentTableTitle(), tx, ty, tw, 10);
    ty += blocks.paragraph(sections.peakLine(), QRectF(tx, ty, tw, 0), 8, false,
                           ComponentPalette::mutedText()) +
          4;
    const ReportTable components = sections.componentTable();
    TablePainter(canvas, components, 8)
        .paint(QRectF(tx, ty, tw, l.table), 0, static_cast<int>(components.rows.size()));

    const QFont small = canvas.font(7);
    const double fy = l.total - kMargin - l.footer + 4;
    canvas.drawText(QRectF(x, fy, l.width, canvas.lineHeight(small)), Qt::AlignRight | Qt::AlignVCenter,
                    sections.generatedLine(), small, ComponentPalette::mutedText());
}

} // namespace batchfit
