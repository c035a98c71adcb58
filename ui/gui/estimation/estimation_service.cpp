#include "gui/estimation/estimation_service.h"

#include "gui/charts/chart_data.h"

#include <QElapsedTimer>
#include <QMetaObject>
#include <algorithm>

namespace batchfit {

EstimationService::EstimationService(QObject* parent) : QObject(parent), m_thread([this] { workerLoop(); }) {}

EstimationService::~EstimationService() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_pending.reset();
    }
    m_wake.notify_all();
    m_thread.join();
}

std::uint64_t EstimationService::request(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                                         std::int64_t batchHint) {
    const bool wasBusy = isBusy();
    {
        std::lock_guard lock(m_mutex);
        m_pending = Request{++m_requested, model, config, gpu, batchHint};
    }
    m_wake.notify_one();
    if (!wasBusy) emit busyChanged(true);
    return m_requested;
}

bool EstimationService::superseded(std::uint64_t generation) {
    std::lock_guard lock(m_mutex);
    return m_stop || (m_pending && m_pending->generation > generation);
}

void EstimationService::workerLoop() {
    for (;;) {
        Request req;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stop || m_pending.has_value(); });
            if (m_stop) return;
            req = std::move(*m_pending);
            m_pending.reset();
        }
        auto result = std::make_shared<EstimationResult>();
        result->generation = req.generation;
        result->gpu = req.gpu;
        QElapsedTimer timer;
        timer.start();
        auto est = Estimator::create(req.model, req.config, req.gpu);
        result->lowerSeconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
        if (!est) {
            result->error = QString::fromStdString(est.error().message);
        } else {
            auto shared = std::make_shared<const Estimator>(std::move(*est));
            result->maxBatch = shared->maxBatch(req.gpu.memoryBytes);
            result->usableBytes = shared->usableBytes(req.gpu.memoryBytes);
            result->chartMax = ChartData::range(result->maxBatch, req.batchHint);
            result->sweep = ChartData::sample(*shared, result->chartMax, req.gpu.memoryBytes);
            result->estimator = std::move(shared);
            if (auto seq = modelSequenceLength(req.model)) result->sequence = *seq;
        }
        QMetaObject::invokeMethod(
            this, [this, result] { deliver(result); }, Qt::QueuedConnection);
        if (!result->estimator || superseded(req.generation)) continue;
        // rankLevers takes no GpuSpec: evaluate with the GPU's cuBLAS workspace filled in, but hand back
        // configs without that override so applying a lever does not pin it.
        TrainingConfig evaluated = req.config;
        if (!evaluated.cublasWorkspaceBytes) evaluated.cublasWorkspaceBytes = req.gpu.cublasWorkspaceBytes;
        WhatIf answer;
        answer.levers = rankLevers(req.model, evaluated, req.gpu.memoryBytes, req.gpu.contextBytes);
        for (auto& l : answer.levers) l.config.cublasWorkspaceBytes = req.config.cublasWorkspaceBytes;
        if (superseded(req.generation)) continue;
        // Every lever that helps, in order: the advisor shows the start of it that fits the batch on the
        // slider (planFor), so its text never goes stale when the batch moves.
        answer.plan = planToFit(req.model, evaluated, req.gpu.memoryBytes, req.gpu.contextBytes, kMaxBatch);
        answer.plan.config.cublasWorkspaceBytes = req.config.cublasWorkspaceBytes;
        for (auto& l : answer.plan.steps) l.config.cublasWorkspaceBytes = req.config.cublasWorkspaceBytes;
        if (superseded(req.generation)) continue;
        answer.gpuFits = fitAcrossCatalogue(req.model, req.config);
        if (superseded(req.generation)) continue;
        if (result->sequence > 0) { // batch x sequence: the heat map
            FitMapOptions options;
            options.range = suggestedFitMapRange(req.model);
            options.heatMapColumns = true;
            options.cancelled = [this, gen = req.generation] { return superseded(gen); };
            auto map = computeFitMap(req.model, req.config, req.gpu, options);
            if (map)
                answer.fitMap = std::move(*map);
            else
                answer.fitMapError = QString::fromStdString(map.error().message);
            if (superseded(req.generation)) continue;
        }
        QMetaObject::invokeMethod(
            this,
            [this, gen = req.generation, a = std::move(answer)]() mutable {
                deliverLevers(gen, std::move(a));
            },
            Qt::QueuedConnection);
    }
}

void EstimationService::deliver(std::shared_ptr<const EstimationResult> result) {
    if (result->generation < m_delivered) return;
    m_delivered = result->generation;
    if (result->estimator) {
        m_current = std::move(result);
        m_levers.clear();
        m_plan = {};
        m_gpuFits.clear();
        m_fitMap.reset();
        m_fitMapError.clear();
        emit resultReady();
    } else {
        emit resultFailed(result->error);
    }
    if (!isBusy()) emit busyChanged(false);
}

FitPlan EstimationService::planFor(std::int64_t batch) const {
    return planPrefix(m_plan, batch);
}

void EstimationService::deliverLevers(std::uint64_t generation, WhatIf answer) {
    if (!m_current || m_current->generation != generation) return;
    m_levers = std::move(answer.levers);
    m_plan = std::move(answer.plan);
    m_gpuFits = std::move(answer.gpuFits);
    m_fitMap = std::move(answer.fitMap);
    m_fitMapError = std::move(answer.fitMapError);
    m_leversGeneration = generation;
    emit leversChanged();
}

} // namespace batchfit
