// The allocator replay inside the estimate: reserved memory, the verdict, the solver and the step's trace.
#include "batchfit/allocator_trace.h"
#include "batchfit/what_if.h"
#include "test_util.h"

#include <algorithm>

using namespace batchfit;
using namespace batchfit::test;

TEST_CASE("reserved comes from the replay: never below the peak, grows over the step, context on top",
          "[allocator][estimator]") {
    for (const char* id : {"gpt2-small", "resnet50", "transformer-12"}) {
        INFO(id);
        Estimator est = estimator(preset(id));
        auto e = est.estimate(4, true);
        REQUIRE(e);
        CHECK(e->allocator.simulated);
        CHECK(e->allocator.iterations == 2);
        CHECK(e->reservedBytes == e->allocator.peakReservedBytes);
        CHECK(e->reservedBytes >= e->peakAllocatedBytes);
        CHECK(e->reservedBytes % (2u << 20) == 0); // segments are multiples of 2 MiB
        // The allocator hands whole blocks out: what max_memory_allocated() shows is at least the requests.
        CHECK(e->allocator.peakAllocatedBytes >= e->peakAllocatedBytes);
        CHECK(e->requiredBytes == e->reservedBytes + e->cudaContextBytes);
        // Nothing is ever released on a GPU large enough: reserved only grows, and ends at its peak.
        std::uint64_t prev = 0;
        for (const auto& p : e->timeline) {
            CHECK(p.reservedBytes >= prev);
            prev = p.reservedBytes;
        }
        CHECK(prev == e->reservedBytes);
        REQUIRE(est.requiredBytes(4));
        CHECK(*est.requiredBytes(4) == e->requiredBytes);
    }
}

TEST_CASE("the fragmentation_fraction override replaces the replay", "[allocator][estimator]") {
    TrainingConfig c;
    c.fragmentationFraction = 0.05;
    Estimator est = estimator(preset("gpt2-small"), c);
    auto e = est.estimate(2);
    REQUIRE(e);
    CHECK_FALSE(e->allocator.simulated);
    const std::uint64_t mib2 = 2u << 20;
    const auto reserve =
        static_cast<std::uint64_t>(std::ceil(static_cast<double>(e->peakAllocatedBytes) * 0.05));
    CHECK(e->reservedBytes == (e->peakAllocatedBytes + reserve + mib2 - 1) / mib2 * mib2);
}

TEST_CASE("expandable segments fragment less than fixed segments for a GPT-2 step",
          "[allocator][estimator]") {
    Estimator plain = estimator(preset("gpt2-small"));
    TrainingConfig c;
    c.allocConf = "expandable_segments:True";
    Estimator grow = estimator(preset("gpt2-small"), c);
    auto a = plain.estimate(8);
    auto b = grow.estimate(8);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(b->allocator.allocConf == "expandable_segments:True");
    CHECK(b->allocator.peakInactiveSplitBytes == 0); // not tracked for expandable segments, as in torch
    CHECK(a->allocator.peakInactiveSplitBytes > 0);
    CHECK(b->reservedBytes < a->reservedBytes);
    // Exact splits: what max_memory_allocated() shows is the requests themselves, with no block slack.
    CHECK(b->allocator.peakAllocatedBytes == b->peakAllocatedBytes);
    CHECK(a->allocator.peakAllocatedBytes > a->peakAllocatedBytes);

    TrainingConfig bad;
    bad.allocConf = "expandable:True";
    auto refused = Estimator::create(preset("gpt2-small"), bad, 0);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("Unrecognized CachingAllocator option: expandable") !=
          std::string::npos);
}

TEST_CASE("the verdict replays against the capacity and gives PyTorch's OOM message",
          "[allocator][estimator]") {
    Estimator est = estimator(preset("gpt2-small"));
    auto e = est.estimate(8);
    REQUIRE(e);
    TrainingConfig noMargin;
    noMargin.marginFraction = 0;
    Estimator exact = estimator(preset("gpt2-small"), noMargin);
    // Half the step's needs: out of memory, with the allocation that failed and torch's wording.
    const std::uint64_t cap = e->requiredBytes / 2;
    auto v = exact.verdict(8, cap);
    REQUIRE(v);
    CHECK_FALSE(v->fits);
    REQUIRE(v->oom);
    CHECK(v->oom->message.rfind("CUDA out of memory. Tried to allocate ", 0) == 0);
    CHECK(v->oom->message.find("is reserved by PyTorch but unallocated") != std::string::npos);
    CHECK(v->oom->reservedBytes + v->oom->triedBytes > cap);
    CHECK(v->headroomBytes == -static_cast<std::int64_t>(e->requiredBytes - cap));
    // Exactly what the step reserves: it fits with nothing to spare.
    auto fit = exact.verdict(8, e->requiredBytes);
    REQUIRE(fit);
    CHECK(fit->fits);
    CHECK_FALSE(fit->oom);
    CHECK(fit->headroomBytes == 0);
}

TEST_CASE("the OOM names the timeline point whose allocation fails", "[allocator][estimator]") {
    TrainingConfig noMargin;
    noMargin.marginFraction = 0;
    Estimator exact = estimator(preset("gpt2-small"), noMargin);
    auto e = exact.estimate(8, true);
    REQUIRE(e);
    // Too small for the parameters: the set-up of the first step fails.
    auto tiny = exact.verdict(8, 100u << 20);
    REQUIRE(tiny);
    REQUIRE(tiny->oom);
    REQUIRE(tiny->oom->step);
    CHECK(*tiny->oom->step == 0);
    CHECK(tiny->oom->firstIteration);
    CHECK(tiny->oom->stepLabel == "start of step 1"); // the first iteration's set-up, not the steady one's
    // Half the step's needs: the first step's forward outgrows it, at a layer; what was live before fit.
    auto half = exact.verdict(8, e->requiredBytes / 2);
    REQUIRE(half);
    REQUIRE(half->oom);
    REQUIRE(half->oom->step);
    const std::size_t s = *half->oom->step;
    REQUIRE(s > 0);
    REQUIRE(s < e->timeline.size());
    CHECK(half->oom->firstIteration);
    CHECK(e->timeline[s].phase == Phase::Forward);
    CHECK(half->oom->stepLabel == e->timeline[s].label);
    // The first iteration has no optimizer states before step(): its live bytes are the steady step's minus
    // the states, and they fit the capacity up to the step before.
    CHECK(e->timeline[s - 1].live.total() - e->timeline[s - 1].live[Component::OptimizerStates] <=
          e->requiredBytes / 2);
    // More memory: it fails later in the step, or not at all.
    auto more = exact.verdict(8, e->requiredBytes / 4 * 3);
    REQUIRE(more);
    if (more->oom) {
        REQUIRE(more->oom->step);
        CHECK((!more->oom->firstIteration || *more->oom->step > s));
    }
    // A trace has no timeline: its OOM names no step.
    auto events = exact.allocatorEvents(8);
    REQUIRE(events);
    ReplayOptions o;
    o.limitBytes = e->requiredBytes / 2;
    auto traced = replayAllocations(*events, o);
    REQUIRE(traced);
    REQUIRE(traced->oom);
    CHECK_FALSE(traced->oom->step);
    CHECK(traced->oom->eventIndex == half->oom->eventIndex);
}

TEST_CASE("the solver's answer fits and the next batch does not, with the replay deciding",
          "[allocator][estimator]") {
    for (const char* id : {"gpt2-small", "resnet50"}) {
        INFO(id);
        Estimator est = estimator(preset(id));
        for (std::uint64_t gib : {6ull, 12ull, 24ull}) {
            const std::uint64_t cap = gib << 30;
            const MaxBatch m = est.maxBatch(cap);
            CHECK(m.replayed);
            REQUIRE(m.largest > 0);
            CHECK(est.verdict(m.largest, cap)->fits);
            CHECK_FALSE(est.verdict(m.largest + 1, cap)->fits);
            CHECK(m.requiredAtLargest <= est.usableBytes(cap));
        }
    }
}

TEST_CASE("the step's trace replays to the estimate's figures (estimate --trace-out, allocator-replay)",
          "[allocator][estimator]") {
    Estimator est = estimator(preset("transformer-12"));
    auto e = est.estimate(3);
    REQUIRE(e);
    auto events = est.allocatorEvents(3);
    REQUIRE(events);
    AllocatorTrace t;
    t.events = *events;
    t.tagNames = {"parameters", "gradients", "optimizer_states", "activations", "temporaries"};
    auto back = parseAllocatorTrace(allocatorTraceJson(t), "step.json");
    REQUIRE(back);
    CHECK(back->events.size() == events->size());
    auto r = replayAllocations(back->events, ReplayOptions{});
    REQUIRE(r);
    CHECK(r->stats.peakReservedBytes == e->allocator.peakReservedBytes);
    CHECK(r->stats.peakAllocatedBytes == e->allocator.peakAllocatedBytes);
    CHECK(r->stats.finalAllocatedBytes < r->stats.peakAllocatedBytes);

    auto bad = parseAllocatorTrace(
        R"({"format":"batchfit-allocator-trace","version":1,"events":[{"op":"alloc","id":1,"size":-5}]})",
        "t.json");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "t.json: $.events[0].size: expected a non-negative integer, got -5");
}

TEST_CASE("the what-if advisor offers expandable segments with the batch they buy", "[allocator][what-if]") {
    const Model m = preset("gpt2-small");
    const std::uint64_t cap = 24ull << 30;
    auto levers = rankLevers(m, TrainingConfig{}, cap, 0);
    auto it = std::find_if(levers.begin(), levers.end(),
                           [](const Lever& l) { return l.id == "expandable-segments"; });
    REQUIRE(it != levers.end());
    CHECK(it->config.allocConf == "expandable_segments:True");
    CHECK(it->maxBatch >= it->baselineMaxBatch);
    Estimator with = estimator(m, it->config);
    CHECK(it->maxBatch == with.maxBatch(cap).largest);
    TrainingConfig already;
    already.allocConf = "expandable_segments:True";
    auto none = rankLevers(m, already, cap, 0);
    CHECK(
        std::none_of(none.begin(), none.end(), [](const Lever& l) { return l.id == "expandable-segments"; }));
}

TEST_CASE("the steady state is replayed after a first step whose step() creates the optimizer states",
          "[allocator][estimator]") {
    Estimator est = estimator(preset("transformer-12"));
    auto events = est.allocatorEvents(2);
    REQUIRE(events);
    // The first optimizer-state allocation comes after activations were freed (the first backward), and
    // before the second forward allocates activations again on the cache that is left.
    const auto state = static_cast<int>(Component::OptimizerStates);
    const auto act = static_cast<int>(Component::Activations);
    auto firstState = std::find_if(events->begin(), events->end(), [&](const AllocatorEvent& e) {
        return e.kind == AllocatorEvent::Kind::Alloc && e.tag == state;
    });
    REQUIRE(firstState != events->end());
    CHECK(std::any_of(events->begin(), firstState, [&](const AllocatorEvent& e) {
        return e.kind == AllocatorEvent::Kind::Free && e.tag == act;
    }));
    CHECK(std::any_of(firstState, events->end(), [&](const AllocatorEvent& e) {
        return e.kind == AllocatorEvent::Kind::Alloc && e.tag == act;
    }));
    // Replayed as a first step only, the states are created once and kept: no second iteration.
    TrainingConfig first;
    first.firstStep = true;
    auto once = estimator(preset("transformer-12"), first).estimate(2);
    REQUIRE(once);
    CHECK(once->allocator.iterations == 1);
    CHECK(est.estimate(2)->allocator.iterations == 2);
}

TEST_CASE("a sweep's required bytes are each point's own replay (replays spread over threads)",
          "[allocator][estimator]") {
    Estimator est = estimator(preset("transformer-12"));
    auto pts = est.sweep(1, 48);
    REQUIRE(pts);
    REQUIRE(pts->size() == 48);
    for (const auto& p : *pts) {
        INFO("batch " << p.batch);
        CHECK(p.requiredBytes == *est.requiredBytes(p.batch));
        CHECK(p.peakAllocatedBytes == *est.peakAllocatedBytes(p.batch));
    }
}

TEST_CASE(
    "replay sequence lengths: earlier steps at other lengths fragment the cache the step estimated meets",
    "[allocator][estimator][sequences]") {
    const Model gpt2 = preset("gpt2-small"); // seq 1024
    auto at = [&](std::vector<std::int64_t> seqs, const char* conf = "") {
        TrainingConfig c;
        c.replaySequences = std::move(seqs);
        c.allocConf = conf;
        auto e = estimator(gpt2, c).estimate(8);
        REQUIRE(e);
        return *e;
    };
    const Estimate plain = at({});
    CHECK(plain.allocator.sequences.empty());
    // The model's own length before it: the same first step and steady step as without the list.
    const Estimate own = at({1024});
    CHECK(own.reservedBytes == plain.reservedBytes);
    CHECK(own.allocator.iterations == 2);
    CHECK(own.allocator.sequences == std::vector<std::int64_t>{1024, 1024});
    // A settled cache: one more step of the same length reserves nothing more.
    CHECK(at({1024, 1024}).reservedBytes == plain.reservedBytes);
    // Shorter batches before the long one: their blocks are the wrong sizes for it.
    const Estimate shrinking = at({896, 768, 640, 512, 384, 256, 128});
    CHECK(shrinking.allocator.iterations == 8);
    CHECK(shrinking.allocator.sequences.size() == 8);
    CHECK(shrinking.allocator.sequences.back() == 1024);
    CHECK(shrinking.peakAllocatedBytes == plain.peakAllocatedBytes); // the step estimated is the same
    CHECK(shrinking.reservedBytes > plain.reservedBytes + plain.reservedBytes / 10);
    // Expandable segments map what each step needs: the history costs them nothing like it.
    const Estimate expandable = at({896, 768, 640, 512, 384, 256, 128}, "expandable_segments:True");
    CHECK(expandable.reservedBytes < shrinking.reservedBytes);
    CHECK(expandable.reservedBytes < plain.peakAllocatedBytes + plain.peakAllocatedBytes / 20);

    // The trace holds every step: replayed on its own it gives the same figures.
    TrainingConfig c;
    c.replaySequences = {256, 512};
    Estimator est = estimator(gpt2, c);
    auto events = est.allocatorEvents(8);
    REQUIRE(events);
    auto replayed = replayAllocations(*events, ReplayOptions{});
    REQUIRE(replayed);
    auto e = est.estimate(8);
    REQUIRE(e);
    CHECK(replayed->stats.peakReservedBytes == e->reservedBytes);
    // Out of memory in the first step, at its set-up: it names the first step's length.
    auto v = est.verdict(8, 100u << 20);
    REQUIRE(v);
    REQUIRE(v->oom);
    CHECK(v->oom->firstIteration);
    CHECK(v->oom->sequence == 256);
}

TEST_CASE("replay sequence lengths are refused where they cannot apply, with the reason",
          "[allocator][estimator][sequences]") {
    auto refused = [](const Model& m, TrainingConfig c) {
        auto e = Estimator::create(m, c, 0);
        REQUIRE_FALSE(e);
        return e.error().message;
    };
    TrainingConfig c;
    c.replaySequences = {128};
    CHECK(refused(preset("resnet50"), c).find("need a token-sequence model") != std::string::npos);
    c.replaySequences = {2048};
    CHECK(
        refused(preset("gpt2-small"), c) ==
        "replay sequence length 2048: expected 1 .. the model's own length, 1024 (the step estimated is the "
        "longest)");
    c.replaySequences = {0};
    CHECK(refused(preset("gpt2-small"), c).find("replay sequence length 0: expected 1 ..") == 0);
    c.replaySequences.assign(kMaxReplaySequences + 1, 64);
    CHECK(refused(preset("gpt2-small"), c).find("65 given, at most 64") != std::string::npos);
    c.replaySequences = {512};
    c.fragmentationFraction = 0.05;
    CHECK(refused(preset("gpt2-small"), c).find("cannot go with a fragmentation_fraction") !=
          std::string::npos);
    c.fragmentationFraction.reset();
    c.firstStep = true;
    CHECK(refused(preset("gpt2-small"), c).find("cannot go with first_step") != std::string::npos);
}

TEST_CASE("a step that fits only by freeing the allocator's cache says so",
          "[allocator][estimator][sequences]") {
    TrainingConfig c;
    c.replaySequences = {896, 768, 640, 512, 384, 256, 128};
    Estimator est = estimator(preset("gpt2-small"), c);
    auto e = est.estimate(8);
    REQUIRE(e);
    // On an RTX 4090's 24 GiB (22.8 usable) the unlimited high-water mark does not fit, the held replay does.
    const std::uint64_t cap = 25'757'220'864;
    auto v = est.verdict(8, cap);
    REQUIRE(v);
    CHECK(e->requiredBytes > v->usableBytes);
    CHECK(v->fits);
    CHECK(v->cacheReleased);
    CHECK(v->requiredBytes < e->requiredBytes);
    CHECK(v->requiredBytes <= v->usableBytes);
    CHECK(v->reserveBytes == v->requiredBytes - e->peakAllocatedBytes - e->cudaContextBytes);
    // One length: the cache it keeps fits, nothing is freed.
    auto plain = estimator(preset("gpt2-small")).verdict(4, cap);
    REQUIRE(plain);
    CHECK(plain->fits);
    CHECK_FALSE(plain->cacheReleased);
}
