// Sparse mixture of experts (transformers' MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock,
// Qwen3MoeSparseMoeBlock), expanded into (impl "loop", transformers 4; "grouped_mm", transformers 5's
// default, is rules_moe_grouped.cpp): the router linear, softmax in fp32, top-k (+ renormalisation), one
// fused op per expert, the index_add_ combine, and Qwen2-MoE's shared expert. What each piece saves was
// measured with saved_tensors_hooks under torch 1.13 (tests/torch/moe_saved.py; tests/core/test_moe.cpp holds
// the numbers):
//   topk: its indices; routing_weights /= sum: a copy of the weights and the sum (in place: autograd clones
//   self); per expert: torch.where's nonzero result [n, 2] int64 (hidden_states[None, top_x] and
//   routing_weights[top_x, idx] save views of it), the gathered rows (both mm), w1's output (silu), silu's
//   output and w3's output (mul), their product (w2's mm), w2's output and the gathered weight [n, 1] (the
//   routing mul), and index_add_'s source (derivatives.yaml: source.dim() > 0 ? grad.index_select(dim,
//   index).expand_as(source)).
// Tokens per expert: the routing is data-dependent. load "balanced" gives every expert ceil(S * top_k / E) of
// a sample's S tokens (the expected load); "worst" sends every token's top_k choices to the same top_k
// experts (they get all S, the others none: those still own parameters and run on zero rows, as transformers
// <= 4.38 did).
#include "graph/graph_builder.h"
#include "ops/linear_op.h"
#include "ops/moe_limits.h"
#include "ops/op_rule.h"

#include <sstream>

namespace batchfit {
namespace {


std::vector<std::string> projNames(const Attributes& a) {
    std::vector<std::string> out;
    std::stringstream ss(a.getString("names").value_or("gate_proj,up_proj,down_proj"));
    for (std::string s; std::getline(ss, s, ',');) out.push_back(s);
    return out;
}

/// topk over the expert probabilities [S, E] -> weights [S, k] and indices [S, k] int64; renormalised in
/// place when norm_topk_prob.
class MoeRouterRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        auto k = c.positive("top_k");
        if (!k) return k.error();
        if (in.rank() != 2 || *k > in.shape[1]) return c.fail("moe router expects [S, experts >= top_k]");
        OpPlan p;
        p.outputs.push_back({{in.shape[0], *k}, in.dtype, in.batched, true});
        p.outputs.push_back({{in.shape[0], *k}, DType::Int64, in.batched, true});
        p.saved.push_back({SavedDecl::Kind::Output, 1});
        if (c.flag("norm_topk_prob", true)) {
            p.created = {{{in.shape[0], *k}, in.dtype, in.batched, true},
                         {{in.shape[0], 1}, in.dtype, in.batched, true}};
            p.createdRoles = {"topk weights (cloned by the in-place div)", "sum of the top-k weights"};
            p.saved.push_back({SavedDecl::Kind::Created, 0});
            p.saved.push_back({SavedDecl::Kind::Created, 1});
        }
        return p;
    }
};

/// One expert on its routed tokens: inputs x [S, D], indices [S, k] int64, weights [S, k]; outputs the
/// weighted expert output [n, D] and torch.where's index pairs [n, 2] int64.
class MoeExpertRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Lower; }
    int minInputs() const override { return 3; }
    int maxInputs() const override { return 3; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& x = c.inputs[0];
        const auto& w = c.inputs[2];
        if (x.rank() != 2 || !isFloating(x.dtype)) return c.fail("moe expert expects [S, D], got " + c.in());
        auto n = c.integer("tokens", 0, 0);
        if (!n) return n.error();
        auto inner = c.positive("intermediate");
        if (!inner) return inner.error();
        const auto names = projNames(c.attrs);
        if (names.size() != 3) return c.failAttribute("names", "names must list three projections");
        const std::int64_t d = x.shape[1], tokens = *n, i = *inner;
        const bool amp = c.flag("amp", false);
        OpPlan p;
        p.outputs.push_back({{tokens, d}, amp ? DType::Float32 : x.dtype, x.batched, true});
        p.outputs.push_back({{tokens, 2}, DType::Int64, x.batched, true});
        p.params = {
            {names[0] + ".weight", {i, d}}, {names[1] + ".weight", {i, d}}, {names[2] + ".weight", {d, i}}};
        const TensorInfo rows{{tokens, d}, x.dtype, x.batched, true},
            wide{{tokens, i}, x.dtype, x.batched, true};
        // under autocast, w1 and w3 each cast the gathered fp32 rows: two half copies
        p.created = {rows, wide, wide, wide, wide, rows, {{tokens, 1}, w.dtype, w.batched, true}};
        p.createdRoles = {"routed rows", "w1 output", "act output",    "w3 output",
                          "gated",       "w2 output", "routing weight"};
        if (amp) {
            p.created.push_back(rows);
            p.createdRoles.push_back("routed rows (w3's cast)");
        }
        p.saved = {{SavedDecl::Kind::Output, 1},  {SavedDecl::Kind::Created, 0, -1, 0},
                   {SavedDecl::Kind::Created, 1}, {SavedDecl::Kind::Created, 2},
                   {SavedDecl::Kind::Created, 3}, {SavedDecl::Kind::Created, 4, -1, 2},
                   {SavedDecl::Kind::Created, 5}, {SavedDecl::Kind::Created, 6}};
        if (amp) p.saved.push_back({SavedDecl::Kind::Created, 7, -1, 1});
        // backward inside the expert: the gradients of w2's output, the gated product, both branches and the
        // rows live together at most
        auto wb = wide.bytes(), rb = rows.bytes();
        if (wb && rb) p.bwdWorkspace = Affine{0, 3 * wb->perSample + 2 * rb->perSample};
        return p;
    }
};

/// index_add_ of every expert's output into a zeros [S, D]: inputs (out_0, index_0, out_1, index_1, ...).
class MoeCombineRule : public OpRule {
public:
    int minInputs() const override { return 2; }
    int maxInputs() const override { return static_cast<int>(2 * kMaxExperts); }
    Result<OpPlan> plan(const OpContext& c) const override {
        auto rows = c.positive("rows");
        if (!rows) return rows.error();
        if (c.inputs.size() % 2) return c.fail("moe combine takes (output, index) pairs");
        const auto& first = c.inputs[0];
        OpPlan p;
        p.outputs.push_back({{*rows, first.shape[1]}, first.dtype, first.batched, true});
        for (int i = 0; i < static_cast<int>(c.inputs.size()); ++i)
            p.saved.push_back({SavedDecl::Kind::Input, i});
        return p;
    }
};

struct Experts {
    std::int64_t experts, topK, inner;
    std::string load, act, names;
};

/// transformers 4: one expert at a time (moe_expert), index_add_ into the output (moe_combine).
Result<int> loopExperts(GraphBuilder& b, const std::string& path, const Experts& ex, int x, DType low,
                        int indices, int weights) {
    const std::int64_t seq = b.info(x).shape[0];
    int xLow = x;
    const bool amp = b.info(x).dtype != low;
    if (amp) { // one half copy of the rows for all experts (each expert's casts are modelled in moe_expert)
        auto c = b.addCast(path + ".experts_input", xLow, low);
        if (!c) return c.error();
        xLow = *c;
    }
    const std::int64_t balanced = (seq * ex.topK + ex.experts - 1) / ex.experts;
    std::vector<int> parts;
    for (std::int64_t e = 0; e < ex.experts; ++e) {
        Attributes ea;
        ea.set("tokens", ex.load == "worst" ? (e < ex.topK ? seq : std::int64_t{0}) : balanced);
        ea.set("intermediate", ex.inner);
        ea.set("names", ex.names);
        ea.set("act", ex.act);
        ea.set("amp", amp);
        auto out =
            b.addOpMulti("moe_expert", path + ".experts." + std::to_string(e), ea, {xLow, indices, weights});
        if (!out) return out.error();
        parts.push_back((*out)[0]);
        parts.push_back((*out)[1]);
    }
    Attributes ma;
    ma.set("rows", seq);
    return b.addOp("moe_combine", path + ".index_add", ma, parts);
}

/// transformers 5: every routed row at once through two grouped matmuls (rules_moe_grouped.cpp). Every
/// (token, expert) pair is computed whatever the load, so `load` does not change it.
Result<int> groupedExperts(GraphBuilder& b, const std::string& path, const Experts& ex, int x, int indices,
                           int weights) {
    Attributes ga;
    ga.set("experts", ex.experts);
    ga.set("intermediate", ex.inner);
    return b.addOp("moe_grouped", path + ".experts", ga, {x, indices, weights});
}

struct Routed {
    int weights, indices;
    DType low; ///< the router matmul's dtype (half under autocast): the loop experts' dtype
};

/// Mixtral, Qwen: the gate linear, softmax in fp32, top-k (moe_router); the weights cast back to the hidden
/// states' dtype.
Result<Routed> softmaxRouter(GraphBuilder& b, const std::string& path, const Attributes& a, int x,
                             std::int64_t experts, std::int64_t topK) {
    auto logits = addLinear(b, path + ".gate", x, experts, false);
    if (!logits) return logits.error();
    const DType low = b.info(*logits).dtype;
    int probsIn = *logits;
    if (low != DType::Float32) { // F.softmax(router_logits, dim=1, dtype=torch.float)
        auto c = b.addCast(path + ".router_float", probsIn, DType::Float32);
        if (!c) return c.error();
        probsIn = *c;
    }
    auto probs = b.addOp("softmax", path + ".softmax", {}, {probsIn});
    if (!probs) return probs.error();
    Attributes ra;
    ra.set("top_k", topK);
    ra.set("norm_topk_prob", a.getBool("norm_topk_prob").value_or(true));
    auto routed = b.addOpMulti("moe_router", path + ".topk", ra, {*probs});
    if (!routed) return routed.error();
    int weights = (*routed)[0];
    if (b.info(x).dtype != DType::Float32) { // routing_weights.to(hidden_states.dtype)
        auto c = b.addCast(path + ".routing_weights", weights, b.info(x).dtype);
        if (!c) return c.error();
        weights = *c;
    }
    return Routed{weights, (*routed)[1], low};
}

/// DeepSeek-V3 and V2: one op (rules_moe_router.cpp); the weights stay fp32.
Result<Routed> groupedRouter(GraphBuilder& b, const std::string& path, const Attributes& a, int x,
                             std::int64_t experts, std::int64_t topK) {
    Attributes ra;
    ra.set("experts", experts);
    ra.set("top_k", topK);
    ra.set("groups", a.getInt("groups").value_or(1));
    ra.set("topk_groups", a.getInt("topk_groups").value_or(1));
    ra.set("norm_topk_prob", a.getBool("norm_topk_prob").value_or(true));
    ra.set("scoring",
           std::string(a.getString("router").value_or("") == "softmax_grouped" ? "softmax" : "sigmoid"));
    auto routed = b.addOpMulti("moe_router_grouped", path + ".gate", ra, {x});
    if (!routed) return routed.error();
    return Routed{(*routed)[0], (*routed)[1], b.info(x).dtype};
}

class MoeRule : public OpRule {
public:
    bool composite() const override { return true; }
    Result<OpPlan> plan(const OpContext& c) const override { return c.fail("composite"); }
    Result<int> expand(GraphBuilder& b, const std::string& path, const Attributes& a,
                       const std::vector<int>& inputs) const override {
        const TensorInfo x = b.info(inputs[0]);
        if (x.rank() != 2 || !isFloating(x.dtype))
            return makeError(path + ": moe expects [S, D], got " + shapeToString(x.shape));
        OpContext ctx{path, a, {x}, x.dtype, x.dtype};
        auto experts = ctx.positive("experts");
        if (!experts) return experts.error();
        if (*experts > kMaxExperts)
            return ctx.failAttribute("experts", "experts = " + std::to_string(*experts) +
                                                    " is too many (at most " + std::to_string(kMaxExperts) +
                                                    ")");
        auto topK = ctx.positive("top_k");
        if (!topK) return topK.error();
        if (*topK > *experts)
            return ctx.failAttribute("top_k", "top_k = " + std::to_string(*topK) +
                                                  " exceeds experts = " + std::to_string(*experts));
        auto inner = ctx.positive("intermediate");
        if (!inner) return inner.error();
        auto sharedInner = ctx.integer("shared_intermediate", 0, 0);
        if (!sharedInner) return sharedInner.error();
        const std::string load = a.getString("load").value_or("balanced");
        if (load != "balanced" && load != "worst")
            return ctx.failAttribute("load", "load must be \"balanced\" (each expert gets tokens * top_k / "
                                             "experts) or \"worst\" (top_k experts get every token), got \"" +
                                                 load + "\"");
        if (projNames(a).size() != 3)
            return ctx.failAttribute("names", "names must list the three expert projections, e.g. "
                                              "\"gate_proj,up_proj,down_proj\"");
        const std::string impl = a.getString("impl").value_or("loop");
        if (impl != "loop" && impl != "grouped_mm")
            return ctx.failAttribute("impl",
                                     "impl must be \"loop\" (one expert at a time, transformers 4) or "
                                     "\"grouped_mm\" (transformers 5's default), got \"" +
                                         impl + "\"");
        const std::string act = a.getString("act").value_or("silu");
        if (act != "silu" && act != "gelu" && act != "gelu_tanh")
            return ctx.failAttribute("act",
                                     "act must be \"silu\", \"gelu\" or \"gelu_tanh\", got \"" + act + "\"");
        const std::int64_t d = x.shape[1];

        auto linear = [&](const std::string& name, int in, std::int64_t out) {
            return addLinear(b, path + "." + name, in, out, false);
        };
        const std::string router = a.getString("router").value_or("softmax");
        if (router != "softmax" && router != "sigmoid_grouped" && router != "softmax_grouped")
            return ctx.failAttribute("router",
                                     "router must be \"softmax\" (Mixtral, Qwen), \"sigmoid_grouped\" "
                                     "(DeepSeek-V3) or \"softmax_grouped\" (DeepSeek-V2), got \"" +
                                         router + "\"");
        auto routed = router == "softmax" ? softmaxRouter(b, path, a, inputs[0], *experts, *topK)
                                          : groupedRouter(b, path, a, inputs[0], *experts, *topK);
        if (!routed) return routed.error();
        const auto [weights, indices, low] = *routed;
        const Experts ex{*experts, *topK, *inner,
                         load,     act,   a.getString("names").value_or("gate_proj,up_proj,down_proj")};
        auto y = impl == "grouped_mm" ? groupedExperts(b, path, ex, inputs[0], indices, weights)
                                      : loopExperts(b, path, ex, inputs[0], low, indices, weights);
        if (!y) return y.error();
        if (*sharedInner == 0) return y;

        // Qwen2-MoE: shared_expert (a dense MLP) * sigmoid(shared_expert_gate(x)), added to the routed
        // output; DeepSeek: shared_experts, ungated
        const std::string shared = a.getString("shared_name").value_or("shared_expert");
        auto g = linear(shared + ".gate_proj", inputs[0], *sharedInner);
        if (!g) return g.error();
        auto u = linear(shared + ".up_proj", inputs[0], *sharedInner);
        if (!u) return u.error();
        Attributes aa;
        if (act == "gelu_tanh") aa.set("approximate", std::string("tanh"));
        auto ac = b.addOp(act == "silu" ? "silu" : "gelu", path + "." + shared + ".act", aa, {*g});
        if (!ac) return ac.error();
        auto gated = b.addOp("mul", path + "." + shared + ".gated", {}, {*ac, *u});
        if (!gated) return gated.error();
        auto down = linear(shared + ".down_proj", *gated, d);
        if (!down) return down.error();
        int sharedOut = *down;
        if (a.getBool("shared_gate").value_or(true)) {
            auto sg = linear("shared_expert_gate", inputs[0], 1);
            if (!sg) return sg.error();
            auto sig = b.addOp("sigmoid", path + ".shared_expert_gate.sigmoid", {}, {*sg});
            if (!sig) return sig.error();
            auto m = b.addOp("mul", path + ".shared_expert_gate.mul", {}, {*sig, sharedOut});
            if (!m) return m.error();
            sharedOut = *m;
        }
        return b.addOp("add", path + ".add_shared", {}, {*y, sharedOut});
    }
};

} // namespace

void registerMoeOps() {
    addOpRule("moe", std::make_unique<MoeRule>());
    addOpRule("moe_router", std::make_unique<MoeRouterRule>(), true);
    addOpRule("moe_expert", std::make_unique<MoeExpertRule>(), true);
    addOpRule("moe_combine", std::make_unique<MoeCombineRule>(), true);
}

} // namespace batchfit
