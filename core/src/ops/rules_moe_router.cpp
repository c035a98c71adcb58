// DeepSeek's routers: an fp32 linear over the fp32 hidden states (its weight stays fp32 in a half model),
// then
//   V3 (transformers 5 modeling_deepseek_v3.py DeepseekV3TopkRouter, `noaux_tc`; scoring "sigmoid"): sigmoid
//     scores, the experts split into n_group groups scored by their two best, the topk_group best groups kept
//     (a mask), top_k of the kept experts, their scores gathered, renormalised in place (norm_topk_prob),
//     scaled;
//   V2 (DeepseekV2TopkRouter; scoring "softmax"): softmax in fp32, then top_k over all experts (`greedy`) or,
//     with `group_limited_greedy` (groups > 1), over the topk_group groups with the largest expert score
//     (a max per group, a mask, masked_fill with 0); scaled, never renormalised.
// What autograd saves per token, measured with saved_tensors_hooks under torch 2.15 and transformers 5.24
// (docs/accuracy-real.md): the fp32 hidden states (the linear, when its weight trains; in an fp32 model the
// input itself), the scores [E] fp32 (sigmoid's or softmax's result); V3: the group top-2 indices [G, 2]
// int64, the kept groups [topk_group] int64 and masked_fill's mask [E] bool; V2 with groups: max's indices
// [G] int64, the kept groups and the mask; the top-k indices [k] int64 (topk and gather share them); V3 with
// norm_topk_prob: the gathered weights before the in-place division (autograd clones them) [k] fp32 and the
// denominator [1] fp32.
// The weights stay fp32 into the experts (no cast to the hidden dtype, unlike Mixtral's and Qwen's).
#include "ops/op_rule.h"

namespace batchfit {
namespace {

/// Input x [S, D]; outputs the routing weights [S, k] fp32 and the expert indices [S, k] int64.
class MoeGroupedRouterRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& x = c.inputs[0];
        if (x.rank() != 2 || !isFloating(x.dtype))
            return c.fail("moe_router_grouped expects [S, D], got " + c.in());
        auto e = c.positive("experts");
        if (!e) return e.error();
        auto k = c.positive("top_k");
        if (!k) return k.error();
        auto g = c.positive("groups");
        if (!g) return g.error();
        auto tg = c.positive("topk_groups");
        if (!tg) return tg.error();
        if (*e % *g || *tg > *g || (*g > 1 && *e / *g < 2))
            return c.fail("experts (" + std::to_string(*e) + ") must split into groups (" +
                          std::to_string(*g) + ") of at least two, and topk_groups (" + std::to_string(*tg) +
                          ") must not exceed groups");
        if (*k > *tg * (*e / *g))
            return c.fail("top_k (" + std::to_string(*k) + ") exceeds the experts of the kept groups (" +
                          std::to_string(*tg * (*e / *g)) + ")");
        const std::int64_t s = x.shape[0];
        const auto t = [&](Shape shape, DType dt) {
            return TensorInfo{std::move(shape), dt, x.batched, true};
        };
        OpPlan p;
        p.params = {{"weight", {*e, x.shape[1]}, false, DType::Float32},
                    {"e_score_correction_bias", {*e}, true, DType::Float32}};
        p.outputs = {t({s, *k}, DType::Float32), t({s, *k}, DType::Int64)};
        auto keep = [&](TensorInfo info, const char* role) {
            p.created.push_back(std::move(info));
            p.createdRoles.push_back(role);
            p.saved.push_back({SavedDecl::Kind::Created, static_cast<int>(p.created.size()) - 1});
        };
        if (x.dtype != DType::Float32) { // the linear's input, for its (fp32) weight's gradient
            keep(t(x.shape, DType::Float32), "hidden states in fp32");
            p.saved.back().ifParam = 0;
        } else {
            p.saved.push_back({SavedDecl::Kind::Input, 0, -1, 0});
        }
        const bool sigmoid = c.attrs.getString("scoring").value_or("sigmoid") == "sigmoid";
        keep(t({s, *e}, DType::Float32), sigmoid ? "sigmoid scores" : "softmax scores");
        if (sigmoid || *g > 1) {
            keep(t(sigmoid ? Shape{s, *g, 2} : Shape{s, *g}, DType::Int64),
                 sigmoid ? "group top-2 indices" : "group max indices");
            keep(t({s, *tg}, DType::Int64), "kept groups");
            keep(t({s, *e}, DType::Bool), "group mask");
        }
        p.saved.push_back({SavedDecl::Kind::Output, 1});
        if (sigmoid && c.flag("norm_topk_prob", true)) {
            keep(t({s, *k}, DType::Float32), "top-k weights (cloned by the in-place div)");
            keep(t({s, 1}, DType::Float32), "sum of the top-k weights");
        }
        // the logits, the scores with the correction bias, and the masked scores: [S, E] fp32 each
        const auto scores = t({s, *e}, DType::Float32).bytes();
        if (scores) p.fwdWorkspace = Affine{0, 3 * scores->perSample};
        return p;
    }
};

} // namespace

void registerMoeRouterOps() {
    addOpRule("moe_router_grouped", std::make_unique<MoeGroupedRouterRule>(), true);
}

} // namespace batchfit
