// Pipeline parallelism: the first 1F1B stage holds the embedding and min(M, P) micro-batches in flight, the
// last the head, the loss and the vocabulary's logits with one micro-batch in flight; which needs more
// depends on the model and the batch. The estimator lowers both (buildGraph with ParallelConfig::stage 0 and
// pp - 1) and answers every question with the stage that needs more at that batch (docs/memory-model.md,
// "Several GPUs"). The outer estimator keeps the first stage's program for config() and the parameter counts.
#include "batchfit/estimator.h"
#include "program/step_program.h"

#include <algorithm>

namespace batchfit {

Status Estimator::addPipelineStages(const Model& model, const TrainingConfig& config,
                                    std::uint64_t cudaContextBytes) {
    if (config.parallel.pp <= 1) return Ok{};
    TrainingConfig last = config;
    last.parallel.stage = config.parallel.pp - 1;
    auto p = StepProgram::lower(model, last, cudaContextBytes);
    if (!p) return p.error();
    m_stages.clear();
    m_stages.push_back(Estimator(m_program));
    m_stages.push_back(Estimator(std::move(*p)));
    return Ok{};
}

std::size_t Estimator::heavierStage(std::int64_t batch) const {
    // By what must fit, then (the allocator's segments often make that equal) by the peak allocated; the
    // first when both tie. A stage that cannot count the batch answers with its error.
    auto first = m_stages[0].requiredBytes(batch);
    if (!first) return 0;
    auto last = m_stages[1].requiredBytes(batch);
    if (!last) return 1;
    if (*last != *first) return *last > *first ? 1 : 0;
    auto firstPeak = m_stages[0].peakAllocatedBytes(batch), lastPeak = m_stages[1].peakAllocatedBytes(batch);
    return firstPeak && lastPeak && *lastPeak > *firstPeak ? 1 : 0;
}

Result<Estimate> Estimator::stageEstimate(std::int64_t batch, bool withTimeline) const {
    const std::size_t s = heavierStage(batch);
    auto e = m_stages[s].estimate(batch, withTimeline);
    if (!e) return e;
    const ParallelConfig& par = m_stages[s].config().parallel;
    e->parallel.pipelineStage = s == 0 ? "first" : "last";
    e->parallel.stage = par.stage;
    e->parallel.microBatchesInFlight = par.inFlight();
    return e;
}

Result<FitDecision> Estimator::stagesFitAt(std::int64_t batch, std::uint64_t capacityBytes) const {
    // Both stages must fit (as stagesMaxBatch() asks); the figure is the heavier stage's.
    const std::size_t s = heavierStage(batch);
    auto heavy = m_stages[s].fitAt(batch, capacityBytes);
    if (!heavy) return heavy;
    auto other = m_stages[1 - s].fitAt(batch, capacityBytes);
    if (!other) return other;
    heavy->fits = heavy->fits && other->fits;
    heavy->cacheReleased = heavy->cacheReleased || other->cacheReleased;
    return heavy;
}

Result<Verdict> Estimator::stagesVerdict(std::int64_t batch, std::uint64_t capacityBytes) const {
    const std::size_t s = heavierStage(batch);
    auto v = m_stages[s].verdict(batch, capacityBytes);
    if (!v || !v->fits) return v;
    auto other = m_stages[1 - s].verdict(batch, capacityBytes);
    if (!other) return other;
    return other->fits ? *v : *other; // the stage that runs out is the answer
}

MaxBatch Estimator::stagesMaxBatch(std::uint64_t capacityBytes) const {
    const MaxBatch first = m_stages[0].maxBatch(capacityBytes);
    const MaxBatch last = m_stages[1].maxBatch(capacityBytes);
    return last.largest < first.largest ? last : first; // both stages must fit
}

Result<std::vector<SweepPoint>> Estimator::stagesSweep(std::int64_t from, std::int64_t to, std::int64_t step,
                                                       bool logScale,
                                                       std::optional<std::uint64_t> capacity) const {
    // Each point is the heavier stage's, with its decision (as verdict() and fitAt() judge by that stage).
    auto first = m_stages[0].sweep(from, to, step, logScale, capacity);
    if (!first) return first;
    auto last = m_stages[1].sweep(from, to, step, logScale, capacity);
    if (!last) return last;
    // the same batches, as far as both can count them
    first->resize(std::min(first->size(), last->size()));
    for (std::size_t i = 0; i < first->size(); ++i) {
        const SweepPoint &a = (*first)[i], &b = (*last)[i];
        const bool bothFit = a.fit && b.fit && a.fit->fits && b.fit->fits;
        const bool flushes = (a.fit && a.fit->cacheReleased) || (b.fit && b.fit->cacheReleased);
        if (b.requiredBytes > a.requiredBytes ||
            (b.requiredBytes == a.requiredBytes && b.peakAllocatedBytes > a.peakAllocatedBytes))
            (*first)[i] = b;
        if (auto& fit = (*first)[i].fit) {
            fit->fits = bothFit;
            fit->cacheReleased = flushes;
        }
    }
    return first;
}

} // namespace batchfit
