#include "batchfit/cli_command.h"
#include "batchfit/fit_plan.h"
#include "batchfit/presets.h"
#include "batchfit/verdict_text.h"
#include "batchfit/what_if.h"
#include "test_util.h"

#include <algorithm>
#include <limits>

using namespace batchfit;
using namespace batchfit::test;

TEST_CASE("components at the peak add up to the peak", "[estimator]") {
    for (const char* id : {"resnet50", "transformer-12", "gpt2-small", "mobilenet_v2"}) {
        INFO(id);
        auto e = estimateAt(preset(id), 4);
        CHECK(e.atPeak.total() == e.peakAllocatedBytes);
        CHECK(e.atPeak[Component::Parameters] >= e.parameterBytes);
        CHECK(e.requiredBytes == e.reservedBytes + e.cudaContextBytes);
        CHECK(e.reservedBytes >= e.peakAllocatedBytes);
    }
}

TEST_CASE("peak(b+1) >= peak(b), required >= peak, and the solver is exact", "[estimator][property]") {
    for (const char* id : {"resnet50", "transformer-12", "gpt2-small", "vgg16", "vit_b_16"}) {
        INFO(id);
        Estimator est = estimator(preset(id));
        std::uint64_t prev = 0;
        for (std::int64_t b = 1; b <= 64; ++b) {
            auto p = est.peakAllocatedBytes(b);
            auto r = est.requiredBytes(b);
            REQUIRE(p);
            REQUIRE(r);
            CHECK(*p >= prev);
            // The allocator replay's reserved memory is not monotone in the batch, but never below the peak.
            CHECK(*r >= *p);
            prev = *p;
        }
        for (std::uint64_t gib : {8ull, 16ull, 24ull, 80ull}) {
            const std::uint64_t cap = gib << 30;
            MaxBatch m = est.maxBatch(cap);
            if (m.largest > 0) {
                CHECK(est.verdict(m.largest, cap)->fits);
                CHECK(m.largestMultipleOf8 == m.largest / 8 * 8);
                CHECK(m.requiredAtLargest == est.verdict(m.largest, cap)->requiredBytes);
            }
            CHECK_FALSE(est.verdict(m.largest + 1, cap)->fits);
        }
    }
}

TEST_CASE("the peak of a CNN is in the backward; the verdict reports headroom", "[estimator]") {
    Estimator est = estimator(preset("resnet50"));
    auto e = est.estimate(64);
    REQUIRE(e);
    CHECK(e->peakPhase == Phase::Backward);
    CHECK(e->atPeak[Component::Activations] > e->atPeak[Component::Parameters]);
    auto v = est.verdict(64, 24ull << 30);
    REQUIRE(v);
    CHECK(v->usableBytes == static_cast<std::uint64_t>(static_cast<double>(24ull << 30) * 0.95));
    CHECK(v->headroomBytes ==
          static_cast<std::int64_t>(v->usableBytes) - static_cast<std::int64_t>(e->requiredBytes));
}

TEST_CASE("gradient checkpointing never raises saved activations and lowers them for deep stacks",
          "[estimator][property]") {
    for (const char* id : {"resnet50", "transformer-12", "gpt2-small", "vit_b_16"}) {
        INFO(id);
        Model m = preset(id);
        const auto base = estimateAt(m, 8);
        TrainingConfig every;
        every.checkpointing = Checkpointing::EveryBlock;
        const auto ck = estimateAt(m, 8, every);
        CHECK(ck.savedActivationBytes < base.savedActivationBytes);
        TrainingConfig kth = every;
        kth.checkpointing = Checkpointing::EveryKthBlock;
        kth.checkpointEvery = 2;
        const auto k2 = estimateAt(m, 8, kth);
        CHECK(k2.savedActivationBytes <= base.savedActivationBytes);
        CHECK(k2.savedActivationBytes >= ck.savedActivationBytes);
        TrainingConfig sel;
        sel.checkpointing = Checkpointing::Selective;
        CHECK(estimateAt(m, 8, sel).savedActivationBytes <= base.savedActivationBytes);
    }
}

TEST_CASE("selective checkpointing removes the S x S attention tensors", "[estimator]") {
    Model m = preset("gpt2-small");
    TrainingConfig sel;
    sel.checkpointing = Checkpointing::Selective;
    const auto base = estimateAt(m, 1);
    const auto s = estimateAt(m, 1, sel);
    // Per layer, softmax output (4 B) + dropout mask (1 B) + dropped probabilities (4 B) of 12 x 1024 x 1024.
    const std::uint64_t perLayer = 12ull * 1024 * 1024 * 9;
    CHECK(base.savedActivationBytes - s.savedActivationBytes >= 12 * perLayer);
}

TEST_CASE("adding a layer never lowers the peak", "[estimator][property]") {
    Model m = preset("resnet50");
    const auto base = estimateAt(m, 16);
    Model more = m;
    Layer extra;
    extra.name = "extra";
    extra.op = "relu";
    more.layers.insert(more.layers.begin() + 3, extra); // after relu, before maxpool
    CHECK(estimateAt(more, 16).peakAllocatedBytes >= base.peakAllocatedBytes);
    Model wider = m;
    Layer fc;
    fc.name = "fc2";
    fc.op = "linear";
    fc.attrs.set("out_features", std::int64_t{1000});
    wider.layers.insert(wider.layers.end() - 1, fc);
    CHECK(estimateAt(wider, 16).peakAllocatedBytes >= base.peakAllocatedBytes);
}

TEST_CASE("sweep matches single estimates", "[estimator]") {
    Estimator est = estimator(preset("transformer-12"));
    auto pts = est.sweep(1, 1024, 2, true);
    REQUIRE(pts);
    REQUIRE(pts->size() == 11);
    for (const auto& p : *pts) {
        auto e = est.estimate(p.batch);
        REQUIRE(e);
        CHECK(p.peakAllocatedBytes == e->peakAllocatedBytes);
        CHECK(p.requiredBytes == e->requiredBytes);
        CHECK(p.atPeak.total() == p.peakAllocatedBytes);
    }
    auto lin = est.sweep(1, 10, 3, false);
    REQUIRE(lin);
    CHECK(lin->size() == 4);
    CHECK(lin->back().batch == 10);
    CHECK_FALSE(est.sweep(0, 10));
}

TEST_CASE("timeline walks forward, backward and the optimizer step", "[estimator]") {
    auto e = estimator(preset("resnet50")).estimate(8, true);
    REQUIRE(e);
    REQUIRE_FALSE(e->timeline.empty());
    CHECK(e->timeline.front().phase == Phase::Setup);
    CHECK(e->timeline.back().phase == Phase::OptimizerStep);
    std::uint64_t maxLive = 0;
    bool sawBackward = false;
    for (const auto& p : e->timeline) {
        maxLive = std::max(maxLive, p.live.total());
        sawBackward = sawBackward || p.phase == Phase::Backward;
    }
    CHECK(sawBackward);
    CHECK(maxLive == e->peakAllocatedBytes);
}

TEST_CASE("what-if levers are ranked and each is a real improvement or not", "[estimator][what-if]") {
    Model m = preset("gpt2-small");
    auto levers = rankLevers(m, TrainingConfig{}, 24ull << 30, 536870912);
    REQUIRE(levers.size() >= 4);
    // memory-only levers first, each group by the batch it allows
    for (std::size_t i = 1; i < levers.size(); ++i) {
        CHECK(leverChangesTraining(levers[i - 1]) <= leverChangesTraining(levers[i]));
        if (leverChangesTraining(levers[i - 1]) == leverChangesTraining(levers[i]))
            CHECK(levers[i - 1].maxBatch >= levers[i].maxBatch);
    }
    bool sawCheckpointing = false;
    for (const auto& l : levers) {
        if (l.id == "checkpointing") {
            sawCheckpointing = true;
            CHECK(l.maxBatch > l.baselineMaxBatch);
        }
        auto e = Estimator::create(m, l.config, 536870912);
        REQUIRE(e);
        CHECK(e->maxBatch(24ull << 30).largest * l.config.accumulationSteps == l.maxBatch);
    }
    CHECK(sawCheckpointing);
    // Under torch 2.x the default Adam is foreach: fused=True is a lever; under 1.13 rules it is not offered.
    const auto has = [](const std::vector<Lever>& ls, const char* id) {
        return std::any_of(ls.begin(), ls.end(), [&](const Lever& l) { return l.id == id; });
    };
    CHECK(has(levers, "fused"));
    TrainingConfig old;
    old.torch = TorchRules::Torch113;
    CHECK_FALSE(has(rankLevers(m, old, 24ull << 30, 536870912), "fused"));
    // GPT-2's head is tied to the frozen embedding: "freeze the backbone" would train nothing, so it is not
    // offered
    CHECK_FALSE(has(levers, "freeze-backbone"));
}

TEST_CASE("fine-tuning levers: LoRA for an LLM, a frozen backbone for a classifier", "[estimator][what-if]") {
    const auto find = [](const std::vector<Lever>& ls, const char* id) -> const Lever* {
        for (const auto& l : ls)
            if (l.id == id) return &l;
        return nullptr;
    };
    // Llama-2-7B on 24 GB: nothing fits in full fp32 training; LoRA r=16 (PEFT's q_proj, v_proj) on bf16
    // weights is offered, with the family's default targets.
    const Model llama = preset("llama-2-7b");
    const auto ll = rankLevers(llama, TrainingConfig{}, 24ull << 30, 536870912);
    const Lever* lora = find(ll, "lora");
    REQUIRE(lora);
    CHECK(lora->config.lora.rank == 16);
    CHECK(lora->config.precision == Precision::PureBf16);
    CHECK(lora->baselineMaxBatch == 0);
    // ResNet-50: train only fc
    const Model resnet = preset("resnet50");
    const auto rl = rankLevers(resnet, TrainingConfig{}, 24ull << 30, 536870912);
    const Lever* head = find(rl, "freeze-backbone");
    REQUIRE(head);
    CHECK(head->config.trainOnly == std::vector<std::string>{"fc"});
    CHECK(head->maxBatch > 4 * head->baselineMaxBatch);
    auto e = Estimator::create(resnet, head->config, 536870912);
    REQUIRE(e);
    CHECK(e->trainableParameterCount() == 2048 * 1000 + 1000);
}

TEST_CASE("the pruned sweep evaluator is exact at every batch", "[estimator][property]") {
    std::vector<TrainingConfig> configs(3);
    configs[1].precision = Precision::AmpBf16;
    configs[1].checkpointing = Checkpointing::EveryBlock;
    configs[2].optimizer = OptimizerKind::Sgd;
    configs[2].accumulationSteps = 2;
    for (const char* id : {"resnet50", "gpt2-small", "mobilenet_v2"}) {
        for (const auto& c : configs) {
            INFO(id);
            Estimator est = estimator(preset(id), c);
            auto pts = est.sweep(1, 300, 7, false);
            REQUIRE(pts);
            for (const auto& p : *pts) {
                INFO("batch " << p.batch);
                CHECK(p.peakAllocatedBytes == *est.peakAllocatedBytes(p.batch));
                auto e = est.estimate(p.batch);
                CHECK(p.atPeak.total() == e->atPeak.total());
            }
        }
    }
}

TEST_CASE("per-layer parameters add up to the model's, tied weights once; outputs carry their shape",
          "[estimator]") {
    for (const auto& p : presetList()) {
        INFO(p.id);
        auto m = loadPreset(p.id);
        REQUIRE(m);
        auto est = Estimator::create(*m, TrainingConfig{});
        REQUIRE(est);
        auto e = est->estimate(2);
        REQUIRE(e);
        std::uint64_t sum = 0;
        for (const auto& l : e->layers) sum += l.parameterCount;
        CHECK(sum == e->parameterCount);
    }
    auto m = loadPreset("gpt2-small"); // lm_head tied to the token embedding: counted at wte only
    REQUIRE(m);
    auto e = Estimator::create(*m, TrainingConfig{})->estimate(1);
    REQUIRE(e);
    std::uint64_t sum = 0;
    for (const auto& l : e->layers) sum += l.parameterCount;
    CHECK(sum == 124'439'808);
    const auto& first = e->layers.at(1); // row 0 is the input batch
    CHECK(first.outputBatched);
    CHECK_FALSE(first.outputShape.empty());
}

TEST_CASE("the verdict's words: one denominator (usable), two decimals", "[verdict]") {
    constexpr std::uint64_t GiB = 1ull << 30;
    Verdict v;
    v.capacityBytes = 24 * GiB;
    v.usableBytes = v.capacityBytes - v.capacityBytes / 20; // 5% margin: 22.80 GiB
    const std::uint64_t needs = 6 * GiB + GiB / 4;
    v.fits = true;
    v.headroomBytes = static_cast<std::int64_t>(v.usableBytes - needs);
    CHECK(verdictSentence(v, needs) == "fits: 6.25 of 22.80 GiB usable (27%)");
    CHECK(verdictHeadline(v, needs) == verdictSentence(v, needs));
    const VerdictFigures f = verdictFigures(v, needs);
    CHECK(f.percentOfUsable == 27);
    CHECK(f.shortGib == 0.0);

    const std::uint64_t big = 266 * GiB;
    v.fits = false;
    v.headroomBytes = static_cast<std::int64_t>(v.usableBytes) - static_cast<std::int64_t>(big);
    CHECK(verdictHeadline(v, big) == "out of memory by 243.20 GiB");
    CHECK(verdictSentence(v, big) == "out of memory by 243.20 GiB: needs 266.00 of 22.80 GiB usable");
    v.headroomBytes = std::numeric_limits<std::int64_t>::min(); // absurd, but no overflow
    CHECK(verdictFigures(v, big).shortGib > 1e9);
}

TEST_CASE("a lever is shown when it gains 1% or makes batch 1 fit", "[what-if]") {
    Lever l;
    l.baselineMaxBatch = 259;
    l.maxBatch = 260; // x1.004: reads as x1.00
    CHECK_FALSE(leverHelps(l));
    l.maxBatch = 262; // +1.2%
    CHECK(leverHelps(l));
    l.maxBatch = 259;
    CHECK_FALSE(leverHelps(l));
    l.baselineMaxBatch = 0;
    l.maxBatch = 0; // still does not fit
    CHECK_FALSE(leverHelps(l));
    l.maxBatch = 1;
    CHECK(leverHelps(l));
    l.baselineMaxBatch = 7;
    l.maxBatch = 8; // small batches: one more is a real gain
    CHECK(leverHelps(l));
}

TEST_CASE("levers combined: each step raises the largest batch, and the plan stops at the target",
          "[what-if][plan]") {
    auto model = loadPreset("resnet50");
    REQUIRE(model);
    TrainingConfig config;
    const std::uint64_t cap = 24ull << 30;
    const auto single = rankLevers(*model, config, cap, 512ull << 20);
    REQUIRE_FALSE(single.empty());
    const FitPlan plan = planToFit(*model, config, cap, 512ull << 20, 100000);
    REQUIRE(plan.steps.size() >= 2);
    // more than the best lever alone that a plan may combine (training only the head is offered alone)
    const auto combinable =
        std::find_if(single.begin(), single.end(), [](const Lever& l) { return l.id != "freeze-backbone"; });
    REQUIRE(combinable != single.end());
    CHECK(plan.maxBatch > combinable->maxBatch);
    for (const auto& s : plan.steps) CHECK(s.id != "freeze-backbone");
    for (std::size_t i = 1; i < plan.steps.size(); ++i) {
        CHECK(plan.steps[i].maxBatch > plan.steps[i - 1].maxBatch);
        CHECK(plan.steps[i].baselineMaxBatch == plan.steps[i - 1].maxBatch);
    }
    CHECK(plan.config == plan.steps.back().config);
    CHECK_FALSE(plan.reachesTarget);
    // Re-estimating the final set-up gives the plan's figure.
    auto e = Estimator::create(*model, plan.config, 512ull << 20);
    REQUIRE(e);
    CHECK(e->maxBatch(cap).largest * plan.config.accumulationSteps == plan.maxBatch);

    const FitPlan small =
        planToFit(*model, config, cap, 512ull << 20, 300); // one lever (bf16: ~500) is enough
    CHECK(small.reachesTarget);
    CHECK(small.steps.size() == 1);
    const FitPlan none = planToFit(*model, config, cap, 512ull << 20, 16); // already fits
    CHECK(none.steps.empty());
    CHECK(none.reachesTarget);
}

TEST_CASE("every catalogue GPU's largest batch, and the smallest that fits", "[gpus]") {
    auto model = loadPreset("resnet50");
    REQUIRE(model);
    const auto fits = fitAcrossCatalogue(*model, TrainingConfig{});
    REQUIRE(fits.size() == gpuCatalogue().size());
    for (std::size_t i = 1; i < fits.size(); ++i)
        CHECK(fits[i - 1].gpu.memoryBytes <= fits[i].gpu.memoryBytes);
    // The figure for one GPU is the estimator's own for that GPU.
    const auto rtx =
        std::find_if(fits.begin(), fits.end(), [](const GpuFit& f) { return f.gpu.id == "rtx-4090"; });
    REQUIRE(rtx != fits.end());
    auto e = Estimator::create(*model, TrainingConfig{}, rtx->gpu);
    REQUIRE(e);
    CHECK(rtx->maxBatch == e->maxBatch(rtx->gpu.memoryBytes).largest);
    const auto smallest = smallestGpuThatFits(fits, rtx->maxBatch);
    REQUIRE(smallest);
    CHECK(smallest->gpu.memoryBytes <= rtx->gpu.memoryBytes);
    CHECK(smallest->maxBatch >= rtx->maxBatch);
    for (const GpuFit& f : fits)
        if (f.gpu.memoryBytes < smallest->gpu.memoryBytes) CHECK(f.maxBatch < rtx->maxBatch);
    CHECK_FALSE(smallestGpuThatFits(fits, 10000000).has_value());
}

TEST_CASE("when nothing fits, the plan takes the levers that save the most at batch 1", "[what-if][plan]") {
    auto model = loadPreset("gpt2-small");
    REQUIRE(model);
    TrainingConfig config;
    auto e = Estimator::create(*model, config, 512ull << 20);
    REQUIRE(e);
    const std::uint64_t needsAtOne = e->estimate(1)->requiredBytes;
    // A GPU a little too small for batch 1: no lever alone may be enough, together they are.
    const std::uint64_t cap = needsAtOne * 3 / 5;
    REQUIRE(e->maxBatch(cap).largest == 0);
    const FitPlan plan = planToFit(*model, config, cap, 512ull << 20, 1);
    REQUIRE_FALSE(plan.steps.empty());
    auto last = Estimator::create(*model, plan.config, 512ull << 20);
    REQUIRE(last);
    CHECK(last->estimate(1)->requiredBytes < needsAtOne); // each step saved memory at batch 1
    CHECK(plan.reachesTarget == (plan.maxBatch >= 1));
}

TEST_CASE("the CLI command line of a set-up names only what differs from the defaults", "[cli-command]") {
    const auto rtx = findGpu("rtx-4090");
    REQUIRE(rtx);
    const CliCommand plain = cliCommand("--preset", "resnet50", TrainingConfig{}, *rtx, 64);
    CHECK(plain.line == "batchfit-cli estimate --preset resnet50 --batch 64 --gpu rtx-4090");
    CHECK(plain.unsaid.empty());

    TrainingConfig c;
    c.optimizer = OptimizerKind::AdamW;
    c.impl = OptimizerImpl::Fused;
    c.precision = Precision::AmpBf16;
    c.checkpointing = Checkpointing::EveryKthBlock;
    c.checkpointEvery = 3;
    c.accumulationSteps = 4;
    c.marginFraction = 0.1;
    c.cudaContextBytes = 300ull << 20;
    c.zeroGradSetToNone = false;
    c.optimizerOffload = true;
    c.rmspropCentered = true;
    const CliCommand full = cliCommand("--model", "my model's file.json", c, customGpu(20.0), 8);
    CHECK(full.line ==
          "batchfit-cli estimate --model 'my model'\\''s file.json' --batch 8 --gpu 20GiB "
          "--optimizer adamw --impl fused --rmsprop-centered --precision amp-bf16 --checkpointing every-k "
          "--checkpoint-every 3 --accumulation 4 --no-set-to-none --offload --context-mib 300 --margin 0.1");
    // every setting has a flag now (the settings table): nothing is left unsaid
    CHECK(full.unsaid.empty());
    CHECK(full.arguments[2] == "my model's file.json"); // unquoted for a process call
    CHECK(shellQuote("plain-name_1.json") == "plain-name_1.json");
    CHECK(shellQuote("") == "''");
    TrainingConfig alloc;
    alloc.allocConf = "expandable_segments:True";
    alloc.replaySequences = {256, 1024, 512};
    CHECK(cliCommand("--preset", "gpt2-small", alloc, *rtx, 8).line ==
          "batchfit-cli estimate --preset gpt2-small --batch 8 --gpu rtx-4090 "
          "--alloc-conf expandable_segments:True --replay-seqs 256,1024,512");
    TrainingConfig epoch;
    epoch.epochSamples = 50003;
    CHECK(cliCommand("--preset", "vit_b_16", epoch, *rtx, 8).line ==
          "batchfit-cli estimate --preset vit_b_16 --batch 8 --gpu rtx-4090 --epoch-samples 50003");
}

TEST_CASE("every catalogue GPU's capacity is the figure its source quotes", "[gpu]") {
    for (const GpuSpec& g : gpuCatalogue()) {
        INFO(g.id << ": " << g.source);
        CHECK(g.memoryBytes % (1u << 20) == 0);
        const std::string mib = std::to_string(g.memoryBytes >> 20) + " MiB";
        const std::string gib = std::to_string(g.memoryBytes >> 30) + " GiB";
        CHECK((g.source.find(mib) != std::string::npos || g.source.find(gib) != std::string::npos));
        if (g.vendor == "NVIDIA") CHECK(g.source.find("MiB") != std::string::npos);
    }
    for (const char* id : {"rtx-3050", "rtx-4060", "rtx-a6000", "rtx-6000-ada", "a40", "h100-nvl"})
        CHECK(findGpu(id));
}
