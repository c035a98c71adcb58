#pragma once
// The top of the Segments view: the caching allocator's allocated and reserved bytes through one step (one
// replay sample per timeline point), the peak marked, and the moment whose segments are shown below.
#include "batchfit/allocator_replay.h"
#include "batchfit/estimate.h"

#include <QWidget>

class QPainter;
#include <vector>

namespace batchfit {

/// A strip chart that works as a slider: click or drag to pick a moment, or the arrow keys, Home and End.
class AllocatorStrip : public QWidget {
    Q_OBJECT

public:
    explicit AllocatorStrip(QWidget* parent = nullptr);

    /// The replay's samples and, for the phase marks and the tooltip, the timeline they belong to.
    void setSamples(std::vector<AllocatorSample> samples, std::vector<Phase> phases, int peak);
    void clear();
    /// Moves the cursor without emitting.
    void setMoment(int index);
    int moment() const { return m_moment; }
    /// Marks the moment where the step runs out of memory on the GPU chosen (-1: none).
    void setOomMoment(int index);
    int oomMoment() const { return m_oom; }
    int count() const { return static_cast<int>(m_samples.size()); }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    /// The user picked a moment (a timeline index).
    void momentPicked(int index);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void focusInEvent(QFocusEvent* event) override;
    void focusOutEvent(QFocusEvent* event) override;

private:
    QRectF plotRect() const;
    void drawLegend(QPainter& p, const QRectF& plot, const QColor& chip) const;
    double xAt(int index) const;
    int indexAt(double x) const;
    void pick(int index);

    std::vector<AllocatorSample> m_samples;
    std::vector<Phase> m_phases;
    std::uint64_t m_top = 1; ///< the largest reserved sample: the strip's full height
    int m_peak = -1;
    int m_moment = -1;
    int m_oom = -1;
};

} // namespace batchfit
