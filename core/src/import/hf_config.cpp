// Hugging Face config.json -> layer stack. Structures follow the transformers modeling code of each family
// (modeling_gpt2.py, modeling_bert.py, modeling_gpt_neox.py here; the Llama-style decoders, dense and
// sparse-MoE, in hf_decoders.cpp).
#include "batchfit/hf_import.h"
#include "bounded_file.h"
#include "import/hf_config_util.h"
#include "json_text.h"

namespace batchfit {
namespace {

using namespace hf;

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
                              {"names", std::string("c_attn,c_proj")}, // PEFT's target_modules see these
                              {"dropout", c.real("attn_pdrop", 0.1)},
                              {"causal", true},
                              {"impl", impl},
                              // transformers 5 builds an additive mask per forward (masking_utils), not
                              // the old `bias` buffer: nothing saved
                              {"mask", std::string("none")},
                              {"kv_cache", c.flag("use_cache", true)},
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
    h.keepInput = true; // `hidden_states = block(hidden_states, ...)`
    m.layers.push_back(h);
    m.layers.push_back(op("ln_f", "layernorm", {{"eps", eps}}));
    m.layers.push_back(
        op("lm_head", "linear",
           c.flag("tie_word_embeddings", true)
               ? AttrList{{"out_features", vocab}, {"bias", false}, {"tied_to", std::string("wte")}}
               : AttrList{{"out_features", vocab}, {"bias", false}}));
    addCausalLmLoss(m);
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
    Layer att = block("attention", {op("self", "attention",
                                       {{"heads", heads},
                                        {"names", std::string("query,key,value,dense")},
                                        {"dropout", c.real("attention_probs_dropout_prob", 0.1)},
                                        {"impl", impl}}),
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
    layer.keepInput = true; // BertEncoder: `hidden_states = layer_module(hidden_states, ...)`
    m.layers.push_back(layer);
    if (c.architectureContains("MaskedLM") || c.architectureContains("ForPreTraining")) {
        m.layers.push_back(op("transform", "linear", {{"out_features", d}}));
        m.layers.push_back(activation("transform_act", c.str("hidden_act", "gelu")));
        m.layers.push_back(op("transform_norm", "layernorm", {{"eps", eps}}));
        m.layers.push_back(
            op("decoder", "linear",
               {{"out_features", vocab}, {"tied_to", std::string("embeddings.word_embeddings")}}));
    } else {
        const std::int64_t labels = numLabels(c);
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
                                {"names", std::string("query_key_value,dense")},
                                {"causal", true},
                                {"rope", true},
                                {"max_positions", positions},
                                {"softmax_dtype", std::string("float32")},
                                {"kv_cache", c.flag("use_cache", true)},
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
    stack.keepInput = true; // `hidden_states = layer(hidden_states, ...)`
    m.layers.push_back(stack);
    m.layers.push_back(op("final_layer_norm", "layernorm", {{"eps", eps}}));
    m.layers.push_back(op("embed_out", "linear", {{"out_features", vocab}, {"bias", false}}));
    addCausalLmLoss(m);
    return m;
}

} // namespace

std::vector<std::string> hfSupportedModelTypes() {
    return {"gpt2",      "bert",      "roberta",     "llama",       "mistral",  "qwen2",
            "qwen3",     "gemma",     "gemma2",      "gemma3_text", "phi3",     "mixtral",
            "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_neox", "vit"};
}

namespace hf {
namespace {

/// The last non-empty component of a path ("/data/llama-3-8b/" -> "llama-3-8b").
std::string lastComponent(std::string path) {
    while (!path.empty() && (path.back() == '/' || path.back() == '\\')) path.pop_back();
    const auto slash = path.find_last_of("/\\");
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

// Two Llamas imported from different places get different names (the GUI's Save As suggests a file from it).
std::string hfModelName(const nlohmann::json& j, const std::string& source, const std::string& type) {
    // 1. What save_pretrained wrote: a Hub id ("meta-llama/Meta-Llama-3-8B") or, for a local save, its
    // folder.
    if (j.contains("_name_or_path") && j["_name_or_path"].is_string()) {
        std::string n = j["_name_or_path"].get<std::string>();
        const bool local =
            !n.empty() && (n[0] == '/' || n[0] == '.' || n[0] == '~' || n.find('\\') != std::string::npos ||
                           n.find(':') != std::string::npos);
        if (local) n = lastComponent(n);
        if (!n.empty() && n.size() <= 200) return n;
    }
    // 2. The file: a Hugging Face cache entry (.../models--org--name/snapshots/<hash>/config.json ->
    // org/name), else the folder of a config.json, else the file's own name.
    const auto cache = source.find("models--");
    if (cache != std::string::npos) {
        std::string id = source.substr(cache + 8);
        id = id.substr(0, id.find_first_of("/\\"));
        if (auto dash = id.find("--"); dash != std::string::npos) id.replace(dash, 2, "/");
        if (!id.empty()) return id;
    }
    std::string file = lastComponent(source);
    if (auto dot = file.rfind('.'); dot != std::string::npos && dot > 0) file = file.substr(0, dot);
    if (file == "config") {
        const std::string dir =
            source.size() > 11 ? lastComponent(source.substr(0, source.find_last_of("/\\"))) : "";
        if (!dir.empty() && dir != "." && dir != ".." && dir != source) file = dir;
    }
    if (!file.empty() && file != "config" && file.size() <= 200) return file;
    // 3. The class the config names, else its model_type.
    if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
        j["architectures"][0].is_string())
        return j["architectures"][0].get<std::string>();
    return type;
}

} // namespace hf

Result<Model> importHfConfig(const std::string& text, const std::string& source,
                             const HfImportOptions& options) {
    const auto cancelled = [&] { return options.cancelled && options.cancelled(); };
    if (cancelled()) return makeError(source + ": import cancelled");
    if (text.size() > kMaxHfConfigBytes)
        return makeError(tooLargeMessage(source, text.size(), kMaxHfConfigBytes, "a config.json"));
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        return makeError(source + ": not valid JSON: " + jsontext::errorInWords(text, e));
    }
    if (cancelled()) return makeError(source + ": import cancelled");
    if (!j.is_object()) return makeError(source + ": $: expected a JSON object");
    if (!j.contains("model_type") || !j["model_type"].is_string())
        return makeError(source + ": $.model_type: missing (expected e.g. \"llama\")");
    const std::string type = j["model_type"].get<std::string>();
    Config c(j, source);
    if (options.moeLoad != "balanced" && options.moeLoad != "worst")
        return makeError(source +
                         ": MoE load must be \"balanced\" (each expert gets tokens * top_k / experts) or "
                         "\"worst\" (top_k experts get every token), got \"" +
                         options.moeLoad + "\"");
    if (options.moeImpl != "grouped_mm" && options.moeImpl != "loop")
        return makeError(source +
                         ": MoE implementation must be \"grouped_mm\" (transformers 5) or \"loop\" "
                         "(transformers 4), got \"" +
                         options.moeImpl + "\"");
    if (!isDecoderType(type) && type != "deepseek_v3" && type != "deepseek_v2" &&
        (j.contains("num_local_experts") || j.contains("num_experts") || j.contains("n_routed_experts") ||
         type.find("moe") != std::string::npos))
        return makeError(
            source + ": model_type '" + type +
            "' is a mixture of experts that BatchFit does not model (supported mixtures of experts: "
            "mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3)");
    Result<Model> m = makeError("");
    try {
        if (type == "gpt2")
            m = gpt2(c, options);
        else if (type == "bert")
            m = bert(c, options, false);
        else if (type == "roberta" || type == "xlm-roberta")
            m = bert(c, options, true);
        else if (isDecoderType(type))
            m = decoder(c, options, type);
        else if (type == "deepseek_v3" || type == "deepseek_v2")
            m = deepseek(c, options, type == "deepseek_v2");
        else if (type == "gpt_neox")
            m = neox(c, options);
        else if (type == "vit")
            m = vit(c, options);
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
    m->name = hf::hfModelName(j, source, type);
    m->description = "Imported from a Hugging Face config.json (model_type " + type +
                     (m->inputShape.size() == 3 ? ", image " + std::to_string(m->inputShape[1]) + "x" +
                                                      std::to_string(m->inputShape[2])
                                                : ", sequence " + std::to_string(m->inputShape[0])) +
                     ")";
    return m;
}

Result<Model> importHfConfigFile(const std::string& path, const HfImportOptions& options) {
    auto text = readBoundedFile(path, kMaxHfConfigBytes, "a config.json");
    if (!text) return text.error();
    if (options.cancelled && options.cancelled()) return makeError(path + ": import cancelled");
    return importHfConfig(*text, path, options);
}

} // namespace batchfit
