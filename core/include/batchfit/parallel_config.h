#pragma once
// Data parallelism across GPUs: the strategy and the framework knobs that change one GPU's memory.
// BatchFit simulates the step on the most loaded GPU of the group (docs/memory-model.md, "Several GPUs").
#include "batchfit/result.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace batchfit {

/// none: one GPU (or plain replicas without gradient sync); ddp: DistributedDataParallel; zero1..3:
/// DeepSpeed ZeRO stages (zero1 with `zeroImpl` Torch: torch's ZeroRedundancyOptimizer over DDP); fsdp:
/// FSDP1 FULL_SHARD; fsdp-grad-op: SHARD_GRAD_OP; hsdp: HYBRID_SHARD (full shard within a node); fsdp2:
/// fully_shard (per-parameter dim-0 shards).
enum class ParallelStrategy { None, Ddp, Zero1, Zero2, Zero3, Fsdp, FsdpGradOp, Hsdp, Fsdp2 };
/// Who implements ZeRO-1: DeepSpeed (flat partitions of ceil(numel / N)) or torch's
/// ZeroRedundancyOptimizer (whole tensors assigned greedily, so ranks differ).
enum class ZeroImpl { DeepSpeed, Torch };

struct ParallelConfig {
    std::int64_t gpus = 1;         ///< all GPUs; the data-parallel size is GPUs / tensor-parallel size
    std::int64_t tp = 1;           ///< tensor-parallel size (Megatron: heads, MLP columns, vocab split)
    bool sequenceParallel = false; ///< Megatron sequence parallelism: norms, dropout, residuals split over tp
    std::int64_t pp = 1;           ///< pipeline stages (1F1B; the heavier of the first and last is reported)
    std::int64_t microbatches = 0; ///< micro-batches per step in the pipeline (0: as many as stages)
    /// The pipeline stage lowered: 0 the first, pp - 1 the last. Not a setting: the estimator lowers both
    /// and reports the heavier; set-ups (files, options, the GUI) leave it 0.
    std::int64_t stage = 0;
    std::int64_t gpusPerNode = 8; ///< HSDP's shard group
    ParallelStrategy strategy = ParallelStrategy::None;
    ZeroImpl zeroImpl = ZeroImpl::DeepSpeed;

    // DDP (torch/nn/parallel/distributed.py defaults)
    double bucketCapMb = 25;           ///< bucket_cap_mb (the first bucket is 1 MiB)
    bool gradientAsBucketView = false; ///< False: the buckets are one more gradient-sized buffer
    // DeepSpeed ZeRO (deepspeed/runtime/zero/config.py defaults; elements, not bytes)
    std::int64_t reduceBucketSize = 500000000;
    std::int64_t allgatherBucketSize = 500000000;
    int overlapComm = -1; ///< -1: DeepSpeed's default (on only for stage 3), 0 off, 1 on
    bool contiguousGradients = true;
    std::int64_t stage3PrefetchBucketSize = 50000000; ///< 5e7 in the code (the docs say 5e8)
    std::int64_t stage3MaxLiveParameters = 1000000000;
    std::int64_t stage3ParamPersistenceThreshold = 100000;
    // FSDP
    bool limitAllGathers = true;     ///< the rate limiter: at most two units' all-gathers in flight
    bool backwardPrefetchPre = true; ///< BACKWARD_PRE (the default): the next unit is gathered early
    bool reshardAfterForward = true; ///< FSDP2's reshard_after_forward (False: as SHARD_GRAD_OP)

    bool operator==(const ParallelConfig&) const = default;
    /// GPUs / tp: the replicas (or shard group) of the data-parallel strategy.
    std::int64_t dataParallel() const { return tp > 0 && pp > 0 ? gpus / (tp * pp) : gpus; }
    /// Micro-batches whose activations the simulated stage holds under 1F1B: stage s keeps min(M, P - s).
    std::int64_t inFlight() const {
        return pp <= 1
                   ? 1
                   : std::max<std::int64_t>(1, std::min(microbatches > 0 ? microbatches : pp, pp - stage));
    }
    /// Sequence parallelism in effect (it needs tensor parallelism).
    bool splitsSequence() const { return sequenceParallel && tp > 1; }
    /// A data-parallel strategy over more than one replica.
    bool enabled() const { return dataParallel() > 1 && strategy != ParallelStrategy::None; }
};

std::string_view parallelStrategyName(ParallelStrategy s); ///< "none", "ddp", "zero1", ..., "fsdp2"
Result<ParallelStrategy> parseParallelStrategy(std::string_view s);
std::string_view zeroImplName(ZeroImpl z); ///< "deepspeed", "torch"
Result<ZeroImpl> parseZeroImpl(std::string_view s);
std::vector<ParallelStrategy> allParallelStrategies();
/// True for the strategies that shard parameters (ZeRO-3 and the FSDP family).
bool shardsParameters(ParallelStrategy s);
/// True for those that shard gradients (ZeRO-2 and up, FSDP).
bool shardsGradients(ParallelStrategy s);
/// True for those that shard optimizer states (all but none and ddp).
bool shardsOptimizerStates(ParallelStrategy s);
/// The number of GPUs a shard is split over: all of them, or one node's for HSDP.
std::int64_t shardGroupSize(const ParallelConfig& p);
/// The FSDP family (FSDP1 strategies and FSDP2).
bool isFsdp(ParallelStrategy s);
/// "--sequence-parallel needs --tp T > 1 ..." when sequence parallelism is asked for without tensor
/// parallelism; empty otherwise.
std::string sequenceParallelProblem(const ParallelConfig& p);

} // namespace batchfit
