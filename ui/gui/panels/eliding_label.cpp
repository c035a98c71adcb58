#include "gui/panels/eliding_label.h"

#include <QResizeEvent>

namespace batchfit {

ElidingLabel::ElidingLabel(QWidget* parent) : QLabel(parent) {
    setTextFormat(Qt::PlainText);
    setWordWrap(false);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
}

void ElidingLabel::setFullText(const QString& text) {
    m_full = text;
    updateShown();
    updateGeometry();
}

void ElidingLabel::setPlainToolTip(const QString& tip) {
    m_plainTip = tip;
    updateShown();
}

QSize ElidingLabel::minimumSizeHint() const {
    return {fontMetrics().horizontalAdvance(QStringLiteral("…")) * 4, fontMetrics().height()};
}

QSize ElidingLabel::sizeHint() const {
    const QMargins m = contentsMargins();
    return {fontMetrics().horizontalAdvance(m_full) + m.left() + m.right() + 2 * margin(),
            fontMetrics().height() + m.top() + m.bottom() + 2 * margin()};
}

void ElidingLabel::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    updateShown();
}

void ElidingLabel::updateShown() {
    const QString shown =
        fontMetrics().elidedText(m_full, Qt::ElideRight, contentsRect().width() - 2 * margin());
    if (shown != text()) setText(shown);
    setToolTip(shown == m_full ? m_plainTip : m_full);
}

} // namespace batchfit
