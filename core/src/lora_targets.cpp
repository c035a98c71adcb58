// PEFT's default targets: utils/constants.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING (peft 0.20),
// recognised by the layer names each family uses.
#include "batchfit/lora_targets.h"

#include "ops/attention_names.h"

#include <set>

namespace batchfit {

namespace {

void walk(const std::vector<Layer>& layers, const std::string& prefix, std::set<std::string>& names,
          LoraTargetInfo& info, bool& attention) {
    for (const Layer& l : layers) {
        const std::string path = prefix.empty() ? l.name : (l.name.empty() ? prefix : prefix + "." + l.name);
        if (l.isBlock()) {
            walk(l.layers, path, names, info, attention);
            walk(l.shortcutLayers, path, names, info, attention);
            walk(l.after, path, names, info, attention);
        } else if (l.op == "linear") {
            names.insert(l.name);
            if (auto m = l.attrs.getString("module")) names.insert(lastNameComponent(*m));
            info.head = path;
        } else if (l.op == "moe") {
            info.experts = true;
        } else if (l.op == "attention") {
            attention = true;
            for (const auto& n : attentionProjectionNames(l.attrs)) names.insert(n);
        }
    }
}

} // namespace

std::string lastNameComponent(const std::string& dotted) {
    const auto dot = dotted.find_last_of('.');
    return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

LoraTargetInfo loraTargetInfo(const Model& model) {
    std::set<std::string> names;
    LoraTargetInfo info;
    bool attention = false;
    walk(model.layers, "", names, info, attention);
    info.names.assign(names.begin(), names.end());
    const auto has = [&](const char* n) { return names.count(n) > 0; };
    if (has("q_proj") && has("v_proj"))
        info.defaults = {"q_proj", "v_proj"}; // llama, mistral, mixtral, qwen2/3, gemma/2
    else if (has("c_attn"))
        info.defaults = {"c_attn"}; // gpt2
    else if (has("qkv_proj") && attention)
        info.defaults = {
            "qkv_proj"}; // BatchFit's fused attention (the presets' GPT-2): what GPT-2's c_attn is
    else if (has("query") && has("value"))
        info.defaults = {"query", "value"}; // bert, roberta
    else if (has("query_key_value"))
        info.defaults = {"query_key_value"}; // gpt_neox
    return info;
}

} // namespace batchfit
