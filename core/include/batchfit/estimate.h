#pragma once
// What one estimate reports. Every figure is in bytes unless named otherwise; see docs/estimate-fields.md.
#include "batchfit/dtype.h"
#include "batchfit/shape.h"

#include <cstdint>
#include <string>
#include <vector>

namespace batchfit {

enum class Component { Parameters, Gradients, OptimizerStates, Activations, Temporaries };
inline constexpr int kComponentCount = 5;
enum class Phase { Setup, Forward, Backward, OptimizerStep };

std::string
componentName(Component c); ///< "parameters", "gradients", "optimizer_states", "activations", "temporaries"
std::string phaseName(Phase p); ///< "setup", "forward", "backward", "optimizer_step"

/// Live bytes per component (allocator-rounded, as max_memory_allocated counts them).
struct ComponentBytes {
    std::uint64_t bytes[kComponentCount] = {};
    std::uint64_t& operator[](Component c) { return bytes[static_cast<int>(c)]; }
    std::uint64_t operator[](Component c) const { return bytes[static_cast<int>(c)]; }
    std::uint64_t total() const;
};

/// One layer's share of the activations held for backward at the end of the forward.
struct LayerActivation {
    std::string path;              ///< "layer2[1].conv3"
    std::string op;                ///< "conv2d"
    std::uint64_t savedBytes = 0;  ///< storages first created by this layer and saved for backward
    std::uint64_t outputBytes = 0; ///< the layer's output tensor(s)
    Shape outputShape;             ///< per sample when outputBatched (the batch dimension left out)
    bool outputBatched = true;
    DType outputDType = DType::Float32;
    std::uint64_t parameterCount = 0; ///< parameters first used by this layer (tied ones once; no buffers)
    std::uint64_t trainableParameterCount = 0; ///< of those, the ones that train (not frozen)
    double shareOfPeak = 0;                    ///< savedBytes / peak allocated
};

/// One point of the step timeline: live bytes right after an op (forward, backward) or optimizer action.
struct TimelinePoint {
    Phase phase = Phase::Forward;
    std::string label; ///< "layer2[1].conv3 (conv2d)"
    ComponentBytes live;
};

/// One GPU of a data-parallel group (Estimate::parallel; group 1 without one).
struct ParallelEstimate {
    std::int64_t gpus = 1;                  ///< all GPUs of the set-up (TP x data parallel)
    std::int64_t group = 1;                 ///< GPUs the shards are split over
    std::int64_t rank = 0;                  ///< the rank simulated: the most loaded one
    std::uint64_t bucketBytes = 0;          ///< DDP buckets or DeepSpeed reduce buffers (in the gradients)
    std::uint64_t largestGatheredBytes = 0; ///< ZeRO-3 / FSDP: the largest unit's gathered parameters
    std::string largestGatheredUnit;        ///< "h[0]"
};

struct Estimate {
    std::int64_t batch = 0; ///< micro-batch size simulated

    // The peak of one training step (torch.cuda.max_memory_allocated()).
    std::uint64_t peakAllocatedBytes = 0;
    Phase peakPhase = Phase::Forward;
    std::string peakLabel; ///< op where the peak happens, e.g. "backward of fc (linear)"
    ComponentBytes atPeak; ///< components live at the peak (sum == peakAllocatedBytes)

    // Totals, independent of the moment.
    std::uint64_t parameterCount = 0;
    std::uint64_t trainableParameterCount = 0;
    std::uint64_t parameterBytes = 0;      ///< weights + buffers on the device
    std::uint64_t bufferBytes = 0;         ///< the buffers (running statistics, masks) in parameterBytes
    std::uint64_t gradientBytes = 0;       ///< .grad of every trainable parameter
    std::uint64_t optimizerStateBytes = 0; ///< optimizer.state tensors incl. master weights (device or host)
    std::uint64_t savedActivationBytes =
        0; ///< what autograd holds at the end of the forward (unique storages)
    std::uint64_t autocastWeightCopyBytes =
        0; ///< half copies of weights made by autocast (part of the above)

    // Overheads, kept apart from the components.
    std::uint64_t cudaContextBytes = 0;
    std::uint64_t allocatorReserveBytes = 0; ///< reserved minus allocated (segments, fragmentation)
    std::uint64_t reservedBytes = 0;         ///< torch.cuda.max_memory_reserved() estimate
    std::uint64_t requiredBytes = 0;         ///< what nvidia-smi would show at the peak: reserved + context
    std::uint64_t hostBytes = 0;             ///< host memory for offloaded optimizer states
    /// Optimizer states of bitsandbytes' paged optimizers in CUDA managed memory (part of
    /// optimizerStateBytes, not of the peak: torch's counters do not see them, and the driver moves their
    /// pages to host memory when the GPU runs short).
    std::uint64_t pagedStateBytes = 0;
    std::uint64_t quantizedParameterCount =
        0; ///< parameters stored as 4-bit or int8 (part of parameterCount)
    std::uint64_t quantizedParameterBytes = 0; ///< their packed bytes with quantization constants

    ParallelEstimate parallel; ///< the figures above are one GPU's: its shards and buffers

    std::vector<LayerActivation> layers; ///< in model order
    std::vector<TimelinePoint> timeline; ///< only when asked for
};

/// Estimate against a GPU.
struct Verdict {
    std::uint64_t capacityBytes = 0;
    std::uint64_t usableBytes = 0; ///< capacity minus the safety margin
    bool fits = false;
    std::int64_t headroomBytes = 0; ///< usable - required (negative: short by)
};

/// The exact solver's answer.
struct MaxBatch {
    std::int64_t largest = 0; ///< fits at largest, not at largest + 1; 0 if even batch 1 does not fit
    std::int64_t largestMultipleOf8 = 0;
    bool capped = false; ///< true if it still fits at kMaxBatch
    std::uint64_t requiredAtLargest = 0;
};

struct SweepPoint {
    std::int64_t batch = 0;
    std::uint64_t peakAllocatedBytes = 0;
    std::uint64_t requiredBytes = 0;
    ComponentBytes atPeak;
};

inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 31;

} // namespace batchfit
