// One answer (issue 30): the verdict, the decision behind every sweep point, the fit map's cells and the
// largest batch read the same decision, Estimator::fitAt(). A step that fits only because PyTorch frees its
// cache and retries a failed cudaMalloc is a fit, "fits with cache flushes", and its figure is what the GPU
// holds, never above the usable memory.
#include "batchfit/fit_map.h"
#include "batchfit/gpu.h"
#include "batchfit/verdict_text.h"
#include "test_util.h"

using namespace batchfit;
using namespace batchfit::test;

namespace {

void checkAgreement(const Estimator& est, const GpuSpec& gpu, std::int64_t from, std::int64_t to,
                    int& flushed) {
    const std::uint64_t cap = gpu.memoryBytes, usable = est.usableBytes(cap);
    auto pts = est.sweep(from, to, 1, false, cap);
    REQUIRE(pts);
    REQUIRE(pts->size() == static_cast<std::size_t>(to - from + 1));
    for (const SweepPoint& p : *pts) {
        INFO("batch " << p.batch);
        auto v = est.verdict(p.batch, cap);
        auto f = est.fitAt(p.batch, cap);
        REQUIRE(v);
        REQUIRE(f);
        REQUIRE(p.fit);
        CHECK(v->fits == f->fits);
        CHECK(p.fit->fits == f->fits);
        CHECK(v->cacheReleased == f->cacheReleased);
        CHECK(p.fit->cacheReleased == f->cacheReleased);
        CHECK(v->requiredBytes == f->requiredBytes);
        CHECK(p.fit->requiredBytes == f->requiredBytes);
        // never a figure above the usable memory beside "fits"
        if (f->fits)
            CHECK(f->requiredBytes <= usable);
        else
            CHECK(f->requiredBytes > usable);
        // the large-GPU figure is the sweep's requiredBytes; only a flush makes the GPU's figure smaller
        CHECK(f->cacheReleased == (f->requiredBytes < p.requiredBytes));
        const std::string headline = verdictHeadline(*v, p.requiredBytes);
        CHECK(headline.rfind(fitLabel(*f), 0) == 0);
        if (f->fits && f->cacheReleased) ++flushed;
    }
}

} // namespace

TEST_CASE("ResNet-50 on an RTX 4090: verdict, sweep and largest batch agree where the cache is flushed",
          "[one-answer]") {
    const GpuSpec gpu = *findGpu("rtx-4090");
    auto est = Estimator::create(preset("resnet50"), TrainingConfig{}, gpu);
    REQUIRE(est);
    const MaxBatch m = est->maxBatch(gpu.memoryBytes);
    REQUIRE(m.largest > 200);
    int flushed = 0;
    checkAgreement(*est, gpu, m.largest - 24, m.largest + 8, flushed);
    // the review's case: batches that fit only with cache flushes, called fits by every surface
    CHECK(flushed > 0);
    // the largest batch fits and the next does not, by the same decision
    CHECK(est->fitAt(m.largest, gpu.memoryBytes)->fits);
    CHECK_FALSE(est->fitAt(m.largest + 1, gpu.memoryBytes)->fits);
    CHECK(m.requiredAtLargest == est->fitAt(m.largest, gpu.memoryBytes)->requiredBytes);
}

TEST_CASE("the fit map's cells read the verdict's decision", "[one-answer][fitmap]") {
    const GpuSpec gpu = *findGpu("rtx-4090");
    const Model m = preset("gpt2-small");
    TrainingConfig c;
    c.optimizer = OptimizerKind::AdamW;
    FitMapOptions o;
    o.range = {256, 1024, 0};
    o.heatMapColumns = true;
    auto map = computeFitMap(m, c, gpu, o);
    REQUIRE(map);
    int cells = 0;
    for (const FitMapRow& row : map->rows) {
        auto model = withSequenceLength(m, row.sequence);
        REQUIRE(model);
        auto est = Estimator::create(*model, c, gpu);
        REQUIRE(est);
        for (const FitMapCell& cell : row.cells) {
            INFO("sequence " << row.sequence << " batch " << cell.batch);
            auto v = est->verdict(cell.batch, gpu.memoryBytes);
            if (!v) {
                CHECK_FALSE(cell.fits);
                continue;
            }
            CHECK(cell.fits == v->fits);
            CHECK(cell.cacheReleased == v->cacheReleased);
            CHECK(cell.requiredBytes == v->requiredBytes);
            // the largest batch and the cells agree at the largest and the next
            if (cell.batch == row.largest.largest) CHECK(cell.fits);
            ++cells;
        }
    }
    CHECK(cells > 4);
}

TEST_CASE("pipeline stages: a batch fits only when both stages fit", "[one-answer][pipeline]") {
    const GpuSpec gpu = *findGpu("rtx-4090");
    TrainingConfig c;
    c.parallel.gpus = 2;
    c.parallel.pp = 2;
    auto est = Estimator::create(preset("gpt2-small"), c, gpu);
    REQUIRE(est);
    const MaxBatch m = est->maxBatch(gpu.memoryBytes);
    REQUIRE(m.largest > 0);
    auto pts = est->sweep(1, m.largest + 4, 1, false, gpu.memoryBytes);
    REQUIRE(pts);
    for (const SweepPoint& p : *pts) {
        INFO("batch " << p.batch);
        auto v = est->verdict(p.batch, gpu.memoryBytes);
        REQUIRE(v);
        REQUIRE(p.fit);
        CHECK(p.fit->fits == v->fits);
        CHECK(est->fitAt(p.batch, gpu.memoryBytes)->fits == v->fits);
    }
    CHECK(est->fitAt(m.largest, gpu.memoryBytes)->fits);
}
