// The step of one GPU of a data-parallel group: gathering sharded parameters unit by unit and
// reduce-scattering gradients. Sources: torch/distributed/fsdp/_runtime_utils.py (_pre_forward_unshard,
// _post_forward_reshard: the root's parameters are not freed after the forward; _pre_backward_hook,
// _post_backward_hook: reduce-scatter, then the unsharded gradient is freed), _limiter_utils.py (the rate
// limiter keeps two units' all-gathers in flight), api.py BackwardPrefetch.BACKWARD_PRE ("the current set of
// parameters, next set of parameters, and current set of gradients"); DeepSpeed stage3.py (fetch and
// release per module, prefetching the next ones). Torch 2.6 and DeepSpeed 0.16 read; source-checked.
#include "program/optimizer_model.h"
#include "program/scheduler.h"

#include <algorithm>

namespace batchfit {

std::uint64_t Scheduler::stateElems(std::size_t param) const {
    return m_shard.stateElems[param];
}

void Scheduler::gather(int unit, Phase phase) {
    if (unit < 0 || unit >= static_cast<int>(m_gathered.size())) return;
    int& inst = m_gathered[static_cast<std::size_t>(unit)];
    const std::uint64_t bytes = m_shard.unitBytes[static_cast<std::size_t>(unit)];
    if (inst >= 0 || bytes == 0) return;
    const int s = newStep(phase, "all-gather " + m_shard.unitNames[static_cast<std::size_t>(unit)] + " (" +
                                     std::string(parallelStrategyName(m_config.parallel.strategy)) + ")");
    inst = newInstance(Affine{bytes, 0}, Component::Parameters, s);
    m_weightInst[static_cast<std::size_t>(inst)] = true;
    // MixedPrecision: the half copy of the shard the all-gather sends (_use_low_precision_shard), freed
    // once the unit is gathered (_free_low_precision_sharded_param)
    transient(Affine{m_shard.unitLowPrecisionShardBytes[static_cast<std::size_t>(unit)], 0},
              Component::Parameters, s);
    // Parameter offload: the shard comes from the host first, a GPU copy the all-gather reads and that is
    // freed once the unit is gathered (FSDP: FlatParamHandle.pre_unshard's flat_param_to(device), freed by
    // post_unshard; DeepSpeed stage 3: the CPU partition is copied into a device buffer before the
    // all-gather)
    const std::uint64_t fromHost = m_shard.unitHostShardBytes[static_cast<std::size_t>(unit)];
    transient(Affine{fromHost, 0}, Component::Parameters, s);
    if (m_firstMicroStep) m_program.m_totals.paramTransferBytes += fromHost;
}

void Scheduler::release(int unit, int step) {
    if (unit < 0 || unit >= static_cast<int>(m_gathered.size())) return;
    int& inst = m_gathered[static_cast<std::size_t>(unit)];
    if (inst < 0) return;
    use(inst, step);
    inst = -1;
}

void Scheduler::enterForwardUnit(int unit) {
    if (unit == m_curUnit) return;
    const int last = static_cast<int>(m_program.steps.size()) - 1;
    // FULL_SHARD frees a unit's gathered parameters after its forward, except the root's (kept for the
    // backward, which starts there) and under SHARD_GRAD_OP / reshard_after_forward=False. ZeRO-3 has no
    // root: it releases every module's parameters after use and fetches them again.
    const bool zero3 = m_config.parallel.strategy == ParallelStrategy::Zero3;
    if ((m_curUnit > 0 || (zero3 && m_curUnit == 0)) && !m_shard.keepUnsharded) release(m_curUnit, last);
    m_curUnit = unit;
    gather(unit, Phase::Forward);
    // The rate limiter lets the next unit's all-gather run ahead while this one computes.
    if (m_config.parallel.limitAllGathers && unit > 0 && unit + 1 < static_cast<int>(m_gathered.size()))
        gather(unit + 1, Phase::Forward);
}

void Scheduler::reduceScatter(int unit, int step) {
    if (!m_shard.shardGrads || unit < 0) return;
    for (int p : m_unitParams[static_cast<std::size_t>(unit)]) {
        const auto pi = static_cast<std::size_t>(p);
        int& g = m_paramGrad[pi];
        if (g < 0 || !m_graph.params[pi].trainable || m_gradSharded[pi]) continue;
        use(g, step); // the unsharded gradient is freed once reduce-scattered
        if (m_shard.offloaded[pi]) {
            // Parameter offload: the reduce-scattered shard is copied into the host gradient (FSDP:
            // _post_backward_hook's _offload_grad into the pinned _cpu_grad, accumulated there across
            // micro-batches; DeepSpeed: the fp32 partition on the host) and freed on the GPU
            transient(Affine{m_shard.gradBytes[pi], 0}, Component::Gradients, step);
            if (m_firstMicroStep) m_program.m_totals.paramTransferBytes += m_shard.gradBytes[pi];
            g = -1;
            continue;
        }
        g = newInstance(Affine{m_shard.gradBytes[pi], 0}, Component::Gradients, step);
        // MixedPrecision: the shard is reduce-scattered in half, then cast to the fp32 one kept
        if (fsdpMixedPrecision(m_config))
            transient(Affine{m_shard.gradBytes[pi] / 2, 0}, Component::Gradients, step);
        m_gradSharded[pi] = true; // later micro-batches accumulate into the shard
    }
}

void Scheduler::enterBackwardUnit(int unit) {
    if (unit == m_curUnit) return;
    const int last = static_cast<int>(m_program.steps.size()) - 1;
    if (m_curUnit >= 0) {
        const int s = newStep(Phase::Backward,
                              "reduce-scatter " + m_shard.unitNames[static_cast<std::size_t>(m_curUnit)]);
        reduceScatter(m_curUnit, s);
        if (m_curUnit > 0 || m_config.parallel.strategy == ParallelStrategy::Zero3) release(m_curUnit, last);
    }
    m_curUnit = unit;
    if (!m_shard.shardParams) return;
    gather(unit, Phase::Backward);
    // BACKWARD_PRE: the unit before this one (the next to run backward) is gathered now.
    if (m_config.parallel.backwardPrefetchPre && unit > 1) gather(unit - 1, Phase::Backward);
}

void Scheduler::endShardedBackward() {
    const int last = static_cast<int>(m_program.steps.size()) - 1;
    const int s =
        newStep(Phase::Backward, "reduce-scatter " +
                                     m_shard.unitNames[static_cast<std::size_t>(std::max(m_curUnit, 0))] +
                                     (m_curUnit > 0 ? " and (root)" : ""));
    if (m_curUnit > 0) reduceScatter(m_curUnit, s);
    reduceScatter(0, s); // the root's post-backward hook runs last
    for (std::size_t u = 0; u < m_gathered.size(); ++u) release(static_cast<int>(u), last);
    m_curUnit = -1;
}

} // namespace batchfit
