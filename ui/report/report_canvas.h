#pragma once
// Drawing in points (1/72 inch) on any device: geometry through the painter's transform, text at the device's
// real resolution (so PDF glyphs are not hinted at a tiny size and PNG text is crisp).
#include <QColor>
#include <QFont>
#include <QPainter>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <QTransform>

namespace batchfit {

class ReportCanvas {
public:
    /// `pixelsPerPoint`: device pixels per point (device dpi / 72). Scales the painter's transform.
    ReportCanvas(QPainter& painter, double pixelsPerPoint);

    QPainter& painter() { return m_painter; }
    double pixelsPerPoint() const { return m_scale; }

    /// The report font of the current report language (see ReportLanguage).
    QFont font(double points, bool bold = false) const;
    double textWidth(const QString& s, const QFont& f) const;
    double lineHeight(const QFont& f) const;
    double ascent(const QFont& f) const;
    /// Height of `s` word-wrapped to `width`.
    double wrappedHeight(const QString& s, const QFont& f, double width) const;
    QString elided(const QString& s, const QFont& f, double width,
                   Qt::TextElideMode mode = Qt::ElideRight) const;

    void drawText(const QRectF& r, int flags, const QString& s, const QFont& f, const QColor& c);
    /// A one-line label next to `anchor` (alignment says which side), optionally on a white box.
    QRectF drawLabel(const QPointF& anchor, Qt::Alignment align, const QString& s, const QFont& f,
                     const QColor& c, bool box = false);
    /// Where drawLabel would put the label.
    QRectF labelRect(const QPointF& anchor, Qt::Alignment align, const QString& s, const QFont& f) const;

private:
    QPainter& m_painter;
    double m_scale;
    QTransform m_pointsToDevice;
    QStringList m_families;
};

} // namespace batchfit
