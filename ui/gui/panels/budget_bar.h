#pragma once
// A stacked bar of the memory budget at one batch size against the GPU's capacity and usable line.
#include "batchfit/estimate.h"

#include <QWidget>
#include <array>

namespace batchfit {

/// Paints the components at the peak plus the overheads as one bar, with the usable and capacity marks.
class BudgetBar : public QWidget {
    Q_OBJECT

public:
    explicit BudgetBar(QWidget* parent = nullptr);

    /// Shows the figures of an estimate and its verdict (from the core).
    void setBudget(const Estimate& estimate, const Verdict& verdict);
    void clear();

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    static constexpr int kSegments = 7; ///< five components, allocator reserve, CUDA context
    QRectF barRect() const;
    double scale() const;
    int segmentAt(double x) const;
    QString segmentName(int i) const;
    static QString baseTip();

    std::array<std::uint64_t, kSegments> m_bytes{};
    std::uint64_t m_required = 0;
    std::uint64_t m_capacity = 0;
    std::uint64_t m_usable = 0;
    bool m_valid = false;
};

} // namespace batchfit
