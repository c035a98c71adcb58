#pragma once
// A memory figure the user measured on a real GPU, drawn on the report's chart next to the estimate.
#include <QString>
#include <cstdint>

namespace batchfit {

struct MeasuredPoint {
    std::int64_t batch = 0;
    std::uint64_t bytes = 0; ///< e.g. torch.cuda.max_memory_reserved() or nvidia-smi at the peak
    QString label;           ///< optional, e.g. "nvidia-smi"
};

} // namespace batchfit
