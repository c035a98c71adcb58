#include "batchfit/non_torch_memory.h"

#include "batchfit/model.h"
#include "batchfit/training_config.h"

#include <algorithm>

namespace batchfit {

std::uint64_t ncclBytesPerCommunicator(std::int64_t ranks) {
    // Measured on 4x A100 NVLink, NCCL defaults: 544 MB for a 2-rank group, 688 MB for larger groups
    // (NVIDIA/nccl#964); NCCL sizes its buffers per channel and peer (9.19 MiB per connection).
    if (ranks < 2) return 0;
    return (ranks == 2 ? 544ull : 688ull) * 1000 * 1000;
}

int ncclCommunicators(const TrainingConfig& config) {
    const ParallelConfig& p = config.parallel;
    int n = 0;
    if (p.enabled()) n += p.strategy == ParallelStrategy::Hsdp && p.dataParallel() > p.gpusPerNode ? 2 : 1;
    if (p.tp > 1) ++n;
    if (p.pp > 1)
        ++n; // send/recv with the neighbouring stages: one communicator per pair, the busier stage's
    return n;
}

static bool anyConvolution(const std::vector<Layer>& layers) {
    return std::any_of(layers.begin(), layers.end(), [](const Layer& l) {
        return l.op == "conv1d" || l.op == "conv2d" || l.op == "conv3d" || l.op == "conv_transpose2d" ||
               anyConvolution(l.layers) || anyConvolution(l.shortcutLayers);
    });
}

bool runsConvolution(const Model& model) {
    return anyConvolution(model.layers);
}

std::vector<NonTorchPart> nonTorchParts(const NonTorchMemory& m) {
    using K = NonTorchPart::Kind;
    if (m.measured) {
        std::vector<NonTorchPart> out{{K::Context, m.contextBytes}};
        if (m.vllmBytes) out.push_back({K::Vllm, m.vllmBytes});
        return out;
    }
    std::vector<NonTorchPart> out{{K::Context, m.contextBytes}, {K::Cublas, m.cublasBytes}};
    if (m.eagerBytes) out.push_back({K::Eager, m.eagerBytes});
    if (m.cudnnBytes) out.push_back({K::Cudnn, m.cudnnBytes});
    if (m.ncclBytes) out.push_back({K::Nccl, m.ncclBytes});
    if (m.vllmBytes) out.push_back({K::Vllm, m.vllmBytes});
    return out;
}

NonTorchMemory nonTorchMemory(const Model& model, const TrainingConfig& config, std::uint64_t contextBytes) {
    NonTorchMemory m;
    if (config.recipe == Recipe::Grpo && config.generation == Generation::VllmColocate) {
        const long double share = static_cast<long double>(config.gpuBytes) * config.vllmMemoryFraction;
        m.vllmBytes = share >= 0x1p62L ? (1ull << 62) : static_cast<std::uint64_t>(share);
    }
    if (config.cudaContextBytes) {
        m.contextBytes = *config.cudaContextBytes;
        m.measured = true;
        return m;
    }
    m.contextBytes = contextBytes;
    m.cublasBytes = kCublasKernelBytes;
    if (config.eagerModuleLoading) m.eagerBytes = kEagerLoadingBytes;
    if (runsConvolution(model)) m.cudnnBytes = kCudnnLoadBytes;
    m.ncclCommunicators = ncclCommunicators(config);
    const ParallelConfig& p = config.parallel;
    const std::int64_t ranks = std::max<std::int64_t>({p.enabled() ? p.dataParallel() : 1, p.tp, 2});
    m.ncclBytes = static_cast<std::uint64_t>(m.ncclCommunicators) * ncclBytesPerCommunicator(ranks);
    return m;
}

} // namespace batchfit
