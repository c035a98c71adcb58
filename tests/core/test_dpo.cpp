// --recipe dpo: TRL's DPOTrainer step (core/src/program/scheduler_reference.cpp, StepProgram::perPair).
// Against TRL itself on the CPU: tools/accuracy_dpo.py (the "real: DPO" ctest, docs/accuracy-llm.md).
#include "batchfit/hf_import.h"
#include "test_util.h"

using namespace batchfit;
using namespace batchfit::test;

namespace {

// Qwen3-0.6B's widths, two layers, no DynamicCache (DPO runs use_cache=False; SFT would fill one)
Model qwen(std::int64_t seq) {
    return qwen3TwoLayers(seq, R"(, "use_cache": false)");
}

TrainingConfig dpo(RefLogps ref, bool lora) {
    TrainingConfig c;
    c.recipe = Recipe::Dpo;
    c.refLogps = ref;
    c.precision = Precision::PureBf16;
    c.optimizer = OptimizerKind::AdamW;
    if (lora) {
        c.lora.rank = 16;
        c.lora.targets = {"q_proj", "v_proj"};
    }
    return c;
}

std::string refused(TrainingConfig c) {
    return refusal(qwen(256), c);
}

} // namespace

TEST_CASE("DPO runs each pair as two sequences through TRL's fused head", "[dpo]") {
    const Model m = qwen(512);
    // precomputed reference log-probabilities: the step is SFT with TRL's fused head at twice the batch
    TrainingConfig sft = dpo(RefLogps::Live, true);
    sft.recipe = Recipe::Sft;
    sft.lmLoss = LmLoss::TrlFused;
    const auto pairs = estimateAt(m, 3, dpo(RefLogps::Precomputed, true));
    const auto sequences = estimateAt(m, 6, sft);
    CHECK(pairs.batch == 3);
    CHECK(pairs.savedActivationBytes == sequences.savedActivationBytes);
    CHECK(pairs.peakAllocatedBytes == sequences.peakAllocatedBytes);
    CHECK(pairs.referenceModelBytes == 0);
}

TEST_CASE("DPO's reference: a forward without gradients, and a frozen copy without LoRA", "[dpo]") {
    const Model m = qwen(512);
    const auto liveLora = estimateAt(m, 2, dpo(RefLogps::Live, true));
    const auto preLora = estimateAt(m, 2, dpo(RefLogps::Precomputed, true));
    // the reference forward saves nothing, and under LoRA it is the base model: no copy
    CHECK(liveLora.savedActivationBytes == preLora.savedActivationBytes);
    CHECK(liveLora.referenceModelBytes == 0);
    CHECK(liveLora.peakAllocatedBytes >= preLora.peakAllocatedBytes);
    // full training: the reference is a copy of every weight, kept for the whole run
    const auto live = estimateAt(m, 2, dpo(RefLogps::Live, false));
    const auto pre = estimateAt(m, 2, dpo(RefLogps::Precomputed, false));
    CHECK(live.referenceModelBytes == pre.parameterBytes);
    CHECK(live.parameterBytes == 2 * pre.parameterBytes);
    CHECK(pre.referenceModelBytes == 0);
    CHECK(live.peakAllocatedBytes >= pre.peakAllocatedBytes + live.referenceModelBytes);
}

TEST_CASE("DPO set-ups that are not modelled are refused with the reason", "[dpo]") {
    TrainingConfig c = dpo(RefLogps::Live, true);
    c.lmLoss = LmLoss::Liger;
    CHECK(refused(c).find("--recipe dpo: TRL's trainer takes its log-probabilities from TRL's fused head") !=
          std::string::npos);
    c = dpo(RefLogps::Live, true);
    c.parallel.gpus = 8;
    c.parallel.strategy = ParallelStrategy::Zero3;
    CHECK(refused(c).find("sharded parameters") != std::string::npos);
    c = dpo(RefLogps::Live, true);
    c.activationOffload = ActivationOffload::All;
    CHECK(refused(c).find("--activation-offload all") != std::string::npos);
}
