#pragma once
// Device memory a training process holds outside PyTorch's caching allocator: what `nvidia-smi` shows beyond
// torch.cuda.memory_reserved(). docs/memory-model.md, section 6.3 ("Memory that is not PyTorch's").
#include <cstdint>
#include <vector>

namespace batchfit {

struct Model;
struct TrainingConfig;

/// The parts, each from a cited source (docs/memory-model.md 6.3); total() is what the verdict adds to the
/// replayed reserved bytes.
struct NonTorchMemory {
    /// The bare CUDA context after the first tensor, lazy loading: the GPU's catalogue figure
    /// (GpuSpec::contextBytes), or the user's measured figure for all of it.
    std::uint64_t contextBytes = 0;
    std::uint64_t cublasBytes = 0; ///< cuBLAS/cuBLASLt kernels (the first matmul)
    std::uint64_t eagerBytes = 0;  ///< eager module loading's add-on (0 with lazy loading)
    /// cuDNN's kernels and handle, once the step runs a convolution (0 without one).
    std::uint64_t cudnnBytes = 0;
    /// NCCL's buffers: one communicator per process group the step uses (0 on one GPU).
    std::uint64_t ncclBytes = 0;
    int ncclCommunicators = 0;
    /// GRPO's colocated vLLM engine (Generation::VllmColocate): vllm_gpu_memory_utilization x the GPU's
    /// memory, taken when the engine starts, before the first step (its weights and KV cache; vLLM >= 0.10
    /// sizes its cache so that its own process-wide use stays within that share).
    std::uint64_t vllmBytes = 0;
    /// The user's own figure (--context-mib, measured on their stack) stands for all of it: contextBytes.
    bool measured = false;

    /// Each part is below 2^50 (the override and the vLLM share at most 2^62), so the sum cannot overflow.
    std::uint64_t total() const {
        return contextBytes + cublasBytes + eagerBytes + cudnnBytes + ncclBytes + vllmBytes;
    }
};

/// One part of it, for the front ends to name in their own words.
struct NonTorchPart {
    enum class Kind { Context, Cublas, Eager, Cudnn, Nccl, Vllm } kind;
    std::uint64_t bytes;
};
/// The parts present, in order (context and cuBLAS always; eager loading, cuDNN, NCCL, vLLM when non-zero); a
/// measured figure is the Context part, with vLLM's share after it.
std::vector<NonTorchPart> nonTorchParts(const NonTorchMemory& m);

/// cuBLAS/cuBLASLt kernels loaded by the first matmul (lazy loading; docs/memory-model.md 6.3).
inline constexpr std::uint64_t kCublasKernelBytes = 64ull << 20;
/// cuDNN's kernels and handle once a convolution runs (docs/memory-model.md 6.3).
inline constexpr std::uint64_t kCudnnLoadBytes = 256ull << 20;
/// What eager module loading adds: every kernel image of torch and its libraries at start-up (6.3).
inline constexpr std::uint64_t kEagerLoadingBytes = 900ull << 20;
/// NCCL's device memory for one communicator of `ranks` GPUs at its defaults (docs/memory-model.md 6.3).
std::uint64_t ncclBytesPerCommunicator(std::int64_t ranks);

/// The process groups whose NCCL communicators the step creates on the GPU simulated.
int ncclCommunicators(const TrainingConfig& config);
/// Whether the model runs a cuDNN convolution (conv1d/2d/3d, conv_transpose2d).
bool runsConvolution(const Model& model);

/// The non-PyTorch memory of this step: the GPU's `contextBytes`, cuDNN when a convolution runs, NCCL per
/// communicator; or the user's measured figure (TrainingConfig::cudaContextBytes) instead of those; plus a
/// colocated vLLM engine's share.
NonTorchMemory nonTorchMemory(const Model& model, const TrainingConfig& config, std::uint64_t contextBytes);

} // namespace batchfit
