// Pipeline stages (Narayanan et al. 2021, 1F1B: stage s keeps min(M, P - s) micro-batches in flight; the
// embedding on the first stage, the head and the loss on the last) and FSDP's MixedPrecision (fp32 shards,
// torch/distributed/fsdp/_flat_param.py). Worked examples; the counts are the models' own arithmetic.
#include "batchfit/model_io.h"
#include "program/step_program.h"
#include "test_util.h"

#include <algorithm>

using namespace batchfit;
using namespace batchfit::test;

namespace {

constexpr std::uint64_t r512(std::uint64_t b) {
    return (b + 511) / 512 * 512;
}

/// tokens [128] -> embed (V x 64) -> 8 x (fc 64 -> relu) -> head (V) -> cross-entropy
Model languageModel(std::int64_t vocab, bool tied = false) {
    const std::string v = std::to_string(vocab);
    return parseOrFail(
        R"({"format":"batchfit-model","version":1,"name":"lm","input":{"shape":[128],"dtype":"int64"},"layers":[
 {"name":"embed","op":"embedding","num_embeddings":)" +
        v + R"(,"embedding_dim":64},
 {"name":"h","repeat":8,"layers":[{"name":"fc","op":"linear","out_features":64},{"name":"act","op":"relu"}]},
 {"name":"head","op":"linear","out_features":)" +
        v + R"(,"bias":false)" + (tied ? R"(,"tied_to":"embed")" : "") + R"(},
 {"name":"loss","op":"cross_entropy"}]})");
}

TrainingConfig pipeline(std::int64_t pp, std::int64_t microbatches = 0) {
    TrainingConfig c;
    c.optimizer = OptimizerKind::Adam;
    c.cublasWorkspaceBytes = 0;
    c.parallel.gpus = pp;
    c.parallel.pp = pp;
    c.parallel.microbatches = microbatches;
    return c;
}

/// One stage lowered on its own: its peak at a batch.
std::uint64_t stagePeak(const Model& m, TrainingConfig c, std::int64_t stage, std::int64_t batch) {
    c.parallel.stage = stage;
    auto p = StepProgram::lower(m, c, 0);
    if (!p) FAIL(p.error().message);
    return (*p)->peak(batch).value_or(0);
}

bool hasLayer(const Estimate& e, const std::string& path) {
    return std::any_of(e.layers.begin(), e.layers.end(),
                       [&](const LayerActivation& l) { return l.path == path; });
}

std::uint64_t liveAt(const Estimate& e, const std::string& label, Component c) {
    auto it = std::find_if(e.timeline.begin(), e.timeline.end(),
                           [&](const TimelinePoint& p) { return p.label == label; });
    if (it == e.timeline.end()) FAIL("no timeline point " << label);
    return it->live[c];
}

} // namespace

TEST_CASE("pipeline: the last stage is the heavier with a large vocabulary and many stages",
          "[parallel][pp]") {
    // P = 8 stages of the 8 layers: the first holds the embedding and h[0] with min(M, P) = 8 micro-batches
    // in flight, the last h[7], the head and the [128, 32768] logits with min(M, 1) = 1.
    const Model m = languageModel(32768);
    const TrainingConfig c = pipeline(8);
    const auto e = estimateAt(m, 4, c);
    CHECK(e.parallel.pipelineStage == "last");
    CHECK(e.parallel.stage == 7);
    CHECK(e.parallel.microBatchesInFlight == 1);
    constexpr std::uint64_t layer = 64 * 64 + 64, head = 64 * 32768;
    CHECK(e.parameterCount == layer + head); // h[7] and the head: the last stage's share
    CHECK(hasLayer(e, "h[7].fc"));
    CHECK_FALSE(hasLayer(e, "h[6].fc"));
    CHECK_FALSE(hasLayer(e, "embed"));
    // the logits the loss reads, fp32: 128 x 32768 x 4 bytes per sample
    const auto headRow = std::find_if(e.layers.begin(), e.layers.end(),
                                      [](const LayerActivation& l) { return l.path == "head"; });
    REQUIRE(headRow != e.layers.end());
    CHECK(headRow->outputBytes == 4ull * 128 * 32768 * 4);
    // each stage on its own: the estimate is the larger one
    const std::uint64_t first = stagePeak(m, c, 0, 4), last = stagePeak(m, c, 7, 4);
    CHECK(last > first);
    CHECK(e.peakAllocatedBytes == last);
    auto fast = estimator(m, c).peakAllocatedBytes(4);
    REQUIRE(fast);
    CHECK(*fast == last);
    // a head tied to the embedding has its own copy on the last stage (Megatron's word_embeddings_for_head)
    const auto tied = estimateAt(languageModel(32768, true), 4, c);
    CHECK(tied.parameterCount == layer + head);
}

TEST_CASE("pipeline: the first stage is the heavier with a small vocabulary and micro-batches in flight",
          "[parallel][pp]") {
    // P = 4: the first stage holds the embedding and ceil(8 / 4) = 2 layers with min(M, P) = 4 micro-batches
    // in flight; the last 2 layers, a 64-wide head and 1 micro-batch.
    const Model m = languageModel(64);
    const TrainingConfig c = pipeline(4, 8);
    const auto e = estimateAt(m, 16, c);
    CHECK(e.parallel.pipelineStage == "first");
    CHECK(e.parallel.stage == 0);
    CHECK(e.parallel.microBatchesInFlight == 4);
    CHECK(e.parameterCount == 64 * 64 + 2 * (64 * 64 + 64));
    CHECK(hasLayer(e, "h[1].fc"));
    CHECK_FALSE(hasLayer(e, "h[2].fc"));
    CHECK_FALSE(hasLayer(e, "head"));
    const std::uint64_t first = stagePeak(m, c, 0, 16), last = stagePeak(m, c, 3, 16);
    CHECK(first > last);
    CHECK(e.peakAllocatedBytes == first);
    // the last stage: floor(8 / 4) = 2 layers, h[6] and h[7], and the head
    TrainingConfig l = c;
    l.parallel.stage = 3;
    auto p = StepProgram::lower(m, l, 0);
    REQUIRE(p);
    CHECK((*p)->totals().parameterCount == 2 * (64 * 64 + 64) + 64 * 64);
    // sweeps follow the stage that needs more at every batch
    const Estimator est = estimator(m, c);
    auto sweep = est.sweep(1, 64, 2, true);
    REQUIRE(sweep);
    for (const auto& pt : *sweep) {
        INFO("batch " << pt.batch);
        const std::uint64_t a = stagePeak(m, c, 0, pt.batch), b = stagePeak(m, c, 3, pt.batch);
        CHECK((pt.peakAllocatedBytes == a || pt.peakAllocatedBytes == b));
        auto req = est.requiredBytes(pt.batch);
        REQUIRE(req);
        CHECK(pt.requiredBytes == *req);
    }
}

TEST_CASE("pipeline: an uneven split gives the first stage the remainder", "[parallel][pp]") {
    // L = 8, P = 3: the first stage ceil(8/3) = 3 layers, the last floor(8/3) = 2 (h[6], h[7])
    const Model m = languageModel(256);
    TrainingConfig c = pipeline(3);
    c.parallel.gpus = 3;
    c.parallel.stage = 2;
    auto p = StepProgram::lower(m, c, 0);
    REQUIRE(p);
    CHECK((*p)->totals().parameterCount == 2 * (64 * 64 + 64) + 64 * 256);
    c.parallel.stage = 0;
    auto f = StepProgram::lower(m, c, 0);
    REQUIRE(f);
    CHECK((*f)->totals().parameterCount == 256 * 64 + 3 * (64 * 64 + 64));
}

TEST_CASE("FSDP MixedPrecision(param_dtype=bf16): fp32 shards, no master weights, bf16 gathers",
          "[parallel][fsdp]") {
    // [16, 1000] -> inp -> 6 x (fc 1000 -> relu) -> head (10): units h[0]..h[5] of 1,001,000 elements and a
    // root of 1,011,010, over 3 GPUs (padded: 333,667 and 337,004 per rank).
    const Model m = parseOrFail(
        R"({"format":"batchfit-model","version":1,"name":"stack","input":{"shape":[16,1000]},"layers":[
 {"name":"inp","op":"linear","out_features":1000},
 {"name":"h","repeat":6,"layers":[{"name":"fc","op":"linear","out_features":1000},{"name":"act","op":"relu"}]},
 {"name":"head","op":"linear","out_features":10},{"name":"loss","op":"mse_loss"}]})");
    TrainingConfig c;
    c.optimizer = OptimizerKind::Adam;
    c.cublasWorkspaceBytes = 0;
    c.parallel.gpus = 3;
    c.parallel.strategy = ParallelStrategy::Fsdp;
    TrainingConfig fp32 = c;
    c.precision = Precision::MixedBf16Master;
    const auto mp = estimator(m, c).estimate(2, true);
    const auto full = estimator(m, fp32).estimate(2, true);
    REQUIRE(mp);
    REQUIRE(full);
    // _local_shard stays fp32 (the model is fp32 when wrapped); the sharded gradient is cast to it
    // (_cast_grad_to_param_dtype); the optimizer steps the fp32 shards, so no master copy
    constexpr std::uint64_t shard = 333667 * 4, rootShard = 337004 * 4;
    CHECK(mp->parameterBytes == 6 * shard + rootShard);
    CHECK(mp->gradientBytes == 6 * shard + rootShard);
    CHECK(mp->optimizerStateBytes == full->optimizerStateBytes);
    // _full_param_padded is in param_dtype: bf16 gathers, half of fp32's
    constexpr std::uint64_t gathered = 333667 * 3 * 2, rootGathered = 337004 * 3 * 2;
    CHECK(mp->parallel.largestGatheredBytes == rootGathered);
    CHECK(full->parallel.largestGatheredBytes == 2 * rootGathered);
    const std::uint64_t base = 6 * r512(shard) + r512(rootShard) + r512(rootGathered);
    CHECK(liveAt(*mp, "h[2].fc (linear)", Component::Parameters) == base + 2 * r512(gathered));
    // the bf16 copy of the shard lives while its all-gather runs (_use_low_precision_shard, then
    // _free_low_precision_sharded_param)
    CHECK(liveAt(*mp, "all-gather h[3] (fsdp)", Component::Parameters) ==
          base + 2 * r512(gathered) + r512(333667 * 2));
    // ZeRO keeps bf16 weights and fp32 masters: 4 bytes per element of its partitions more
    TrainingConfig z = c;
    z.parallel.strategy = ParallelStrategy::Zero2;
    TrainingConfig z32 = z;
    z32.precision = Precision::Fp32;
    const auto zero = estimateAt(m, 2, z), zero32 = estimateAt(m, 2, z32);
    const std::uint64_t partitions = 7 * (333334 + 334) + (3334 + 4); // ceil(numel / 3) per tensor
    CHECK(zero.optimizerStateBytes == zero32.optimizerStateBytes + 4 * partitions);
}

TEST_CASE("FSDP with QLoRA: a unit of 4-bit weights and fp32 adapters is sharded by its bytes",
          "[parallel][fsdp][qlora]") {
    // Each unit: a 256 x 256 NF4 weight (bitsandbytes' quantize_4bit: 32,768 B of 4-bit codes, an fp32 absmax
    // per 64 elements, 4,096 B, and the 16-entry fp32 code table, 64 B) and its rank-8 LoRA adapters in fp32
    // (2 x 8 x 256 x 4 = 16,384 B); the root: the fp32 head (8 x 256 + 8).
    const Model m = parseOrFail(
        R"({"format":"batchfit-model","version":1,"name":"q","input":{"shape":[16,256]},"layers":[
 {"name":"h","repeat":2,"layers":[{"name":"fc","op":"linear","out_features":256,"bias":false}]},
 {"name":"head","op":"linear","out_features":8},{"name":"loss","op":"mse_loss"}]})");
    TrainingConfig c;
    c.cublasWorkspaceBytes = 0;
    c.quant.kind = QuantKind::Nf4;
    c.lora.rank = 8;
    c.lora.targets = {"fc"};
    c.parallel.gpus = 2;
    c.parallel.strategy = ParallelStrategy::Fsdp;
    const auto e = estimateAt(m, 2, c);
    constexpr std::uint64_t unit = 32768 + 4096 + 64 + 16384, root = (8 * 256 + 8) * 4;
    CHECK(e.parameterBytes == 2 * (unit / 2) + root / 2);
    CHECK(e.parallel.largestGatheredBytes == unit); // gathered whole, not 4 bytes per packed byte
}

TEST_CASE("sequence parallelism in a model file's training section: saved, read back, refused without TP",
          "[parallel][sp][model_io]") {
    const Model m = preset("gpt2-small");
    TrainingSetup s;
    s.gpuId = "h100-80gb";
    s.config.parallel.gpus = 8;
    s.config.parallel.tp = 4;
    s.config.parallel.sequenceParallel = true;
    s.config.parallel.strategy = ParallelStrategy::Ddp;
    const std::string text = serializeModelDocument(m, s);
    CHECK(text.find("\"sequence_parallel\": true") != std::string::npos);
    auto back = parseModelDocument(text, "run.json");
    REQUIRE(back);
    REQUIRE(back->setup);
    CHECK(back->setup->config.parallel.sequenceParallel);
    CHECK(back->setup->config.parallel == s.config.parallel);
    std::string noTp = text;
    const auto at = noTp.find("\"tp\": 4");
    REQUIRE(at != std::string::npos);
    noTp.replace(at, 7, "\"tp\": 1");
    auto bad = parseModelDocument(noTp, "run.json");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("$.training.parallel.sequence_parallel: sequence parallelism splits the "
                                   "sequence over the tensor-parallel group: it needs --tp T > 1") !=
          std::string::npos);
}

TEST_CASE("pipeline: --freeze patterns name layers of the whole model, not of one stage", "[parallel][pp]") {
    const Model m = languageModel(32768);
    TrainingConfig c = pipeline(8);
    c.freeze = {"embed"}; // only on the first stage; the last one trains h[7] and the head
    const auto e = estimateAt(m, 1, c);
    CHECK(e.parallel.pipelineStage == "last");
    CHECK(e.trainableParameterCount == 64 * 64 + 64 + 64 * 32768);
    c.freeze = {"embedd"}; // matches nothing anywhere: still refused
    auto r = Estimator::create(m, c, 0);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("--freeze 'embedd' matches no layer") != std::string::npos);
}
