// Llama-style decoder stacks from a Hugging Face config.json, following the transformers modeling code:
// modeling_llama.py, modeling_mistral.py, modeling_qwen2.py, modeling_qwen3.py (q_norm/k_norm over head_dim),
// modeling_gemma.py, modeling_gemma2.py (input/post_attention/pre_feedforward/post_feedforward norms,
// embedding
// * sqrt(hidden), attention and final logit soft-capping, query_pre_attn_scalar), modeling_gemma3.py
// (gemma3_text: Gemma 2's layer plus q_norm/k_norm), modeling_phi3.py (Phi-3, Phi-4), and the sparse-MoE
// modeling_mixtral.py, modeling_qwen2_moe.py (shared expert, decoder_sparse_step, mlp_only_layers),
// modeling_qwen3_moe.py.
#include "import/hf_config_util.h"
#include "ops/moe_limits.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace batchfit::hf {
namespace {

struct Moe {
    std::int64_t experts = 0, topK = 0, inner = 0, sharedInner = 0, sparseStep = 1;
    bool norm = true;
    std::set<std::int64_t> denseLayers; // mlp_only_layers
};

Result<Moe> moeConfig(const Config& c, const std::string& type) {
    Moe m;
    const bool mixtral = type == "mixtral";
    BF_TRY(experts, c.integer({mixtral ? "num_local_experts" : "num_experts"}));
    if (experts > kMaxExperts)
        return makeError(c.source() + ": $." + (mixtral ? "num_local_experts" : "num_experts") + ": " +
                         std::to_string(experts) + " experts is too many (at most " +
                         std::to_string(kMaxExperts) + ")");
    BF_TRY(topK, c.integer({"num_experts_per_tok"}));
    if (topK > experts)
        return makeError(c.source() + ": $.num_experts_per_tok: " + std::to_string(topK) +
                         " exceeds the number of experts (" + std::to_string(experts) + ")");
    BF_TRY(inner, c.integer({mixtral ? "intermediate_size" : "moe_intermediate_size"}));
    m.experts = experts, m.topK = topK, m.inner = inner;
    m.norm = mixtral ? true : c.flag("norm_topk_prob", false);
    if (type == "qwen2_moe") {
        BF_TRY(shared, c.integer({"shared_expert_intermediate_size"}));
        m.sharedInner = shared;
    }
    if (!mixtral) {
        BF_TRY(step, c.integer({"decoder_sparse_step"}, 1));
        m.sparseStep = step;
        if (c.raw().contains("mlp_only_layers") && !c.raw()["mlp_only_layers"].is_null()) {
            const json& l = c.raw()["mlp_only_layers"];
            if (!l.is_array())
                return makeError(c.source() + ": $.mlp_only_layers: expected an array of layer indices");
            for (std::size_t i = 0; i < l.size(); ++i) {
                if (!l[i].is_number_integer() || l[i].get<std::int64_t>() < 0)
                    return makeError(c.source() + ": $.mlp_only_layers[" + std::to_string(i) +
                                     "]: expected a layer index, got " + Config::describe(l[i]));
                m.denseLayers.insert(l[i].get<std::int64_t>());
            }
        }
    }
    return m;
}

} // namespace

Layer gatedMlp(const std::string& hidden, std::int64_t inner, std::int64_t d, bool fusedGateUp,
               std::vector<Layer> mlp) {
    const std::string in = mlp.back().name;
    if (fusedGateUp) { // Phi-3: one gate_up_proj, chunked
        mlp.push_back(op("gate_up_proj", "linear", {{"out_features", 2 * inner}, {"bias", false}}));
        mlp.push_back(op("gate", "slice",
                         {{"dim", std::int64_t{-1}}, {"start", std::int64_t{0}}, {"end", inner}},
                         {"gate_up_proj"}));
        mlp.push_back(op("up", "slice", {{"dim", std::int64_t{-1}}, {"start", inner}, {"end", 2 * inner}},
                         {"gate_up_proj"}));
        mlp.push_back(activation("act", hidden, {"gate"}));
        mlp.push_back(op("gated", "mul", {}, {"act", "up"}));
    } else {
        mlp.push_back(op("gate_proj", "linear", {{"out_features", inner}, {"bias", false}}));
        mlp.push_back(op("up_proj", "linear", {{"out_features", inner}, {"bias", false}}, {in}));
        mlp.push_back(activation("act", hidden, {"gate_proj"}));
        mlp.push_back(op("gated", "mul", {}, {"act", "up_proj"}));
    }
    // the MLP's forward(x) holds x until it returns, whether or not its linears saved it
    mlp.push_back(op("down_proj", "linear", {{"out_features", d}, {"bias", false}, {"keeps_alive", in}}));
    return block("", std::move(mlp));
}

bool isDecoderType(const std::string& t) {
    static const std::set<std::string> types{"llama",   "mistral",   "qwen2",       "qwen3",
                                             "gemma",   "gemma2",    "gemma3_text", "phi3",
                                             "mixtral", "qwen2_moe", "qwen3_moe"};
    return types.count(t) > 0;
}

Result<Model> decoder(const Config& c, const HfImportOptions& o, const std::string& type) {
    BF_TRY(d, c.integer({"hidden_size"}));
    BF_TRY(layers, c.layerCount({"num_hidden_layers"}));
    BF_TRY(heads, c.integer({"num_attention_heads"}));
    BF_TRY(kv, c.integer({"num_key_value_heads"}, heads));
    BF_TRY(inner, c.integer({"intermediate_size"}));
    BF_TRY(vocab, c.integer({"vocab_size"}));
    BF_TRY(positions, c.integer({"max_position_embeddings"}, 2048));
    BF_TRY(headDim, c.integer({"head_dim"}, std::max<std::int64_t>(d / heads, 1)));
    BF_TRY(seq, sequence(c, o, positions));
    const bool moe = type == "mixtral" || type == "qwen2_moe" || type == "qwen3_moe";
    Moe mc;
    if (moe) {
        auto m = moeConfig(c, type);
        if (!m) return m.error();
        mc = *m;
    }
    const bool gemma2 = type == "gemma2" || type == "gemma3_text";
    const bool gemma = type == "gemma" || gemma2, phi3 = type == "phi3";
    const bool qkvBias = type == "qwen2" || type == "qwen2_moe";
    const bool qkNorm = type == "qwen3" || type == "qwen3_moe" || type == "gemma3_text";
    const double eps = c.real("rms_norm_eps", 1e-6);
    const bool tied = c.flag("tie_word_embeddings", gemma);
    // Gemma 2 has no SDPA in transformers (`_supports_sdpa = False`: SDPA cannot soft-cap), so eager is its
    // default; flash means the flash-attn package (`attn_implementation="flash_attention_2"`)
    const std::string impl = o.attention.value_or(type == "gemma2" ? "eager" : "flash");
    const std::string hidden =
        c.str("hidden_activation", c.str("hidden_act", gemma ? "gelu_pytorch_tanh" : "silu"));
    // GemmaRMSNorm scales by (1 + weight) in fp32 before casting back: the fp32 normalized tensor is saved
    const auto norm = [&](const std::string& name) {
        return gemma ? op(name, "rmsnorm", {{"eps", eps}, {"gemma_scale", true}})
                     : op(name, "rmsnorm", {{"eps", eps}});
    };
    Model m;
    m.inputShape = {seq};
    m.inputDtype = DType::Int64;
    m.layers.push_back(op("embed_tokens", "embedding", {{"num_embeddings", vocab}, {"embedding_dim", d}}));
    if (gemma)
        m.layers.push_back(op("embed_scale", "scale", {{"factor", std::sqrt(static_cast<double>(d))}}));
    AttrList attn{{"heads", heads},
                  {"kv_heads", kv},
                  {"head_dim", headDim},
                  {"bias", qkvBias || c.flag("attention_bias", false)},
                  {"out_bias", c.flag("attention_bias", false)},
                  {"causal", true},
                  {"rope", true},
                  {"max_positions", positions}, // the context: the fit map stops there (issue 30)
                  {"impl", impl},
                  {"dropout", c.real("attention_dropout", 0.0)},
                  {"softmax_dtype", std::string("float32")}, // eager: softmax(..., dtype=torch.float32)
                  {"kv_cache", c.flag("use_cache", true)},
                  {"qkv", std::string(phi3 ? "fused" : "separate")},
                  {"names", std::string(phi3 ? "qkv_proj,o_proj" : "q_proj,k_proj,v_proj,o_proj")}};
    if (qkNorm) {
        attn.push_back({"qk_norm", true});
        attn.push_back({"qk_norm_eps", eps});
        if (gemma) attn.push_back({"qk_norm_gemma_scale", true});
    }
    if (gemma2) {
        attn.push_back(
            {"scaling", 1.0 / std::sqrt(c.real("query_pre_attn_scalar", static_cast<double>(headDim)))});
        if (const double cap = c.real("attn_logit_softcapping", 0.0); cap > 0)
            attn.push_back({"softcap", cap});
    }
    std::vector<Layer> attnLayers{norm("input_layernorm"), op("self_attn", "attention", attn)};
    if (gemma2) attnLayers.push_back(norm("post_attention_layernorm"));
    Layer a = block("", attnLayers);
    a.shortcut = ShortcutKind::Identity;
    const std::string preMlp = gemma2 ? "pre_feedforward_layernorm" : "post_attention_layernorm";
    auto mlpBlock = [&](bool sparse) {
        Layer f;
        if (sparse) {
            AttrList ma{{"experts", mc.experts},     {"top_k", mc.topK},  {"intermediate", mc.inner},
                        {"norm_topk_prob", mc.norm}, {"load", o.moeLoad}, {"act", act(hidden)},
                        {"impl", o.moeImpl}};
            if (mc.sharedInner > 0) ma.push_back({"shared_intermediate", mc.sharedInner});
            // transformers 5 names Mixtral's block `mlp` too (4.x: block_sparse_moe with w1, w3, w2)
            f = block("", {norm(preMlp), op("mlp", "moe", ma)});
        } else {
            f = gatedMlp(hidden, inner, d, phi3, {norm(preMlp)});
        }
        if (gemma2) f.layers.push_back(norm("post_feedforward_layernorm"));
        f.shortcut = ShortcutKind::Identity;
        return f;
    };
    // qwen2_moe/qwen3_moe: layer i is sparse unless in mlp_only_layers or (i + 1) % decoder_sparse_step != 0;
    // runs of equal layers become one repeated block
    auto sparseAt = [&](std::int64_t i) {
        return moe && !mc.denseLayers.count(i) && (i + 1) % mc.sparseStep == 0;
    };
    for (std::int64_t start = 0; start < layers;) {
        std::int64_t end = start + 1;
        while (end < layers && sparseAt(end) == sparseAt(start)) ++end;
        Layer stack = block("layers", {a, mlpBlock(sparseAt(start))});
        stack.repeat = end - start;
        stack.keepInput = true; // `hidden_states = decoder_layer(hidden_states, ...)`
        if (start > 0 || end < layers) stack.firstIndex = start;
        m.layers.push_back(stack);
        start = end;
    }
    m.layers.push_back(norm("norm"));
    m.layers.push_back(
        op("lm_head", "linear",
           tied ? AttrList{{"out_features", vocab}, {"bias", false}, {"tied_to", std::string("embed_tokens")}}
                : AttrList{{"out_features", vocab}, {"bias", false}}));
    if (const double cap = gemma2 ? c.real("final_logit_softcapping", 0.0) : 0.0; cap > 0) {
        // Gemma 2: logits / cap, tanh (autograd keeps its [S, vocab] result), * cap
        m.layers.push_back(op("final_softcap_div", "scale", {{"factor", 1.0 / cap}}));
        m.layers.push_back(op("final_softcap_tanh", "tanh"));
        m.layers.push_back(op("final_softcap_mul", "scale", {{"factor", cap}}));
    }
    addCausalLmLoss(m);
    return m;
}

} // namespace batchfit::hf
