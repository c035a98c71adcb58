#include "batchfit/checked.h"
#include "batchfit/hf_import.h"
#include "test_util.h"

#include <limits>
#include <nlohmann/json.hpp>

using namespace batchfit;
using namespace batchfit::test;

namespace {

std::string createError(const std::string& json) {
    auto m = parseModel(json, "bad.json");
    if (!m) return m.error().message;
    auto e = Estimator::create(*m, TrainingConfig{}, 0);
    REQUIRE_FALSE(e);
    return e.error().message;
}

} // namespace

TEST_CASE("shape errors name the layer path and the shapes", "[bad-input]") {
    const std::string json = R"({"format":"batchfit-model","version":1,"name":"t","input":{"shape":[3,32,32]},
      "layers":[{"name":"layer2","repeat":2,"layers":[{"name":"conv3","op":"conv2d","out_channels":8,"kernel":3}]},
                {"name":"flat","op":"flatten"},
                {"name":"again","op":"conv2d","out_channels":4,"kernel":1}]})";
    const std::string msg = createError(json);
    CHECK(msg.find("again: conv2d expects [C,H,W], got [") == 0);
    const std::string json2 = R"({"format":"batchfit-model","version":1,"name":"t","input":{"shape":[3,6,6]},
      "layers":[{"name":"layer2","repeat":3,"first_index":1,"layers":[{"name":"conv3","op":"conv2d","out_channels":8,"kernel":3}]}]})";
    CHECK(createError(json2).find("layer2[3].conv3: conv2d: input [8,2,2] is too small") == 0);
}

TEST_CASE("unknown ops and bad attributes are explained", "[bad-input]") {
    CHECK(createError(oneLayer("[4]", "float32", R"({"name":"x","op":"frobnicate"})"))
              .find("x: unknown op 'frobnicate'") == 0);
    CHECK(createError(oneLayer("[4]", "float32", R"({"name":"fc","op":"linear"})"))
              .find("missing attribute 'out_features'") != std::string::npos);
    CHECK(createError(oneLayer("[4]", "float32", R"({"name":"fc","op":"linear","out_features":-3})"))
              .find("must be a positive integer") != std::string::npos);
    CHECK(createError(oneLayer("[4]", "float32",
                               R"({"name":"e","op":"embedding","num_embeddings":10,"embedding_dim":4})"))
              .find("expects integer token ids") != std::string::npos);
    CHECK(
        createError(oneLayer("[4]", "float32", R"({"name":"d","op":"dropout","p":1.5})")).find("dropout p") !=
        std::string::npos);
    CHECK(createError(oneLayer("[4]", "float32", R"({"name":"a","op":"add","inputs":["nowhere","@input"]})"))
              .find("input 'nowhere' names no earlier layer") != std::string::npos);
}

TEST_CASE("absurd sizes: 10^15 parameters are counted exactly, beyond that is 'too large'",
          "[bad-input][overflow]") {
    // 10^8 x 10^7 linear = 10^15 weights (+10^7 bias).
    Model big = parseOrFail(
        oneLayer("[100000000]", "float32", R"({"name":"fc","op":"linear","out_features":10000000})", true));
    auto est = Estimator::create(big, TrainingConfig{}, 0);
    REQUIRE(est);
    CHECK(est->parameterCount() == 1000000000000000ull + 10000000ull);
    auto e = est->estimate(1);
    REQUIRE(e);
    CHECK(e->parameterBytes == 4 * (1000000000000000ull + 10000000ull));
    CHECK(est->maxBatch(80ull << 30).largest == 0);
    // 10^18 weights cannot be counted in bytes without overflow past 2^62: a clear error.
    Model huge = parseOrFail(oneLayer("[1000000000]", "float32",
                                      R"({"name":"fc","op":"linear","out_features":1000000000})", true));
    auto bad = Estimator::create(huge, TrainingConfig{}, 0);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("too large") != std::string::npos);
}

TEST_CASE("batch 2^31 either estimates without wrapping or says too large", "[bad-input][overflow]") {
    Model small =
        parseOrFail(oneLayer("[16]", "float32", R"({"name":"fc","op":"linear","out_features":4})", true));
    Estimator est = estimator(small);
    auto e = est.estimate(kMaxBatch);
    REQUIRE(e);
    auto e1 = est.estimate(kMaxBatch / 2);
    REQUIRE(e1);
    CHECK(e->peakAllocatedBytes > e1->peakAllocatedBytes);
    CHECK(e->peakAllocatedBytes >= *est.peakAllocatedBytes(kMaxBatch - 1));
    CHECK(e->peakAllocatedBytes > (std::uint64_t{1} << 31) * 16 * 4); // at least the input batch
    CHECK_FALSE(est.estimate(kMaxBatch + 1));
    CHECK_FALSE(est.estimate(0));
    CHECK_FALSE(est.estimate(-5));

    // A sequence of 2^24 with eager attention: S^2 scores overflow at a large batch, never wrap.
    Model seq = parseOrFail(oneLayer("[16777216,64]", "float32",
                                     R"({"name":"attn","op":"attention","heads":8,"impl":"eager"})", true));
    auto se = Estimator::create(seq, TrainingConfig{}, 0);
    if (se) {
        auto r = se->estimate(kMaxBatch);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("too large") != std::string::npos);
        CHECK(se->maxBatch(80ull << 30).largest == 0);
    } else {
        CHECK(se.error().message.find("too large") != std::string::npos);
    }
}

TEST_CASE(
    "10^15 parameters in an embedding: a number at batch 1 and at batch 2^31, 'too large' past 2^62 bytes",
    "[bad-input][overflow]") {
    // 10^9 rows x 10^6 dims = 10^15 weights; the gradient and Adam's two states are 4 x 10^15 elements more.
    Model emb = parseOrFail(oneLayer(
        "[8]", "int64",
        R"({"name":"e","op":"embedding","num_embeddings":1000000000,"embedding_dim":1000000})", true));
    TrainingConfig adam;
    adam.optimizer = OptimizerKind::Adam;
    auto est = Estimator::create(emb, adam, 0);
    REQUIRE(est);
    CHECK(est->parameterCount() == 1000000000000000ull);
    auto e1 = est->estimate(1);
    REQUIRE(e1);
    CHECK(e1->parameterBytes == 4000000000000000ull);
    CHECK(e1->peakAllocatedBytes >= 4 * e1->parameterBytes); // weights, gradients, exp_avg, exp_avg_sq
    // At 2^31 the activations are 2^31 x 8 x 10^6 x 4 bytes (~6.9e16): still below 2^62, so a number that
    // grew.
    auto big = est->estimate(kMaxBatch);
    REQUIRE(big);
    CHECK(big->peakAllocatedBytes > e1->peakAllocatedBytes + (std::uint64_t{1} << 31) * 8 * 1000000 * 4);
    CHECK(big->peakAllocatedBytes <= kMaxBytes);
    CHECK(est->maxBatch(std::numeric_limits<std::uint64_t>::max()).largest == kMaxBatch);
    // The same table with 10^8-wide rows: 2^31 x 8 x 10^8 x 4 bytes is past 2^62, a clear error at that
    // batch.
    Model wide = parseOrFail(oneLayer(
        "[8]", "int64",
        R"({"name":"e","op":"embedding","num_embeddings":10000000,"embedding_dim":100000000})", true));
    auto west = Estimator::create(wide, TrainingConfig{}, 0);
    REQUIRE(west);
    CHECK(west->parameterCount() == 1000000000000000ull);
    REQUIRE(west->estimate(1));
    auto tooBig = west->estimate(kMaxBatch);
    REQUIRE_FALSE(tooBig);
    CHECK(tooBig.error().message.find("too large") != std::string::npos);
    CHECK_FALSE(west->peakAllocatedBytes(kMaxBatch));
    const MaxBatch mb = west->maxBatch(std::numeric_limits<std::uint64_t>::max());
    CHECK(mb.largest > 0);
    CHECK(mb.largest < kMaxBatch);
    CHECK_FALSE(mb.capped);
}

TEST_CASE("sequence 2^24 from a Hugging Face config: a number or 'too large', never a wrap, and 2^24 + 1 is "
          "refused",
          "[bad-input][overflow]") {
    auto cfg = nlohmann::json::parse(readFile(std::string(BATCHFIT_TEST_DATA) + "/hf/gpt2.json"));
    cfg["n_positions"] = std::int64_t{1} << 24;
    cfg["n_ctx"] = std::int64_t{1} << 24;
    const std::string text = cfg.dump();
    for (const char* impl : {"flash", "eager"}) {
        INFO(impl);
        HfImportOptions o;
        o.sequenceLength = std::int64_t{1} << 24;
        o.attention = std::string(impl);
        auto m = importHfConfig(text, "config.json", o);
        REQUIRE(m);
        REQUIRE(m->inputShape == std::vector<std::int64_t>{std::int64_t{1} << 24});
        auto est = Estimator::create(*m, TrainingConfig{}, 0);
        REQUIRE(est);
        auto e1 = est->estimate(1);
        if (std::string(impl) == "flash") {
            // No S^2 scores: 12 layers of [2^24, 768] activations, tens of GiB at batch 1.
            REQUIRE(e1);
            CHECK(e1->peakAllocatedBytes > (std::uint64_t{1} << 24) * 768 * 4 * 12);
        }
        if (e1) {
            CHECK(e1->peakAllocatedBytes <= kMaxBytes);
            CHECK(e1->requiredBytes >= e1->peakAllocatedBytes);
        } else {
            CHECK(e1.error().message.find("too large") != std::string::npos);
        }
        // 2^31 sequences of 2^24 tokens: past 2^62 bytes for either attention.
        auto big = est->estimate(kMaxBatch);
        REQUIRE_FALSE(big);
        CHECK(big.error().message.find("too large") != std::string::npos);
        CHECK_FALSE(est->requiredBytes(kMaxBatch));
    }
    HfImportOptions over;
    over.sequenceLength = (std::int64_t{1} << 24) + 1;
    auto refused = importHfConfig(text, "config.json", over);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message == "config.json: sequence length 16777217 is out of range");
}

TEST_CASE("repeat counts that expand past the op budget are refused quickly", "[bad-input]") {
    const std::string json = R"({"format":"batchfit-model","version":1,"name":"t","input":{"shape":[4]},
      "layers":[{"name":"a","repeat":100000,"layers":[{"name":"b","repeat":100000,"layers":[{"name":"r","op":"relu"}]}]}]})";
    CHECK(createError(json).find("more than 50000 ops") != std::string::npos);
}

TEST_CASE("a model without trainable parameters or with layers after the loss is refused", "[bad-input]") {
    CHECK(createError(oneLayer("[4]", "float32", R"({"name":"r","op":"relu"})"))
              .find("no trainable parameters") != std::string::npos);
    const std::string json = R"({"format":"batchfit-model","version":1,"name":"t","input":{"shape":[4]},
      "layers":[{"name":"fc","op":"linear","out_features":3},{"name":"loss","op":"cross_entropy"},{"name":"r","op":"relu"}]})";
    CHECK_FALSE(createError(json).empty());
}

TEST_CASE("an attribute out of range names the attribute, so an editor can show it at the field",
          "[bad-input]") {
    Model m = preset("resnet50");
    for (const std::int64_t bad : {std::int64_t{-5}, std::int64_t{0}, std::int64_t{1000000000000}}) {
        INFO(bad);
        m.layers[0].attrs.set("out_channels", bad);
        auto st = validateModel(m);
        REQUIRE_FALSE(st);
        CHECK(st.error().attribute == "out_channels");
        CHECK(st.error().message.find("conv1: attribute 'out_channels'") == 0);
    }
    m.layers[0].attrs.set("out_channels", std::int64_t{1} << 32); // the largest accepted
    auto ok = validateModel(m);
    CHECK((ok || ok.error().attribute != "out_channels"));
    m.layers[0].attrs.set("out_channels", (std::int64_t{1} << 32) + 1);
    auto big = validateModel(m);
    REQUIRE_FALSE(big);
    CHECK(big.error().message.find("is too large (at most 4294967296)") != std::string::npos);
}
