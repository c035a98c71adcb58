#pragma once
// The serving report: one page (PDF, A4 or Letter) or one image (PNG) with the engine's start-up figures,
// the memory on one GPU, sequences x context and the what-if levers (docs/serving.md).
#include "batchfit/gpu.h"
#include "batchfit/result.h"
#include "batchfit/serving_plan.h"

#include <QDateTime>
#include <QPageSize>
#include <QString>

namespace batchfit {

struct ServingReportRequest {
    ServingModel model;
    ServingConfig config;
    GpuSpec gpu;
    std::int64_t tp = 1, pp = 1;
    std::int64_t sequences = 1; ///< the concurrency asked about
    std::int64_t context = 0;   ///< tokens per request; 0: max_model_len
    QString language;           ///< "en" or "zh_CN"; empty: the default
    QPageSize pageSize{QPageSize::A4};
    int pngWidth = 1600;
    int dpi = 144;
    QDateTime generatedAt; ///< invalid: now
};

/// Writes the serving report to `path` (.pdf or .png), atomically; the message names the path and the reason.
/// Needs a QGuiApplication (ensureGuiApplication).
Status exportServingReport(const ServingReportRequest& request, const QString& path);

} // namespace batchfit
