#pragma once
// Optimizer state and step() temporaries per parameter tensor. See docs/memory-model.md, "Optimizer states".
#include "batchfit/shape.h"
#include "batchfit/training_config.h"

#include <cstdint>

namespace batchfit {

struct OptimizerCost {
    std::uint64_t stateBytes = 0; ///< persistent state (incl. master weights) for this tensor
    std::uint64_t hostStepBytes =
        0;                        ///< part of stateBytes that is a per-tensor `step` scalar kept on the host
    std::uint64_t pagedBytes = 0; ///< part of stateBytes in CUDA managed memory (bitsandbytes' paged
                                  ///< optimizers), outside torch's allocator
    /// The state tensors torch allocates on the device for this parameter, one allocation each, as the
    /// optimizer's _init_group creates them (Adam: exp_avg, exp_avg_sq[, max_exp_avg_sq]; the fp32 master
    /// copy; 8-bit Adam's two absmax tensors beside its two states): they sum to stateBytes - hostStepBytes
    /// - pagedBytes.
    std::uint64_t tensors[6] = {};
    int tensorCount = 0;
    void add(std::uint64_t bytes) {
        stateBytes += bytes;
        if (bytes > 0 && tensorCount < 6) tensors[tensorCount++] = bytes;
    }
};

/// `paramDtypeSize`: bytes per element of the parameter (2 for half weights).
OptimizerCost optimizerCost(const TrainingConfig& c, const Shape& shape, std::uint64_t numel,
                            int paramDtypeSize);
/// Bytes per element of optimizer states under the precision.
int stateDtypeSize(const TrainingConfig& c, int paramDtypeSize);
/// Temporaries step() allocates per parameter tensor, each of that tensor's state-dtype size: the for-loop
/// holds them for one tensor at a time, foreach for every tensor of the list at once (fused: none).
double stepTemporaryFactor(const TrainingConfig& c);
/// FSDP with half compute weights (mixed-bf16/mixed-fp16 as MixedPrecision(param_dtype=half)): the shards
/// are the full-precision parameters the optimizer steps, so there are no separate master weights, and the
/// sharded gradients are cast to full precision (_flat_param.py, _runtime_utils.py; FSDP2
/// foreach_reduce_scatter).
bool fsdpMixedPrecision(const TrainingConfig& c);
/// Bytes shared by all tensors (bitsandbytes quantization maps).
std::uint64_t optimizerSharedBytes(const TrainingConfig& c);

} // namespace batchfit
