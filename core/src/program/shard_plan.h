#pragma once
// What one GPU of a data-parallel group holds of each parameter, gradient and optimizer state, and which
// parameters are gathered together (FSDP units / ZeRO-3 modules). See docs/memory-model.md, "Several GPUs".
#include "batchfit/training_config.h"
#include "graph/graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace batchfit {

struct ShardPlan {
    bool active = false;        ///< a data-parallel strategy on more than one GPU
    std::int64_t group = 1;     ///< GPUs a shard is split over
    std::int64_t rank = 0;      ///< the most loaded rank, the one simulated
    bool shardParams = false;   ///< parameters live as shards between uses (ZeRO-3, FSDP)
    bool shardGrads = false;    ///< gradients are reduce-scattered into shards (ZeRO-2, ZeRO-3, FSDP)
    bool keepUnsharded = false; ///< gathered parameters stay from the forward to the backward (SHARD_GRAD_OP)
    bool gradsInBuckets = false; ///< DDP gradient_as_bucket_view: .grad are views into the buckets

    std::vector<int> opUnit;              ///< per op: its gather unit (0: the root, outside any block)
    std::vector<int> paramUnit;           ///< per parameter: the unit of the first op that uses it
    std::vector<std::string> unitNames;   ///< per unit: "h[3]" (unit 0: "(root)")
    std::vector<std::uint64_t> unitBytes; ///< per unit: bytes of its gathered (unsharded) parameters
    /// per unit, FSDP MixedPrecision: the half copy of its shard that the all-gather sends (_mp_shard),
    /// made for the unshard and freed after it
    std::vector<std::uint64_t> unitLowPrecisionShardBytes;
    std::vector<std::uint64_t> paramBytes; ///< per parameter: device bytes between uses (a shard, or all)
    /// Parameter offload: per parameter, its shard (paramBytes) and gradient shard (gradBytes) live in host
    /// memory; per unit, the bytes of its offloaded shards copied to the GPU for each all-gather.
    std::vector<bool> offloaded;
    std::vector<std::uint64_t> unitHostShardBytes;
    std::vector<std::uint64_t> gradBytes;  ///< per parameter: bytes of its gradient kept to the step
    std::vector<std::uint64_t> stateElems; ///< per parameter: elements whose optimizer state is here
    std::uint64_t bucketBytes = 0;         ///< DDP buckets or ZeRO-3's reduce buffer (persistent)
    std::uint64_t backwardBucketBytes = 0; ///< ZeRO-1/2's reduce buffers, made by each backward()
    std::string bucketLabel;               ///< "DDP buckets", "ZeRO reduce buckets"
};

/// The plan for `config.parallel` over the graph (inactive without a data-parallel strategy).
ShardPlan makeShardPlan(const Graph& graph, const TrainingConfig& config);

/// Device bytes of a parameter stored whole.
std::uint64_t fullParamBytes(const GParam& p);

} // namespace batchfit
