// --lm-loss: transformers' full logits against TRL's fused head and chunked loss (ops/rules_lm_loss.cpp).
// The step peaks themselves are checked against TRL on the CPU by tools/accuracy_real.py ("real:" tests).
#include "batchfit/fit_map.h"
#include "batchfit/hf_import.h"
#include "batchfit/settings.h"
#include "batchfit/what_if.h"
#include "test_util.h"

#include <algorithm>

using namespace batchfit;
using namespace batchfit::test;

namespace {

Model llama(std::int64_t seq) {
    return hfModel("llama-3.2-3b.json", seq);
}

/// A linear and a head over [S, H] hidden states, as a model file writes them.
Model head(const std::string& op, std::int64_t s, std::int64_t h, std::int64_t v, bool trains) {
    const std::string hs = std::to_string(h);
    return parseOrFail(R"({"format":"batchfit-model","version":1,"name":"t","input":{"shape":[)" +
                       std::to_string(s) + "," + hs + R"(],"dtype":"float32"},"layers":[)" +
                       R"({"name":"proj","op":"linear","out_features":)" + hs + "}," +
                       R"({"name":"lm_head","op":")" + op + R"(","out_features":)" + std::to_string(v) +
                       (trains ? "" : R"(,"trainable":false)") + "}]}");
}

TrainingConfig with(LmLoss loss, Precision p = Precision::PureBf16) {
    TrainingConfig c;
    c.lmLoss = loss;
    c.precision = p;
    c.optimizer = OptimizerKind::AdamW;
    return c;
}

} // namespace

TEST_CASE("TRL's heads keep no tokens-by-vocabulary logits for the backward", "[lm_loss]") {
    const std::int64_t s = 4097, v = 128256, h = 3072; // Llama-3.2-3B
    TrainingConfig lora = with(LmLoss::Full);
    lora.lora.rank = 16;
    const auto full = estimateAt(llama(s), 1, lora);
    lora.lmLoss = LmLoss::TrlFused;
    const auto fused = estimateAt(llama(s), 1, lora);
    // full: log_softmax's fp32 [S, V] result, nll_loss's int64 targets and total_weight; fused: the [S-1, H]
    // bf16 copy of the valid tokens, their int64 targets, fp32 log_z and the bool mask (the frozen head's
    // linear saves nothing in either)
    const std::uint64_t t = s - 1, fullSaved = static_cast<std::uint64_t>(s * v * 4 + s * 8 + 4);
    CHECK(full.savedActivationBytes - fused.savedActivationBytes == fullSaved - t * (h * 2 + 8 + 4 + 1));
    CHECK(fused.peakAllocatedBytes < full.peakAllocatedBytes);
    // chunked: the checkpointed chunks keep the packed [S-1, H] copy, argsort's order and the sorted labels
    lora.lmLoss = LmLoss::TrlChunked;
    const auto chunked = estimateAt(llama(s), 1, lora);
    CHECK(full.savedActivationBytes - chunked.savedActivationBytes == fullSaved - t * (h * 2 + 8 + 8));
}

TEST_CASE("per token of context, TRL's heads need at least two fp32 logits rows less than the full loss",
          "[lm_loss]") {
    const std::int64_t v = 128256;
    auto slope = [&](LmLoss loss) {
        TrainingConfig c = with(loss);
        c.lora.rank = 16;
        const auto a = estimateAt(llama(4097), 1, c), b = estimateAt(llama(8193), 1, c);
        return (b.peakAllocatedBytes - a.peakAllocatedBytes) / 4096.0;
    };
    // the full loss's backward holds log_softmax's fp32 result, nll's and log_softmax's fp32 gradients per
    // token; TRL's heads hold none of them for the whole sequence
    const double full = slope(LmLoss::Full);
    CHECK(full - slope(LmLoss::TrlFused) > v * 4.0 * 2);
    CHECK(full - slope(LmLoss::TrlChunked) > v * 4.0 * 2);
}

TEST_CASE("the fused head accumulates a trained head's gradient in fp32", "[lm_loss]") {
    const std::int64_t s = 4097, h = 1024, v = 40960;
    // (an fp32 head's buffer is its gradient: the "real:" rows measure that case against TRL)
    TrainingConfig c = with(LmLoss::Full, Precision::PureBf16);
    const auto trains = estimateAt(head("trl_fused_lm_loss", s, h, v, true), 1, c);
    const auto frozen = estimateAt(head("trl_fused_lm_loss", s, h, v, false), 1, c);
    // both peak in the head's backward: the fp32 buffer beside the bf16 gradient it is cast into
    const std::uint64_t vh = static_cast<std::uint64_t>(v) * h;
    CHECK(trains.peakLabel == "backward of lm_head (trl_fused_lm_loss)");
    CHECK(frozen.peakLabel == trains.peakLabel);
    CHECK(trains.atPeak[Component::Temporaries] - frozen.atPeak[Component::Temporaries] == vh * 4);
    CHECK(trains.atPeak[Component::Gradients] - frozen.atPeak[Component::Gradients] == vh * 2);
}

TEST_CASE("TRL's losses are refused where they are not modelled, naming why", "[lm_loss]") {
    TrainingConfig amp = with(LmLoss::TrlFused, Precision::AmpBf16);
    CHECK(refusal(llama(512), amp).find("autocast") != std::string::npos);
    TrainingConfig tp = with(LmLoss::TrlFused);
    tp.parallel.gpus = 2;
    tp.parallel.tp = 2;
    CHECK(refusal(llama(512), tp).find("tensor parallelism") != std::string::npos);
    TrainingConfig onHead = with(LmLoss::TrlChunked);
    onHead.lora.rank = 8;
    onHead.lora.targets = {"lm_head"};
    CHECK(refusal(llama(512), onHead).find("LoRA on 'lm_head'") != std::string::npos);
    const std::string cnn = refusal(preset("resnet50"), with(LmLoss::TrlFused, Precision::Fp32));
    CHECK(cnn.find("fc: trl_fused_lm_loss (--lm-loss trl-fused) needs a language model's hidden states") !=
          std::string::npos);
    const std::string mlp = refusal(
        parseOrFail(oneLayer("[8]", "float32", R"({"name":"fc","op":"linear","out_features":4})", true)),
        with(LmLoss::TrlChunked, Precision::Fp32));
    CHECK(mlp.find("ends in its lm_head (linear) and cross_entropy") != std::string::npos);
    CHECK(mlp.find("this one ends in linear -> mse_loss") != std::string::npos);
}

TEST_CASE("the loss setting reads its names and aliases", "[lm_loss][settings]") {
    const SettingInfo* s = findSetting("lm_loss");
    REQUIRE(s);
    CHECK(s->flag == "--lm-loss");
    auto alias = parseSettingText(*s, "transformers");
    REQUIRE(alias);
    CHECK(std::get<std::string>(*alias) == "full");
    CHECK(parseSettingText(*s, "trl-fused"));
    auto bad = parseSettingText(*s, "chunky");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("trl-chunked") != std::string::npos); // the choices are listed
}

TEST_CASE("the fit map names where the step peaks: the full loss's logits at long context, not TRL's head",
          "[lm_loss][fit-map]") {
    auto source = [](std::int64_t seq) { return Result<Model>(llama(seq)); };
    TrainingConfig c = with(LmLoss::Full);
    c.lora.rank = 16;
    c.checkpointing = Checkpointing::EveryBlock;
    auto g = findGpu("h100-80gb");
    REQUIRE(g);
    FitMapOptions o;
    o.range = {1024, 8192, 0};
    auto full = computeFitMap(source, c, *g, o);
    REQUIRE(full);
    for (const auto& r : full->rows) {
        INFO(r.sequence << ": " << r.peakLabel);
        CHECK(r.peakInHead); // log_softmax's fp32 [S, vocab] and its gradients
        CHECK(r.peakLabel.find("loss.") != std::string::npos);
    }
    c.lmLoss = LmLoss::TrlFused;
    auto fused = computeFitMap(source, c, *g, o);
    REQUIRE(fused);
    for (std::size_t i = 0; i < fused->rows.size(); ++i) {
        INFO(fused->rows[i].sequence << ": " << fused->rows[i].peakLabel);
        CHECK_FALSE(fused->rows[i].peakInHead);
        CHECK(fused->rows[i].largest.largest > full->rows[i].largest.largest);
    }
}

TEST_CASE("the advisor offers TRL's fused head where the logits take the memory, and only to language models",
          "[lm_loss][advisor]") {
    const Model gemma = hfModel("gemma-3-1b-it.json", 4096);
    auto g = findGpu("rtx-4090");
    REQUIRE(g);
    const TrainingConfig c = with(LmLoss::Full); // Gemma 3 1B, bf16, 4,096 tokens: the 262k-vocab logits OOM
    REQUIRE(estimator(gemma, c).maxBatch(g->memoryBytes).largest == 0);
    auto levers = rankLevers(gemma, c, g->memoryBytes, g->contextBytes);
    auto it =
        std::find_if(levers.begin(), levers.end(), [](const Lever& l) { return l.id == "trl-fused-loss"; });
    REQUIRE(it != levers.end());
    CHECK(it->config.lmLoss == LmLoss::TrlFused);
    CHECK(it->maxBatch >= 1);
    CHECK(it->savedBytesAtOne > 0);
    auto resnet =
        rankLevers(preset("resnet50"), with(LmLoss::Full, Precision::Fp32), g->memoryBytes, g->contextBytes);
    CHECK(
        std::none_of(resnet.begin(), resnet.end(), [](const Lever& l) { return l.id == "trl-fused-loss"; }));
}

TEST_CASE("Liger's fused cross-entropy makes the head's gradients in the forward and hands them on",
          "[lm_loss][liger]") {
    const std::int64_t s = 4096, h = 64, v = 1024;
    TrainingConfig c = with(LmLoss::Full, Precision::Fp32); // the model file names the op itself
    auto run = [&](bool trains) {
        auto e = estimator(head("liger_fused_lm_loss", s, h, v, trains), c).estimate(1, true);
        REQUIRE(e);
        return *e;
    };
    const Estimate trains = run(true), frozen = run(false);
    // saved: grad_input [S, H] always, grad_weight [V, H] only when the head trains
    const std::uint64_t gradInput = s * h * 4, gradWeight = v * h * 4;
    CHECK(trains.savedActivationBytes - frozen.savedActivationBytes == gradWeight);
    CHECK(frozen.savedActivationBytes >= gradInput);
    // no second gradient: the gradients live at any moment are the weights' own (each rounded up to 512
    // bytes as the allocator does), never a second [V, H]
    for (const auto& e : {trains, frozen}) {
        std::uint64_t most = 0;
        for (const auto& p : e.timeline) most = std::max(most, p.live[Component::Gradients]);
        CHECK(most >= e.gradientBytes);
        CHECK(most < e.gradientBytes + 4 * 512);
    }
    // nothing [S, V] is kept or computed beyond the chunk buffer: far below the full logits' peak
    const auto full = estimateAt(head("linear", s, h, v, true), 1, c);
    CHECK(trains.peakAllocatedBytes < full.peakAllocatedBytes);
}

TEST_CASE("the liger loss replaces a transformers head and loss, and is refused where not modelled",
          "[lm_loss][liger]") {
    const Model m = llama(4096);
    TrainingConfig c = with(LmLoss::Liger);
    c.lora.rank = 16;
    const auto liger = estimateAt(m, 1, c);
    c.lmLoss = LmLoss::Full;
    const auto full = estimateAt(m, 1, c);
    CHECK(liger.peakAllocatedBytes < full.peakAllocatedBytes);
    CHECK(liger.peakOpPath.find("lm_head") == std::string::npos);
    c.lmLoss = LmLoss::Liger;
    c.activationOffload = ActivationOffload::All;
    auto refused = Estimator::create(m, c, 0);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("activation-offload all") != std::string::npos);
}
