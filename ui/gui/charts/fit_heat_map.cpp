#include "gui/charts/fit_heat_map.h"

#include "gui/charts/component_style.h"
#include "gui/estimation/byte_format.h"

#include <QEvent>
#include <QHelpEvent>
#include <QLocale>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace batchfit {
namespace {

QString number(std::int64_t n) {
    return QLocale().toString(static_cast<qlonglong>(n));
}

QColor mix(const QColor& a, const QColor& b, double t) {
    t = std::clamp(t, 0.0, 1.0);
    return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                            static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                            static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}

} // namespace

FitHeatMap::FitHeatMap(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("fitHeatMap"));
    setMouseTracking(true);
    m_message = tr("Computing…");
}

void FitHeatMap::setMap(const FitMap& map, std::int64_t currentSequence) {
    m_map = map;
    m_hasMap = !map.rows.empty();
    m_currentSequence = currentSequence;
    m_message = m_hasMap ? QString() : tr("No sequence lengths to show.");
    update();
}

void FitHeatMap::showExplanation(const QString& text) {
    m_hasMap = false;
    m_map = {};
    m_message = text;
    update();
}

void FitHeatMap::setPending() {
    showExplanation(tr("Computing the largest batch at each sequence length…"));
}

QString FitHeatMap::rowLabel(int row) const {
    if (row < 0 || row >= rowCount()) return {};
    const FitMapRow& r = m_map.rows[static_cast<std::size_t>(row)];
    const QString head = r.peakInHead ? QStringLiteral(" · ") + tr("peak in the loss") : QString();
    if (r.largest.largest <= 0) return tr("batch 1 does not fit") + head;
    return tr("largest %1%2 · %3 tokens/step")
               .arg(number(r.largest.largest), r.largest.capped ? QStringLiteral("+") : QString(),
                    ByteFormat::count(r.tokensPerStep)) +
           head;
}

QString FitHeatMap::cellToolTip(int row, int column) const {
    if (row < 0 || row >= rowCount() || column < 0 || column >= static_cast<int>(m_map.batches.size()))
        return {};
    const FitMapRow& r = m_map.rows[static_cast<std::size_t>(row)];
    if (static_cast<std::size_t>(column) >= r.cells.size()) return {};
    const FitMapCell& c = r.cells[static_cast<std::size_t>(column)];
    QString text;
    if (c.requiredBytes == 0)
        text = tr("Batch %1 at sequence %2: too large to count — does not fit")
                   .arg(number(c.batch), number(r.sequence));
    else if (c.fits)
        text = tr("Batch %1 at sequence %2: fits, %3 of %4 usable (%5%)")
                   .arg(number(c.batch), number(r.sequence), ByteFormat::bytes(c.requiredBytes),
                        ByteFormat::bytes(m_map.usableBytes))
                   .arg(c.usedFraction * 100.0, 0, 'f', 0);
    else
        text = tr("Batch %1 at sequence %2: does not fit, needs %3 of %4 usable")
                   .arg(number(c.batch), number(r.sequence), ByteFormat::bytes(c.requiredBytes),
                        ByteFormat::bytes(m_map.usableBytes));
    if (r.largest.largest > 0)
        text += QLatin1Char('\n') +
                tr("Largest batch at sequence %1: %2, %3 tokens per step")
                    .arg(number(r.sequence), number(r.largest.largest), ByteFormat::count(r.tokensPerStep));
    if (m_map.accumulationSteps > 1)
        text += QLatin1Char(' ') + tr("(%1 accumulation steps)").arg(m_map.accumulationSteps);
    if (!r.peakLabel.empty())
        text += QLatin1Char('\n') +
                (r.peakInHead
                     ? tr("The step peaks in the model's head and loss (%1): the logits, not the layers.")
                     : tr("The step peaks at %1."))
                    .arg(QString::fromStdString(r.peakLabel));
    return text;
}

QSize FitHeatMap::sizeHint() const {
    return {520, 220};
}

QSize FitHeatMap::minimumSizeHint() const {
    return {160, 80};
}

int FitHeatMap::rowAt(int line) const {
    return rowCount() - 1 - line;
}

FitHeatMap::CellLayout FitHeatMap::cellLayout() const {
    const QFontMetrics fm(font());
    CellLayout g;
    int seqW = fm.horizontalAdvance(tr("sequence"));
    int labelW = 0;
    for (int i = 0; i < rowCount(); ++i) {
        seqW = std::max(seqW, fm.horizontalAdvance(number(m_map.rows[static_cast<std::size_t>(i)].sequence)));
        labelW = std::max(labelW, fm.horizontalAdvance(rowLabel(i)));
    }
    const int pad = 6;
    const int left = seqW + 2 * pad;
    // The row labels take what they need, up to half the width; the cells get the rest.
    labelW = std::min(labelW + 2 * pad, width() / 2);
    const int top = fm.height() + pad;            // the y axis title
    const int bottom = 3 * fm.height() + 2 * pad; // batch labels, axis title and legend
    const int cols = std::max<int>(1, static_cast<int>(m_map.batches.size()));
    const int rows = std::max(1, rowCount());
    g.cellW = std::max(1, (width() - left - labelW - pad) / cols);
    g.cellH = std::max(1, (height() - top - bottom) / rows);
    g.grid = QRect(left, top, g.cellW * cols, g.cellH * rows);
    g.labelX = g.grid.right() + pad;
    g.axisY = g.grid.bottom() + fm.ascent() + 2;
    return g;
}

QColor FitHeatMap::cellColor(const FitMapCell& cell) const {
    const QColor base = palette().color(QPalette::Base);
    if (!cell.fits) return mix(base, ComponentStyle::oomColor(), 0.55);
    // Light where little of the usable memory is used, the full "fits" colour near the limit.
    return mix(base, ComponentStyle::fitsColor(), 0.2 + 0.8 * cell.usedFraction);
}

void FitHeatMap::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Window));
    const QFontMetrics fm(font());
    if (!m_hasMap) {
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(rect().adjusted(12, 8, -12, -8), Qt::AlignCenter | Qt::TextWordWrap, m_message);
        return;
    }
    const CellLayout g = cellLayout();
    const QColor text = palette().color(QPalette::WindowText);
    p.setPen(text);
    p.drawText(QRect(0, 0, g.grid.left() - 2, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
               tr("sequence"));
    p.drawText(QRect(g.labelX, 0, width() - g.labelX, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
               tr("largest batch · tokens per step"));
    const bool percentFits =
        g.cellW >= fm.horizontalAdvance(QStringLiteral("99%")) + 4 && g.cellH >= fm.height();
    for (int line = 0; line < rowCount(); ++line) {
        const int row = rowAt(line);
        const FitMapRow& r = m_map.rows[static_cast<std::size_t>(row)];
        const int y = g.grid.top() + line * g.cellH;
        for (std::size_t c = 0; c < r.cells.size(); ++c) {
            const QRect cell(g.grid.left() + static_cast<int>(c) * g.cellW, y, g.cellW, g.cellH);
            const QColor fill = cellColor(r.cells[c]);
            p.fillRect(cell.adjusted(0, 0, -1, -1), fill);
            if (percentFits && r.cells[c].fits) {
                p.setPen(ComponentStyle::isDark(fill) ? QColor(Qt::white) : QColor(Qt::black));
                p.drawText(cell, Qt::AlignCenter, tr("%1%").arg(r.cells[c].usedFraction * 100.0, 0, 'f', 0));
            }
        }
        p.setPen(text);
        const QRect seqRect(0, y, g.grid.left() - 6, g.cellH);
        QFont f = font();
        f.setBold(r.sequence == m_currentSequence);
        p.setFont(f);
        p.drawText(seqRect, Qt::AlignRight | Qt::AlignVCenter, number(r.sequence));
        p.setFont(font());
        const QRect labelRect(g.labelX, y, width() - g.labelX, g.cellH);
        p.drawText(labelRect, Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(rowLabel(row), Qt::ElideRight, labelRect.width()));
        if (r.sequence == m_currentSequence) { // the model's own length
            p.setPen(QPen(text, 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRect(g.grid.left(), y, g.grid.width(), g.cellH).adjusted(1, 1, -1, -1));
            p.setPen(text);
        }
    }
    // Batch labels: every column that has room for its number.
    int lastRight = -1;
    for (std::size_t c = 0; c < m_map.batches.size(); ++c) {
        const QString s = number(m_map.batches[c]);
        const int cx = g.grid.left() + static_cast<int>(c) * g.cellW + g.cellW / 2;
        const int w = fm.horizontalAdvance(s);
        if (cx - w / 2 <= lastRight + 4) continue;
        p.drawText(cx - w / 2, g.axisY, s);
        lastRight = cx + w / 2;
    }
    p.drawText(QRect(g.grid.left(), g.axisY + 2, g.grid.width(), fm.height()),
               Qt::AlignHCenter | Qt::AlignVCenter, tr("micro-batch size"));
    const QString legend =
        tr("green: fits (darker: more memory used) · red: does not fit · outlined: the model's length");
    const QRect legendRect(4, g.axisY + 2 + fm.height(), width() - 8, fm.height());
    p.drawText(legendRect, Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(legend, Qt::ElideRight, legendRect.width()));
}

bool FitHeatMap::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip && m_hasMap) {
        auto* help = static_cast<QHelpEvent*>(event);
        const CellLayout g = cellLayout();
        const QPoint pos = help->pos();
        if (g.grid.contains(pos)) {
            const int line = (pos.y() - g.grid.top()) / g.cellH;
            const int col = (pos.x() - g.grid.left()) / g.cellW;
            QToolTip::showText(help->globalPos(), cellToolTip(rowAt(line), col), this);
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::event(event);
}

} // namespace batchfit
