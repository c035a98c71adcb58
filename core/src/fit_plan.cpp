#include "batchfit/fit_plan.h"

#include "batchfit/estimator.h"

#include <algorithm>

namespace batchfit {

FitPlan planToFit(const Model& model, const TrainingConfig& config, std::uint64_t capacityBytes,
                  std::uint64_t cudaContextBytes, std::int64_t targetBatch) {
    FitPlan plan;
    plan.config = config;
    plan.target = targetBatch;
    auto base = Estimator::create(model, config, cudaContextBytes);
    if (!base) return plan;
    plan.maxMicroBatch = base->maxBatch(capacityBytes).largest;
    plan.maxBatch = plan.maxMicroBatch * config.accumulationSteps;
    plan.start = config;
    plan.startMaxMicroBatch = plan.maxMicroBatch;
    std::uint64_t needsAtOne = plan.maxMicroBatch > 0 ? 0 : requiredAtOne(model, config, cudaContextBytes);
    for (int step = 0; step < 6 && plan.maxMicroBatch < targetBatch; ++step) {
        std::vector<Lever> levers = rankLevers(model, plan.config, capacityBytes, cudaContextBytes);
        // Training only the head changes the experiment, not just its memory: offered alone, never combined.
        // Accumulation multiplies the batch per update, not the micro-batch the plan is for.
        std::erase_if(levers,
                      [](const Lever& l) { return l.id == "freeze-backbone" || l.id == "accumulation"; });
        std::stable_sort(levers.begin(), levers.end(), [](const Lever& a, const Lever& b) {
            if (leverChangesTraining(a) != leverChangesTraining(b)) return !leverChangesTraining(a);
            return a.maxMicroBatch() > b.maxMicroBatch();
        });
        auto best = std::find_if(levers.begin(), levers.end(), [](const Lever& l) { return leverHelps(l); });
        if (best == levers.end() && plan.maxMicroBatch == 0) {
            // Nothing fits and no single lever changes that: take the one that saves the most at batch 1 (at
            // least 1%), so that several together may still get there.
            std::uint64_t bestNeeds = needsAtOne - needsAtOne / 100;
            for (auto it = levers.begin(); it != levers.end(); ++it) {
                const std::uint64_t needs = requiredAtOne(model, it->config, cudaContextBytes);
                if (needs < bestNeeds) {
                    bestNeeds = needs;
                    best = it;
                }
            }
            if (best != levers.end()) needsAtOne = bestNeeds;
        }
        if (best == levers.end()) break;
        plan.config = best->config;
        plan.maxBatch = best->maxBatch;
        plan.maxMicroBatch = best->maxMicroBatch();
        plan.steps.push_back(*best);
    }
    plan.reachesTarget = plan.maxMicroBatch >= targetBatch;
    if (plan.maxMicroBatch == 0)
        plan.requiredAtOneBytes = requiredAtOne(model, plan.config, cudaContextBytes);
    return plan;
}

FitPlan planPrefix(const FitPlan& plan, std::int64_t batch) {
    FitPlan out;
    out.target = batch;
    out.start = out.config = plan.start;
    out.startMaxMicroBatch = out.maxMicroBatch = plan.startMaxMicroBatch;
    out.maxBatch = out.maxMicroBatch * plan.start.accumulationSteps;
    for (const Lever& step : plan.steps) {
        if (out.maxMicroBatch >= batch) break;
        out.steps.push_back(step);
        out.config = step.config;
        out.maxBatch = step.maxBatch;
        out.maxMicroBatch = step.maxMicroBatch();
    }
    out.reachesTarget = out.maxMicroBatch >= batch;
    if (out.maxMicroBatch == 0 && out.steps.size() == plan.steps.size())
        out.requiredAtOneBytes = plan.requiredAtOneBytes;
    return out;
}

std::vector<GpuFit> fitAcrossCatalogue(const Model& model, const TrainingConfig& config) {
    std::vector<GpuFit> fits;
    for (const GpuSpec& g : gpuCatalogue()) {
        auto e = Estimator::create(model, config, g); // the GPU's context and cuBLAS workspace
        fits.push_back({g, e ? e->maxBatch(g.memoryBytes).largest : 0}); // a micro-batch, as --batch is
    }
    std::stable_sort(fits.begin(), fits.end(),
                     [](const GpuFit& a, const GpuFit& b) { return a.gpu.memoryBytes < b.gpu.memoryBytes; });
    return fits;
}

std::optional<GpuFit> smallestGpuThatFits(const std::vector<GpuFit>& fits, std::int64_t targetBatch) {
    for (const GpuFit& f : fits)
        if (f.maxBatch >= targetBatch) return f;
    return std::nullopt;
}

} // namespace batchfit
