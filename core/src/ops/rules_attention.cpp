// Multi-head self-attention, expanded into primitives. Eager follows Hugging Face BERT/GPT-2 code (bmm saves
// both operands, softmax saves its result, dropout its mask); flash / memory-efficient SDPA saves q, k, v,
// the output and a per-row log-sum-exp (aten/src/ATen/native/transformers, derivatives.yaml
// `_scaled_dot_product_flash_attention`). Rotary embeddings (Llama) save cos and sin, shared by all layers.
#include "graph/graph_builder.h"
#include "ops/op_rule.h"

#include <algorithm>
#include <cmath>

namespace batchfit {
namespace {

struct Heads {
    std::int64_t heads, kvHeads, headDim;
};

Result<Heads> headsOf(const OpContext& c, std::int64_t width) {
    auto h = c.positive("heads");
    if (!h) return h.error();
    Heads r{*h, c.attrs.getInt("kv_heads").value_or(*h), c.attrs.getInt("head_dim").value_or(0)};
    if (r.headDim <= 0) r.headDim = width / r.heads;
    return r;
}

/// q @ k^T per head: [S, H*hd] x [S, H*hd] -> [H, S, S].
class ScoresRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Lower; }
    int minInputs() const override { return 2; }
    int maxInputs() const override { return 2; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& q = c.inputs[0];
        auto h = c.positive("heads");
        if (!h) return h.error();
        OpPlan p;
        p.outputs.push_back({{*h, q.shape[0], c.inputs[1].shape[0]}, q.dtype, q.batched, true});
        p.saved = {{SavedDecl::Kind::Input, 0, 1}, {SavedDecl::Kind::Input, 1, 0}};
        return p;
    }
};

/// probs @ v per head: [H, S, S] x [S, H*hd] -> [H, S, hd].
class ContextRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Lower; }
    int minInputs() const override { return 2; }
    int maxInputs() const override { return 2; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& probs = c.inputs[0];
        const auto& v = c.inputs[1];
        const std::int64_t h = probs.shape[0];
        OpPlan p;
        p.outputs.push_back({{h, probs.shape[1], v.shape[1] / h}, probs.dtype, probs.batched, true});
        p.saved = {{SavedDecl::Kind::Input, 0, 1}, {SavedDecl::Kind::Input, 1, 0}};
        return p;
    }
};

/// [H, S, hd] -> permute + contiguous -> [S, H*hd].
class MergeHeadsRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        OpPlan p;
        p.outputs.push_back({{in.shape[1], in.shape[0] * in.shape[2]}, in.dtype, in.batched, true});
        return p;
    }
};

/// Grouped-query attention in eager mode: k and v expanded to all heads (a copy).
class RepeatKvRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        auto times = c.positive("times");
        if (!times) return times.error();
        OpPlan p;
        p.outputs.push_back({{in.shape[0], in.shape[1] * *times}, in.dtype, in.batched, true});
        return p;
    }
};

/// q*cos + rotate_half(q)*sin: saves cos and sin (inputs 1, 2), which do not need gradients.
class RopeRule : public OpRule {
public:
    int minInputs() const override { return 3; }
    int maxInputs() const override { return 3; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        p.saved = {{SavedDecl::Kind::Input, 1}, {SavedDecl::Kind::Input, 2}};
        auto b = in.bytes();
        if (b) p.fwdWorkspace = Affine{b->constant * 3, b->perSample * 3}; // rotate_half: two halves + cat
        if (b) p.bwdWorkspace = Affine{b->constant * 2, b->perSample * 2};
        return p;
    }
};

/// Fused SDPA (flash or memory-efficient): saves q, k, v, output, logsumexp.
class SdpaRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Lower; }
    int minInputs() const override { return 3; }
    int maxInputs() const override { return 3; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& q = c.inputs[0];
        auto h = c.positive("heads");
        if (!h) return h.error();
        const std::string impl = c.attrs.getString("impl").value_or("flash");
        // the CPU kernel (_scaled_dot_product_flash_attention_for_cpu) keeps an unpadded logsumexp in fp32
        // too
        const bool flash = (impl == "flash" && q.dtype != DType::Float32) || impl == "cpu_flash";
        std::int64_t rows = q.shape[0];
        if (!flash) rows = (rows + 31) / 32 * 32; // memory-efficient kernel pads logsumexp to 32 rows
        OpPlan p;
        p.outputs.push_back({q.shape, q.dtype, q.batched, true});
        p.created.push_back({{*h, rows}, DType::Float32, q.batched, true});
        p.createdRoles.push_back("logsumexp");
        p.saved = {{SavedDecl::Kind::Input, 0},
                   {SavedDecl::Kind::Input, 1},
                   {SavedDecl::Kind::Input, 2},
                   {SavedDecl::Kind::Output, 0},
                   {SavedDecl::Kind::Created, 0}};
        if (c.real("dropout", 0.0) > 0 && impl != "cpu_flash") { // philox seed and offset
            p.created.push_back({{2}, DType::Int64, false, true});
            p.createdRoles.push_back("rng state");
            p.saved.push_back({SavedDecl::Kind::Created, 1});
        }
        // Backward: an fp32 accumulator for dq and the per-row softmax_d.
        auto dq = TensorInfo{q.shape, DType::Float32, q.batched, true}.bytes();
        auto d = TensorInfo{{*h, rows}, DType::Float32, q.batched, true}.bytes();
        if (dq && d) p.bwdWorkspace = Affine{dq->constant + d->constant, dq->perSample + d->perSample};
        return p;
    }
};

/// F.scaled_dot_product_attention on [H, S, D] per-sample q, k, v (a hand-written model's call). What each
/// backend saves (derivatives.yaml, 2.6): flash (CUDA, fp16/bf16, sm80+; also the CPU kernel,
/// `_scaled_dot_product_flash_attention_for_cpu`) q, k, v, out and an fp32 logsumexp [H, S]; memory-efficient
/// (CUDA: fp32, masks, older GPUs) the logsumexp padded to 32 rows (`ceil_div(S, 32) * 32`) and the mask as a
/// bias; CUDA kernels add the philox seed and offset with dropout. impl "auto" is CUDA's default choice
/// (sdp_utils.cpp priority order: flash, then memory-efficient): flash for half inputs without a mask, else
/// memory-efficient. "cpu_flash" is what a CPU runs (measured: tests/data/reference/ops-torch2.json).
class ScaledDotProductRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Lower; }
    int minInputs() const override { return 3; }
    int maxInputs() const override { return 3; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto &q = c.inputs[0], &k = c.inputs[1], &v = c.inputs[2];
        if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3)
            return c.fail(
                "scaled_dot_product_attention expects q, k, v of per-sample shape [heads, seq, dim], got " +
                c.in(0) + ", " + c.in(1) + ", " + c.in(2));
        if (k.shape[0] != q.shape[0] || v.shape[0] != q.shape[0] || k.shape[1] != v.shape[1] ||
            k.shape[2] != q.shape[2])
            return c.fail("scaled_dot_product_attention: q " + c.in(0) + ", k " + c.in(1) + " and v " +
                          c.in(2) + " do not match (grouped-query k, v must be repeated first)");
        const std::string impl = c.attrs.getString("impl").value_or("auto");
        if (impl != "auto" && impl != "flash" && impl != "mem_efficient" && impl != "cpu_flash")
            return c.failAttribute("impl", "impl must be \"auto\", \"flash\", \"mem_efficient\" or "
                                           "\"cpu_flash\", got \"" +
                                               impl + "\"");
        std::optional<Shape> mask;
        if (c.attrs.has("mask_shape")) {
            auto m = c.attrs.getInts("mask_shape", 0);
            if (!m || m->empty() || std::any_of(m->begin(), m->end(), [](std::int64_t d) {
                    return d <= 0 || d > (std::int64_t{1} << 32);
                }))
                return c.failAttribute("mask_shape", "'mask_shape' must be a list of positive integers");
            mask = Shape(m->begin(), m->end());
        }
        const double drop = c.real("dropout", 0.0);
        if (!(drop >= 0.0 && drop < 1.0)) return c.failAttribute("dropout", "dropout must be in [0, 1)");
        const bool half = q.dtype != DType::Float32;
        const bool flash =
            impl == "cpu_flash" || (impl == "flash" && half && !mask) || (impl == "auto" && half && !mask);
        std::int64_t rows = q.shape[1];
        if (!flash) rows = (rows + 31) / 32 * 32;
        OpPlan p;
        p.outputs.push_back({{q.shape[0], q.shape[1], v.shape[2]}, q.dtype, q.batched, true});
        p.created.push_back({{q.shape[0], rows}, DType::Float32, q.batched, true});
        p.createdRoles.push_back("logsumexp");
        p.saved = {{SavedDecl::Kind::Input, 0},
                   {SavedDecl::Kind::Input, 1},
                   {SavedDecl::Kind::Input, 2},
                   {SavedDecl::Kind::Output, 0},
                   {SavedDecl::Kind::Created, 0}};
        if (mask) { // a bool mask becomes an additive bias in q's dtype (convert_boolean_attn_mask), saved
            p.created.push_back({*mask, q.dtype, false, true});
            p.createdRoles.push_back("attn_bias");
            p.saved.push_back({SavedDecl::Kind::Created, static_cast<int>(p.created.size()) - 1});
        }
        if (drop > 0 && impl != "cpu_flash") { // philox seed and offset
            p.created.push_back({{2}, DType::Int64, false, true});
            p.createdRoles.push_back("rng state");
            p.saved.push_back({SavedDecl::Kind::Created, static_cast<int>(p.created.size()) - 1});
        }
        auto dq = TensorInfo{q.shape, DType::Float32, q.batched, true}.bytes();
        auto d = TensorInfo{{q.shape[0], rows}, DType::Float32, q.batched, true}.bytes();
        if (dq && d) p.bwdWorkspace = Affine{dq->constant + d->constant, dq->perSample + d->perSample};
        return p;
    }
};

class AttentionRule : public OpRule {
public:
    bool composite() const override { return true; }
    Result<OpPlan> plan(const OpContext& c) const override { return c.fail("composite"); }
    Result<int> expand(GraphBuilder& b, const std::string& path, const Attributes& a,
                       const std::vector<int>& inputs) const override {
        const TensorInfo x = b.info(inputs[0]);
        if (x.rank() != 2 || !isFloating(x.dtype))
            return makeError(path + ": attention expects [S, D], got " + shapeToString(x.shape));
        OpContext ctx{path, a, {x}, x.dtype, x.dtype};
        auto hr = headsOf(ctx, x.shape[1]);
        if (!hr) return hr.error();
        const Heads h = *hr;
        if (h.heads <= 0 || h.kvHeads <= 0 || h.headDim <= 0 || h.heads % h.kvHeads)
            return makeError(path + ": heads " + std::to_string(h.heads) +
                             " must be a multiple of kv_heads " + std::to_string(h.kvHeads));
        if (!a.has("head_dim") && x.shape[1] % h.heads)
            return makeError(path + ": width " + std::to_string(x.shape[1]) + " is not divisible by heads " +
                             std::to_string(h.heads));
        std::int64_t allHeads = 0; // heads * head_dim, the q width (kv widths are at most this)
        if (__builtin_mul_overflow(h.heads, h.headDim, &allHeads) || allHeads > (std::int64_t{1} << 40))
            return makeError(path + ": heads " + std::to_string(h.heads) + " x head_dim " +
                             std::to_string(h.headDim) + " is too large");
        const std::string impl = a.getString("impl").value_or("eager");
        if (impl != "eager" && impl != "flash" && impl != "mem_efficient" && impl != "cpu_flash")
            return makeError(
                path + ": impl must be \"eager\", \"flash\", \"mem_efficient\" or \"cpu_flash\", got \"" +
                impl + "\"");
        const std::string qkv = a.getString("qkv").value_or("separate");
        if (qkv != "separate" && qkv != "fused")
            return makeError(path + ": qkv must be \"separate\" or \"fused\"");
        const bool bias = a.getBool("bias").value_or(true);
        const std::int64_t qw = h.heads * h.headDim, kvw = h.kvHeads * h.headDim;

        auto linear = [&](const std::string& name, int in, std::int64_t out, bool withBias) {
            Attributes la;
            la.set("out_features", out);
            la.set("bias", withBias);
            return b.addOp("linear", path + "." + name, la, {in});
        };
        int q, k, v;
        if (qkv == "fused") {
            auto all = linear("qkv_proj", inputs[0], qw + 2 * kvw, bias);
            if (!all) return all.error();
            Attributes sa;
            sa.set("sizes", std::vector<std::int64_t>{qw, kvw, kvw});
            auto parts = b.addOpMulti("split", path + ".split", sa, {*all});
            if (!parts) return parts.error();
            q = (*parts)[0], k = (*parts)[1], v = (*parts)[2];
        } else {
            auto rq = linear("q_proj", inputs[0], qw, bias);
            if (!rq) return rq.error();
            auto rk = linear("k_proj", inputs[0], kvw, bias);
            if (!rk) return rk.error();
            auto rv = linear("v_proj", inputs[0], kvw, bias);
            if (!rv) return rv.error();
            q = *rq, k = *rk, v = *rv;
        }
        const std::int64_t seq = x.shape[0];
        if (a.getBool("rope").value_or(false)) {
            const TensorInfo table{{seq, h.headDim}, b.info(q).dtype, true, true};
            const std::string key = "rope " + std::to_string(seq) + "x" + std::to_string(h.headDim) + " " +
                                    std::string(dtypeName(table.dtype));
            int cos = b.sharedConstant(key + " cos", table), sin = b.sharedConstant(key + " sin", table);
            auto rq = b.addOp("rope", path + ".rope_q", {}, {q, cos, sin});
            if (!rq) return rq.error();
            auto rk = b.addOp("rope", path + ".rope_k", {}, {k, cos, sin});
            if (!rk) return rk.error();
            q = *rq, k = *rk;
        }
        const double drop = a.getDouble("dropout").value_or(0.0);
        int core;
        if (impl == "eager") {
            if (h.kvHeads != h.heads) {
                Attributes ra;
                ra.set("times", h.heads / h.kvHeads);
                auto rk = b.addOp("repeat_kv", path + ".repeat_k", ra, {k});
                if (!rk) return rk.error();
                auto rv = b.addOp("repeat_kv", path + ".repeat_v", ra, {v});
                if (!rv) return rv.error();
                k = *rk, v = *rv;
            }
            b.beginSelectiveUnit();
            Attributes ha;
            ha.set("heads", h.heads);
            auto s = b.addOp("attn_scores", path + ".scores", ha, {q, k});
            if (!s) return s.error();
            Attributes sc;
            sc.set("factor", 1.0 / std::sqrt(static_cast<double>(h.headDim)));
            s = b.addOp("scale", path + ".scale", sc, {*s});
            if (!s) return s.error();
            if (a.getBool("causal").value_or(false)) {
                if (a.getString("mask").value_or("none") == "buffer") {
                    Attributes ma;
                    ma.set("max_positions", a.getInt("max_positions").value_or(seq));
                    s = b.addOp("causal_where", path + ".mask", ma, {*s});
                } else {
                    s = b.addOp("scale", path + ".mask", sc,
                                {*s}); // scores + mask: a new tensor, saves nothing
                }
                if (!s) return s.error();
            }
            auto pr = b.addOp("softmax", path + ".softmax", {}, {*s});
            if (!pr) return pr.error();
            if (drop > 0) {
                Attributes da;
                da.set("p", drop);
                pr = b.addOp("dropout", path + ".attn_dropout", da, {*pr});
                if (!pr) return pr.error();
            }
            auto ctxT = b.addOp("attn_context", path + ".context", ha, {*pr, v});
            if (!ctxT) return ctxT.error();
            b.endSelectiveUnit();
            auto m = b.addOp("merge_heads", path + ".merge_heads", {}, {*ctxT});
            if (!m) return m.error();
            core = *m;
        } else {
            Attributes fa = a;
            fa.set("impl", impl);
            b.beginSelectiveUnit();
            auto o = b.addOp("sdpa", path + ".sdpa", fa, {q, k, v});
            b.endSelectiveUnit();
            if (!o) return o.error();
            core = *o;
        }
        return linear("out_proj", core, x.shape[1], a.getBool("out_bias").value_or(true));
    }
};

} // namespace

void registerAttentionOps() {
    addOpRule("attention", std::make_unique<AttentionRule>());
    addOpRule("attn_scores", std::make_unique<ScoresRule>(), true);
    addOpRule("attn_context", std::make_unique<ContextRule>(), true);
    addOpRule("merge_heads", std::make_unique<MergeHeadsRule>(), true);
    addOpRule("repeat_kv", std::make_unique<RepeatKvRule>(), true);
    addOpRule("rope", std::make_unique<RopeRule>(), true);
    addOpRule("sdpa", std::make_unique<SdpaRule>(), true);
    addOpRule("scaled_dot_product_attention", std::make_unique<ScaledDotProductRule>());
}

} // namespace batchfit
