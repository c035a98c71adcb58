#pragma once
// Human-readable CLI output.
#include "batchfit/estimate.h"
#include "batchfit/gpu.h"
#include "batchfit/measurement.h"
#include "batchfit/model.h"
#include "batchfit/training_config.h"

#include <optional>
#include <string>
#include <vector>

namespace batchfit {

std::string formatBytes(std::uint64_t bytes);
/// 1234567 -> "1,234,567" (negative numbers keep their sign).
std::string grouped(std::int64_t v);
std::string estimateText(const Model& model, const TrainingConfig& config, const Estimate& e,
                         const std::optional<GpuSpec>& gpu, const std::optional<Verdict>& v,
                         const std::optional<MaxBatch>& m, int top);
/// `estimate --measured`: each measured point's figures next to the estimate's, with the relative error.
std::string measuredText(const std::string& source, const Measurement& measurement,
                         const std::vector<MeasurementComparison>& comparisons);
std::string sweepText(const std::vector<SweepPoint>& points, std::optional<std::uint64_t> usable);

} // namespace batchfit
