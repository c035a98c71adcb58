#include "gui/panels/budget_bar.h"

#include "gui/charts/component_style.h"
#include "gui/estimation/byte_format.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace batchfit {

BudgetBar::BudgetBar(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setToolTip(baseTip());
}

QString BudgetBar::baseTip() {
    return tr("The memory budget at the current batch: what is live at the peak, then the overheads, against "
              "the usable memory (dashed) and the capacity.");
}

QSize BudgetBar::sizeHint() const {
    return {400, fontMetrics().height() * 3 + 8};
}
QSize BudgetBar::minimumSizeHint() const {
    return {160, fontMetrics().height() * 3 + 8};
}

void BudgetBar::setBudget(const Estimate& e, const Verdict& v) {
    for (int c = 0; c < kComponentCount; ++c) m_bytes[static_cast<std::size_t>(c)] = e.atPeak.bytes[c];
    m_bytes[5] = e.allocatorReserveBytes;
    m_bytes[6] = e.cudaContextBytes;
    m_required = e.requiredBytes;
    // Fits only by releasing the cache: the bar shows what this GPU needs, the verdict's figures.
    if (v.fits && v.cacheReleased) {
        m_required = v.requiredBytes;
        m_bytes[5] = v.reserveBytes;
    }
    m_capacity = v.capacityBytes;
    m_usable = v.usableBytes;
    m_valid = true;
    // Out of memory on the whole GPU: PyTorch's message for the first allocation that fails in the replay.
    QString tip = baseTip();
    if (v.oom)
        tip += QStringLiteral("<br><br>") + tr("PyTorch would stop with:") +
               QStringLiteral("<br><tt>%1</tt>").arg(QString::fromStdString(v.oom->message).toHtmlEscaped());
    else if (v.fits && v.cacheReleased)
        tip += QStringLiteral("<br><br>") +
               tr("On a GPU large enough the step would need %1; on this one a cudaMalloc that fails "
                  "makes it free its cached segments and try again, so %2 is enough here (slower: each retry "
                  "synchronizes the GPU).")
                   .arg(ByteFormat::bytes(e.requiredBytes), ByteFormat::bytes(v.requiredBytes));
    setToolTip(tip);
    update();
}

void BudgetBar::clear() {
    m_valid = false;
    setToolTip(baseTip());
    update();
}

QRectF BudgetBar::barRect() const {
    const int h = fontMetrics().height();
    return QRectF(1, 2, width() - 2, h + 6);
}

double BudgetBar::scale() const {
    const double full = static_cast<double>(std::max(m_capacity, m_required)) * 1.02;
    return full > 0 ? barRect().width() / full : 0.0;
}

QString BudgetBar::segmentName(int i) const {
    if (i < kComponentCount) return ComponentStyle::name(i);
    return i == 5 ? tr("Allocator reserve") : tr("CUDA context");
}

int BudgetBar::segmentAt(double x) const {
    double left = barRect().left();
    for (int i = 0; i < kSegments; ++i) {
        const double w = static_cast<double>(m_bytes[static_cast<std::size_t>(i)]) * scale();
        if (x >= left && x < left + w) return i;
        left += w;
    }
    return -1;
}

void BudgetBar::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QRectF bar = barRect();
    const QColor text = palette().color(QPalette::WindowText);
    QColor track = palette().color(QPalette::Base);
    p.setPen(QPen(palette().color(QPalette::Mid), 1));
    p.setBrush(track);
    p.drawRoundedRect(bar, 3, 3);
    if (!m_valid) return;

    const double s = scale();
    double left = bar.left();
    p.setPen(Qt::NoPen);
    for (int i = 0; i < kSegments; ++i) {
        const double w = static_cast<double>(m_bytes[static_cast<std::size_t>(i)]) * s;
        QColor c = ComponentStyle::color(std::min(i, static_cast<int>(ComponentStyle::kOverheadSlot)));
        if (i == 6) c = c.darker(125);
        p.setBrush(c);
        p.drawRect(QRectF(left, bar.top() + 1, w, bar.height() - 2));
        left += w;
    }
    const double usableX = bar.left() + static_cast<double>(m_usable) * s;
    const double capX = bar.left() + static_cast<double>(m_capacity) * s;
    p.setPen(QPen(text, 2, Qt::DashLine));
    p.drawLine(QPointF(usableX, bar.top() - 2), QPointF(usableX, bar.bottom() + 2));
    p.setPen(QPen(text, 2));
    p.drawLine(QPointF(capX, bar.top() - 2), QPointF(capX, bar.bottom() + 2));

    const QFontMetrics fm = fontMetrics();
    const double y = bar.bottom() + fm.ascent() + 3;
    p.setPen(text);
    const QString req = tr("needs %1").arg(ByteFormat::bytes(m_required));
    const QString cap = tr("capacity %1").arg(ByteFormat::bytes(m_capacity));
    const QString use = tr("usable %1").arg(ByteFormat::bytes(m_usable));
    const double reqRight = bar.left() + fm.horizontalAdvance(req) + 12;
    p.drawText(QPointF(bar.left(), y), req);
    // The capacity label ends at its mark, or starts after it when the mark is too far left.
    const double capW = fm.horizontalAdvance(cap);
    double capLeft = std::min(capX - capW, bar.right() - capW);
    if (capLeft < reqRight) capLeft = std::max(reqRight, capX + 6);
    if (capLeft + capW <= bar.right() + 1) p.drawText(QPointF(capLeft, y), cap);
    // The usable label sits left of its mark when there is room between the other two labels.
    const double useW = fm.horizontalAdvance(use);
    const double hi = (capLeft > capX ? bar.right() : capLeft) - useW - 12;
    const double useLeft = std::max(reqRight, std::min(usableX - useW - 8, hi));
    const bool clearOfCap = useLeft + useW + 12 <= capLeft || useLeft >= capLeft + capW + 12;
    if (useLeft <= hi && clearOfCap) p.drawText(QPointF(useLeft, y), use);
}

void BudgetBar::mouseMoveEvent(QMouseEvent* event) {
    if (!m_valid) return;
    const int i = segmentAt(event->position().x());
    if (i < 0) {
        QToolTip::showText(event->globalPosition().toPoint(), toolTip(), this);
        return;
    }
    const QString explanation =
        i < kComponentCount ? ComponentStyle::explanation(i) : ComponentStyle::explanation(5);
    QToolTip::showText(
        event->globalPosition().toPoint(),
        QStringLiteral("<b>%1</b>: %2<br>%3")
            .arg(segmentName(i), ByteFormat::bytes(m_bytes[static_cast<std::size_t>(i)]), explanation),
        this);
}

} // namespace batchfit
