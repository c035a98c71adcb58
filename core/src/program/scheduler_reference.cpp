// Preference training (TrainingConfig::recipe Dpo): what TRL's DPOTrainer adds to a step (trl 1.16
// trainer/dpo_trainer.py DPOTrainer._compute_loss and __init__; docs/memory-model.md, "Preference
// training"). After the policy's forward, with its saved tensors alive, the reference model runs the same
// batch under torch.no_grad(): the policy itself with PEFT's adapters disabled (use_adapter(None)), else the
// frozen reference copy (create_reference_model / the ref_model given). Each op's outputs live until their
// last use in that pass; nothing is saved. With precompute_ref_log_probs there is neither the pass nor the
// copy (the reference is dropped after the log-probabilities are computed before training).
#include "program/scheduler.h"

namespace batchfit {

void Scheduler::addReferenceCopy(int step) {
    if (m_config.recipe != Recipe::Dpo || m_config.refLogps != RefLogps::Live || m_config.lora.rank > 0)
        return;
    // copy.deepcopy of the model: one tensor per parameter and buffer, in the policy's dtypes
    auto& t = m_program.m_totals;
    for (std::size_t p = 0; p < m_graph.params.size(); ++p) {
        const auto& gp = m_graph.params[p];
        if (gp.tiedTo >= 0) continue;
        const std::uint64_t bytes = m_shard.paramBytes[p];
        const int inst = newInstance(Affine{bytes, 0}, Component::Parameters, step);
        m_lastUse[static_cast<std::size_t>(inst)] = kForever;
        m_weightInst[static_cast<std::size_t>(inst)] = true;
        m_creatorLayer[static_cast<std::size_t>(inst)] = m_paramLayer[p];
        t.referenceBytes += bytes;
        t.parameterBytes += bytes;
    }
}

int Scheduler::referenceForward() {
    std::vector<int> ref(m_graph.tensors.size(), -1); // per storage: its instance in this pass
    std::vector<int> held;
    int last = static_cast<int>(m_program.steps.size()) - 1;
    // parameters, model-wide constants, the batch and the policy's cached autocast copies are the policy's
    const auto inst = [&](int t, int step) {
        const int s = m_graph.storageOf(t);
        return ref[static_cast<std::size_t>(s)] >= 0 ? ref[static_cast<std::size_t>(s)]
                                                     : instanceOf(t, step, false);
    };
    for (const auto& op : m_graph.ops) {
        if (op.adapter) { // disabled: the LoRA layer returns its base layer's result
            const int to = op.inputs.empty() ? -1 : inst(op.inputs[0], last);
            for (int t : op.outputs) ref[static_cast<std::size_t>(m_graph.storageOf(t))] = to;
            continue;
        }
        const int s = newStep(Phase::Forward, "reference forward: " + op.path + " (" + op.type + ")");
        m_program.steps[static_cast<std::size_t>(s)].opPath = op.path;
        for (int t : op.inputs) use(inst(t, s), s);
        auto materialize = [&](int t) {
            const auto& gt = m_graph.tensors[static_cast<std::size_t>(t)];
            if (gt.base >= 0) return;
            const auto idx = static_cast<std::size_t>(m_graph.storageOf(t));
            if (gt.autocastCopy && m_fwdInst[idx] >= 0) { // autocast's cache: the policy's copy
                ref[idx] = m_fwdInst[idx];
                use(ref[idx], s);
                return;
            }
            const int in = newInstance(tensorBytes(t), Component::Temporaries, s);
            m_creatorLayer[static_cast<std::size_t>(in)] = op.layer + 1;
            ref[idx] = in;
            if (gt.heldToForwardEnd) held.push_back(in);
        };
        for (int t : op.outputs) materialize(t);
        for (int t : op.created) materialize(t);
        transient(op.fwdWorkspace, Component::Temporaries, s);
        workspace(op.cudnnWorkspace[0], s);
        last = s;
    }
    for (int h : held) use(h, last);
    return last;
}

} // namespace batchfit
