#include "gui/charts/chart_data.h"

#include <algorithm>

namespace batchfit {

namespace {

std::int64_t ceilPow2(std::int64_t v) {
    std::int64_t p = 1;
    while (p < v && p < ChartData::kMaxRange) p *= 2;
    return p;
}

} // namespace

std::int64_t ChartData::range(const MaxBatch& maxBatch, std::int64_t batch) {
    std::int64_t want = 16;
    if (maxBatch.largest > 0 && !maxBatch.capped)
        want = std::max(want, maxBatch.largest + maxBatch.largest / 2 + 1);
    if (maxBatch.capped) want = kMaxRange;
    want = std::max(want, batch);
    return ceilPow2(std::min(want, kMaxRange));
}

std::vector<SweepPoint> ChartData::sample(const Estimator& estimator, std::int64_t range,
                                          std::uint64_t capacityBytes) {
    std::vector<SweepPoint> points;
    const std::int64_t step = std::max<std::int64_t>(1, range / kLinearPoints);
    if (auto lin = estimator.sweep(1, range, step, false, capacityBytes)) points = std::move(*lin);
    if (auto log = estimator.sweep(1, range, 2, true, capacityBytes))
        points.insert(points.end(), log->begin(), log->end());
    std::sort(points.begin(), points.end(),
              [](const SweepPoint& a, const SweepPoint& b) { return a.batch < b.batch; });
    points.erase(std::unique(points.begin(), points.end(),
                             [](const SweepPoint& a, const SweepPoint& b) { return a.batch == b.batch; }),
                 points.end());
    return points;
}

} // namespace batchfit
