// TrainingConfig::epochSamples: the epoch's last, smaller batch replayed before the step estimated
// (DataLoader drop_last=False; DistributedSampler gives each GPU ceil(N / replicas) samples).
#include "test_util.h"

using namespace batchfit;
using namespace batchfit::test;

namespace {

std::vector<std::pair<int, std::uint64_t>> kindsAndSizes(const std::vector<AllocatorEvent>& ev,
                                                         std::size_t from, std::size_t to) {
    std::vector<std::pair<int, std::uint64_t>> out;
    for (std::size_t i = from; i < to; ++i) out.emplace_back(static_cast<int>(ev[i].kind), ev[i].size);
    return out;
}

TrainingConfig withEpoch(std::int64_t samples) {
    TrainingConfig c;
    c.epochSamples = samples;
    return c;
}

} // namespace

TEST_CASE("an epoch that divides into full batches replays nothing more", "[allocator][epoch]") {
    const Model m = preset("vit_b_16");
    auto plain = estimator(m).allocatorEvents(8);
    auto even = estimator(m, withEpoch(50000)).allocatorEvents(8); // 50000 = 6250 x 8
    REQUIRE(plain);
    REQUIRE(even);
    CHECK(kindsAndSizes(*even, 0, even->size()) == kindsAndSizes(*plain, 0, plain->size()));
    auto e = estimator(m, withEpoch(50000)).estimate(8);
    REQUIRE(e);
    CHECK(e->allocator.lastBatch == 0);
    CHECK(e->allocator.iterations == 2);
}

TEST_CASE("the last batch is the steady step at its own size, between the first step and the step estimated",
          "[allocator][epoch]") {
    const Model m = preset("vit_b_16");
    const std::int64_t samples = 50003; // 6250 x 8 + 3
    auto plain = estimator(m).allocatorEvents(8);
    auto withLast = estimator(m, withEpoch(samples)).allocatorEvents(8);
    auto atThree = estimator(m).allocatorEvents(3);
    REQUIRE(plain);
    REQUIRE(withLast);
    REQUIRE(atThree);
    REQUIRE(withLast->size() > plain->size());
    const std::size_t steady = withLast->size() - plain->size(); // one more steady step
    const std::size_t warm = plain->size() - steady;
    // First step at 8, unchanged.
    CHECK(kindsAndSizes(*withLast, 0, warm) == kindsAndSizes(*plain, 0, warm));
    // Then the steady step at 3, as a plain replay at batch 3 runs it after its own first step.
    CHECK(kindsAndSizes(*withLast, warm, warm + steady) ==
          kindsAndSizes(*atThree, atThree->size() - steady, atThree->size()));
    // Then the steady step at 8.
    CHECK(kindsAndSizes(*withLast, warm + steady, withLast->size()) ==
          kindsAndSizes(*plain, warm, plain->size()));
    // The last batch's ids are its own: no id is allocated twice while live (the replay accepts the trace).
    auto r = replayAllocations(*withLast, ReplayOptions{});
    REQUIRE(r);

    auto e = estimator(m, withEpoch(samples)).estimate(8);
    REQUIRE(e);
    CHECK(e->allocator.lastBatch == 3);
    CHECK(e->allocator.iterations == 3);
    CHECK(e->allocator.peakReservedBytes == r->stats.peakReservedBytes);
    // The peak allocated is the full batch's: the smaller step allocates less.
    CHECK(e->peakAllocatedBytes == estimateAt(m, 8).peakAllocatedBytes);
}

TEST_CASE("each GPU of a data-parallel group gets ceil(samples / replicas), as DistributedSampler pads",
          "[allocator][epoch][parallel]") {
    const Model m = preset("resnet50");
    TrainingConfig c = withEpoch(50001);
    c.parallel.gpus = 4;
    c.parallel.strategy = ParallelStrategy::Ddp;
    auto e = estimator(m, c).estimate(8);
    REQUIRE(e);
    CHECK(e->allocator.lastBatch == 12501 % 8); // ceil(50001 / 4) = 12501
    c.parallel.gpus = 1;
    c.parallel.strategy = ParallelStrategy::None;
    auto single = estimator(m, c).estimate(8);
    REQUIRE(single);
    CHECK(single->allocator.lastBatch == 50001 % 8);
    // One batch holds the whole epoch: nothing smaller runs, the full batch is estimated.
    auto whole = estimator(m, withEpoch(6)).estimate(8);
    REQUIRE(whole);
    CHECK(whole->allocator.lastBatch == 0);
}

TEST_CASE("samples per epoch: set-ups the replay cannot run are refused with the reason",
          "[allocator][epoch]") {
    const Model m = preset("resnet50");
    auto refuse = [&](TrainingConfig c) {
        c.epochSamples = 1001;
        auto e = Estimator::create(m, c, 0);
        REQUIRE_FALSE(e);
        return e.error().message;
    };
    TrainingConfig c;
    c.accumulationSteps = 4;
    CHECK(refuse(c).find("gradient accumulation") != std::string::npos);
    c = {};
    c.firstStep = true;
    CHECK(refuse(c).find("first_step") != std::string::npos);
    c = {};
    c.fragmentationFraction = 0.05;
    CHECK(refuse(c).find("fragmentation_fraction") != std::string::npos);
    c = {};
    c.epochSamples = 0;
    auto zero = Estimator::create(m, c, 0);
    REQUIRE_FALSE(zero);
    CHECK(zero.error().message.find("expected 1 .. 10^15") != std::string::npos);
}

TEST_CASE("an OOM in the epoch's last batch names it", "[allocator][epoch]") {
    // vit_b_16 b8 with 50,007 samples: the last batch (7) is the first step with optimizer states, so on a
    // 2 GiB card (no margin, no context) it is the step that runs out.
    TrainingConfig c = withEpoch(50007);
    c.marginFraction = 0;
    c.cudaContextBytes = 0;
    auto v = estimator(preset("vit_b_16"), c).verdict(8, std::uint64_t{2} << 30);
    REQUIRE(v);
    CHECK_FALSE(v->fits);
    REQUIRE(v->oom);
    CHECK(v->oom->lastBatch == 7);
    CHECK_FALSE(v->oom->firstIteration);
    CHECK_FALSE(v->oom->stepLabel.empty());
    // Without the epoch the same card fails in another step, never a last batch.
    c.epochSamples.reset();
    auto plain = estimator(preset("vit_b_16"), c).verdict(8, std::uint64_t{2} << 30);
    REQUIRE(plain);
    if (plain->oom) CHECK(plain->oom->lastBatch == 0);
}
