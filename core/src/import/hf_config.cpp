// Hugging Face config.json -> layer stack. Structures follow the transformers modeling code of each family
// (modeling_gpt2.py, modeling_bert.py, modeling_llama.py, modeling_mistral.py, modeling_qwen2.py,
// modeling_gemma.py, modeling_phi3.py, modeling_gpt_neox.py).
#include "batchfit/hf_import.h"
#include "batchfit/model_io.h"
#include "bounded_file.h"
#include "import/layer_builder.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace batchfit {
namespace {

using json = nlohmann::json;

class Config {
public:
    Config(const json& j, std::string source) : m_j(j), m_source(std::move(source)) {}

    Result<std::int64_t> integer(std::initializer_list<const char*> keys,
                                 std::optional<std::int64_t> def = {}) const {
        for (const char* k : keys) {
            if (!m_j.contains(k) || m_j[k].is_null()) continue;
            if (!m_j[k].is_number_integer() || m_j[k].get<std::int64_t>() <= 0 ||
                m_j[k].get<std::int64_t>() > (1ll << 40))
                return makeError(m_source + ": $." + k + ": expected a positive integer, got " +
                                 describe(m_j[k]));
            return m_j[k].get<std::int64_t>();
        }
        if (def) return *def;
        return makeError(m_source + ": $." + *keys.begin() + ": missing (expected a positive integer)");
    }
    /// The layer count: a block repeat, so at most kMaxBlockRepeat (the model must save and load).
    Result<std::int64_t> layerCount(std::initializer_list<const char*> keys) const {
        auto n = integer(keys);
        if (n && *n > kMaxBlockRepeat)
            return makeError(m_source + ": $." + *keys.begin() + ": " + std::to_string(*n) +
                             " layers is too large (at most " + std::to_string(kMaxBlockRepeat) + ")");
        return n;
    }
    /// A value for messages; never dumps a container (dump() recurses: deep nesting would overflow the
    /// stack).
    static std::string describe(const json& j) {
        if (j.is_array()) return "an array";
        if (j.is_object()) return "an object";
        std::string s = j.dump();
        return s.size() > 64 ? s.substr(0, 60) + "..." : s;
    }
    double real(const char* key, double def) const {
        return m_j.contains(key) && m_j[key].is_number() ? m_j[key].get<double>() : def;
    }
    bool flag(const char* key, bool def) const {
        return m_j.contains(key) && m_j[key].is_boolean() ? m_j[key].get<bool>() : def;
    }
    std::string str(const char* key, const std::string& def = "") const {
        return m_j.contains(key) && m_j[key].is_string() ? m_j[key].get<std::string>() : def;
    }
    bool architectureContains(const std::string& s) const {
        if (!m_j.contains("architectures") || !m_j["architectures"].is_array()) return false;
        for (const auto& a : m_j["architectures"])
            if (a.is_string() && a.get<std::string>().find(s) != std::string::npos) return true;
        return false;
    }
    const std::string& source() const { return m_source; }
    const json& raw() const { return m_j; }

private:
    const json& m_j;
    std::string m_source;
};

#define BF_TRY(var, expr)                                                                                    \
    auto var##_r = (expr);                                                                                   \
    if (!var##_r) return var##_r.error();                                                                    \
    const auto var = *var##_r;

Result<std::int64_t> sequence(const Config& c, const HfImportOptions& o, std::int64_t maxPositions) {
    const std::int64_t s = o.sequenceLength.value_or(maxPositions);
    if (s <= 0 || s > (1ll << 24))
        return makeError(c.source() + ": sequence length " + std::to_string(s) + " is out of range");
    if (o.sequenceLength && s > maxPositions)
        return makeError(c.source() + ": sequence length " + std::to_string(s) +
                         " exceeds the model's maximum " + std::to_string(maxPositions) + " positions");
    return s;
}

std::string act(const std::string& hf) {
    return hf == "gelu_new" || hf == "gelu_pytorch_tanh" || hf == "gelu_fast" ? "gelu_tanh" : hf;
}

Layer activation(const std::string& name, const std::string& hf, std::vector<std::string> inputs = {}) {
    const std::string a = act(hf);
    if (a == "gelu_tanh") return op(name, "gelu", {{"approximate", std::string("tanh")}}, std::move(inputs));
    if (a == "silu" || a == "swish") return op(name, "silu", {}, std::move(inputs));
    if (a == "relu") return op(name, "relu", {}, std::move(inputs));
    return op(name, "gelu", {}, std::move(inputs));
}

Layer dropout(const std::string& name, double p) {
    return op(name, "dropout", {{"p", p}});
}

Result<Model> gpt2(const Config& c, const HfImportOptions& o) {
    BF_TRY(d, c.integer({"n_embd", "hidden_size"}));
    BF_TRY(layers, c.layerCount({"n_layer", "num_hidden_layers"}));
    BF_TRY(heads, c.integer({"n_head", "num_attention_heads"}));
    BF_TRY(vocab, c.integer({"vocab_size"}));
    BF_TRY(positions, c.integer({"n_positions", "max_position_embeddings"}, 1024));
    BF_TRY(inner, c.integer({"n_inner"}, 4 * d));
    BF_TRY(seq, sequence(c, o, positions));
    const double eps = c.real("layer_norm_epsilon", 1e-5);
    const std::string impl = o.attention.value_or("flash");
    Model m;
    m.inputShape = {seq};
    m.inputDtype = DType::Int64;
    m.layers.push_back(op("wte", "embedding", {{"num_embeddings", vocab}, {"embedding_dim", d}}));
    m.layers.push_back(
        op("wpe", "embedding",
           {{"num_embeddings", positions}, {"embedding_dim", d}, {"indices", std::string("positions")}},
           {"@input"}));
    m.layers.push_back(op("embed_sum", "add", {}, {"wte", "wpe"}));
    m.layers.push_back(dropout("drop", c.real("embd_pdrop", 0.1)));
    Layer a1 = block("", {op("ln_1", "layernorm", {{"eps", eps}}),
                          op("attn", "attention",
                             {{"heads", heads},
                              {"qkv", std::string("fused")},
                              {"dropout", c.real("attn_pdrop", 0.1)},
                              {"causal", true},
                              {"impl", impl},
                              {"mask", std::string(impl == "eager" ? "buffer" : "none")},
                              {"max_positions", positions}}),
                          dropout("resid_dropout", c.real("resid_pdrop", 0.1))});
    a1.shortcut = ShortcutKind::Identity;
    Layer a2 =
        block("", {op("ln_2", "layernorm", {{"eps", eps}}), op("c_fc", "linear", {{"out_features", inner}}),
                   activation("act", c.str("activation_function", "gelu_new")),
                   op("c_proj", "linear", {{"out_features", d}}),
                   dropout("mlp_dropout", c.real("resid_pdrop", 0.1))});
    a2.shortcut = ShortcutKind::Identity;
    Layer h = block("h", {a1, a2});
    h.repeat = layers;
    m.layers.push_back(h);
    m.layers.push_back(op("ln_f", "layernorm", {{"eps", eps}}));
    m.layers.push_back(
        op("lm_head", "linear",
           c.flag("tie_word_embeddings", true)
               ? AttrList{{"out_features", vocab}, {"bias", false}, {"tied_to", std::string("wte")}}
               : AttrList{{"out_features", vocab}, {"bias", false}}));
    m.layers.push_back(op("loss", "cross_entropy"));
    return m;
}

Result<Model> bert(const Config& c, const HfImportOptions& o, bool roberta) {
    BF_TRY(d, c.integer({"hidden_size"}));
    BF_TRY(layers, c.layerCount({"num_hidden_layers"}));
    BF_TRY(heads, c.integer({"num_attention_heads"}));
    BF_TRY(inner, c.integer({"intermediate_size"}, 4 * d));
    BF_TRY(vocab, c.integer({"vocab_size"}));
    BF_TRY(positions, c.integer({"max_position_embeddings"}, 512));
    BF_TRY(types, c.integer({"type_vocab_size"}, 2));
    const std::int64_t usable =
        roberta ? positions - 2 : positions; // RoBERTa offsets positions by padding_idx + 1
    BF_TRY(seq, sequence(c, o, usable));
    const double eps = c.real("layer_norm_eps", 1e-12), hp = c.real("hidden_dropout_prob", 0.1);
    const std::string impl = o.attention.value_or("flash");
    Model m;
    m.inputShape = {seq};
    m.inputDtype = DType::Int64;
    Layer emb = block(
        "embeddings",
        {op("word_embeddings", "embedding", {{"num_embeddings", vocab}, {"embedding_dim", d}}),
         op("position_embeddings", "embedding",
            {{"num_embeddings", positions}, {"embedding_dim", d}, {"indices", std::string("positions")}},
            {"@input"}),
         op("token_type_embeddings", "embedding",
            {{"num_embeddings", types}, {"embedding_dim", d}, {"indices", std::string("zeros")}}, {"@input"}),
         op("add_position", "add", {}, {"word_embeddings", "position_embeddings"}),
         op("add_token_type", "add", {}, {"add_position", "token_type_embeddings"}),
         op("LayerNorm", "layernorm", {{"eps", eps}}), dropout("dropout", hp)});
    m.layers.push_back(emb);
    Layer att = block(
        "attention",
        {op("self", "attention",
            {{"heads", heads}, {"dropout", c.real("attention_probs_dropout_prob", 0.1)}, {"impl", impl}}),
         dropout("dropout", hp)});
    att.shortcut = ShortcutKind::Identity;
    att.after = {op("LayerNorm", "layernorm", {{"eps", eps}})};
    Layer ffn = block("ffn", {op("intermediate", "linear", {{"out_features", inner}}),
                              activation("act", c.str("hidden_act", "gelu")),
                              op("output", "linear", {{"out_features", d}}), dropout("dropout", hp)});
    ffn.shortcut = ShortcutKind::Identity;
    ffn.after = {op("LayerNorm", "layernorm", {{"eps", eps}})};
    Layer layer = block("layer", {att, ffn});
    layer.repeat = layers;
    m.layers.push_back(layer);
    if (c.architectureContains("MaskedLM") || c.architectureContains("ForPreTraining")) {
        m.layers.push_back(op("transform", "linear", {{"out_features", d}}));
        m.layers.push_back(activation("transform_act", c.str("hidden_act", "gelu")));
        m.layers.push_back(op("transform_norm", "layernorm", {{"eps", eps}}));
        m.layers.push_back(
            op("decoder", "linear",
               {{"out_features", vocab}, {"tied_to", std::string("embeddings.word_embeddings")}}));
    } else {
        std::int64_t labels = 2;
        if (c.raw().contains("id2label") && c.raw()["id2label"].is_object() && !c.raw()["id2label"].empty())
            labels = static_cast<std::int64_t>(c.raw()["id2label"].size());
        m.layers.push_back(
            op("first_token", "select", {{"dim", std::int64_t{0}}, {"index", std::int64_t{0}}}));
        m.layers.push_back(op("pooler", "linear", {{"out_features", d}}));
        m.layers.push_back(op("pooler_act", "tanh"));
        m.layers.push_back(dropout("dropout", hp));
        m.layers.push_back(op("classifier", "linear", {{"out_features", labels}}));
    }
    m.layers.push_back(op("loss", "cross_entropy"));
    return m;
}

/// Llama-style decoders: Llama 1/2/3, Mistral, Qwen2, Gemma, Phi-3.
Result<Model> decoder(const Config& c, const HfImportOptions& o, const std::string& type) {
    BF_TRY(d, c.integer({"hidden_size"}));
    BF_TRY(layers, c.layerCount({"num_hidden_layers"}));
    BF_TRY(heads, c.integer({"num_attention_heads"}));
    BF_TRY(kv, c.integer({"num_key_value_heads"}, heads));
    BF_TRY(inner, c.integer({"intermediate_size"}));
    BF_TRY(vocab, c.integer({"vocab_size"}));
    BF_TRY(positions, c.integer({"max_position_embeddings"}, 2048));
    BF_TRY(headDim, c.integer({"head_dim"}, d / heads));
    BF_TRY(seq, sequence(c, o, positions));
    const bool qwen = type == "qwen2", gemma = type == "gemma", phi3 = type == "phi3";
    const double eps = c.real("rms_norm_eps", 1e-6);
    const bool tied = c.flag("tie_word_embeddings", gemma);
    const std::string impl = o.attention.value_or("flash");
    const std::string hidden = c.str("hidden_act", gemma ? "gelu_pytorch_tanh" : "silu");
    Model m;
    m.inputShape = {seq};
    m.inputDtype = DType::Int64;
    m.layers.push_back(op("embed_tokens", "embedding", {{"num_embeddings", vocab}, {"embedding_dim", d}}));
    if (gemma)
        m.layers.push_back(op("embed_scale", "scale", {{"factor", std::sqrt(static_cast<double>(d))}}));
    AttrList attn{{"heads", heads},
                  {"kv_heads", kv},
                  {"head_dim", headDim},
                  {"bias", qwen || c.flag("attention_bias", false)},
                  {"out_bias", c.flag("attention_bias", false)},
                  {"causal", true},
                  {"rope", true},
                  {"impl", impl},
                  {"dropout", c.real("attention_dropout", 0.0)},
                  {"qkv", std::string(phi3 ? "fused" : "separate")}};
    Layer a =
        block("", {op("input_layernorm", "rmsnorm", {{"eps", eps}}), op("self_attn", "attention", attn)});
    a.shortcut = ShortcutKind::Identity;
    std::vector<Layer> mlp{op("post_attention_layernorm", "rmsnorm", {{"eps", eps}})};
    if (phi3) {
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
        mlp.push_back(op("up_proj", "linear", {{"out_features", inner}, {"bias", false}},
                         {"post_attention_layernorm"}));
        mlp.push_back(activation("act", hidden, {"gate_proj"}));
        mlp.push_back(op("gated", "mul", {}, {"act", "up_proj"}));
    }
    mlp.push_back(op("down_proj", "linear", {{"out_features", d}, {"bias", false}}));
    Layer f = block("", mlp);
    f.shortcut = ShortcutKind::Identity;
    Layer stack = block("layers", {a, f});
    stack.repeat = layers;
    m.layers.push_back(stack);
    m.layers.push_back(op("norm", "rmsnorm", {{"eps", eps}}));
    m.layers.push_back(
        op("lm_head", "linear",
           tied ? AttrList{{"out_features", vocab}, {"bias", false}, {"tied_to", std::string("embed_tokens")}}
                : AttrList{{"out_features", vocab}, {"bias", false}}));
    m.layers.push_back(op("loss", "cross_entropy"));
    return m;
}

Result<Model> neox(const Config& c, const HfImportOptions& o) {
    BF_TRY(d, c.integer({"hidden_size"}));
    BF_TRY(layers, c.layerCount({"num_hidden_layers"}));
    BF_TRY(heads, c.integer({"num_attention_heads"}));
    BF_TRY(inner, c.integer({"intermediate_size"}, 4 * d));
    BF_TRY(vocab, c.integer({"vocab_size"}));
    BF_TRY(positions, c.integer({"max_position_embeddings"}, 2048));
    BF_TRY(seq, sequence(c, o, positions));
    const double eps = c.real("layer_norm_eps", 1e-5);
    const std::string impl = o.attention.value_or("flash");
    Model m;
    m.inputShape = {seq};
    m.inputDtype = DType::Int64;
    m.layers.push_back(op("embed_in", "embedding", {{"num_embeddings", vocab}, {"embedding_dim", d}}));
    std::vector<Layer> body{op("input_layernorm", "layernorm", {{"eps", eps}}, {"@input"}),
                            op("attention", "attention",
                               {{"heads", heads},
                                {"qkv", std::string("fused")},
                                {"causal", true},
                                {"rope", true},
                                {"impl", impl}})};
    if (c.flag("use_parallel_residual", true)) {
        body.push_back(op("post_attention_layernorm", "layernorm", {{"eps", eps}}, {"@input"}));
    } else {
        body.push_back(op("attn_residual", "add", {}, {"attention", "@input"}));
        body.push_back(op("post_attention_layernorm", "layernorm", {{"eps", eps}}));
    }
    body.push_back(op("dense_h_to_4h", "linear", {{"out_features", inner}}));
    body.push_back(activation("act", c.str("hidden_act", "gelu")));
    body.push_back(op("dense_4h_to_h", "linear", {{"out_features", d}}));
    if (c.flag("use_parallel_residual", true)) {
        body.push_back(op("branches", "add", {}, {"attention", "dense_4h_to_h"}));
        body.push_back(op("residual", "add", {}, {"branches", "@input"}));
    } else {
        body.push_back(op("residual", "add", {}, {"dense_4h_to_h", "attn_residual"}));
    }
    Layer stack = block("layers", body);
    stack.repeat = layers;
    m.layers.push_back(stack);
    m.layers.push_back(op("final_layer_norm", "layernorm", {{"eps", eps}}));
    m.layers.push_back(op("embed_out", "linear", {{"out_features", vocab}, {"bias", false}}));
    m.layers.push_back(op("loss", "cross_entropy"));
    return m;
}

} // namespace

std::vector<std::string> hfSupportedModelTypes() {
    return {"gpt2", "bert", "roberta", "llama", "mistral", "qwen2", "gemma", "phi3", "gpt_neox"};
}

Result<Model> importHfConfig(const std::string& text, const std::string& source,
                             const HfImportOptions& options) {
    const auto cancelled = [&] { return options.cancelled && options.cancelled(); };
    if (cancelled()) return makeError(source + ": import cancelled");
    if (text.size() > kMaxHfConfigBytes)
        return makeError(tooLargeMessage(source, text.size(), kMaxHfConfigBytes, "a config.json"));
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) return makeError(source + ": not valid JSON");
    if (cancelled()) return makeError(source + ": import cancelled");
    if (!j.is_object()) return makeError(source + ": $: expected a JSON object");
    if (!j.contains("model_type") || !j["model_type"].is_string())
        return makeError(source + ": $.model_type: missing (expected e.g. \"llama\")");
    const std::string type = j["model_type"].get<std::string>();
    Config c(j, source);
    if (j.contains("num_local_experts") || j.contains("num_experts") || j.contains("n_routed_experts") ||
        type.find("moe") != std::string::npos || type == "mixtral")
        return makeError(source + ": model_type '" + type +
                         "' is a mixture of experts, which BatchFit does not model yet");
    Result<Model> m = makeError("");
    try {
        if (type == "gpt2")
            m = gpt2(c, options);
        else if (type == "bert")
            m = bert(c, options, false);
        else if (type == "roberta" || type == "xlm-roberta")
            m = bert(c, options, true);
        else if (type == "llama" || type == "mistral" || type == "qwen2" || type == "gemma" || type == "phi3")
            m = decoder(c, options, type);
        else if (type == "gpt_neox")
            m = neox(c, options);
        else {
            std::string known;
            for (const auto& t : hfSupportedModelTypes()) known += (known.empty() ? "" : ", ") + t;
            return makeError(source + ": $.model_type: '" + type + "' is not supported (supported: " + known +
                             ")");
        }
    } catch (const json::exception& e) {
        return makeError(source + ": " + e.what());
    }
    if (!m) return m;
    if (cancelled()) return makeError(source + ": import cancelled");
    std::string name = c.str("_name_or_path", "");
    if (name.empty() && j.contains("architectures") && j["architectures"].is_array() &&
        !j["architectures"].empty() && j["architectures"][0].is_string())
        name = j["architectures"][0].get<std::string>();
    m->name = name.empty() ? type : name;
    m->description = "Imported from a Hugging Face config.json (model_type " + type + ", sequence " +
                     std::to_string(m->inputShape[0]) + ")";
    return m;
}

Result<Model> importHfConfigFile(const std::string& path, const HfImportOptions& options) {
    auto text = readBoundedFile(path, kMaxHfConfigBytes, "a config.json");
    if (!text) return text.error();
    if (options.cancelled && options.cancelled()) return makeError(path + ": import cancelled");
    return importHfConfig(*text, path, options);
}

} // namespace batchfit
