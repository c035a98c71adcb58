// The bytes a serving engine holds per rank: weights as stored (docs/serving.md 1.2), the KV cache per token
// (1.3) and the pipeline stages (1.4). The activation peak of the profile run is in serving_engines.cpp.
#include "batchfit/serving.h"

#include <algorithm>

namespace batchfit {
namespace {

using U = std::uint64_t;

U cdiv(U a, U b) {
    return b == 0 ? 0 : (a + b - 1) / b;
}

/// A population of linear weights (n elements, o output and i input features summed) as `q` stores it
/// (vLLM's quantization/*.py create_weights; bitsandbytes' quantize_4bit, blocksize 64).
U quantizedBytes(U n, U o, U i, WeightQuant q, std::int64_t groupSize, int dtypeBytes, bool doubleQuant) {
    const U g = static_cast<U>(std::max<std::int64_t>(groupSize, 1));
    switch (q) {
    case WeightQuant::Fp8:
    case WeightQuant::Int8:
        return n + 4 * o; // 1 B codes, an fp32 scale per output channel
    case WeightQuant::Awq:
        return n / 2 + n / g * 2 + n / g / 2; // int32-packed codes, fp16 scales and packed zeros per group
    case WeightQuant::Gptq:
        return n / 2 + n / g * 2 + n / g / 2 + 4 * i; // as AWQ, plus g_idx: one int32 per input feature
    case WeightQuant::Nf4:
        // 4-bit codes, an fp32 absmax per 64; double quantization: a uint8 absmax per 64 and an fp32 per 256
        // of those
        return doubleQuant ? n / 2 + n / 64 + n / 64 / 256 * 4 : n / 2 + n / 64 * 4;
    case WeightQuant::Auto:
    case WeightQuant::None:
        break;
    }
    return n * static_cast<U>(dtypeBytes);
}

} // namespace

std::vector<std::int64_t> pipelineStageLayers(std::int64_t layers, std::int64_t pp) {
    // vllm/distributed/utils.py get_pp_indices: layers // pp each, the remainder one each to the
    // second-to-last, third-to-last, ... stage (never the last).
    pp = std::max<std::int64_t>(pp, 1);
    std::vector<std::int64_t> parts(static_cast<std::size_t>(pp), layers / pp);
    const std::int64_t rest = layers % pp;
    for (std::int64_t i = 2; i < rest + 2; ++i) parts[static_cast<std::size_t>(pp - i)] += 1;
    return parts;
}

std::uint64_t servingWeightBytes(const ServingModel& m, WeightQuant quant, std::int64_t groupSize,
                                 std::int64_t tp, std::int64_t firstLayer, std::int64_t layers,
                                 bool firstStage, bool lastStage) {
    if (quant == WeightQuant::Auto) quant = m.quant;
    tp = std::max<std::int64_t>(tp, 1);
    const int b = dtypeSize(m.dtype);
    const U t = static_cast<U>(tp), d = static_cast<U>(m.hidden);
    // VocabParallelEmbedding pads the vocabulary to a multiple of 64 and splits it over the ranks.
    const U rows = cdiv(cdiv(static_cast<U>(m.vocab), 64) * 64, t);
    U bytes = 0;
    if (firstStage) bytes += rows * d * static_cast<U>(b);
    if (lastStage && (!m.tiedEmbeddings || !firstStage)) bytes += rows * d * static_cast<U>(b);
    if (lastStage) bytes += m.finalNormParams * static_cast<U>(b);
    const U kv = static_cast<U>(std::max<std::int64_t>(m.kvHeads, 1));
    const U kvPerRank = std::max<U>(1, kv / t);
    const std::int64_t end =
        std::min<std::int64_t>(firstLayer + layers, static_cast<std::int64_t>(m.layerWeights.size()));
    for (std::int64_t i = std::max<std::int64_t>(firstLayer, 0); i < end; ++i) {
        const LayerWeights& w = m.layerWeights[static_cast<std::size_t>(i)];
        const U kvRank = w.kvLinear / kv * kvPerRank;
        const U n = w.splitLinear / t + kvRank;
        // Linears named in modules_to_not_convert stay in the model dtype; the scales follow the rest's
        // share.
        const U kept = w.attentionKept && quant != WeightQuant::None
                           ? std::min(n, (w.attentionLinear - w.kvLinear) / t + kvRank)
                           : 0;
        const double share = n ? static_cast<double>(n - kept) / static_cast<double>(n) : 0;
        bytes += quantizedBytes(n - kept, static_cast<U>(share * static_cast<double>(w.linearOutputs / t)),
                                static_cast<U>(share * static_cast<double>(w.linearInputs / t)), quant,
                                groupSize, b, m.nf4DoubleQuant);
        bytes += (kept + w.other) * static_cast<U>(b);
    }
    // The rotary cos/sin cache: one row per position, persistent on every rank (vLLM's RotaryEmbedding).
    bytes += static_cast<U>(m.maxPositions) * static_cast<U>(m.rotaryDim) * static_cast<U>(b);
    return bytes;
}

std::uint64_t kvBytesPerToken(const ServingModel& m, KvCacheDtype dtype, std::int64_t tp,
                              std::int64_t firstLayer, std::int64_t layers, std::int64_t mlaAlign) {
    const U align = static_cast<U>(std::max<std::int64_t>(mlaAlign, 1));
    const U b = dtype == KvCacheDtype::Fp8 ? 1 : static_cast<U>(dtypeSize(m.dtype));
    tp = std::max<std::int64_t>(tp, 1);
    U bytes = 0;
    const std::int64_t end =
        std::min<std::int64_t>(firstLayer + layers, static_cast<std::int64_t>(m.kv.size()));
    for (std::int64_t i = std::max<std::int64_t>(firstLayer, 0); i < end; ++i) {
        const KvLayer& k = m.kv[static_cast<std::size_t>(i)];
        if (k.kind == KvLayer::Kind::Mla)
            bytes += cdiv(static_cast<U>(k.headDim), align) * align * b; // one latent, on every rank
        else // key and value; heads split over the ranks, replicated once kv_heads < tp (get_num_kv_heads)
            bytes +=
                2 * static_cast<U>(std::max<std::int64_t>(1, k.kvHeads / tp)) * static_cast<U>(k.headDim) * b;
    }
    return bytes;
}

} // namespace batchfit
