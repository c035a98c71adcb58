#include "gui/charts/allocator_strip.h"

#include "gui/charts/component_style.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace batchfit {

namespace {

QString phaseTitle(Phase p) {
    switch (p) {
    case Phase::Setup:
        return AllocatorStrip::tr("setup");
    case Phase::Forward:
        return AllocatorStrip::tr("forward");
    case Phase::Backward:
        return AllocatorStrip::tr("backward");
    case Phase::OptimizerStep:
        return AllocatorStrip::tr("optimizer step");
    }
    return {};
}

/// The colours of the strip: reserved in the overhead grey, allocated in a slate that is none of the
/// components' (the blocks below carry those).
QColor reservedColor() {
    return ComponentStyle::color(ComponentStyle::kOverheadSlot);
}
QColor allocatedColor() {
    return QColor(0x45, 0x5A, 0x64);
}

} // namespace

AllocatorStrip::AllocatorStrip(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("allocatorStrip"));
    setFocusPolicy(Qt::StrongFocus);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setToolTip(tr("The caching allocator through one step: allocated bytes (tensors, in whole blocks) and "
                  "reserved bytes (the segments it holds). Click or drag, or use the arrow keys, to see the "
                  "segments at a moment."));
}

QSize AllocatorStrip::sizeHint() const {
    return {400, fontMetrics().height() * 3 + 6};
}
QSize AllocatorStrip::minimumSizeHint() const {
    return {120, fontMetrics().height() * 3 + 6};
}

void AllocatorStrip::setSamples(std::vector<AllocatorSample> samples, std::vector<Phase> phases, int peak) {
    m_samples = std::move(samples);
    m_phases = std::move(phases);
    m_phases.resize(m_samples.size(), Phase::Forward);
    m_top = 1;
    for (const AllocatorSample& s : m_samples)
        m_top = std::max({m_top, s.reservedBytes, s.allocatedBytes}); // the scale: no arithmetic on bytes
    m_peak = peak;
    m_moment = std::clamp(m_moment, 0, std::max(0, count() - 1));
    update();
}

void AllocatorStrip::clear() {
    m_samples.clear();
    m_phases.clear();
    m_peak = m_moment = m_oom = -1;
    update();
}

void AllocatorStrip::setOomMoment(int index) {
    m_oom = index;
    update();
}

void AllocatorStrip::setMoment(int index) {
    m_moment = index;
    update();
}

QRectF AllocatorStrip::plotRect() const {
    return QRectF(1, 1, width() - 2, height() - 2);
}

double AllocatorStrip::xAt(int index) const {
    const QRectF r = plotRect();
    if (count() <= 1) return r.left();
    return r.left() + r.width() * index / (count() - 1);
}

int AllocatorStrip::indexAt(double x) const {
    const QRectF r = plotRect();
    if (count() <= 1 || r.width() <= 0) return 0;
    return std::clamp(static_cast<int>(std::lround((x - r.left()) / r.width() * (count() - 1))), 0,
                      count() - 1);
}

void AllocatorStrip::pick(int index) {
    if (count() == 0) return;
    index = std::clamp(index, 0, count() - 1);
    if (index == m_moment) return;
    m_moment = index;
    update();
    emit momentPicked(index);
}

void AllocatorStrip::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QPalette pal = palette();
    const QRectF r = plotRect();
    p.fillRect(r, pal.color(QPalette::Base));
    p.setPen(QPen(pal.color(QPalette::Mid), 1));
    p.drawRect(r.adjusted(0, 0, -1, -1));
    if (hasFocus()) {
        p.setPen(QPen(pal.color(QPalette::Highlight), 1, Qt::DotLine));
        p.drawRect(rect().adjusted(0, 0, -1, -1));
    }
    const QFontMetrics fm = fontMetrics();
    const QColor text = pal.color(QPalette::WindowText);
    const QColor chip = [&] {
        QColor c = pal.color(QPalette::Base);
        c.setAlpha(210);
        return c;
    }();
    if (m_samples.empty()) return drawLegend(p, r, chip);

    // Reserved behind, allocated in front: one point per timeline point.
    const auto y = [&](std::uint64_t bytes) {
        return r.bottom() - 1 - (r.height() - 3) * static_cast<double>(bytes) / static_cast<double>(m_top);
    };
    for (int layer = 0; layer < 2; ++layer) {
        QPainterPath path(QPointF(r.left(), r.bottom() - 1));
        for (int i = 0; i < count(); ++i) {
            const AllocatorSample& s = m_samples[static_cast<std::size_t>(i)];
            const double yi = y(layer == 0 ? s.reservedBytes : s.allocatedBytes);
            if (count() == 1) path.lineTo(r.left(), yi); // one point: a level line across
            path.lineTo(count() == 1 ? r.right() : xAt(i), yi);
        }
        path.lineTo(count() == 1 ? r.right() : xAt(count() - 1), r.bottom() - 1);
        path.closeSubpath();
        const QColor c = layer == 0 ? reservedColor() : allocatedColor();
        p.setPen(QPen(c.darker(130), 1));
        p.setBrush(c);
        p.drawPath(path);
    }
    // The phases: a dotted mark where one begins, its name in a chip at the bottom where there is room.
    double nameRight = r.left();
    for (int i = 0; i < count(); ++i) {
        const Phase ph = m_phases[static_cast<std::size_t>(i)];
        if (i > 0 && ph == m_phases[static_cast<std::size_t>(i - 1)]) continue;
        const double x = xAt(i);
        if (i > 0) {
            p.setPen(QPen(pal.color(QPalette::Base), 1, Qt::DotLine));
            p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()));
        }
        const QString name = phaseTitle(ph);
        const double nx = std::max(x + 3, nameRight);
        const double nw = fm.horizontalAdvance(name) + 6;
        if (nx + nw <= r.right() - 2 && fm.height() + 4 <= r.height()) {
            const QRectF box(nx, r.bottom() - fm.height() - 3, nw, fm.height());
            p.setPen(Qt::NoPen);
            p.setBrush(chip);
            p.drawRoundedRect(box, 3, 3);
            p.setPen(text);
            p.drawText(box, Qt::AlignCenter, name);
            nameRight = nx + nw + 4;
        }
    }
    // The moment picked, then the peak over it (dashes: both stay visible when they meet).
    if (m_moment >= 0 && m_moment < count()) {
        const double x = xAt(m_moment);
        p.setPen(QPen(text, 2));
        p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()));
        p.setBrush(text);
        p.setPen(Qt::NoPen);
        p.setRenderHint(QPainter::Antialiasing);
        const QPointF tri[] = {{x - 5, r.top()}, {x + 5, r.top()}, {x, r.top() + 6}};
        p.drawPolygon(tri, 3);
        p.setRenderHint(QPainter::Antialiasing, false);
    }
    if (m_peak >= 0 && m_peak < count()) {
        const double x = xAt(m_peak);
        p.setPen(QPen(ComponentStyle::readableOn(ComponentStyle::oomColor(), pal.color(QPalette::Base)), 2,
                      Qt::DashLine));
        p.drawLine(QPointF(x, r.top() + 6), QPointF(x, r.bottom()));
    }
    // Where the GPU chosen runs out: a solid line and a chip, below the legend's row.
    if (m_oom >= 0 && m_oom < count()) {
        const double x = xAt(m_oom);
        const QColor c = ComponentStyle::readableOn(ComponentStyle::oomColor(), pal.color(QPalette::Base));
        p.setPen(QPen(c, 2));
        p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()));
        const QString t = tr("out of memory");
        const double w = fm.horizontalAdvance(t) + 8;
        const double left = x + 3 + w <= r.right() - 2 ? x + 3 : std::max(r.left() + 2, x - 3 - w);
        const QRectF box(left, r.top() + fm.height() + 6, w, fm.height());
        if (box.bottom() <= r.bottom() - 2) {
            p.setPen(Qt::NoPen);
            p.setBrush(chip);
            p.drawRoundedRect(box, 3, 3);
            p.setPen(c);
            p.drawText(box, Qt::AlignCenter, t);
        }
    }
    drawLegend(p, r, chip);
}

void AllocatorStrip::drawLegend(QPainter& p, const QRectF& r, const QColor& chip) const {
    // A chip in a top corner, the right one unless the moment or the peak is under it (the reserved level
    // runs along the top, flat after the first step).
    const QFontMetrics fm = fontMetrics();
    const QPalette pal = palette();
    const QString alloc = tr("allocated"), res = tr("reserved"), peak = tr("peak allocated");
    const int sw = fm.height() * 2 / 3, gap = fm.averageCharWidth() * 2;
    const double w = 3 * (sw + 4) + fm.horizontalAdvance(alloc) + fm.horizontalAdvance(res) +
                     fm.horizontalAdvance(peak) + 2 * gap + 8;
    QRectF box(r.right() - w - 3, r.top() + 3, w, fm.height());
    const auto covers = [&](int index) {
        return index >= 0 && index < count() && xAt(index) >= box.left() - 6 && xAt(index) <= box.right() + 6;
    };
    if (covers(m_moment) || covers(m_peak)) box.moveLeft(r.left() + 3); // clear of the marks
    if (covers(m_moment) || covers(m_peak)) box.moveLeft(r.right() - w - 3);
    p.setPen(Qt::NoPen);
    p.setBrush(chip);
    p.drawRoundedRect(box, 3, 3);
    double x = box.left() + 4;
    const double top = box.top() + (fm.height() - sw) / 2.0;
    const auto item = [&](const QColor& c, const QString& label, bool line) {
        if (line) {
            p.setPen(QPen(ComponentStyle::readableOn(c, pal.color(QPalette::Base)), 2, Qt::DashLine));
            p.drawLine(QPointF(x + sw / 2.0, top), QPointF(x + sw / 2.0, top + sw));
        } else {
            p.fillRect(QRectF(x, top, sw, sw), c);
        }
        p.setPen(pal.color(QPalette::Text));
        p.drawText(QPointF(x + sw + 4, box.top() + fm.ascent()), label);
        x += sw + 4 + fm.horizontalAdvance(label) + gap;
    };
    item(allocatedColor(), alloc, false);
    item(reservedColor(), res, false);
    item(ComponentStyle::oomColor(), peak, true);
}

void AllocatorStrip::focusInEvent(QFocusEvent* event) {
    QWidget::focusInEvent(event);
    update();
}

void AllocatorStrip::focusOutEvent(QFocusEvent* event) {
    QWidget::focusOutEvent(event);
    update();
}

void AllocatorStrip::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) pick(indexAt(event->position().x()));
}

void AllocatorStrip::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) pick(indexAt(event->position().x()));
}

void AllocatorStrip::keyPressEvent(QKeyEvent* event) {
    const int page = std::max(1, count() / 20);
    switch (event->key()) {
    case Qt::Key_Left:
        pick(m_moment - 1);
        break;
    case Qt::Key_Right:
        pick(m_moment + 1);
        break;
    case Qt::Key_PageUp:
        pick(m_moment - page);
        break;
    case Qt::Key_PageDown:
        pick(m_moment + page);
        break;
    case Qt::Key_Home:
        pick(0);
        break;
    case Qt::Key_End:
        pick(count() - 1);
        break;
    default:
        QWidget::keyPressEvent(event);
    }
}

} // namespace batchfit
