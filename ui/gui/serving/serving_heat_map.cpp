#include "gui/serving/serving_heat_map.h"

#include "gui/charts/component_style.h"

#include <QHelpEvent>
#include <QLocale>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace batchfit {

ServingHeatMap::ServingHeatMap(QWidget* parent) : QWidget(parent) {
    setMinimumSize(240, 160);
    setMouseTracking(true);
}

void ServingHeatMap::setMap(const ServingMap& map) {
    m_map = map;
    update();
}

QRect ServingHeatMap::gridRect() const {
    const QFontMetrics fm = fontMetrics();
    const int left = fm.horizontalAdvance(QLocale().toString(qlonglong{1048576})) + 12;
    return rect().adjusted(left, fm.height() + 6, -6, -(fm.height() + 8));
}

QString ServingHeatMap::cellText(std::size_t row, std::size_t column) const {
    const QLocale l;
    const ServingCell& c = m_map.at(row, column);
    const QString n = l.toString(static_cast<qlonglong>(m_map.sequences[column]));
    const QString len = l.toString(static_cast<qlonglong>(m_map.contexts[row]));
    return c.fits ? tr("%1 sequences of %2 tokens: fit, %3% of the KV cache")
                        .arg(n, len)
                        .arg(c.usedFraction * 100, 0, 'f', 0)
                  : tr("%1 sequences of %2 tokens: do not fit (%3% of the KV cache)")
                        .arg(n, len)
                        .arg(c.usedFraction * 100, 0, 'f', 0);
}

void ServingHeatMap::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QRect g = gridRect();
    const std::size_t rows = m_map.contexts.size(), cols = m_map.sequences.size();
    if (rows == 0 || cols == 0 || g.width() <= 0 || g.height() <= 0) {
        p.drawText(rect(), Qt::AlignCenter, tr("No serving estimate to map."));
        return;
    }
    const QLocale l;
    const double cw = static_cast<double>(g.width()) / static_cast<double>(cols);
    const double rh = static_cast<double>(g.height()) / static_cast<double>(rows);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t k = 0; k < cols; ++k) {
            const ServingCell& c = m_map.at(r, k);
            QColor color = c.fits ? ComponentStyle::fitsColor() : ComponentStyle::oomColor();
            color.setAlphaF(c.fits ? 0.25 + 0.75 * std::clamp(c.usedFraction, 0.0, 1.0) : 0.55);
            // Rows from the shortest context at the bottom to the longest at the top.
            const QRectF cell(g.left() + cw * static_cast<double>(k),
                              g.bottom() - rh * static_cast<double>(r + 1), cw - 1, rh - 1);
            p.fillRect(cell, color);
        }
        const QRectF label(0, g.bottom() - rh * static_cast<double>(r + 1), g.left() - 6, rh);
        p.drawText(label, Qt::AlignRight | Qt::AlignVCenter,
                   l.toString(static_cast<qlonglong>(m_map.contexts[r])));
    }
    const int every = std::max(1, static_cast<int>(cols / 12));
    for (std::size_t k = 0; k < cols; k += static_cast<std::size_t>(every)) {
        const QRectF label(g.left() + cw * static_cast<double>(k), g.bottom() + 2, cw,
                           fontMetrics().height() + 4);
        p.drawText(label, Qt::AlignHCenter | Qt::AlignTop,
                   l.toString(static_cast<qlonglong>(m_map.sequences[k])));
    }
    p.drawText(QRect(0, 0, width(), fontMetrics().height() + 4), Qt::AlignHCenter,
               tr("context (tokens per request, rows) × concurrent sequences (columns)"));
}

bool ServingHeatMap::event(QEvent* event) {
    if (event->type() != QEvent::ToolTip) return QWidget::event(event);
    auto* help = static_cast<QHelpEvent*>(event);
    const QRect g = gridRect();
    const std::size_t rows = m_map.contexts.size(), cols = m_map.sequences.size();
    if (rows && cols && g.contains(help->pos())) {
        const auto k =
            static_cast<std::size_t>((help->pos().x() - g.left()) * static_cast<int>(cols) / g.width());
        const auto r =
            static_cast<std::size_t>((g.bottom() - help->pos().y()) * static_cast<int>(rows) / g.height());
        QToolTip::showText(help->globalPos(), cellText(std::min(r, rows - 1), std::min(k, cols - 1)), this);
    } else {
        QToolTip::hideText();
    }
    return true;
}

} // namespace batchfit
