// The allocator's free-block set (core/src/allocator/free_set.h) against std::set, the ordered container it
// replaces: the same keys in the same order after random inserts and erases across chunk splits and empty
// chunks, the same lower_bound answers, and positions before an erased key still valid (the walk
// release_available_cached_blocks makes).
#include "allocator/free_set.h"
#include "catch_compat.h"

#include <random>
#include <set>

using namespace batchfit;

namespace {

struct Order {
    bool operator()(const FreeKey& a, const FreeKey& b) const {
        return a.size != b.size ? a.size < b.size : a.addr < b.addr;
    }
};

std::vector<FreeKey> contents(const FreeSet& s) {
    std::vector<FreeKey> out;
    for (auto it = s.begin(); it != s.end(); ++it) out.push_back(*it);
    return out;
}

} // namespace

TEST_CASE("free set: keeps (size, address) order through splits and erases, as std::set does",
          "[allocator]") {
    std::mt19937_64 rng(20261202);
    FreeSet s;
    std::set<FreeKey, Order> ref;
    std::uint64_t nextAddr = 1 << 20;
    for (int round = 0; round < 20000; ++round) {
        const auto op = rng() % 10;
        if (op < 6 || ref.empty()) {
            // Few distinct sizes, as in a training step: many keys share a size and are told apart by
            // address.
            const FreeKey k{512 * (1 + rng() % 40), nextAddr, round};
            nextAddr += 4096;
            s.insert(k);
            ref.insert(k);
        } else if (op < 8) {
            auto it = ref.begin();
            std::advance(it, static_cast<long>(rng() % ref.size()));
            s.erase(*it);
            ref.erase(it);
        } else {
            const FreeKey q{512 * (rng() % 44), 0, -1};
            auto a = s.lower_bound(q);
            auto b = ref.lower_bound(q);
            REQUIRE((a == s.end()) == (b == ref.end()));
            if (b != ref.end()) {
                REQUIRE(a->addr == b->addr);
                REQUIRE(a->block == b->block);
                s.erase(a); // what get_free_block does with the block it found
                ref.erase(b);
            }
        }
        if (round % 997 == 0) REQUIRE(contents(s) == std::vector<FreeKey>(ref.begin(), ref.end()));
    }
    REQUIRE(s.size() == ref.size());
    REQUIRE(ref.size() > 2 * FreeSet::kChunk); // the run went through chunk splits
    REQUIRE(contents(s) == std::vector<FreeKey>(ref.begin(), ref.end()));
}

TEST_CASE("free set: erasing while walking down leaves the earlier positions valid", "[allocator]") {
    FreeSet s;
    const int n = 5 * static_cast<int>(FreeSet::kChunk) + 7;
    for (int i = 0; i < n; ++i) s.insert(FreeKey{std::uint64_t(i / 3 + 1) * 512, std::uint64_t(i) * 4096, i});
    // From the top down, erase every key of size >= a threshold, stepping back before each erase.
    const std::uint64_t threshold = 512 * 200;
    auto it = s.end();
    --it;
    int erased = 0;
    while (it->size >= threshold) {
        auto cur = it;
        const bool first = cur == s.begin();
        if (!first) --it;
        s.erase(cur);
        ++erased;
        if (first) break;
    }
    int expected = 0;
    for (int i = 0; i < n; ++i) expected += std::uint64_t(i / 3 + 1) * 512 >= threshold;
    REQUIRE(erased == expected);
    REQUIRE(static_cast<int>(s.size()) == n - expected);
    for (auto k : contents(s)) REQUIRE(k.size < threshold);
    // Erasing everything empties every chunk.
    while (!s.empty()) s.erase(s.begin());
    REQUIRE(s.begin() == s.end());
}
