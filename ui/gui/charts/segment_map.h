#pragma once
// The lower part of the Segments view: the caching allocator's segments at one moment, each a bar as long as
// its size (long ones wrap onto further lines), blocks coloured by component, free space inside segments
// hatched, the small pool's 2 MiB segments side by side on a scale of their own.
#include "batchfit/allocator_replay.h"

#include <QRectF>
#include <QWidget>
#include <vector>

namespace batchfit {

/// Paints a snapshot (ReplayResult::segments) with QPainter. Blocks narrower than a pixel are merged into one
/// mark of the colour with the most bytes, so a model with thousands of blocks paints in one pass.
class SegmentMap : public QWidget {
    Q_OBJECT

public:
    explicit SegmentMap(QWidget* parent = nullptr);

    void setSegments(std::vector<SegmentView> segments);
    const std::vector<SegmentView>& segments() const { return m_segments; }
    /// Segments that have a bar in the current layout (each segment has one, wrapped or not).
    int barCount() const;
    /// Marks painted (blocks, merged runs and free pieces) in the current layout.
    int markCount() const;

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;

    /// What a block at `pos` is, as the tooltip says it (empty where there is none).
    QString describeAt(const QPointF& pos) const;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    /// kind: a Component index, kUnknownKind for an allocation without one, kFreeKind for free space.
    static constexpr int kUnknownKind = -1, kFreeKind = -2;
    struct Mark {
        QRectF rect;
        int kind = kFreeKind;
        int segment = 0;
        int firstBlock = 0, lastBlock = 0; ///< more than one: blocks merged under a pixel
    };
    struct Bar {
        QRectF rect;
        int segment = 0;
        bool first = true; ///< the segment's first line (the others continue it)
        bool last = true;
    };
    struct Row {
        double top = 0;
        QString label;
        std::vector<Bar> bars;
        std::vector<Mark> marks;
    };
    struct LegendItem {
        QRectF swatch;
        QPointF textAt;
        QString text;
        int kind = 0; ///< as Mark::kind; 100: an expandable segment's mark
    };
    struct Layout {
        int width = -1;
        int height = 0;
        std::vector<LegendItem> legend;
        std::vector<Row> rows;
    };

    Layout computeLayout(int width) const;
    void placeBlocks(Row& row, int segment, std::uint64_t from, std::uint64_t to, double x0,
                     double pxPerByte) const;
    const Layout& layout() const;
    QColor kindColor(int kind) const;
    QBrush hatch() const;
    QString blockText(int segment, int block) const;

    std::vector<SegmentView> m_segments;
    mutable Layout m_layout;
};

} // namespace batchfit
