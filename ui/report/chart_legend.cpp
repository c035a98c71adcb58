#include "report/chart_legend.h"

namespace batchfit {
namespace {

constexpr double kSample = 12; // sample width, points
constexpr double kGap = 12;    // between entries

} // namespace

double ChartLegend::entryWidth(const ReportCanvas& canvas, const QFont& font, const Entry& e) const {
    return kSample + 4 + canvas.textWidth(e.label, font);
}

std::vector<int> ChartLegend::lineOf(const ReportCanvas& canvas, const QFont& font, double width) const {
    std::vector<int> lines;
    int line = 0;
    double x = 0;
    for (const auto& e : m_entries) {
        const double w = entryWidth(canvas, font, e);
        if (x > 0 && x + w > width) {
            ++line;
            x = 0;
        }
        lines.push_back(line);
        x += w + kGap;
    }
    return lines;
}

double ChartLegend::height(const ReportCanvas& canvas, const QFont& font, double width) const {
    if (m_entries.empty()) return 0;
    return (lineOf(canvas, font, width).back() + 1) * (canvas.lineHeight(font) + 2);
}

void ChartLegend::paint(ReportCanvas& canvas, const QFont& font, const QRectF& rect) const {
    const auto lines = lineOf(canvas, font, rect.width());
    const double lh = canvas.lineHeight(font) + 2;
    double x = rect.left();
    int line = 0;
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        const Entry& e = m_entries[i];
        if (lines[i] != line) {
            line = lines[i];
            x = rect.left();
        }
        const double y = rect.top() + line * lh;
        const double w = entryWidth(canvas, font, e);
        paintSample(canvas.painter(), e.kind, e.color, QRectF(x, y + lh / 2 - 4, kSample, 8));
        canvas.drawText(QRectF(x + kSample + 4, y, w - kSample - 4 + 1, lh), Qt::AlignLeft | Qt::AlignVCenter,
                        e.label, font, QColor(0x21, 0x21, 0x21));
        x += w + kGap;
    }
}

void ChartLegend::paintSample(QPainter& p, Kind kind, const QColor& color, const QRectF& box) {
    p.save();
    const QPointF c = box.center();
    switch (kind) {
    case Kind::Swatch:
        p.setPen(QPen(color.darker(130), 0.4));
        p.setBrush(color);
        p.drawRect(QRectF(c.x() - 4, c.y() - 4, 8, 8));
        break;
    case Kind::Line:
    case Kind::DashedLine: {
        QPen pen(color, 1.4);
        if (kind == Kind::DashedLine) pen.setDashPattern({3, 2});
        p.setPen(pen);
        p.drawLine(QPointF(box.left(), c.y()), QPointF(box.right(), c.y()));
        break;
    }
    case Kind::Marker:
        p.setPen(QPen(Qt::white, 0.8));
        p.setBrush(color);
        p.drawEllipse(c, 3.2, 3.2);
        break;
    case Kind::Cross:
        p.setPen(QPen(color, 1.4));
        p.drawLine(c + QPointF(-3, -3), c + QPointF(3, 3));
        p.drawLine(c + QPointF(-3, 3), c + QPointF(3, -3));
        break;
    case Kind::Ring:
        p.setPen(QPen(color, 1.1));
        p.setBrush(QColor(255, 255, 255, 200));
        p.drawEllipse(c, 2.6, 2.6);
        break;
    }
    p.restore();
}

} // namespace batchfit
