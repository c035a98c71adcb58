// Preference and RL training (TrainingConfig::recipe Dpo, Grpo): the forwards TRL runs without gradients
// (docs/memory-model.md, "Preference training" and "GRPO"), and the frozen reference copy of the model.
//
// DPO (trl 1.16 trainer/dpo_trainer.py DPOTrainer._compute_loss): after the policy's forward, with its saved
// tensors alive, the reference runs the same batch under torch.no_grad().
// GRPO (trainer/grpo_trainer.py GRPOTrainer._generate_and_score_completions), once per generation batch of
// batch x steps_per_generation (default: the gradient accumulation) sequences, before the first micro-batch's
// forward (or, when the generation period is not a multiple of the accumulation, before a later one's, with
// gradients held):
//   - generate(): the policy, adapters on, under no_grad; every attention layer's DynamicCache grows to the
//     whole sequence for every sequence of the batch, and each step samples from the last token's logits.
//     Counted as the prefill, one forward over the prompts (every per-token size x prompt / sequence: exact
//     for what grows with the tokens, an upper bound for the attention's [S, S] of an eager kernel), its
//     cache kept; then each layer's cache made at the whole length while its prefill copy is freed
//     (DynamicLayer.update's torch.cat, one token at a time); at the last token every layer's cache, one
//     layer's keys twice, and the sampler's [sequences, V] logits, their fp32 copy and the softmax
//     (generation/utils.py _sample).
//   - when generations and optimizer steps are not aligned, and always with vLLM (importance sampling), the
//     policy's own log-probabilities without gradients, in chunks of the per-device batch;
//   - with beta != 0, the reference's log-probabilities in chunks of the per-device batch
//     (_get_per_token_logps_and_entropies(batch_size=per_device_train_batch_size)).
// The reference is the policy itself with PEFT's adapters disabled (use_adapter(None) / disable_adapter),
// else the frozen copy (create_reference_model / create_model_from_path), kept on the GPU. Each op's outputs
// live until their last use in the pass; nothing is saved.
#include "batchfit/checked.h"
#include "program/scheduler.h"

namespace batchfit {

namespace {

bool referenceCopied(const TrainingConfig& c) {
    return c.recipe != Recipe::Sft && c.refLogps == RefLogps::Live && c.lora.rank == 0;
}

/// `a` with its per-sample bytes x num / den, rounded up (saturating at kMaxBytes: the batch check then
/// refuses it).
Affine scaled(Affine a, std::uint64_t num, std::uint64_t den = 1) {
    if (num == den || den == 0) return a;
    auto n = checkedMul(a.perSample, num);
    a.perSample = n ? std::min<std::uint64_t>((*n + den - 1) / den, kMaxBytes) : kMaxBytes;
    return a;
}

} // namespace

void Scheduler::addReferenceCopy(int step) {
    if (!referenceCopied(m_config)) return;
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

int Scheduler::noGradForward(const NoGradPass& how) {
    std::vector<int> inst(m_graph.tensors.size(), -1); // per storage: its instance in this pass
    std::vector<int> held;
    int last = static_cast<int>(m_program.steps.size()) - 1;
    // parameters, model-wide constants, the batch and the policy's cached autocast copies are the policy's
    const auto of = [&](int t, int step) {
        const int s = m_graph.storageOf(t);
        return inst[static_cast<std::size_t>(s)] >= 0 ? inst[static_cast<std::size_t>(s)]
                                                      : instanceOf(t, step, false);
    };
    const std::string label = how.generation    ? "generation: "
                              : how.adaptersOff ? "reference forward: "
                                                : "old log-probabilities forward: ";
    for (const auto& op : m_graph.ops) {
        if (op.adapter && how.adaptersOff) { // disabled: the LoRA layer returns its base layer's result
            const int to = op.inputs.empty() ? -1 : of(op.inputs[0], last);
            for (int t : op.outputs) inst[static_cast<std::size_t>(m_graph.storageOf(t))] = to;
            continue;
        }
        if (op.isLoss && how.generation) {
            last = samplerStep(op, how.sequences);
            continue;
        }
        const int s = newStep(Phase::Forward, label + op.path + " (" + op.type + ")");
        m_program.steps[static_cast<std::size_t>(s)].opPath = op.path;
        for (int t : op.inputs) use(of(t, s), s);
        auto materialize = [&](int t) {
            const auto& gt = m_graph.tensors[static_cast<std::size_t>(t)];
            if (gt.base >= 0) return;
            const auto idx = static_cast<std::size_t>(m_graph.storageOf(t));
            if (gt.autocastCopy && m_fwdInst[idx] >= 0) { // autocast's cache: the policy's copy
                inst[idx] = m_fwdInst[idx];
                use(inst[idx], s);
                return;
            }
            const int in =
                newInstance(scaled(tensorBytes(t), how.tokens, how.ofTokens), Component::Temporaries, s);
            m_creatorLayer[static_cast<std::size_t>(in)] = op.layer + 1;
            inst[idx] = in;
            if (gt.heldToForwardEnd) held.push_back(in);
        };
        for (int t : op.outputs) materialize(t);
        for (int t : op.created) materialize(t);
        transient(scaled(op.fwdWorkspace, how.tokens, how.ofTokens), Component::Temporaries, s);
        workspace(op.cudnnWorkspace[0], s);
        last = s;
    }
    if (how.generation) last = growGenerationCache(inst, last, how);
    for (int h : held) use(h, last);
    return last;
}

int Scheduler::samplerStep(const GOp& head, std::uint64_t sequences) {
    // the last token's logits [n, V] in the head's dtype, .float()'s copy and softmax's probabilities
    const int s = newStep(Phase::Forward, "generation: " + head.path + " (next-token logits and sampling)");
    m_program.steps[static_cast<std::size_t>(s)].opPath = head.path;
    if (!head.inputs.empty()) use(instanceOf(head.inputs[0], s, false), s);
    std::uint64_t vocab = 0;
    if (!head.params.empty()) {
        const auto& w = m_graph.params[static_cast<std::size_t>(head.params.front())];
        if (!w.shape.empty()) vocab = static_cast<std::uint64_t>(w.shape.front());
    }
    const DType dt = head.inputs.empty()
                         ? DType::Float32
                         : m_graph.tensors[static_cast<std::size_t>(head.inputs[0])].info.dtype;
    transient(scaled(Affine{0, vocab * (dtypeSize(dt) + 4 + 4)}, sequences), Component::Temporaries, s);
    return s;
}

int Scheduler::growGenerationCache(std::vector<int>& inst, int last, const NoGradPass& how) {
    // the prefill's cache (the prompt's tokens) grows one token per step to the whole sequence: each layer's
    // torch.cat makes the longer tensor before the shorter one is freed. Counted as the last step's: every
    // layer at the whole length, one layer's keys twice (the largest layer's), and the sampler.
    const std::uint64_t whole = how.ofTokens;
    Affine largest{}, total{};
    bool overflow = false;
    std::vector<int> cache; // the whole-length copies (keys and values of a fused projection: one each)
    for (int t : m_graph.generationCache) {
        auto& prefill = inst[static_cast<std::size_t>(m_graph.storageOf(t))];
        const Affine b = scaled(tensorBytes(t), how.sequences * whole, whole);
        if (b.perSample > largest.perSample) largest = b;
        total = addAffine(total, b, overflow);
        const int step = newStep(Phase::Forward, "generation: the KV cache grows to the whole length");
        if (prefill >= 0) use(prefill, step); // freed once its longer copy exists
        prefill = -1;
        cache.push_back(newInstance(b, Component::Temporaries, step));
    }
    const int s = newStep(Phase::Forward, "generation: the last token (DynamicCache.update's torch.cat)");
    m_program.m_totals.generationCache = total; // once per pass: every micro-step's pass is the same
    transient(largest, Component::Temporaries, s);
    int end = s;
    for (const auto& op : m_graph.ops)
        if (op.isLoss) end = samplerStep(op, how.sequences);
    for (int c : cache) use(c, end);
    return std::max(end, last);
}

int Scheduler::grpoGeneration() {
    int last = static_cast<int>(m_program.steps.size()) - 1;
    const auto seq = static_cast<std::uint64_t>(m_graph.sequenceLength);
    if (m_config.generation == Generation::Transformers && seq > 0) {
        // generate(): the prefill over the prompts of batch x steps_per_generation sequences, then the
        // decoding
        const auto k = static_cast<std::uint64_t>(m_config.generationSteps());
        const auto prompt = static_cast<std::uint64_t>(m_config.promptTokens);
        last = noGradForward({.adaptersOff = false,
                              .sequences = k,
                              .tokens = k * prompt,
                              .ofTokens = seq,
                              .generation = true});
    }
    // the old policy's log-probabilities (importance sampling), in chunks of the batch: the policy itself
    if (m_config.grpoOldLogps())
        last = noGradForward(
            {.adaptersOff = false, .sequences = 1, .tokens = 1, .ofTokens = 1, .generation = false});
    if (m_config.refLogps == RefLogps::Live)
        last = noGradForward(
            {.adaptersOff = true, .sequences = 1, .tokens = 1, .ofTokens = 1, .generation = false});
    return last;
}

} // namespace batchfit
