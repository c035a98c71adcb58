#include "gui/panels/wrapping_label.h"

#include <QResizeEvent>

namespace batchfit {

WrappingLabel::WrappingLabel(const QString& text, QWidget* parent) : QLabel(text, parent) {
    setWordWrap(true);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
}

void WrappingLabel::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    const int needed = heightForWidth(event->size().width());
    if (needed > 0 && needed != minimumHeight()) setMinimumHeight(needed); // the layout then grows the row
}

} // namespace batchfit
