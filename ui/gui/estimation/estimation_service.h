#pragma once
// Runs the slow part of estimation (lowering the model, the solver, the sweep, the what-if levers) on a
// worker thread. The latest request wins: older pending requests are dropped and stale results are ignored.
#include "batchfit/fit_map.h"
#include "batchfit/fit_plan.h"
#include "batchfit/model.h"
#include "batchfit/training_config.h"
#include "batchfit/what_if.h"
#include "gui/estimation/estimation_result.h"

#include <QObject>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace batchfit {

/// Background estimator factory with a generation counter.
class EstimationService : public QObject {
    Q_OBJECT

public:
    explicit EstimationService(QObject* parent = nullptr);
    ~EstimationService() override;

    /// Queues a request and returns its generation; any request still waiting is replaced.
    std::uint64_t request(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                          std::int64_t batchHint);
    /// The newest result delivered (may be older than the newest request), or null before the first.
    std::shared_ptr<const EstimationResult> current() const { return m_current; }
    /// The levers for the current result (empty until computed).
    const std::vector<Lever>& levers() const { return m_levers; }
    /// Every lever that helps, combined greedily (planToFit up to kMaxBatch), computed with the levers.
    const FitPlan& plan() const { return m_plan; }
    /// The shortest start of plan() that makes micro-batch `batch` fit (no steps when it fits already): the
    /// advisor's text follows the slider without planning again.
    FitPlan planFor(std::int64_t batch) const;
    /// The catalogue GPU with the least memory on which micro-batch `batch` fits at the current set-up.
    std::optional<GpuFit> smallestGpu(std::int64_t batch) const {
        return smallestGpuThatFits(m_gpuFits, batch);
    }
    /// Every catalogue GPU with its largest batch at the current set-up, least memory first (with the
    /// levers).
    const std::vector<GpuFit>& gpuFits() const { return m_gpuFits; }
    /// The largest batch at each sequence length with heat-map cells, computed with the levers for a
    /// token-sequence model (none otherwise, or when it failed: fitMapError() says why).
    const std::optional<FitMap>& fitMap() const { return m_fitMap; }
    const QString& fitMapError() const { return m_fitMapError; }
    bool leversReady() const { return m_leversGeneration == (m_current ? m_current->generation : 0); }
    /// True while a request newer than current() is queued or running.
    bool isBusy() const { return m_delivered < m_requested; }
    std::uint64_t requestedGeneration() const { return m_requested; }

signals:
    /// current() holds a new estimator (its error is empty).
    void resultReady();
    /// The newest request failed; current() keeps the last good result. The message names the layer.
    void resultFailed(const QString& message);
    /// levers() was updated for current().
    void leversChanged();
    void busyChanged(bool busy);

private:
    struct Request {
        std::uint64_t generation = 0;
        Model model;
        TrainingConfig config;
        GpuSpec gpu;
        std::int64_t batchHint = 1;
    };

    void workerLoop();
    bool superseded(std::uint64_t generation);
    void deliver(std::shared_ptr<const EstimationResult> result);
    struct WhatIf {
        std::vector<Lever> levers;
        FitPlan plan;
        std::vector<GpuFit> gpuFits;
        std::optional<FitMap> fitMap;
        QString fitMapError;
    };
    void deliverLevers(std::uint64_t generation, WhatIf answer);

    std::shared_ptr<const EstimationResult> m_current;
    std::vector<Lever> m_levers;
    FitPlan m_plan;
    std::vector<GpuFit> m_gpuFits;
    std::optional<FitMap> m_fitMap;
    QString m_fitMapError;
    std::uint64_t m_leversGeneration = 0;
    std::uint64_t m_requested = 0;
    std::uint64_t m_delivered = 0;

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::optional<Request> m_pending;
    bool m_stop = false;
    std::thread m_thread;
};

} // namespace batchfit
