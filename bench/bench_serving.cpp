// Serving's speed targets (issue 27): one serve estimate <= 50 us; the 64 x 64 concurrency x context map
// <= 20 ms.
#include "batchfit/gpu.h"
#include "batchfit/serving_plan.h"

#include <benchmark/benchmark.h>

using namespace batchfit;

namespace {

const ServingModel& gemma3() { // sliding and full layers: the V1 grouping is the most work
    static const ServingModel m = *readServingModelFile(BATCHFIT_BENCH_DATA "/hf/gemma-3-1b-it.json");
    return m;
}

const GpuSpec& h100() {
    static const GpuSpec g = *findGpu("h100-80gb");
    return g;
}

void BM_ServeEstimate(benchmark::State& state) {
    ServingConfig c;
    c.maxModelLen = 32768;
    for (auto _ : state) {
        auto e = estimateServing(gemma3(), c, h100());
        benchmark::DoNotOptimize(e);
    }
}
BENCHMARK(BM_ServeEstimate)->Unit(benchmark::kMicrosecond);

void BM_ServeMap64x64(benchmark::State& state) {
    ServingConfig c;
    c.maxModelLen = 32768;
    const auto e = *estimateServing(gemma3(), c, h100());
    std::vector<std::int64_t> contexts, sequences;
    for (std::int64_t i = 1; i <= 64; ++i) contexts.push_back(i * 512), sequences.push_back(i * 16);
    for (auto _ : state) {
        auto map = servingFitMap(gemma3(), e, contexts, sequences);
        benchmark::DoNotOptimize(map);
    }
}
BENCHMARK(BM_ServeMap64x64)->Unit(benchmark::kMillisecond);

} // namespace
