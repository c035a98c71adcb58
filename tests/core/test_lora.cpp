// LoRA adapters as PEFT's lora.Linear runs them (core/src/graph/lora_linear.cpp). Bytes written out by hand
// for a small model; docs/accuracy-finetune.md checks the same rules against torch.
#include "test_util.h"

using namespace batchfit;
using namespace batchfit::test;

namespace {

// [8, 64] -> q_proj -> relu -> v_proj -> head (4) -> mse
const char* kModel =
    R"({"format":"batchfit-model","version":1,"name":"lora","input":{"shape":[8,64]},"layers":[
  {"name":"q_proj","op":"linear","out_features":64},{"name":"act","op":"relu"},
  {"name":"v_proj","op":"linear","out_features":64},{"name":"head","op":"linear","out_features":4},
  {"name":"loss","op":"mse_loss"}]})";

TrainingConfig lora(std::int64_t r, double dropout = 0, Precision p = Precision::Fp32,
                    std::vector<std::string> targets = {}) {
    TrainingConfig c;
    c.lora.rank = r;
    c.lora.dropout = dropout;
    c.lora.targets = std::move(targets);
    c.precision = p;
    return c;
}

} // namespace

TEST_CASE("LoRA: adapters r*(in+out) per target train, the base is frozen", "[lora]") {
    const Model m = parseOrFail(kModel);
    const auto full = estimateAt(m, 1);
    const auto e = estimateAt(m, 1, lora(4)); // q_proj, v_proj: PEFT's default for names like Llama's
    CHECK(e.parameterCount == full.parameterCount + 2 * 4 * (64 + 64));
    CHECK(e.trainableParameterCount == 2 * 4 * (64 + 64));
    CHECK(e.gradientBytes == 4 * 2 * 4 * (64 + 64));
    CHECK(e.optimizerStateBytes == 8 * 2 * 4 * (64 + 64) + 4 * 4); // Adam: two states + a step per tensor
    // The batch (lora_A of q_proj keeps it), lora_B's inputs [8, 4], relu's output (which v_proj's lora_A
    // reads too), the loss's input and target. The frozen base linears and head keep no activation.
    constexpr std::uint64_t act = 8 * 64 * 4, rank = 8 * 4 * 4, out = 8 * 4 * 4;
    CHECK(e.savedActivationBytes == act + rank + act + rank + 2 * out);
}

TEST_CASE("LoRA dropout: each adapted linear keeps its own mask and dropped copy", "[lora]") {
    const Model m = parseOrFail(kModel);
    const auto plain = estimateAt(m, 1, lora(4));
    const auto dropped = estimateAt(m, 1, lora(4, 0.1));
    // v_proj's: a bool mask and the dropped copy lora_A keeps. q_proj's input (the batch) needs no gradient,
    // so its dropout keeps no mask, and lora_A keeps the dropped copy instead of the batch.
    CHECK(dropped.savedActivationBytes == plain.savedActivationBytes + 8 * 64 * 4 + 8 * 64);
}

TEST_CASE("LoRA on half weights: fp32 adapters and the fp32 copy of their input", "[lora]") {
    const Model m = parseOrFail(kModel);
    const auto e = estimateAt(m, 1, lora(4, 0, Precision::PureBf16));
    CHECK(e.gradientBytes == 4 * 2 * 4 * (64 + 64)); // fp32 gradients: the adapters are fp32
    CHECK(e.parameterBytes == 2 * (2 * (64 * 64 + 64) + 64 * 4 + 4) + 4 * 2 * 4 * (64 + 64));
    // Each lora_A keeps an fp32 copy of its input (_cast_input_dtype), not the bf16 tensor (the batch is not
    // kept at all); fp32 lora_B inputs; relu's bf16 output; the loss.
    constexpr std::uint64_t half = 8 * 64 * 2, copy = 8 * 64 * 4, rank = 8 * 4 * 4, out = 8 * 4 * 2;
    CHECK(e.savedActivationBytes == copy + rank + half + copy + rank + 2 * out);
}

TEST_CASE("LoRA targets: names, all-linear, and errors that say what to give", "[lora]") {
    const Model m = parseOrFail(kModel);
    CHECK(estimateAt(m, 1, lora(2, 0, Precision::Fp32, {"v_proj"})).trainableParameterCount == 2 * (64 + 64));
    // all-linear: every linear but the output head (the last one)
    CHECK(estimateAt(m, 1, lora(2, 0, Precision::Fp32, {"all-linear"})).trainableParameterCount ==
          2 * 2 * (64 + 64));
    auto bad = Estimator::create(m, lora(2, 0, Precision::Fp32, {"proj"}), 0);
    REQUIRE_FALSE(bad); // PEFT matches the name or a "."-separated suffix, not any suffix
    CHECK(bad.error().message.find("--lora-targets 'proj' matches no linear layer") != std::string::npos);
    CHECK(bad.error().message.find("this model's linears: ") != std::string::npos);
    CHECK(bad.error().message.find("v_proj") != std::string::npos);
    const Model other =
        parseOrFail(R"({"format":"batchfit-model","version":1,"name":"cnn","input":{"shape":[16]},
      "layers":[{"name":"fc1","op":"linear","out_features":8},{"name":"fc2","op":"linear","out_features":2},
                {"name":"loss","op":"cross_entropy"}]})");
    auto none = Estimator::create(other, lora(2), 0);
    REQUIRE_FALSE(none);
    CHECK(none.error().message.find("give --lora-targets (its linear layers: fc1, fc2)") !=
          std::string::npos);
    // --train-only adds modules_to_save
    TrainingConfig c = lora(2, 0, Precision::Fp32, {"q_proj"});
    c.trainOnly = {"head"};
    CHECK(estimateAt(m, 1, c).trainableParameterCount == 2 * (64 + 64) + 64 * 4 + 4);
}
