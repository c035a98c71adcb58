#include "allocator/caching_allocator.h"

#include <algorithm>
#include <bit>

namespace batchfit {

namespace {
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
}

namespace {
constexpr std::uint64_t kMinBlockSize = 512;
constexpr std::uint64_t kSmallSize = kMiB;
constexpr std::uint64_t kSmallBuffer = 2 * kMiB;
constexpr std::uint64_t kLargeBuffer = 20 * kMiB;
constexpr std::uint64_t kMinLargeAlloc = 10 * kMiB;
constexpr std::uint64_t kRoundLarge = 2 * kMiB;

std::uint64_t roundUp(std::uint64_t n, std::uint64_t unit) {
    return (n + unit - 1) / unit * unit;
}

// roundup_power2_next_division (2.5).
std::uint64_t nextDivision(std::uint64_t size, std::uint64_t divisions) {
    if (std::has_single_bit(size)) return size;
    const std::uint64_t floor2 = std::bit_floor(size);
    const std::uint64_t step = floor2 >> (std::bit_width(divisions) - 1);
    if (step == 0) return floor2 << 1;
    const std::uint64_t down = size & ~(step - 1);
    return down == size ? size : down + step;
}
} // namespace

// round_size (2.5: divisions > 1 rounds to the next division, otherwise to 512 bytes).
std::uint64_t allocatorRoundSize(std::uint64_t n, const AllocatorConfig& config) {
    if (n < kMinBlockSize) return kMinBlockSize;
    const int log = std::bit_width(n) - 1;
    const std::size_t index = std::min<std::size_t>(log > 20 ? static_cast<std::size_t>(log - 20) : 0, 15);
    const std::uint64_t d = config.roundupDivisions[index];
    if (d > 1 && n > kMinBlockSize * d) return nextDivision(n, d);
    return roundUp(n, kMinBlockSize);
}

// get_allocation_size.
std::uint64_t allocatorSegmentSize(std::uint64_t size) {
    if (size <= kSmallSize) return kSmallBuffer;
    if (size < kMinLargeAlloc) return kLargeBuffer;
    return roundUp(size, kRoundLarge);
}

CachingAllocator::CachingAllocator(const AllocatorConfig& config, std::optional<std::uint64_t> limitBytes,
                                   std::optional<std::uint64_t> allowedMaximum)
    : m_config(config), m_limit(limitBytes), m_allowed(allowedMaximum) {}

int CachingAllocator::pool(int stream, bool small) {
    if (stream == 0 && m_stream0[small] >= 0) return m_stream0[small];
    auto [it, inserted] = m_poolIndex.try_emplace({stream, small}, static_cast<int>(m_pools.size()));
    if (inserted) {
        Pool p(&m_nodes);
        p.stream = stream;
        p.small = small;
        m_pools.push_back(std::move(p));
    }
    if (stream == 0) m_stream0[small] = it->second;
    return it->second;
}

int CachingAllocator::newBlock(const Block& b) {
    if (!m_freeSlots.empty()) {
        const int i = m_freeSlots.back();
        m_freeSlots.pop_back();
        m_blocks[static_cast<std::size_t>(i)] = b;
        return i;
    }
    m_blocks.push_back(b);
    return static_cast<int>(m_blocks.size() - 1);
}

// Links a new block into a segment's chain just before / after block b (Block::splice in torch).
int CachingAllocator::insertBefore(int b, Block piece) {
    piece.next = b;
    piece.prev = m_blocks[static_cast<std::size_t>(b)].prev;
    const int f = newBlock(piece);
    if (piece.prev >= 0) m_blocks[static_cast<std::size_t>(piece.prev)].next = f;
    m_blocks[static_cast<std::size_t>(b)].prev = f;
    return f;
}

int CachingAllocator::insertAfter(int b, Block piece) {
    piece.prev = b;
    piece.next = m_blocks[static_cast<std::size_t>(b)].next;
    const int f = newBlock(piece);
    if (piece.next >= 0) m_blocks[static_cast<std::size_t>(piece.next)].prev = f;
    m_blocks[static_cast<std::size_t>(b)].next = f;
    return f;
}

void CachingAllocator::deleteBlock(int b) {
    m_blocks[static_cast<std::size_t>(b)].live = false;
    m_freeSlots.push_back(b);
}

void CachingAllocator::insertFree(int b) {
    auto& blk = m_blocks[static_cast<std::size_t>(b)];
    auto& p = m_pools[static_cast<std::size_t>(blk.pool)];
    blk.gcBase = p.freeCalls; // insert_into_blocks sets gc_count_base
    p.blocks.insert(Key{blk.size, blk.addr, b});
}

void CachingAllocator::eraseFree(int b) {
    const auto& blk = m_blocks[static_cast<std::size_t>(b)];
    m_pools[static_cast<std::size_t>(blk.pool)].blocks.erase(Key{blk.size, blk.addr, b});
}

bool CachingAllocator::isSplit(int b) const {
    const auto& blk = m_blocks[static_cast<std::size_t>(b)];
    return blk.prev >= 0 || blk.next >= 0;
}

bool CachingAllocator::canDrive(std::uint64_t bytes) const {
    return !m_limit || (m_reserved <= *m_limit && bytes <= *m_limit - m_reserved);
}

void CachingAllocator::grow(std::uint64_t bytes) {
    m_reserved += bytes;
    ++m_stats.deviceAllocs;
    updatePeaks();
}

void CachingAllocator::shrink(std::uint64_t bytes) {
    m_reserved -= bytes;
    ++m_stats.deviceFrees;
}

std::int64_t CachingAllocator::segmentCount() const {
    // Expandable segments count one segment per contiguous mapped range, as memory_snapshot() reports them.
    return m_liveSegments + m_mappedRuns;
}

void CachingAllocator::updatePeaks() {
    auto& s = m_stats;
    if (m_allocated > s.peakAllocatedBytes) {
        s.peakAllocatedBytes = m_allocated;
        s.reservedAtAllocatedPeak = m_reserved;
    }
    if (m_reserved > s.peakReservedBytes) {
        s.peakReservedBytes = m_reserved;
        s.peakSegments =
            std::max(s.peakSegments, m_config.expandableSegments ? segmentCount() : m_liveSegments);
    }
    s.peakSegments = std::max(s.peakSegments, m_liveSegments);
    s.peakRequestedBytes = std::max(s.peakRequestedBytes, m_requested);
    s.peakInactiveSplitBytes = std::max(s.peakInactiveSplitBytes, m_inactiveSplit);
}

// get_free_block: the smallest free block of the pool that is large enough, lowest address first, with the
// expandable tail rule and the oversize rules (max_split_size, max_non_split_rounding).
std::optional<int> CachingAllocator::getFreeBlock(int poolIndex, std::uint64_t size) {
    auto& p = m_pools[static_cast<std::size_t>(poolIndex)];
    if (m_allowed && m_config.garbageCollectionThreshold > 0) ++p.freeCalls;
    auto it = p.blocks.lower_bound(Key{size, 0, -1});
    if (it == p.blocks.end()) return std::nullopt;
    auto isExpandable = [&](int b) { return m_blocks[static_cast<std::size_t>(b)].expandable; };
    if (m_config.expandableSegments && isExpandable(it->block)) {
        auto expandableSize = [&](int b) {
            const auto& blk = m_blocks[static_cast<std::size_t>(b)];
            const bool tail = blk.next >= 0 && !m_blocks[static_cast<std::size_t>(blk.next)].mapped;
            return blk.size + (tail ? m_blocks[static_cast<std::size_t>(blk.next)].size : 0);
        };
        auto next = std::next(it);
        while (isExpandable(it->block) && next != p.blocks.end() &&
               expandableSize(next->block) < expandableSize(it->block)) {
            ++it;
            ++next;
        }
    }
    const std::uint64_t ms = m_config.maxSplitSize;
    if (size < ms && it->size >= ms) return std::nullopt;
    if (size >= ms && it->size >= size + m_config.maxNonSplitRounding) return std::nullopt;
    const int b = it->block;
    p.blocks.erase(it);
    return b;
}

// should_split.
bool CachingAllocator::shouldSplit(int b, std::uint64_t size) const {
    const auto& blk = m_blocks[static_cast<std::size_t>(b)];
    const std::uint64_t rem = blk.size - size;
    if (m_pools[static_cast<std::size_t>(blk.pool)].small || m_config.expandableSegments)
        return rem >= kMinBlockSize;
    return size < m_config.maxSplitSize && rem > kSmallSize;
}

// alloc_found_block: the front of the block is handed out; the remainder goes back to the pool.
int CachingAllocator::allocFoundBlock(int b, std::uint64_t size, std::uint64_t requested, bool split) {
    const bool alreadySplit = isSplit(b);
    const bool expandable = m_blocks[static_cast<std::size_t>(b)].expandable;
    int out = b;
    if (split) {
        Block front = m_blocks[static_cast<std::size_t>(b)];
        front.size = size;
        out = insertBefore(b, front);
        auto& rem = m_blocks[static_cast<std::size_t>(b)];
        rem.addr += size;
        rem.size -= size;
        insertFree(b);
        if (!expandable) {
            if (alreadySplit)
                m_inactiveSplit -= size;
            else
                m_inactiveSplit += rem.size;
        }
    } else if (alreadySplit && !expandable) {
        m_inactiveSplit -= m_blocks[static_cast<std::size_t>(b)].size;
    }
    auto& blk = m_blocks[static_cast<std::size_t>(out)];
    blk.allocated = true;
    blk.requested = requested;
    m_allocated += blk.size;
    m_requested += requested;
    updatePeaks();
    return out;
}

// alloc_block: the memory-fraction check, then expandable growth or a new cudaMalloc'd segment.
std::optional<int> CachingAllocator::allocBlock(int poolIndex, std::uint64_t size, std::uint64_t allocSize) {
    if (m_allowed && (m_reserved > *m_allowed || allocSize > *m_allowed - m_reserved)) return std::nullopt;
    if (m_config.expandableSegments) return tryAllocateExpandable(poolIndex, size);
    if (!canDrive(allocSize) || m_nextAddress > ~std::uint64_t{0} - allocSize) return std::nullopt;
    const int b = newSegment(poolIndex, allocSize, false);
    ++m_liveSegments;
    grow(allocSize);
    return b;
}

// A segment at the next synthetic address, covered by one free block (unmapped for an expandable range).
int CachingAllocator::newSegment(int poolIndex, std::uint64_t size, bool expandable) {
    Segment seg;
    seg.base = m_nextAddress;
    seg.size = size;
    seg.pool = poolIndex;
    seg.expandable = expandable;
    m_nextAddress += size;
    m_segments.push_back(seg);
    Block blk;
    blk.addr = seg.base;
    blk.size = size;
    blk.pool = poolIndex;
    blk.segment = static_cast<int>(m_segments.size() - 1);
    blk.mapped = !expandable;
    blk.expandable = expandable;
    return newBlock(blk);
}

// release_block: cudaFree of a whole segment.
void CachingAllocator::releaseBlock(int b) {
    const auto& blk = m_blocks[static_cast<std::size_t>(b)];
    eraseFree(b);
    m_segments[static_cast<std::size_t>(blk.segment)].live = false;
    --m_liveSegments;
    shrink(blk.size);
    deleteBlock(b);
}

// release_available_cached_blocks: only with max_split_size_mb; frees oversize whole segments.
bool CachingAllocator::releaseAvailableCachedBlocks(int poolIndex, std::uint64_t size) {
    if (m_config.maxSplitSize == std::numeric_limits<std::uint64_t>::max()) return false;
    auto& p = m_pools[static_cast<std::size_t>(poolIndex)];
    const std::uint64_t key = std::max(size, m_config.maxSplitSize);
    auto isExpandable = [&](int b) { return m_blocks[static_cast<std::size_t>(b)].expandable; };
    auto it = p.blocks.lower_bound(Key{key, 0, -1});
    if (it != p.blocks.end() && !isExpandable(it->block)) {
        releaseBlock(it->block);
        return true;
    }
    if (it == p.blocks.begin()) return false;
    std::uint64_t released = 0;
    --it;
    while (released < key && it->size >= m_config.maxSplitSize) {
        auto cur = it;
        const bool first = cur == p.blocks.begin();
        if (!first) --it;
        if (!isExpandable(cur->block)) {
            released += cur->size;
            releaseBlock(cur->block);
        }
        if (first) break;
    }
    return released >= key;
}

// garbage_collect_cached_blocks (only with a memory fraction and garbage_collection_threshold).
void CachingAllocator::garbageCollect() {
    const auto threshold =
        static_cast<std::uint64_t>(m_config.garbageCollectionThreshold * static_cast<double>(*m_allowed));
    if (m_reserved <= threshold) return;
    const std::uint64_t target = m_reserved - threshold;
    std::uint64_t reclaimed = 0;
    auto candidates = [&] {
        std::vector<int> out;
        for (std::size_t pi = 0; pi < m_pools.size(); ++pi) {
            if (m_pools[pi].small) continue;
            for (const auto& k : m_pools[pi].blocks)
                if (!isSplit(k.block) && !m_blocks[static_cast<std::size_t>(k.block)].expandable)
                    out.push_back(k.block);
        }
        return out;
    };
    auto age = [&](int b) {
        const auto& blk = m_blocks[static_cast<std::size_t>(b)];
        return m_pools[static_cast<std::size_t>(blk.pool)].freeCalls - blk.gcBase;
    };
    auto blocks = candidates();
    std::uint64_t totalAge = 0;
    for (int b : blocks) totalAge += age(b);
    std::size_t count = blocks.size();
    bool freed = true;
    while (reclaimed < target && freed && count > 0) {
        const double mean = static_cast<double>(totalAge) / static_cast<double>(count);
        freed = false;
        for (int b : candidates()) {
            if (static_cast<double>(age(b)) >= mean) {
                freed = true;
                reclaimed += m_blocks[static_cast<std::size_t>(b)].size;
                totalAge -= age(b);
                --count;
                releaseBlock(b);
            }
        }
    }
}

// try_merge_blocks: src joins dst when it is free and in the same mapped state.
std::uint64_t CachingAllocator::tryMerge(int dst, int src) {
    if (src < 0) return 0;
    auto& s = m_blocks[static_cast<std::size_t>(src)];
    auto& d = m_blocks[static_cast<std::size_t>(dst)];
    if (s.allocated || s.mapped != d.mapped) return 0;
    if (s.mapped)
        eraseFree(src);
    else
        m_pools[static_cast<std::size_t>(s.pool)].unmapped.erase({s.addr, src});
    if (d.prev == src) {
        d.addr = s.addr;
        d.prev = s.prev;
        if (d.prev >= 0) m_blocks[static_cast<std::size_t>(d.prev)].next = dst;
    } else {
        d.next = s.next;
        if (d.next >= 0) m_blocks[static_cast<std::size_t>(d.next)].prev = dst;
    }
    const std::uint64_t subsumed = s.size;
    d.size += subsumed;
    deleteBlock(src);
    return subsumed;
}

// free + free_block.
void CachingAllocator::free(int b) {
    auto& blk = m_blocks[static_cast<std::size_t>(b)];
    blk.allocated = false;
    m_allocated -= blk.size;
    m_requested -= blk.requested;
    const bool expandable = blk.expandable;
    const int candidates[2] = {blk.prev, blk.next};
    for (int c : candidates) {
        const std::uint64_t subsumed = tryMerge(b, c);
        if (subsumed > 0 && !expandable) m_inactiveSplit -= subsumed;
    }
    insertFree(b);
    if (isSplit(b) && !expandable) m_inactiveSplit += m_blocks[static_cast<std::size_t>(b)].size;
    updatePeaks();
}

// malloc: round_size, get_pool, get_free_block, then the retry chain of section 5.1 of the specification.
std::optional<int> CachingAllocator::malloc(std::uint64_t size, int stream, int tag, std::uint64_t id) {
    const std::uint64_t rounded = allocatorRoundSize(size, m_config);
    const int p = pool(stream, rounded <= kSmallSize);
    const std::uint64_t allocSize = allocatorSegmentSize(rounded);
    auto b = getFreeBlock(p, rounded);
    if (!b) {
        // trigger_free_memory_callbacks only collects CUDA IPC memory: nothing in one process.
        if (m_allowed && m_config.garbageCollectionThreshold > 0) garbageCollect();
        b = allocBlock(p, rounded, allocSize);
        if (!b && releaseAvailableCachedBlocks(p, rounded)) b = allocBlock(p, rounded, allocSize);
        if (!b) {
            releaseCachedBlocks();
            ++m_stats.allocRetries;
            b = allocBlock(p, rounded, allocSize);
        }
    }
    if (!b) {
        m_oom = Oom{size, allocSize, m_allocated, m_reserved};
        return std::nullopt;
    }
    const int out = allocFoundBlock(*b, rounded, size, shouldSplit(*b, rounded));
    auto& blk = m_blocks[static_cast<std::size_t>(out)];
    blk.tag = tag;
    blk.id = id;
    ++m_stats.allocations;
    return out;
}

void CachingAllocator::emptyCache() {
    releaseCachedBlocks();
}

// release_cached_blocks: every whole free segment of every pool and stream goes back; expandable segments
// unmap their whole free pages.
void CachingAllocator::releaseCachedBlocks() {
    for (std::size_t p = 0; p < m_pools.size(); ++p) releaseBlocks(static_cast<int>(p));
}

void CachingAllocator::releaseBlocks(int poolIndex) {
    auto& p = m_pools[static_cast<std::size_t>(poolIndex)];
    std::vector<int> wholeSegments, toUnmap;
    for (const auto& k : p.blocks) {
        const auto& blk = m_blocks[static_cast<std::size_t>(k.block)];
        if (blk.expandable)
            toUnmap.push_back(k.block);
        else if (blk.prev < 0 && blk.next < 0)
            wholeSegments.push_back(k.block);
    }
    for (int b : wholeSegments) releaseBlock(b);
    for (int b : toUnmap) {
        unmapBlock(b);
        auto& blk = m_blocks[static_cast<std::size_t>(b)];
        if (blk.live && !blk.mapped && blk.prev < 0 && blk.next < 0) {
            // release_expandable_segment: the whole range is unmapped.
            p.unmapped.erase({blk.addr, b});
            m_segments[static_cast<std::size_t>(blk.segment)].live = false;
            deleteBlock(b);
        }
    }
}

} // namespace batchfit
