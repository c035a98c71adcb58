// The engines' defaults (docs/serving.md 2.5), the profile run's activation peak (2.2) and the failures in
// the engines' own words (2.6).
#include "serving/serving_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace batchfit::serving {
namespace {

using U = std::uint64_t;
constexpr U kGiB = U{1} << 30;

bool isHf(ServingEngine e) {
    return e == ServingEngine::Hf || e == ServingEngine::HfStatic;
}

/// vllm/engine/arg_utils.py _set_default_args: a GPU of 70 GiB or more that is not an A100 gets the larger
/// scheduler defaults (`vllm serve`: 8192 batched tokens, 1024 sequences; 16384 tokens from 160 GiB in 0.34).
bool bigGpu(const GpuSpec& gpu) {
    const bool a100 =
        gpu.name.find("A100") != std::string::npos || gpu.name.find("A800") != std::string::npos;
    return gpu.memoryBytes >= 70 * kGiB && !a100;
}

/// SGLang 0.5.23 arg_groups/memory_hook.py handle_gpu_memory_settings: the chunked-prefill size and the
/// decode CUDA-graph batch by GPU memory, then mem_fraction_static = (memory - reserved) / memory.
struct SglangDefaults {
    std::int64_t chunkedPrefill = 0;
    double fraction = 0;
};

SglangDefaults sglangDefaults(const GpuSpec& gpu, std::int64_t tp, std::int64_t pp) {
    const double mib = static_cast<double>(gpu.memoryBytes) / (1 << 20);
    const bool small = tp < 4;
    std::int64_t cp = 16384, graphBs = 512;
    if (mib < 20 * 1024)
        cp = 2048, graphBs = 8;
    else if (mib < 35 * 1024)
        cp = 4096, graphBs = small ? 48 : 160;
    else if (mib < 60 * 1024)
        cp = 4096, graphBs = small ? 32 : 160;
    else if (mib < 160 * 1024)
        cp = 8192, graphBs = small ? 256 : 512;
    double reserved = 512 + static_cast<double>(std::max<std::int64_t>(cp, 2048)) * 1.5 +
                      static_cast<double>(tp * pp) / 8 * 1024 + static_cast<double>(graphBs) * 2;
    if (mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
    return {cp, std::round((mib - reserved) / mib * 1000) / 1000};
}

/// One forward of `tokens` tokens without autograd, on one rank: the residual stream, its normed copy and the
/// layer output (3 x [T, hidden]), plus the larger of attention (q, k, v and its output) and the MLP (gate
/// and up, the activation) or the fused experts (topk copies of the tokens through w13, the activation and
/// w2, fp32 router logits).
long double forwardPeak(const ServingModel& m, std::int64_t tokens, std::int64_t tp) {
    const long double t = static_cast<long double>(tokens), d = static_cast<long double>(m.hidden),
                      b = static_cast<long double>(dtypeSize(m.dtype)), r = static_cast<long double>(tp);
    const long double heads = std::max<long double>(1, static_cast<long double>(m.heads) / r);
    const long double kv = std::max<long double>(1, std::floor(static_cast<long double>(m.kvHeads) / r));
    const long double attn = t * (2 * heads + 2 * kv) * static_cast<long double>(m.headDim) * b;
    long double mlp = t * 3 * static_cast<long double>(m.intermediate) / r * b;
    if (m.experts > 0) {
        const long double routed = t * static_cast<long double>(m.topK) *
                                   (3 * static_cast<long double>(m.moeIntermediate) / r + d) * b;
        mlp = std::max(mlp, routed + t * static_cast<long double>(m.experts) * 4);
    }
    return 3 * t * d * b + std::max(attn, mlp);
}

std::string gib(long double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(bytes / kGiB));
    return buf;
}

} // namespace

Result<ServingConfig> resolveConfig(const ServingModel& m, const ServingConfig& c, const GpuSpec& gpu,
                                    std::int64_t tp, std::int64_t pp) {
    ServingConfig r = c;
    const bool v1 = c.engine == ServingEngine::Vllm, v0 = c.engine == ServingEngine::VllmV0;
    if (r.quant == WeightQuant::Auto) r.quant = m.quant;
    if (v0) r.engineVersion = std::min(r.engineVersion, 10); // V0 shipped up to 0.10.2
    if (r.maxModelLen == 0) r.maxModelLen = m.maxPositions;
    if (r.maxModelLen > m.maxPositions)
        return makeError("--max-model-len " + std::to_string(r.maxModelLen) +
                         " is greater than the model's max_position_embeddings (" +
                         std::to_string(m.maxPositions) +
                         "); vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1");
    const SglangDefaults sg = sglangDefaults(gpu, tp, pp);
    if (r.blockSize == 0) r.blockSize = v1 ? (c.engineVersion >= 34 ? 64 : 16) : v0 ? 16 : 1;
    if (r.maxNumBatchedTokens == 0) {
        if (v1)
            r.maxNumBatchedTokens = c.engineVersion >= 34 && gpu.memoryBytes >= 160 * kGiB ? 16384
                                    : bigGpu(gpu)                                          ? 8192
                                                                                           : 2048;
        else if (v0) // no chunked prefill: the whole context at once, unless past 32k (chunked, 2048)
            r.maxNumBatchedTokens =
                r.maxModelLen > 32768 ? 2048 : std::max<std::int64_t>(r.maxModelLen, 2048);
        else if (c.engine == ServingEngine::Sglang)
            r.maxNumBatchedTokens = sg.chunkedPrefill;
        else
            r.maxNumBatchedTokens = r.maxModelLen;
    }
    if (r.maxNumSeqs == 0 && (v1 || v0))
        r.maxNumSeqs = std::min<std::int64_t>(v1 && bigGpu(gpu) ? 1024 : 256, r.maxNumBatchedTokens);
    if ((v1 || v0) && r.maxNumSeqs > r.maxNumBatchedTokens) // vllm/config/scheduler.py, as vLLM refuses it
        return makeError("max_num_batched_tokens (" + std::to_string(r.maxNumBatchedTokens) +
                         ") must be greater than or equal to max_num_seqs (" + std::to_string(r.maxNumSeqs) +
                         ")");
    if (!r.memoryFraction) {
        if (v1)
            r.memoryFraction = c.engineVersion >= 34 ? 1.0 : c.engineVersion >= 20 ? 0.92 : 0.9;
        else if (v0)
            r.memoryFraction = 0.9;
        else if (c.engine == ServingEngine::Sglang)
            r.memoryFraction = sg.fraction;
        else
            r.memoryFraction = 0.95; // generate() has no reserve: the training default's 5% margin
    }
    if (!(*r.memoryFraction > 0 && *r.memoryFraction <= 1))
        return makeError("--gpu-memory-utilization must be in (0, 1], got " +
                         std::to_string(*r.memoryFraction));
    return r;
}

std::uint64_t profilePeak(const ServingModel& m, const ServingConfig& c, std::int64_t tp, bool lastStage) {
    const long double v = static_cast<long double>(m.vocab);
    long double peak = 0;
    if (isHf(c.engine)) { // one sequence's prefill; its last position's logits, an fp32 copy, the processors'
        peak = forwardPeak(m, c.maxModelLen, tp) + v * (dtypeSize(m.dtype) + 4 + 8);
    } else if (c.engine != ServingEngine::Sglang) {
        // The dummy sampler: one row per request, min(max_num_seqs, batched tokens) (V1), every sequence
        // (V0). Bytes per logit calibrated on the published V0 and V1 logs (docs/accuracy-serving.md).
        const bool v0 = c.engine == ServingEngine::VllmV0;
        // (V0's scheduler requires max_num_seqs <= max_num_batched_tokens, so both are at most the tokens.)
        const long double rows = static_cast<long double>(std::min(c.maxNumSeqs, c.maxNumBatchedTokens));
        const long double sampler = lastStage ? rows * v * (v0 ? 40 : 20) : 0;
        peak = std::max(forwardPeak(m, c.maxNumBatchedTokens, tp), sampler);
    }
    return static_cast<U>(std::min<long double>(peak, 0x1p62L));
}

void describeFailure(const ServingModel& m, ServingEstimate& e) {
    const ServingConfig& c = e.config;
    const std::string len = std::to_string(c.maxModelLen);
    switch (e.failure) {
    case ServingEstimate::Failure::None:
        e.message.clear();
        return;
    case ServingEstimate::Failure::Weights:
        if (e.weightBytes + e.contextBytes > e.totalBytes)
            e.message = "the weights alone (" + gib(e.weightBytes) +
                        " GiB on this GPU) are more than the GPU holds (" +
                        gib(e.totalBytes - e.contextBytes) + " GiB after the CUDA context)";
        else
            e.message =
                "the weights alone (" + gib(e.weightBytes) + " GiB) are more than the engine's share (" +
                gib(e.requestedBytes) + " GiB): " +
                (c.engine == ServingEngine::Sglang
                     ? "Not enough memory. Please try to increase --mem-fraction-static."
                     : "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                       "when initializing the engine.");
        return;
    case ServingEstimate::Failure::Profile:
        e.message = c.engine == ServingEngine::Sglang
                        ? "Not enough memory. Please try to increase --mem-fraction-static."
                        : "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                          "when initializing the engine.";
        return;
    case ServingEstimate::Failure::KvTooSmall:
        break;
    }
    const std::int64_t longest = maxContextAt(m, e, 1);
    if (c.engine == ServingEngine::VllmV0)
        e.message =
            "The model's max seq len (" + len +
            ") is larger than the maximum number of tokens that can be stored in KV cache (" +
            std::to_string(c.blockSize * (e.blocks / e.pp)) +
            "). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
            "the engine.";
    else if (c.engine == ServingEngine::Vllm)
        e.message =
            "To serve at least one request with the model's max seq len (" + len + "), (" +
            gib(e.neededForOneRequest) +
            " GiB KV cache is needed, which is larger than the available KV cache memory (" +
            gib(e.kvAvailableBytes) +
            " GiB). Based on the available memory, the estimated maximum model "
            "length is " +
            std::to_string(longest) +
            ". Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
            "the engine.";
    else
        e.message = "one sequence of " + len + " tokens needs " + gib(e.neededForOneRequest) +
                    " GiB of KV cache; " + gib(std::max<std::int64_t>(e.kvAvailableBytes, 0)) +
                    " GiB is left (the longest that fits: " + std::to_string(longest) + " tokens)";
}

} // namespace batchfit::serving
