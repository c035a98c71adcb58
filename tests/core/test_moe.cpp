// The sparse mixture-of-experts op (core/src/ops/rules_moe.cpp) against torch, and its Hugging Face import.
#include "batchfit/hf_import.h"
#include "batchfit/model_io.h"
#include "test_util.h"

using namespace batchfit;
using namespace batchfit::test;

namespace {

Model tinyMoe(const std::string& edit = "") {
    std::string text = readFile(std::string(BATCHFIT_TEST_DATA) + "/models/tiny-moe.json");
    if (!edit.empty()) {
        const std::string key = R"("names": "w1,w3,w2")";
        text.replace(text.find(key), key.size(), key + ", " + edit);
    }
    return parseOrFail(text);
}

std::string moeError(const std::string& edit) {
    auto e = Estimator::create(tinyMoe(edit), {}, 0);
    if (e) e->estimate(1);
    REQUIRE_FALSE(e);
    return e.error().message;
}

const char* kTinyQwenMoe = R"({"model_type": "qwen2_moe", "hidden_size": 64, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 100,
    "max_position_embeddings": 64, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 48, "decoder_sparse_step": 2, "mlp_only_layers": [3]})";

} // namespace

TEST_CASE("the moe op saves what torch's MixtralSparseMoeBlock saves", "[moe]") {
    // Measured with tests/torch/moe_saved.py (torch 1.13 and 2.6 give the same bytes; fp32 CPU,
    // saved_tensors_hooks, unique storages
    // without parameters): tests/data/torch/hand_models.py HfSparseMoe, hidden 64, 4 experts, top-2, expert
    // inner 128, seq 32, batch 2, routing forced to 32 tokens per expert ("balanced") or all tokens to
    // experts 0 and 1
    // ("worst": 64, 64, 0, 0).
    constexpr std::uint64_t kMeasuredNormalised = 398592;   // norm_topk_prob=True (Mixtral), either routing
    constexpr std::uint64_t kMeasuredUnnormalised = 397824; // norm_topk_prob=False (Qwen2-MoE's default)
    const auto balanced = estimateAt(tinyMoe(), 2);
    CHECK(balanced.parameterCount == 102720); // proj_in 4,160 + router 256 + 4 experts x 3 x 64 x 128
    CHECK(balanced.savedActivationBytes == kMeasuredNormalised);
    CHECK(estimateAt(tinyMoe(R"("load": "worst")"), 2).savedActivationBytes == kMeasuredNormalised);
    CHECK(estimateAt(tinyMoe(R"("norm_topk_prob": false)"), 2).savedActivationBytes == kMeasuredUnnormalised);
    // tokens per expert is an affine function of the batch
    CHECK(estimateAt(tinyMoe(), 4).savedActivationBytes == 2 * kMeasuredNormalised);
}

TEST_CASE("bad moe attributes are explained", "[moe][bad-input]") {
    CHECK(moeError(R"("load": "uneven")").find("load must be \"balanced\"") != std::string::npos);
    CHECK(moeError(R"("top_k": 5)").find("top_k = 5 exceeds experts = 4") != std::string::npos);
    CHECK(moeError(R"("experts": 5000)").find("too many") != std::string::npos);
    CHECK(moeError(R"("experts": 0)").find("'experts' must be a positive integer") != std::string::npos);
    CHECK(moeError(R"("names": "a,b")").find("names must list") != std::string::npos);
}

TEST_CASE("Hugging Face MoE configs import with shared experts and dense layers", "[hf][moe]") {
    HfImportOptions o;
    o.sequenceLength = 16;
    auto m = importHfConfig(kTinyQwenMoe, "config.json", o);
    REQUIRE(m);
    // decoder_sparse_step 2 and mlp_only_layers [3]: layer 1 is sparse, 0, 2 and 3 are dense MLPs
    const std::uint64_t d = 64, attn = 3 * (d * d + d) + d * d, norms = 2 * d;
    const std::uint64_t dense = 3 * d * 128, sparse = d * 4 + 4 * 3 * d * 32 + 3 * d * 48 + d;
    CHECK(estimator(*m).parameterCount() == 2 * 100 * d + d + 4 * (attn + norms) + 3 * dense + sparse);
    HfImportOptions worst = o;
    worst.moeLoad = "worst";
    REQUIRE(importHfConfig(kTinyQwenMoe, "config.json", worst));
    HfImportOptions bad = o;
    bad.moeLoad = "typical";
    auto b = importHfConfig(kTinyQwenMoe, "config.json", bad);
    REQUIRE_FALSE(b);
    CHECK(b.error().message.find("config.json: MoE load must be \"balanced\"") == 0);
    auto err = [&](const std::string& from, const std::string& to) {
        std::string text = kTinyQwenMoe;
        text.replace(text.find(from), from.size(), to);
        auto r = importHfConfig(text, "config.json", o);
        REQUIRE_FALSE(r);
        return r.error().message;
    };
    CHECK(err(R"("num_experts_per_tok": 2)", R"("num_experts_per_tok": 9)")
              .find("config.json: $.num_experts_per_tok: 9 exceeds the number of experts (4)") == 0);
    CHECK(err(R"("num_experts_per_tok": 2)", R"("num_experts_per_tok": 0)")
              .find("$.num_experts_per_tok: expected a positive integer") != std::string::npos);
    CHECK(err(R"("num_experts": 4)", R"("num_experts": 100000)")
              .find("$.num_experts: 100000 experts is too many") != std::string::npos);
    CHECK(err(R"("mlp_only_layers": [3])", R"("mlp_only_layers": ["x"])").find("$.mlp_only_layers[0]") !=
          std::string::npos);
    CHECK(err(R"("moe_intermediate_size": 32,)", "").find("$.moe_intermediate_size: missing") !=
          std::string::npos);
    auto granite = importHfConfig(R"({"model_type": "granitemoe", "num_local_experts": 32})", "config.json");
    REQUIRE_FALSE(granite);
    CHECK(granite.error().message.find("mixture of experts that BatchFit does not model") !=
          std::string::npos);
}

TEST_CASE("transformers 5's grouped_mm experts: the routing does not change the memory", "[hf][moe]") {
    // every (token, expert) pair goes through two grouped matmuls at once, however the router spreads them
    HfImportOptions o;
    o.sequenceLength = 512;
    const std::string path = std::string(BATCHFIT_TEST_DATA) + "/hf/mixtral-8x7b.json";
    auto balanced = importHfConfigFile(path, o);
    REQUIRE(balanced);
    o.moeLoad = "worst";
    auto worst = importHfConfigFile(path, o);
    REQUIRE(worst);
    const auto eb = estimateAt(*balanced, 1), ew = estimateAt(*worst, 1);
    CHECK(eb.savedActivationBytes == ew.savedActivationBytes);
    CHECK(ew.peakAllocatedBytes == eb.peakAllocatedBytes);
    // transformers 4's loop (--moe-impl loop): per expert torch.where pairs and index_add_ sources, more
    // saved
    o.moeImpl = "loop";
    auto loop = importHfConfigFile(path, o);
    REQUIRE(loop);
    CHECK(estimateAt(*loop, 1).savedActivationBytes > eb.savedActivationBytes);
    CHECK(estimator(*loop).parameterCount() == estimator(*balanced).parameterCount());
    o.moeImpl = "fused";
    auto bad = importHfConfigFile(path, o);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("MoE implementation must be \"grouped_mm\"") != std::string::npos);
}

TEST_CASE("the grouped_mm moe op saves what transformers 5's grouped_mm_experts_forward saves", "[moe]") {
    // 16 tokens of width 32, 4 experts, top 2, intermediate 8: N = 32 routed rows (measured layouts:
    // rules_moe_grouped.cpp; the real models in docs/accuracy-real.md)
    const Model m = parseOrFail(R"({"format": "batchfit-model", "version": 1, "name": "grouped",
        "input": {"shape": [16, 32], "dtype": "float32"},
        "layers": [{"name": "in", "op": "linear", "out_features": 32},
                   {"name": "mlp", "op": "moe", "experts": 4, "top_k": 2, "intermediate": 8,
                    "norm_topk_prob": false, "impl": "grouped_mm"}]})");
    const std::uint64_t n = 32, linear = 16 * 32 * 4, x = 16 * 32 * 4, router = 16 * 4 * 4 + 16 * 2 * 8;
    const std::uint64_t grouped = 3 * n * 8 + n * 32 * 4 + n * 16 * 4 + 2 * n * 8 * 4 + n * 32 * 4 + n * 4;
    const std::uint64_t offsets = 4 * 4; // int32 [experts], once for the batch
    CHECK(estimateAt(m, 1).savedActivationBytes == linear + x + router + grouped + offsets);
    CHECK(estimateAt(m, 2).savedActivationBytes == 2 * (linear + x + router + grouped) + offsets);
    // the fused 3D weights: gate_up_proj [4, 16, 32] and down_proj [4, 32, 8], as many as three per expert
    CHECK(estimateAt(m, 1).parameterCount == 32 * 32 + 32 + 4 * 32 + 4 * 16 * 32 + 4 * 32 * 8);
}

TEST_CASE("a mixture of experts with dense and sparse runs of layers saves and loads back", "[hf][moe]") {
    // decoder_sparse_step 2: layers alternate dense and sparse, each run a "layers" block with its
    // first_index; the file must load again (found by fuzzing: "duplicate name 'layers' among siblings")
    std::string text = readFile(std::string(BATCHFIT_TEST_DATA) + "/hf/qwen3-30b-a3b.json");
    const auto at = text.find("\"decoder_sparse_step\": 1");
    REQUIRE(at != std::string::npos);
    text.replace(at, 24, "\"decoder_sparse_step\": 2");
    HfImportOptions o;
    o.sequenceLength = 128;
    auto m = importHfConfig(text, "config.json", o);
    REQUIRE(m);
    CHECK(m->layers.size() > 4); // embed_tokens, 48 single-layer runs, norm, lm_head, loss
    auto back = parseModel(serializeModel(*m), "saved.json");
    REQUIRE(back);
    CHECK(*back == *m);
    // overlapping runs of one name stay an error
    auto twice = *m;
    for (auto& l : twice.layers)
        if (l.name == "layers" && l.firstIndex == 1) l.firstIndex = 0;
    auto bad = parseModel(serializeModel(twice), "twice.json");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("duplicate name 'layers'") != std::string::npos);
}
