#pragma once
// Everything a report shows, computed by the core for one request.
#include "batchfit/estimate.h"
#include "batchfit/result.h"
#include "report/report_request.h"

#include <cstdint>
#include <vector>

namespace batchfit {

struct ReportData {
    ReportRequest request; ///< language and date resolved
    Estimate estimate;     ///< at request.batch, with the step timeline
    Verdict verdict;       ///< against request.gpu
    MaxBatch maxBatch;
    std::vector<SweepPoint> sweep; ///< the chart's points, by batch; includes the batch and the largest
    std::int64_t sweepMax = 1;     ///< the chart's last batch
    std::vector<LayerActivation> topLayers; ///< layers saving activations, largest first
    int layerCount = 0;                     ///< op layers of the model (the input entry excluded)
    int timelinePeak = -1;                  ///< index of the peak in estimate.timeline; -1 without a timeline
};

/// Runs the estimator (estimate with timeline, verdict, max batch, sweep). Fails with the core's message.
Result<ReportData> buildReportData(const ReportRequest& request);

} // namespace batchfit
