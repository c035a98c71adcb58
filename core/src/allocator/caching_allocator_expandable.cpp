// expandable_segments:True (c10/cuda/CUDACachingAllocator.cpp: ExpandableSegment, find_expandable_block,
// map_block, try_allocate_expandable_block, unmap_block) and memory_snapshot().
#include "allocator/caching_allocator.h"

#include <algorithm>

namespace batchfit {

namespace {
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
}

namespace {
constexpr std::uint64_t kUnlimitedAddressSpace = std::uint64_t{1} << 52;
}

// Pages are 2 MiB (kSmallBuffer) in the small pool and 20 MiB (kLargeBuffer) in the large one.
std::uint64_t CachingAllocator::pageSize(int poolIndex) const {
    return m_pools[static_cast<std::size_t>(poolIndex)].small ? 2 * kMiB : 20 * kMiB;
}

// find_expandable_block: the lowest unmapped range of this pool (with the free block just before it) that
// has room for `size`, or a new segment: one reserved address range of about 1 1/8 of the device.
int CachingAllocator::findExpandableBlock(int poolIndex, std::uint64_t size) {
    auto freeAt = [&](int b) { return b >= 0 && !m_blocks[static_cast<std::size_t>(b)].allocated; };
    auto room = [&](int b) {
        std::uint64_t bytes = 0;
        while (bytes < size && freeAt(b)) {
            bytes += m_blocks[static_cast<std::size_t>(b)].size;
            b = m_blocks[static_cast<std::size_t>(b)].next;
        }
        return bytes >= size;
    };
    for (const auto& [addr, b] : m_pools[static_cast<std::size_t>(poolIndex)].unmapped) {
        int c = b;
        const int prev = m_blocks[static_cast<std::size_t>(b)].prev;
        if (freeAt(prev)) c = prev;
        if (room(c)) return c;
    }
    const std::uint64_t page = pageSize(poolIndex);
    std::uint64_t range = kUnlimitedAddressSpace;
    if (m_limit && *m_limit < kUnlimitedAddressSpace / 2)
        range = (*m_limit + *m_limit / 8 + page) / page * page;
    if (size > range || m_nextAddress > ~std::uint64_t{0} - range) return -1;
    const int b = newSegment(poolIndex, range, true);
    m_pools[static_cast<std::size_t>(poolIndex)].unmapped.insert(
        {m_blocks[static_cast<std::size_t>(b)].addr, b});
    return b;
}

// map_block: maps whole pages from the start of an unmapped block, then merges with free neighbours.
bool CachingAllocator::mapBlock(int b, std::uint64_t size) {
    const int poolIndex = m_blocks[static_cast<std::size_t>(b)].pool;
    const std::uint64_t page = pageSize(poolIndex);
    const std::uint64_t mapped =
        std::min((size + page - 1) / page * page, m_blocks[static_cast<std::size_t>(b)].size);
    if (!canDrive(mapped)) return false; // cuMemCreate fails: the pages just made are released again
    auto& p = m_pools[static_cast<std::size_t>(poolIndex)];
    auto mappedAt = [&](int n) { return n >= 0 && m_blocks[static_cast<std::size_t>(n)].mapped; };
    const bool left = mappedAt(m_blocks[static_cast<std::size_t>(b)].prev);
    const bool right = mapped == m_blocks[static_cast<std::size_t>(b)].size &&
                       mappedAt(m_blocks[static_cast<std::size_t>(b)].next);
    m_mappedRuns += 1 - left - right;
    p.unmapped.erase({m_blocks[static_cast<std::size_t>(b)].addr, b});
    if (mapped < m_blocks[static_cast<std::size_t>(b)].size) {
        Block rest = m_blocks[static_cast<std::size_t>(b)];
        rest.addr += mapped;
        rest.size -= mapped;
        rest.mapped = false;
        const int r = insertAfter(b, rest);
        m_blocks[static_cast<std::size_t>(b)].size = mapped;
        p.unmapped.insert({rest.addr, r});
    }
    m_blocks[static_cast<std::size_t>(b)].mapped = true;
    tryMerge(b, m_blocks[static_cast<std::size_t>(b)].prev);
    tryMerge(b, m_blocks[static_cast<std::size_t>(b)].next);
    insertFree(b);
    grow(mapped);
    return true;
}

// try_allocate_expandable_block: maps what is missing after the candidate until it holds `size`.
std::optional<int> CachingAllocator::tryAllocateExpandable(int poolIndex, std::uint64_t size) {
    int c = findExpandableBlock(poolIndex, size);
    if (c < 0) return std::nullopt;
    if (!m_blocks[static_cast<std::size_t>(c)].mapped &&
        !mapBlock(c, std::min(m_blocks[static_cast<std::size_t>(c)].size, size)))
        return std::nullopt;
    while (m_blocks[static_cast<std::size_t>(c)].size < size) {
        const std::uint64_t remaining = size - m_blocks[static_cast<std::size_t>(c)].size;
        const int n = m_blocks[static_cast<std::size_t>(c)].next;
        if (n < 0 || m_blocks[static_cast<std::size_t>(n)].mapped) return std::nullopt;
        if (!mapBlock(n, std::min(remaining, m_blocks[static_cast<std::size_t>(n)].size)))
            return std::nullopt;
        c = n; // map_block merged the candidate into n
    }
    eraseFree(c);
    return c;
}

// unmap_block: unmaps the pages lying wholly inside a free block; partial pages at its ends stay mapped.
void CachingAllocator::unmapBlock(int b) {
    auto& blk0 = m_blocks[static_cast<std::size_t>(b)];
    const std::uint64_t base = m_segments[static_cast<std::size_t>(blk0.segment)].base;
    const std::uint64_t page = pageSize(blk0.pool);
    const std::uint64_t begin = base + (blk0.addr - base + page - 1) / page * page;
    const std::uint64_t end = base + (blk0.addr + blk0.size - base) / page * page;
    if (begin >= end) return;
    eraseFree(b);
    const std::uint64_t before = begin - blk0.addr;
    const std::uint64_t after = blk0.addr + blk0.size - end;
    auto mappedAt = [&](int n) { return n >= 0 && m_blocks[static_cast<std::size_t>(n)].mapped; };
    const bool left = before > 0 || mappedAt(blk0.prev);
    const bool right = after > 0 || mappedAt(blk0.next);
    m_mappedRuns += -1 + left + right;
    if (before > 0) {
        Block piece = m_blocks[static_cast<std::size_t>(b)];
        piece.size = before;
        insertFree(insertBefore(b, piece));
    }
    if (after > 0) {
        Block piece = m_blocks[static_cast<std::size_t>(b)];
        piece.addr = end;
        piece.size = after;
        insertFree(insertAfter(b, piece));
    }
    auto& blk = m_blocks[static_cast<std::size_t>(b)];
    blk.addr = begin;
    blk.size = end - begin;
    blk.mapped = false;
    tryMerge(b, blk.prev);
    tryMerge(b, m_blocks[static_cast<std::size_t>(b)].next);
    m_pools[static_cast<std::size_t>(blk.pool)].unmapped.insert(
        {m_blocks[static_cast<std::size_t>(b)].addr, b});
    shrink(end - begin);
}

std::vector<SegmentView> CachingAllocator::snapshot() const {
    std::vector<std::vector<int>> perSegment(m_segments.size());
    for (std::size_t i = 0; i < m_blocks.size(); ++i)
        if (m_blocks[i].live)
            perSegment[static_cast<std::size_t>(m_blocks[i].segment)].push_back(static_cast<int>(i));
    std::vector<SegmentView> out;
    for (std::size_t s = 0; s < m_segments.size(); ++s) {
        const auto& seg = m_segments[s];
        if (!seg.live) continue;
        auto& ids = perSegment[s];
        std::sort(ids.begin(), ids.end(), [&](int a, int b) {
            return m_blocks[static_cast<std::size_t>(a)].addr < m_blocks[static_cast<std::size_t>(b)].addr;
        });
        const auto& pool = m_pools[static_cast<std::size_t>(seg.pool)];
        SegmentView view;
        auto flush = [&] {
            if (!view.blocks.empty()) out.push_back(std::move(view));
            view = SegmentView{};
        };
        for (int id : ids) {
            const auto& b = m_blocks[static_cast<std::size_t>(id)];
            if (!b.mapped) { // expandable: each contiguous mapped range is one segment, as in
                             // memory_snapshot()
                flush();
                continue;
            }
            if (view.blocks.empty()) {
                view.address = b.addr;
                view.smallPool = pool.small;
                view.expandable = seg.expandable;
                view.stream = pool.stream;
            }
            SegmentBlock sb;
            sb.offset = b.addr - view.address;
            sb.size = b.size;
            sb.requested = b.allocated ? b.requested : 0;
            sb.allocated = b.allocated;
            sb.tag = b.allocated ? b.tag : -1;
            sb.id = b.allocated ? b.id : 0;
            view.size += b.size;
            view.blocks.push_back(sb);
        }
        flush();
    }
    std::sort(out.begin(), out.end(),
              [](const SegmentView& a, const SegmentView& b) { return a.address < b.address; });
    return out;
}

} // namespace batchfit
