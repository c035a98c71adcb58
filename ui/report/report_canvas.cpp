#include "report/report_canvas.h"

#include "report/report_language.h"

#include <QFontMetricsF>

namespace batchfit {

ReportCanvas::ReportCanvas(QPainter& painter, double pixelsPerPoint)
    : m_painter(painter), m_scale(pixelsPerPoint), m_families(ReportLanguage::currentFontFamilies()) {
    m_painter.setWorldTransform(QTransform::fromScale(m_scale, m_scale), true);
    m_pointsToDevice = m_painter.worldTransform();
    m_painter.setRenderHint(QPainter::Antialiasing, true);
    m_painter.setRenderHint(QPainter::TextAntialiasing, true);
}

QFont ReportCanvas::font(double points, bool bold) const {
    QFont f;
    f.setFamilies(m_families);
    f.setStyleHint(QFont::SansSerif);
    f.setPointSizeF(points);
    f.setBold(bold);
    f.setHintingPreference(QFont::PreferNoHinting);
    // No shaping for Latin and Han (neither needs it): no "fi" ligatures, and every glyph maps back to its
    // character, so PDF text extracts and copies as written (Noto CJK's shaped Latin digits do not).
    f.setStyleStrategy(QFont::PreferNoShaping);
    return f;
}

double ReportCanvas::textWidth(const QString& s, const QFont& f) const {
    return QFontMetricsF(f, m_painter.device()).horizontalAdvance(s) / m_scale;
}

double ReportCanvas::lineHeight(const QFont& f) const {
    return QFontMetricsF(f, m_painter.device()).lineSpacing() / m_scale;
}

double ReportCanvas::ascent(const QFont& f) const {
    return QFontMetricsF(f, m_painter.device()).ascent() / m_scale;
}

double ReportCanvas::wrappedHeight(const QString& s, const QFont& f, double width) const {
    const QRectF r =
        QFontMetricsF(f, m_painter.device())
            .boundingRect(QRectF(0, 0, width * m_scale, 1e7), Qt::TextWordWrap | Qt::AlignLeft, s);
    return r.height() / m_scale;
}

QString ReportCanvas::elided(const QString& s, const QFont& f, double width, Qt::TextElideMode mode) const {
    return QFontMetricsF(f, m_painter.device()).elidedText(s, mode, width * m_scale);
}

void ReportCanvas::drawText(const QRectF& r, int flags, const QString& s, const QFont& f, const QColor& c) {
    m_painter.save();
    m_painter.setWorldTransform(QTransform());
    m_painter.setFont(f);
    m_painter.setPen(c);
    m_painter.drawText(m_pointsToDevice.mapRect(r), flags, s);
    m_painter.restore();
}

QRectF ReportCanvas::labelRect(const QPointF& anchor, Qt::Alignment align, const QString& s,
                               const QFont& f) const {
    const double pad = 2.0;
    const double w = textWidth(s, f) + 2 * pad;
    const double h = lineHeight(f) + pad;
    double x = anchor.x() - w / 2;
    if (align & Qt::AlignLeft) x = anchor.x() - w; // label to the left of the anchor
    if (align & Qt::AlignRight) x = anchor.x();    // label to the right of the anchor
    double y = anchor.y() - h / 2;
    if (align & Qt::AlignTop) y = anchor.y() - h; // above
    if (align & Qt::AlignBottom) y = anchor.y();  // below
    return QRectF(x, y, w, h);
}

QRectF ReportCanvas::drawLabel(const QPointF& anchor, Qt::Alignment align, const QString& s, const QFont& f,
                               const QColor& c, bool box) {
    const QRectF r = labelRect(anchor, align, s, f);
    if (box) {
        m_painter.save();
        m_painter.setPen(Qt::NoPen);
        m_painter.setBrush(QColor(255, 255, 255, 225));
        m_painter.drawRoundedRect(r, 1.5, 1.5);
        m_painter.restore();
    }
    drawText(r, Qt::AlignCenter, s, f, c);
    return r;
}

} // namespace batchfit
