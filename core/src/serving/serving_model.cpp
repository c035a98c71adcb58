// config.json -> ServingModel: the decoder's layers as a serving engine loads them (weights by kind, what
// each layer keeps per token). Parameter shapes follow transformers' modeling code of each family and vLLM's
// model_executor/models/*.py; docs/serving.md, section 1.
#include "batchfit/serving.h"
#include "bounded_file.h"
#include "import/hf_config_util.h"
#include "json_text.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace batchfit {
namespace {

using hf::Config;
using hf::json;
using U = std::uint64_t;

const std::set<std::string>& denseTypes() {
    static const std::set<std::string> t{"llama", "mistral", "qwen2",       "qwen3",
                                         "gemma", "gemma2",  "gemma3_text", "phi3"};
    return t;
}

/// A small whole number of the config: `def` unless the key holds an integer in [0, max] (a double such as
/// 1e300 never reaches an integer cast).
std::int64_t smallInt(const Config& c, const char* key, std::int64_t def,
                      std::int64_t max = std::int64_t{1} << 31) {
    const json& j = c.raw();
    if (!j.contains(key) || !j[key].is_number_integer()) return def;
    const std::int64_t v = j[key].get<std::int64_t>();
    return v >= 0 && v <= max ? v : def;
}

/// The layer kinds: `layer_types` when the config lists them, else each family's rule (transformers'
/// configuration_*.py): Gemma 2 alternates from a sliding layer 0, Gemma 3 has one global layer in
/// `sliding_window_pattern`, Qwen sliding layers from max_window_layers when use_sliding_window, Mistral
/// (and Phi-3's config) a window on every layer.
Result<std::vector<bool>> slidingLayers(const Config& c, const std::string& type, std::int64_t layers) {
    std::vector<bool> sliding(static_cast<std::size_t>(layers), false);
    const json& j = c.raw();
    const bool hasWindow = j.contains("sliding_window") && j["sliding_window"].is_number_integer();
    if (j.contains("layer_types") && j["layer_types"].is_array()) {
        const json& t = j["layer_types"];
        if (static_cast<std::int64_t>(t.size()) != layers)
            return makeError(c.source() + ": $.layer_types: expected " + std::to_string(layers) +
                             " entries (num_hidden_layers), got " + std::to_string(t.size()));
        for (std::size_t i = 0; i < t.size(); ++i)
            sliding[i] = t[i].is_string() && t[i].get<std::string>() == "sliding_attention";
        return sliding;
    }
    if (!hasWindow) return sliding;
    for (std::int64_t i = 0; i < layers; ++i) {
        bool s = false;
        if (type == "gemma2")
            s = (i + 1) % 2 != 0;
        else if (type == "gemma3_text")
            s = (i + 1) % std::max<std::int64_t>(smallInt(c, "sliding_window_pattern", 6), 1) != 0;
        else if (type == "qwen2" || type == "qwen3" || type == "qwen2_moe" || type == "qwen3_moe")
            s = c.flag("use_sliding_window", false) && i >= smallInt(c, "max_window_layers", 0);
        else if (type == "mistral" || type == "phi3" || type == "mixtral")
            s = true;
        sliding[static_cast<std::size_t>(i)] = s;
    }
    return sliding;
}

/// The weights' storage from quantization_config (AWQ, GPTQ, fp8, bitsandbytes, compressed-tensors).
void readQuantization(const json& j, ServingModel& m) {
    if (!j.contains("quantization_config") || !j["quantization_config"].is_object()) return;
    const json& q = j["quantization_config"];
    const auto str = [&q](const char* k) {
        return q.contains(k) && q[k].is_string() ? q[k].get<std::string>() : "";
    };
    const std::string method = str("quant_method");
    if (q.contains("group_size") && q["group_size"].is_number_integer() &&
        q["group_size"].get<std::int64_t>() > 0)
        m.quantGroupSize = q["group_size"].get<std::int64_t>();
    if (method == "awq")
        m.quant = WeightQuant::Awq;
    else if (method == "gptq")
        m.quant = WeightQuant::Gptq;
    else if (method == "fp8" || method == "fbgemm_fp8")
        m.quant = WeightQuant::Fp8;
    else if (method == "bitsandbytes") {
        m.quant =
            q.contains("load_in_8bit") && q["load_in_8bit"] == true ? WeightQuant::Int8 : WeightQuant::Nf4;
        m.nf4DoubleQuant = q.contains("bnb_4bit_use_double_quant") && q["bnb_4bit_use_double_quant"] == true;
    } else if (method == "compressed-tensors") {
        const std::string dump = q.dump(); // the config groups' weights: {"num_bits": 8, "type": "float"}
        m.quant = dump.find("\"float\"") != std::string::npos ? WeightQuant::Fp8 : WeightQuant::Int8;
    }
}

struct Attention {
    U split = 0, kv = 0, outputs = 0, inputs = 0, other = 0;
};

/// q, k, v, o (grouped-query): biases on q/k/v for Qwen2 or attention_bias, on o with attention_bias; RMSNorm
/// over head_dim on q and k for Qwen3 and Gemma 3.
Attention gqaAttention(const ServingModel& m, const Config& c, const std::string& type) {
    const U d = static_cast<U>(m.hidden), q = static_cast<U>(m.heads * m.headDim),
            kv = static_cast<U>(m.kvHeads * m.headDim);
    const bool bias = c.flag("attention_bias", false),
               qkvBias = bias || type == "qwen2" || type == "qwen2_moe";
    Attention a;
    a.split = 2 * d * q;
    a.kv = 2 * d * kv;
    a.outputs = q + 2 * kv + d;
    a.inputs = 3 * d + q;
    a.other = (qkvBias ? q + 2 * kv : 0) + (bias ? d : 0);
    if (type == "qwen3" || type == "qwen3_moe" || type == "gemma3_text")
        a.other += 2 * static_cast<U>(m.headDim);
    return a;
}

/// q_lora_rank: 0 when null or absent (q_proj straight from the hidden state), else 1..65536.
Result<std::int64_t> qLoraRank(const Config& c) {
    const json& j = c.raw();
    if (!j.contains("q_lora_rank") || j["q_lora_rank"].is_null()) return std::int64_t{0};
    if (!j["q_lora_rank"].is_number_integer() || j["q_lora_rank"].get<std::int64_t>() < 1 ||
        j["q_lora_rank"].get<std::int64_t>() > (1 << 16))
        return makeError(c.source() + ": $.q_lora_rank: expected null or an integer from 1 to 65536, got " +
                         Config::describe(j["q_lora_rank"]));
    return j["q_lora_rank"].get<std::int64_t>();
}

/// DeepSeek-V2/V3 multi-head latent attention (modeling_deepseek.py, DeepseekV2Attention).
Result<Attention> mlaAttention(ServingModel& m, const Config& c) {
    BF_TRY(rope, c.integer({"qk_rope_head_dim"}, 64));
    BF_TRY(nope, c.integer({"qk_nope_head_dim"}, 128));
    BF_TRY(vDim, c.integer({"v_head_dim"}, 128));
    BF_TRY(kvRank, c.integer({"kv_lora_rank"}, 512));
    BF_TRY(qRank, qLoraRank(c));
    for (auto [key, v] : {std::pair<const char*, std::int64_t>{"qk_rope_head_dim", rope},
                          {"qk_nope_head_dim", nope},
                          {"v_head_dim", vDim},
                          {"kv_lora_rank", kvRank}})
        if (v > (1 << 16))
            return makeError(c.source() + ": $." + key + ": " + std::to_string(v) +
                             " is too large (at most 65536)");
    const U d = static_cast<U>(m.hidden), h = static_cast<U>(m.heads), r = static_cast<U>(rope),
            n = static_cast<U>(nope), v = static_cast<U>(vDim), kvr = static_cast<U>(kvRank);
    const bool qLora = qRank > 0;
    const U qr = static_cast<U>(qRank);
    Attention a;
    a.split =
        (qLora ? d * qr + qr * h * (n + r) : d * h * (n + r)) + d * (kvr + r) + kvr * h * (n + v) + h * v * d;
    a.outputs = (qLora ? qr + h * (n + r) : h * (n + r)) + (kvr + r) + h * (n + v) + d;
    a.inputs = (qLora ? d + qr : d) + d + kvr + h * v;
    a.other = kvr + (qLora ? qr : 0); // kv_a_layernorm, q_a_layernorm
    m.rotaryDim = rope;
    m.headDim = n + r;
    return a;
}

/// quantization_config.modules_to_not_convert naming the attention ("self_attn", or its projections): those
/// linears stay in the model dtype.
bool attentionKept(const Config& c) {
    const json& j = c.raw();
    if (!j.contains("quantization_config") || !j["quantization_config"].is_object()) return false;
    const json& q = j["quantization_config"];
    if (!q.contains("modules_to_not_convert") || !q["modules_to_not_convert"].is_array()) return false;
    for (const json& n : q["modules_to_not_convert"])
        if (n.is_string() && (n.get<std::string>() == "self_attn" || n.get<std::string>() == "q_proj" ||
                              n.get<std::string>() == "o_proj"))
            return true;
    return false;
}

/// vLLM 0.7's MLA matrix absorption (attention/backends/mla/utils.py process_weights_after_loading with
/// VLLM_MLA_PERFORM_MATRIX_ABSORPTION, on by default): W_QR [q_in, heads x rope], W_Q_UK [q_in, heads x
/// kv_lora_rank] and W_UV_O [heads x kv_lora_rank, hidden], kept beside the raw weights.
std::uint64_t absorbedMla(const ServingModel& m, const Config& c, std::int64_t kvLoraRank) {
    const auto qRank = qLoraRank(c); // checked by mlaAttention before this runs
    const U qIn = qRank && *qRank > 0 ? static_cast<U>(*qRank) : static_cast<U>(m.hidden);
    const U h = static_cast<U>(m.heads), r = static_cast<U>(m.rotaryDim), l = static_cast<U>(kvLoraRank);
    return qIn * h * r + qIn * h * l + h * l * static_cast<U>(m.hidden);
}

struct Moe {
    std::int64_t experts = 0, topK = 0, inner = 0, shared = 0;
    std::int64_t firstDense = 0, every = 1;
    std::set<std::int64_t> denseLayers;
    bool sharedGate = false, correctionBias = false;
};

Result<Moe> readMoe(const Config& c, const std::string& type) {
    Moe e;
    const bool deepseek = type == "deepseek_v2" || type == "deepseek_v3";
    if (type == "mixtral") {
        BF_TRY(n, c.integer({"num_local_experts"}));
        BF_TRY(k, c.integer({"num_experts_per_tok"}, 2));
        BF_TRY(w, c.integer({"intermediate_size"}));
        e.experts = n, e.topK = k, e.inner = w;
        return e;
    }
    BF_TRY(n, c.integer({deepseek ? "n_routed_experts" : "num_experts"}));
    BF_TRY(k, c.integer({"num_experts_per_tok"}));
    BF_TRY(w, c.integer({"moe_intermediate_size"}));
    if (n > (1 << 16) || w > (1 << 22) || k > n)
        return makeError(c.source() + ": experts " + std::to_string(n) + " of width " + std::to_string(w) +
                         ", " + std::to_string(k) +
                         " per token: expected at most 65536 experts of width at most " +
                         "4194304, and no more per token than there are");
    e.experts = n, e.topK = k, e.inner = w;
    if (type == "qwen2_moe") {
        BF_TRY(s, c.integer({"shared_expert_intermediate_size"}, 0));
        e.shared = s, e.sharedGate = s > 0;
    }
    if (deepseek) {
        BF_TRY(s, c.integer({"n_shared_experts"}, 0));
        e.shared = s * w;
        e.firstDense = smallInt(c, "first_k_dense_replace", 0);
        e.every = std::max<std::int64_t>(smallInt(c, "moe_layer_freq", 1), 1);
        e.correctionBias = type == "deepseek_v3";
    } else {
        e.every = std::max<std::int64_t>(smallInt(c, "decoder_sparse_step", 1), 1);
        if (c.raw().contains("mlp_only_layers") && c.raw()["mlp_only_layers"].is_array())
            for (const auto& i : c.raw()["mlp_only_layers"])
                if (i.is_number_integer()) e.denseLayers.insert(i.get<std::int64_t>());
    }
    return e;
}

bool sparseAt(const Moe& e, const std::string& type, std::int64_t i) {
    if (e.experts == 0) return false;
    if (type == "deepseek_v2" || type == "deepseek_v3") return i >= e.firstDense && i % e.every == 0;
    return !e.denseLayers.count(i) && (i + 1) % e.every == 0;
}

/// One layer's MLP: gated (gate, up, down), or the routed experts, their router and the shared experts.
void addMlp(LayerWeights& w, const ServingModel& m, const Moe& e, bool sparse) {
    const U d = static_cast<U>(m.hidden);
    auto gated = [&](U inner, U copies) {
        w.splitLinear += copies * 3 * d * inner;
        w.linearOutputs += copies * (2 * inner + d);
        w.linearInputs += copies * (2 * d + inner);
    };
    if (!sparse) return gated(static_cast<U>(m.intermediate), 1);
    gated(static_cast<U>(e.inner), static_cast<U>(e.experts));
    w.other += d * static_cast<U>(e.experts) + (e.correctionBias ? static_cast<U>(e.experts) : 0);
    if (e.shared > 0) gated(static_cast<U>(e.shared), 1);
    if (e.sharedGate) w.other += d;
}

/// The whole model's parameters at most 2^52 and a token's KV bytes at most 2^32, summed in long double so
/// that no byte count after this can wrap (lengths are at most 2^26, concurrency 2^31).
Result<ServingModel> checkTotals(const Config& c, ServingModel m) {
    long double params = static_cast<long double>(m.vocab) * static_cast<long double>(m.hidden) * 2;
    long double kvToken = 0;
    for (std::size_t i = 0; i < m.layerWeights.size(); ++i) {
        const LayerWeights& w = m.layerWeights[i];
        params += static_cast<long double>(w.splitLinear) + w.kvLinear + w.other;
        kvToken +=
            2.0L * static_cast<long double>(m.kv[i].kvHeads) * static_cast<long double>(m.kv[i].headDim) * 4;
    }
    if (params > 0x1p52L)
        return makeError(c.source() + ": " + std::to_string(static_cast<double>(params)) +
                         " parameters is too large (at most 2^52)");
    if (kvToken > 0x1p32L)
        return makeError(c.source() + ": the layers keep " + std::to_string(static_cast<double>(kvToken)) +
                         " bytes per token: too large (at most 2^32)");
    return m;
}

Result<ServingModel> readDecoder(const Config& c, const std::string& type) {
    ServingModel m;
    m.modelType = type;
    const bool mla = type == "deepseek_v2" || type == "deepseek_v3";
    const bool moe = mla || type == "mixtral" || type == "qwen2_moe" || type == "qwen3_moe";
    BF_TRY(d, c.integer({"hidden_size"}));
    BF_TRY(layers, c.layerCount({"num_hidden_layers"}));
    BF_TRY(heads, c.integer({"num_attention_heads"}));
    BF_TRY(kv, c.integer({"num_key_value_heads"}, heads));
    BF_TRY(vocab, c.integer({"vocab_size"}));
    BF_TRY(positions, c.integer({"max_position_embeddings"}, 2048));
    BF_TRY(headDim, c.integer({"head_dim"}, std::max<std::int64_t>(d / heads, 1)));
    BF_TRY(inner, c.integer({"intermediate_size"}, moe ? 1 : 0));
    if (!moe && inner <= 0) return makeError(c.source() + ": $.intermediate_size: missing");
    // Bounds that keep every per-layer product below 2^64 (the totals are checked in checkTotals).
    for (auto [key, v, max] : {std::tuple<const char*, std::int64_t, std::int64_t>{"hidden_size", d, 1 << 20},
                               {"num_attention_heads", heads, 1 << 16},
                               {"num_key_value_heads", kv, 1 << 16},
                               {"head_dim", headDim, 1 << 16},
                               {"intermediate_size", inner, 1 << 22},
                               {"vocab_size", vocab, 1 << 24},
                               {"max_position_embeddings", positions, 1 << 26}})
        if (v > max)
            return makeError(c.source() + ": $." + key + ": " + std::to_string(v) +
                             " is too large (at most " + std::to_string(max) + ")");
    m.hidden = d, m.heads = heads, m.kvHeads = mla ? 1 : kv, m.headDim = headDim, m.vocab = vocab;
    m.intermediate = inner, m.maxPositions = positions;
    m.rotaryDim = static_cast<std::int64_t>(static_cast<double>(headDim) *
                                            std::clamp(c.real("partial_rotary_factor", 1.0), 0.0, 1.0));
    const bool gemma = type.rfind("gemma", 0) == 0;
    m.tiedEmbeddings = c.flag("tie_word_embeddings", gemma);
    Moe e;
    if (moe) {
        auto r = readMoe(c, type);
        if (!r) return r.error();
        e = *r;
        m.experts = e.experts, m.topK = e.topK, m.moeIntermediate = e.inner;
    }
    Attention a;
    std::int64_t latent = 0;
    if (mla) {
        auto r = mlaAttention(m, c);
        if (!r) return r.error();
        a = *r;
        latent =
            smallInt(c, "kv_lora_rank", 512, 1 << 16); // mlaAttention has checked it (a missing key: 512)
        latent += m.rotaryDim;
    } else {
        a = gqaAttention(m, c, type);
    }
    auto sliding = slidingLayers(c, type, layers);
    if (!sliding) return sliding.error();
    const std::int64_t window = smallInt(c, "sliding_window", 0);
    const U norms = static_cast<U>((type == "gemma2" || type == "gemma3_text" ? 4 : 2) * d);
    for (std::int64_t i = 0; i < layers; ++i) {
        LayerWeights w{a.split,         a.kv,           a.outputs,        a.inputs,
                       a.other + norms, a.split + a.kv, attentionKept(c), 0};
        if (mla) w.mlaAbsorbed = absorbedMla(m, c, latent - m.rotaryDim);
        addMlp(w, m, e, sparseAt(e, type, i));
        m.layerWeights.push_back(w);
        KvLayer k;
        if (mla) {
            k.kind = KvLayer::Kind::Mla, k.kvHeads = 1, k.headDim = latent;
        } else {
            k.kind = sliding->at(static_cast<std::size_t>(i)) && window > 0 ? KvLayer::Kind::Sliding
                                                                            : KvLayer::Kind::Full;
            k.kvHeads = kv, k.headDim = headDim, k.window = window;
        }
        m.kv.push_back(k);
    }
    m.finalNormParams = static_cast<U>(d);
    return checkTotals(c, m);
}

DType servedDtype(const json& j) {
    for (const char* k : {"torch_dtype", "dtype"})
        if (j.contains(k) && j[k].is_string()) {
            const std::string t = j[k].get<std::string>();
            if (t == "float16") return DType::Float16;
        }
    return DType::BFloat16; // bf16 checkpoints, and fp32 ones, which vLLM serves in bf16
}

} // namespace

std::vector<std::string> servingModelTypes() {
    std::vector<std::string> t(denseTypes().begin(), denseTypes().end());
    for (const char* s : {"mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3"})
        t.emplace_back(s);
    return t;
}

std::uint64_t ServingModel::parameterCount() const {
    U n = static_cast<U>(vocab) * static_cast<U>(hidden) * (tiedEmbeddings ? 1 : 2) + finalNormParams;
    for (const LayerWeights& w : layerWeights) n += w.splitLinear + w.kvLinear + w.other;
    return n;
}

Result<ServingModel> readServingModel(const std::string& text, const std::string& source) {
    return jsontext::parseFileText<ServingModel>(
        text, source, kMaxHfConfigBytes, "a config.json", [&](const json& root) -> Result<ServingModel> {
            if (!root.is_object()) return makeError(source + ": $: expected a JSON object");
            // Multimodal configs (Gemma 3, Llama 4, Qwen-VL) keep the language model under text_config.
            const json& j = root.contains("text_config") && root["text_config"].is_object() &&
                                    !root.contains("num_hidden_layers")
                                ? root["text_config"]
                                : root;
            if (!j.contains("model_type") || !j["model_type"].is_string())
                return makeError(source + ": $.model_type: missing (expected e.g. \"llama\")");
            std::string type = j["model_type"].get<std::string>();
            if (type == "gemma3") type = "gemma3_text";
            const auto known = servingModelTypes();
            if (std::find(known.begin(), known.end(), type) == known.end()) {
                std::string list;
                for (const auto& t : known) list += (list.empty() ? "" : ", ") + t;
                return makeError(source + ": $.model_type: '" + type +
                                 "' is not a decoder BatchFit serves (" + list + ")");
            }
            Config c(j, source);
            auto m = readDecoder(c, type);
            if (!m) return m;
            m->name = hf::hfModelName(root, source, type);
            m->dtype = servedDtype(j);
            readQuantization(root, *m);
            return m;
        });
}

Result<ServingModel> readServingModelFile(const std::string& path) {
    auto text = readBoundedFile(path, kMaxHfConfigBytes, "a config.json");
    if (!text) return text.error();
    return readServingModel(*text, path);
}

} // namespace batchfit
