#pragma once
// BatchFit's allocator trace file (docs/allocator-trace.md): a list of allocations and frees, with what a
// real run recorded when the trace comes from a torch.cuda.memory snapshot.
#include "batchfit/allocator_replay.h"
#include "batchfit/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace batchfit {

/// Largest trace file read (about 8 million events).
inline constexpr std::uint64_t kMaxTraceFileBytes = std::uint64_t{512} << 20;

/// What the real allocator did, from a snapshot (every field optional).
struct RecordedAllocator {
    std::optional<std::uint64_t> peakAllocatedBytes, peakReservedBytes;
    std::optional<std::int64_t> segmentAllocs, segmentFrees;
    std::optional<std::vector<std::uint64_t>> segmentSizes; ///< the segments at the end
};

struct AllocatorTrace {
    std::vector<AllocatorEvent> events;
    std::vector<std::string> tagNames; ///< AllocatorEvent::tag indexes this
    std::optional<std::uint64_t> deviceTotalBytes;
    std::optional<std::string> allocConf;
    std::optional<RecordedAllocator> recorded;
};

/// Parses a trace; errors name the source, the JSON path ("$.events[12].size") and what was expected.
Result<AllocatorTrace> parseAllocatorTrace(const std::string& text, const std::string& source);
Result<AllocatorTrace> loadAllocatorTrace(const std::string& path);
/// The trace as JSON text (format version 1).
std::string allocatorTraceJson(const AllocatorTrace& trace);

} // namespace batchfit
