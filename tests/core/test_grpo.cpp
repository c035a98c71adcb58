// --recipe grpo: TRL's GRPOTrainer step (core/src/program/scheduler_reference.cpp: generate() and the
// reference's log-probabilities before the first micro-batch; the fused head scoring only the completion).
// Against TRL itself on the CPU: tools/accuracy_grpo.py (the "real: GRPO" ctest, docs/accuracy-llm.md).
#include "batchfit/gpu.h"
#include "batchfit/hf_import.h"
#include "batchfit/what_if.h"
#include "test_util.h"

#include <algorithm>

using namespace batchfit;
using namespace batchfit::test;

namespace {

// Qwen3-0.6B's widths, two layers
Model qwen(std::int64_t seq) {
    return qwen3TwoLayers(seq);
}

TrainingConfig grpo(RefLogps ref, bool lora, std::int64_t prompt = 64) {
    TrainingConfig c;
    c.recipe = Recipe::Grpo;
    c.refLogps = ref;
    c.promptTokens = prompt;
    c.precision = Precision::PureBf16;
    c.optimizer = OptimizerKind::AdamW;
    if (lora) {
        c.lora.rank = 16;
        c.lora.targets = {"q_proj", "v_proj"};
    }
    return c;
}

std::string refused(const TrainingConfig& c) {
    return refusal(qwen(256), c);
}

} // namespace

TEST_CASE("GRPO's reference is a frozen copy for full training, the adapter-free base under LoRA", "[grpo]") {
    const Model m = qwen(512);
    const auto none = estimateAt(m, 2, grpo(RefLogps::None, false));
    const auto live = estimateAt(m, 2, grpo(RefLogps::Live, false));
    CHECK(none.referenceModelBytes == 0);
    CHECK(live.referenceModelBytes > 0);
    CHECK(live.referenceModelBytes == none.parameterBytes);
    CHECK(live.peakAllocatedBytes >= none.peakAllocatedBytes + live.referenceModelBytes);
    CHECK(estimateAt(m, 2, grpo(RefLogps::Live, true)).referenceModelBytes == 0);
}

TEST_CASE("GRPO's fused head scores only the completion", "[grpo]") {
    const Model m = qwen(1024);
    const auto shortPrompt = estimateAt(m, 2, grpo(RefLogps::None, true, 1));
    const auto longPrompt = estimateAt(m, 2, grpo(RefLogps::None, true, 768));
    // the [N, H] copy of the scored hidden states (bf16, H = 1024) is what the head saves per token
    const std::uint64_t perToken = 1024 * 2 + 8 + 4; // hidden row, target, log_z
    CHECK(shortPrompt.savedActivationBytes - longPrompt.savedActivationBytes == 2 * 767 * perToken);
}

TEST_CASE("GRPO's generation batch is batch x accumulation, and its cache can be the peak", "[grpo]") {
    const Model m = qwen(2048);
    TrainingConfig c = grpo(RefLogps::None, true, 128);
    c.checkpointing = Checkpointing::EveryBlock;
    c.accumulationSteps = 16;
    const auto generating = estimateAt(m, 1, c);
    CHECK(generating.peakLabel.find("generation") != std::string::npos);
    c.generation = Generation::VllmServer; // generated elsewhere: only the training step
    const auto server = estimateAt(m, 1, c);
    CHECK(server.peakLabel.find("generation") == std::string::npos);
    // 16 sequences of 2048 tokens, keys and values of 2 layers x 8 heads x 128 in bf16: 256 MiB, all held at
    // the last token beside the weights
    CHECK(generating.generationCacheBytes == std::uint64_t{16} * 2048 * 2 * 2 * 8 * 128 * 2);
    CHECK(server.generationCacheBytes == 0);
    CHECK(generating.peakAllocatedBytes >= generating.parameterBytes + generating.generationCacheBytes);
    CHECK(generating.peakAllocatedBytes > server.peakAllocatedBytes);
    c.accumulationSteps = 1;
    c.generation = Generation::Transformers;
    CHECK(estimateAt(m, 1, c).peakAllocatedBytes < generating.peakAllocatedBytes);
}

TEST_CASE("steps_per_generation sizes the generation batch; misaligned generations hold gradients",
          "[grpo]") {
    const Model m = qwen(1024);
    TrainingConfig c = grpo(RefLogps::None, true, 128);
    c.accumulationSteps = 4;
    const auto base = estimateAt(m, 1, c);
    CHECK_FALSE(c.grpoOldLogps()); // aligned: old log-probabilities are the step's own
    c.stepsPerGeneration = 8;      // one generation per two optimizer steps, at the first micro-batch
    CHECK_FALSE(c.grpoGeneratesMidStep());
    CHECK(c.grpoOldLogps()); // the second step's samples come from an older policy (4 % 8 != 0)
    const auto twice = estimateAt(m, 1, c);
    CHECK(twice.generationCacheBytes == 2 * base.generationCacheBytes);
    // every 6 micro-batches with 4 per step: some generations come with gradients held; the same generation
    // batch with 3 per step comes at the first micro-batch
    TrainingConfig full = grpo(RefLogps::None, false, 128);
    full.stepsPerGeneration = 6;
    full.accumulationSteps = 3;
    CHECK_FALSE(full.grpoGeneratesMidStep());
    const auto aligned = estimateAt(m, 1, full);
    full.accumulationSteps = 4;
    CHECK(full.grpoGeneratesMidStep());
    const auto mid = estimateAt(m, 1, full);
    CHECK(mid.generationCacheBytes == aligned.generationCacheBytes);
    CHECK(mid.peakAllocatedBytes >= aligned.peakAllocatedBytes);
    // num_iterations > 1: the same batch is reused, and the old log-probabilities are computed
    c.stepsPerGeneration = 0;
    c.numIterations = 2;
    CHECK(c.grpoOldLogps());
    CHECK_FALSE(c.grpoGeneratesMidStep()); // 4 x 2 is a multiple of 4
    CHECK(estimateAt(m, 1, c).generationCacheBytes == base.generationCacheBytes);
    // vLLM always computes them (vllm_importance_sampling_correction)
    TrainingConfig v = grpo(RefLogps::None, true, 128);
    v.generation = Generation::VllmServer;
    CHECK(v.grpoOldLogps());
    // outside GRPO the settings are refused
    TrainingConfig sft;
    sft.stepsPerGeneration = 2;
    sft.recipe = Recipe::Dpo;
    sft.refLogps = RefLogps::Live;
    CHECK(refused(sft).find("--steps-per-generation and --num-iterations apply to --recipe grpo") !=
          std::string::npos);
}

TEST_CASE("Without --prompt-len, GRPO's completion is TRL's default max_completion_length", "[grpo]") {
    CHECK(estimateAt(qwen(2048), 1, grpo(RefLogps::None, true, 0)).promptTokens == 2048 - 512);
    CHECK(estimateAt(qwen(256), 1, grpo(RefLogps::None, true, 0)).promptTokens == 1); // all but one token
    CHECK(estimateAt(qwen(2048), 1, grpo(RefLogps::None, true, 0)).peakAllocatedBytes ==
          estimateAt(qwen(2048), 1, grpo(RefLogps::None, true, 1536)).peakAllocatedBytes);
}

TEST_CASE("A colocated vLLM engine keeps its share of the GPU outside the step", "[grpo]") {
    const Model m = qwen(512);
    TrainingConfig c = grpo(RefLogps::None, true);
    c.generation = Generation::VllmColocate;
    c.vllmMemoryFraction = 0.25;
    auto gpu = findGpu("a100-80gb");
    REQUIRE(gpu);
    auto e = Estimator::create(m, c, *gpu);
    REQUIRE(e);
    auto r = e->estimate(2);
    REQUIRE(r);
    CHECK(r->nonTorch.vllmBytes == gpu->memoryBytes / 4);
    CHECK(r->cudaContextBytes >= r->nonTorch.vllmBytes);
    // without a GPU there is no share to take
    CHECK(refused(c).find("give the GPU") != std::string::npos);
}

TEST_CASE("GRPO refuses what it does not model, naming the setting", "[grpo]") {
    CHECK(refused(grpo(RefLogps::Precomputed, false)).find("--ref-logps") != std::string::npos);
    CHECK(refused(grpo(RefLogps::None, false, 256)).find("--prompt-len") != std::string::npos);
    TrainingConfig dpo = grpo(RefLogps::None, false);
    dpo.recipe = Recipe::Dpo;
    CHECK(refused(dpo).find("--ref-logps live or precomputed") != std::string::npos);
}

TEST_CASE("The advisor offers GRPO without its reference, and it frees the frozen copy", "[grpo]") {
    const Model m = qwen(512);
    const TrainingConfig c = grpo(RefLogps::Live, false);
    const auto levers = rankLevers(m, c, std::uint64_t{8} << 30, 0);
    const auto it = std::find_if(levers.begin(), levers.end(),
                                 [](const Lever& l) { return l.id == "grpo-no-reference"; });
    REQUIRE(it != levers.end());
    CHECK(it->config.refLogps == RefLogps::None);
    CHECK(it->maxBatch > it->baselineMaxBatch);
    // none is offered where the reference is already off
    const auto off = rankLevers(m, grpo(RefLogps::None, false), std::uint64_t{8} << 30, 0);
    CHECK(std::none_of(off.begin(), off.end(), [](const Lever& l) { return l.id == "grpo-no-reference"; }));
}
