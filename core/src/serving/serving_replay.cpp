// Hugging Face generate()'s DynamicCache through the caching-allocator model: every decoding step's torch.cat
// allocates each layer's keys and values one token longer and frees the old ones (cache_utils.py
// DynamicLayer.update), so the blocks never fit the next request and the reserve grows past what is allocated
// (docs/serving.md 2.6).
#include "batchfit/serving_plan.h"
#include "serving/serving_internal.h"

#include <algorithm>

namespace batchfit {

namespace {

using U = std::uint64_t;

/// Per layer, the bytes of keys (or values) for `tokens` tokens of `sequences` sequences: sliding layers keep
/// window - 1 of them.
U layerHalfBytes(const ServingModel& m, const ServingEstimate& e, std::int64_t layer, std::int64_t sequences,
                 std::int64_t tokens) {
    const KvLayer& k = m.kv[static_cast<std::size_t>(layer)];
    const U perToken = kvBytesPerToken(m, e.config.kvCacheDtype, e.tp, layer, 1);
    // MLA keeps one latent (no separate values): its "half" is the whole, and the values are 0 bytes.
    const U half = k.kind == KvLayer::Kind::Mla ? perToken : perToken / 2;
    return half * static_cast<U>(sequences) * static_cast<U>(serving::hfKeptTokens(k, tokens, false));
}

} // namespace

Result<HfGenerateReplay> replayHfGenerate(const ServingModel& m, const ServingEstimate& e,
                                          std::int64_t sequences, std::int64_t prompt,
                                          std::int64_t newTokens) {
    if (sequences < 1 || prompt < 1 || newTokens < 1 || sequences > (1 << 20) || prompt > (1 << 26) ||
        newTokens > kMaxReplayedSteps)
        return makeError("generate() replay: sequences 1..1048576, prompt 1..2^26 and new tokens 1.." +
                         std::to_string(kMaxReplayedSteps) + " expected");
    const long double total = static_cast<long double>(sequences) *
                              static_cast<long double>(prompt + newTokens) *
                              static_cast<long double>(std::max<U>(e.bytesPerToken, 1));
    if (total > 0x1p60L)
        return makeError("generate() replay: " + std::to_string(sequences) + " sequences of " +
                         std::to_string(prompt + newTokens) +
                         " tokens would hold more than 2^60 bytes of cache");
    std::vector<AllocatorEvent> events;
    std::uint64_t id = 1;
    auto alloc = [&](U size, int tag) {
        events.push_back({AllocatorEvent::Kind::Alloc, id, size, 0, tag, false});
        return id++;
    };
    auto release = [&](std::uint64_t which) {
        events.push_back({AllocatorEvent::Kind::Free, which, 0, 0, -1, false});
    };
    alloc(e.weightBytes, 0); // the weights, loaded first (one block: their own layout does not move)
    const std::int64_t first = e.firstLayer, last = e.firstLayer + e.stageLayers;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> live(static_cast<std::size_t>(last - first));
    // Prefill: the prompt's activations come and go, each layer's cache is made.
    const std::uint64_t activations = alloc(e.activationBytes, 1);
    for (std::int64_t l = first; l < last; ++l) {
        const U half = layerHalfBytes(m, e, l, sequences, prompt);
        live[static_cast<std::size_t>(l - first)] = {alloc(half, 2), alloc(half, 2)};
    }
    release(activations);
    // Each new token: per layer, cat(old, new) is allocated before the old tensor is dropped.
    for (std::int64_t t = 1; t < newTokens; ++t) {
        for (std::int64_t l = first; l < last; ++l) {
            const U half = layerHalfBytes(m, e, l, sequences, prompt + t);
            auto& [k, v] = live[static_cast<std::size_t>(l - first)];
            const std::uint64_t nk = alloc(half, 2);
            release(k);
            const std::uint64_t nv = alloc(half, 2);
            release(v);
            k = nk, v = nv;
        }
    }
    ReplayOptions options;
    options.limitBytes = e.totalBytes > e.contextBytes + e.nonTorchBytes
                             ? std::optional<U>(e.totalBytes - e.contextBytes - e.nonTorchBytes)
                             : std::optional<U>(0);
    options.capacityBytes = e.totalBytes;
    options.contextBytes = e.contextBytes + e.nonTorchBytes;
    auto r = replayAllocations(events, options);
    if (!r) return r.error();
    HfGenerateReplay out;
    out.result = std::move(*r);
    out.events = events.size();
    for (std::int64_t l = first; l < last; ++l)
        out.cacheBytes += 2 * layerHalfBytes(m, e, l, sequences, prompt + newTokens - 1);
    return out;
}

} // namespace batchfit
