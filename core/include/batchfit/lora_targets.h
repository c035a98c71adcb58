#pragma once
// Which linears of a model LoRA can adapt, and PEFT's default choice among them.
#include "batchfit/model.h"

#include <string>
#include <vector>

namespace batchfit {

/// What --lora-targets can name in this model: its linear layers' names (and an exported layer's torch module
/// name, its last part), and the projections the attention op creates (q_proj, k_proj, v_proj or qkv_proj,
/// out_proj), sorted.
struct LoraTargetInfo {
    std::vector<std::string> names;
    std::vector<std::string> defaults; ///< PEFT's default for the model's family; empty when it has none
    std::string head;                  ///< the last linear's path (all-linear leaves it out)
    bool experts = false;              ///< the model has a mixture-of-experts layer
};

LoraTargetInfo loraTargetInfo(const Model& model);
/// The part of a dotted name after its last '.' (all of it without one): a target or module's own name.
std::string lastNameComponent(const std::string& dotted);

} // namespace batchfit
