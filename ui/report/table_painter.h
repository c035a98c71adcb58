#pragma once
// Paints a ReportTable page by page: header repeated, cells elided to their column, never past the area.
#include "report/report_canvas.h"
#include "report/report_table.h"

namespace batchfit {

class TablePainter {
public:
    TablePainter(ReportCanvas& canvas, const ReportTable& table, double fontPoints = 8.5);

    double headerHeight() const { return m_rowHeight + 2; }
    double rowHeight() const { return m_rowHeight; }
    /// Height of the header and `rows` rows.
    double height(int rows) const { return headerHeight() + rows * m_rowHeight; }
    /// How many rows (after the header) fit in `height`; 0 if not even the header does.
    int rowsFitting(double height) const;
    /// Paints the header and rows [first, first + count) from the top of `area`; returns the height used.
    double paint(const QRectF& area, int first, int count);

private:
    std::vector<double> columnWidths(double total) const;
    void paintCells(const QRectF& rowRect, const QStringList& cells, const QColor& swatch, const QFont& font,
                    const std::vector<double>& widths);

    ReportCanvas& m_canvas;
    const ReportTable& m_table;
    QFont m_font;
    QFont m_bold;
    double m_rowHeight;
    bool m_hasSwatches = false;
};

} // namespace batchfit
