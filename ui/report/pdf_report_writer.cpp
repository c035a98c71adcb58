#include "report/pdf_report_writer.h"

#include "report/block_painter.h"
#include "report/component_palette.h"
#include "report/report_canvas.h"
#include "report/report_sections.h"
#include "report/report_text.h"
#include "report/sweep_chart_painter.h"
#include "report/table_painter.h"
#include "report/timeline_painter.h"

#include <QPdfWriter>
#include <algorithm>

namespace batchfit {
namespace {

constexpr double kMarginX = 48;
constexpr double kMarginTop = 44;
constexpr double kMarginBottom = 58; // the footer sits in it
constexpr double kGap = 12;
constexpr double kTimelineHeight = 250;

} // namespace

struct PdfReportWriter::Layout {
    int firstRows = 0;   // layer rows on page 2, under the timeline
    int rowsPerPage = 1; // layer rows on each continuation page
    int pages = 3;
};

QRectF PdfReportWriter::content() const {
    const QRectF page(QPointF(0, 0), m_data.request.pageSize.sizePoints());
    return page.adjusted(kMarginX, kMarginTop, -kMarginX, -kMarginBottom);
}

PdfReportWriter::Layout PdfReportWriter::plan(const BlockPainter& blocks, const TablePainter& layers) const {
    Layout l;
    const double height = content().height() - blocks.headingHeight();
    const double timeline =
        m_data.estimate.timeline.empty() ? 0 : blocks.headingHeight() + kTimelineHeight + kGap;
    l.firstRows = layers.rowsFitting(height - timeline);
    l.rowsPerPage = std::max(1, layers.rowsFitting(height));
    const int rest = std::max(0, static_cast<int>(m_data.topLayers.size()) - l.firstRows);
    l.pages = 2 + (rest + l.rowsPerPage - 1) / l.rowsPerPage + 1;
    return l;
}

Status PdfReportWriter::write(QIODevice& device) const {
    ReportSections sections(m_data);
    QPdfWriter writer(&device);
    writer.setPageLayout(QPageLayout(m_data.request.pageSize, QPageLayout::Portrait, QMarginsF(0, 0, 0, 0),
                                     QPageLayout::Point));
    writer.setResolution(1200);
    writer.setTitle(sections.reportTitle() + QStringLiteral(": ") + sections.modelName());
    writer.setCreator(QStringLiteral("BatchFit " BATCHFIT_VERSION));
    QPainter painter;
    if (!painter.begin(&writer)) return makeError("the PDF renderer could not start");
    ReportCanvas canvas(painter, writer.resolution() / 72.0);
    BlockPainter blocks(canvas, sections);
    const ReportTable table = sections.layerTable();
    TablePainter layers(canvas, table);
    const Layout layout = plan(blocks, layers);
    const QRectF c = content();

    int page = 1;
    paintFirstPage(canvas, blocks, sections);
    paintFooter(canvas, sections, page, layout.pages);

    writer.newPage();
    ++page;
    double y = c.top() + paintTimeline(canvas, blocks, sections);
    y += blocks.heading(sections.layerTableTitle(), c.left(), y, c.width());
    int row = std::min<int>(layout.firstRows, static_cast<int>(table.rows.size()));
    layers.paint(QRectF(c.left(), y, c.width(), c.bottom() - y), 0, row);
    paintFooter(canvas, sections, page, layout.pages);
    while (row < static_cast<int>(table.rows.size())) {
        writer.newPage();
        ++page;
        y = c.top() + blocks.heading(sections.layerTableTitle() + ReportText::tr(" (continued)"), c.left(),
                                     c.top(), c.width());
        const int count = std::min<int>(layout.rowsPerPage, static_cast<int>(table.rows.size()) - row);
        layers.paint(QRectF(c.left(), y, c.width(), c.bottom() - y), row, count);
        row += count;
        paintFooter(canvas, sections, page, layout.pages);
    }

    writer.newPage();
    ++page;
    paintLastPage(blocks, sections);
    paintFooter(canvas, sections, page, layout.pages);
    if (!painter.end()) return makeError("the PDF renderer failed");
    return Ok{};
}

void PdfReportWriter::paintFirstPage(ReportCanvas& canvas, BlockPainter& blocks,
                                     const ReportSections& sections) const {
    const QRectF c = content();
    const QFont kicker = canvas.font(9, true);
    const QFont title = canvas.font(20, true);
    const QFont body = canvas.font(9);
    const QString description =
        blocks.clampLines(QString::fromStdString(m_data.request.model.description), c.width(), 9, 3);
    const ReportTable components = sections.componentTable();
    TablePainter table(canvas, components, 8.5);

    // Heights first: the chart takes what the other blocks leave.
    const double header =
        canvas.lineHeight(kicker) + canvas.lineHeight(title) + 2 +
        (description.isEmpty() ? 0 : blocks.paragraphHeight(description, c.width(), 9) + 2) +
        canvas.lineHeight(body);
    const double fixed = header + kGap + blocks.setupGridHeight(c.width()) + kGap +
                         blocks.verdictHeight(c.width()) + kGap + blocks.headingHeight() + kGap +
                         blocks.headingHeight() +
                         blocks.paragraphHeight(sections.peakLine(), c.width(), 8.5) + 4 +
                         table.height(static_cast<int>(components.rows.size()));
    const double chartHeight = std::clamp(c.height() - fixed, 120.0, 330.0); // never pushes the table off

    double y = c.top();
    canvas.drawText(QRectF(c.left(), y, c.width(), canvas.lineHeight(kicker)),
                    Qt::AlignLeft | Qt::AlignVCenter, sections.reportTitle().toUpper(), kicker,
                    ComponentPalette::capacity());
    y += canvas.lineHeight(kicker);
    canvas.drawText(QRectF(c.left(), y, c.width(), canvas.lineHeight(title)),
                    Qt::AlignLeft | Qt::AlignVCenter, canvas.elided(sections.modelName(), title, c.width()),
                    title, ComponentPalette::text());
    y += canvas.lineHeight(title) + 2;
    if (!description.isEmpty())
        y += blocks.paragraph(description, QRectF(c.left(), y, c.width(), 0), 9, false,
                              ComponentPalette::mutedText()) +
             2;
    canvas.drawText(QRectF(c.left(), y, c.width(), canvas.lineHeight(body)), Qt::AlignLeft | Qt::AlignVCenter,
                    canvas.elided(sections.modelSummary(), body, c.width()), body, ComponentPalette::text());
    y += canvas.lineHeight(body) + kGap;

    blocks.setupGrid(QRectF(c.left(), y, c.width(), blocks.setupGridHeight(c.width())));
    y += blocks.setupGridHeight(c.width()) + kGap;
    blocks.verdict(QRectF(c.left(), y, c.width(), blocks.verdictHeight(c.width())));
    y += blocks.verdictHeight(c.width()) + kGap;

    y += blocks.heading(sections.chartTitle(), c.left(), y, c.width());
    SweepChartPainter(m_data).paint(canvas, QRectF(c.left(), y, c.width(), chartHeight));
    y += chartHeight + kGap;

    y += blocks.heading(sections.componentTableTitle(), c.left(), y, c.width());
    y += blocks.paragraph(sections.peakLine(), QRectF(c.left(), y, c.width(), 0), 8.5, false,
                          ComponentPalette::mutedText()) +
         4;
    table.paint(QRectF(c.left(), y, c.width(), c.bottom() - y), 0, static_cast<int>(components.rows.size()));
}

double PdfReportWriter::paintTimeline(ReportCanvas& canvas, BlockPainter& blocks,
                                      const ReportSections& sections) const {
    if (m_data.estimate.timeline.empty()) return 0;
    const QRectF c = content();
    const double h = blocks.heading(sections.timelineTitle(), c.left(), c.top(), c.width());
    TimelinePainter(m_data).paint(canvas, QRectF(c.left(), c.top() + h, c.width(), kTimelineHeight));
    return h + kTimelineHeight + kGap;
}

void PdfReportWriter::paintLastPage(BlockPainter& blocks, const ReportSections& sections) const {
    const QRectF c = content();
    double y = c.top();
    auto list = [&](const QString& title, const QStringList& items) {
        y += blocks.heading(title, c.left(), y, c.width());
        for (const QString& item : items)
            y += blocks.paragraph(item, QRectF(c.left(), y, c.width(), 0), 9, true) + 4;
        y += kGap;
    };
    list(sections.assumptionsTitle(), sections.assumptions());
    list(sections.glossaryTitle(), sections.glossary());
    blocks.paragraph(sections.generatedLine(), QRectF(c.left(), y, c.width(), 0), 9, false,
                     ComponentPalette::mutedText());
}

void PdfReportWriter::paintFooter(ReportCanvas& canvas, const ReportSections& sections, int page,
                                  int pages) const {
    const QRectF c = content();
    const QFont f = canvas.font(7.5);
    const double y = c.bottom() + 22;
    QPainter& p = canvas.painter();
    p.save();
    p.setPen(QPen(ComponentPalette::grid(), 0.6));
    p.drawLine(QPointF(c.left(), y - 4), QPointF(c.right(), y - 4));
    p.restore();
    const QString pageText = sections.pageLabel(page, pages);
    const double pageWidth = canvas.textWidth(pageText, f) + 4;
    const QString left = sections.modelName() + QStringLiteral(" · ") + sections.generatedLine();
    canvas.drawText(QRectF(c.left(), y, c.width() - pageWidth - 8, canvas.lineHeight(f)),
                    Qt::AlignLeft | Qt::AlignVCenter, canvas.elided(left, f, c.width() - pageWidth - 8), f,
                    ComponentPalette::mutedText());
    canvas.drawText(QRectF(c.right() - pageWidth, y, pageWidth, canvas.lineHeight(f)),
                    Qt::AlignRight | Qt::AlignVCenter, pageText, f, ComponentPalette::mutedText());
}

} // namespace batchfit
