// --activation-offload: torch's save_on_cpu and transformers' checkpoint offload
// (program/scheduler_offload.cpp). The host bytes and step peaks are checked against torch 2.15 and
// transformers 5.24 on the CPU by tools/accuracy_offload.py (the "real:" test of docs/accuracy-llm.md).
#include "batchfit/estimator.h"
#include "batchfit/hf_import.h"
#include "batchfit/what_if.h"
#include "test_util.h"

#include <algorithm>
#include <bit>

using namespace batchfit;
using namespace batchfit::test;

namespace {

Model llama(std::int64_t seq) {
    return hfModel("llama-3.2-3b.json", seq);
}

/// [4, 16] fp32 through a linear, an optional RMSNorm and a second linear.
Model small(bool norm) {
    return parseOrFail(
        std::string(
            R"({"format":"batchfit-model","version":1,"name":"t","input":{"shape":[4,16],"dtype":"float32"},)"
            R"("layers":[{"name":"a","op":"linear","out_features":16},)") +
        (norm ? R"({"name":"n","op":"rmsnorm"},)" : "") +
        R"({"name":"b","op":"linear","out_features":16}]})");
}

Estimate at(const Model& m, const TrainingConfig& c, std::int64_t batch) {
    auto e = Estimator::create(m, c, 0);
    if (!e) FAIL(e.error().message);
    auto r = e->estimate(batch);
    if (!r) FAIL(r.error().message);
    return *r;
}

TrainingConfig offload(ActivationOffload o) {
    TrainingConfig c;
    c.activationOffload = o;
    return c;
}

} // namespace

TEST_CASE("save_on_cpu copies a tensor once per node that saves it", "[offload]") {
    // RMSNorm in fp32 at batch 2: pow and h * r save h (2 x 512 B), rsqrt and h * r save r (2 x 32 B), w * y
    // saves y (512 B) and w (64 B): 1,664 bytes on the host, where unique storages count 1,120
    const auto with = at(small(true), offload(ActivationOffload::All), 2);
    const auto without = at(small(false), offload(ActivationOffload::All), 2);
    CHECK(with.hostActivationBytes - without.hostActivationBytes == 1664);
    CHECK(with.savedActivationBytes == 0); // nothing waits on the GPU
    CHECK(at(small(true), TrainingConfig{}, 2).savedActivationBytes > 0);
}

TEST_CASE("offloaded activations leave the GPU and cost host memory and PCIe copies", "[offload]") {
    const Model m = llama(2048);
    TrainingConfig c;
    c.precision = Precision::PureBf16;
    c.optimizer = OptimizerKind::AdamW;
    c.lora.rank = 16;
    const auto gpu = at(m, c, 1);
    c.activationOffload = ActivationOffload::All;
    const auto all = at(m, c, 1);
    c.activationOffload = ActivationOffload::AllPinned;
    const auto pinned = at(m, c, 1);
    CHECK(all.peakAllocatedBytes < gpu.peakAllocatedBytes);
    CHECK(gpu.hostActivationBytes == 0);
    CHECK(gpu.activationTransferBytes == 0);
    // pageable: the bytes themselves, to the host and back; pinned: each block a power of two
    CHECK(all.activationTransferBytes == 2 * all.hostActivationBytes);
    CHECK(pinned.activationTransferBytes == all.activationTransferBytes);
    CHECK(pinned.hostActivationBytes > all.hostActivationBytes);
    CHECK(pinned.hostActivationBytes < 2 * all.hostActivationBytes);
    CHECK(pinned.peakAllocatedBytes == all.peakAllocatedBytes);
    CHECK(pinned.hostTotalBytes() == pinned.hostActivationBytes);
    // every micro-batch copies again; the host holds one micro-batch's
    c.accumulationSteps = 4;
    const auto acc = at(m, c, 1);
    CHECK(acc.hostActivationBytes == pinned.hostActivationBytes);
    CHECK(acc.activationTransferBytes == 4 * pinned.activationTransferBytes);
}

TEST_CASE("transformers' checkpoint offload moves each layer's hidden state, not the shared tables",
          "[offload]") {
    const Model m = llama(8192);
    TrainingConfig c;
    c.precision = Precision::PureBf16;
    c.lora.rank = 16;
    c.checkpointing = Checkpointing::EveryBlock;
    c.checkpointMode = CheckpointMode::NonReentrant;
    const auto gpu = at(m, c, 1);
    c.activationOffload = ActivationOffload::Checkpoints;
    const auto host = at(m, c, 1);
    const std::uint64_t hidden = 8192ull * 3072 * 2; // [8192, 3072] bf16, one per layer (28)
    CHECK(host.hostActivationBytes == 28 * std::bit_ceil(hidden));
    CHECK(host.activationTransferBytes == 2 * 28 * hidden);
    CHECK(host.peakAllocatedBytes < gpu.peakAllocatedBytes);
    CHECK(gpu.savedActivationBytes - host.savedActivationBytes == 28 * hidden);
}

TEST_CASE("activation offload is refused where it is not modelled, with the reason", "[offload]") {
    const Model m = llama(512);
    auto c = offload(ActivationOffload::Checkpoints);
    auto e = Estimator::create(m, c, 0);
    REQUIRE_FALSE(e);
    CHECK(e.error().message.find("needs checkpointing") != std::string::npos);
    c = offload(ActivationOffload::All);
    c.parallel.gpus = 2;
    c.parallel.pp = 2;
    e = Estimator::create(m, c, 0);
    REQUIRE_FALSE(e);
    CHECK(e.error().message.find("pipeline parallelism") != std::string::npos);
}

TEST_CASE("the advisor offers activation offload with its host memory and PCIe cost", "[offload]") {
    const Model m = llama(8192);
    TrainingConfig c;
    c.precision = Precision::PureBf16;
    c.lora.rank = 16;
    c.checkpointing = Checkpointing::EveryBlock;
    const auto levers = rankLevers(m, c, 24ull << 30, 0);
    const auto it = std::find_if(levers.begin(), levers.end(),
                                 [](const Lever& l) { return l.id == "activation-offload"; });
    REQUIRE(it != levers.end());
    CHECK(it->config.activationOffload == ActivationOffload::Checkpoints);
    CHECK(it->hostBytes >= 28 * std::bit_ceil(8192ull * 3072 * 2));
    CHECK(it->transferBytes > 0);
    CHECK(it->maxBatch >= it->baselineMaxBatch);
}

TEST_CASE("parameter offload keeps the shards on the host and gathers each block from there",
          "[offload]") {
    const Model m = llama(1024);
    TrainingConfig c;
    c.precision = Precision::PureBf16;
    c.optimizer = OptimizerKind::AdamW;
    c.parallel.gpus = 8;
    c.parallel.strategy = ParallelStrategy::Fsdp;
    const auto gpu = at(m, c, 1);
    c.paramOffload = true;
    const auto host = at(m, c, 1);
    // no resident shards, gradients or optimizer states on the GPU: only what the step gathers
    CHECK(host.gradientBytes == 0);
    CHECK(host.atPeak.bytes[static_cast<int>(Component::OptimizerStates)] == 0);
    CHECK(host.peakAllocatedBytes < gpu.peakAllocatedBytes);
    // the host holds what the GPU held: shards and gradient shards, and the optimizer states
    CHECK(host.hostParameterBytes == gpu.parameterBytes + gpu.gradientBytes);
    CHECK(host.hostBytes == gpu.optimizerStateBytes);
    CHECK(host.hostTotalBytes() == host.hostBytes + host.hostParameterBytes);
    // every shard to the GPU twice (forward and backward gathers), every gradient shard back once; the root
    // is gathered once (FSDP keeps it from the forward to the backward)
    CHECK(host.parameterTransferBytes > 2 * gpu.gradientBytes);
    CHECK(host.parameterTransferBytes <= 2 * gpu.parameterBytes + gpu.gradientBytes);
}

TEST_CASE("parameter offload runs on one GPU (ZeRO-Infinity) and needs a sharding strategy", "[offload]") {
    const Model m = llama(1024);
    TrainingConfig c;
    c.precision = Precision::PureBf16;
    c.paramOffload = true;
    auto e = Estimator::create(m, c, 0);
    REQUIRE_FALSE(e);
    CHECK(e.error().message.find("shards parameters") != std::string::npos);
    c.parallel.strategy = ParallelStrategy::Zero3;
    const auto one = at(m, c, 1);
    c.paramOffload = false;
    const auto resident = at(m, c, 1);
    CHECK(one.hostParameterBytes > resident.parameterBytes); // the gradients too
    CHECK(one.parameterBytes < resident.parameterBytes / 100); // what ZeRO-3 keeps whole: the norms
    CHECK(one.peakAllocatedBytes < resident.peakAllocatedBytes / 2);
}
