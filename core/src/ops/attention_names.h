#pragma once
// The attention op's projection names, shared by its rule (the linears it adds) and the LoRA target finder.
#include "batchfit/attributes.h"

#include <string>
#include <vector>

namespace batchfit {

/// The projections' names (`names`: "q,k,v,out", or "qkv,out" with `qkv` "fused"), as the model's own modules
/// are called, so that LoRA targets and freezing patterns use them (GPT-2: c_attn,c_proj; Llama:
/// q_proj,k_proj,v_proj,o_proj). A list of the wrong length falls back to the defaults.
inline std::vector<std::string> attentionProjectionNames(const Attributes& a) {
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
