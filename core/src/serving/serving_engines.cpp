// Each engine's start-up arithmetic: what it reserves, the KV memory left and how it is cut into blocks
// (docs/serving.md, section 2, cites the source file and function of every rule).
#include "batchfit/non_torch_memory.h"
#include "batchfit/serving.h"
#include "serving/serving_internal.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace batchfit {
namespace {

using U = std::uint64_t;
constexpr U kMiB = U{1} << 20, kGiB = U{1} << 30;

U cdiv(U a, U b) {
    return b == 0 ? 0 : (a + b - 1) / b;
}

bool isV1(const ServingConfig& c) {
    return c.engine == ServingEngine::Vllm;
}

bool isHfEngine(const ServingConfig& c) {
    return c.engine == ServingEngine::Hf || c.engine == ServingEngine::HfStatic;
}

/// A V1 layer's spec key: full (and MLA) layers share one, sliding layers one per window. Before the hybrid
/// KV-cache manager (0.10) a sliding layer is kept whole (unify_hybrid_kv_cache_specs).
KvLayer v1Spec(const KvLayer& k, int version) {
    KvLayer s = k;
    if (version < 10 && s.kind == KvLayer::Kind::Sliding) s.kind = KvLayer::Kind::Full;
    return s;
}

std::int64_t specKey(const KvLayer& k) {
    return k.kind == KvLayer::Kind::Sliding ? k.window : -1;
}

/// vllm/v1/core/kv_cache_utils.py get_kv_cache_groups (_get_kv_cache_groups_uniform_page_size): layers of one
/// spec form one group; with several specs, each spec's layers are cut into groups of the smallest spec's
/// count (0.34: of the largest, when it is under 1.5 times the smallest).
void groupLayers(const ServingModel& m, ServingEstimate& e) {
    std::map<std::int64_t, std::pair<KvLayer, std::int64_t>> specs;
    for (std::int64_t i = e.firstLayer; i < e.firstLayer + e.stageLayers; ++i) {
        const KvLayer k = v1Spec(m.kv[static_cast<std::size_t>(i)], e.config.engineVersion);
        auto [it, added] = specs.try_emplace(specKey(k), k, 0);
        it->second.second += 1;
    }
    std::int64_t lo = e.stageLayers, hi = 0;
    for (const auto& [key, s] : specs) lo = std::min(lo, s.second), hi = std::max(hi, s.second);
    e.layersPerGroup = specs.size() == 1 ? hi : (e.config.engineVersion >= 34 && 2 * hi < 3 * lo ? hi : lo);
    e.groups.clear();
    for (const auto& [key, s] : specs)
        for (std::int64_t g = 0;
             g < static_cast<std::int64_t>(cdiv(static_cast<U>(s.second), static_cast<U>(e.layersPerGroup)));
             ++g)
            e.groups.push_back(s.first);
}

/// Blocks one request of `len` tokens takes: per group, cdiv(len, block) for full attention and
/// cdiv(min(window - 1 + max_num_batched_tokens, len), block) + 1 for a sliding window
/// (kv_cache_interface.py max_memory_usage_bytes).
U v1BlocksPerRequest(const ServingEstimate& e, std::int64_t len) {
    const U bs = static_cast<U>(e.config.blockSize);
    U n = 0;
    for (const KvLayer& g : e.groups) {
        if (g.kind != KvLayer::Kind::Sliding) {
            n += cdiv(static_cast<U>(len), bs);
            continue;
        }
        const std::int64_t inFlight =
            e.config.maxNumBatchedTokens * (e.config.engineVersion >= 34 ? e.pp : 1);
        n += cdiv(static_cast<U>(std::min(g.window - 1 + inFlight, len)), bs) + 1;
    }
    return n;
}

/// KV bytes one request of `len` tokens keeps in Hugging Face generate() at rest: DynamicCache's sliding
/// layers keep window - 1 tokens (DynamicSlidingWindowLayer), StaticCache's min(window, len)
/// (StaticSlidingWindowLayer); `transient` adds DynamicCache's torch.cat, which briefly holds one layer's old
/// and new keys and values (cache_utils.py DynamicLayer.update).
U hfRequestBytes(const ServingModel& m, const ServingEstimate& e, std::int64_t len, bool transient = true) {
    const bool staticCache = e.config.engine == ServingEngine::HfStatic;
    U bytes = 0, largestLayer = 0;
    for (std::int64_t i = e.firstLayer; i < e.firstLayer + e.stageLayers; ++i) {
        const KvLayer& k = m.kv[static_cast<std::size_t>(i)];
        const U per = kvBytesPerToken(m, e.config.kvCacheDtype, e.tp, i, 1); // MLA: the latent, as in vLLM
        bytes += per * static_cast<U>(serving::hfKeptTokens(k, len, staticCache));
        largestLayer = std::max(largestLayer, per * static_cast<U>(len));
    }
    return staticCache || !transient ? bytes : bytes + largestLayer;
}

/// The KV memory of one stage: what the engine reserves before the cache (docs/serving.md 2.1-2.4).
void reserve(const ServingModel& m, ServingEstimate& e, const GpuSpec& gpu, bool firstStage, bool lastStage) {
    const ServingConfig& c = e.config;
    e.totalBytes = gpu.memoryBytes;
    e.contextBytes = gpu.contextBytes + (e.tp > 1 ? ncclBytesPerCommunicator(e.tp) : 0);
    e.weightBytes = servingWeightBytes(m, c.quant, c.quantGroupSize, e.tp, e.firstLayer, e.stageLayers,
                                       firstStage, lastStage);
    if (c.engine == ServingEngine::VllmV0 && c.engineVersion <= 7) // 0.7's MLA absorbed matrices, per rank
        for (std::int64_t i = e.firstLayer; i < e.firstLayer + e.stageLayers; ++i)
            e.weightBytes += m.layerWeights[static_cast<std::size_t>(i)].mlaAbsorbed / static_cast<U>(e.tp) *
                             static_cast<U>(dtypeSize(m.dtype));
    e.activationBytes = c.activationBytes ? c.activationBytes : serving::profilePeak(m, c, e.tp, lastStage);
    e.nonTorchBytes = c.nonTorchBytes ? c.nonTorchBytes : serving::kNonTorchIncrease;
    const bool graphs = isV1(c) && c.engineVersion >= 20 && !c.enforceEager;
    e.cudaGraphBytes = graphs ? (c.cudaGraphBytes ? c.cudaGraphBytes : serving::kCudaGraphEstimate) : 0;
    const long double total = static_cast<long double>(e.totalBytes), f = *c.memoryFraction;
    e.requestedBytes = static_cast<U>(std::floor(total * f));
    const long double req = static_cast<long double>(e.requestedBytes);
    const long double w = static_cast<long double>(e.weightBytes),
                      act = static_cast<long double>(e.activationBytes);
    const long double nt = static_cast<long double>(e.nonTorchBytes),
                      cg = static_cast<long double>(e.cudaGraphBytes);
    long double avail = 0;
    if (c.engine == ServingEngine::Sglang) { // mem_fraction_static of the memory free before the weights
        e.nonTorchBytes = 0, e.activationBytes = 0;
        avail = f * (total - static_cast<long double>(e.contextBytes)) - w;
    } else if (c.engine == ServingEngine::Hf || c.engine == ServingEngine::HfStatic) {
        e.nonTorchBytes = kCublasKernelBytes;
        avail = req - static_cast<long double>(e.contextBytes) -
                static_cast<long double>(kCublasKernelBytes) - w - act;
    } else if (isV1(c) && c.engineVersion >= 34) { // extensible KV cache, sized after CUDA-graph capture
        const long double nonKv = w + nt + cg;
        e.marginBytes = std::max<U>(kGiB, static_cast<U>(0.75L * act));
        avail = std::min(req - nonKv, total - static_cast<long double>(e.contextBytes) - nonKv -
                                          static_cast<long double>(e.marginBytes)) -
                act;
    } else {
        avail = req - w - act - nt - cg;
    }
    if (c.kvCacheMemoryBytes && !isHfEngine(c)) avail = static_cast<long double>(c.kvCacheMemoryBytes);
    e.kvAvailableBytes = static_cast<std::int64_t>(std::clamp<long double>(avail, -0x1p62L, 0x1p62L));
    if (w > req || w > total - static_cast<long double>(e.contextBytes))
        e.failure = ServingEstimate::Failure::Weights;
    else if (e.kvAvailableBytes <= 0)
        e.failure = ServingEstimate::Failure::Profile;
}

/// Blocks, tokens and concurrency as the engine prints them.
void cut(const ServingModel& m, ServingEstimate& e) {
    const ServingConfig& c = e.config;
    const U avail = e.kvAvailableBytes > 0 ? static_cast<U>(e.kvAvailableBytes) : 0;
    const U bs = static_cast<U>(std::max<std::int64_t>(c.blockSize, 1)), len = static_cast<U>(c.maxModelLen);
    // V0's MLA cache rows are 640 wide for a 576 latent: its CPU-block count and KV size in vllm#13109 both
    // give 27 x 640 x 2 bytes per token (docs/serving.md 2.4).
    const std::int64_t mlaAlign = c.engine == ServingEngine::VllmV0 ? 128 : 1;
    e.bytesPerToken = kvBytesPerToken(m, c.kvCacheDtype, e.tp, e.firstLayer, e.stageLayers, mlaAlign);
    if (isV1(c)) {
        groupLayers(m, e);
        const U page = bs * kvBytesPerToken(m, c.kvCacheDtype, e.tp, e.firstLayer, 1);
        e.bytesPerBlock = page * static_cast<U>(e.layersPerGroup);
        e.blocks = static_cast<std::int64_t>(avail / std::max<U>(e.bytesPerBlock, 1));
        const U perRequest = v1BlocksPerRequest(e, c.maxModelLen);
        e.maxConcurrency = static_cast<double>(e.blocks) / static_cast<double>(std::max<U>(perRequest, 1));
        e.kvTokens = c.engineVersion >= 22
                         ? static_cast<std::int64_t>(e.maxConcurrency * static_cast<double>(len))
                         : e.blocks / static_cast<std::int64_t>(e.groups.size()) * c.blockSize;
        e.neededForOneRequest = e.bytesPerBlock * perRequest;
        const U usable = c.engineVersion >= 29 && avail > e.bytesPerBlock ? avail - e.bytesPerBlock : avail;
        if (e.failure == ServingEstimate::Failure::None && e.neededForOneRequest > usable)
            e.failure = ServingEstimate::Failure::KvTooSmall;
    } else if (c.engine == ServingEngine::VllmV0) { // one pool, every layer per block, sliding layers in full
        e.bytesPerBlock = bs * e.bytesPerToken;
        e.blocks = static_cast<std::int64_t>(avail / std::max<U>(e.bytesPerBlock, 1));
        e.kvTokens = e.blocks * c.blockSize;
        e.maxConcurrency = static_cast<double>(e.kvTokens) / static_cast<double>(len);
        e.neededForOneRequest = e.bytesPerBlock * cdiv(len, bs);
        if (e.failure == ServingEstimate::Failure::None && len > bs * static_cast<U>(e.blocks / e.pp))
            e.failure = ServingEstimate::Failure::KvTooSmall;
    } else if (c.engine == ServingEngine::Sglang) { // tokens of every layer, rounded to the page
        e.bytesPerBlock = e.bytesPerToken;
        e.blocks = static_cast<std::int64_t>(avail / std::max<U>(e.bytesPerToken, 1) / bs * bs);
        e.kvTokens = e.blocks;
        e.maxConcurrency = static_cast<double>(e.kvTokens) / static_cast<double>(len);
        e.neededForOneRequest = e.bytesPerToken * len;
        if (e.failure == ServingEstimate::Failure::None && static_cast<U>(e.kvTokens) < len)
            e.failure = ServingEstimate::Failure::KvTooSmall;
    } else { // Hugging Face: no pool; what fits is what the budget holds
        e.bytesPerBlock = e.bytesPerToken;
        e.kvTokens = static_cast<std::int64_t>(avail / std::max<U>(e.bytesPerToken, 1));
        e.neededForOneRequest = hfRequestBytes(m, e, c.maxModelLen);
        e.maxConcurrency =
            static_cast<double>(avail) / static_cast<double>(std::max<U>(e.neededForOneRequest, 1));
        if (e.failure == ServingEstimate::Failure::None && e.neededForOneRequest > avail)
            e.failure = ServingEstimate::Failure::KvTooSmall;
    }
}

} // namespace

Result<ServingEstimate> estimateServing(const ServingModel& m, const ServingConfig& config,
                                        const GpuSpec& gpu, std::int64_t tp, std::int64_t pp) {
    if (tp < 1 || pp < 1 || tp > 1024 || pp > 1024)
        return makeError("tensor and pipeline parallelism must be from 1 to 1024, got tp " +
                         std::to_string(tp) + ", pp " + std::to_string(pp));
    if (pp > static_cast<std::int64_t>(m.kv.size()))
        return makeError("pipeline parallelism " + std::to_string(pp) + " is more than the model's " +
                         std::to_string(m.kv.size()) + " layers");
    auto resolved = serving::resolveConfig(m, config, gpu, tp, pp);
    if (!resolved) return resolved.error();
    const std::vector<std::int64_t> stages = pipelineStageLayers(static_cast<std::int64_t>(m.kv.size()), pp);
    std::optional<ServingEstimate> worst;
    std::int64_t first = 0;
    for (std::size_t s = 0; s < stages.size(); ++s) {
        ServingEstimate e;
        e.config = *resolved, e.tp = tp, e.pp = pp, e.firstLayer = first, e.stageLayers = stages[s];
        reserve(m, e, gpu, s == 0, s + 1 == stages.size());
        cut(m, e);
        first += stages[s];
        // Every rank gets the fewest blocks of any rank (get_kv_cache_configs: min_num_blocks).
        if (!worst || e.failure > worst->failure ||
            (e.failure == worst->failure && e.maxConcurrency < worst->maxConcurrency))
            worst = e;
    }
    serving::describeFailure(m, *worst);
    return *worst;
}

std::int64_t maxConcurrentSequences(const ServingModel& m, const ServingEstimate& e, std::int64_t context) {
    if (context < 1 || e.kvAvailableBytes <= 0) return 0;
    std::int64_t n = 0;
    const U bs = static_cast<U>(std::max<std::int64_t>(e.config.blockSize, 1));
    if (isV1(e.config))
        n = static_cast<std::int64_t>(static_cast<U>(e.blocks) /
                                      std::max<U>(v1BlocksPerRequest(e, context), 1));
    else if (e.config.engine == ServingEngine::VllmV0)
        n = static_cast<std::int64_t>(static_cast<U>(e.blocks) / cdiv(static_cast<U>(context), bs));
    else if (e.config.engine == ServingEngine::Sglang)
        n = e.kvTokens / context;
    else
        n = static_cast<std::int64_t>(static_cast<U>(e.kvAvailableBytes) /
                                      std::max<U>(hfRequestBytes(m, e, context), 1));
    return e.config.maxNumSeqs > 0 ? std::min(n, e.config.maxNumSeqs) : n;
}

ServingCell servingCell(const ServingModel& m, const ServingEstimate& e, std::int64_t sequences,
                        std::int64_t context) {
    ServingCell cell;
    if (sequences < 1 || context < 1 || e.kvAvailableBytes <= 0) return cell;
    long double need = 0, have = 1;
    const U bs = static_cast<U>(std::max<std::int64_t>(e.config.blockSize, 1));
    if (isV1(e.config))
        need = static_cast<long double>(v1BlocksPerRequest(e, context)),
        have = static_cast<long double>(e.blocks);
    else if (e.config.engine == ServingEngine::VllmV0)
        need = static_cast<long double>(cdiv(static_cast<U>(context), bs)),
        have = static_cast<long double>(e.blocks);
    else if (e.config.engine == ServingEngine::Sglang)
        need = static_cast<long double>(context), have = static_cast<long double>(e.kvTokens);
    else
        need = static_cast<long double>(hfRequestBytes(m, e, context)),
        have = static_cast<long double>(e.kvAvailableBytes);
    need *= static_cast<long double>(sequences);
    cell.usedFraction = have > 0 ? static_cast<double>(need / have) : 0;
    cell.fits = have > 0 && need <= have && context <= e.config.maxModelLen;
    return cell;
}

std::vector<ServingPart> servingParts(const ServingEstimate& e) {
    using K = ServingPart::Kind;
    std::vector<ServingPart> parts{{K::Total, e.totalBytes},
                                   {K::Context, e.contextBytes},
                                   {K::Weights, e.weightBytes},
                                   {K::Activation, e.activationBytes},
                                   {K::NonTorch, e.nonTorchBytes}};
    if (e.cudaGraphBytes) parts.push_back({K::CudaGraphs, e.cudaGraphBytes});
    if (e.marginBytes) parts.push_back({K::Margin, e.marginBytes});
    parts.push_back({K::KvCache, static_cast<U>(std::max<std::int64_t>(e.kvAvailableBytes, 0))});
    parts.push_back({K::KvPerToken, e.bytesPerToken});
    return parts;
}

std::uint64_t servingKvEndBytes(const ServingEstimate& e) {
    return e.contextBytes + e.nonTorchBytes + e.weightBytes + e.activationBytes + e.marginBytes +
           e.cudaGraphBytes + static_cast<U>(std::max<std::int64_t>(e.kvAvailableBytes, 0));
}

std::uint64_t servingCacheBytes(const ServingModel& m, const ServingEstimate& e, std::int64_t sequences,
                                std::int64_t context) {
    if (sequences < 1 || context < 1) return 0;
    const long double n = static_cast<long double>(sequences);
    const U bs = static_cast<U>(std::max<std::int64_t>(e.config.blockSize, 1));
    long double bytes = 0; // long double: 2^31 sequences of 2^26 tokens would wrap a uint64
    if (isV1(e.config))
        bytes = n * static_cast<long double>(v1BlocksPerRequest(e, context)) *
                static_cast<long double>(e.bytesPerBlock);
    else if (e.config.engine == ServingEngine::VllmV0)
        bytes = n * static_cast<long double>(cdiv(static_cast<U>(context), bs)) *
                static_cast<long double>(e.bytesPerBlock);
    else if (e.config.engine == ServingEngine::Sglang)
        bytes = n * static_cast<long double>(context) * static_cast<long double>(e.bytesPerToken);
    else
        bytes = n * static_cast<long double>(hfRequestBytes(m, e, context, false));
    return static_cast<U>(std::min<long double>(bytes, 0x1p62L));
}

std::int64_t maxContextAt(const ServingModel& m, const ServingEstimate& e, std::int64_t sequences) {
    std::int64_t lo = 0, hi = e.config.maxModelLen; // fits(lo) holds (0 trivially); find the largest
    while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo + 1) / 2;
        if (servingCell(m, e, sequences, mid).fits)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

} // namespace batchfit
