// Memory outside PyTorch's allocator, part by part (issue 26, item 1; docs/memory-model.md 6.3).
#include "batchfit/gpu.h"
#include "batchfit/non_torch_memory.h"
#include "batchfit/verdict_text.h"
#include "test_util.h"

using namespace batchfit;
using namespace batchfit::test;

namespace {
constexpr std::uint64_t kMiB = 1ull << 20;

Estimate onGpu(const Model& m, const std::string& gpu, std::int64_t batch, TrainingConfig c = {}) {
    auto g = findGpu(gpu);
    REQUIRE(g);
    auto e = Estimator::create(m, c, *g);
    REQUIRE(e);
    auto r = e->estimate(batch);
    REQUIRE(r);
    return *r;
}
} // namespace

TEST_CASE("the parts outside PyTorch follow the step: cuDNN with convolutions, eager loading on request",
          "[gpu][nontorch]") {
    const Model cnn = preset("resnet50");
    const Model lm = preset("gpt2-small");
    const auto a = onGpu(cnn, "a100-40gb", 8);
    CHECK(a.nonTorch.contextBytes == 450 * kMiB);
    CHECK(a.nonTorch.cublasBytes == kCublasKernelBytes);
    CHECK(a.nonTorch.cudnnBytes == kCudnnLoadBytes);
    CHECK(a.nonTorch.eagerBytes == 0);
    CHECK(a.nonTorch.ncclBytes == 0);
    CHECK(a.cudaContextBytes == a.nonTorch.total());
    CHECK(a.requiredBytes == a.reservedBytes + a.nonTorch.total()); // nvidia-smi = reserved + outside
    const auto b = onGpu(lm, "a100-40gb", 1);
    CHECK(b.nonTorch.cudnnBytes == 0); // no convolution: cuDNN is never loaded
    CHECK(b.nonTorch.total() == (450 + 64) * kMiB);
    TrainingConfig eager;
    eager.eagerModuleLoading = true;
    const auto c = onGpu(lm, "a100-40gb", 1, eager);
    CHECK(c.nonTorch.eagerBytes == kEagerLoadingBytes);
    CHECK(c.requiredBytes == b.requiredBytes + kEagerLoadingBytes);
    CHECK(nonTorchText(c.nonTorch) ==
          "CUDA context 450 MiB + cuBLAS kernels 64 MiB + eager module loading 900 MiB");
}

TEST_CASE("a measured figure stands for everything outside PyTorch", "[gpu][nontorch]") {
    TrainingConfig c;
    c.cudaContextBytes = 1000 * kMiB;
    c.eagerModuleLoading = true; // the measurement already includes whatever the stack loaded
    const auto e = onGpu(preset("resnet50"), "a100-40gb", 8, c);
    CHECK(e.nonTorch.measured);
    CHECK(e.nonTorch.total() == 1000 * kMiB);
    CHECK(e.cudaContextBytes == 1000 * kMiB);
    CHECK(nonTorchText(e.nonTorch) == "your measured figure (--context-mib), 1000 MiB");
}

TEST_CASE("NCCL: one communicator per process group of the GPU simulated", "[gpu][nontorch][parallel]") {
    const Model m = preset("gpt2-small");
    TrainingConfig c;
    c.parallel.strategy = ParallelStrategy::Ddp;
    c.parallel.gpus = 2;
    CHECK(ncclCommunicators(c) == 1);
    CHECK(nonTorchMemory(m, c, 0).ncclBytes == ncclBytesPerCommunicator(2));
    c.parallel.gpus = 8;
    CHECK(nonTorchMemory(m, c, 0).ncclBytes == ncclBytesPerCommunicator(8));
    c.parallel.tp = 2; // 4 data-parallel x 2 tensor-parallel: two groups
    CHECK(ncclCommunicators(c) == 2);
    c.parallel.pp = 2; // 2 x 2 x 2: and the pipeline's send/recv
    CHECK(ncclCommunicators(c) == 3);
    CHECK(ncclBytesPerCommunicator(1) == 0);
    CHECK(ncclBytesPerCommunicator(2) < ncclBytesPerCommunicator(4)); // NVIDIA/nccl#964: 544 vs 688 MB
    TrainingConfig one;
    CHECK(ncclCommunicators(one) == 0);
}

TEST_CASE("the catalogue's contexts carry their sources and grow with the GPU",
          "[gpu][nontorch][catalogue]") {
    for (const GpuSpec& g : gpuCatalogue()) {
        INFO(g.id);
        CHECK_FALSE(g.contextSource.empty());
        CHECK(g.contextBytes >= 150 * kMiB);
        CHECK(g.contextBytes <= 1024 * kMiB);
    }
    auto ctx = [](const char* id) { return findGpu(id)->contextBytes; };
    CHECK(ctx("t4") < ctx("a100-40gb"));
    CHECK(ctx("rtx-3090") < ctx("a100-80gb"));
    CHECK(ctx("a100-80gb") < ctx("h100-80gb"));
    CHECK(ctx("h100-80gb") < ctx("b200"));
    CHECK(customGpu(24).contextBytes == 512 * kMiB);
}
