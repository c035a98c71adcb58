#pragma once
// A memory figure the user measured on a real GPU, drawn on the report's chart next to the estimate.
#include "batchfit/measurement.h"

#include <QString>
#include <cstdint>
#include <vector>

namespace batchfit {

struct MeasuredPoint {
    std::int64_t batch = 0;
    std::uint64_t bytes = 0;          ///< e.g. torch.cuda.max_memory_allocated() or nvidia-smi at the peak
    QString label;                    ///< optional, e.g. "nvidia-smi"
    std::uint64_t estimatedBytes = 0; ///< the estimate of the same figure at that batch (0: not given)
};

inline constexpr const char* kMeasuredPeakLabel = "max_memory_allocated";
inline constexpr const char* kMeasuredSumLabel = "parameters+gradients+optimizer states+saved activations";

/// Points from tools/torch_measure.py comparisons (batchfit/measurement.h): the charted figure, labelled
/// kMeasuredPeakLabel or kMeasuredSumLabel.
inline std::vector<MeasuredPoint> measuredPoints(const std::vector<MeasurementComparison>& comparisons) {
    std::vector<MeasuredPoint> out;
    for (const auto& c : comparisons)
        out.push_back({c.measured.batch, c.measuredBytes,
                       QString::fromLatin1(c.comparesPeak ? kMeasuredPeakLabel : kMeasuredSumLabel),
                       c.estimatedBytes});
    return out;
}

} // namespace batchfit
