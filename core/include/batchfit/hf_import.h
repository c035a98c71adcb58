#pragma once
// Builds a model from a Hugging Face config.json (no download, no Python).
#include "batchfit/model.h"
#include "batchfit/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace batchfit {

/// A config.json larger than this is refused (real ones are a few kilobytes).
inline constexpr std::size_t kMaxHfConfigBytes = std::size_t{1} << 20;

struct HfImportOptions {
    std::optional<std::int64_t> sequenceLength; ///< default: the config's maximum positions
    /// "eager", "mem_efficient", "flash" (default: SDPA, what transformers >= 4.42 runs on torch 2) or "math"
    /// (SDPA's fallback, which the CPU runs where no fused kernel applies)
    std::optional<std::string> attention;
    /// Mixture-of-experts routing, which is data-dependent: "balanced" (each expert gets the expected
    /// tokens * top_k / experts, rounded up per sample) or "worst" (every token's top_k choices land on the
    /// same top_k experts: they each get every token). Anything else is refused.
    std::string moeLoad = "balanced";
    /// The experts' implementation: "grouped_mm" (transformers 5's default: every routed row at once,
    /// whatever the routing) or "loop" (transformers 4: one expert at a time, where moeLoad matters).
    std::string moeImpl = "grouped_mm";
    /// Polled between the import's steps (any thread); returning true abandons the import with the Error
    /// "<source>: import cancelled". Empty: never cancelled.
    std::function<bool()> cancelled = {};
};

/// model_type values understood: gpt2, bert, roberta, llama, mistral, qwen2, qwen3, gemma, gemma2,
/// gemma3_text, phi3 (Phi-3 and Phi-4), mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3 (DeepSeek-V3
/// and R1), gpt_neox, vit (xlm-roberta is read as roberta).
std::vector<std::string> hfSupportedModelTypes();
/// `source` names the file in messages. Other mixture-of-experts configs (deepseek_v2, ...) are refused with
/// a clear message.
Result<Model> importHfConfig(const std::string& jsonText, const std::string& source,
                             const HfImportOptions& options = {});
Result<Model> importHfConfigFile(const std::string& path, const HfImportOptions& options = {});

} // namespace batchfit
