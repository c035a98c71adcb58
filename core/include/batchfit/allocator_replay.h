#pragma once
// A replay of allocations and frees through a model of PyTorch's CUDA caching allocator (one device; the
// rules of c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.x): block rounding, the small and large pools, best
// fit, splitting, merging, segment growth, the retry sequence before an out-of-memory error, and expandable
// segments. See docs/memory-model.md section 6 and docs/allocator-trace.md for the trace format.
#include "batchfit/allocator_config.h"
#include "batchfit/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace batchfit {

/// One event of a trace. Ids name allocations; a free must name a live one.
struct AllocatorEvent {
    enum class Kind : std::uint8_t { Alloc, Free, EmptyCache };
    Kind kind = Kind::Alloc;
    std::uint64_t id = 0;
    std::uint64_t size = 0; ///< bytes requested (Alloc); 0 allocates nothing, as torch does
    int stream = 0;         ///< blocks are never shared between streams
    int tag = -1;           ///< free for the caller (BatchFit: the Component), kept on the block
    /// A cuDNN workspace: when it cannot be allocated (after the allocator has freed its cache and retried),
    /// PyTorch catches the OutOfMemoryError and runs an engine that needs less (Conv_v8.cpp try_configs), so
    /// the replay drops it (a fallback) instead of failing.
    bool elastic = false;
};

/// What torch.cuda.memory_stats() would report for the replay.
struct AllocatorStats {
    std::uint64_t peakAllocatedBytes = 0; ///< allocated_bytes.all.peak (block sizes, unsplit slack included)
    std::uint64_t peakReservedBytes = 0;  ///< reserved_bytes.all.peak
    std::uint64_t peakRequestedBytes = 0; ///< requested_bytes.all.peak (sizes as asked)
    std::uint64_t peakInactiveSplitBytes =
        0; ///< inactive_split_bytes.all.peak (free pieces of split segments)
    std::uint64_t reservedAtAllocatedPeak = 0; ///< reserved when allocated peaked
    std::uint64_t finalAllocatedBytes = 0, finalReservedBytes = 0;
    std::int64_t peakSegments = 0; ///< most segments at once (expandable: contiguous mapped ranges)
    std::int64_t finalSegments = 0;
    std::int64_t deviceAllocs = 0; ///< num_device_alloc: cudaMalloc calls or page maps
    std::int64_t deviceFrees = 0;  ///< num_device_free
    std::int64_t allocRetries = 0; ///< num_alloc_retries: allocations that had to free the whole cache
    std::int64_t allocations = 0;  ///< Alloc events replayed (size > 0)
};

/// The first allocation the allocator could not serve, with the figures of PyTorch's message.
struct OomReport {
    std::size_t eventIndex = 0;
    std::uint64_t id = 0;
    std::uint64_t requestedBytes = 0; ///< as asked
    std::uint64_t triedBytes = 0;     ///< "Tried to allocate": the segment size it needed
    std::uint64_t allocatedBytes = 0; ///< after the release attempts
    std::uint64_t reservedBytes = 0;  ///< after the release attempts
    std::uint64_t limitBytes = 0;     ///< what cudaMalloc could get in all
    std::string message;              ///< the text torch 2.x prints (see oomMessage)
    /// For a replayed training step: the timeline point (program step) whose allocation fails, its label,
    /// and whether it is in the replay's first iteration (the warm-up step(), before the optimizer states
    /// exist) rather than the steady-state step. Unset for a trace.
    std::optional<std::size_t> step;
    std::string stepLabel;
    bool firstIteration = false;
    /// When the replay mixes sequence lengths (TrainingConfig::replaySequences): the failing step's; else 0.
    std::int64_t sequence = 0;
    /// When the failing step is an epoch's last, smaller batch (TrainingConfig::epochSamples): its batch
    /// size; else 0.
    std::int64_t lastBatch = 0;
};

/// One block of a segment, as torch.cuda.memory_snapshot() lists it.
struct SegmentBlock {
    std::uint64_t offset = 0; ///< from the segment's start
    std::uint64_t size = 0;
    std::uint64_t requested = 0; ///< allocated blocks: the size asked for
    bool allocated = false;
    bool mapped = true; ///< expandable segments: false for address space with no pages behind it
    int tag = -1;
    std::uint64_t id = 0;
};

struct SegmentView {
    std::uint64_t address = 0; ///< synthetic: segments are numbered in address order
    std::uint64_t size = 0;    ///< bytes of device memory behind it (expandable: the mapped pages)
    bool smallPool = false;
    bool expandable = false;
    int stream = 0;
    std::vector<SegmentBlock> blocks; ///< in address order, covering the segment (unmapped tails left out)
};

struct ReplayOptions {
    AllocatorConfig config;
    /// Bytes cudaMalloc can get in all (the GPU's capacity minus the CUDA context and anything outside the
    /// allocator). Unset: unlimited, nothing is ever released, and the replay shows what a GPU big enough
    /// would reserve.
    std::optional<std::uint64_t> limitBytes;
    /// torch.cuda.set_per_process_memory_fraction(f): the allowed maximum, f x capacityBytes; needed for
    /// garbage_collection_threshold to do anything (as in torch).
    std::optional<double> memoryFraction;
    std::uint64_t capacityBytes = 0; ///< the GPU's total, for the message (0: limit + context)
    std::uint64_t contextBytes = 0;  ///< CUDA context and other non-PyTorch memory, for the message
    int device = 0;
    /// Event indices after which to record allocated and reserved bytes (ReplayResult::samples).
    std::vector<std::size_t> sampleAfter;
    /// When set, the segments as they are right after this event index (ReplayResult::segments).
    std::optional<std::size_t> snapshotAfter;
    bool stopAtOom = true; ///< false: skip a failing allocation (and its free) and go on
};

struct AllocatorSample {
    std::uint64_t allocatedBytes = 0, reservedBytes = 0, inactiveSplitBytes = 0;
};

struct ReplayResult {
    AllocatorStats stats;
    std::optional<OomReport> oom;             ///< the first failure
    std::int64_t oomCount = 0;                ///< failures (more than 1 only when stopAtOom is false)
    std::vector<AllocatorSample> samples;     ///< one per ReplayOptions::sampleAfter entry reached
    std::vector<SegmentView> segments;        ///< the snapshot, when asked for (at the OOM if it came first)
    std::int64_t workspaceFallbacks = 0;      ///< elastic allocations dropped: cuDNN ran a smaller engine
    std::uint64_t workspaceFallbackBytes = 0; ///< the largest of them
};

/// Replays the events. Fails (as a value) only for malformed traces: a free of an unknown id, an id
/// allocated twice, a size of 1 EB or more. Running out of memory is a result, not an error.
Result<ReplayResult> replayAllocations(const std::vector<AllocatorEvent>& events,
                                       const ReplayOptions& options);

/// Formats bytes as c10's format_size does: "512 bytes", "2.00 KiB", "20.00 MiB", "1.50 GiB".
std::string formatTorchSize(std::uint64_t bytes);

/// The rounded block size torch's round_size gives a request (2.5 rules), e.g. 1 -> 512.
std::uint64_t allocatorRoundSize(std::uint64_t bytes, const AllocatorConfig& config);
/// The segment size a new cudaMalloc gets for a rounded request (get_allocation_size): 2 MiB, 20 MiB or the
/// request rounded up to 2 MiB.
std::uint64_t allocatorSegmentSize(std::uint64_t roundedBytes);

} // namespace batchfit
