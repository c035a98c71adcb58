#pragma once
// When no single lever is enough: levers combined, and which catalogue GPUs fit the set-up.
#include "batchfit/gpu.h"
#include "batchfit/model.h"
#include "batchfit/training_config.h"
#include "batchfit/what_if.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace batchfit {

/// Levers applied one after another.
struct FitPlan {
    std::vector<Lever> steps;  ///< in the order applied; each step's config includes the steps before it
    TrainingConfig config;     ///< the set-up with every step applied
    std::int64_t maxBatch = 0; ///< largest batch per optimizer update with every step applied
    bool reachesTarget = false;
};

/// Greedy: applies the lever that gives the largest batch (as rankLevers ranks them), re-ranks on the new
/// set-up, and stops once the largest batch reaches `targetBatch` or no lever helps (leverHelps). While not
/// even batch 1 fits, it takes the lever that saves the most memory at batch 1 instead. At most 6 steps.
FitPlan planToFit(const Model& model, const TrainingConfig& config, std::uint64_t capacityBytes,
                  std::uint64_t cudaContextBytes, std::int64_t targetBatch);

/// One catalogue GPU with the largest batch that fits it.
struct GpuFit {
    GpuSpec gpu;
    std::int64_t maxBatch = 0; ///< 0: not even batch 1
};

/// Every catalogue GPU (its own capacity, CUDA context and cuBLAS workspace), least memory first.
std::vector<GpuFit> fitAcrossCatalogue(const Model& model, const TrainingConfig& config);

/// The entry with the least memory on which `targetBatch` fits, if any (fits sorted as fitAcrossCatalogue
/// does).
std::optional<GpuFit> smallestGpuThatFits(const std::vector<GpuFit>& fits, std::int64_t targetBatch);

} // namespace batchfit
