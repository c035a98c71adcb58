// Activation offload (TrainingConfig::activationOffload; docs/memory-model.md, "Activation offload"):
// torch.autograd.graph.save_on_cpu's hooks (torch/autograd/graph.py): pack_to_cpu copies each saved tensor to
// the host (`tensor.cpu()`, or `torch.empty(..., pin_memory=True).copy_(tensor)`), so autograd keeps no GPU
// tensor alive for it; unpack_from_cpu copies it back (`tensor.to(device)`) when the node's backward unpacks
// its saved variables, a new GPU tensor that lives while the node runs.
#include "program/scheduler.h"

namespace batchfit {

// transformers 5 checkpoints a layer as checkpoint(partial(layer.__call__, **kwargs), *args)
// (modeling_layers.py, GradientCheckpointingLayer.__call__), and torch's non-reentrant checkpoint saves only
// the tensors among the positional arguments (checkpoint.py, _NoopSaveInputs.setup_context: kwargs go on ctx
// as they are); reentrant CheckpointFunction does the same with ctx.save_for_backward. The positional one is
// the hidden state that flows from layer to layer; what every layer takes (rotary tables, masks) is a
// keyword. So a unit's input offloads when no other unit takes it.
void Scheduler::findUnitInputs() {
    std::vector<int> lastUnit(m_graph.tensors.size(), -1);
    m_inputUnits.assign(m_graph.tensors.size(), 0);
    for (const auto& op : m_graph.ops) {
        const int u = op.checkpointUnit;
        if (u < 0) continue;
        for (int t : op.inputs) {
            const auto s = static_cast<std::size_t>(m_graph.storageOf(t));
            const int prod = m_graph.tensors[s].producer;
            if (prod >= 0 && m_graph.ops[static_cast<std::size_t>(prod)].checkpointUnit == u) continue;
            if (lastUnit[s] == u) continue;
            lastUnit[s] = u;
            ++m_inputUnits[s];
        }
    }
}

bool Scheduler::offloadsSaved() const {
    return m_config.activationOffload == ActivationOffload::All ||
           m_config.activationOffload == ActivationOffload::AllPinned;
}

bool Scheduler::offloadsUnitInput(int storage) const {
    return m_config.activationOffload != ActivationOffload::Off &&
           m_inputUnits[static_cast<std::size_t>(storage)] == 1;
}

void Scheduler::pack(Affine bytes) {
    auto& t = m_program.m_totals;
    t.hostPinned = m_config.activationOffload != ActivationOffload::All;
    if (m_firstMicroStep && !bytes.isZero()) t.hostPacked.push_back(bytes);
}

void Scheduler::packUnitInput(int unit, int storage, int instance) {
    auto& packed = m_unitPacked[static_cast<std::size_t>(unit)];
    for (const auto& p : packed)
        if (p.second == instance) return; // saved once per call
    packed.emplace_back(storage, instance);
    pack(m_program.instances[static_cast<std::size_t>(instance)].bytes);
}

// The checkpoint's saved inputs come back before the unit is recomputed. Non-reentrant (checkpoint.py,
// _CheckpointFrame.recompute_fn) drops them when the recomputation returns, so a copy lives as long as the
// recomputed ops use or save it: to the end of the recomputation, or to the backward of the op that saves it
// (an fp32 RMSNorm saves its input; a bf16 one saves its fp32 copy). Reentrant CheckpointFunction.backward
// keeps its detached inputs until the unit's backward returns.
void Scheduler::unpackUnitInputs(int unit) {
    const auto& packed = m_unitPacked[static_cast<std::size_t>(unit)];
    if (packed.empty()) return;
    const int first = m_unitOps[static_cast<std::size_t>(unit)].front();
    const int s = newStep(Phase::Backward, "checkpoint inputs back from the host (" +
                                               m_graph.ops[static_cast<std::size_t>(first)].path + ")");
    for (const auto& [storage, inst] : packed) {
        const int copy =
            newInstance(m_program.instances[static_cast<std::size_t>(inst)].bytes, Component::Activations, s);
        if (m_config.checkpointMode == CheckpointMode::Reentrant)
            m_unitUnpacked[static_cast<std::size_t>(unit)].push_back(copy);
        m_recompInst[static_cast<std::size_t>(storage)] = copy;
    }
}

// PEFT's input-embedding leaf (GTensor::peftLeaf): its AccumulateGrad, which every node reading it points
// to, holds the tensor and then its .grad until the backward ends, offloaded or not (measured,
// docs/accuracy-llm.md).
void Scheduler::holdPeftLeaves() {
    for (std::size_t t = 0; t < m_graph.tensors.size(); ++t) {
        if (!m_graph.tensors[t].peftLeaf) continue;
        use(forwardInstance(static_cast<int>(t)), m_lastBackwardStep);
        use(m_gradOf[t], m_lastBackwardStep);
    }
}

void Scheduler::unpackSaved(int op, int step) {
    for (const Affine& bytes : m_packedBy[static_cast<std::size_t>(op)])
        if (!bytes.isZero()) newInstance(bytes, Component::Activations, step);
}

} // namespace batchfit
