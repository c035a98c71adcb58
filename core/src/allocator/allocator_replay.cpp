#include "batchfit/allocator_replay.h"

#include "allocator/caching_allocator.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

namespace batchfit {

namespace {
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
}

namespace {
constexpr std::uint64_t kOneExaByte = std::uint64_t{1} << 60;

// The text of torch 2.3+'s OutOfMemoryError (c10/cuda/CUDACachingAllocator.cpp, malloc).
std::string oomText(const ReplayOptions& o, std::uint64_t tried, std::uint64_t allocated,
                    std::uint64_t reserved) {
    const std::uint64_t limit = o.limitBytes.value_or(0);
    const std::uint64_t total = o.capacityBytes ? o.capacityBytes : limit + o.contextBytes;
    const std::uint64_t used = reserved + o.contextBytes;
    const std::uint64_t freeBytes = total > used ? total - used : 0;
    std::string s = "CUDA out of memory. Tried to allocate " + formatTorchSize(tried) + ". GPU " +
                    std::to_string(o.device) + " has a total capacity of " + formatTorchSize(total) +
                    " of which " + formatTorchSize(freeBytes) +
                    " is free. Including non-PyTorch memory, this process has " + formatTorchSize(used) +
                    " memory in use. ";
    if (o.memoryFraction)
        s += formatTorchSize(static_cast<std::uint64_t>(*o.memoryFraction * static_cast<double>(total))) +
             " allowed; ";
    s += "Of the allocated memory " + formatTorchSize(allocated) + " is allocated by PyTorch, and " +
         formatTorchSize(reserved - allocated) +
         " is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
         "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
         "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";
    return s;
}
// Allocation id -> block: a vector when the ids are dense (BatchFit's own traces), a hash map otherwise.
class IdTable {
public:
    static constexpr int kAbsent = -1, kSkipped = -2;
    explicit IdTable(const std::vector<AllocatorEvent>& events) {
        std::uint64_t maxId = 0;
        for (const auto& e : events) maxId = std::max(maxId, e.id);
        m_dense = maxId < 4 * events.size() + 64;
        if (m_dense) m_vector.assign(static_cast<std::size_t>(maxId) + 1, kAbsent);
    }
    int get(std::uint64_t id) const {
        if (m_dense) return m_vector[static_cast<std::size_t>(id)];
        auto it = m_map.find(id);
        return it == m_map.end() ? kAbsent : it->second;
    }
    void set(std::uint64_t id, int v) {
        if (m_dense)
            m_vector[static_cast<std::size_t>(id)] = v;
        else if (v == kAbsent)
            m_map.erase(id);
        else
            m_map[id] = v;
    }

private:
    bool m_dense = false;
    std::vector<int> m_vector;
    std::unordered_map<std::uint64_t, int> m_map;
};

} // namespace

std::string formatTorchSize(std::uint64_t size) {
    char buf[64];
    if (size <= 1024)
        std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(size));
    else if (size <= kMiB)
        std::snprintf(buf, sizeof buf, "%.2f KiB", static_cast<double>(size) / 1024.0);
    else if (size <= 1024 * kMiB)
        std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(size) / 1048576.0);
    else
        std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(size) / 1073741824.0);
    return buf;
}

Result<ReplayResult> replayAllocations(const std::vector<AllocatorEvent>& events, const ReplayOptions& o) {
    if (o.memoryFraction && !(*o.memoryFraction > 0 && *o.memoryFraction <= 1))
        return makeError("memory fraction must be in (0, 1]");
    std::optional<std::uint64_t> allowed;
    if (o.memoryFraction) {
        const std::uint64_t total =
            o.capacityBytes ? o.capacityBytes : o.limitBytes.value_or(0) + o.contextBytes;
        if (total == 0) return makeError("a memory fraction needs the GPU's capacity");
        allowed = static_cast<std::uint64_t>(*o.memoryFraction * static_cast<double>(total));
    }
    CachingAllocator a(o.config, o.limitBytes, allowed);
    a.reserve(events.size() / 2 + 16);
    ReplayResult r;
    IdTable ids(events);
    std::size_t nextSample = 0;
    std::vector<std::size_t> samples = o.sampleAfter;
    std::sort(samples.begin(), samples.end());
    auto sampleUpTo = [&](std::size_t i) {
        while (nextSample < samples.size() && samples[nextSample] <= i) {
            r.samples.push_back({a.allocatedBytes(), a.reservedBytes(), a.inactiveSplitBytes()});
            ++nextSample;
        }
    };
    bool stopped = false;
    for (std::size_t i = 0; i < events.size() && !stopped; ++i) {
        const auto& e = events[i];
        switch (e.kind) {
        case AllocatorEvent::Kind::Alloc: {
            if (ids.get(e.id) != IdTable::kAbsent)
                return makeError("event " + std::to_string(i) + ": allocation id " + std::to_string(e.id) +
                                 " is still live (each id names one allocation until its free)");
            if (e.size == 0) {
                ids.set(e.id, IdTable::kSkipped);
                break;
            }
            std::optional<int> b;
            if (e.size < kOneExaByte) b = a.malloc(e.size, e.stream, e.tag, e.id);
            if (!b && e.elastic) {
                ++r.workspaceFallbacks;
                r.workspaceFallbackBytes = std::max(r.workspaceFallbackBytes, e.size);
                ids.set(e.id, IdTable::kSkipped);
                break;
            }
            if (!b) {
                ++r.oomCount;
                if (!r.oom) {
                    OomReport oom;
                    oom.eventIndex = i;
                    oom.id = e.id;
                    oom.requestedBytes = e.size;
                    oom.limitBytes = o.limitBytes.value_or(0);
                    if (e.size >= kOneExaByte) {
                        oom.allocatedBytes = a.allocatedBytes();
                        oom.reservedBytes = a.reservedBytes();
                        oom.message = "CUDA out of memory. Tried to allocate more than 1EB memory.";
                    } else {
                        const auto& f = a.lastOom();
                        oom.triedBytes = f.tried;
                        oom.allocatedBytes = f.allocated;
                        oom.reservedBytes = f.reserved;
                        oom.message = oomText(o, f.tried, f.allocated, f.reserved);
                    }
                    r.oom = oom;
                    if (o.snapshotAfter && *o.snapshotAfter >= i) r.segments = a.snapshot();
                }
                ids.set(e.id, IdTable::kSkipped);
                if (o.stopAtOom) stopped = true;
                break;
            }
            ids.set(e.id, *b);
            break;
        }
        case AllocatorEvent::Kind::Free: {
            const int b = ids.get(e.id);
            if (b == IdTable::kAbsent)
                return makeError("event " + std::to_string(i) + ": free of id " + std::to_string(e.id) +
                                 ", which is not allocated");
            ids.set(e.id, IdTable::kAbsent);
            if (b != IdTable::kSkipped) a.free(b);
            break;
        }
        case AllocatorEvent::Kind::EmptyCache:
            a.emptyCache();
            break;
        }
        if (stopped) break;
        sampleUpTo(i);
        if (o.snapshotAfter && *o.snapshotAfter == i) r.segments = a.snapshot();
    }
    r.stats = a.stats();
    r.stats.finalAllocatedBytes = a.allocatedBytes();
    r.stats.finalReservedBytes = a.reservedBytes();
    r.stats.finalSegments = a.segmentCount();
    return r;
}

} // namespace batchfit
