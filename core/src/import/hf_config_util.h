#pragma once
// Shared by the Hugging Face config importers (hf_config.cpp, hf_decoders.cpp): typed reads of config.json
// with messages naming the file and the JSON path, and small layer helpers.
#include "batchfit/hf_import.h"
#include "batchfit/model_io.h"
#include "import/layer_builder.h"

#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace batchfit::hf {

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

/// A causal LM's loss as transformers computes it (loss/loss_utils.py ForCausalLMLoss, every *ForCausalLM
/// since 4.46): `logits = logits.float()` first, so the log-softmax that cross-entropy saves is fp32 whatever
/// the model's dtype (a view, nothing new, in fp32). Two tensors live until the forward returns, saved or
/// not: the head's input, the inner model's last_hidden_state that *ForCausalLM.forward holds while it
/// computes the loss, and the logits in the model's dtype, which it returns.
///
/// The inner model (LlamaModel.forward and its kind) keeps `inputs_embeds`, the token embedding's output, in
/// a local until it returns: alive through every layer, to the last norm (`keeps_alive` on that norm).
inline void addCausalLmLoss(Model& m) {
    for (auto l = m.layers.rbegin(); l != m.layers.rend(); ++l)
        if (l->op == "linear") {
            l->attrs.set("input_held_to_forward_end", true);
            const auto norm = std::next(l);
            const auto embedding = std::find_if(m.layers.begin(), m.layers.end(),
                                                [](const Layer& x) { return x.op == "embedding"; });
            if (norm != m.layers.rend() && !norm->isBlock() && embedding != m.layers.end())
                norm->attrs.set("keeps_alive", embedding->name);
            break;
        }
    m.layers.push_back(
        op("loss_upcast", "cast", {{"dtype", std::string("float32")}, {"input_held_to_forward_end", true}}));
    m.layers.push_back(op("loss", "cross_entropy"));
}

/// The name an imported model gets: _name_or_path, the Hugging Face cache id in `source`, the folder of a
/// config.json or the file's name, the architecture, else model_type (hf_config.cpp).
std::string hfModelName(const json& j, const std::string& source, const std::string& type);

#define BF_TRY(var, expr)                                                                                    \
    auto var##_r = (expr);                                                                                   \
    if (!var##_r) return var##_r.error();                                                                    \
    const auto var = *var##_r;

inline Result<std::int64_t> sequence(const Config& c, const HfImportOptions& o, std::int64_t maxPositions) {
    const std::int64_t s = o.sequenceLength.value_or(maxPositions);
    if (s <= 0 || s > (1ll << 24))
        return makeError(c.source() + ": sequence length " + std::to_string(s) + " is out of range");
    if (o.sequenceLength && s > maxPositions)
        return makeError(c.source() + ": sequence length " + std::to_string(s) +
                         " exceeds the model's maximum " + std::to_string(maxPositions) + " positions");
    return s;
}

/// An expert's activation (rules_moe.cpp's `act`): the tanh GELUs as one fused op.
inline std::string act(const std::string& hf) {
    return hf == "gelu_new" || hf == "gelu_pytorch_tanh" || hf == "gelu_fast" ? "gelu_tanh" : hf;
}

/// transformers' activations written in Python (activations.py), op by op as autograd sees them: a multiply
/// by a Python scalar or `1.0 + t` saves nothing (`scale`), a tensor product saves both operands. The tanh
/// GELU of NewGELUActivation ("gelu_new": GPT-2, GPT-J, Phi-1/2) and AccurateGELUActivation, 0.5 * x * (1 +
/// tanh(c * (x + 0.044715 * x**3))), saves x (pow), the tanh, 0.5x and 1 + tanh: three tensors of x's size
/// more than F.gelu(approximate="tanh") ("gelu_pytorch_tanh"). FastGELUActivation saves six, QuickGELU (CLIP)
/// one more than sigmoid. Measured under the newest torch and transformers: docs/accuracy-real.md.
inline std::vector<Layer> pythonGelu(const std::string& hf, const std::string& x) {
    auto scale = [](const char* name, double factor, const std::string& in, double offset = 0.0) {
        AttrList a{{"factor", factor}};
        if (offset != 0.0) a.push_back({"offset", offset});
        return op(name, "scale", a, in.empty() ? std::vector<std::string>{} : std::vector<std::string>{in});
    };
    const double c = 0.7978845608028654; // sqrt(2 / pi)
    if (hf == "quick_gelu")
        return {scale("scaled", 1.702, x), op("sigmoid", "sigmoid"), op("out", "mul", {}, {x, "sigmoid"})};
    if (hf == "gelu_fast")
        return {scale("outer", 0.7978845608, x),
                scale("cubic", 0.044715, x),
                op("square", "mul", {}, {"cubic", x}),
                scale("one_plus_square", 1.0, "", 1.0),
                op("inner", "mul", {}, {"outer", "one_plus_square"}),
                op("tanh", "tanh"),
                scale("one_plus_tanh", 1.0, "", 1.0),
                scale("half", 0.5, x),
                op("out", "mul", {}, {"half", "one_plus_tanh"})};
    return {op("cube", "pow", {{"exponent", 3.0}}, {x}),
            scale("cubic", 0.044715, ""),
            op("inner", "add", {}, {x, "cubic"}),
            scale("inner_scaled", c, ""),
            op("tanh", "tanh"),
            scale("one_plus_tanh", 1.0, "", 1.0),
            scale("half", 0.5, x),
            op("out", "mul", {}, {"half", "one_plus_tanh"})};
}

/// The activation a config names (`hidden_act`, `activation_function`): one op for torch's fused kernels, a
/// block of pointwise ops for the ones transformers writes in Python (pythonGelu). `inputs`: where it reads
/// from (default: the previous layer).
inline Layer activation(const std::string& name, const std::string& hf,
                        std::vector<std::string> inputs = {}) {
    if (hf == "gelu_new" || hf == "gelu_accurate" || hf == "gelu_fast" || hf == "quick_gelu") {
        return block(name, pythonGelu(hf, inputs.empty() ? "@input" : inputs.front()));
    }
    if (hf == "gelu_pytorch_tanh")
        return op(name, "gelu", {{"approximate", std::string("tanh")}}, std::move(inputs));
    if (hf == "silu" || hf == "swish") return op(name, "silu", {}, std::move(inputs));
    if (hf == "relu") return op(name, "relu", {}, std::move(inputs));
    return op(name, "gelu", {}, std::move(inputs));
}

inline Layer dropout(const std::string& name, double p) {
    return op(name, "dropout", {{"p", p}});
}

/// A classifier's classes: `num_labels`, else the size of `id2label` (as PretrainedConfig reads them),
/// else 2.
inline std::int64_t numLabels(const Config& c) {
    const json& j = c.raw();
    if (j.contains("num_labels") && j["num_labels"].is_number_integer() &&
        j["num_labels"].get<std::int64_t>() > 0 &&
        j["num_labels"].get<std::int64_t>() <= (std::int64_t{1} << 24))
        return j["num_labels"].get<std::int64_t>();
    if (j.contains("id2label") && j["id2label"].is_object() && !j["id2label"].empty())
        return static_cast<std::int64_t>(j["id2label"].size());
    return 2;
}

/// The gated MLP of the Llama-style decoders after the layers in `mlp` (its norm): gate_proj, up_proj,
/// act(gate) * up, down_proj; Phi-3's one gate_up_proj when `fusedGateUp` (hf_decoders.cpp).
Layer gatedMlp(const std::string& hidden, std::int64_t inner, std::int64_t d, bool fusedGateUp,
               std::vector<Layer> mlp);

/// DeepseekV3ForCausalLM (v2 false) and DeepseekV2ForCausalLM: multi-head latent attention and the routed
/// mixture of experts with shared experts (hf_deepseek.cpp).
Result<Model> deepseek(const Config& c, const HfImportOptions& o, bool v2);

/// ViTForImageClassification (hf_vision.cpp).
Result<Model> vit(const Config& c, const HfImportOptions& o);

/// Llama-style decoders: llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text, phi3 and the sparse-MoE
/// mixtral, qwen2_moe, qwen3_moe (hf_decoders.cpp).
Result<Model> decoder(const Config& c, const HfImportOptions& o, const std::string& type);
bool isDecoderType(const std::string& type);

} // namespace batchfit::hf
