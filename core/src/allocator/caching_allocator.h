#pragma once
// A model of one device's DeviceCachingAllocator (c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.x): blocks and
// segments with synthetic addresses, the small and large pools per stream, best fit by (size, address), the
// split and merge rules, segment growth, the retry chain before an OOM, and expandable segments. Each member
// function names the torch function it follows.
#include "allocator/free_set.h"
#include "batchfit/allocator_replay.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <optional>
#include <set>
#include <vector>

namespace batchfit {

class CachingAllocator {
public:
    CachingAllocator(const AllocatorConfig& config, std::optional<std::uint64_t> limitBytes,
                     std::optional<std::uint64_t> allowedMaximum);

    /// malloc: a block index, or nullopt when the request fails after every retry (the OOM figures are then
    /// in lastOom()).
    std::optional<int> malloc(std::uint64_t size, int stream, int tag, std::uint64_t id);
    void free(int block); ///< free + free_block (no cross-stream uses)
    void emptyCache();    ///< release_cached_blocks
    void reserve(std::size_t blocks) { m_blocks.reserve(blocks); } ///< room for this many blocks

    const AllocatorStats& stats() const { return m_stats; }
    std::uint64_t allocatedBytes() const { return m_allocated; }
    std::uint64_t reservedBytes() const { return m_reserved; }
    std::uint64_t inactiveSplitBytes() const { return m_inactiveSplit; }
    std::int64_t segmentCount() const;

    struct Oom {
        std::uint64_t requested = 0, tried = 0, allocated = 0, reserved = 0;
    };
    const Oom& lastOom() const { return m_oom; }
    std::vector<SegmentView> snapshot() const;

private:
    struct Block {
        std::uint64_t addr = 0, size = 0, requested = 0, id = 0;
        int prev = -1, next = -1;
        int pool = -1;    ///< index into m_pools
        int segment = -1; ///< index into m_segments
        int tag = -1;
        std::uint64_t gcBase = 0;
        bool allocated = false, mapped = true, live = true;
        bool expandable =
            false; ///< its segment's kind, copied into every piece (read on every malloc and free)
    };
    using Key = FreeKey;
    struct Pool {
        explicit Pool(std::pmr::memory_resource* r) : unmapped(r) {}
        int stream = 0;
        bool small = false;
        FreeSet blocks;                                        ///< free mapped blocks
        std::pmr::set<std::pair<std::uint64_t, int>> unmapped; ///< expandable: (address, block)
        std::uint64_t freeCalls = 0;                           ///< get_free_blocks_call_count (GC ages)
    };
    struct Segment {
        std::uint64_t base = 0, size = 0; ///< size: the cudaMalloc'd bytes, or the expandable range
        int pool = -1;
        bool expandable = false, live = true;
    };

    AllocatorConfig m_config;
    std::pmr::unsynchronized_pool_resource
        m_nodes;                            ///< the unmapped sets' nodes (before m_pools: outlives them)
    std::optional<std::uint64_t> m_limit;   ///< cudaMalloc succeeds while reserved + size <= limit
    std::optional<std::uint64_t> m_allowed; ///< set_per_process_memory_fraction
    std::vector<Block> m_blocks;
    std::vector<int> m_freeSlots;
    std::vector<Pool> m_pools;
    std::map<std::pair<int, bool>, int> m_poolIndex;
    int m_stream0[2] = {-1, -1}; ///< the default stream's large and small pools (most traces use no other)
    std::vector<Segment> m_segments;
    std::uint64_t m_nextAddress = std::uint64_t{1} << 40;
    std::uint64_t m_allocated = 0, m_reserved = 0, m_requested = 0, m_inactiveSplit = 0;
    std::int64_t m_liveSegments = 0;
    std::int64_t m_mappedRuns = 0; ///< expandable segments: contiguous mapped ranges
    AllocatorStats m_stats;
    Oom m_oom;

    int pool(int stream, bool small);
    int newBlock(const Block& b);
    int newSegment(int pool, std::uint64_t size, bool expandable);
    int insertBefore(int b, Block piece);
    int insertAfter(int b, Block piece);
    void deleteBlock(int b);
    void insertFree(int b);
    void eraseFree(int b);
    bool isSplit(int b) const;
    bool canDrive(std::uint64_t bytes) const; // the driver (or the memory fraction) gives `bytes` more
    void grow(std::uint64_t bytes);
    void shrink(std::uint64_t bytes);
    void updatePeaks();

    std::optional<int> getFreeBlock(int pool, std::uint64_t size);
    bool shouldSplit(int b, std::uint64_t size) const;
    int allocFoundBlock(int b, std::uint64_t size, std::uint64_t requested, bool split);
    std::optional<int> allocBlock(int pool, std::uint64_t size, std::uint64_t allocSize);
    bool releaseAvailableCachedBlocks(int pool, std::uint64_t size);
    void releaseCachedBlocks();
    void releaseBlocks(int pool);
    void releaseBlock(int b);
    void garbageCollect();
    std::uint64_t tryMerge(int dst, int src);
    // Expandable segments.
    std::optional<int> tryAllocateExpandable(int pool, std::uint64_t size);
    int findExpandableBlock(int pool, std::uint64_t size);
    bool mapBlock(int b, std::uint64_t size);
    void unmapBlock(int b);
    std::uint64_t pageSize(int pool) const;
};

} // namespace batchfit
