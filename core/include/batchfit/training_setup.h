#pragma once
// The training set-up a model file can carry: GPU, batch and TrainingConfig (the "training" section of model
// format version 2, docs/model-format.md).
#include "batchfit/gpu.h"
#include "batchfit/result.h"
#include "batchfit/serving_config.h"
#include "batchfit/training_config.h"

#include <cstdint>
#include <string>

namespace batchfit {

struct TrainingSetup {
    std::string gpuId = "rtx-4090";   ///< a catalogue id, or "custom"
    std::uint64_t customGpuBytes = 0; ///< capacity when gpuId is "custom"
    std::int64_t batch = 1;           ///< the micro-batch shown
    TrainingConfig config;
    ServingConfig serving; ///< `batchfit-cli serve`: the engine and its settings

    bool operator==(const TrainingSetup&) const = default;
};

/// The set-up of a GPU, batch and configuration (a custom GPU keeps its capacity).
TrainingSetup makeTrainingSetup(const GpuSpec& gpu, std::int64_t batch, const TrainingConfig& config);
/// The GPU the set-up names: the catalogue entry, or a custom GPU of its capacity.
Result<GpuSpec> setupGpu(const TrainingSetup& setup);

} // namespace batchfit
