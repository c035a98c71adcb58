#include "gui/shell/dock_scroll_area.h"

#include <QEvent>
#include <QScrollBar>
#include <algorithm>

namespace batchfit {

DockScrollArea::DockScrollArea(QWidget* content, QWidget* parent) : QScrollArea(parent) {
    setObjectName(content->objectName() + QStringLiteral("Scroll"));
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setWidgetResizable(true);
    setWidget(content);
    // Room for the scroll bar only while it shows, so the dock is as wide as before until it scrolls.
    verticalScrollBar()->installEventFilter(this);
    content->installEventFilter(this);
}

bool DockScrollArea::eventFilter(QObject* watched, QEvent* event) {
    if (watched == verticalScrollBar() && (event->type() == QEvent::Show || event->type() == QEvent::Hide))
        updateGeometry();
    if (watched == widget() && event->type() == QEvent::LayoutRequest) {
        updateGeometry();
        // After the content's layout has taken the request: its size hint is the new one then.
        QMetaObject::invokeMethod(this, &DockScrollArea::contentResized, Qt::QueuedConnection);
    }
    return QScrollArea::eventFilter(watched, event);
}

int DockScrollArea::barWidth() const {
    return verticalScrollBar()->isVisibleTo(this) ? verticalScrollBar()->sizeHint().width() : 0;
}

// The content's own hint, not QScrollArea's (which caps it at 36 x 24 lines of text).
QSize DockScrollArea::sizeHint() const {
    const QSize content = widget() ? widget()->sizeHint() : QSize();
    return {content.width() + barWidth(), content.height()};
}

// As wide as the content needs (and the scroll bar, while it shows), as low as a few rows.
QSize DockScrollArea::minimumSizeHint() const {
    const QSize content = widget() ? widget()->minimumSizeHint() : QSize();
    const int rows = 4 * fontMetrics().height();
    return {content.width() + barWidth(), std::min(content.height(), rows)};
}

} // namespace batchfit
