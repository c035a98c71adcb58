// DeepseekV3ForCausalLM from its config.json, following transformers 5's modeling_deepseek_v3.py
// (DeepSeek-V3, DeepSeek-R1 and the other `deepseek_v3` checkpoints): multi-head latent attention (the
// attention op with qkv "mla", rules_mla.cpp), the first first_k_dense_replace layers with a dense MLP, every
// later one a mixture of experts routed by sigmoid scores within groups (rules_moe_router.cpp) with
// n_shared_experts ungated shared experts. The multi-token-prediction layer (num_nextn_predict_layers) is not
// part of the transformers model and is not built. Field defaults are DeepseekV3Config's.
#include "import/hf_config_util.h"
#include "ops/moe_limits.h"

namespace batchfit::hf {
namespace {

/// q_lora_rank: null means one q_proj (DeepSeek-V2-Lite style), a missing key DeepseekV3Config's 1536.
Result<std::int64_t> qLoraRank(const Config& c) {
    if (c.raw().contains("q_lora_rank") && c.raw()["q_lora_rank"].is_null()) return std::int64_t{0};
    return c.integer({"q_lora_rank"}, 1536);
}

Result<AttrList> moeAttrs(const Config& c, const HfImportOptions& o, const std::string& act, bool v2) {
    BF_TRY(experts, c.integer({"n_routed_experts"}, v2 ? 64 : 256));
    if (experts > kMaxExperts)
        return makeError(c.source() + ": $.n_routed_experts: " + std::to_string(experts) +
                         " experts is too many (at most " + std::to_string(kMaxExperts) + ")");
    BF_TRY(topK, v2 ? c.integer({"num_experts_per_tok"}) : c.integer({"num_experts_per_tok"}, 8));
    // V2's topk_method: "greedy" (its default) ignores the groups; "group_limited_greedy" uses them
    const std::string method = c.str("topk_method", v2 ? "greedy" : "noaux_tc");
    if (v2 && method != "greedy" && method != "group_limited_greedy")
        return makeError(c.source() +
                         ": $.topk_method: expected \"greedy\" or \"group_limited_greedy\", got \"" + method +
                         "\"");
    const bool grouped = !v2 || method == "group_limited_greedy";
    BF_TRY(groupsRead, grouped ? c.integer({"n_group"}, 8) : Result<std::int64_t>(std::int64_t{1}));
    BF_TRY(topkRead, grouped ? c.integer({"topk_group"}, 4) : Result<std::int64_t>(std::int64_t{1}));
    const std::int64_t groups = groupsRead, topkGroups = topkRead;
    if (experts % groups || topkGroups > groups || (groups > 1 && experts / groups < 2))
        return makeError(c.source() + ": $.n_group: " + std::to_string(experts) +
                         " experts do not split into " + std::to_string(groups) +
                         " groups of at least two (or topk_group exceeds n_group)");
    if (topK > topkGroups * (experts / groups))
        return makeError(c.source() + ": $.num_experts_per_tok: " + std::to_string(topK) +
                         " exceeds the experts of the topk_group kept groups");
    BF_TRY(inner, c.integer({"moe_intermediate_size"}, v2 ? 1407 : 2048));
    BF_TRY(shared, c.integer({"n_shared_experts"}, v2 ? 2 : 1));
    std::int64_t sharedInner = 0;
    if (__builtin_mul_overflow(inner, shared, &sharedInner))
        return makeError(c.source() + ": $.n_shared_experts: too many shared experts");
    return AttrList{{"experts", experts},
                    {"top_k", topK},
                    {"intermediate", inner},
                    {"norm_topk_prob", v2 ? false : c.flag("norm_topk_prob", true)}, // V2 never renormalises
                    {"load", o.moeLoad},
                    {"act", act},
                    {"impl", o.moeImpl},
                    {"router", std::string(v2 ? "softmax_grouped" : "sigmoid_grouped")},
                    {"groups", groups},
                    {"topk_groups", topkGroups},
                    {"shared_intermediate", sharedInner},
                    {"shared_gate", false},
                    {"shared_name", std::string("shared_experts")}};
}

Result<AttrList> attentionAttrs(const Config& c, const HfImportOptions& o, std::int64_t positions, bool v2) {
    BF_TRY(heads, c.integer({"num_attention_heads"}));
    BF_TRY(qRank, qLoraRank(c));
    BF_TRY(kvRank, c.integer({"kv_lora_rank"}, 512));
    BF_TRY(nope, c.integer({"qk_nope_head_dim"}, 128));
    BF_TRY(rope, c.integer({"qk_rope_head_dim"}, 64));
    BF_TRY(v, c.integer({"v_head_dim"}, 128));
    const bool bias = c.flag("attention_bias", false);
    return AttrList{{"heads", heads},
                    {"kv_heads", heads},
                    {"head_dim", nope + rope},
                    {"qkv", std::string("mla")},
                    {"q_lora_rank", qRank},
                    {"kv_lora_rank", kvRank},
                    {"qk_nope_head_dim", nope},
                    {"qk_rope_head_dim", rope},
                    {"v_head_dim", v},
                    {"bias", bias},
                    {"out_bias", bias},
                    {"causal", true},
                    {"max_positions", positions},
                    {"impl", o.attention.value_or("flash")},
                    {"dropout", c.real("attention_dropout", 0.0)},
                    {"softmax_dtype", std::string("float32")},
                    {"kv_cache", c.flag("use_cache", true)},
                    {"rope_complex", v2}}; // V2: apply_rotary_emb in complex numbers, one freqs_cis table
}

} // namespace

Result<Model> deepseek(const Config& c, const HfImportOptions& o, bool v2) {
    BF_TRY(d, c.integer({"hidden_size"}));
    BF_TRY(layers, c.layerCount({"num_hidden_layers"}));
    BF_TRY(inner, c.integer({"intermediate_size"}));
    BF_TRY(vocab, c.integer({"vocab_size"}));
    BF_TRY(positions, c.integer({"max_position_embeddings"}, v2 ? 2048 : 4096));
    BF_TRY(seq, sequence(c, o, positions));
    const std::int64_t denseDefault = v2 ? 0 : 3;
    const bool noDense = c.raw().contains("first_k_dense_replace") && c.raw()["first_k_dense_replace"] == 0;
    BF_TRY(denseRead, noDense ? Result<std::int64_t>(std::int64_t{0})
                              : c.integer({"first_k_dense_replace"}, denseDefault));
    const std::int64_t dense = denseRead;
    const std::string hidden = c.str("hidden_act", "silu");
    BF_TRY(moe, moeAttrs(c, o, act(hidden), v2));
    BF_TRY(attn, attentionAttrs(c, o, positions, v2));
    const double eps = c.real("rms_norm_eps", 1e-6);
    const auto norm = [&](const std::string& name) { return op(name, "rmsnorm", {{"eps", eps}}); };
    Model m;
    m.inputShape = {seq};
    m.inputDtype = DType::Int64;
    m.layers.push_back(op("embed_tokens", "embedding", {{"num_embeddings", vocab}, {"embedding_dim", d}}));
    Layer a = block("", {norm("input_layernorm"), op("self_attn", "attention", attn)});
    a.shortcut = ShortcutKind::Identity;
    const std::int64_t denseLayers = std::min(dense, layers);
    for (const bool sparse : {false, true}) {
        const std::int64_t count = sparse ? layers - denseLayers : denseLayers;
        if (count == 0) continue;
        Layer f = sparse ? block("", {norm("post_attention_layernorm"), op("mlp", "moe", moe)})
                         : gatedMlp(hidden, inner, d, false, {norm("post_attention_layernorm")});
        f.shortcut = ShortcutKind::Identity;
        Layer stack = block("layers", {a, f});
        stack.repeat = count;
        stack.keepInput = true; // `hidden_states = decoder_layer(hidden_states, ...)`
        if (count < layers) stack.firstIndex = sparse ? denseLayers : 0;
        m.layers.push_back(stack);
    }
    m.layers.push_back(norm("norm"));
    const bool tied = c.flag("tie_word_embeddings", false);
    m.layers.push_back(
        op("lm_head", "linear",
           tied ? AttrList{{"out_features", vocab}, {"bias", false}, {"tied_to", std::string("embed_tokens")}}
                : AttrList{{"out_features", vocab}, {"bias", false}}));
    addCausalLmLoss(m);
    return m;
}

} // namespace batchfit::hf
