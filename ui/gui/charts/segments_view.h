#pragma once
// The "Segments" tab, after PyTorch's memory viewer (Allocator State History): the caching allocator's
// allocated and reserved bytes through one step on top, and below, its segments at the moment picked.
#include "batchfit/allocator_replay.h"
#include "batchfit/estimate.h"

#include <QWidget>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

class QScrollArea;
class QToolButton;

namespace batchfit {

class AllocatorStrip;
class ElidingLabel;
class Estimator;
class SegmentMap;

/// Shows Estimator::replayStep at one batch: its samples (one per timeline point) in the strip and the
/// segments after the timeline point picked (first: the peak of the allocated bytes). Every figure is the
/// core's; this view only lays them out.
class SegmentsView : public QWidget {
    Q_OBJECT

public:
    explicit SegmentsView(QWidget* parent = nullptr);

    /// Replays the step at `batch` (on a GPU large enough, as Estimate::allocator) and shows the peak. With
    /// `oom` (the verdict's: the step does not fit the GPU chosen), a line above says where PyTorch would
    /// stop, and the strip marks that moment.
    void setStep(std::shared_ptr<const Estimator> estimator, std::int64_t batch,
                 const std::optional<OomReport>& oom = {});
    void clear();
    /// Shows the segments after timeline point `index` (clamped to the step).
    void setMoment(int index);
    int moment() const { return m_moment; }
    /// The timeline point where the allocated bytes peak (the moment shown first), or -1.
    int peakMoment() const { return m_peak; }
    int momentCount() const { return static_cast<int>(m_labels.size()); }
    /// The replay behind the segments shown (its samples and its snapshot).
    const ReplayResult& replay() const { return m_replay; }
    QString headerText() const;
    /// The out-of-memory line ("" when the step fits or none was given).
    QString oomText() const;
    SegmentMap* map() const { return m_map; }
    AllocatorStrip* strip() const { return m_strip; }

private:
    void showMoment(int index);
    void showProblem(const QString& message);

    std::shared_ptr<const Estimator> m_estimator;
    std::int64_t m_batch = 0;
    std::vector<QString> m_labels; ///< the timeline's op labels, one per sample
    ReplayResult m_replay;
    int m_peak = -1;
    int m_moment = -1;
    ElidingLabel* m_header = nullptr;
    ElidingLabel* m_oomNote = nullptr;
    QToolButton* m_toPeak = nullptr;
    AllocatorStrip* m_strip = nullptr;
    QScrollArea* m_scroll = nullptr;
    SegmentMap* m_map = nullptr;
};

} // namespace batchfit
