#include "gui/charts/segment_map.h"

#include "gui/charts/component_style.h"
#include "gui/estimation/byte_format.h"

#include <QEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <array>
#include <cmath>

namespace batchfit {

namespace {

constexpr int kMargin = 4;
constexpr int kWrapLines = 16; ///< the largest large-pool segment takes at most this many lines
constexpr int kExpandableKind = 100;
constexpr std::size_t kKinds = kComponentCount + 2; ///< the components, no component, free

std::size_t kindSlot(int kind) {
    return kind >= 0 ? static_cast<std::size_t>(kind) : static_cast<std::size_t>(kComponentCount - 1 - kind);
}

QString bytesWithCount(std::uint64_t b) {
    return SegmentMap::tr("%1 (%2 bytes)").arg(ByteFormat::bytes(b), ByteFormat::count(b));
}

} // namespace

SegmentMap::SegmentMap(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("segmentMap"));
    setMouseTracking(true);
    QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void SegmentMap::setSegments(std::vector<SegmentView> segments) {
    m_segments = std::move(segments);
    m_layout.width = -1;
    updateGeometry();
    update();
}

int SegmentMap::heightForWidth(int width) const {
    return computeLayout(width).height;
}

QSize SegmentMap::sizeHint() const {
    return {400, heightForWidth(width() > 0 ? width() : 400)};
}

void SegmentMap::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    m_layout.width = -1;
}

void SegmentMap::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::LanguageChange) {
        m_layout.width = -1;
        updateGeometry();
    }
}

const SegmentMap::Layout& SegmentMap::layout() const {
    const int w = width() > 0 ? width() : 400;
    if (m_layout.width != w) m_layout = computeLayout(w);
    return m_layout;
}

int SegmentMap::barCount() const {
    int n = 0;
    for (const Row& r : layout().rows)
        for (const Bar& b : r.bars) n += b.first ? 1 : 0;
    return n;
}

int SegmentMap::markCount() const {
    int n = 0;
    for (const Row& r : layout().rows) n += static_cast<int>(r.marks.size());
    return n;
}

void SegmentMap::placeBlocks(Row& row, int segment, std::uint64_t from, std::uint64_t to, double x0,
                             double pxPerByte) const {
    const SegmentView& s = m_segments[static_cast<std::size_t>(segment)];
    const double top = row.top + 1, height = fontMetrics().height() - 2;
    // Blocks narrower than a pixel gather into one mark until it is a pixel wide; it takes the colour of
    // the kind with the most bytes in it.
    std::array<double, kKinds> pendingBytes{};
    double pendingLeft = -1, pendingRight = -1;
    int pendingFirst = 0, pendingLast = 0;
    const auto flush = [&] {
        if (pendingLeft < 0) return;
        const auto most = std::max_element(pendingBytes.begin(), pendingBytes.end()) - pendingBytes.begin();
        const int kind = most < kComponentCount ? static_cast<int>(most)
                                                : (most == kComponentCount ? kUnknownKind : kFreeKind);
        row.marks.push_back({QRectF(pendingLeft, top, std::max(1.0, pendingRight - pendingLeft), height),
                             kind, segment, pendingFirst, pendingLast});
        pendingBytes.fill(0);
        pendingLeft = -1;
    };
    for (int b = 0; b < static_cast<int>(s.blocks.size()); ++b) {
        const SegmentBlock& block = s.blocks[static_cast<std::size_t>(b)];
        const std::uint64_t start = std::max(block.offset, from);
        const std::uint64_t end = std::min(block.offset + block.size, to);
        if (start >= end || !block.mapped) continue;
        const double left = x0 + static_cast<double>(start - from) * pxPerByte;
        const double right = x0 + static_cast<double>(end - from) * pxPerByte;
        const int kind = !block.allocated                                ? kFreeKind
                         : block.tag >= 0 && block.tag < kComponentCount ? block.tag
                                                                         : kUnknownKind;
        if (right - left >= 1.0) {
            flush();
            row.marks.push_back({QRectF(left, top, right - left, height), kind, segment, b, b});
            continue;
        }
        if (pendingLeft < 0) {
            pendingLeft = left;
            pendingFirst = b;
        }
        pendingRight = right;
        pendingLast = b;
        pendingBytes[kindSlot(kind)] += static_cast<double>(end - start); // a weight for the colour only
        if (pendingRight - pendingLeft >= 1.0) flush();
    }
    flush();
}

SegmentMap::Layout SegmentMap::computeLayout(int width) const {
    Layout l;
    l.width = width;
    const QFontMetrics fm = fontMetrics();
    const int pitch = fm.height() + 3;
    const int sw = fm.height() - 4;
    // The legend, one line where the width allows: the components' swatches side by side (the chart's legend
    // names them; a block's tooltip too), free space, and expandable segments when there are any.
    double x = kMargin, y = kMargin;
    const auto legend = [&](const std::vector<int>& kinds, const QString& text) {
        const double swatches = static_cast<double>(kinds.size()) * (sw + 1) + 3;
        const double w = swatches + fm.horizontalAdvance(text) + fm.averageCharWidth() * 2;
        if (x > kMargin && x + w > width - kMargin) {
            x = kMargin;
            y += pitch;
        }
        for (std::size_t k = 0; k < kinds.size(); ++k)
            l.legend.push_back(
                {QRectF(x + static_cast<double>(k) * (sw + 1), y + (fm.height() - sw) / 2.0, sw, sw),
                 {},
                 {},
                 kinds[k]});
        l.legend.back().textAt = QPointF(x + swatches, y + fm.ascent());
        l.legend.back().text = text;
        x += w;
    };
    legend({0, 1, 2, 3, 4}, tr("tensors, coloured by component"));
    legend({kFreeKind}, tr("free inside a segment (cached)"));
    if (std::any_of(m_segments.begin(), m_segments.end(), [](const SegmentView& s) { return s.expandable; }))
        legend({kExpandableKind}, tr("expandable: room to grow"));
    y += pitch + 2;

    const QString smallLabel = tr("small pool");
    const double labelWidth =
        std::max(fm.horizontalAdvance(QStringLiteral("000.00 MiB")), fm.horizontalAdvance(smallLabel)) + 8;
    const double barLeft = kMargin + labelWidth;
    const double barWidth = std::max(40.0, width - barLeft - kMargin - 2);

    // One scale for the large pool: the largest segment wraps onto at most kWrapLines lines, and most
    // segments (nine in ten) fit on one.
    std::vector<std::uint64_t> sizes;
    for (const SegmentView& s : m_segments)
        if (!s.smallPool) sizes.push_back(s.size);
    std::uint64_t perLine = 1;
    if (!sizes.empty()) {
        std::sort(sizes.begin(), sizes.end());
        const std::uint64_t largest = sizes.back();
        const std::uint64_t p90 = sizes[(sizes.size() - 1) * 9 / 10];
        perLine = std::max<std::uint64_t>({1, (largest + kWrapLines - 1) / kWrapLines, p90});
    }
    const double pxPerByte = barWidth / static_cast<double>(perLine);
    for (int i = 0; i < static_cast<int>(m_segments.size()); ++i) {
        const SegmentView& s = m_segments[static_cast<std::size_t>(i)];
        if (s.smallPool) continue;
        for (std::uint64_t from = 0; from < s.size || from == 0; from += perLine) {
            const std::uint64_t to = std::min(s.size, from + perLine);
            Row row;
            row.top = y;
            if (from == 0) row.label = ByteFormat::bytes(s.size);
            const double w = std::max(1.0, static_cast<double>(to - from) * pxPerByte);
            row.bars.push_back({QRectF(barLeft, y + 1, w, fm.height() - 2), i, from == 0, to >= s.size});
            placeBlocks(row, i, from, to, barLeft, pxPerByte);
            l.rows.push_back(std::move(row));
            y += pitch;
            if (to >= s.size) break;
        }
    }

    // The small pool: its segments (2 MiB each) side by side, on their own scale.
    std::uint64_t smallLargest = 0;
    for (const SegmentView& s : m_segments)
        if (s.smallPool) smallLargest = std::max(smallLargest, s.size);
    if (smallLargest > 0) {
        const double cell = std::clamp(barWidth / 8, 48.0, 160.0);
        const double smallPx = cell / static_cast<double>(smallLargest);
        Row row;
        row.top = y;
        row.label = smallLabel;
        double cx = barLeft;
        for (int i = 0; i < static_cast<int>(m_segments.size()); ++i) {
            const SegmentView& s = m_segments[static_cast<std::size_t>(i)];
            if (!s.smallPool) continue;
            const double w = std::max(1.0, static_cast<double>(s.size) * smallPx);
            if (cx > barLeft && cx + w > barLeft + barWidth) {
                l.rows.push_back(std::move(row));
                y += pitch;
                row = Row{};
                row.top = y;
                cx = barLeft;
            }
            row.bars.push_back({QRectF(cx, y + 1, w, fm.height() - 2), i, true, true});
            placeBlocks(row, i, 0, s.size, cx, smallPx);
            cx += w + 6;
        }
        l.rows.push_back(std::move(row));
        y += pitch;
    }
    l.height = static_cast<int>(std::ceil(y)) + kMargin;
    return l;
}

QColor SegmentMap::kindColor(int kind) const {
    if (kind >= 0 && kind < kComponentCount) return ComponentStyle::color(kind);
    if (kind == kUnknownKind) return ComponentStyle::color(ComponentStyle::kOverheadSlot).darker(140);
    return ComponentStyle::isDark(palette().color(QPalette::Window)) ? QColor(0x3A, 0x3A, 0x3A)
                                                                     : QColor(0xEC, 0xEC, 0xEC);
}

QBrush SegmentMap::hatch() const {
    return QBrush(ComponentStyle::isDark(palette().color(QPalette::Window)) ? QColor(0x80, 0x80, 0x80)
                                                                            : QColor(0xA8, 0xA8, 0xA8),
                  Qt::BDiagPattern);
}

void SegmentMap::paintEvent(QPaintEvent* event) {
    QPainter p(this);
    const QPalette pal = palette();
    p.fillRect(rect(), pal.color(QPalette::Base));
    const Layout& l = layout();
    const QFontMetrics fm = fontMetrics();
    const QColor text = pal.color(QPalette::Text);
    const QColor outline = pal.color(QPalette::Mid);
    const auto expandableMark = [&](const QRectF& r) {
        p.setPen(QPen(text, 1, Qt::DashLine));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r);
    };
    for (const LegendItem& item : l.legend) {
        if (item.kind == kExpandableKind) {
            expandableMark(item.swatch.adjusted(0.5, 0.5, -0.5, -0.5));
        } else {
            p.fillRect(item.swatch, kindColor(item.kind));
            if (item.kind == kFreeKind) p.fillRect(item.swatch, hatch());
        }
        if (item.text.isEmpty()) continue;
        p.setPen(text);
        p.drawText(item.textAt, item.text);
    }
    const QRect exposed = event->rect();
    const double rowHeight = fm.height() + 3;
    auto row = std::lower_bound(l.rows.begin(), l.rows.end(), exposed.top() - rowHeight,
                                [](const Row& r, double top) { return r.top < top; });
    for (; row != l.rows.end() && row->top <= exposed.bottom(); ++row) {
        if (!row->label.isEmpty()) {
            p.setPen(text);
            p.drawText(QRectF(kMargin, row->top, row->bars.front().rect.left() - kMargin - 6, rowHeight - 3),
                       Qt::AlignRight | Qt::AlignVCenter, row->label);
        }
        for (const Mark& m : row->marks) {
            p.fillRect(m.rect, kindColor(m.kind));
            if (m.kind == kFreeKind) p.fillRect(m.rect, hatch());
            if (m.rect.width() >= 4) { // a block's own edge, where there is room for it
                p.setPen(QPen(kindColor(m.kind).darker(135), 1));
                p.drawLine(m.rect.topLeft(), m.rect.bottomLeft());
            }
        }
        for (const Bar& b : row->bars) {
            p.setPen(QPen(outline, 1));
            p.setBrush(Qt::NoBrush);
            p.drawRect(b.rect);
            const SegmentView& s = m_segments[static_cast<std::size_t>(b.segment)];
            if (s.expandable && b.last) { // the address space after the mapped pages
                const double right = width() - kMargin - 2;
                if (right - b.rect.right() > 6)
                    expandableMark(QRectF(b.rect.right() + 3, b.rect.top(), right - b.rect.right() - 3,
                                          b.rect.height()));
            }
        }
    }
}

QString SegmentMap::blockText(int segment, int block) const {
    const SegmentView& s = m_segments[static_cast<std::size_t>(segment)];
    const SegmentBlock& b = s.blocks[static_cast<std::size_t>(block)];
    const QString name = !b.allocated                            ? tr("Free inside the segment")
                         : b.tag >= 0 && b.tag < kComponentCount ? ComponentStyle::name(b.tag)
                                                                 : tr("Allocated (no component)");
    QString out = QStringLiteral("<b>%1</b>: %2").arg(name.toHtmlEscaped(), bytesWithCount(b.size));
    if (b.allocated) out += QStringLiteral("<br>") + tr("requested %1").arg(bytesWithCount(b.requested));
    out += QStringLiteral("<br>") + tr("offset %1").arg(bytesWithCount(b.offset));
    return out;
}

QString SegmentMap::describeAt(const QPointF& pos) const {
    const Layout& l = layout();
    const double rowHeight = fontMetrics().height() + 3;
    auto row = std::upper_bound(l.rows.begin(), l.rows.end(), pos.y(),
                                [](double y, const Row& r) { return y < r.top; });
    if (row == l.rows.begin()) return {};
    --row;
    if (pos.y() >= row->top + rowHeight) return {};
    for (const Mark& m : row->marks) {
        if (pos.x() < m.rect.left() || pos.x() >= m.rect.right() + (m.rect.width() < 2 ? 1 : 0)) continue;
        const SegmentView& s = m_segments[static_cast<std::size_t>(m.segment)];
        QString head =
            (s.smallPool ? tr("Segment %1 of the small pool, %2") : tr("Segment %1 of the large pool, %2"))
                .arg(m.segment + 1)
                .arg(ByteFormat::bytes(s.size));
        if (s.expandable) head += QStringLiteral(" · ") + tr("expandable");
        if (m.firstBlock == m.lastBlock)
            return head + QStringLiteral("<br>") + blockText(m.segment, m.firstBlock);
        QString out = head + QStringLiteral("<br>") +
                      tr("%1 blocks narrower than a pixel here:").arg(m.lastBlock - m.firstBlock + 1);
        constexpr int kListed = 4;
        for (int b = m.firstBlock; b <= std::min(m.lastBlock, m.firstBlock + kListed - 1); ++b)
            out += QStringLiteral("<br>") + blockText(m.segment, b);
        if (m.lastBlock - m.firstBlock + 1 > kListed)
            out += QStringLiteral("<br>") + tr("… and %1 more").arg(m.lastBlock - m.firstBlock + 1 - kListed);
        return out;
    }
    for (const Bar& b : row->bars)
        if (b.rect.contains(pos)) {
            const SegmentView& s = m_segments[static_cast<std::size_t>(b.segment)];
            return tr("Segment %1: %2, %3 blocks")
                .arg(b.segment + 1)
                .arg(ByteFormat::bytes(s.size))
                .arg(s.blocks.size());
        }
    return {};
}

void SegmentMap::mouseMoveEvent(QMouseEvent* event) {
    const QString text = describeAt(event->position());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

} // namespace batchfit
