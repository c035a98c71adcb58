#pragma once
// What the estimation service delivers for one request: a ready Estimator and the data the chart needs.
#include "batchfit/estimate.h"
#include "batchfit/estimator.h"
#include "batchfit/gpu.h"

#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

namespace batchfit {

/// One delivered estimate: everything per batch size is asked of `estimator` on the GUI thread.
struct EstimationResult {
    std::uint64_t generation = 0;
    std::shared_ptr<const Estimator> estimator; ///< null when the model or set-up is invalid
    QString error;                              ///< the core's message when estimator is null
    GpuSpec gpu;
    MaxBatch maxBatch;
    std::uint64_t usableBytes = 0; ///< capacity minus the safety margin
    std::int64_t chartMax = 16;    ///< the chart's x range is 1..chartMax
    std::vector<SweepPoint> sweep; ///< stacked components per batch for the chart
    double lowerSeconds = 0;       ///< time spent in Estimator::create (for the status bar)
    std::int64_t sequence = 0; ///< a token-sequence model's length (batchfit::modelSequenceLength); 0: none
};

} // namespace batchfit
