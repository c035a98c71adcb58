// DeepSeek-V3 from its config.json: multi-head latent attention (core/src/ops/rules_mla.cpp), the sigmoid
// group router (rules_moe_router.cpp) and the import (core/src/import/hf_deepseek.cpp). Saved bytes and step
// peaks against transformers 5 on the CPU are checked by the "real: transformers" ctest
// (docs/accuracy-real.md); these tests pin the counts and the rules around them.
#include "batchfit/hf_import.h"
#include "test_util.h"

using namespace batchfit;
using namespace batchfit::test;

namespace {

// Parameter counts below are sum(p.numel() for p in model.parameters()) of transformers 5.24's
// DeepseekV3ForCausalLM built from the same config.
const char* kTiny = R"({"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 100,
    "max_position_embeddings": 64, "q_lora_rank": 32, "kv_lora_rank": 16, "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 4, "v_head_dim": 8, "n_routed_experts": 8, "n_group": 4, "topk_group": 2,
    "num_experts_per_tok": 2, "moe_intermediate_size": 16, "n_shared_experts": 1, "first_k_dense_replace": 1})";

std::string edited(const std::string& from, const std::string& to) {
    std::string text = kTiny;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

Model tiny(const std::string& text = kTiny, const std::string& attention = "flash") {
    HfImportOptions o;
    o.sequenceLength = 50;
    o.attention = attention;
    auto m = importHfConfig(text, "config.json", o);
    if (!m) FAIL(m.error().message);
    return *m;
}

std::string importError(const std::string& text) {
    auto m = importHfConfig(text, "config.json");
    REQUIRE_FALSE(m);
    return m.error().message;
}

} // namespace

TEST_CASE("DeepSeek-V3 configs give transformers' parameter counts", "[hf][deepseek]") {
    CHECK(estimator(hfModel("deepseek-v3.json", 64)).parameterCount() == 671026404352ull);
    CHECK(estimator(tiny()).parameterCount() == 81824);
    // q_lora_rank null: one q_proj instead of q_a_proj, q_a_layernorm and q_b_proj
    CHECK(estimator(tiny(edited(R"("q_lora_rank": 32)", R"("q_lora_rank": null)"))).parameterCount() ==
          80736);
}

TEST_CASE("DeepSeek's router weight stays fp32 in a bf16 model", "[hf][deepseek]") {
    TrainingConfig c;
    c.precision = Precision::PureBf16;
    const auto e = estimateAt(tiny(), 1, c);
    // one MoE layer: its router [8, 64] in fp32, every other parameter in bf16; e_score_correction_bias [8]
    // is an fp32 buffer
    CHECK(e.parameterBytes - e.bufferBytes == 2 * 81824ull + 2 * 8 * 64);
    CHECK(e.bufferBytes == 8 * 4);
}

TEST_CASE("latent attention: q, k and v of different head sizes never get the flash kernel", "[deepseek]") {
    // q and k heads are 12 wide, v heads 8: sdp_utils.cpp check_head_dim_size_flash refuses, so SDPA's
    // default on an H100 is the memory-efficient kernel (its logsumexp padded to 32 rows)
    TrainingConfig c;
    c.precision = Precision::PureBf16;
    const auto flash = estimateAt(tiny(kTiny, "flash"), 1, c);
    const auto memEfficient = estimateAt(tiny(kTiny, "mem_efficient"), 1, c);
    CHECK(flash.savedActivationBytes == memEfficient.savedActivationBytes);
    // the math fallback (what a CPU runs here) keeps the S x S probabilities and fp32 copies of q, k and v
    const auto math = estimateAt(tiny(kTiny, "math"), 1, c);
    const auto eager = estimateAt(tiny(kTiny, "eager"), 1, c);
    CHECK(math.savedActivationBytes > flash.savedActivationBytes);
    CHECK(eager.savedActivationBytes > flash.savedActivationBytes);
    // a Llama with one head size does get flash: the unpadded logsumexp saves less at 50 tokens
    HfImportOptions o;
    o.sequenceLength = 50;
    auto llama = importHfConfigFile(std::string(BATCHFIT_TEST_DATA) + "/hf/llama-3.2-3b.json", o);
    REQUIRE(llama);
    o.attention = "mem_efficient";
    auto llamaMem = importHfConfigFile(std::string(BATCHFIT_TEST_DATA) + "/hf/llama-3.2-3b.json", o);
    REQUIRE(llamaMem);
    CHECK(estimateAt(*llama, 1, c).savedActivationBytes < estimateAt(*llamaMem, 1, c).savedActivationBytes);
}

TEST_CASE("LoRA on DeepSeek: attention projections by name, the experts refused", "[hf][deepseek][lora]") {
    TrainingConfig c;
    c.lora.rank = 4;
    c.lora.targets = {"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"};
    // per layer r * (in + out): q_a 64+32, q_b 32+48, kv_a 64+20, kv_b 16+64, o 32+64
    CHECK(estimator(tiny(), c).trainableParameterCount() == 2 * 4 * (96 + 80 + 84 + 80 + 96));
    for (const char* t : {"gate_proj", "down_proj", "all-linear"}) {
        c.lora.targets = {t};
        auto e = Estimator::create(tiny(), c, 0);
        REQUIRE_FALSE(e);
        CHECK(e.error().message.find("on a mixture of experts: PEFT adapts the experts' own weights") !=
              std::string::npos);
    }
    // without q_lora_rank the query is one q_proj, which is a target
    c.lora.targets = {"q_proj"};
    const Model noQLora = tiny(edited(R"("q_lora_rank": 32)", R"("q_lora_rank": null)"));
    CHECK(estimator(noQLora, c).trainableParameterCount() == 2 * 4 * (64 + 48));
}

TEST_CASE("DeepSeek configs that cannot be routed are explained", "[hf][deepseek]") {
    CHECK(
        importError(edited(R"("n_group": 4)", R"("n_group": 3)")).find("$.n_group: 8 experts do not split") !=
        std::string::npos);
    CHECK(importError(edited(R"("topk_group": 2)", R"("topk_group": 5)")).find("$.n_group") !=
          std::string::npos);
    CHECK(importError(edited(R"("num_experts_per_tok": 2)", R"("num_experts_per_tok": 5)"))
              .find("$.num_experts_per_tok: 5 exceeds the experts of the topk_group kept groups") !=
          std::string::npos);
    CHECK(importError(edited(R"("n_routed_experts": 8)", R"("n_routed_experts": 4096)"))
              .find("$.n_routed_experts: 4096 experts is too many") != std::string::npos);
    CHECK(importError(edited(R"("kv_lora_rank": 16)", R"("kv_lora_rank": -1)"))
              .find("$.kv_lora_rank: expected a positive integer") != std::string::npos);
    // a mixture of experts BatchFit does not model is refused, naming the ones it does
    auto granite = importHfConfig(R"({"model_type": "granitemoe", "num_local_experts": 32})", "config.json");
    REQUIRE_FALSE(granite);
    CHECK(granite.error().message.find("'granitemoe' is a mixture of experts that BatchFit does not model") !=
          std::string::npos);
    CHECK(granite.error().message.find("deepseek_v2, deepseek_v3") != std::string::npos);
}

TEST_CASE("DeepSeek-V2: softmax routing, greedy or group-limited, and complex rotary embeddings",
          "[hf][deepseek]") {
    // transformers' counts: DeepSeek-V2-Lite, and the tiny V3 above as a V2 without q_lora_rank
    CHECK(estimator(hfModel("deepseek-v2-lite.json", 64)).parameterCount() == 15706484224ull);
    std::string v2 = edited(R"("model_type": "deepseek_v3")", R"("model_type": "deepseek_v2")");
    const auto at = v2.find(R"("q_lora_rank": 32)");
    v2.replace(at, 17, R"("q_lora_rank": null, "topk_method": "group_limited_greedy")");
    const Model grouped = tiny(v2);
    CHECK(estimator(grouped).parameterCount() == 80736);
    // group-limited routing keeps a max per group, the kept groups and a mask; greedy keeps only the scores
    std::string greedyText = v2;
    greedyText.replace(greedyText.find("group_limited_greedy"), 20, "greedy");
    const auto g = estimateAt(grouped, 1), greedy = estimateAt(tiny(greedyText), 1);
    // per token: max indices [4] int64, kept groups [2] int64, mask [8] bool = 56 bytes, 50 tokens
    CHECK(g.savedActivationBytes - greedy.savedActivationBytes == 50 * 56);
    // V2 never renormalises: fewer saved than V3's router on the same experts
    std::string bad = v2;
    bad.replace(bad.find("group_limited_greedy"), 20, "noaux_tc");
    CHECK(importError(bad).find("$.topk_method: expected \"greedy\" or \"group_limited_greedy\"") !=
          std::string::npos);
}
