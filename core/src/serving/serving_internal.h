#pragma once
// Shared by the serving sources: the engines' defaults, the profile run's peak and the failure messages.
#include "batchfit/serving.h"

#include <algorithm>

namespace batchfit::serving {

/// Non-torch memory a vLLM worker gains after its start-up snapshot (cuBLAS, attention workspaces): the
/// median of the published start-up logs in docs/accuracy-serving.md.
inline constexpr std::uint64_t kNonTorchIncrease = 200ull << 20;
/// The CUDA-graph memory vLLM >= 0.20 estimates and subtracts (docs/serving.md 2.1).
inline constexpr std::uint64_t kCudaGraphEstimate = 512ull << 20;

/// The configuration with every default resolved for this GPU and parallelism (fraction, lengths, block size,
/// quantization), or an error naming the setting.
Result<ServingConfig> resolveConfig(const ServingModel& m, const ServingConfig& c, const GpuSpec& gpu,
                                    std::int64_t tp, std::int64_t pp);
/// The profile run's activation peak on one rank: the forward of max_num_batched_tokens, or the sampler's
/// logits on the last stage, whichever is larger (Hugging Face: one sequence's prefill and its logits).
std::uint64_t profilePeak(const ServingModel& m, const ServingConfig& c, std::int64_t tp, bool lastStage);
/// Tokens generate()'s cache keeps in a layer after `len`: every one, or a sliding layer's window - 1
/// (DynamicSlidingWindowLayer) or window (StaticSlidingWindowLayer); never negative.
inline std::int64_t hfKeptTokens(const KvLayer& k, std::int64_t len, bool staticCache) {
    const std::int64_t kept =
        k.kind == KvLayer::Kind::Sliding ? std::min(len, staticCache ? k.window : k.window - 1) : len;
    return kept > 0 ? kept : 0;
}

/// Fills ServingEstimate::message with the engine's own words for its failure.
void describeFailure(const ServingModel& m, ServingEstimate& e);

} // namespace batchfit::serving
