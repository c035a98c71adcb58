#include "batchfit/fit_plan.h"

#include "batchfit/estimator.h"

#include <algorithm>

namespace batchfit {

FitPlan planToFit(const Model& model, const TrainingConfig& config, std::uint64_t capacityBytes,
                  std::uint64_t cudaContextBytes, std::int64_t targetBatch) {
    FitPlan plan;
    plan.config = config;
    auto base = Estimator::create(model, config, cudaContextBytes);
    if (!base) return plan;
    plan.maxBatch = base->maxBatch(capacityBytes).largest * config.accumulationSteps;
    // What batch 1 needs with `c` (for choosing among levers none of which makes batch 1 fit yet).
    auto requiredAtOne = [&](const TrainingConfig& c) -> std::uint64_t {
        auto e = Estimator::create(model, c, cudaContextBytes);
        if (!e) return UINT64_MAX;
        auto est = e->estimate(1);
        return est ? est->requiredBytes : UINT64_MAX;
    };
    std::uint64_t needsAtOne = plan.maxBatch > 0 ? 0 : requiredAtOne(config);
    for (int step = 0; step < 6 && plan.maxBatch < targetBatch; ++step) {
        std::vector<Lever> levers = rankLevers(model, plan.config, capacityBytes, cudaContextBytes);
        // Training only the head changes the experiment, not just its memory: offered alone, never combined
        levers.erase(std::remove_if(levers.begin(), levers.end(),
                                    [](const Lever& l) { return l.id == "freeze-backbone"; }),
                     levers.end());
        auto best = std::find_if(levers.begin(), levers.end(), [](const Lever& l) { return leverHelps(l); });
        if (best == levers.end() && plan.maxBatch == 0) {
            // Nothing fits and no single lever changes that: take the one that saves the most at batch 1 (at
            // least 1%), so that several together may still get there.
            std::uint64_t bestNeeds = needsAtOne - needsAtOne / 100;
            for (auto it = levers.begin(); it != levers.end(); ++it) {
                const std::uint64_t needs = requiredAtOne(it->config);
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
        plan.steps.push_back(*best);
    }
    plan.reachesTarget = plan.maxBatch >= targetBatch;
    return plan;
}

std::vector<GpuFit> fitAcrossCatalogue(const Model& model, const TrainingConfig& config) {
    std::vector<GpuFit> fits;
    for (const GpuSpec& g : gpuCatalogue()) {
        auto e = Estimator::create(model, config, g); // the GPU's context and cuBLAS workspace
        fits.push_back({g, e ? e->maxBatch(g.memoryBytes).largest * config.accumulationSteps : 0});
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
