#include "gui/shell/window_geometry.h"

#include <algorithm>
#include <cmath>

namespace batchfit {

bool WindowGeometry::startMaximized(const QRect& available) {
    return available.width() < kSmallWidth || available.height() < kSmallHeight;
}

QRect WindowGeometry::firstStart(const QRect& available) {
    if (startMaximized(available)) return available;
    const int w = std::min(kMaxWidth, static_cast<int>(std::lround(available.width() * kShare)));
    const int h = std::min(kMaxHeight, static_cast<int>(std::lround(available.height() * kShare)));
    QRect r(0, 0, w, h);
    r.moveCenter(available.center());
    return r;
}

QRect WindowGeometry::clamped(const QRect& saved, const QRect& available) {
    QRect r = saved;
    r.setWidth(std::clamp(r.width(), 1, available.width()));
    r.setHeight(std::clamp(r.height(), 1, available.height()));
    if (r.right() > available.right()) r.moveRight(available.right());
    if (r.bottom() > available.bottom()) r.moveBottom(available.bottom());
    if (r.left() < available.left()) r.moveLeft(available.left());
    if (r.top() < available.top()) r.moveTop(available.top());
    return r;
}

} // namespace batchfit
