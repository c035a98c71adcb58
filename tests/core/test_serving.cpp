// Serving (issue 27): the model a config gives, the KV cache per token, the engines' arithmetic
// (docs/serving.md). Measured checks are in tools/measure_kv_cache.py and tools/serving_accuracy.py.
#include "batchfit/estimator.h"
#include "batchfit/hf_import.h"
#include "batchfit/serving.h"
#include "batchfit/serving_plan.h"
#include "test_util.h"

#include <algorithm>

using namespace batchfit;
using namespace batchfit::test;

namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

std::string dataFile(const std::string& rel) {
    return std::string(BATCHFIT_TEST_DATA) + "/" + rel;
}

ServingModel served(const std::string& rel) {
    auto m = readServingModelFile(dataFile(rel));
    INFO(rel << ": " << (m ? std::string() : m.error().message));
    REQUIRE(m);
    return *m;
}

GpuSpec gpu(const std::string& id) {
    auto g = findGpu(id);
    REQUIRE(g);
    return *g;
}

ServingEstimate estimate(const ServingModel& m, const ServingConfig& c, const GpuSpec& g, std::int64_t tp = 1,
                         std::int64_t pp = 1) {
    auto e = estimateServing(m, c, g, tp, pp);
    INFO((e ? std::string() : e.error().message));
    REQUIRE(e);
    return *e;
}

} // namespace

TEST_CASE("serve: parameters equal the training import's, which torch counted", "[serve]") {
    for (const char* f :
         {"llama-3-8b.json", "llama-2-7b.json", "llama-2-70b.json", "llama-3.2-3b.json", "qwen2-0.5b.json",
          "qwen3-8b.json", "qwen3-0.6b.json", "mistral-7b.json", "gemma-2-2b.json", "gemma-3-1b-it.json",
          "gemma-2b.json", "phi-3-mini-4k.json", "phi-4.json", "mixtral-8x7b.json", "qwen3-30b-a3b.json",
          "qwen1.5-moe-a2.7b.json"}) {
        INFO(f);
        auto imported =
            importHfConfigFile(dataFile(std::string("hf/") + f), HfImportOptions{128, {}, "balanced"});
        REQUIRE(imported);
        auto est = Estimator::create(*imported, TrainingConfig{});
        REQUIRE(est);
        CHECK(served(std::string("hf/") + f).parameterCount() == est->parameterCount());
    }
    // DeepSeek-V2-Lite (MLA, 64 routed + 2 shared experts, the first layer dense): 15.7 B on its model card.
    CHECK(served("serving/configs/deepseek-v2-lite.json").parameterCount() == 15706484224ull);
}

TEST_CASE("serve: KV bytes per token follow the attention: GQA, MLA, fp8, tensor parallelism", "[serve]") {
    const ServingModel llama = served("hf/llama-3-8b.json");
    CHECK(kvBytesPerToken(llama, KvCacheDtype::Auto, 1, 0, 32) == 32ull * 2 * 8 * 128 * 2); // 131,072
    CHECK(kvBytesPerToken(llama, KvCacheDtype::Fp8, 1, 0, 32) == 65536);
    CHECK(kvBytesPerToken(llama, KvCacheDtype::Auto, 2, 0, 32) == 65536);
    // 8 KV heads over 16 ranks: each keeps one (get_num_kv_heads replicates), so no smaller than at 8.
    CHECK(kvBytesPerToken(llama, KvCacheDtype::Auto, 16, 0, 32) ==
          kvBytesPerToken(llama, KvCacheDtype::Auto, 8, 0, 32));
    const ServingModel ds = served("serving/configs/deepseek-v2-lite.json");
    CHECK(kvBytesPerToken(ds, KvCacheDtype::Auto, 1, 0, 27) == 27ull * 576 * 2); // one latent of 512 + 64
    CHECK(kvBytesPerToken(ds, KvCacheDtype::Auto, 4, 0, 27) == 27ull * 576 * 2); // not split over ranks
    CHECK(kvBytesPerToken(ds, KvCacheDtype::Auto, 1, 0, 27, 128) == 27ull * 640 * 2); // V0's rows
    CHECK(served("hf/qwen3-8b.json").kv.size() == 36);
}

TEST_CASE("serve: sliding layers as each family's config lays them out", "[serve]") {
    auto kinds = [](const ServingModel& m) {
        std::string s;
        for (const KvLayer& k : m.kv) s += k.kind == KvLayer::Kind::Sliding ? 's' : 'F';
        return s;
    };
    CHECK(kinds(served("hf/gemma-3-1b-it.json")) == "sssssFsssssFsssssFsssssFss"); // one global in six
    CHECK(kinds(served("hf/gemma-2-2b.json")) == "sFsFsFsFsFsFsFsFsFsFsFsFsF");    // alternating, from 0
    CHECK(kinds(served("hf/mistral-7b.json")) == std::string(32, 's'));
    CHECK(kinds(served("hf/qwen3-8b.json")) == std::string(36, 'F')); // use_sliding_window false
    CHECK(served("hf/gemma-3-1b-it.json").kv[0].window == 512);
}

TEST_CASE("serve: vLLM V0 arithmetic reproduces a published start-up log", "[serve]") {
    // vllm#10517: Llama-3.1-8B on an RTX 3090 (23.58 GiB), utilization 0.9, max_model_len 20000, the log's
    // activation 2.07 and non-torch 0.35 GiB: 1952 blocks, 1.56x.
    const ServingModel m = served("serving/configs/llama-3.1-8b.json");
    ServingConfig c;
    c.engine = ServingEngine::VllmV0;
    c.memoryFraction = 0.9;
    c.maxModelLen = 20000;
    c.activationBytes = static_cast<std::uint64_t>((17.06 - 14.9888) * kGiB);
    c.nonTorchBytes = static_cast<std::uint64_t>(0.35 * kGiB);
    const auto e = estimate(m, c, customGpu(23.58));
    CHECK(std::abs(static_cast<double>(e.weightBytes) / kGiB - 14.9888) < 0.001);
    CHECK(e.blocks >= 1951);
    CHECK(e.blocks <= 1953);
    CHECK(e.kvTokens == e.blocks * 16);
    CHECK(std::abs(e.maxConcurrency - 1.56) < 0.01);
    CHECK(e.failure == ServingEstimate::Failure::None);
    // At 29,000 tokens the same GPU holds fewer than one request: V0 refuses to start, in its words.
    c.maxModelLen = 29000;
    c.activationBytes = static_cast<std::uint64_t>((17.98 - 14.9888) * kGiB);
    const auto f = estimate(m, c, customGpu(23.58));
    CHECK(f.failure == ServingEstimate::Failure::KvTooSmall);
    CHECK(f.message.find("is larger than the maximum number of tokens that can be stored in KV cache") !=
          std::string::npos);
}

TEST_CASE("serve: vLLM V1 groups sliding and full layers and prints tokens by its version", "[serve]") {
    const ServingModel m = served("hf/gemma-3-1b-it.json");
    ServingConfig c;
    c.engine = ServingEngine::Vllm;
    c.engineVersion = 22;
    c.maxModelLen = 32768;
    c.kvCacheMemoryBytes = 8 * kGiB;
    const auto e = estimate(m, c, gpu("rtx-4090"));
    // 22 sliding and 4 full layers: groups of 4, one full group and cdiv(22, 4) = 6 sliding groups.
    CHECK(e.layersPerGroup == 4);
    CHECK(e.groups.size() == 7);
    CHECK(e.bytesPerBlock == 4ull * 16 * 2 * 1 * 256 * 2);
    CHECK(e.blocks == static_cast<std::int64_t>(8 * kGiB / e.bytesPerBlock));
    // One request: 2048 blocks for the full group, cdiv(min(511 + 2048, 32768), 16) + 1 = 161 per sliding
    // group.
    CHECK(e.neededForOneRequest == e.bytesPerBlock * (2048 + 6 * 161));
    CHECK(e.kvTokens == static_cast<std::int64_t>(e.maxConcurrency * 32768));
    // Before 0.10 every layer keeps every token: one group of 26, far fewer sequences.
    c.engineVersion = 9;
    const auto old = estimate(m, c, gpu("rtx-4090"));
    CHECK(old.groups.size() == 1);
    CHECK(old.kvTokens == old.blocks * 16);
    CHECK(old.maxConcurrency * 4 < e.maxConcurrency);
}

TEST_CASE("serve: pipeline stages as get_pp_indices cuts them; the fewest blocks win", "[serve]") {
    CHECK(pipelineStageLayers(61, 4) == std::vector<std::int64_t>{15, 15, 16, 15});
    CHECK(pipelineStageLayers(27, 2) == std::vector<std::int64_t>{14, 13});
    CHECK(pipelineStageLayers(32, 1) == std::vector<std::int64_t>{32});
    const ServingModel m = served("serving/configs/deepseek-v2-lite.json");
    ServingConfig c;
    c.engineVersion = 9;
    c.maxModelLen = 1024;
    c.kvCacheMemoryBytes = static_cast<std::uint64_t>(12.13 * kGiB);
    const auto e = estimate(m, c, gpu("l4"), 2, 2);
    CHECK(e.stageLayers == 14); // the first stage: more layers, fewer blocks
    CHECK(e.firstLayer == 0);
    CHECK(e.kvTokens == e.blocks * 16);
    CHECK(std::abs(static_cast<double>(e.kvTokens) / 807792.0 - 1) < 0.001); // vllm#20665 printed 807,792
}

TEST_CASE("serve: what fails first, in the engine's words", "[serve]") {
    const ServingModel big = served("serving/configs/llama-3.1-70b.json");
    const auto w = estimate(big, ServingConfig{}, gpu("rtx-4090"));
    CHECK(w.failure == ServingEstimate::Failure::Weights);
    CHECK(w.message.find("the weights alone") != std::string::npos);
    const ServingModel m = served("serving/configs/llama-3.1-8b.json");
    ServingConfig c;
    c.engineVersion = 11;
    const auto k = estimate(m, c, gpu("rtx-4090")); // 131,072 tokens of 128 KiB: 16 GiB for one request
    CHECK(k.failure == ServingEstimate::Failure::KvTooSmall);
    CHECK(k.message.find("To serve at least one request with the model's max seq len (131072)") !=
          std::string::npos);
    const std::int64_t longest = maxContextAt(m, k, 1);
    CHECK(longest > 0);
    CHECK(k.message.find("estimated maximum model length is " + std::to_string(longest)) !=
          std::string::npos);
    c.maxModelLen = longest;
    CHECK(estimate(m, c, gpu("rtx-4090")).failure == ServingEstimate::Failure::None);
    c.engine = ServingEngine::Sglang;
    c.memoryFraction = 0.63; // within the engine's share, but not beside the CUDA context
    c.maxModelLen = 8192;
    const auto s = estimate(m, c, gpu("rtx-4090"));
    CHECK(s.failure == ServingEstimate::Failure::Profile);
    CHECK(s.message == "Not enough memory. Please try to increase --mem-fraction-static.");
}

TEST_CASE("serve: the largest concurrency fits and one more does not, on every engine", "[serve]") {
    const ServingModel m = served("hf/qwen3-8b.json");
    for (ServingEngine engine : allServingEngines()) {
        ServingConfig c;
        c.engine = engine;
        c.maxModelLen = 8192;
        const auto e = estimate(m, c, gpu("h100-80gb"));
        INFO(servingEngineName(engine));
        for (std::int64_t context : {512, 4096, 8192}) {
            const std::int64_t n = maxConcurrentSequences(m, e, context);
            REQUIRE(n > 0);
            CHECK(servingCell(m, e, n, context).fits);
            if (n != e.config.maxNumSeqs)
                CHECK_FALSE(servingCell(m, e, n + 1, context).fits); // else: the cap
            const std::int64_t len = maxContextAt(m, e, n);
            CHECK(len >= context);
            CHECK(servingCell(m, e, n, len).fits);
            if (len < c.maxModelLen) CHECK_FALSE(servingCell(m, e, n, len + 1).fits);
        }
        CHECK(servingCacheBytes(m, e, 2, 4096) >= 2 * 4096 * e.bytesPerToken);
    }
}

TEST_CASE("serve: weights as each quantization stores them", "[serve]") {
    const ServingModel m = served("serving/configs/llama-3.1-8b.json");
    const auto bytes = [&](WeightQuant q) { return servingWeightBytes(m, q, 128, 1, 0, 32, true, true); };
    const std::uint64_t none = bytes(WeightQuant::None), fp8 = bytes(WeightQuant::Fp8),
                        awq = bytes(WeightQuant::Awq);
    const std::uint64_t gptq = bytes(WeightQuant::Gptq), nf4 = bytes(WeightQuant::Nf4);
    CHECK(none > fp8);
    CHECK(fp8 > awq);
    CHECK(gptq > awq); // g_idx
    CHECK(nf4 > awq);  // fp32 absmax per 64 against fp16 scales per 128
    // Embeddings, the head and norms stay bf16: 2 x 128256 x 4096 x 2 bytes are in every figure.
    CHECK(awq > 2ull * 128256 * 4096 * 2);
    // The w8a8 70B checkpoint: 67.72 GiB in vllm#12569's log.
    const ServingModel w8 = served("serving/configs/llama-3.1-70b-w8a8.json");
    CHECK(w8.quant == WeightQuant::Int8);
    CHECK(std::abs(static_cast<double>(servingWeightBytes(w8, WeightQuant::Auto, 128, 1, 0, 80, true, true)) /
                       kGiB -
                   67.7229) < 0.01);
}

TEST_CASE("serve: hostile configs get a message naming the file and the key", "[serve]") {
    auto bad = [](const std::string& text) {
        auto m = readServingModel(text, "cfg.json");
        REQUIRE_FALSE(m);
        return m.error().message;
    };
    CHECK(bad("{").find("cfg.json: not valid JSON") != std::string::npos);
    CHECK(bad("[]").find("expected a JSON object") != std::string::npos);
    CHECK(bad(R"({"model_type": "bert"})").find("'bert' is not a decoder BatchFit serves") !=
          std::string::npos);
    const std::string llama = R"("model_type": "llama", "num_attention_heads": 8, "vocab_size": 1000,
        "intermediate_size": 64, "num_hidden_layers": 2)";
    CHECK(bad("{" + llama + R"(, "hidden_size": 1099511627776})")
              .find("$.hidden_size: 1099511627776 is too large") != std::string::npos);
    CHECK(bad("{" + llama + R"(, "hidden_size": 64, "layer_types": ["full_attention"]})")
              .find("$.layer_types: expected 2 entries") != std::string::npos);
    CHECK(bad("{" + llama + R"(, "hidden_size": -5})").find("$.hidden_size: expected a positive integer") !=
          std::string::npos);
    CHECK(
        bad(R"({"model_type": "qwen3_moe", "hidden_size": 1048576, "num_attention_heads": 8, "vocab_size": 1000,
        "num_hidden_layers": 100000, "num_experts": 65536, "num_experts_per_tok": 8,
        "moe_intermediate_size": 4194304})")
            .find("too large") != std::string::npos);
    // Absurd serving settings are refused, not wrapped.
    const ServingModel m = served("hf/llama-3-8b.json");
    ServingConfig c;
    c.maxModelLen = 1 << 20;
    CHECK_FALSE(estimateServing(m, c, gpu("h100-80gb")));
    CHECK_FALSE(estimateServing(m, ServingConfig{}, gpu("h100-80gb"), 100000, 1));
    CHECK_FALSE(estimateServing(m, ServingConfig{}, gpu("h100-80gb"), 1, 33));
    const auto e = estimate(m, ServingConfig{}, gpu("h100-80gb"));
    CHECK(servingCell(m, e, std::int64_t{1} << 31, 8192).usedFraction > 1);
}

TEST_CASE("serve: the concurrency x context map agrees with the single answers", "[serve]") {
    const ServingModel m = served("hf/qwen3-8b.json");
    ServingConfig c;
    c.maxModelLen = 16384;
    const auto e = estimate(m, c, gpu("l40s"));
    const auto contexts = servingAxis(16384), sequences = servingAxis(512);
    CHECK(contexts.front() == 1);
    CHECK(contexts.back() == 16384);
    CHECK(servingAxis(300).back() == 300);
    auto map = servingFitMap(m, e, contexts, sequences);
    REQUIRE(map);
    for (std::size_t r = 0; r < contexts.size(); ++r) {
        const std::int64_t most = maxConcurrentSequences(m, e, contexts[r]);
        for (std::size_t k = 0; k < sequences.size(); ++k) {
            INFO(contexts[r] << " x " << sequences[k]);
            CHECK(map->at(r, k).fits == servingCell(m, e, sequences[k], contexts[r]).fits);
            if (sequences[k] <= most) CHECK(map->at(r, k).fits);
        }
    }
    CHECK_FALSE(servingFitMap(m, e, {}, sequences));
    CHECK_FALSE(servingFitMap(m, e, {0}, sequences));
    CHECK_FALSE(servingFitMap(m, e, std::vector<std::int64_t>(kMaxServingMapAxis + 1, 1), sequences));
}

TEST_CASE("serve: each lever, applied, gives the answer it promised", "[serve]") {
    const ServingModel m = served("serving/configs/llama-3.1-8b.json");
    ServingConfig c;
    c.maxModelLen = 32768;
    const auto levers = servingLevers(m, c, gpu("rtx-4090"), 1, 1, 8192);
    std::vector<std::string> ids;
    for (const ServingLever& l : levers) ids.push_back(l.id);
    CHECK(std::find(ids.begin(), ids.end(), "kv-fp8") != ids.end());
    CHECK(std::find(ids.begin(), ids.end(), "tp") != ids.end());
    CHECK(std::find(ids.begin(), ids.end(), "awq") != ids.end());
    const auto now = estimate(m, c, gpu("rtx-4090"));
    const std::int64_t before = maxConcurrentSequences(m, now, 8192);
    for (std::size_t i = 0; i < levers.size(); ++i) {
        const ServingLever& l = levers[i];
        INFO(l.title);
        const auto applied = estimate(m, l.config, gpu("rtx-4090"), l.tp, l.pp);
        CHECK(maxConcurrentSequences(m, applied, 8192) == l.sequencesAtContext);
        if (i > 0) CHECK(levers[i - 1].sequencesAtContext >= l.sequencesAtContext); // best first
        if (l.id == "kv-fp8" || l.id == "awq" || l.id == "tp") CHECK(l.sequencesAtContext > before);
    }
    // A lever already taken is not offered again.
    c.kvCacheDtype = KvCacheDtype::Fp8;
    for (const ServingLever& l : servingLevers(m, c, gpu("rtx-4090"), 1, 1, 8192)) CHECK(l.id != "kv-fp8");
}

TEST_CASE("serve: generate()'s DynamicCache through the caching allocator leaves a reserve past the cache",
          "[serve]") {
    const ServingModel m = served("hf/llama-3-8b.json");
    ServingConfig c;
    c.engine = ServingEngine::Hf;
    c.maxModelLen = 4096;
    const auto e = estimate(m, c, gpu("h100-80gb"));
    auto r = replayHfGenerate(m, e, 8, 2049, 2048);
    REQUIRE(r);
    // The cache at the end is what the analytic model holds for 8 x 4096 tokens.
    CHECK(r->cacheBytes == servingCacheBytes(m, e, 8, 4096));
    const AllocatorStats& s = r->result.stats;
    CHECK(s.peakAllocatedBytes >= e.weightBytes + r->cacheBytes);
    // Each torch.cat asks for a block one token longer than any freed one: the reserve grows past it.
    CHECK(s.peakReservedBytes > s.peakAllocatedBytes + (1ull << 30));
    CHECK(r->events == 1 + 1 + 2 * 32 + 1 + 2047 * 32 * 4);
    CHECK_FALSE(r->result.oom);
    // Far too many sequences for the GPU: the replay fails with PyTorch's message.
    auto big = replayHfGenerate(m, e, 400, 2049, 64); // 400 x 2112 tokens x 128 KiB: 103 GiB
    REQUIRE(big);
    REQUIRE(big->result.oom);
    CHECK(big->result.oom->message.find("CUDA out of memory") != std::string::npos);
    CHECK_FALSE(replayHfGenerate(m, e, 0, 10, 10));
    CHECK_FALSE(replayHfGenerate(m, e, 1, 10, kMaxReplayedSteps + 1));
}

TEST_CASE("serve: vLLM 0.7's MLA keeps absorbed matrices; kept attention stays bf16 under AWQ", "[serve]") {
    const ServingModel awq = served("serving/configs/deepseek-coder-v2-lite-awq.json");
    REQUIRE(awq.layerWeights[0].attentionKept);
    ServingModel quantizedAttention = awq;
    for (LayerWeights& w : quantizedAttention.layerWeights) w.attentionKept = false;
    const std::uint64_t kept = servingWeightBytes(awq, WeightQuant::Auto, 128, 1, 0, 27, true, true);
    const std::uint64_t all = servingWeightBytes(quantizedAttention, WeightQuant::Auto, 128, 1, 0, 27, true, true);
    CHECK(kept > all + 500ull * (1 << 20)); // 13.8 M attention weights a layer at 2 bytes, not 0.52
    ServingConfig c;
    c.engine = ServingEngine::VllmV0;
    c.engineVersion = 7;
    c.maxModelLen = 163840;
    const auto old = estimate(awq, c, gpu("h100-80gb"));
    c.engineVersion = 10;
    const auto later = estimate(awq, c, gpu("h100-80gb"));
    // W_QR, W_Q_UK and W_UV_O: (2048 x 16 x (64 + 512) + 16 x 512 x 2048) x 2 bytes x 27 layers
    CHECK(old.weightBytes - later.weightBytes == 27ull * (2048 * 16 * 576 + 16 * 512 * 2048) * 2);
    // vllm#13109 printed 10.45 GiB of weights and 116,023 blocks
    c.engineVersion = 7;
    c.memoryFraction = 0.9;
    c.activationBytes = static_cast<std::uint64_t>(0.94 * kGiB);
    c.nonTorchBytes = static_cast<std::uint64_t>(0.16 * kGiB);
    const auto row = estimate(awq, c, customGpu(79.22));
    CHECK(std::abs(static_cast<double>(row.weightBytes) / kGiB - 10.45) < 0.1);
    CHECK(std::abs(static_cast<double>(row.blocks) / 116023.0 - 1) < 0.01);
}
