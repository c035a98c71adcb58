#pragma once
// The GPU catalogue (resources/gpus.json, built into the core).
#include "batchfit/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace batchfit {

struct GpuSpec {
    std::string id;     ///< "rtx-4090"
    std::string name;   ///< "NVIDIA GeForce RTX 4090"
    std::string vendor; ///< "NVIDIA" / "AMD"
    std::uint64_t memoryBytes = 0;
    std::uint64_t contextBytes = 0; ///< default CUDA/ROCm context + libraries outside the allocator
    std::uint64_t cublasWorkspaceBytes = 8519680; ///< PyTorch's default per cuBLAS handle (32 MiB on sm90+)
    std::string arch;   ///< "sm_89" (CUDA compute capability) or "gfx942" (ROCm target); empty: unknown
    std::string source; ///< where the memory figure comes from
};

/// All catalogue entries, in catalogue order.
const std::vector<GpuSpec>& gpuCatalogue();
/// By id (case-insensitive).
Result<GpuSpec> findGpu(const std::string& id);
/// A custom GPU of the given capacity in GiB (vendor "Custom", default context).
GpuSpec customGpu(double gib);

} // namespace batchfit
