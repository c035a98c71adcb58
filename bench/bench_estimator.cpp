// Speed targets (issue 2): one estimate of gpt2-small <= 20 us and of llama-2-7b <= 50 us, an exact max-batch
// solve <= 200 us, a sweep of 1..4096 <= 5 ms. Run: build/bench/batchfit_bench
#include "batchfit/estimator.h"
#include "batchfit/presets.h"

#include <benchmark/benchmark.h>

using namespace batchfit;

namespace {

Estimator make(const char* id) {
    auto m = loadPreset(id);
    auto e = Estimator::create(*m, TrainingConfig{}, 536870912);
    return *e;
}

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

} // namespace

BENCHMARK_MAIN();
