// The concurrency x context map and the what-if levers of a serving set-up (batchfit/serving_plan.h).
#include "batchfit/serving_plan.h"

#include <algorithm>

namespace batchfit {

std::vector<std::int64_t> servingAxis(std::int64_t top) {
    std::vector<std::int64_t> axis;
    top = std::max<std::int64_t>(top, 1);
    for (std::int64_t v = 1; v <= top && axis.size() < kMaxServingMapAxis; v *= 2) axis.push_back(v);
    if (axis.back() != top && axis.size() < kMaxServingMapAxis) axis.push_back(top);
    return axis;
}

Result<ServingMap> servingFitMap(const ServingModel& model, const ServingEstimate& e,
                                 const std::vector<std::int64_t>& contexts,
                                 const std::vector<std::int64_t>& sequences) {
    for (const auto* axis : {&contexts, &sequences}) {
        if (axis->empty() || axis->size() > kMaxServingMapAxis)
            return makeError("a serving map axis needs 1 to " + std::to_string(kMaxServingMapAxis) +
                             " values, got " + std::to_string(axis->size()));
        if (*std::min_element(axis->begin(), axis->end()) < 1)
            return makeError("a serving map axis holds a value below 1");
    }
    ServingMap map{contexts, sequences, {}};
    map.cells.reserve(contexts.size() * sequences.size());
    for (std::int64_t context : contexts)
        for (std::int64_t n : sequences) map.cells.push_back(servingCell(model, e, n, context));
    return map;
}

namespace {

void addLever(std::vector<ServingLever>& out, const ServingModel& model, const GpuSpec& gpu,
              std::int64_t context, ServingLever lever) {
    auto e = estimateServing(model, lever.config, gpu, lever.tp, lever.pp);
    if (!e) return; // a lever the engine would refuse (a length past the model's) is not offered
    lever.estimate = *e;
    lever.sequencesAtContext =
        e->failure == ServingEstimate::Failure::None
            ? maxConcurrentSequences(model, *e, std::min(context, e->config.maxModelLen))
            : 0;
    out.push_back(std::move(lever));
}

} // namespace

std::vector<ServingLever> servingLevers(const ServingModel& model, const ServingConfig& config,
                                        const GpuSpec& gpu, std::int64_t tp, std::int64_t pp,
                                        std::int64_t context) {
    std::vector<ServingLever> out;
    const auto base = estimateServing(model, config, gpu, tp, pp);
    if (!base) return out;
    const ServingConfig& r = base->config;
    auto lever = [&](std::string id, std::string title) {
        ServingLever l;
        l.id = std::move(id), l.title = std::move(title), l.config = config, l.tp = tp, l.pp = pp;
        return l;
    };
    if (config.kvCacheDtype != KvCacheDtype::Fp8) {
        auto l = lever("kv-fp8", "fp8 KV cache");
        l.config.kvCacheDtype = KvCacheDtype::Fp8;
        addLever(out, model, gpu, context, l);
    }
    // A shorter max_model_len: the longest the KV cache holds when one request of the current one does not
    // fit (vLLM then refuses to start), else half of it when the context asked about is no longer.
    std::int64_t shorter = 0;
    if (base->failure == ServingEstimate::Failure::KvTooSmall)
        shorter = maxContextAt(model, *base, 1);
    else if (r.maxModelLen / 2 >= std::max<std::int64_t>(context, 1))
        shorter = r.maxModelLen / 2;
    if (shorter > 0 && shorter < r.maxModelLen) {
        auto l = lever("max-model-len", "max_model_len " + std::to_string(shorter));
        l.config.maxModelLen = shorter;
        addLever(out, model, gpu, std::min(context, shorter), l);
    }
    if (tp * 2 <= 1024 && model.heads % (tp * 2) == 0) {
        auto l = lever("tp", "tensor parallel " + std::to_string(tp * 2));
        l.tp = tp * 2;
        addLever(out, model, gpu, context, l);
    }
    if (r.quant == WeightQuant::None) {
        auto l = lever("awq", "AWQ 4-bit weights");
        l.config.quant = WeightQuant::Awq;
        addLever(out, model, gpu, context, l);
    }
    if (r.memoryFraction && *r.memoryFraction < 0.95) {
        auto l = lever("utilization", "utilization 0.95");
        l.config.memoryFraction = 0.95;
        addLever(out, model, gpu, context, l);
    }
    std::stable_sort(out.begin(), out.end(), [](const ServingLever& a, const ServingLever& b) {
        return a.sequencesAtContext > b.sequencesAtContext;
    });
    return out;
}

} // namespace batchfit
