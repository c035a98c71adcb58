#pragma once
// What to put in a report: the model, the set-up, the GPU, the batch and the presentation options.
#include "batchfit/gpu.h"
#include "batchfit/model.h"
#include "batchfit/training_config.h"
#include "report/measured_point.h"

#include <QDateTime>
#include <QPageSize>
#include <QSize>
#include <QString>
#include <cstdint>
#include <vector>

namespace batchfit {

struct ReportRequest {
    Model model;
    TrainingConfig config;
    GpuSpec gpu;
    std::int64_t batch = 1;              ///< micro-batch size the verdict is for
    QString language;                    ///< "en" or "zh_CN"; empty: the default (setDefaultReportLanguage)
    QSize pngSize{1600, 0};              ///< PNG pixels; height 0: as tall as the content needs
    int dpi = 144;                       ///< PNG dots per inch: text is sized in points at this density
    QPageSize pageSize{QPageSize::A4};   ///< PDF paper: A4 or Letter
    int topLayers = 20;                  ///< rows of the layer table; -1: every layer that saves activations
    std::vector<MeasuredPoint> measured; ///< optional measurements drawn on the chart
    /// tools/torch_measure.py points compared with the estimate: the JSON report lists them under "measured",
    /// as `batchfit-cli estimate --measured --json` does
    std::vector<MeasurementComparison> comparisons;
    QDateTime generatedAt; ///< printed on the report; invalid: now
};

} // namespace batchfit
