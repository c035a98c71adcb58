#include "report/table_painter.h"

#include "report/component_palette.h"

#include <algorithm>
#include <numeric>

namespace batchfit {
namespace {

constexpr double kPad = 4;    // horizontal cell padding, points
constexpr double kSwatch = 7; // colour square, points

} // namespace

TablePainter::TablePainter(ReportCanvas& canvas, const ReportTable& table, double fontPoints)
    : m_canvas(canvas), m_table(table), m_font(canvas.font(fontPoints)),
      m_bold(canvas.font(fontPoints, true)) {
    m_rowHeight = canvas.lineHeight(m_font) + 4.5;
    m_hasSwatches =
        std::any_of(table.rows.begin(), table.rows.end(), [](const auto& r) { return r.swatch.isValid(); });
}

int TablePainter::rowsFitting(double height) const {
    if (height < headerHeight()) return 0;
    return static_cast<int>((height - headerHeight() + 1e-6) / m_rowHeight);
}

std::vector<double> TablePainter::columnWidths(double total) const {
    // Fixed columns fit their widest text (all rows, so pages agree); stretching ones share what is left.
    std::vector<double> natural;
    for (std::size_t c = 0; c < m_table.columns.size(); ++c) {
        double w = m_canvas.textWidth(m_table.columns[c].title, m_bold);
        for (const auto& r : m_table.rows)
            if (c < static_cast<std::size_t>(r.cells.size()))
                w = std::max(w, m_canvas.textWidth(r.cells[static_cast<int>(c)], r.bold ? m_bold : m_font));
        natural.push_back(w + 2 * kPad + (c == 0 && m_hasSwatches ? kSwatch + 4 : 0) + 1);
    }
    double fixed = 0, weights = 0;
    for (std::size_t c = 0; c < natural.size(); ++c) {
        if (m_table.columns[c].stretch)
            weights += m_table.columns[c].weight;
        else
            fixed += natural[c];
    }
    const double left = total - fixed;
    std::vector<double> w;
    if (weights > 0 && left >= 40 * weights) {
        for (std::size_t c = 0; c < natural.size(); ++c)
            w.push_back(m_table.columns[c].stretch ? left * m_table.columns[c].weight / weights : natural[c]);
        return w;
    }
    // Too narrow for the natural widths: every column shrinks in proportion (and elides).
    const double sum = std::accumulate(natural.begin(), natural.end(), 0.0);
    for (double n : natural) w.push_back(total * n / sum);
    return w;
}

void TablePainter::paintCells(const QRectF& rowRect, const QStringList& cells, const QColor& swatch,
                              const QFont& font, const std::vector<double>& widths) {
    double x = rowRect.left();
    for (std::size_t c = 0; c < m_table.columns.size(); ++c) {
        const auto& col = m_table.columns[c];
        QRectF cell(x + kPad, rowRect.top(), widths[c] - 2 * kPad, rowRect.height());
        if (c == 0 && m_hasSwatches) {
            if (swatch.isValid()) {
                QPainter& p = m_canvas.painter();
                p.save();
                p.setPen(QPen(swatch.darker(130), 0.4));
                p.setBrush(swatch);
                p.drawRect(QRectF(cell.left(), cell.center().y() - kSwatch / 2, kSwatch, kSwatch));
                p.restore();
            }
            cell.setLeft(cell.left() + kSwatch + 4);
        }
        const QString text =
            c < static_cast<std::size_t>(cells.size()) ? cells[static_cast<int>(c)] : QString();
        m_canvas.drawText(cell, static_cast<int>(col.align | Qt::AlignVCenter),
                          m_canvas.elided(text, font, cell.width(), col.elide), font,
                          ComponentPalette::text());
        x += widths[c];
    }
}

double TablePainter::paint(const QRectF& area, int first, int count) {
    QPainter& p = m_canvas.painter();
    const auto widths = columnWidths(area.width());
    QStringList titles;
    for (const auto& c : m_table.columns) titles << c.title;
    QRectF header(area.left(), area.top(), area.width(), m_rowHeight);
    paintCells(header, titles, QColor(), m_bold, widths);
    double y = area.top() + headerHeight();
    p.save();
    p.setPen(QPen(ComponentPalette::text(), 0.8));
    p.drawLine(QPointF(area.left(), y - 1), QPointF(area.right(), y - 1));
    p.restore();

    const int last = std::min<int>(first + count, static_cast<int>(m_table.rows.size()));
    for (int i = first; i < last; ++i) {
        const auto& row = m_table.rows[static_cast<std::size_t>(i)];
        const QRectF r(area.left(), y, area.width(), m_rowHeight);
        if ((i - first) % 2 == 1) p.fillRect(r, QColor(0xF4, 0xF5, 0xF7));
        if (row.ruleAbove && i != first) {
            p.save();
            p.setPen(QPen(QColor(0x9E, 0x9E, 0x9E), 0.5));
            p.drawLine(r.topLeft(), r.topRight());
            p.restore();
        }
        paintCells(r, row.cells, row.swatch, row.bold ? m_bold : m_font, widths);
        y += m_rowHeight;
    }
    p.save();
    p.setPen(QPen(QColor(0x9E, 0x9E, 0x9E), 0.5));
    p.drawLine(QPointF(area.left(), y), QPointF(area.right(), y));
    p.restore();
    return y - area.top();
}

} // namespace batchfit
