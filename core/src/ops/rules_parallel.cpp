// Megatron-LM's sequence-parallel collectives (megatron/core/tensor_parallel/mappings.py and layers.py),
// internal ops the graph builder inserts with --sequence-parallel; dim 0 of the per-sample shape is the
// sequence, split over the tensor-parallel group of 'tp' ranks:
// - sp_split: _ScatterToSequenceParallelRegion (the embedding output, cloned:
// clone_scatter_output_in_embedding)
//   and _ReduceScatterToSequenceParallelRegion (a row-parallel output): a new [s/t, ...] tensor; the backward
//   all-gathers the gradient into a new [s, ...] one.
// - sp_gather: gather_from_sequence_parallel_region, a new [s, ...] tensor; the backward reduce-scatters.
// - sp_gather_buffer: the all-gather inside LinearWithGradAccumulationAndAsyncCommunication, into
//   get_global_memory_buffer()'s "mpu" tensor (input 0, made once and kept): the output is a view of it. The
//   linear saves its sharded input and gathers it again in the backward, into the same buffer.
// None of them saves anything.
#include "ops/op_rule.h"

namespace batchfit {
namespace {

Result<std::int64_t> tpOf(const OpContext& c) {
    const std::int64_t t = c.attrs.getInt("tp").value_or(1);
    if (t < 1) return c.fail("tensor-parallel size must be at least 1");
    return t;
}

class SequenceSplitRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        auto t = tpOf(c);
        if (!t) return t.error();
        const auto& in = c.inputs[0];
        if (in.shape.empty() || in.shape[0] % *t)
            return c.fail("--sequence-parallel splits the sequence (dim 0 of " + c.in() + ") over --tp " +
                          std::to_string(*t) + ": it is not divisible");
        Shape out = in.shape;
        out[0] /= *t;
        OpPlan p;
        p.outputs.push_back({out, in.dtype, in.batched, true});
        return p;
    }
};

class SequenceGatherRule : public OpRule {
public:
    explicit SequenceGatherRule(bool intoBuffer) : m_buffer(intoBuffer) {}
    int minInputs() const override { return m_buffer ? 2 : 1; }
    int maxInputs() const override { return m_buffer ? 2 : 1; }
    Result<OpPlan> plan(const OpContext& c) const override {
        auto t = tpOf(c);
        if (!t) return t.error();
        const auto& in = c.inputs[m_buffer ? 1 : 0];
        if (in.shape.empty()) return c.fail("cannot gather a per-sample scalar along the sequence");
        Shape out = in.shape;
        if (__builtin_mul_overflow(out[0], *t, &out[0])) return c.fail("the gathered sequence is too long");
        OpPlan p;
        p.outputs.push_back({out, in.dtype, in.batched, true});
        if (m_buffer) p.alias = Alias::View; // a view of the buffer (input 0)
        return p;
    }

private:
    bool m_buffer;
};

} // namespace

void registerParallelOps() {
    addOpRule("sp_split", std::make_unique<SequenceSplitRule>(), true);
    addOpRule("sp_gather", std::make_unique<SequenceGatherRule>(false), true);
    addOpRule("sp_gather_buffer", std::make_unique<SequenceGatherRule>(true), true);
}

} // namespace batchfit
