// Multi-head self-attention, expanded into primitives. Eager follows Hugging Face BERT/GPT-2 code (bmm saves
// both operands, softmax saves its result, dropout its mask); flash / memory-efficient SDPA (rules_sdpa.cpp)
// saves q, k, v,
// the output and a per-row log-sum-exp (aten/src/ATen/native/transformers, derivatives.yaml
// `_scaled_dot_product_flash_attention`). Rotary embeddings (Llama) save cos and sin, shared by all layers.
// qk_norm (Qwen3, Gemma 3) adds an RMSNorm over head_dim on q and k; softcap (Gemma 2, eager only: SDPA has
// no soft-capping, flash-attn's is in the kernel) adds scores / cap, tanh, * cap.
#include "graph/graph_builder.h"
#include "ops/attention_names.h"
#include "ops/attention_parts.h"
#include "ops/linear_op.h"
#include "ops/op_rule.h"

#include <cmath>

namespace batchfit {

std::pair<int, int> ropeTables(GraphBuilder& b, std::int64_t seq, std::int64_t width, DType dtype) {
    const TensorInfo table{{seq, width}, dtype, false, true};
    const std::string key =
        "rope " + std::to_string(seq) + "x" + std::to_string(width) + " " + std::string(dtypeName(dtype));
    return {b.sharedConstant(key + " cos", table), b.sharedConstant(key + " sin", table)};
}

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

/// q, k and v: the projections (fused and split, or three), Qwen3/Gemma 3's per-head norms, the rotary
/// embedding.
Result<Qkv> projections(GraphBuilder& b, const std::string& path, const Attributes& a, int x, const Heads& h,
                        const std::vector<std::string>& names) {
    const bool bias = a.getBool("bias").value_or(true);
    const std::int64_t qw = h.heads * h.headDim, kvw = h.kvHeads * h.headDim;
    Qkv t{};
    if (a.getString("qkv").value_or("separate") == "fused") {
        auto all = addLinear(b, path + "." + names[0], x, qw + 2 * kvw, bias);
        if (!all) return all.error();
        Attributes sa;
        sa.set("sizes", std::vector<std::int64_t>{qw, kvw, kvw});
        auto parts = b.addOpMulti("split", path + ".split", sa, {*all});
        if (!parts) return parts.error();
        t = {(*parts)[0], (*parts)[1], (*parts)[2]};
    } else {
        auto rq = addLinear(b, path + "." + names[0], x, qw, bias);
        if (!rq) return rq.error();
        auto rk = addLinear(b, path + "." + names[1], x, kvw, bias);
        if (!rk) return rk.error();
        auto rv = addLinear(b, path + "." + names[2], x, kvw, bias);
        if (!rv) return rv.error();
        t = {*rq, *rk, *rv};
    }
    const std::int64_t seq = b.info(x).shape[0];
    if (a.getBool("qk_norm").value_or(false)) {
        // Qwen3 / Gemma 3: RMSNorm over head_dim of each head of q and k (a view [S, H, hd]), before RoPE
        auto norm = [&](int in, std::int64_t heads, const std::string& name) -> Result<int> {
            Attributes va;
            va.set("shape", std::vector<std::int64_t>{seq, heads, h.headDim});
            auto v = b.addOp("reshape", path + "." + name + ".view", va, {in});
            if (!v) return v.error();
            Attributes na;
            na.set("eps", a.getDouble("qk_norm_eps").value_or(1e-6));
            na.set("gemma_scale", a.getBool("qk_norm_gemma_scale").value_or(false)); // Gemma 3
            auto n = b.addOp("rmsnorm", path + "." + name, na, {*v});
            if (!n) return n.error();
            Attributes ba;
            ba.set("shape", std::vector<std::int64_t>{seq, heads * h.headDim});
            return b.addOp("reshape", path + "." + name + ".merge", ba, {*n});
        };
        auto nq = norm(t.q, h.heads, "q_norm");
        if (!nq) return nq.error();
        auto nk = norm(t.k, h.kvHeads, "k_norm");
        if (!nk) return nk.error();
        t.q = *nq, t.k = *nk;
    }
    if (a.getBool("rope").value_or(false)) {
        const auto [cos, sin] = ropeTables(b, seq, h.headDim, b.info(t.q).dtype);
        auto rq = b.addOp("rope", path + ".rope_q", {}, {t.q, cos, sin});
        if (!rq) return rq.error();
        auto rk = b.addOp("rope", path + ".rope_k", {}, {t.k, cos, sin});
        if (!rk) return rk.error();
        t.q = *rq, t.k = *rk;
    }
    return t;
}

/// Scores, mask, softmax (in fp32 with `softmax_dtype`), dropout and `@ v`, written out: the S x S tensors.
Result<int> eagerCore(GraphBuilder& b, const std::string& path, const Attributes& a, Qkv t, const Heads& h,
                      std::int64_t seq) {
    if (h.kvHeads != h.heads) {
        Attributes ra;
        ra.set("times", h.heads / h.kvHeads);
        auto rk = b.addOp("repeat_kv", path + ".repeat_k", ra, {t.k});
        if (!rk) return rk.error();
        auto rv = b.addOp("repeat_kv", path + ".repeat_v", ra, {t.v});
        if (!rv) return rv.error();
        t.k = *rk, t.v = *rv;
    }
    // torch.matmul on the head-split views reshapes them for bmm: a view into a fused projection (or a
    // DynamicCache's torch.cat) becomes a copy of its own, and the copy is what autograd saves
    auto own = [&](int in, const char* name) -> Result<int> {
        if (b.info(in).contiguous) return in;
        return b.addOp("contiguous", path + "." + name, {}, {in});
    };
    b.beginSelectiveUnit();
    auto oq = own(t.q, "q_copy");
    if (!oq) return oq.error();
    auto ok = own(t.k, "k_copy");
    if (!ok) return ok.error();
    Attributes ha;
    ha.set("heads", h.heads);
    auto s = b.addOp("attn_scores", path + ".scores", ha, {*oq, *ok});
    if (!s) return s.error();
    Attributes sc;
    sc.set("factor", a.getDouble("scaling").value_or(1.0 / std::sqrt(static_cast<double>(h.headDim))));
    s = b.addOp("scale", path + ".scale", sc, {*s});
    if (!s) return s.error();
    if (const double cap = a.getDouble("softcap").value_or(0.0); cap > 0) {
        // Gemma 2: scores / cap, tanh (saves its result), * cap
        Attributes down, up;
        down.set("factor", 1.0 / cap);
        up.set("factor", cap);
        s = b.addOp("scale", path + ".softcap_div", down, {*s});
        if (s) s = b.addOp("tanh", path + ".softcap_tanh", {}, {*s});
        if (s) s = b.addOp("scale", path + ".softcap_mul", up, {*s});
        if (!s) return s.error();
    }
    if (a.getBool("causal").value_or(false)) {
        if (a.getString("mask").value_or("none") == "buffer") {
            Attributes ma;
            ma.set("max_positions", a.getInt("max_positions").value_or(seq));
            s = b.addOp("causal_where", path + ".mask", ma, {*s});
        } else {
            s = b.addOp("scale", path + ".mask", sc, {*s}); // scores + mask: a new tensor, saves nothing
        }
        if (!s) return s.error();
    }
    // transformers' eager_attention_forward (Llama-style decoders, GPT-NeoX): softmax(..., dtype=float32)
    // .to(query.dtype): the fp32 probabilities are saved by the softmax, the cast back by the matmul
    const DType scoreType = b.info(*s).dtype;
    const bool fp32Softmax =
        a.getString("softmax_dtype").value_or("") == "float32" && scoreType != DType::Float32;
    if (fp32Softmax) s = b.addCast(path + ".softmax_upcast", *s, DType::Float32);
    if (!s) return s.error();
    auto pr = b.addOp("softmax", path + ".softmax", {}, {*s});
    if (pr && fp32Softmax) pr = b.addCast(path + ".softmax_downcast", *pr, scoreType);
    if (!pr) return pr.error();
    if (const double drop = a.getDouble("dropout").value_or(0.0); drop > 0) {
        Attributes da;
        da.set("p", drop);
        pr = b.addOp("dropout", path + ".attn_dropout", da, {*pr});
        if (!pr) return pr.error();
    }
    auto ov = own(t.v, "v_copy");
    if (!ov) return ov.error();
    auto ctxT = b.addOp("attn_context", path + ".context", ha, {*pr, *ov});
    if (!ctxT) return ctxT.error();
    b.endSelectiveUnit();
    return b.addOp("merge_heads", path + ".merge_heads", {}, {*ctxT});
}

/// SDPA's flash or memory-efficient kernel (rules_sdpa.cpp).
Result<int> fusedCore(GraphBuilder& b, const std::string& path, const Attributes& a, const Qkv& t,
                      const std::string& impl) {
    Attributes fa = a;
    fa.set("impl", impl);
    b.beginSelectiveUnit();
    auto o = b.addOp("sdpa", path + ".sdpa", fa, {t.q, t.k, t.v});
    b.endSelectiveUnit();
    if (!o) return o.error();
    // The math fallback's output is head-major [B, H, S, dv] (not contiguous in the [S, H*dv] layout):
    // transformers' transpose(1, 2).contiguous() copies it, and the out projection saves the copy (measured,
    // DeepSeek-V3 on the CPU)
    if (!b.info(*o).contiguous) return b.addCopy(path + ".merge_heads", *o);
    if (a.getString("qkv").value_or("separate") != "fused" || !a.getBool("rope").value_or(false)) return o;
    // The rotary embedding of a fused projection's q (Phi-3, GPT-NeoX) is a new head-major [B, H, S, hd]
    // tensor (its input view is not dense), and the kernel's output follows q's layout: `transpose(1, 2)
    // .contiguous()` before o_proj is then a copy, which o_proj saves beside the output the kernel saved.
    // Measured (docs/accuracy-real.md); with a dense q (GPT-2's split view, Llama's own projection) the
    // output is already [B, S, H, hd].
    return b.addCopy(path + ".merge_heads", *o);
}

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
        if (impl != "eager" && impl != "flash" && impl != "mem_efficient" && impl != "cpu_flash" &&
            impl != "math")
            return makeError(path +
                             ": impl must be \"eager\", \"flash\", \"mem_efficient\", \"cpu_flash\" "
                             "or \"math\", got \"" +
                             impl + "\"");
        const std::string qkv = a.getString("qkv").value_or("separate");
        if (qkv != "separate" && qkv != "fused" && qkv != "mla")
            return makeError(path + ": qkv must be \"separate\", \"fused\" or \"mla\"");
        const bool mla = qkv == "mla";
        if (mla && h.kvHeads != h.heads)
            return makeError(path + ": latent attention (qkv \"mla\") has as many k and v heads as q heads");

        const auto names = attentionProjectionNames(a);
        auto qkvs = mla ? mlaProjections(b, path, a, inputs[0], h.heads)
                        : projections(b, path, a, inputs[0], h, names);
        if (!qkvs) return qkvs.error();
        Qkv t = *qkvs;
        if (!mla) { // generate() caches the keys and values whatever the config's use_cache
            b.noteGenerationCache(t.k);
            b.noteGenerationCache(t.v);
        }
        if (!mla && impl != "eager" && a.getBool("kv_cache").value_or(false) && b.fillsCache()) {
            // transformers' training forward with use_cache (the config's default) fills a DynamicCache:
            // DynamicLayer.update's torch.cat([empty, k]) copies k and v, and SDPA saves the copies. Not
            // under checkpointing (GradientCheckpointingLayer drops the cache). Eager: the matmuls' reshapes
            // of the head-split k and v copy them anyway (the same bytes), so nothing changes there. The
            // cache comes back with the outputs, so the copies live until the forward ends even where SDPA's
            // saved ones do not (activation offload: measured, docs/accuracy-llm.md).
            auto ck = b.addCopy(path + ".cache_k", t.k);
            if (!ck) return ck.error();
            auto cv = b.addCopy(path + ".cache_v", t.v);
            if (!cv) return cv.error();
            b.holdToForwardEnd(*ck);
            b.holdToForwardEnd(*cv);
            t.k = *ck, t.v = *cv;
        }
        auto core =
            impl == "eager" ? eagerCore(b, path, a, t, h, x.shape[0]) : fusedCore(b, path, a, t, impl);
        if (!core) return core.error();
        return addLinear(b, path + "." + names.back(), *core, x.shape[1],
                         a.getBool("out_bias").value_or(true));
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
}

} // namespace batchfit
