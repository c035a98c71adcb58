#pragma once
// The what-if levers: set-up changes the user has not made, ranked by the largest batch each allows.
#include "batchfit/model.h"
#include "batchfit/training_config.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace batchfit {

struct Lever {
    std::string id; ///< "checkpointing", "amp-bf16", "adam8bit", "sgd-momentum", "accumulation", "offload",
                    ///< "activation-offload", "param-offload", "lora", "lora-no-dora", "freeze-backbone"
    std::string title;         ///< English, for the CLI; the UI translates by id
    std::string cost;          ///< "≈+33% compute"
    TrainingConfig config;     ///< the set-up with this lever applied
    std::int64_t maxBatch = 0; ///< largest batch per optimizer update (micro-batch × accumulation) that fits
    std::int64_t baselineMaxBatch = 0;
    /// When not even batch 1 fits the set-up: what batch 1 needs less with this lever (negative: more).
    std::int64_t savedBytesAtOne = 0;
    /// "activation-offload", "param-offload": all the host memory and PCIe bytes per step the set-up then
    /// costs at its largest batch (batch 1 when none fits).
    std::uint64_t hostBytes = 0;
    std::uint64_t transferBytes = 0;

    /// The largest micro-batch (the batch the slider shows) with this lever.
    std::int64_t maxMicroBatch() const {
        return maxBatch / std::max<std::int64_t>(1, config.accumulationSteps);
    }
};

/// True for levers that change what is trained (LoRA, a frozen backbone), not only how: ranked after the
/// others.
bool leverChangesTraining(const Lever& l);

/// True when `l` is worth showing: it makes batch 1 fit where nothing did, or raises the largest batch by at
/// least 1% (a gain that reads as "×1.00" is noise to a user).
bool leverHelps(const Lever& l);

/// What batch 1 needs with `config` on a GPU large enough (UINT64_MAX when it cannot be counted).
std::uint64_t requiredAtOne(const Model& model, const TrainingConfig& config, std::uint64_t cudaContextBytes);

/// Levers not already pulled, best first. Each is evaluated by a full estimator. When not even batch 1 fits,
/// each carries savedBytesAtOne, and they are ranked by it.
std::vector<Lever> rankLevers(const Model& model, const TrainingConfig& config, std::uint64_t capacityBytes,
                              std::uint64_t cudaContextBytes);

} // namespace batchfit
