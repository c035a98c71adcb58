// transformers 5's default experts implementation, "grouped_mm" (integrations/moe.py,
// grouped_mm_experts_forward), as one op: the S * top_k (token, expert) pairs sorted by expert, gathered at
// once, two grouped matmuls over the fused 3D expert weights gate_up_proj [E, 2I, D] and down_proj [E, D, I]
// (the parameters of MixtralExperts, Qwen3MoeExperts, ...), the routing weights applied, the rows put back in
// order and summed over top_k. What autograd saves, per sample (N = S * top_k rows), measured with
// saved_tensors_hooks under torch 2.15 and transformers 5.24 (docs/accuracy-real.md):
//   the gather index perm // top_k, perm (for the weights' gather) and the inverse permutation: three int64
//   [N]; the gathered rows [N, D] and the int32 offsets [E] (the up grouped_mm); its output [N, 2I] (the
//   activation saves the gate half, the product the up half: one storage); the activation [N, I]; the product
//   [N, I] (the down grouped_mm); the down output [N, D] and the gathered weights [N] (the routing multiply).
// The weighted rows and their re-ordered copy [N, D] are forward temporaries; reshape + sum saves nothing.
// With frozen experts the gathered rows and the product are not saved (measured, DeepSeek-V3 with LoRA on
// its attention).
// grouped_mm is not autocast-enabled: transformers casts the rows to the weights' dtype, so under autocast
// the experts run in the weights' (fp32) dtype.
#include "ops/op_rule.h"

namespace batchfit {
namespace {

/// Inputs: x [S, D], top-k indices [S, k] int64, top-k weights [S, k]; output [S, D].
class MoeGroupedRule : public OpRule {
public:
    int minInputs() const override { return 3; }
    int maxInputs() const override { return 3; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& x = c.inputs[0];
        const auto& idx = c.inputs[1];
        const auto& w = c.inputs[2];
        if (x.rank() != 2 || !isFloating(x.dtype) || idx.rank() != 2)
            return c.fail("moe_grouped expects [S, D] rows and [S, top_k] indices, got " + c.in());
        auto experts = c.positive("experts");
        if (!experts) return experts.error();
        auto inner = c.positive("intermediate");
        if (!inner) return inner.error();
        const std::int64_t d = x.shape[1], i = *inner, e = *experts;
        std::int64_t n = 0;
        if (__builtin_mul_overflow(x.shape[0], idx.shape[1], &n)) return c.fail("too many routed rows");
        OpPlan p;
        p.outputs.push_back({{x.shape[0], d}, x.dtype, x.batched, true});
        p.params = {{"gate_up_proj", {e, 2 * i, d}}, {"down_proj", {e, d, i}}};
        const auto t = [&](Shape s, DType dt) { return TensorInfo{std::move(s), dt, x.batched, true}; };
        p.created = {t({n}, DType::Int64),   t({n}, DType::Int64),
                     t({n, d}, x.dtype),     {{e}, DType::Int32, false, true},
                     t({n, 2 * i}, x.dtype), t({n, i}, x.dtype),
                     t({n, i}, x.dtype),     t({n, d}, x.dtype),
                     t({n}, w.dtype),        t({n}, DType::Int64)};
        p.createdRoles = {"gather index (perm // top_k)",
                          "perm",
                          "gathered rows",
                          "offsets",
                          "gate_up output",
                          "activation",
                          "gated product",
                          "down output",
                          "gathered routing weights",
                          "inverse permutation"};
        // the grouped matmuls' inputs only for their weights' gradients (frozen experts: LoRA elsewhere)
        for (int k = 0; k < static_cast<int>(p.created.size()); ++k)
            p.saved.push_back({SavedDecl::Kind::Created, k, -1, k == 2 ? 0 : k == 6 ? 1 : -1});
        const auto rows = t({n, d}, x.dtype).bytes(), wide = t({n, i}, x.dtype).bytes();
        // the weighted rows and their re-ordered copy, in fp32 when the weights are (DeepSeek's: type
        // promotion)
        const auto weighted = t({n, d}, w.dtype == DType::Float32 ? DType::Float32 : x.dtype).bytes();
        if (rows && wide && weighted) {
            p.fwdWorkspace = Affine{0, 2 * weighted->perSample};
            // backward: the gradients of the re-ordered rows, of the down output, of the product and both
            // halves of gate_up, and of the gathered rows live together at most
            p.bwdWorkspace = Affine{0, 3 * rows->perSample + 4 * wide->perSample};
        }
        return p;
    }
};

} // namespace

void registerMoeGroupedOps() {
    addOpRule("moe_grouped", std::make_unique<MoeGroupedRule>(), true);
}

} // namespace batchfit
