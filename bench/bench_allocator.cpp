// The allocator replay on a shredded pool: 100,000 blocks of 512 B, every other one freed (50,000 free pieces
// in the small pool that cannot merge), then 100,000 allocations and frees against it. A long real trace can
// leave a pool like this; the free set must not turn each insert into a move of the whole pool. Measured on 2
// cores: one sorted vector 1,396 ms, std::set 49 ms, the chunked set of core/src/allocator/free_set.h 21 ms.
#include "batchfit/allocator_replay.h"

#include <benchmark/benchmark.h>

using namespace batchfit;

namespace {

std::vector<AllocatorEvent> shreddedTrace() {
    std::vector<AllocatorEvent> ev;
    std::uint64_t id = 1;
    const std::uint64_t n = 100000;
    for (std::uint64_t i = 0; i < n; ++i) ev.push_back({AllocatorEvent::Kind::Alloc, id + i, 512, 0, -1});
    for (std::uint64_t i = 0; i < n; i += 2) ev.push_back({AllocatorEvent::Kind::Free, id + i, 0, 0, -1});
    id += n;
    for (std::uint64_t i = 0; i < n; ++i, ++id) {
        ev.push_back({AllocatorEvent::Kind::Alloc, id, 512 * (1 + i % 3), 0, -1});
        ev.push_back({AllocatorEvent::Kind::Free, id, 0, 0, -1});
    }
    return ev;
}

void BM_ReplayShreddedPool(benchmark::State& s) {
    const auto events = shreddedTrace();
    for (auto _ : s) benchmark::DoNotOptimize(replayAllocations(events, ReplayOptions{}));
    s.counters["events"] = static_cast<double>(events.size());
}
BENCHMARK(BM_ReplayShreddedPool)->Unit(benchmark::kMillisecond);

} // namespace
