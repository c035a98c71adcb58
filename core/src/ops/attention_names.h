#pragma once
// The attention op's projection names, shared by its rule (the linears it adds) and the LoRA target finder.
#include "batchfit/attributes.h"

#include <string>
#include <vector>

namespace batchfit {

/// The projections' names (`names`: "q,k,v,out", or "qkv,out" with `qkv` "fused"), as the model's own modules
/// are called, so that LoRA targets and freezing patterns use them (GPT-2: c_attn,c_proj; Llama:
/// q_proj,k_proj,v_proj,o_proj; DeepSeek's MLA: its own five or four). A list of the wrong length falls back
/// to the defaults.
inline std::vector<std::string> attentionProjectionNames(const Attributes& a) {
    if (a.getString("qkv").value_or("") == "mla") // DeepSeek's latent attention (rules_mla.cpp), out last
        return a.getInt("q_lora_rank").value_or(0) > 0
                   ? std::vector<std::string>{"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj",
                                              "o_proj"}
                   : std::vector<std::string>{"q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"};
    const bool fused = a.getString("qkv").value_or("separate") == "fused";
    const std::string def = fused ? "qkv_proj,out_proj" : "q_proj,k_proj,v_proj,out_proj";
    std::vector<std::string> out;
    std::string item;
    for (char ch : a.getString("names").value_or(def) + ",") {
        if (ch != ',') {
            item += ch;
        } else if (!item.empty()) {
            out.push_back(item);
            item.clear();
        }
    }
    if (out.size() == (fused ? 2u : 4u)) return out;
    Attributes defaults;
    defaults.set("qkv", std::string(fused ? "fused" : "separate"));
    return attentionProjectionNames(defaults);
}

} // namespace batchfit
