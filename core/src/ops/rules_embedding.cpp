// Embeddings and learned additive parameters. derivatives.yaml `embedding`: saves the indices.
#include "ops/op_rule.h"

namespace batchfit {
namespace {

class EmbeddingRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        auto num = c.positive("num_embeddings");
        if (!num) return num.error();
        auto dim = c.positive("embedding_dim");
        if (!dim) return dim.error();
        const std::string mode = c.attrs.getString("indices").value_or("input");
        OpPlan p;
        p.params.push_back({"weight", {*num, *dim}});
        if (auto t = c.attrs.getString("tied_to")) p.tiedTo = *t;
        if (mode == "input") {
            if (isFloating(in.dtype))
                return c.fail("embedding expects integer token ids, got " + std::string(dtypeName(in.dtype)) +
                              " (set the model input dtype to int64)");
            Shape out = in.shape;
            out.push_back(*dim);
            p.outputs.push_back({out, c.paramDtype, in.batched, true});
            p.saved.push_back({SavedDecl::Kind::Input, 0});
            return p;
        }
        // Index tensors the model builds itself, one id per position of the input sequence: "positions"
        // (arange: each id below num_embeddings), "zeros" (one per sample: zeros_like(ids), a buffer expanded
        // to the batch; token type ids) and "constant" (one for the whole batch, of any values: a buffer of
        // ids or a slice of one). The output has the index's shape; only the id values are bounded by the
        // table, not the sequence length, so "zeros" and "constant" accept any length.
        if (mode != "positions" && mode != "zeros" && mode != "constant")
            return c.fail(
                "embedding 'indices' must be \"input\", \"positions\", \"zeros\" or \"constant\", got \"" +
                mode + "\"");
        if (in.rank() < 1) return c.fail("embedding of positions needs a sequence input, got " + c.in());
        const std::int64_t seq = in.shape[0];
        if (mode == "positions" && seq > *num)
            return c.fail("sequence length " + std::to_string(seq) + " exceeds num_embeddings " +
                          std::to_string(*num));
        const bool batched = mode == "zeros";
        p.created.push_back({{seq}, DType::Int64, batched, true});
        p.createdRoles.push_back(mode == "positions" ? "position ids"
                                 : mode == "zeros"   ? "token type ids"
                                                     : "index buffer");
        p.saved.push_back({SavedDecl::Kind::Created, 0});
        p.outputs.push_back({{seq, *dim}, c.paramDtype, batched, true});
        p.grad = GradKind::None;
        return p;
    }
};

class ClassTokenRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (in.rank() != 2) return c.fail("class_token expects [N, D], got " + c.in());
        OpPlan p;
        p.params.push_back({"weight", {in.shape[1]}});
        p.outputs.push_back({{in.shape[0] + 1, in.shape[1]}, in.dtype, in.batched, true});
        p.grad = GradKind::Passthrough;
        return p;
    }
};

class LearnedAddRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        OpPlan p;
        p.params.push_back({"weight", in.shape});
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        p.grad = GradKind::Passthrough;
        return p;
    }
};

} // namespace

void registerEmbeddingOps() {
    addOpRule("embedding", std::make_unique<EmbeddingRule>());
    addOpRule("class_token", std::make_unique<ClassTokenRule>());
    addOpRule("learned_add", std::make_unique<LearnedAddRule>());
}

} // namespace batchfit
