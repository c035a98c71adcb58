#pragma once
// What one estimate reports. Every figure is in bytes unless named otherwise; see docs/estimate-fields.md.
#include "batchfit/allocator_replay.h"
#include "batchfit/dtype.h"
#include "batchfit/non_torch_memory.h"
#include "batchfit/shape.h"

#include <cstdint>
#include <optional>
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
    std::uint64_t reservedBytes = 0; ///< the caching allocator's reserved bytes after it (the replay)
};

/// What the caching-allocator replay of the step gives (Estimate::allocator).
struct AllocatorEstimate {
    bool simulated = false; ///< false: reserved comes from the fragmentation_fraction override
    std::string allocConf;  ///< the PYTORCH_CUDA_ALLOC_CONF replayed, canonical ("" = torch's default)
    /// max_memory_allocated() on the GPU: as peakAllocatedBytes plus the slack of blocks handed out whole
    /// (a large-pool block may exceed its request by up to 1 MiB).
    std::uint64_t peakAllocatedBytes = 0;
    std::uint64_t peakReservedBytes = 0;      ///< max_memory_reserved() on a GPU large enough
    std::uint64_t peakInactiveSplitBytes = 0; ///< free pieces of split segments (never returned)
    std::int64_t peakSegments = 0;            ///< most segments at once
    std::int64_t deviceAllocs = 0;            ///< cudaMalloc calls (or page maps) in the replay
    int iterations = 1;                       ///< steps replayed (2: the steady state after a first step)
    /// With TrainingConfig::replaySequences: each replayed step's sequence length, in order (the last is the
    /// model's own, the step estimated); empty otherwise.
    std::vector<std::int64_t> sequences;
    /// With TrainingConfig::epochSamples: the batch size of the epoch's last step, replayed before the step
    /// estimated (0: the epoch divides into full batches, none is replayed).
    std::int64_t lastBatch = 0;
    /// cuDNN's convolution workspaces (elastic, docs/memory-model.md 6.2): the largest one the step asks for,
    /// and max_memory_reserved() when every one falls back to an engine without workspace (the band's low
    /// end; peakReservedBytes is its typical end). Both 0 without convolutions.
    std::uint64_t largestWorkspaceBytes = 0;
    std::uint64_t leastReservedBytes = 0;
};

/// One GPU of a data-parallel group (Estimate::parallel; group 1 without one).
struct ParallelEstimate {
    std::int64_t gpus = 1;                  ///< all GPUs of the set-up (TP x data parallel)
    std::int64_t group = 1;                 ///< GPUs the shards are split over
    std::int64_t rank = 0;                  ///< the rank simulated: the most loaded one
    std::uint64_t bucketBytes = 0;          ///< DDP buckets or DeepSpeed reduce buffers (in the gradients)
    std::uint64_t largestGatheredBytes = 0; ///< ZeRO-3 / FSDP: the largest unit's gathered parameters
    std::string largestGatheredUnit;        ///< "h[0]"
    /// Pipeline parallelism: the stage simulated, the heavier of the first and the last ("first", "last";
    /// empty without a pipeline), its index (0 or pp - 1) and the micro-batches it keeps in flight under
    /// 1F1B, min(M, P - stage).
    std::string pipelineStage;
    std::int64_t stage = 0;
    std::int64_t microBatchesInFlight = 1;
    /// GPUs on one node (min(gpus, gpus per node)): a node's host memory serves all of them.
    std::int64_t gpusOnNode = 1;
};

struct Estimate {
    std::int64_t batch = 0; ///< micro-batch size simulated

    // The peak of one training step (torch.cuda.max_memory_allocated()).
    std::uint64_t peakAllocatedBytes = 0;
    Phase peakPhase = Phase::Forward;
    std::string peakLabel; ///< op where the peak happens, e.g. "backward of fc (linear)"
    std::string peakOpPath; ///< that op's path ("fc", "loss.log_softmax"); empty when not at an op
    ComponentBytes atPeak; ///< components live at the peak (sum == peakAllocatedBytes)

    // Totals, independent of the moment.
    std::uint64_t parameterCount = 0;
    std::uint64_t trainableParameterCount = 0;
    std::uint64_t parameterBytes = 0;      ///< weights + buffers on the device
    std::uint64_t bufferBytes = 0;         ///< the buffers (running statistics, masks) in parameterBytes
    /// DPO (TrainingConfig::recipe): the frozen reference copy of the model, in parameterBytes too; 0 under
    /// LoRA (the reference is the base model with the adapters disabled) or with precomputed
    /// log-probabilities.
    std::uint64_t referenceModelBytes = 0;
    /// GRPO with transformers' generate(): the KV cache of the whole generation batch (batch x accumulation
    /// sequences) at full length, held before the first micro-batch's forward (counted in temporaries there).
    std::uint64_t generationCacheBytes = 0;
    /// TrainingConfig::promptTokens as estimated (GRPO's default resolved from the model's sequence).
    std::int64_t promptTokens = 0;
    std::uint64_t gradientBytes = 0;       ///< .grad of every trainable parameter
    std::uint64_t optimizerStateBytes = 0; ///< optimizer.state tensors incl. master weights (device or host)
    std::uint64_t savedActivationBytes =
        0; ///< what autograd holds at the end of the forward (unique storages)
    std::uint64_t autocastWeightCopyBytes =
        0; ///< half copies of weights made by autocast (part of the above)

    // Overheads, kept apart from the components.
    std::uint64_t cudaContextBytes = 0;      ///< all memory outside PyTorch's allocator: nonTorch.total()
    NonTorchMemory nonTorch;                 ///< its parts (docs/memory-model.md 7)
    std::uint64_t allocatorReserveBytes = 0; ///< reserved minus allocated (segments, fragmentation)
    std::uint64_t reservedBytes = 0;         ///< torch.cuda.max_memory_reserved() estimate
    std::uint64_t requiredBytes = 0; ///< what nvidia-smi would show at the peak: reserved + cudaContextBytes
    std::uint64_t hostBytes =
        0; ///< host memory for offloaded optimizer states: one GPU's (the rank simulated)
    /// Host memory for offloaded activations (TrainingConfig::activationOffload): every packed tensor alive
    /// when the forward ends, each rounded to a power of two when pinned (torch's CachingHostAllocator).
    std::uint64_t hostActivationBytes = 0;
    /// Bytes the offloaded activations cross PCIe per optimizer step: device to host in each forward and
    /// back in each backward, for every micro-batch.
    std::uint64_t activationTransferBytes = 0;
    /// Parameter offload (TrainingConfig::paramOffload): this GPU's parameter and gradient shards in host
    /// memory, and the bytes they cross PCIe per optimizer step (each all-gather's shard to the GPU, each
    /// reduce-scattered gradient shard back).
    std::uint64_t hostParameterBytes = 0;
    std::uint64_t parameterTransferBytes = 0;
    /// Host memory of one GPU: offloaded optimizer states, parameters and activations (saturates at 2^64 - 1).
    std::uint64_t hostTotalBytes() const {
        std::uint64_t total = hostBytes;
        for (std::uint64_t b : {hostParameterBytes, hostActivationBytes})
            total = total > UINT64_MAX - b ? UINT64_MAX : total + b;
        return total;
    }
    /// A node's host memory: hostTotalBytes() x parallel.gpusOnNode (the most loaded rank's, so an upper
    /// bound when shards differ; saturates at 2^64 - 1).
    std::uint64_t hostBytesPerNode() const {
        const auto n = static_cast<std::uint64_t>(parallel.gpusOnNode > 0 ? parallel.gpusOnNode : 1);
        const std::uint64_t total = hostTotalBytes();
        return total > UINT64_MAX / n ? UINT64_MAX : total * n;
    }
    /// Optimizer states of bitsandbytes' paged optimizers in CUDA managed memory (part of
    /// optimizerStateBytes, not of the peak: torch's counters do not see them, and the driver moves their
    /// pages to host memory when the GPU runs short).
    std::uint64_t pagedStateBytes = 0;
    std::uint64_t quantizedParameterCount =
        0; ///< parameters stored as 4-bit or int8 (part of parameterCount)
    std::uint64_t quantizedParameterBytes = 0; ///< their packed bytes with quantization constants

    ParallelEstimate parallel;   ///< the figures above are one GPU's: its shards and buffers
    AllocatorEstimate allocator; ///< the replay behind reservedBytes

    std::vector<LayerActivation> layers; ///< in model order
    std::vector<TimelinePoint> timeline; ///< only when asked for
};

/// Estimate against a GPU.
struct Verdict {
    std::uint64_t capacityBytes = 0;
    std::uint64_t usableBytes = 0; ///< capacity minus the safety margin
    bool fits = false;
    std::int64_t headroomBytes = 0; ///< usable - required (negative: short by)
    /// Reserved + context when the allocator is held to the usable bytes (the replay releases its cache
    /// before it fails, so this can be below Estimate::requiredBytes); when it does not fit, the step's needs
    /// on a GPU large enough.
    std::uint64_t requiredBytes = 0;
    /// It fits only because the allocator, held to the usable bytes, frees cached segments when a cudaMalloc
    /// fails and retries (num_alloc_retries): requiredBytes is then below Estimate::requiredBytes.
    bool cacheReleased = false;
    /// requiredBytes less the peak allocated bytes and the CUDA context: the allocator's share on this GPU.
    std::uint64_t reserveBytes = 0;
    /// The first allocation that fails on the whole GPU (no margin), with PyTorch's message; unset when
    /// the step fits the capacity (it may still miss the margin).
    std::optional<OomReport> oom;
};

/// The exact solver's answer.
struct MaxBatch {
    std::int64_t largest = 0; ///< fits at largest, not at largest + 1; 0 if even batch 1 does not fit
    std::int64_t largestMultipleOf8 = 0;
    bool capped = false; ///< true if it still fits at kMaxBatch
    std::uint64_t requiredAtLargest = 0;
    /// The allocator replay decides (reserved memory is not monotone in the batch): `largest` fits and
    /// largest + 1 does not, found by bisection below the largest batch whose allocated bytes fit; a
    /// larger batch may still fit after a failing one (see docs/memory-model.md section 6).
    bool replayed = false;
};

/// Whether a batch fits a GPU: the one decision every surface reads (verdict, largest batch, sweep, fit map,
/// chart, `gpus --fit`). A step that fits only after the allocator frees its cache and retries a failed
/// cudaMalloc (PyTorch's release_cached_blocks) is a fit: PyTorch does not raise an OOM for it.
struct FitDecision {
    bool fits = false;
    /// It fits only because the allocator, held to the usable bytes, frees cached segments when a cudaMalloc
    /// fails and retries (num_alloc_retries > 0): "fits with cache flushes".
    bool cacheReleased = false;
    /// What this GPU shows at the peak (nvidia-smi) when it fits; when it does not, the step's needs on a GPU
    /// large enough.
    std::uint64_t requiredBytes = 0;
};

struct SweepPoint {
    std::int64_t batch = 0;
    std::uint64_t peakAllocatedBytes = 0;
    std::uint64_t requiredBytes = 0; ///< nvidia-smi at the peak on a GPU large enough (no cache flushes)
    ComponentBytes atPeak;
    /// Against the GPU the sweep was asked for (unset without one).
    std::optional<FitDecision> fit;

    /// What that GPU shows at the peak: the decision's figure (below requiredBytes when it fits with cache
    /// flushes), or requiredBytes without a GPU. What every chart and table of a sweep plots.
    std::uint64_t gpuRequiredBytes() const { return fit ? fit->requiredBytes : requiredBytes; }
};

inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 31;

} // namespace batchfit
