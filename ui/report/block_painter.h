#pragma once
// Paints the report's text blocks (headings, paragraphs, the set-up grid, the verdict box) and measures them
// first, so that page layout can decide before drawing.
#include "report/report_canvas.h"
#include "report/report_sections.h"

#include <vector>

namespace batchfit {

class BlockPainter {
public:
    BlockPainter(ReportCanvas& canvas, const ReportSections& sections)
        : m_canvas(canvas), m_sections(sections) {}

    /// A section heading; returns its height.
    double heading(const QString& text, double x, double y, double width, double points = 11);
    double headingHeight(double points = 11) const;
    /// A word-wrapped paragraph, optionally bulleted; returns its height.
    double paragraph(const QString& text, const QRectF& at, double points = 8.5, bool bullet = false,
                     const QColor& color = QColor(0x21, 0x21, 0x21));
    double paragraphHeight(const QString& text, double width, double points = 8.5, bool bullet = false) const;
    /// `text` cut at a word and ended with "…" so that it wraps to at most `lines` lines.
    QString clampLines(const QString& text, double width, double points, int lines) const;

    double setupGridHeight(double width) const;
    void setupGrid(const QRectF& rect);

    double verdictHeight(double width) const;
    void verdict(const QRectF& rect);

private:
    /// The set-up grid: the items that fit half the width in two columns (alternating), then the others
    /// on a row each, all of the width.
    struct Grid {
        std::vector<std::size_t> pairs; ///< items in two columns, in order
        std::vector<std::size_t> wide;  ///< items on a row of their own, in order
        int rows = 0;
        double labelWidth = 0; ///< of every column, so that the values line up
        double columnWidth = 0;
    };
    Grid setupLayout(double width) const;

    ReportCanvas& m_canvas;
    const ReportSections& m_sections;
};

} // namespace batchfit
