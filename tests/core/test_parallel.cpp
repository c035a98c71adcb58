// Data parallelism: one GPU's shards, buffers and gathered units. The DDP and ZeroRedundancyOptimizer
// numbers are also measured (tools/measure_distributed.py check, a ctest); these are worked examples from
// the sources core/src/program/shard_plan.cpp cites.
#include "test_util.h"

#include <algorithm>

using namespace batchfit;
using namespace batchfit::test;

namespace {

TrainingConfig dp(ParallelStrategy s, std::int64_t gpus, Precision p = Precision::Fp32) {
    TrainingConfig c;
    c.optimizer = OptimizerKind::Adam;
    c.precision = p;
    c.parallel.gpus = gpus;
    c.parallel.strategy = s;
    c.cublasWorkspaceBytes = 0;
    return c;
}

// [16, 1000] -> inp -> 6 x (fc 1000 -> relu) -> head (10) -> mse: six gather units h[0]..h[5] and the root
const char* kStack =
    R"({"format":"batchfit-model","version":1,"name":"stack","input":{"shape":[16,1000]},"layers":[
 {"name":"inp","op":"linear","out_features":1000},
 {"name":"h","repeat":6,"layers":[{"name":"fc","op":"linear","out_features":1000},{"name":"act","op":"relu"}]},
 {"name":"head","op":"linear","out_features":10},{"name":"loss","op":"mse_loss"}]})";

/// The caching allocator's 512-byte blocks: what a live figure counts for one tensor.
constexpr std::uint64_t r512(std::uint64_t b) {
    return (b + 511) / 512 * 512;
}

std::uint64_t liveParamsAt(const Estimate& e, const std::string& label) {
    auto it = std::find_if(e.timeline.begin(), e.timeline.end(),
                           [&](const TimelinePoint& p) { return p.label == label; });
    if (it == e.timeline.end()) FAIL("no timeline point " << label);
    return it->live[Component::Parameters];
}

} // namespace

TEST_CASE("ZeRO's model states per GPU: the paper's 7.5B example at N = 64", "[parallel][zero]") {
    // Rajbhandari et al. 2019 (arXiv 1910.02054) Figure 1 / Table 1: mixed-precision Adam, 2 + 2 + 12 bytes
    // per parameter: 120 GB (DP), 31.4 (P_os), 16.6 (P_os+g), 1.88 (P_os+g+p).
    const Model m = parseOrFail(
        R"({"format":"batchfit-model","version":1,"name":"7.5B","input":{"shape":[1,50000]},"layers":[
  {"name":"h","repeat":3,"layers":[{"name":"fc","op":"linear","out_features":50000,"bias":false}]},
  {"name":"loss","op":"mse_loss"}]})");
    const std::pair<ParallelStrategy, double> rows[] = {{ParallelStrategy::Ddp, 120},
                                                        {ParallelStrategy::Zero1, 31.4},
                                                        {ParallelStrategy::Zero2, 16.6},
                                                        {ParallelStrategy::Zero3, 1.88}};
    for (const auto& [strategy, gb] : rows) {
        INFO(parallelStrategyName(strategy));
        const auto e = estimator(m, dp(strategy, 64, Precision::MixedBf16Master)).estimate(1);
        REQUIRE(e);
        const double states =
            static_cast<double>(e->parameterBytes + e->gradientBytes + e->optimizerStateBytes);
        CHECK(states / 1e9 == Approx(gb).epsilon(0.005));
    }
}

TEST_CASE("DDP: the buckets are one more gradient-sized buffer unless gradients are views into them",
          "[parallel][ddp]") {
    const Model m = parseOrFail(kStack);
    const auto single = estimateAt(m, 2, TrainingConfig{dp(ParallelStrategy::None, 1)});
    const auto ddp = estimateAt(m, 2, dp(ParallelStrategy::Ddp, 8));
    TrainingConfig v = dp(ParallelStrategy::Ddp, 8);
    v.parallel.gradientAsBucketView = true;
    const auto view = estimateAt(m, 2, v);
    CHECK(ddp.parallel.bucketBytes == ddp.gradientBytes);
    CHECK(ddp.gradientBytes == single.gradientBytes); // a full replica
    CHECK(ddp.peakAllocatedBytes == single.peakAllocatedBytes + r512(ddp.gradientBytes));
    // with views the gradients are written into the buckets: no more than a single GPU (one block instead of
    // one per gradient, so a few hundred bytes less)
    CHECK(view.peakAllocatedBytes <= single.peakAllocatedBytes);
    CHECK(single.peakAllocatedBytes - view.peakAllocatedBytes < 16 * 512);
}

TEST_CASE("FSDP FULL_SHARD: flat shards padded per unit, two units gathered, the root kept",
          "[parallel][fsdp]") {
    const Model m = parseOrFail(kStack);
    const auto e = estimator(m, dp(ParallelStrategy::Fsdp, 3)).estimate(2, true);
    REQUIRE(e);
    // a unit's flat parameter: fc.weight + fc.bias = 1,001,000 elements; 3 GPUs: ceil -> 333,667 each
    constexpr std::uint64_t unit = 1001000, shard = 333667 * 4, gathered = 333667 * 3 * 4;
    // the root: inp (1,001,000) + head (10,010) = 1,011,010 elements -> 337,004 (padded) each
    constexpr std::uint64_t rootShard = 337004 * 4, rootGathered = 337004 * 3 * 4;
    CHECK(e->parameterBytes == 6 * shard + rootShard);
    CHECK(e->gradientBytes == 6 * shard + rootShard); // reduce-scattered into flat shards too
    CHECK(unit == 1000 * 1000 + 1000);
    CHECK(e->parallel.largestGatheredBytes == rootGathered);
    // Forward of h[2]: every shard, the root's gathered parameters, h[2] and the prefetched h[3]
    const std::uint64_t base = 6 * r512(shard) + r512(rootShard) + r512(rootGathered);
    CHECK(liveParamsAt(*e, "h[2].fc (linear)") == base + 2 * r512(gathered));
    // The last unit has nothing to prefetch
    CHECK(liveParamsAt(*e, "h[5].fc (linear)") == base + r512(gathered));
    // SHARD_GRAD_OP keeps every unit gathered from its forward to its backward
    const auto g = estimator(m, dp(ParallelStrategy::FsdpGradOp, 3)).estimate(2, true);
    REQUIRE(g);
    CHECK(liveParamsAt(*g, "h[5].fc (linear)") == base + 6 * r512(gathered));
    CHECK(g->peakAllocatedBytes > e->peakAllocatedBytes);
}

TEST_CASE("HSDP shards within a node; FSDP2 per parameter on dim 0", "[parallel][fsdp]") {
    const Model m = parseOrFail(kStack);
    TrainingConfig h = dp(ParallelStrategy::Hsdp, 16);
    h.parallel.gpusPerNode = 8;
    const auto hsdp = estimateAt(m, 2, h);
    const auto fsdp8 = estimateAt(m, 2, dp(ParallelStrategy::Fsdp, 8));
    CHECK(hsdp.parameterBytes == fsdp8.parameterBytes);
    CHECK(hsdp.parallel.group == 8);
    const auto f2 = estimateAt(m, 2, dp(ParallelStrategy::Fsdp2, 3));
    // fc.weight [1000, 1000]: ceil(1000 / 3) = 334 rows; fc.bias [1000]: 334; head.weight [10, 1000]: 4 rows
    const std::uint64_t expected = 7 * (334 * 1000 + 334) * 4 + (4 * 1000 + 4) * 4;
    CHECK(f2.parameterBytes == expected);
}

TEST_CASE("ZeRO-3 keeps small parameters whole; ZeRO-1/2 reduce buffers follow reduce_bucket_size",
          "[parallel][zero]") {
    const Model m = parseOrFail(kStack);
    const auto z3 = estimateAt(m, 2, dp(ParallelStrategy::Zero3, 4));
    // the 1e6-element weights sharded; head.weight (1e4), the biases (1000, 10) under
    // stage3_param_persistence_threshold (1e5): whole on every GPU
    CHECK(z3.parameterBytes == (7 * 250000 + 10000 + 7 * 1000 + 10) * 4);
    CHECK(z3.parallel.bucketBytes == 500000000ull * 4); // one flat fp32 buffer of 5e8 elements
    TrainingConfig z2 = dp(ParallelStrategy::Zero2, 4);
    z2.parallel.reduceBucketSize = 1000000;
    const auto one = estimateAt(m, 2, z2);
    z2.parallel.overlapComm = 1;
    const auto two = estimateAt(m, 2, z2);
    CHECK(one.parallel.bucketBytes == 4000000);
    CHECK(two.parallel.bucketBytes == 8000000); // buf_0 and buf_1
    CHECK(two.peakAllocatedBytes == one.peakAllocatedBytes + r512(8000000) - r512(4000000));
}

TEST_CASE("10^5 GPUs and a 7B model: shards stay exact, nothing overflows", "[parallel][bad-input]") {
    const Model m = preset("llama-2-7b");
    TrainingConfig c = dp(ParallelStrategy::Fsdp, 100000, Precision::AmpBf16);
    const auto e = estimator(m, c).estimate(1);
    REQUIRE(e);
    CHECK(e->parameterBytes < 1ull << 30);
    CHECK(e->optimizerStateBytes < 1ull << 30);
    CHECK(e->parameterCount == 6738415616ull);
}

namespace {

// Korthikanti et al. 2022 (arXiv 2205.05198), Table 2's GPT layer: 16-bit activations, 1-byte dropout masks,
// a 4h GELU MLP and materialised attention scores; s 512, h 1024, a 16, twice. BatchFit's layer also keeps
// its LayerNorms' fp32 mean and rstd (per token), which the paper's count leaves out.
const char* kMegatronLayers =
    R"({"format":"batchfit-model","version":1,"name":"megatron","input":{"shape":[512,1024]},"layers":[
 {"name":"h","repeat":2,"layers":[
  {"name":"attn_block","shortcut":"identity","layers":[{"name":"ln_1","op":"layernorm"},
    {"name":"attn","op":"attention","heads":16,"dropout":0.1,"causal":false,"impl":"eager"},
    {"name":"drop","op":"dropout","p":0.1}]},
  {"name":"mlp_block","shortcut":"identity","layers":[{"name":"ln_2","op":"layernorm"},
    {"name":"fc1","op":"linear","out_features":4096},{"name":"act","op":"gelu"},
    {"name":"fc2","op":"linear","out_features":1024},{"name":"drop","op":"dropout","p":0.1}]}]},
 {"name":"loss","op":"mse_loss"}]})";

/// Saved bytes of h[0]: its own saved tensors and its output (h[1] saves it), not its input (h[0] runs on
/// the model's input), which is one layer's count.
std::uint64_t savedPerLayer(const Model& m, std::int64_t t, bool sequenceParallel) {
    TrainingConfig c;
    c.precision = Precision::PureFp16;
    c.parallel.gpus = t;
    c.parallel.tp = t;
    c.parallel.sequenceParallel = sequenceParallel;
    const auto e = estimateAt(m, 1, c);
    std::uint64_t layer = 0;
    for (const auto& l : e.layers)
        if (l.path.rfind("h[0]", 0) == 0) layer += l.savedBytes;
    return layer;
}

} // namespace

TEST_CASE("tensor parallelism reproduces Korthikanti et al.'s activations per layer, sbh(10 + 24/t + 5as/ht)",
          "[parallel][tp]") {
    const Model m = parseOrFail(kMegatronLayers);
    constexpr double s = 512, h = 1024, a = 16;
    constexpr std::uint64_t stats = 2 * 2 * 512 * 4; // two LayerNorms' mean and rstd, fp32, per token
    for (std::int64_t t : {1, 2, 4, 8}) {
        INFO("t = " << t);
        const double td = static_cast<double>(t);
        // Table 2, "tensor parallel (baseline)"
        const auto paper = static_cast<std::uint64_t>(s * h * (10 + 24 / td + 5 * a * s / (h * td)));
        CHECK(savedPerLayer(m, t, false) == paper + stats);
    }
}

TEST_CASE("sequence parallelism reproduces Korthikanti et al.'s tensor + sequence parallel row, "
          "sbh(34/t + 5as/ht)",
          "[parallel][tp][sp]") {
    // Table 2, "tensor + sequence parallel": the LayerNorms, dropouts and the inputs of the first linears
    // are split over the t ranks too; the column-parallel linears keep their sharded input (section 4.2.2).
    const Model m = parseOrFail(kMegatronLayers);
    constexpr double s = 512, h = 1024, a = 16;
    for (std::int64_t t : {2, 4, 8}) {
        INFO("t = " << t);
        const double td = static_cast<double>(t);
        const auto paper = static_cast<std::uint64_t>(s * h * (34 / td + 5 * a * s / (h * td)));
        const std::uint64_t stats = 2 * 2 * (512 / static_cast<std::uint64_t>(t)) * 4; // s/t tokens each
        CHECK(savedPerLayer(m, t, true) == paper + stats);
        CHECK(savedPerLayer(m, t, true) < savedPerLayer(m, t, false));
    }
}

TEST_CASE("sequence parallelism: one all-gather buffer kept, and refused without tensor parallelism",
          "[parallel][tp][sp]") {
    const Model m = parseOrFail(kMegatronLayers);
    TrainingConfig c;
    c.precision = Precision::PureFp16;
    c.parallel.gpus = 4;
    c.parallel.tp = 4;
    c.parallel.sequenceParallel = true;
    c.cublasWorkspaceBytes = 0;
    const auto e = estimator(m, c).estimate(1, true);
    REQUIRE(e);
    // Megatron's global memory buffer: the largest gathered input, s x h fp16 = 512 x 1024 x 2 B, made once
    // and live from the step's start (the only temporary there with the cuBLAS workspaces off)
    REQUIRE_FALSE(e->timeline.empty());
    CHECK(e->timeline.front().live[Component::Temporaries] == 512 * 1024 * 2);
    TrainingConfig one = c;
    one.parallel.gpus = 1;
    one.parallel.tp = 1;
    auto r = Estimator::create(m, one, 0);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("needs --tp T > 1") != std::string::npos);
    // the sequence must split evenly over the ranks
    TrainingConfig odd = c;
    odd.parallel.gpus = 3;
    odd.parallel.tp = 3;
    const Model m3 = parseOrFail(
        R"({"format":"batchfit-model","version":1,"name":"m3","input":{"shape":[16,48]},"layers":[
 {"name":"h","repeat":2,"layers":[{"name":"ln","op":"layernorm"},{"name":"fc","op":"linear","out_features":48}]},
 {"name":"loss","op":"mse_loss"}]})");
    auto bad = Estimator::create(m3, odd, 0);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("not divisible") != std::string::npos);
}

TEST_CASE("tensor parallelism splits heads, MLP columns and the vocab; the data-parallel size is GPUs / tp",
          "[parallel][tp]") {
    const Model m = preset("llama-2-7b");
    TrainingConfig c;
    c.precision = Precision::MixedBf16Master;
    c.parallel.gpus = 16;
    c.parallel.tp = 8;
    c.parallel.strategy = ParallelStrategy::Zero1;
    const auto e = estimateAt(m, 1, c);
    // per rank: 1/8 of every linear in the blocks and of the embedding and head; norms whole
    const std::uint64_t blocks = 32ull * (4 * 4096 * 4096 + 3 * 4096 * 11008) / 8 + 32ull * 2 * 4096;
    const std::uint64_t vocab = 2ull * 32768 * 4096 / 8 + 4096; // 32000 padded to a multiple of 128 x 8
    CHECK(e.parameterCount == blocks + vocab);
    CHECK(e.parallel.group == 2); // ZeRO-1 over the 2 replicas
    TrainingConfig bad = c;
    bad.parallel.tp = 3;
    bad.parallel.gpus = 3;
    bad.parallel.strategy = ParallelStrategy::None;
    auto r = Estimator::create(m, bad, 0);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("not divisible by --tp 3") != std::string::npos);
}

TEST_CASE("pipeline parallelism, 1F1B: the first stage holds min(M, P) micro-batches' activations",
          "[parallel][pp]") {
    const Model m = parseOrFail(kStack);
    TrainingConfig c;
    c.cublasWorkspaceBytes = 0;
    c.parallel.gpus = 2;
    c.parallel.pp = 2;
    c.parallel.microbatches = 1;
    const auto one = estimator(m, c).estimate(2, true);
    c.parallel.microbatches = 8;
    const auto eight = estimator(m, c).estimate(2, true);
    REQUIRE(one);
    REQUIRE(eight);
    // the first stage: inp and 3 of the 6 blocks (each 1,001,000 parameters); no head, no loss
    CHECK(one->parameterCount == 4 * 1001000);
    const auto activationsAt = [](const Estimate& e, const std::string& label) {
        for (const auto& p : e.timeline)
            if (p.label == label) return p.live[Component::Activations];
        FAIL("no timeline point " << label);
        return std::uint64_t{0};
    };
    // M = 8 > P = 2: two micro-batches in flight, so one more micro-batch's saved tensors (a 512-byte block)
    const std::uint64_t saved = one->savedActivationBytes;
    const std::string start = "backward starts (gradient of the loss)";
    CHECK(activationsAt(*eight, start) == activationsAt(*one, start) + r512(saved));
    CHECK(eight->peakAllocatedBytes >= one->peakAllocatedBytes);
    TrainingConfig flat = c;
    flat.parallel.pp = 4;
    flat.parallel.gpus = 4;
    const Model noBlocks = parseOrFail(
        R"({"format":"batchfit-model","version":1,"name":"flat","input":{"shape":[8]},"layers":[
  {"name":"fc","op":"linear","out_features":8},{"name":"loss","op":"mse_loss"}]})");
    auto r = Estimator::create(noBlocks, flat, 0);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("splits a repeated block") != std::string::npos);
}

TEST_CASE("offloaded host memory is one GPU's share; a node holds it for each of its GPUs",
          "[parallel][offload]") {
    TrainingConfig c;
    c.optimizerOffload = true;
    c.parallel.gpus = 16;
    c.parallel.strategy = ParallelStrategy::Zero2;
    auto e = batchfit::test::estimator(batchfit::test::preset("gpt2-small"), c).estimate(1);
    REQUIRE(e);
    REQUIRE(e->hostBytes > 0);
    CHECK(e->parallel.gpusOnNode == 8); // --gpus-per-node's default
    CHECK(e->hostBytesPerNode() == e->hostBytes * 8);
    c.parallel.gpus = 4; // fewer than a node
    auto small = batchfit::test::estimator(batchfit::test::preset("gpt2-small"), c).estimate(1);
    REQUIRE(small);
    CHECK(small->parallel.gpusOnNode == 4);
    CHECK(small->hostBytesPerNode() == small->hostBytes * 4);
}
