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
    std::vector<Lever> steps;       ///< in the order applied; each step's config includes the steps before it
    TrainingConfig config;          ///< the set-up with every step applied
    std::int64_t maxBatch = 0;      ///< largest batch per optimizer update with every step applied
    std::int64_t maxMicroBatch = 0; ///< largest micro-batch (the batch the slider shows) with every step
    std::int64_t target = 0;        ///< the micro-batch the plan is for
    TrainingConfig start;           ///< the set-up before the first step
    std::int64_t startMaxMicroBatch = 0; ///< its largest micro-batch
    bool reachesTarget = false;          ///< maxMicroBatch >= target
    /// When even every step together leaves batch 1 out of memory: what batch 1 needs with them (0
    /// otherwise).
    std::uint64_t requiredAtOneBytes = 0;
};

/// Greedy: applies the lever that gives the largest micro-batch (as rankLevers ranks them; gradient
/// accumulation is left out: it does not change what one micro-batch needs), re-ranks on the new set-up, and
/// stops once the largest micro-batch reaches `targetBatch` or no lever helps (leverHelps). While not even
/// batch 1 fits, it takes the lever that saves the most memory at batch 1 instead. At most 6 steps.
/// `targetBatch` is a micro-batch, as the slider's: the plan is judged by the batch it was asked for.
FitPlan planToFit(const Model& model, const TrainingConfig& config, std::uint64_t capacityBytes,
                  std::uint64_t cudaContextBytes, std::int64_t targetBatch);

/// The shortest start of `plan` (made for a larger target, or for kMaxBatch: every lever that helps) that
/// makes micro-batch `batch` fit, or all of it when none does: what the advisor shows for the batch on the
/// slider, so that its text follows the batch without planning again.
FitPlan planPrefix(const FitPlan& plan, std::int64_t batch);

/// One catalogue GPU with the largest batch that fits it.
struct GpuFit {
    GpuSpec gpu;
    std::int64_t maxBatch = 0; ///< the largest micro-batch (as --batch and the slider); 0: not even batch 1
};

/// Every catalogue GPU (its own capacity, CUDA context and cuBLAS workspace), least memory first.
std::vector<GpuFit> fitAcrossCatalogue(const Model& model, const TrainingConfig& config);

/// The entry with the least memory on which `targetBatch` fits, if any (fits sorted as fitAcrossCatalogue
/// does).
std::optional<GpuFit> smallestGpuThatFits(const std::vector<GpuFit>& fits, std::int64_t targetBatch);

} // namespace batchfit
