#include "report/report_data.h"

#include "batchfit/estimator.h"
#include "report/report_language.h"

#include <algorithm>

namespace batchfit {
namespace {

// The smallest 1-2-5 number >= n: the chart's last batch lands on a round tick.
std::int64_t niceCeil(std::int64_t n) {
    std::int64_t decade = 1;
    while (decade <= kMaxBatch / 10 && decade * 10 < n) decade *= 10;
    for (std::int64_t m : {1, 2, 5, 10})
        if (decade * m >= n) return std::min(decade * m, kMaxBatch);
    return kMaxBatch;
}

void addPoints(const Estimator& est, std::uint64_t capacity, std::int64_t from, std::int64_t to,
               std::int64_t step, std::vector<SweepPoint>& out) {
    if (from < 1 || to < from) return;
    if (auto pts = est.sweep(from, to, step, false, capacity))
        out.insert(out.end(), pts->begin(), pts->end());
}

// The chart's batches: 1, about 60 even steps up to a round number past the batch and the largest that fits,
// plus the batch itself and both sides of the largest (where the required line crosses the usable one).
// Each point carries its decision on the GPU (the plotted figure is what that GPU shows).
std::vector<SweepPoint> chartPoints(const Estimator& est, const Estimate& e, const Verdict& v,
                                    const MaxBatch& m, std::int64_t& last) {
    const std::uint64_t cap = v.capacityBytes;
    const std::int64_t far = m.capped || m.largest == 0 ? std::max<std::int64_t>(e.batch * 2, 8)
                                                        : std::max(e.batch, m.largest + 1);
    last = niceCeil(std::max<std::int64_t>(far + far / 5, 8)); // at least 1..10: a slope, not a point
    std::vector<SweepPoint> pts;
    const std::int64_t step = std::max<std::int64_t>(1, last / 60);
    addPoints(est, cap, step, last, step, pts);
    if (pts.empty()) { // too large to simulate that far: stop at the batch
        last = e.batch;
        addPoints(est, cap, std::max<std::int64_t>(1, e.batch / 60), e.batch,
                  std::max<std::int64_t>(1, e.batch / 60), pts);
    }
    addPoints(est, cap, 1, 1, 1, pts);
    if (m.largest > 0 && !m.capped) addPoints(est, cap, m.largest, std::min(m.largest + 1, last), 1, pts);
    pts.push_back(SweepPoint{e.batch, e.peakAllocatedBytes, e.requiredBytes, e.atPeak,
                             FitDecision{v.fits, v.cacheReleased, v.requiredBytes}});
    std::sort(pts.begin(), pts.end(),
              [](const SweepPoint& a, const SweepPoint& b) { return a.batch < b.batch; });
    pts.erase(std::unique(pts.begin(), pts.end(),
                          [](const SweepPoint& a, const SweepPoint& b) { return a.batch == b.batch; }),
              pts.end());
    return pts;
}

int peakIndex(const Estimate& e) {
    int best = -1;
    for (std::size_t i = 0; i < e.timeline.size(); ++i) {
        const auto& p = e.timeline[i];
        if (p.phase == e.peakPhase && p.label == e.peakLabel && p.live.total() == e.peakAllocatedBytes)
            return static_cast<int>(i);
        if (best < 0 || p.live.total() > e.timeline[static_cast<std::size_t>(best)].live.total())
            best = static_cast<int>(i);
    }
    return best;
}

} // namespace

Result<ReportData> buildReportData(const ReportRequest& request) {
    if (request.gpu.memoryBytes == 0) return makeError("the GPU '" + request.gpu.id + "' has no memory size");
    if (request.batch < 1 || request.batch > kMaxBatch)
        return makeError("batch must be between 1 and " + std::to_string(kMaxBatch) + ", got " +
                         std::to_string(request.batch));
    auto est = Estimator::create(request.model, request.config, request.gpu);
    if (!est) return est.error();
    auto e = est->estimate(request.batch, true);
    if (!e) return e.error();
    auto v = est->verdict(request.batch, request.gpu.memoryBytes);
    if (!v) return v.error();

    ReportData d;
    d.request = request;
    if (d.request.language.isEmpty()) d.request.language = defaultReportLanguage();
    if (!d.request.generatedAt.isValid()) d.request.generatedAt = QDateTime::currentDateTime();
    d.estimate = std::move(*e);
    d.verdict = *v;
    d.maxBatch = est->maxBatch(request.gpu.memoryBytes);
    d.sweep = chartPoints(*est, d.estimate, d.verdict, d.maxBatch, d.sweepMax);
    d.timelinePeak = peakIndex(d.estimate);
    for (const auto& l : d.estimate.layers) {
        if (l.op != "input") ++d.layerCount;
        if (l.savedBytes > 0) d.topLayers.push_back(l);
    }
    std::stable_sort(
        d.topLayers.begin(), d.topLayers.end(),
        [](const LayerActivation& a, const LayerActivation& b) { return a.savedBytes > b.savedBytes; });
    if (request.topLayers >= 0 && d.topLayers.size() > static_cast<std::size_t>(request.topLayers))
        d.topLayers.resize(static_cast<std::size_t>(request.topLayers));
    return d;
}

} // namespace batchfit
