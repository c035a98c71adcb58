// Speed targets (issue 2): one estimate of gpt2-small <= 20 us and of llama-2-7b <= 50 us, an exact max-batch
// solve <= 200 us, a sweep of 1..4096 <= 5 ms; (issue 14) LoRA and QLoRA on llama-2-7b within 2x of full
// training for an estimate and a max-batch solve; (issue 16) with the caching-allocator replay deciding
// reserved memory: one replay of the gpt2-small step <= 1 ms, its max batch <= 5 ms, a 1..4096 sweep <= 100
// ms. A sweep point with the replay costs one replay (~3100 allocator events for gpt2-small), so the sweeps
// of 1..4096 are measured three ways: the points the GUI chart and the CLI's default draw
// (BM_SweepChart4096Gpt2, BM_SweepLog4096Gpt2: they meet 100 ms), every batch with the replay
// (BM_Sweep4096Gpt2: 4096 replays, ~500 ms on 2 cores, misses it: each of the 4096 batches takes its own
// path through the allocator, so no replay can be shared, and a replay costs ~70 ns per event), and every
// batch with an explicit --fragmentation override, the step walk alone (BM_Sweep4096Gpt2Flat: issue 2's 5
// ms). Issues 2 and 14 set their targets before the replay: the walk (BM_Peak*) still meets issue 2's; with
// the replay an estimate costs what the step allocates, and a QLoRA step of llama-2-7b makes twice the
// allocations of full training (20,417 events against 10,296: the dequantized weights), so issue 14's "within
// 2x" holds for LoRA, not for QLoRA. Run: build/bench/batchfit_bench
#include "batchfit/estimator.h"
#include "batchfit/hf_import.h"
#include "batchfit/presets.h"

#include <benchmark/benchmark.h>

#include <string>

using namespace batchfit;

namespace {

Estimator make(const char* id, const TrainingConfig& c = {}) {
    auto m = loadPreset(id);
    auto e = Estimator::create(*m, c, 536870912);
    return *e;
}

TrainingConfig lora(bool quantized) {
    TrainingConfig c;
    c.precision = Precision::AmpBf16;
    c.lora.rank = 16;
    c.lora.alpha = 32;
    c.lora.dropout = 0.05;
    if (quantized) {
        c.quant.kind = QuantKind::Nf4;
        c.quant.doubleQuant = true;
        applyQuantDefaults(c, false);
    }
    return c;
}

TrainingConfig full() {
    TrainingConfig c;
    c.precision = Precision::AmpBf16;
    return c;
}

void BM_EstimateLlama7bFull(benchmark::State& s) {
    const Estimator e = make("llama-2-7b", full());
    for (auto _ : s) benchmark::DoNotOptimize(e.requiredBytes(1));
}
BENCHMARK(BM_EstimateLlama7bFull)->Unit(benchmark::kMicrosecond);

void BM_EstimateLlama7bLora(benchmark::State& s) {
    const Estimator e = make("llama-2-7b", lora(false));
    for (auto _ : s) benchmark::DoNotOptimize(e.requiredBytes(1));
}
BENCHMARK(BM_EstimateLlama7bLora)->Unit(benchmark::kMicrosecond);

// DoRA on every linear: each adapted linear adds its norm's ops and the tensors they hold (the peak moves
// into down_proj's norm)
void BM_EstimateLlama7bDora(benchmark::State& s) {
    TrainingConfig c = lora(false);
    c.lora.dora = true;
    c.lora.targets = {"all-linear"};
    const Estimator e = make("llama-2-7b", c);
    for (auto _ : s) benchmark::DoNotOptimize(e.requiredBytes(1));
}
BENCHMARK(BM_EstimateLlama7bDora)->Unit(benchmark::kMicrosecond);

void BM_EstimateLlama7bQlora(benchmark::State& s) {
    const Estimator e = make("llama-2-7b", lora(true));
    for (auto _ : s) benchmark::DoNotOptimize(e.requiredBytes(1));
}
BENCHMARK(BM_EstimateLlama7bQlora)->Unit(benchmark::kMicrosecond);

void BM_MaxBatchLlama7bFull(benchmark::State& s) {
    const Estimator e = make("llama-2-7b", full());
    for (auto _ : s) benchmark::DoNotOptimize(e.maxBatch(640ull << 30));
}
BENCHMARK(BM_MaxBatchLlama7bFull)->Unit(benchmark::kMicrosecond);

void BM_MaxBatchLlama7bLora(benchmark::State& s) {
    const Estimator e = make("llama-2-7b", lora(false));
    for (auto _ : s) benchmark::DoNotOptimize(e.maxBatch(80ull << 30));
}
BENCHMARK(BM_MaxBatchLlama7bLora)->Unit(benchmark::kMicrosecond);

void BM_MaxBatchLlama7bQlora(benchmark::State& s) {
    const Estimator e = make("llama-2-7b", lora(true));
    for (auto _ : s) benchmark::DoNotOptimize(e.maxBatch(24ull << 30));
}
BENCHMARK(BM_MaxBatchLlama7bQlora)->Unit(benchmark::kMicrosecond);

// Issue 29: each new set-up keeps an estimate within 2x of full training (BM_EstimateLlama7bFull) and max
// batch with the replay under 30 ms. Llama-2-7B at its 4,096 tokens, bf16 weights.
TrainingConfig issue29(const char* which) {
    TrainingConfig c;
    c.precision = Precision::PureBf16;
    const std::string w = which;
    if (w == "checkpoint-offload") {
        c.checkpointing = Checkpointing::EveryBlock;
        c.activationOffload = ActivationOffload::Checkpoints;
    } else if (w == "save-on-cpu") {
        c.activationOffload = ActivationOffload::AllPinned;
    } else if (w == "liger") {
        c.lmLoss = LmLoss::Liger;
    } else if (w == "zero-infinity") {
        c.parallel.strategy = ParallelStrategy::Zero3;
        c.paramOffload = true;
    } else if (w == "dpo" || w == "dpo-lora") { // a reference forward after the policy's
        c.recipe = Recipe::Dpo;
        if (w == "dpo-lora") c.lora.rank = 16;
    } else if (w == "grpo") { // generate(), the reference's forward, the policy's step
        c.recipe = Recipe::Grpo;
        c.promptTokens = 1024;
    } else if (w == "grpo-lora" || w == "sft-like-grpo") { // generate() for 8 sequences, the policy's step
        c.recipe = w == "grpo-lora" ? Recipe::Grpo : Recipe::Sft;
        c.lmLoss = LmLoss::TrlFused;
        c.promptTokens = 1024;
        c.accumulationSteps = 8;
        c.checkpointing = Checkpointing::EveryBlock;
        c.lora.rank = 16;
    }
    return c;
}

void BM_EstimateLlama7bIssue29(benchmark::State& s, const char* which) {
    const Estimator e = make("llama-2-7b", issue29(which));
    for (auto _ : s) benchmark::DoNotOptimize(e.requiredBytes(1));
}
BENCHMARK_CAPTURE(BM_EstimateLlama7bIssue29, bf16, "none")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimateLlama7bIssue29, checkpoint_offload, "checkpoint-offload")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimateLlama7bIssue29, save_on_cpu, "save-on-cpu")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimateLlama7bIssue29, liger, "liger")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimateLlama7bIssue29, zero_infinity, "zero-infinity")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimateLlama7bIssue29, dpo, "dpo")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimateLlama7bIssue29, dpo_lora, "dpo-lora")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimateLlama7bIssue29, grpo, "grpo")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimateLlama7bIssue29, grpo_lora, "grpo-lora")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EstimateLlama7bIssue29, sft_like_grpo, "sft-like-grpo")->Unit(benchmark::kMicrosecond);

void BM_MaxBatchLlama7bIssue29(benchmark::State& s, const char* which) {
    const Estimator e = make("llama-2-7b", issue29(which));
    for (auto _ : s) benchmark::DoNotOptimize(e.maxBatch(80ull << 30));
}
BENCHMARK_CAPTURE(BM_MaxBatchLlama7bIssue29, checkpoint_offload, "checkpoint-offload")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MaxBatchLlama7bIssue29, save_on_cpu, "save-on-cpu")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MaxBatchLlama7bIssue29, liger, "liger")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MaxBatchLlama7bIssue29, zero_infinity, "zero-infinity")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MaxBatchLlama7bIssue29, dpo, "dpo")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MaxBatchLlama7bIssue29, dpo_lora, "dpo-lora")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MaxBatchLlama7bIssue29, grpo_lora, "grpo-lora")->Unit(benchmark::kMillisecond);

void BM_EstimateGpt2(benchmark::State& s) {
    const Estimator e = make("gpt2-small");
    for (auto _ : s) benchmark::DoNotOptimize(e.requiredBytes(8));
}
BENCHMARK(BM_EstimateGpt2)->Unit(benchmark::kMicrosecond);

void BM_EstimateLlama7b(benchmark::State& s) {
    const Estimator e = make("llama-2-7b");
    for (auto _ : s) benchmark::DoNotOptimize(e.requiredBytes(1));
}
BENCHMARK(BM_EstimateLlama7b)->Unit(benchmark::kMicrosecond);

// Issue 2's estimate targets were set before the replay: the step walk alone (peak allocated) answers them;
// requiredBytes above now replays the allocator (issue 16's 1 ms).
void BM_PeakGpt2(benchmark::State& s) {
    const Estimator e = make("gpt2-small");
    for (auto _ : s) benchmark::DoNotOptimize(e.peakAllocatedBytes(8));
}
BENCHMARK(BM_PeakGpt2)->Unit(benchmark::kMicrosecond);

void BM_PeakLlama7b(benchmark::State& s) {
    const Estimator e = make("llama-2-7b");
    for (auto _ : s) benchmark::DoNotOptimize(e.peakAllocatedBytes(1));
}
BENCHMARK(BM_PeakLlama7b)->Unit(benchmark::kMicrosecond);

void BM_FullEstimateGpt2(benchmark::State& s) {
    const Estimator e = make("gpt2-small");
    for (auto _ : s) benchmark::DoNotOptimize(e.estimate(8));
}
BENCHMARK(BM_FullEstimateGpt2)->Unit(benchmark::kMicrosecond);

void BM_MaxBatchGpt2(benchmark::State& s) {
    const Estimator e = make("gpt2-small");
    for (auto _ : s) benchmark::DoNotOptimize(e.maxBatch(80ull << 30));
}
BENCHMARK(BM_MaxBatchGpt2)->Unit(benchmark::kMicrosecond);

void BM_MaxBatchResnet50(benchmark::State& s) {
    const Estimator e = make("resnet50");
    for (auto _ : s) benchmark::DoNotOptimize(e.maxBatch(24ull << 30));
}
BENCHMARK(BM_MaxBatchResnet50)->Unit(benchmark::kMicrosecond);

void BM_Sweep4096Gpt2(benchmark::State& s) {
    const Estimator e = make("gpt2-small");
    for (auto _ : s) benchmark::DoNotOptimize(e.sweep(1, 4096));
}
BENCHMARK(BM_Sweep4096Gpt2)->Unit(benchmark::kMillisecond);

// Every batch, reserved = peak allocated x (1 + F) with F given (no replay): the step walk alone.
void BM_Sweep4096Gpt2Flat(benchmark::State& s) {
    TrainingConfig c;
    c.fragmentationFraction = 0.05;
    const Estimator e = make("gpt2-small", c);
    for (auto _ : s) benchmark::DoNotOptimize(e.sweep(1, 4096));
}
BENCHMARK(BM_Sweep4096Gpt2Flat)->Unit(benchmark::kMillisecond);

// What ChartData::sample draws for a 1..4096 axis: 256 even steps and the powers of 2 (269 replays).
void BM_SweepChart4096Gpt2(benchmark::State& s) {
    const Estimator e = make("gpt2-small");
    for (auto _ : s) {
        benchmark::DoNotOptimize(e.sweep(1, 4096, 16));
        benchmark::DoNotOptimize(e.sweep(1, 4096, 2, true));
    }
}
BENCHMARK(BM_SweepChart4096Gpt2)->Unit(benchmark::kMillisecond);

void BM_ReplayGpt2Step(benchmark::State& s) {
    const Estimator e = make("gpt2-small");
    for (auto _ : s) benchmark::DoNotOptimize(e.replayStep(8));
}
BENCHMARK(BM_ReplayGpt2Step)->Unit(benchmark::kMicrosecond);

void BM_ReplayGpt2StepExpandable(benchmark::State& s) {
    TrainingConfig c;
    c.allocConf = "expandable_segments:True";
    const Estimator e = make("gpt2-small", c);
    for (auto _ : s) benchmark::DoNotOptimize(e.replayStep(8));
}
BENCHMARK(BM_ReplayGpt2StepExpandable)->Unit(benchmark::kMicrosecond);

// Variable-length batches: seven earlier steps (896 .. 128) before the step at 1024, eight steps replayed.
void BM_ReplayGpt2StepHistory(benchmark::State& s) {
    TrainingConfig c;
    c.replaySequences = {896, 768, 640, 512, 384, 256, 128};
    const Estimator e = make("gpt2-small", c);
    for (auto _ : s) benchmark::DoNotOptimize(e.replayStep(8));
}
BENCHMARK(BM_ReplayGpt2StepHistory)->Unit(benchmark::kMicrosecond);

void BM_SweepLog4096Gpt2(benchmark::State& s) {
    const Estimator e = make("gpt2-small");
    for (auto _ : s) benchmark::DoNotOptimize(e.sweep(1, 4096, 2, true));
}
BENCHMARK(BM_SweepLog4096Gpt2)->Unit(benchmark::kMillisecond);

void BM_LowerGpt2(benchmark::State& s) {
    auto m = loadPreset("gpt2-small");
    for (auto _ : s) benchmark::DoNotOptimize(Estimator::create(*m, TrainingConfig{}, 0));
}
BENCHMARK(BM_LowerGpt2)->Unit(benchmark::kMillisecond);

void BM_LowerLlama7b(benchmark::State& s) {
    auto m = loadPreset("llama-2-7b");
    for (auto _ : s) benchmark::DoNotOptimize(Estimator::create(*m, TrainingConfig{}, 0));
}
BENCHMARK(BM_LowerLlama7b)->Unit(benchmark::kMillisecond);

// Issue 15: a ZeRO-3 estimate of Llama-2-70B on 64 GPUs <= 100 us, its max micro-batch <= 1 ms. Met by the
// step walk (BM_PeakLlama70bZero3, and the *Flat pair with an explicit --fragmentation); since issue 16
// required bytes come from the allocator replay, which costs milliseconds here (tens of thousands of
// allocations).
Estimator llama70bZero3(std::optional<double> fragmentation = {}) {
    auto m = importHfConfigFile(BATCHFIT_BENCH_DATA "/hf/llama-2-70b.json", HfImportOptions{4096, {}});
    TrainingConfig c;
    c.precision = Precision::MixedBf16Master;
    c.optimizer = OptimizerKind::AdamW;
    c.checkpointing = Checkpointing::EveryBlock;
    c.parallel.gpus = 64;
    c.parallel.strategy = ParallelStrategy::Zero3;
    c.fragmentationFraction = fragmentation;
    return *Estimator::create(*m, c, 536870912);
}

void BM_EstimateLlama70bZero3(benchmark::State& s) {
    const Estimator e = llama70bZero3();
    for (auto _ : s) benchmark::DoNotOptimize(e.requiredBytes(1));
}
BENCHMARK(BM_EstimateLlama70bZero3)->Unit(benchmark::kMicrosecond);

void BM_PeakLlama70bZero3(benchmark::State& s) {
    const Estimator e = llama70bZero3();
    for (auto _ : s) benchmark::DoNotOptimize(e.peakAllocatedBytes(1));
}
BENCHMARK(BM_PeakLlama70bZero3)->Unit(benchmark::kMicrosecond);

void BM_MaxBatchLlama70bZero3(benchmark::State& s) {
    const Estimator e = llama70bZero3();
    for (auto _ : s) benchmark::DoNotOptimize(e.maxBatch(80ull << 30));
}
BENCHMARK(BM_MaxBatchLlama70bZero3)->Unit(benchmark::kMicrosecond);

// The same with an explicit --fragmentation 0.05: the estimate and the solver on the step walk alone.
void BM_EstimateLlama70bZero3Flat(benchmark::State& s) {
    const Estimator e = llama70bZero3(0.05);
    for (auto _ : s) benchmark::DoNotOptimize(e.requiredBytes(1));
}
BENCHMARK(BM_EstimateLlama70bZero3Flat)->Unit(benchmark::kMicrosecond);

void BM_MaxBatchLlama70bZero3Flat(benchmark::State& s) {
    const Estimator e = llama70bZero3(0.05);
    for (auto _ : s) benchmark::DoNotOptimize(e.maxBatch(80ull << 30));
}
BENCHMARK(BM_MaxBatchLlama70bZero3Flat)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
