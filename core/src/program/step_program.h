#pragma once
// The lowered training step: every allocation with its bytes as constant + perSample * batch, its component,
// and the step at which it is allocated and freed. Evaluating a batch size is a walk over these events.
#include "batchfit/allocator_replay.h"
#include "batchfit/estimate.h"
#include "batchfit/model.h"
#include "batchfit/result.h"
#include "batchfit/training_config.h"
#include "graph/affine.h"

#include <memory>
#include <string>
#include <vector>

namespace batchfit {

struct StepEvents;

struct Instance {
    Affine bytes;
    Component component = Component::Activations;
    int group = -1; ///< index of its (constant, perSample) size group
};

struct ProgramStep {
    Phase phase = Phase::Forward;
    std::string label;
    std::vector<int> allocs;     ///< live from this step on
    std::vector<int> transients; ///< live only during this step
    /// cuDNN workspaces: live only during this step and elastic (AllocatorEvent::elastic): only the allocator
    /// replay sees them; the peak evaluator leaves them out, so its peak is the least a step needs.
    std::vector<int> workspaces;
    std::vector<int> frees; ///< freed after this step
    std::string opPath;     ///< the op this step runs (forward, recompute or backward); empty for the others
};

struct LayerInfo {
    std::string path;
    std::string op;
    Affine saved; ///< storages it created that are saved for backward (exact, unrounded)
    Affine output;
    Shape outputShape;
    bool outputBatched = true;
    DType outputDType = DType::Float32;
    std::uint64_t parameterCount = 0;
    std::uint64_t trainableParameterCount = 0;
};

struct StepTotals {
    std::uint64_t parameterCount = 0;
    std::uint64_t trainableParameterCount = 0;
    std::uint64_t parameterBytes = 0;
    std::uint64_t bufferBytes = 0;
    std::uint64_t gradientBytes = 0;
    std::uint64_t optimizerStateBytes = 0;
    std::uint64_t hostBytes = 0;
    std::uint64_t hostParameterBytes = 0; ///< parameter offload: parameter and gradient shards on the host
    std::uint64_t paramTransferBytes = 0; ///< parameter offload: shards to the GPU, gradients back, per micro-step
    std::uint64_t pagedStateBytes = 0;                ///< optimizer states in CUDA managed memory
    std::uint64_t bucketBytes = 0;                    ///< DDP buckets / DeepSpeed reduce buffers
    std::uint64_t referenceBytes = 0; ///< DPO's or GRPO's frozen reference copy (in parameterBytes too)
    Affine generationCache;           ///< GRPO: generate()'s KV cache for the whole generation batch
    std::int64_t parallelGroup = 1, parallelRank = 0; ///< shard group size, the rank simulated
    std::int64_t parallelGpus = 1;
    std::uint64_t largestUnitBytes = 0; ///< the largest gathered unit (ZeRO-3 / FSDP)
    std::string largestUnit;
    std::uint64_t quantizedParameterCount = 0; ///< parameters stored packed (4-bit, int8)
    std::uint64_t quantizedBytes = 0;          ///< their bytes (packed weights and quantization constants)
    Affine savedActivations;                   ///< unique storages autograd holds when the forward ends
    Affine autocastCopies;
    /// Activation offload (TrainingConfig::activationOffload): each tensor packed to the host in one
    /// micro-step's forward, in order; all alive when the forward ends. Pinned: the host allocator rounds
    /// each.
    std::vector<Affine> hostPacked;
    bool hostPinned = false;
};

class StepProgram {
public:
    static Result<std::shared_ptr<const StepProgram>> lower(const Model& model, const TrainingConfig& config,
                                                            std::uint64_t cudaContextBytes);

    /// Exact peak allocated bytes (512-byte rounding), or nullopt if too large.
    std::optional<std::uint64_t> peak(std::int64_t batch) const;
    /// Components live at the peak (same walk as peak()).
    std::optional<ComponentBytes> peakComponents(std::int64_t batch) const;
    /// Required bytes under the fragmentation_fraction override: the peak plus the reserve, rounded to
    /// 2 MiB, plus the context.
    std::uint64_t required(std::uint64_t peak) const;
    /// Required bytes (reserved + context) at a batch: the allocator replay on a GPU large enough, or the
    /// override. nullopt if too large.
    std::optional<std::uint64_t> requiredAt(std::int64_t batch) const;
    /// Whether reserved memory comes from the replay (no fragmentation_fraction override).
    bool replays() const { return !m_config.fragmentationFraction.has_value(); }
    const AllocatorConfig& allocatorConfig() const { return m_allocConfig; }
    /// Replays the step at a batch through the caching allocator. `limit`: bytes cudaMalloc can get
    /// (unset: unlimited). With `samples`, one sample per program step (after it, in the last iteration);
    /// with `snapshotStep`, the segments after that step. The OOM figures name `capacity` and the context.
    Result<ReplayResult> replay(std::int64_t batch, std::optional<std::uint64_t> limit, bool samples = false,
                                std::optional<std::size_t> snapshotStep = {}, std::uint64_t capacity = 0,
                                std::uint64_t workspaceCap = UINT64_MAX) const;
    /// Iterations the replay runs at a batch (2: the steady state on the cache of a first iteration; one
    /// more per earlier length and for an epoch's last batch).
    int replayIterations(std::int64_t batch) const;
    /// The size of an epoch's last batch at `batch` (TrainingConfig::epochSamples): what is left of one
    /// GPU's samples after the full batches; 0 when they divide evenly, when the epoch is not given, or when
    /// one batch holds the whole epoch.
    std::int64_t lastBatch(std::int64_t batch) const;
    bool repeatable() const { return m_repeatable; }
    /// The same step as a first step (optimizer states created inside step()): the replay runs it before the
    /// steady-state step, as a training loop does. Null for first-step programs and the override.
    const StepProgram* warmup() const { return m_warmup.get(); }
    /// With TrainingConfig::replaySequences: the steady steps replayed between the first step (warmup(), at
    /// the first length) and this one, each at its own length.
    const std::vector<std::shared_ptr<const StepProgram>>& earlierSteps() const { return m_earlier; }
    Result<Estimate> evaluate(std::int64_t batch, bool withTimeline) const;

    const TrainingConfig& config() const { return m_config; }
    const StepTotals& totals() const { return m_totals; }
    std::uint64_t contextBytes() const { return m_contextBytes; }
    /// Whether the step has cuDNN workspaces (ProgramStep::workspaces).
    bool hasWorkspaces() const;
    /// The largest cuDNN workspace at `batch` (after TrainingConfig::cudnnWorkspaceCapBytes).
    std::uint64_t largestWorkspace(std::int64_t batch) const;
    /// Largest batch for which nothing can overflow.
    std::int64_t maxSafeBatch() const { return m_maxSafeBatch; }

    // Filled by the scheduler.
    std::vector<Instance> instances;
    std::vector<ProgramStep> steps;
    std::vector<LayerInfo> layers;
    std::vector<Affine> groups;      ///< distinct instance sizes
    std::vector<char> setupInstance; ///< per instance: allocated by the set-up step (finalize)

    void finalize(); ///< groups, overflow bound
    /// DPO: doubles every per-sample size (a sample is a chosen/rejected pair); false on overflow.
    bool perPair();

private:
    static Result<std::shared_ptr<const StepProgram>> lowerProgram(const Model& model,
                                                                   const TrainingConfig& config,
                                                                   std::uint64_t cudaContextBytes,
                                                                   bool withEarlierSteps);
    Status lowerEarlierSteps(const Model& model, const TrainingConfig& config,
                             std::uint64_t cudaContextBytes);
    void locateOom(const StepEvents& ev, OomReport& oom) const; ///< OomReport::step, stepLabel
    TrainingConfig m_config;
    AllocatorConfig m_allocConfig;
    bool m_repeatable = true;
    std::shared_ptr<const StepProgram> m_warmup;
    std::vector<std::shared_ptr<const StepProgram>> m_earlier;
    Status checkEpochSamples() const;
    /// Whether the replay runs a first step before the steady one (earlier steps and a last batch need it).
    bool warmsUp() const;
    std::int64_t m_sequence = 0;      ///< the model's sequence length, with replaySequences
    std::uint64_t m_contextBytes = 0; ///< m_nonTorch.total()
    NonTorchMemory m_nonTorch;
    StepTotals m_totals;
    std::int64_t m_maxSafeBatch = 0;
    friend class Scheduler;
};

/// Rounds a request the way PyTorch's CUDA caching allocator does (512-byte blocks; 0 stays 0).
inline std::uint64_t roundAllocation(std::uint64_t bytes) {
    if (bytes == 0) return 0;
    return (bytes + 511) / 512 * 512;
}

} // namespace batchfit
