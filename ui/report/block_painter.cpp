#include "report/block_painter.h"

#include "report/component_palette.h"

#include <algorithm>

namespace batchfit {
namespace {

constexpr double kBulletIndent = 10;
constexpr double kGridRowGap = 3;
constexpr double kGridGap = 16; // between the two set-up columns
constexpr double kVerdictPad = 8;

} // namespace

double BlockPainter::headingHeight(double points) const {
    return m_canvas.lineHeight(m_canvas.font(points, true)) + 3;
}

double BlockPainter::heading(const QString& text, double x, double y, double width, double points) {
    const QFont f = m_canvas.font(points, true);
    m_canvas.drawText(QRectF(x, y, width, m_canvas.lineHeight(f)), Qt::AlignLeft | Qt::AlignVCenter,
                      m_canvas.elided(text, f, width), f, ComponentPalette::text());
    return headingHeight(points);
}

double BlockPainter::paragraphHeight(const QString& text, double width, double points, bool bullet) const {
    return m_canvas.wrappedHeight(text, m_canvas.font(points), width - (bullet ? kBulletIndent : 0));
}

QString BlockPainter::clampLines(const QString& text, double width, double points, int lines) const {
    const double limit = (lines + 0.5) * m_canvas.lineHeight(m_canvas.font(points));
    if (paragraphHeight(text, width, points) <= limit) return text;
    QStringList words = text.split(QLatin1Char(' '));
    while (words.size() > 1) {
        words.removeLast();
        const QString cut = words.join(QLatin1Char(' ')) + QStringLiteral("…");
        if (paragraphHeight(cut, width, points) <= limit) return cut;
    }
    return m_canvas.elided(text, m_canvas.font(points), width);
}

double BlockPainter::paragraph(const QString& text, const QRectF& at, double points, bool bullet,
                               const QColor& color) {
    const QFont f = m_canvas.font(points);
    const double indent = bullet ? kBulletIndent : 0;
    const double h = paragraphHeight(text, at.width(), points, bullet);
    if (bullet)
        m_canvas.drawText(QRectF(at.left(), at.top(), indent, m_canvas.lineHeight(f)),
                          Qt::AlignLeft | Qt::AlignTop, QStringLiteral("•"), f, color);
    m_canvas.drawText(QRectF(at.left() + indent, at.top(), at.width() - indent, h + 1),
                      Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, text, f, color);
    return h;
}

BlockPainter::Grid BlockPainter::setupLayout(double width) const {
    const auto items = m_sections.setup();
    const QFont label = m_canvas.font(8.5, true);
    const QFont value = m_canvas.font(8.5);
    Grid g;
    for (const auto& item : items)
        g.labelWidth = std::max(g.labelWidth, m_canvas.textWidth(item.first, label) + 8);
    g.columnWidth = (width - kGridGap) / 2;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const double w =
            std::min(g.labelWidth, g.columnWidth * 0.5) + m_canvas.textWidth(items[i].second, value) + 4;
        (w <= g.columnWidth ? g.pairs : g.wide).push_back(i);
    }
    if (g.pairs.size() == 1) { // a lone short item takes a row either way: keep it in its place
        g.wide.insert(std::lower_bound(g.wide.begin(), g.wide.end(), g.pairs.front()), g.pairs.front());
        g.pairs.clear();
    }
    g.rows = static_cast<int>((g.pairs.size() + 1) / 2 + g.wide.size());
    return g;
}

double BlockPainter::setupGridHeight(double width) const {
    return setupLayout(width).rows * (m_canvas.lineHeight(m_canvas.font(8.5)) + kGridRowGap);
}

void BlockPainter::setupGrid(const QRectF& rect) {
    const auto items = m_sections.setup();
    const QFont label = m_canvas.font(8.5, true);
    const QFont value = m_canvas.font(8.5);
    const double line = m_canvas.lineHeight(value) + kGridRowGap;
    const Grid g = setupLayout(rect.width());
    auto paint = [&](std::size_t i, double x, double y, double width) {
        const double lw = std::min(g.labelWidth, width * 0.5);
        m_canvas.drawText(QRectF(x, y, lw, line), Qt::AlignLeft | Qt::AlignVCenter,
                          m_canvas.elided(items[i].first, label, lw - 4), label,
                          ComponentPalette::mutedText());
        m_canvas.drawText(QRectF(x + lw, y, width - lw, line), Qt::AlignLeft | Qt::AlignVCenter,
                          m_canvas.elided(items[i].second, value, width - lw), value,
                          ComponentPalette::text());
    };
    for (std::size_t k = 0; k < g.pairs.size(); ++k)
        paint(g.pairs[k], rect.left() + static_cast<double>(k % 2) * (g.columnWidth + kGridGap),
              rect.top() + static_cast<double>(k / 2) * line, g.columnWidth);
    double y = rect.top() + static_cast<double>((g.pairs.size() + 1) / 2) * line;
    for (std::size_t i : g.wide) {
        paint(i, rect.left(), y, rect.width());
        y += line;
    }
}

double BlockPainter::verdictHeight(double width) const {
    const double inner = width - 2 * kVerdictPad - 4;
    return 2 * kVerdictPad + m_canvas.lineHeight(m_canvas.font(12, true)) + 2 +
           paragraphHeight(m_sections.verdictDetail(), inner, 9) +
           paragraphHeight(m_sections.maxBatchLine(), inner, 9);
}

void BlockPainter::verdict(const QRectF& rect) {
    const bool fits = m_sections.fits();
    const QColor accent = fits ? ComponentPalette::fits() : ComponentPalette::doesNotFit();
    QPainter& p = m_canvas.painter();
    p.save();
    p.setPen(Qt::NoPen);
    p.setBrush(fits ? QColor(0xE8, 0xF5, 0xEC) : QColor(0xFD, 0xEC, 0xEA));
    p.drawRoundedRect(rect, 3, 3);
    p.setBrush(accent);
    p.drawRect(QRectF(rect.left(), rect.top(), 4, rect.height()));
    p.restore();
    const double x = rect.left() + 4 + kVerdictPad;
    const double w = rect.width() - 4 - 2 * kVerdictPad;
    double y = rect.top() + kVerdictPad;
    const QFont head = m_canvas.font(12, true);
    m_canvas.drawText(QRectF(x, y, w, m_canvas.lineHeight(head)), Qt::AlignLeft | Qt::AlignVCenter,
                      m_canvas.elided(m_sections.verdictHeadline(), head, w), head, accent.darker(110));
    y += m_canvas.lineHeight(head) + 2;
    y += paragraph(m_sections.verdictDetail(), QRectF(x, y, w, 0), 9);
    paragraph(m_sections.maxBatchLine(), QRectF(x, y, w, 0), 9, false, ComponentPalette::text());
}

} // namespace batchfit
