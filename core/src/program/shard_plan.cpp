// Sources, each read at the version named (docs/memory-model.md, "Several GPUs"):
// - DDP: torch/nn/parallel/distributed.py (bucket_cap_mb 25, gradient_as_bucket_view False) and
//   torch/csrc/distributed/c10d/reducer.cpp Reducer::initialize_buckets (one flat gradient tensor per
//   bucket, all of them together as large as the trainable gradients), torch 2.6.
// - ZeroRedundancyOptimizer (torch/distributed/optim/zero_redundancy_optimizer.py, _partition_parameters):
//   whole tensors, sorted by size, each to the rank with the smallest total so far.
// - DeepSpeed ZeRO (runtime/zero/stage_1_and_2.py backward(), stage3.py __init__, partition_parameters.py;
//   config.py defaults): partitions of ceil(numel / N) per rank; reduce buffers of reduce_bucket_size
//   elements (two with overlap_comm in stage 1/2); parameters under stage3_param_persistence_threshold stay
//   whole.
// - FSDP1 (torch/distributed/fsdp/_flat_param.py FlatParamHandle: one flat parameter per unit, padded to a
//   multiple of the world size); FSDP2 (_fully_shard: per-parameter dim-0 chunks). MixedPrecision
//   (param_dtype half): the shards stay in full precision and the optimizer steps them; pre_unshard's
//   _use_low_precision_shard makes a half copy of the shard for the all-gather (into a half
//   _full_param_padded) and post_unshard's _free_low_precision_sharded_param frees it; the reduce-scattered
//   gradient shard is cast to the parameter's dtype (_runtime_utils.py _cast_grad_to_param_dtype; FSDP2:
//   foreach_reduce_scatter, _to_dtype_if_needed(reduce_scatter_output, orig_dtype)).
#include "program/shard_plan.h"

#include "program/optimizer_model.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace batchfit {
namespace {

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
    return b ? (a + b - 1) / b : a;
}

std::string unitKey(const std::string& path) {
    const auto close = path.find(']');
    return close == std::string::npos ? std::string() : path.substr(0, close + 1);
}

} // namespace

std::uint64_t fullParamBytes(const GParam& p) {
    return p.storedBytes ? p.storedBytes : p.numel * static_cast<std::uint64_t>(dtypeSize(p.dtype));
}

ShardPlan makeShardPlan(const Graph& graph, const TrainingConfig& config) {
    const ParallelConfig& par = config.parallel;
    ShardPlan plan;
    const std::size_t np = graph.params.size();
    plan.paramBytes.resize(np);
    plan.gradBytes.resize(np);
    plan.stateElems.resize(np);
    for (std::size_t p = 0; p < np; ++p) {
        const GParam& gp = graph.params[p];
        plan.paramBytes[p] = fullParamBytes(gp);
        plan.gradBytes[p] = gp.trainable ? plan.paramBytes[p] : 0;
        plan.stateElems[p] = gp.numel;
    }
    plan.opUnit.assign(graph.ops.size(), 0);
    plan.paramUnit.assign(np, 0);
    plan.unitNames = {"(root)"};
    plan.unitBytes = {0};
    plan.unitLowPrecisionShardBytes = {0};
    plan.offloaded.assign(np, false);
    plan.unitHostShardBytes = {0};
    // Parameter offload gathers from the host even on one GPU (ZeRO-Infinity's use): a group of one
    if (!par.enabled() && !(config.paramOffload && shardsParameters(par.strategy))) return plan;
    plan.active = true;
    const ParallelStrategy s = par.strategy;
    const auto n = static_cast<std::uint64_t>(shardGroupSize(par));
    plan.group = static_cast<std::int64_t>(n);
    plan.shardParams = shardsParameters(s);
    plan.shardGrads = shardsGradients(s);
    plan.keepUnsharded =
        s == ParallelStrategy::FsdpGradOp || (s == ParallelStrategy::Fsdp2 && !par.reshardAfterForward);

    // Units: each repetition of a repeated block ("h[3]"), as FSDP's transformer auto-wrap policy and
    // ZeRO-3's per-module gathering see them; everything else is the root unit.
    std::map<std::string, int> unitOf;
    std::vector<int> paramUnit(np, -1); // -1 until an op uses it
    for (std::size_t i = 0; i < graph.ops.size(); ++i) {
        const std::string key = unitKey(graph.ops[i].path);
        int u = 0;
        if (!key.empty()) {
            auto it = unitOf.find(key);
            if (it == unitOf.end()) {
                it = unitOf.emplace(key, static_cast<int>(plan.unitNames.size())).first;
                plan.unitNames.push_back(key);
                plan.unitBytes.push_back(0);
                plan.unitLowPrecisionShardBytes.push_back(0);
                plan.unitHostShardBytes.push_back(0);
            }
            u = it->second;
        }
        plan.opUnit[i] = u;
        for (int p : graph.ops[i].params)
            if (paramUnit[static_cast<std::size_t>(p)] < 0) paramUnit[static_cast<std::size_t>(p)] = u;
    }

    for (std::size_t p = 0; p < np; ++p) plan.paramUnit[p] = std::max(paramUnit[p], 0);

    // Parameters (and, where sharded, their gradients), in elements as the frameworks pad them: a quantized
    // weight's packed bytes count as uint8 elements.
    const auto elemsOf = [](const GParam& gp) { return gp.storedBytes ? gp.storedBytes : gp.numel; };
    const auto elemSize = [](const GParam& gp) {
        return gp.storedBytes ? std::uint64_t{1} : static_cast<std::uint64_t>(dtypeSize(gp.dtype));
    };
    // FSDP MixedPrecision: half compute weights gathered from fp32 shards (the model was fp32 when wrapped)
    const bool fullShards = fsdpMixedPrecision(config);
    const auto shardElemSize = [&](const GParam& gp) {
        return fullShards && !gp.storedBytes && isFloating(gp.dtype) ? std::uint64_t{4} : elemSize(gp);
    };
    const auto lowShardOf = [&](const GParam& gp) -> std::uint64_t {
        if (s == ParallelStrategy::Fsdp2 && !gp.storedBytes && gp.shape.size() >= 1 && gp.shape[0] > 0) {
            const auto rows = static_cast<std::uint64_t>(gp.shape[0]);
            return ceilDiv(rows, n) * (gp.numel / rows) * elemSize(gp); // torch.chunk(dim=0): ceil rows first
        }
        return ceilDiv(elemsOf(gp), n) * elemSize(gp); // DeepSpeed: ceil(numel / N) per parameter
    };
    const auto shardOf = [&](const GParam& gp) { return lowShardOf(gp) / elemSize(gp) * shardElemSize(gp); };
    const std::size_t nu = plan.unitNames.size();
    std::vector<std::uint64_t> flatElems(nu, 0), flatSize(nu, 0), flatShardSize(nu, 1), flatTrainable(nu, 0);
    // A unit whose parameters differ in element size (QLoRA's packed weights beside fp32 adapters) is
    // counted in bytes: FSDP1 wants one dtype per flat parameter, so such a unit is stored as one dtype.
    std::vector<std::uint64_t> flatBytes(nu, 0), flatShardBytes(nu, 0), flatTrainableBytes(nu, 0);
    std::vector<bool> mixedSizes(nu, false);
    const bool flat =
        s == ParallelStrategy::Fsdp || s == ParallelStrategy::FsdpGradOp || s == ParallelStrategy::Hsdp;
    for (std::size_t p = 0; p < np; ++p) {
        const GParam& gp = graph.params[p];
        if (gp.tiedTo >= 0) continue;
        const auto u = static_cast<std::size_t>(plan.paramUnit[p]);
        if (plan.shardParams && !gp.buffer) {
            const bool persistent =
                s == ParallelStrategy::Zero3 &&
                gp.numel < static_cast<std::uint64_t>(par.stage3ParamPersistenceThreshold);
            if (!persistent) {
                plan.offloaded[p] = config.paramOffload;
                if (flat) {
                    flatElems[u] += elemsOf(gp); // one flat parameter per unit (one dtype per unit)
                    if (flatSize[u] != 0 && flatSize[u] != elemSize(gp)) mixedSizes[u] = true;
                    flatSize[u] = elemSize(gp);
                    flatShardSize[u] = shardElemSize(gp);
                    flatBytes[u] += elemsOf(gp) * elemSize(gp);
                    flatShardBytes[u] += elemsOf(gp) * shardElemSize(gp);
                    if (gp.trainable) {
                        flatTrainable[u] += elemsOf(gp);
                        flatTrainableBytes[u] += elemsOf(gp) * shardElemSize(gp);
                    }
                    plan.paramBytes[p] = 0; // counted with the unit's flat shard below
                } else {
                    plan.paramBytes[p] = shardOf(gp);
                    plan.unitBytes[u] += fullParamBytes(gp);
                    if (fullShards) plan.unitLowPrecisionShardBytes[u] += lowShardOf(gp);
                }
            }
        }
        if (plan.shardGrads && gp.trainable) plan.gradBytes[p] = flat && !gp.buffer ? 0 : shardOf(gp);
    }
    if (flat) {
        // FlatParamHandle pads the flat parameter to a multiple of the world size: a shard of
        // ceil(elements / N), the gathered one N shards. The shard is given to the unit's first parameter.
        // Its gradient is flat too: the trainable part's shard, given to the unit's first trainable one.
        std::vector<bool> given(plan.unitNames.size(), false), gradGiven(plan.unitNames.size(), false);
        for (std::size_t p = 0; p < np; ++p) {
            const GParam& gp = graph.params[p];
            if (gp.tiedTo >= 0 || gp.buffer) continue;
            const auto u = static_cast<std::size_t>(plan.paramUnit[p]);
            if (gp.trainable && !gradGiven[u] && flatTrainable[u] > 0) {
                gradGiven[u] = true;
                plan.gradBytes[p] = mixedSizes[u] ? ceilDiv(flatTrainableBytes[u], n)
                                                  : ceilDiv(flatTrainable[u], n) * flatShardSize[u];
            }
            if (given[u] || flatElems[u] == 0) continue;
            given[u] = true;
            const std::uint64_t lowShard =
                mixedSizes[u] ? ceilDiv(flatBytes[u], n) : ceilDiv(flatElems[u], n) * flatSize[u];
            plan.paramBytes[p] =
                mixedSizes[u] ? ceilDiv(flatShardBytes[u], n) : ceilDiv(flatElems[u], n) * flatShardSize[u];
            plan.unitBytes[u] = lowShard * n;
            if (fullShards) plan.unitLowPrecisionShardBytes[u] = lowShard;
        }
    }

    for (std::size_t p = 0; p < np; ++p)
        if (plan.offloaded[p]) plan.unitHostShardBytes[static_cast<std::size_t>(plan.paramUnit[p])] += plan.paramBytes[p];

    // Optimizer states.
    if (shardsOptimizerStates(s)) {
        if (s == ParallelStrategy::Zero1 && par.zeroImpl == ZeroImpl::Torch) {
            // _partition_parameters: per group, tensors by size (largest first), each to the rank with the
            // smallest total; the simulated rank is the one that ends with the most.
            std::vector<std::size_t> order;
            for (std::size_t p = 0; p < np; ++p)
                if (graph.params[p].trainable && graph.params[p].tiedTo < 0) order.push_back(p);
            std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
                return graph.params[a].numel > graph.params[b].numel;
            });
            std::vector<std::uint64_t> load(n, 0);
            std::vector<std::uint64_t> owner(np, 0);
            for (std::size_t p : order) {
                const auto r =
                    static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
                load[r] += graph.params[p].numel;
                owner[p] = r;
            }
            const auto most =
                static_cast<std::uint64_t>(std::max_element(load.begin(), load.end()) - load.begin());
            plan.rank = static_cast<std::int64_t>(most);
            for (std::size_t p = 0; p < np; ++p)
                plan.stateElems[p] = owner[p] == most ? graph.params[p].numel : 0;
        } else {
            for (std::size_t p = 0; p < np; ++p) plan.stateElems[p] = ceilDiv(graph.params[p].numel, n);
        }
    }

    // Communication buffers that come from the caching allocator.
    std::uint64_t trainableBytes = 0;
    int gradSize = 4;
    for (const GParam& gp : graph.params) {
        if (!gp.trainable || gp.tiedTo >= 0) continue;
        trainableBytes += fullParamBytes(gp);
        gradSize = dtypeSize(gp.dtype);
    }
    const bool ddpUnderneath =
        s == ParallelStrategy::Ddp || (s == ParallelStrategy::Zero1 && par.zeroImpl == ZeroImpl::Torch);
    if (ddpUnderneath) {
        plan.bucketBytes = trainableBytes; // every trainable gradient has a slot in some bucket
        plan.bucketLabel = "DDP buckets";
        plan.gradsInBuckets = par.gradientAsBucketView;
    } else if (s == ParallelStrategy::Zero1 || s == ParallelStrategy::Zero2 || s == ParallelStrategy::Zero3) {
        // contiguous_gradients: stage 1/2's backward() makes buf_0 (and buf_1 with overlap_comm) of
        // reduce_bucket_size elements each time; stage 3 makes one flat buffer when the optimizer is built.
        // Their size is the setting, not the model's: 5e8 elements by default.
        const bool overlap = par.overlapComm < 0 ? s == ParallelStrategy::Zero3 : par.overlapComm == 1;
        const std::uint64_t one =
            static_cast<std::uint64_t>(par.reduceBucketSize) * static_cast<std::uint64_t>(gradSize);
        if (par.contiguousGradients) {
            if (s == ParallelStrategy::Zero3)
                plan.bucketBytes = one;
            else
                plan.backwardBucketBytes = one * (overlap ? 2 : 1);
        }
        plan.bucketLabel = "ZeRO reduce buckets";
    }
    return plan;
}

} // namespace batchfit
