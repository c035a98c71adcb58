#pragma once
// PyTorch's CUDA caching allocator options (PYTORCH_CUDA_ALLOC_CONF), as BatchFit's allocator replay reads
// them. Semantics follow c10/cuda/CUDAAllocatorConfig.cpp of PyTorch 2.x; see docs/memory-model.md section 6.
#include "batchfit/result.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace batchfit {

struct AllocatorConfig {
    /// max_split_size_mb in bytes; unlimited (the default) is the largest uint64.
    std::uint64_t maxSplitSize = std::numeric_limits<std::uint64_t>::max();
    /// roundup_power2_divisions: entry k covers [2^(20+k), 2^(21+k)) bytes (entry 0 also everything below
    /// 2 MiB, entry 15 everything from 32 GiB); 0 or 1 means plain 512-byte rounding (2.5's d > 1 rule).
    std::array<std::uint32_t, 16> roundupDivisions{};
    double garbageCollectionThreshold = 0; ///< garbage_collection_threshold (0: off)
    bool expandableSegments = false;       ///< expandable_segments:True
    /// max_non_split_rounding_mb (2.6+) in bytes: how much larger than a request an oversize cached block
    /// may be and still be reused whole.
    std::uint64_t maxNonSplitRounding = std::uint64_t{20} << 20;

    bool operator==(const AllocatorConfig&) const = default;
    bool isDefault() const { return *this == AllocatorConfig{}; }
};

/// Parses a PYTORCH_CUDA_ALLOC_CONF value such as "expandable_segments:True,max_split_size_mb:128" or
/// "roundup_power2_divisions:[256:1,512:2,>:8]". Empty text is the default. Unknown options are refused as
/// PyTorch refuses them ("Unrecognized CachingAllocator option"); options with no effect on one process's
/// device memory (release_lock_on_cudamalloc, pinned_*) are accepted; backend:cudaMallocAsync is refused
/// (a different allocator).
Result<AllocatorConfig> parseAllocConf(std::string_view text);
/// The canonical text of a configuration (options that differ from the default, in a fixed order; "" for
/// the default). parseAllocConf(allocConfText(c)) == c.
std::string allocConfText(const AllocatorConfig& c);

} // namespace batchfit
