#include "gui/charts/segments_view.h"

#include "batchfit/estimator.h"
#include "gui/charts/allocator_strip.h"
#include "gui/charts/component_style.h"
#include "gui/charts/segment_map.h"
#include "gui/estimation/byte_format.h"
#include "gui/panels/eliding_label.h"

#include <QHBoxLayout>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace batchfit {

SegmentsView::SegmentsView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("segmentsView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->setSpacing(3);
    m_header = new ElidingLabel(this);
    m_header->setObjectName(QStringLiteral("segmentsHeader"));
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setPlainToolTip(
        tr("PyTorch's caching allocator right after this op, replayed on a GPU large enough (nothing is "
           "released): allocated counts the blocks handed to tensors, reserved the segments taken from "
           "cudaMalloc, free inside segments the free pieces of split segments (inactive_split_bytes), "
           "which the allocator cannot give back to the GPU."));
    m_toPeak = new QToolButton(this);
    m_toPeak->setText(tr("Peak"));
    m_toPeak->setToolTip(tr("Show the segments at the peak of the allocated bytes"));
    m_toPeak->setAutoRaise(true);
    auto* top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_header, 1);
    top->addWidget(m_toPeak);
    layout->addLayout(top);
    m_oomNote = new ElidingLabel(this);
    m_oomNote->setObjectName(QStringLiteral("segmentsOom"));
    m_oomNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QPalette warn = m_oomNote->palette();
    warn.setColor(QPalette::WindowText,
                  ComponentStyle::readableOn(ComponentStyle::oomColor(), warn.color(QPalette::Window)));
    m_oomNote->setPalette(warn);
    m_oomNote->hide();
    layout->addWidget(m_oomNote);
    m_strip = new AllocatorStrip(this);
    layout->addWidget(m_strip);
    m_map = new SegmentMap;
    m_map->setToolTip(
        tr("The segments at the moment picked above, in address order: each bar is as long as its size (long "
           "ones go on over further lines), its blocks in the colours of their component; the small pool's "
           "2 MiB segments sit side by side on a scale of their own. Hover a block for its size."));
    m_scroll = new QScrollArea(this);
    m_scroll->setObjectName(QStringLiteral("segmentsScroll"));
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_scroll->setWidget(m_map);
    m_scroll->setMinimumHeight(fontMetrics().height() * 2);
    layout->addWidget(m_scroll, 1);

    connect(m_strip, &AllocatorStrip::momentPicked, this, &SegmentsView::setMoment);
    connect(m_toPeak, &QToolButton::clicked, this, [this] { setMoment(m_peak); });
    clear();
}

void SegmentsView::clear() {
    m_estimator.reset();
    m_labels.clear();
    m_replay = {};
    m_peak = m_moment = -1;
    m_strip->clear();
    m_map->setSegments({});
    m_header->setFullText(tr("No replay: there is no estimate at this batch."));
    m_oomNote->setFullText(QString());
    m_oomNote->hide();
    m_toPeak->setEnabled(false);
}

void SegmentsView::showProblem(const QString& message) {
    clear();
    m_header->setFullText(message);
}

void SegmentsView::setStep(std::shared_ptr<const Estimator> estimator, std::int64_t batch,
                           const std::optional<OomReport>& oom) {
    if (!estimator) return clear();
    auto e = estimator->estimate(batch, true);
    if (!e) return showProblem(tr("No replay: %1").arg(QString::fromStdString(e.error().message)));
    auto samples = estimator->replayStep(batch);
    if (!samples)
        return showProblem(tr("No replay: %1").arg(QString::fromStdString(samples.error().message)));
    m_estimator = std::move(estimator);
    m_batch = batch;
    const std::size_t n = std::min(e->timeline.size(), samples->samples.size());
    m_labels.clear();
    std::vector<Phase> phases;
    for (std::size_t i = 0; i < n; ++i) {
        m_labels.push_back(QString::fromStdString(e->timeline[i].label));
        phases.push_back(e->timeline[i].phase);
    }
    samples->samples.resize(n);
    // The moment shown first: the first timeline point with the most allocated bytes.
    m_peak = -1;
    for (std::size_t i = 0; i < n; ++i)
        if (m_peak < 0 || samples->samples[i].allocatedBytes >
                              samples->samples[static_cast<std::size_t>(m_peak)].allocatedBytes)
            m_peak = static_cast<int>(i);
    m_strip->setSamples(std::move(samples->samples), std::move(phases), m_peak);
    m_toPeak->setEnabled(m_peak >= 0);
    if (oom) {
        // The core's message is PyTorch's, in English, as the user will meet it.
        const QString where = QString::fromStdString(oom->stepLabel);
        const QString message = QString::fromStdString(oom->message);
        QString line;
        if (where.isEmpty())
            line = tr("Does not fit this GPU: %1").arg(message);
        else if (oom->firstIteration)
            line =
                tr("Does not fit this GPU: the first training step stops at %1 with: %2").arg(where, message);
        else if (oom->lastBatch > 0)
            line = tr("Does not fit this GPU: the epoch's last batch (%1 samples) stops at %2 with: %3")
                       .arg(oom->lastBatch)
                       .arg(where, message);
        else
            line =
                tr("Does not fit this GPU: the steady-state step stops at %1 with: %2").arg(where, message);
        m_oomNote->setFullText(line);
        m_oomNote->setPlainToolTip(line);
        m_oomNote->show();
        m_strip->setOomMoment(oom->step && *oom->step < n ? static_cast<int>(*oom->step) : -1);
    } else {
        m_oomNote->setFullText(QString());
        m_oomNote->hide();
        m_strip->setOomMoment(-1);
    }
    m_moment = -1;
    showMoment(m_peak);
}

void SegmentsView::setMoment(int index) {
    if (!m_estimator || m_labels.empty()) return;
    index = std::clamp(index, 0, momentCount() - 1);
    if (index == m_moment) return;
    showMoment(index);
}

void SegmentsView::showMoment(int index) {
    if (index < 0) {
        m_map->setSegments({});
        m_header->setFullText(tr("No replay: the step has no timeline."));
        return;
    }
    auto r = m_estimator->replayStep(m_batch, std::nullopt, static_cast<std::size_t>(index));
    if (!r) return showProblem(tr("No replay: %1").arg(QString::fromStdString(r.error().message)));
    m_replay = std::move(*r);
    m_moment = index;
    m_strip->setMoment(index);
    m_map->setSegments(m_replay.segments);
    const std::size_t i = static_cast<std::size_t>(index);
    const AllocatorSample s = i < m_replay.samples.size() ? m_replay.samples[i] : AllocatorSample{};
    const int n = static_cast<int>(m_replay.segments.size());
    m_header->setFullText(tr("at %1: allocated %2, reserved %3, free inside segments %4 (inactive split), %5")
                              .arg(m_labels[i], ByteFormat::bytes(s.allocatedBytes),
                                   ByteFormat::bytes(s.reservedBytes),
                                   ByteFormat::bytes(s.inactiveSplitBytes),
                                   n == 1 ? tr("1 segment") : tr("%1 segments").arg(n)));
}

QString SegmentsView::headerText() const {
    return m_header->fullText();
}

QString SegmentsView::oomText() const {
    return m_oomNote->fullText();
}

} // namespace batchfit
