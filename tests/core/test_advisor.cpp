// The advisor tells the truth (issue 30): a plan is for the micro-batch on the slider, every plan offered
// fits when applied, and when nothing fits every change is ranked by the memory it saves at batch 1.
#include "batchfit/estimator.h"
#include "batchfit/fit_plan.h"
#include "batchfit/gpu.h"
#include "batchfit/hf_import.h"
#include "batchfit/what_if.h"
#include "test_util.h"

using namespace batchfit;
using namespace batchfit::test;

namespace {

// The plan applied: its set-up, estimated afresh, fits the micro-batch it says it fits.
void checkApplied(const Model& m, const FitPlan& plan, const GpuSpec& gpu, std::int64_t batch) {
    auto e = Estimator::create(m, plan.config, gpu.contextBytes);
    REQUIRE(e);
    const MaxBatch largest = e->maxBatch(gpu.memoryBytes);
    CHECK(largest.largest == plan.maxMicroBatch);
    if (plan.reachesTarget) {
        auto v = e->verdict(batch, gpu.memoryBytes);
        REQUIRE(v);
        CHECK(v->fits);
    }
}

} // namespace

TEST_CASE("a plan is for the micro-batch: gradient accumulation never makes a batch 'fit'",
          "[what-if][plan]") {
    const Model m = preset("gpt2-small");
    const GpuSpec gpu = *findGpu("rtx-4090");
    TrainingConfig c;
    c.accumulationSteps = 768; // the review's set-up: a batch per update far above what one micro-batch holds
    auto e = Estimator::create(m, c, gpu.contextBytes);
    REQUIRE(e);
    const std::int64_t now = e->maxBatch(gpu.memoryBytes).largest;
    REQUIRE(now > 0);
    const std::int64_t target = now * 4; // out of memory on the slider
    const FitPlan plan = planToFit(m, c, gpu.memoryBytes, gpu.contextBytes, target);
    for (const Lever& l : plan.steps) CHECK(l.id != "accumulation");
    CHECK(plan.reachesTarget == (plan.maxMicroBatch >= target));
    CHECK(plan.maxBatch == plan.maxMicroBatch * plan.config.accumulationSteps);
    checkApplied(m, plan, gpu, target);
}

TEST_CASE("the plan for the batch on the slider is the start of the whole plan, and fits when applied",
          "[what-if][plan]") {
    const Model m = preset("resnet50");
    const GpuSpec gpu = *findGpu("rtx-4090");
    const TrainingConfig c;
    const FitPlan all = planToFit(m, c, gpu.memoryBytes, gpu.contextBytes, kMaxBatch);
    REQUIRE(all.steps.size() >= 2);
    for (std::size_t i = 0; i < all.steps.size(); ++i) {
        const std::int64_t micro = all.steps[i].maxMicroBatch();
        // a batch the first i steps do not reach and step i does
        const std::int64_t batch = i == 0 ? all.startMaxMicroBatch + 1 : all.steps[i - 1].maxMicroBatch() + 1;
        INFO("step " << i << " batch " << batch);
        const FitPlan part = planPrefix(all, batch);
        REQUIRE(part.steps.size() == i + 1);
        CHECK(part.reachesTarget);
        CHECK(part.maxMicroBatch == micro);
        CHECK(part.config == all.steps[i].config);
        checkApplied(m, part, gpu, batch);
    }
    // a batch that already fits needs no plan; one beyond every lever gets all of it, not reaching it
    CHECK(planPrefix(all, 1).steps.empty());
    CHECK(planPrefix(all, 1).reachesTarget);
    const FitPlan beyond = planPrefix(all, all.maxMicroBatch + 1);
    CHECK(beyond.steps.size() == all.steps.size());
    CHECK_FALSE(beyond.reachesTarget);
}

TEST_CASE("70B on 8 H100s with DDP: nothing fits, ZeRO-3 and FSDP are offered, ranked by what they save",
          "[what-if][parallel]") {
    auto m = importHfConfigFile(std::string(BATCHFIT_TEST_DATA) + "/hf/llama-2-70b.json");
    REQUIRE(m);
    const GpuSpec gpu = *findGpu("h100-80gb");
    TrainingConfig c;
    c.precision = Precision::AmpBf16;
    c.parallel.gpus = 8;
    c.parallel.strategy = ParallelStrategy::Ddp;
    auto e = Estimator::create(*m, c, gpu);
    REQUIRE(e);
    REQUIRE(e->maxBatch(gpu.memoryBytes).largest == 0);
    const std::vector<Lever> levers = rankLevers(*m, c, gpu.memoryBytes, gpu.contextBytes);
    auto find = [&](const std::string& id) {
        return std::find_if(levers.begin(), levers.end(), [&](const Lever& l) { return l.id == id; });
    };
    REQUIRE(find("zero3") != levers.end());
    REQUIRE(find("fsdp") != levers.end());
    // sharding the parameters over 8 GPUs saves most of a 1 TiB-per-GPU step
    CHECK(find("zero3")->savedBytesAtOne > (std::int64_t{500} << 30));
    CHECK(find("fsdp")->savedBytesAtOne > (std::int64_t{500} << 30));
    // those that make batch 1 fit first; within each, memory-only levers before those that change what is
    // trained; then by what they allow, then by what they save
    for (std::size_t i = 1; i < levers.size(); ++i) {
        const Lever &a = levers[i - 1], &b = levers[i];
        INFO(a.id << " before " << b.id);
        CHECK((a.maxBatch > 0) >= (b.maxBatch > 0));
        if ((a.maxBatch > 0) != (b.maxBatch > 0)) continue;
        CHECK(leverChangesTraining(a) <= leverChangesTraining(b));
        if (leverChangesTraining(a) == leverChangesTraining(b) && a.maxBatch == b.maxBatch)
            CHECK(a.savedBytesAtOne >= b.savedBytesAtOne);
    }
    // the combination that comes closest starts with one of them
    const FitPlan plan = planToFit(*m, c, gpu.memoryBytes, gpu.contextBytes, 1);
    REQUIRE_FALSE(plan.steps.empty());
    auto start = Estimator::create(*m, c, gpu.contextBytes);
    auto end = Estimator::create(*m, plan.config, gpu.contextBytes);
    REQUIRE(end);
    CHECK(*end->requiredBytes(1) < *start->requiredBytes(1) / 4);
    if (!plan.reachesTarget) CHECK(plan.requiredAtOneBytes == *end->requiredBytes(1));
    checkApplied(*m, plan, gpu, 1);
}
