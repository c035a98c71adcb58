// DeepSeek-V2/V3's multi-head latent attention up to the attention core, as transformers 5 runs it
// (modeling_deepseek_v3.py DeepseekV3Attention.forward and expand_kv), op by op on the [S, width] layout:
//   q: q_a_proj, q_a_layernorm, q_b_proj (or one q_proj without q_lora_rank), viewed [S, H, nope + rope] and
//      split; the rope half rotated (a new tensor), then torch.cat((q_pass, q_rot)): a new q.
//   kv: kv_a_proj_with_mqa [S, kv_lora_rank + rope], split; kv_a_layernorm on the latent (a view: its fp32
//      input is the whole projection's storage), the shared rope key rotated; with use_cache (training
//      forwards fill a DynamicCache too) both go through DynamicLayer.update's torch.cat, copies that live
//      until the forward returns and that kv_b_proj then reads; kv_b_proj [S, H * (nope + v)], split into
//      k_nope and v (views); the key a new tensor (new_empty + two copy_), v stays a view.
// What autograd saves: the norms' and linears' inputs, cos and sin (shared by all layers), nothing for the
// cat, the split views or the copies. Measured with saved_tensors_hooks under torch 2.15 and transformers
// 5.24 (tools/accuracy_real.py, docs/accuracy-real.md).
#include "ops/attention_parts.h"
#include "ops/linear_op.h"
#include "ops/op_rule.h"

namespace batchfit {
namespace {

/// The key expand_kv builds: k_nope [S, H, nope] (a view) and the shared rotated rope key [S, rope] into a
/// new [S, H * (nope + rope)]. Two copy_ into new_empty: nothing saved.
class MlaKeyRule : public OpRule {
public:
    int minInputs() const override { return 2; }
    int maxInputs() const override { return 2; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto &nope = c.inputs[0], &rope = c.inputs[1];
        if (nope.rank() != 3 || rope.rank() != 2 || nope.shape[0] != rope.shape[0])
            return c.fail("mla_key expects k_nope [S, heads, nope] and the rope key [S, rope], got " +
                          c.in(0) + ", " + c.in(1));
        std::int64_t width = 0;
        if (__builtin_mul_overflow(nope.shape[1], nope.shape[2] + rope.shape[1], &width))
            return c.fail("mla_key: the key is too wide");
        OpPlan p;
        p.outputs.push_back({{nope.shape[0], width}, nope.dtype, nope.batched, true});
        return p;
    }
};

struct MlaDims {
    std::int64_t qRank, kvRank, nope, rope, v;
};

Result<MlaDims> dims(const std::string& path, const Attributes& a) {
    const OpContext c{path, a, {}, DType::Float32, DType::Float32};
    auto kv = c.positive("kv_lora_rank");
    if (!kv) return kv.error();
    auto nope = c.positive("qk_nope_head_dim");
    if (!nope) return nope.error();
    auto rope = c.positive("qk_rope_head_dim");
    if (!rope) return rope.error();
    auto v = c.positive("v_head_dim");
    if (!v) return v.error();
    auto q = c.integer("q_lora_rank", 0, 0);
    if (!q) return q.error();
    return MlaDims{*q, *kv, *nope, *rope, *v};
}

/// Views `t` [S, heads * (first + second)] as [S, heads, first + second] and splits the last dimension.
Result<std::vector<int>> headSplit(GraphBuilder& b, const std::string& path, int t, std::int64_t heads,
                                   std::int64_t first, std::int64_t second) {
    Attributes va;
    va.set("shape", std::vector<std::int64_t>{b.info(t).shape[0], heads, first + second});
    auto v = b.addOp("reshape", path + ".view", va, {t});
    if (!v) return v.error();
    Attributes sa;
    sa.set("sizes", std::vector<std::int64_t>{first, second});
    return b.addOpMulti("split", path + ".split", sa, {*v});
}

/// q: [S, H * (nope + rope)], its rope part rotated and the two parts concatenated again.
Result<int> query(GraphBuilder& b, const std::string& path, const Attributes& a, int x, std::int64_t heads,
                  const MlaDims& d, std::pair<int, int> rope) {
    const bool bias = a.getBool("bias").value_or(false);
    const std::int64_t width = heads * (d.nope + d.rope);
    Result<int> q = 0;
    if (d.qRank > 0) {
        q = addLinear(b, path + ".q_a_proj", x, d.qRank, bias);
        Attributes na;
        na.set("eps", 1e-6); // DeepseekV3RMSNorm(q_lora_rank): the default eps, not the config's
        if (q) q = b.addOp("rmsnorm", path + ".q_a_layernorm", na, {*q});
        if (q) q = addLinear(b, path + ".q_b_proj", *q, width, false);
    } else {
        q = addLinear(b, path + ".q_proj", x, width, false);
    }
    if (!q) return q.error();
    auto parts = headSplit(b, path + ".q", *q, heads, d.nope, d.rope);
    if (!parts) return parts.error();
    auto rot = b.addOp("rope", path + ".rope_q", {}, {(*parts)[1], rope.first, rope.second});
    if (!rot) return rot.error();
    Attributes ca;
    ca.set("dim", std::int64_t{-1});
    auto cat = b.addOp("concat", path + ".q_cat", ca, {(*parts)[0], *rot});
    if (!cat) return cat.error();
    Attributes ma;
    ma.set("shape", std::vector<std::int64_t>{b.info(x).shape[0], width});
    return b.addOp("reshape", path + ".q_merge", ma, {*cat});
}

} // namespace

Result<Qkv> mlaProjections(GraphBuilder& b, const std::string& path, const Attributes& a, int x,
                           std::int64_t heads) {
    auto dr = dims(path, a);
    if (!dr) return dr.error();
    const MlaDims d = *dr;
    const std::int64_t seq = b.info(x).shape[0];
    std::int64_t wide = 0;
    if (__builtin_mul_overflow(heads, d.nope + std::max(d.rope, d.v), &wide) ||
        wide > (std::int64_t{1} << 40))
        return makeError(path + ": heads x head widths is too large");
    const bool bias = a.getBool("bias").value_or(false);
    auto ckv = addLinear(b, path + ".kv_a_proj_with_mqa", x, d.kvRank + d.rope, bias);
    if (!ckv) return ckv.error();
    // V2 (apply_rotary_emb): the rope halves as complex numbers times one freqs_cis table, complex64
    // [S, rope / 2] (the bytes of an fp32 [S, rope]), which the complex multiply saves; V3: cos and sin
    std::pair<int, int> tables;
    if (a.getBool("rope_complex").value_or(false)) {
        const int t = b.sharedConstant("rope complex " + std::to_string(seq) + "x" + std::to_string(d.rope),
                                       TensorInfo{{seq, d.rope}, DType::Float32, false, true});
        tables = {t, t};
    } else {
        tables = ropeTables(b, seq, d.rope, b.info(*ckv).dtype);
    }
    auto q = query(b, path, a, x, heads, d, tables);
    if (!q) return q.error();
    Attributes sa;
    sa.set("sizes", std::vector<std::int64_t>{d.kvRank, d.rope});
    auto latent = b.addOpMulti("split", path + ".kv_split", sa, {*ckv});
    if (!latent) return latent.error();
    Attributes na;
    na.set("eps", 1e-6); // DeepseekV3RMSNorm(kv_lora_rank)
    auto kv = b.addOp("rmsnorm", path + ".kv_a_layernorm", na, {(*latent)[0]});
    if (!kv) return kv.error();
    auto kRot = b.addOp("rope", path + ".rope_k", {}, {(*latent)[1], tables.first, tables.second});
    if (!kRot) return kRot.error();
    b.noteGenerationCache(*kv); // generate() caches them whatever the config's use_cache
    b.noteGenerationCache(*kRot);
    if (a.getBool("kv_cache").value_or(false) && b.fillsCache()) {
        // the compressed latents go into the DynamicCache (torch.cat copies), and the cached ones go on
        kv = b.addCopy(path + ".cache_latent", *kv);
        if (kv) kRot = b.addCopy(path + ".cache_rope_key", *kRot);
        if (!kv || !kRot) return !kv ? kv.error() : kRot.error();
        b.holdToForwardEnd(*kv);
        b.holdToForwardEnd(*kRot);
    }
    auto kvb = addLinear(b, path + ".kv_b_proj", *kv, heads * (d.nope + d.v), false);
    if (!kvb) return kvb.error();
    auto kvParts = headSplit(b, path + ".kv", *kvb, heads, d.nope, d.v);
    if (!kvParts) return kvParts.error();
    auto key = b.addOp("mla_key", path + ".key", {}, {(*kvParts)[0], *kRot});
    if (!key) return key.error();
    Attributes va;
    va.set("shape", std::vector<std::int64_t>{seq, heads * d.v});
    va.set("strided_view", true);
    auto value = b.addOp("reshape", path + ".value", va, {(*kvParts)[1]});
    if (!value) return value.error();
    return Qkv{*q, *key, *value};
}

void registerMlaOps() {
    addOpRule("mla_key", std::make_unique<MlaKeyRule>(), true);
}

} // namespace batchfit
