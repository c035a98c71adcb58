#pragma once
// Picks the chart's batch range and asks the core for the sweep over it.
#include "batchfit/estimate.h"
#include "batchfit/estimator.h"

#include <cstdint>
#include <vector>

namespace batchfit {

/// The batch range shown in the memory chart and the points sampled in it.
class ChartData {
public:
    /// At most this many linear points, plus every power of two, are sampled.
    static constexpr int kLinearPoints = 256;
    /// Largest chart range: past it the chart would show nothing but the out-of-memory region.
    static constexpr std::int64_t kMaxRange = std::int64_t{1} << 20;

    /// A power of two >= 16 that shows the largest batch with room past it and contains `batch`.
    static std::int64_t range(const MaxBatch& maxBatch, std::int64_t batch);
    /// The core's sweep at linear steps over 1..range merged with the powers of two (good on both axes), each
    /// point with its decision on a GPU of `capacityBytes` (SweepPoint::fit).
    static std::vector<SweepPoint> sample(const Estimator& estimator, std::int64_t range,
                                          std::uint64_t capacityBytes);
};

} // namespace batchfit
