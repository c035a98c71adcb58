// The caching-allocator replay, walked through hand-worked cases. Each case cites the function of
// c10/cuda/CUDACachingAllocator.cpp (PyTorch 2.5, pytorch@001074d2) whose rule it checks; the expected
// figures are worked out by hand from those rules (docs/memory-model.md section 6), not taken from our
// output.
#include "batchfit/allocator_replay.h"
#include "catch_compat.h"

using namespace batchfit;

namespace {

constexpr std::uint64_t MiB = 1024 * 1024;

struct Trace {
    std::vector<AllocatorEvent> events;
    std::uint64_t next = 1;
    std::uint64_t alloc(std::uint64_t size) {
        events.push_back({AllocatorEvent::Kind::Alloc, next, size, 0, -1});
        return next++;
    }
    void free(std::uint64_t id) { events.push_back({AllocatorEvent::Kind::Free, id, 0, 0, -1}); }
    void emptyCache() { events.push_back({AllocatorEvent::Kind::EmptyCache, 0, 0, 0, -1}); }
};

ReplayResult run(const Trace& t, const std::string& conf = "", std::optional<std::uint64_t> limit = {},
                 std::optional<double> fraction = {}) {
    ReplayOptions o;
    auto c = parseAllocConf(conf);
    REQUIRE(c.ok());
    o.config = *c;
    o.limitBytes = limit;
    o.memoryFraction = fraction;
    if (limit) o.capacityBytes = *limit;
    o.snapshotAfter = t.events.empty() ? 0 : t.events.size() - 1;
    auto r = replayAllocations(t.events, o);
    if (!r) FAIL(r.error().message);
    return *r;
}

} // namespace

TEST_CASE("round_size and get_allocation_size follow torch 2.5", "[allocator]") {
    AllocatorConfig d;
    CHECK(allocatorRoundSize(1, d) == 512); // kMinBlockSize
    CHECK(allocatorRoundSize(513, d) == 1024);
    CHECK(allocatorRoundSize(5'000'000, d) == 5'000'192); // 9766 blocks of 512 B
    AllocatorConfig four = *parseAllocConf("roundup_power2_divisions:4");
    // roundup_power2_next_division: floor 4 MiB, a quarter of it is 1 MiB, so 5,000,000 -> 5 MiB.
    CHECK(allocatorRoundSize(5'000'000, four) == 5 * MiB);
    CHECK(allocatorRoundSize(1200, four) == 1536);       // not above 512 x 4: plain 512-byte rounding
    CHECK(allocatorRoundSize(4 * MiB, four) == 4 * MiB); // powers of two stay
    // 2.5's `divisions > 1`: one division means 512-byte rounding, not an unrounded size.
    CHECK(allocatorRoundSize(5'000'001, *parseAllocConf("roundup_power2_divisions:1")) == 5'000'192);
    CHECK(allocatorSegmentSize(512) == 2 * MiB);        // kSmallBuffer
    CHECK(allocatorSegmentSize(MiB + 512) == 20 * MiB); // kLargeBuffer below kMinLargeAlloc
    CHECK(allocatorSegmentSize(10 * MiB) == 10 * MiB);  // rounded to kRoundLarge
    CHECK(allocatorSegmentSize(11'739'136) == 12 * MiB);
}

TEST_CASE("a 1-byte request: 512 B allocated, one 2 MiB small segment (malloc, alloc_found_block)",
          "[allocator]") {
    Trace t;
    t.alloc(1);
    auto r = run(t);
    CHECK(r.stats.peakAllocatedBytes == 512);
    CHECK(r.stats.peakReservedBytes == 2 * MiB);
    CHECK(r.stats.peakRequestedBytes == 1);
    CHECK(r.stats.peakSegments == 1);
    REQUIRE(r.segments.size() == 1);
    CHECK(r.segments[0].smallPool);
    REQUIRE(r.segments[0].blocks.size() == 2); // split: remainder >= 512 B in the small pool
    CHECK(r.segments[0].blocks[1].size == 2 * MiB - 512);
    CHECK_FALSE(r.segments[0].blocks[1].allocated);
}

TEST_CASE("an 11.2 MiB request is not split: its 12 MiB segment is allocated whole (should_split)",
          "[allocator]") {
    Trace t;
    t.alloc(11'739'136);
    auto r = run(t);
    CHECK(r.stats.peakAllocatedBytes == 12 * MiB); // the 843,776 B remainder is not above 1 MiB
    CHECK(r.stats.peakReservedBytes == 12 * MiB);
    CHECK(r.stats.peakRequestedBytes == 11'739'136);
    REQUIRE(r.segments.size() == 1);
    CHECK(r.segments[0].blocks.size() == 1);
}

TEST_CASE("fragmentation: a freed block pinned in a split segment stays reserved (free_block, "
          "release_cached_blocks)",
          "[allocator]") {
    Trace t;
    const auto a = t.alloc(8 * MiB); // a 20 MiB segment: A, 12 MiB free
    t.alloc(8 * MiB);                // best fit: the 12 MiB block, split again: B, 4 MiB free
    t.free(a);                       // no merge: B is live
    t.alloc(10 * MiB);               // nothing free is 10 MiB: a new 10 MiB segment
    auto r = run(t);
    CHECK(r.stats.finalAllocatedBytes == 18 * MiB);
    CHECK(r.stats.finalReservedBytes == 30 * MiB);
    CHECK(r.stats.peakInactiveSplitBytes == 12 * MiB);
    CHECK(r.stats.finalSegments == 2);

    SECTION("empty_cache frees nothing: both free pieces belong to a split segment") {
        t.emptyCache();
        CHECK(run(t).stats.finalReservedBytes == 30 * MiB);
    }
    SECTION("with 40 MiB for cudaMalloc, 12 MiB more is an OOM with torch's figures") {
        t.alloc(12 * MiB);
        auto o = run(t, "", 40 * MiB);
        REQUIRE(o.oom);
        CHECK(o.oom->eventIndex == 4);
        CHECK(o.oom->triedBytes == 12 * MiB);
        CHECK(o.oom->allocatedBytes == 18 * MiB);
        CHECK(o.oom->reservedBytes == 30 * MiB);
        CHECK(o.stats.allocRetries == 1); // release_cached_blocks ran, then the last alloc_block failed
        CHECK(o.oom->message.find("Tried to allocate 12.00 MiB") != std::string::npos);
        CHECK(o.oom->message.find("18.00 MiB is allocated by PyTorch, and 12.00 MiB is reserved by PyTorch "
                                  "but unallocated") != std::string::npos);
        CHECK(o.oom->message.find("total capacity of 40.00 MiB of which 10.00 MiB is free") !=
              std::string::npos);
    }
}

TEST_CASE("the same under expandable segments: one range, 20 MiB pages, exact splits (map_block, "
          "try_allocate_expandable_block, unmap_block)",
          "[allocator]") {
    Trace t;
    const auto a = t.alloc(8 * MiB); // maps page [0, 20): A = [0, 8)
    t.alloc(8 * MiB);                // B = [8, 16), free [16, 20)
    t.free(a);                       // free [0, 8)
    t.alloc(10 * MiB);               // maps [20, 40), merged with [16, 20): C = [16, 26), free [26, 40)
    auto r = run(t, "expandable_segments:True");
    CHECK(r.stats.finalAllocatedBytes == 18 * MiB);
    CHECK(r.stats.finalReservedBytes == 40 * MiB);
    CHECK(r.stats.peakInactiveSplitBytes == 0); // not tracked for expandable segments
    CHECK(r.stats.deviceAllocs == 2);           // two page maps
    REQUIRE(r.segments.size() == 1);            // one contiguous mapped range
    CHECK(r.stats.finalSegments == 1);
    CHECK(r.segments[0].expandable);
    CHECK(r.segments[0].size == 40 * MiB);
    REQUIRE(r.segments[0].blocks.size() == 4);
    CHECK(r.segments[0].blocks[2].offset == 16 * MiB);
    CHECK(r.segments[0].blocks[2].size == 10 * MiB); // exact: no 1 MiB remainder rule
    SECTION("empty_cache unmaps no page: neither free piece holds a whole one") {
        t.emptyCache();
        CHECK(run(t, "expandable_segments:True").stats.finalReservedBytes == 40 * MiB);
    }
    SECTION("a whole free page in the middle is unmapped once everything around it is freed") {
        Trace u;
        const auto x = u.alloc(30 * MiB); // pages [0, 40): X = [0, 30), free [30, 40)
        u.alloc(5 * MiB);                 // Y = [30, 35)
        u.free(x);                        // free [0, 30): page [0, 20) is whole
        u.emptyCache();
        auto e = run(u, "expandable_segments:True");
        CHECK(e.stats.finalReservedBytes == 20 * MiB);
        REQUIRE(e.segments.size() == 1); // [20, 40) stays mapped: it holds Y
        CHECK(e.segments[0].size == 20 * MiB);
        CHECK(e.stats.finalSegments == 1);
        CHECK(e.stats.peakSegments == 1);
    }
}

TEST_CASE("max_split_size_mb: oversize blocks are neither split nor given to small requests "
          "(get_free_block, release_available_cached_blocks)",
          "[allocator]") {
    Trace t;
    const auto big = t.alloc(150 * MiB);
    t.free(big);
    t.alloc(120 * MiB); // 150 >= 120 + 20: refused, a new 120 MiB segment
    t.alloc(50 * MiB);  // 50 < 100 <= 150: refused, a new 50 MiB segment
    auto r = run(t, "max_split_size_mb:100");
    CHECK(r.stats.finalReservedBytes == (150 + 120 + 50) * MiB);
    CHECK(r.stats.finalAllocatedBytes == 170 * MiB);
    SECTION("without the option the 150 MiB block serves the 120 MiB request whole... and is split") {
        auto d = run(t);
        // should_split: 30 MiB remainder > 1 MiB, so 120 + 30 free; the 50 MiB request gets a new segment
        // (the 30 MiB piece is too small).
        CHECK(d.stats.finalReservedBytes == 200 * MiB);
    }
    SECTION("short of memory, the oversize block is released before the cache is emptied") {
        Trace u;
        const auto b = u.alloc(150 * MiB);
        u.free(b);
        u.alloc(120 * MiB);
        auto s = run(u, "max_split_size_mb:100", 200 * MiB);
        CHECK_FALSE(s.oom);
        CHECK(s.stats.finalReservedBytes == 120 * MiB);
        CHECK(s.stats.allocRetries == 0); // release_available_cached_blocks was enough
    }
}

TEST_CASE("garbage_collection_threshold frees the oldest whole blocks before cudaMalloc "
          "(garbage_collect_cached_blocks)",
          "[allocator]") {
    Trace t;
    const auto a = t.alloc(30 * MiB);
    t.free(a);
    const auto c = t.alloc(40 * MiB);
    t.free(c);
    t.alloc(45 * MiB); // a 46 MiB segment; over the 50 MiB threshold: A (age 2) goes, C (age 1) stays
    auto gc = run(t, "garbage_collection_threshold:0.5", 100 * MiB, 1.0);
    CHECK(gc.stats.finalReservedBytes == (40 + 46) * MiB);
    CHECK(gc.stats.allocRetries == 0);
    // Without a memory fraction the threshold does nothing, as in torch; the 100 MiB limit then needs the
    // last retry, which frees both cached segments.
    auto plain = run(t, "garbage_collection_threshold:0.5", 100 * MiB);
    CHECK(plain.stats.finalReservedBytes == 46 * MiB);
    CHECK(plain.stats.allocRetries == 1);
}

TEST_CASE("blocks merge with free neighbours of the same segment only (try_merge_blocks)", "[allocator]") {
    Trace t;
    const auto a = t.alloc(4 * MiB); // 20 MiB segment: A [0, 4), rest 16 free
    const auto b = t.alloc(4 * MiB); // B [4, 8), 12 free
    t.free(a);
    t.free(b); // merges with A and with the 12 MiB tail: one whole 20 MiB block
    t.emptyCache();
    auto r = run(t);
    CHECK(r.stats.finalReservedBytes == 0);
    CHECK(r.stats.deviceFrees == 1);
    CHECK(r.segments.empty());
}

TEST_CASE("PYTORCH_CUDA_ALLOC_CONF parsing (CUDAAllocatorConfig::parseArgs)", "[allocator]") {
    auto c = parseAllocConf("expandable_segments:True, max_split_size_mb:128");
    REQUIRE(c.ok());
    CHECK(c->expandableSegments);
    CHECK(c->maxSplitSize == 128 * MiB);
    CHECK(allocConfText(*c) == "expandable_segments:True,max_split_size_mb:128");
    CHECK(parseAllocConf(allocConfText(*c)).value() == *c);
    CHECK(parseAllocConf("").value().isDefault());

    // The list form: the first entry also fills the intervals below it; '>' fills from the last listed
    // interval inclusive (2.1-2.8), so 1024:4 is overwritten by 8.
    auto l = parseAllocConf("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]");
    REQUIRE(l.ok());
    CHECK(l->roundupDivisions[0] == 1);
    CHECK(l->roundupDivisions[8] == 1);
    CHECK(l->roundupDivisions[9] == 2);
    CHECK(l->roundupDivisions[10] == 8);
    CHECK(l->roundupDivisions[15] == 8);
    CHECK(parseAllocConf(allocConfText(*l)).value() == *l);

    CHECK_FALSE(parseAllocConf("max_split_size_mb:20").ok()); // must be > 20
    CHECK_FALSE(parseAllocConf("garbage_collection_threshold:1.0").ok());
    CHECK_FALSE(parseAllocConf("roundup_power2_divisions:3").ok());
    CHECK_FALSE(parseAllocConf("backend:cudaMallocAsync").ok());
    auto bad = parseAllocConf("expandable_segment:True");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("Unrecognized CachingAllocator option: expandable_segment") !=
          std::string::npos);
    CHECK(parseAllocConf("release_lock_on_cudamalloc:True").ok());
}

TEST_CASE("malformed traces are errors; absurd sizes are OOMs, as torch reports them", "[allocator]") {
    Trace t;
    t.free(7);
    ReplayOptions o;
    auto r = replayAllocations(t.events, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("event 0: free of id 7") != std::string::npos);

    Trace twice;
    twice.events.push_back({AllocatorEvent::Kind::Alloc, 1, 512, 0, -1});
    twice.events.push_back({AllocatorEvent::Kind::Alloc, 1, 512, 0, -1});
    CHECK_FALSE(replayAllocations(twice.events, o).ok());

    Trace huge;
    huge.alloc(std::uint64_t{1} << 61);
    auto h = replayAllocations(huge.events, o);
    REQUIRE(h.ok());
    REQUIRE(h->oom);
    CHECK(h->oom->message == "CUDA out of memory. Tried to allocate more than 1EB memory.");

    Trace zero;
    const auto z = zero.alloc(0); // torch never calls the allocator for 0 bytes
    zero.free(z);
    auto zr = replayAllocations(zero.events, o);
    REQUIRE(zr.ok());
    CHECK(zr->stats.peakReservedBytes == 0);
}

TEST_CASE("format_size", "[allocator]") {
    CHECK(formatTorchSize(512) == "512 bytes");
    CHECK(formatTorchSize(1024) == "1024 bytes");
    CHECK(formatTorchSize(2048) == "2.00 KiB");
    CHECK(formatTorchSize(20 * MiB) == "20.00 MiB");
    CHECK(formatTorchSize(1536 * MiB) == "1.50 GiB");
}

TEST_CASE("a cuDNN workspace that cannot be allocated falls back instead of failing the step",
          "[allocator][cudnn]") {
    // Conv_v8.cpp try_configs catches the OutOfMemoryError of a plan's workspace and runs the next plan: the
    // replay drops an elastic allocation it cannot place (after freeing its cache) and counts a fallback.
    constexpr std::uint64_t MiB = 1ull << 20;
    auto ev = [](AllocatorEvent::Kind k, std::uint64_t id, std::uint64_t size, bool elastic = false) {
        return AllocatorEvent{k, id, size, 0, -1, elastic};
    };
    using K = AllocatorEvent::Kind;
    std::vector<AllocatorEvent> events{ev(K::Alloc, 1, 60 * MiB), ev(K::Alloc, 2, 100 * MiB, true),
                                       ev(K::Free, 2, 0), ev(K::Alloc, 3, 20 * MiB)};
    ReplayOptions o;
    o.limitBytes = 100 * MiB;
    auto r = replayAllocations(events, o);
    REQUIRE(r.ok());
    CHECK_FALSE(r->oom);
    CHECK(r->workspaceFallbacks == 1);
    CHECK(r->workspaceFallbackBytes == 100 * MiB);
    CHECK(r->stats.peakAllocatedBytes == 80 * MiB); // the workspace never existed
    events[1].elastic = false; // the same request as an ordinary tensor is an out-of-memory error
    auto hard = replayAllocations(events, o);
    REQUIRE(hard.ok());
    CHECK(hard->oom);
    CHECK(hard->workspaceFallbacks == 0);
    // And on a GPU large enough it is allocated like any block, and counted.
    o.limitBytes.reset();
    events[1].elastic = true;
    auto big = replayAllocations(events, o);
    REQUIRE(big.ok());
    CHECK(big->workspaceFallbacks == 0);
    CHECK(big->stats.peakAllocatedBytes == 160 * MiB);
}
