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
    std::uint64_t contextBytes = 0; ///< the bare CUDA/ROCm context, lazy loading (non_torch_memory.h adds the rest)
    std::string contextSource;      ///< where the context figure comes from, with its confidence
    std::uint64_t cublasWorkspaceBytes = 8519680; ///< PyTorch's default per cuBLAS handle (32 MiB on sm90+)
    std::string arch;       ///< "sm_89" (CUDA compute capability) or "gfx942" (ROCm target); empty: unknown
    std::string source;     ///< where the memory figure comes from
    std::string archSource; ///< where the architecture comes from
    std::string family; ///< the picker's group: "GeForce RTX 40", "Data center: Hopper", ... (gpuFamilies())
    bool bf16 = false;  ///< bfloat16 in hardware (sm_80+, CDNA2+)
    bool fp8 = false;   ///< fp8 tensor cores (sm_89, sm_90, Blackwell, CDNA3)
    std::string nameZh; ///< the name Chinese vendors and users use, when it differs (UTF-8); empty: none
    std::string noteZh; ///< a note in Chinese (China-market variants), UTF-8; empty: none
};

/// The families of the catalogue, in the order the GPU picker groups them.
const std::vector<std::string>& gpuFamilies();

/// All catalogue entries, in catalogue order.
const std::vector<GpuSpec>& gpuCatalogue();
/// By id (case-insensitive).
Result<GpuSpec> findGpu(const std::string& id);
/// A custom GPU of the given capacity in GiB (vendor "Custom", default context).
GpuSpec customGpu(double gib);
/// A custom GPU of exactly `bytes` (nothing lost to a GiB double).
GpuSpec customGpuOfBytes(std::uint64_t bytes);

} // namespace batchfit
