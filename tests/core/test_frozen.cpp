// Frozen parameters (requires_grad=False): the model file's "trainable": false and --freeze / --train-only.
// The byte figures are derived from autograd's rules (tools/autograd/derivatives.yaml) and checked against
// torch in docs/accuracy-finetune.md; here they are written out by hand for small models.
#include "batchfit/model_io.h"
#include "graph/freeze_rules.h"
#include "test_util.h"

#include <nlohmann/json.hpp>

using namespace batchfit;
using namespace batchfit::test;

namespace {

// [16, 64] -> a: linear 64 -> blk{b: linear 64, gelu} -> c: linear 10 -> mse. Batch 2, fp32.
std::string mlp(const std::string& aExtra = "", const std::string& blkExtra = "") {
    return R"({"format":"batchfit-model","version":1,"name":"frz","input":{"shape":[16,64]},"layers":[
      {"name":"a","op":"linear","out_features":64)" +
           aExtra + R"(},
      {"name":"blk")" +
           blkExtra + R"(,"layers":[{"name":"b","op":"linear","out_features":64},{"name":"g","op":"gelu"}]},
      {"name":"c","op":"linear","out_features":10},{"name":"loss","op":"mse_loss"}]})";
}
constexpr std::uint64_t kLinear64 = 64 * 64 + 64, kHead = 64 * 10 + 10;
constexpr std::uint64_t kAct = 2 * 16 * 64 * 4;        // one [2, 16, 64] fp32 activation
constexpr std::uint64_t kLoss = 2 * (2 * 16 * 10 * 4); // mse keeps its input and the target

TrainingConfig freezing(std::vector<std::string> freeze, std::vector<std::string> trainOnly = {}) {
    TrainingConfig c;
    c.freeze = std::move(freeze);
    c.trainOnly = std::move(trainOnly);
    return c;
}

} // namespace

TEST_CASE("frozen layers get no gradient and no optimizer state, and count as parameters", "[frozen]") {
    const auto all = estimateAt(parseOrFail(mlp()), 2);
    CHECK(all.parameterCount == 2 * kLinear64 + kHead);
    CHECK(all.trainableParameterCount == all.parameterCount);

    const auto e = estimateAt(parseOrFail(mlp(R"(,"trainable":false)", R"(,"trainable":false)")), 2);
    CHECK(e.parameterCount == 2 * kLinear64 + kHead);
    CHECK(e.parameterBytes == all.parameterBytes);
    CHECK(e.trainableParameterCount == kHead);
    CHECK(e.gradientBytes == 4 * kHead);
    CHECK(e.optimizerStateBytes == 8 * kHead + 2 * 4); // Adam: exp_avg, exp_avg_sq + a step per tensor
}

TEST_CASE("ops save only what the gradients that still flow need", "[frozen]") {
    // Everything trains: a saves the batch, b its input, gelu its input, c its input (gelu's output).
    CHECK(estimateAt(parseOrFail(mlp()), 2).savedActivationBytes == 4 * kAct + kLoss);
    // a and blk frozen: nothing before c needs a gradient, so only c's input and the loss are saved.
    CHECK(estimateAt(parseOrFail(mlp(R"(,"trainable":false)", R"(,"trainable":false)")), 2)
              .savedActivationBytes == kAct + kLoss);
    // Only blk frozen: gradients flow through it to a. b (a frozen linear whose input needs a gradient) keeps
    // its weight, not its input (mm saves mat1 only for mat2's gradient); gelu keeps its input; a keeps the
    // batch.
    CHECK(estimateAt(parseOrFail(mlp("", R"(,"trainable":false)")), 2).savedActivationBytes ==
          3 * kAct + kLoss);
    // Only a frozen: a needs no gradient at all (its input is the batch): it saves nothing.
    CHECK(estimateAt(parseOrFail(mlp(R"(,"trainable":false)")), 2).savedActivationBytes == 3 * kAct + kLoss);
}

TEST_CASE("the patterns of --freeze and --train-only give what the model file's marks give", "[frozen]") {
    const Model plain = parseOrFail(mlp());
    const auto marked = estimateAt(parseOrFail(mlp(R"(,"trainable":false)", R"(,"trainable":false)")), 2);
    for (const auto& cfg : {freezing({"a", "blk"}), freezing({}, {"c"}), freezing({"a", "blk*"}),
                            freezing({"[ab]*"}, {}) /* '[' is literal: matches nothing */}) {
        auto est = Estimator::create(plain, cfg, 0);
        if (cfg.freeze == std::vector<std::string>{"[ab]*"}) {
            REQUIRE_FALSE(est);
            CHECK(est.error().message.find("--freeze '[ab]*' matches no layer") != std::string::npos);
            continue;
        }
        REQUIRE(est);
        auto e = est->estimate(2);
        REQUIRE(e);
        CHECK(e->trainableParameterCount == marked.trainableParameterCount);
        CHECK(e->savedActivationBytes == marked.savedActivationBytes);
        CHECK(e->peakAllocatedBytes == marked.peakAllocatedBytes);
    }
    // A block's path covers what it contains; --freeze wins over --train-only.
    CHECK(estimateAt(plain, 2, freezing({"blk"})).trainableParameterCount == kLinear64 + kHead);
    CHECK(estimateAt(plain, 2, freezing({"c"}, {"a", "c"})).trainableParameterCount == kLinear64);
}

TEST_CASE("frozen patterns that match nothing, or freeze everything, are errors that say so", "[frozen]") {
    const Model plain = parseOrFail(mlp());
    auto none = Estimator::create(plain, freezing({"layer1*"}, {"cc"}), 0);
    REQUIRE_FALSE(none);
    CHECK(none.error().message.find("--freeze 'layer1*', --train-only 'cc' match no layer") !=
          std::string::npos);
    CHECK(none.error().message.find("such as 'a'") != std::string::npos);
    auto all = Estimator::create(plain, freezing({"*"}), 0);
    REQUIRE_FALSE(all);
    CHECK(all.error().message.find("no trainable parameters") != std::string::npos);
}

TEST_CASE("layer paths match in BatchFit's and PyTorch's spelling, with their ancestors", "[frozen]") {
    CHECK(globMatch("layer1*", "layer1[0].conv1"));
    CHECK(globMatch("h?0", "h[0"));
    CHECK_FALSE(globMatch("h*x", "h[0].attn"));
    CHECK(globMatch("*", ""));
    CHECK(globMatch("**a*", "bab"));
    CHECK_FALSE(globMatch("a", "ab"));
    FreezeRules r({"h.0.*", "encoder"}, {});
    CHECK_FALSE(r.trains("h[0].attn.q")); // PyTorch's name h.0.attn.q
    CHECK(r.trains("h[1].attn.q"));
    CHECK_FALSE(r.trains("encoder[3].fc")); // an ancestor, "encoder", matches
    CHECK(r.trains("encoder_norm"));
    CHECK(r.unmatched().empty());
    FreezeRules t({}, {"fc"});
    CHECK(t.trains("fc"));
    CHECK_FALSE(t.trains("layer4[2].conv3"));
}

TEST_CASE("a repeated block frozen by its PyTorch module name", "[frozen]") {
    const Model m =
        parseOrFail(R"({"format":"batchfit-model","version":1,"name":"rep","input":{"shape":[8,32]},
      "layers":[{"name":"h","repeat":3,"layers":[{"name":"fc","op":"linear","out_features":32},{"name":"r","op":"relu"}]},
                {"name":"head","op":"linear","out_features":4},{"name":"loss","op":"mse_loss"}]})");
    const auto e = estimateAt(m, 1, freezing({"h.0.*", "h.1"}));
    CHECK(e.trainableParameterCount == (32 * 32 + 32) + (32 * 4 + 4));
    // h[0], h[1] need no gradient: only h[2].fc (the first trainable) saves its input, relu its output.
    constexpr std::uint64_t act = 8 * 32 * 4;
    CHECK(e.savedActivationBytes == 2 * act + 2 * (8 * 4 * 4)); // head reads the relu output relu keeps
}

TEST_CASE("frozen_params freezes some of a layer's parameters; a frozen norm still saves for its input",
          "[frozen]") {
    // conv -> batchnorm (its weight and bias frozen) -> relu -> pool -> flatten -> linear.
    auto model = [](const std::string& bn) {
        return parseOrFail(R"({"format":"batchfit-model","version":1,"name":"cnn","input":{"shape":[3,8,8]},
          "layers":[{"name":"conv","op":"conv2d","out_channels":4,"kernel":3,"padding":1,"bias":false},
                    {"name":"bn","op":"batchnorm2d")" +
                           bn + R"(},{"name":"r","op":"relu"},
                    {"name":"flat","op":"flatten"},{"name":"fc","op":"linear","out_features":2},
                    {"name":"loss","op":"cross_entropy"}]})");
    };
    const auto full = estimateAt(model(""), 2);
    const auto frozenBn = estimateAt(model(R"(,"frozen_params":["weight","bias"])"), 2);
    CHECK(full.trainableParameterCount - frozenBn.trainableParameterCount == 2 * 4);
    // batch_norm has one derivative formula for input, weight and bias: what it saves does not depend on
    // which of them needs a gradient (the conv before it still trains).
    CHECK(frozenBn.savedActivationBytes == full.savedActivationBytes);
    CHECK(frozenBn.bufferBytes == full.bufferBytes); // running statistics are still updated in train mode
}

TEST_CASE("trainable and frozen_params survive a save and load; bad values are named", "[frozen][model_io]") {
    const Model m =
        parseOrFail(mlp(R"(,"trainable":false,"frozen_params":["bias"])", R"(,"trainable":false)"));
    REQUIRE_FALSE(m.layers[0].trainable);
    CHECK(m.layers[0].frozenParams == std::vector<std::string>{"bias"});
    CHECK_FALSE(m.layers[1].trainable);
    CHECK(m.layers[2].trainable);
    auto again = parseModel(serializeModel(m), "again.json");
    REQUIRE(again);
    CHECK(again->layers == m.layers);

    auto bad = parseModel(mlp(R"(,"trainable":"no")"), "bad.json");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("bad.json: $.layers[0].trainable: expected true or false") !=
          std::string::npos);
    auto badList = parseModel(mlp(R"(,"frozen_params":[1])"), "bad.json");
    REQUIRE_FALSE(badList);
    CHECK(badList.error().message.find("$.layers[0].frozen_params[0]") != std::string::npos);
    auto badBlock = parseModel(mlp("", R"(,"trainable":1)"), "bad.json");
    REQUIRE_FALSE(badBlock);
    CHECK(badBlock.error().message.find("$.layers[1].trainable") != std::string::npos);
}
