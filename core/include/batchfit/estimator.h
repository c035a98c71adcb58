#pragma once
// Lowers a model + training set-up once into a step program, then answers per batch size quickly.
#include "batchfit/estimate.h"
#include "batchfit/gpu.h"
#include "batchfit/model.h"
#include "batchfit/result.h"
#include "batchfit/training_config.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace batchfit {

class StepProgram;

class Estimator {
public:
    /// Validates and lowers. Fails with a message naming the layer path for bad models.
    static Result<Estimator> create(const Model& model, const TrainingConfig& config,
                                    std::uint64_t cudaContextBytes = 0);
    /// Same, with the GPU's defaults (CUDA context, cuBLAS workspace) unless the config overrides them.
    static Result<Estimator> create(const Model& model, const TrainingConfig& config, const GpuSpec& gpu);

    /// Full estimate at a micro-batch size (1 .. kMaxBatch).
    Result<Estimate> estimate(std::int64_t batch, bool withTimeline = false) const;
    /// Fast path: bytes nvidia-smi would show at the peak (what must fit), or an error when too large.
    Result<std::uint64_t> requiredBytes(std::int64_t batch) const;
    /// Fast path: peak allocated bytes.
    Result<std::uint64_t> peakAllocatedBytes(std::int64_t batch) const;
    /// Verdict against a capacity with the configured margin.
    Result<Verdict> verdict(std::int64_t batch, std::uint64_t capacityBytes) const;
    /// Whether the batch fits the capacity minus the margin (the verdict's decision, without its OOM report).
    Result<FitDecision> fitAt(std::int64_t batch, std::uint64_t capacityBytes) const;
    /// Exact largest batch that fits the capacity minus the margin.
    MaxBatch maxBatch(std::uint64_t capacityBytes) const;
    /// Points from..to (inclusive) with the given multiplicative (log) or additive step; with a capacity,
    /// each point carries fitAt()'s decision.
    Result<std::vector<SweepPoint>> sweep(std::int64_t from, std::int64_t to, std::int64_t step = 1,
                                          bool logScale = false,
                                          std::optional<std::uint64_t> capacityBytes = {}) const;

    std::uint64_t usableBytes(std::uint64_t capacityBytes) const;
    const TrainingConfig& config() const;
    std::uint64_t parameterCount() const;
    std::uint64_t trainableParameterCount() const; ///< the parameters not frozen

    /// The caching-allocator replay of the step at a batch (unlimited memory unless `limitBytes`), with one
    /// sample per timeline point and, when asked, the segments after timeline point `snapshotStep`.
    Result<ReplayResult> replayStep(std::int64_t batch, std::optional<std::uint64_t> limitBytes = {},
                                    std::optional<std::size_t> snapshotStep = {}) const;
    /// The step's allocations and frees as the replay sees them (batchfit-cli estimate --trace-out).
    Result<std::vector<AllocatorEvent>> allocatorEvents(std::int64_t batch) const;

private:
    explicit Estimator(std::shared_ptr<const StepProgram> program);
    std::optional<std::uint64_t> driverLimit(std::uint64_t bytes) const; ///< bytes minus the context
    bool replayFits(std::int64_t batch, std::uint64_t usable) const;
    /// The least a replay can need: the allocated peak in whole 2 MiB segments (reserved >= allocated) plus
    /// the context; unset when the batch is too large to count.
    std::optional<std::uint64_t> leastRequired(std::int64_t batch) const;
    /// fitAt() for a step that needs `required` on a GPU large enough.
    Result<FitDecision> decide(std::int64_t batch, std::uint64_t usable, std::uint64_t required) const;
    std::shared_ptr<const StepProgram> m_program;

    // Pipeline parallelism (estimator_stages.cpp): the first and the last stage, each lowered on its own;
    // every answer is the heavier stage's at that batch (what must fit). Empty without a pipeline.
    Status addPipelineStages(const Model& model, const TrainingConfig& config,
                             std::uint64_t cudaContextBytes);
    std::size_t heavierStage(std::int64_t batch) const;
    Result<Estimate> stageEstimate(std::int64_t batch, bool withTimeline) const;
    MaxBatch stagesMaxBatch(std::uint64_t capacityBytes) const;
    Result<FitDecision> stagesFitAt(std::int64_t batch, std::uint64_t capacityBytes) const;
    Result<Verdict> stagesVerdict(std::int64_t batch, std::uint64_t capacityBytes) const;
    Result<std::vector<SweepPoint>> stagesSweep(std::int64_t from, std::int64_t to, std::int64_t step,
                                                bool logScale, std::optional<std::uint64_t> capacity) const;
    std::vector<Estimator> m_stages;
};

} // namespace batchfit
