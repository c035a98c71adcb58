#pragma once
// The JSON document of an estimate (the CLI's --json and the report's companion file). Fields:
// docs/estimate-fields.md.
#include "batchfit/estimate.h"
#include "batchfit/fit_map.h"
#include "batchfit/fit_plan.h"
#include "batchfit/gpu.h"
#include "batchfit/measurement.h"
#include "batchfit/model.h"
#include "batchfit/training_config.h"

#include <optional>
#include <string>
#include <vector>

namespace batchfit {

inline constexpr int kEstimateJsonVersion = 1;

struct ReportInput {
    const Model* model = nullptr;
    const TrainingConfig* config = nullptr;
    std::optional<GpuSpec> gpu;
    const Estimate* estimate = nullptr;
    std::optional<Verdict> verdict;
    std::optional<MaxBatch> maxBatch;
    int topLayers = -1;                                           ///< -1: all layers
    const std::vector<MeasurementComparison>* measured = nullptr; ///< listed under "measured" when given
};

/// Pretty-printed JSON (2-space indent) with a trailing newline.
std::string estimateJson(const ReportInput& in);
std::string maxBatchJson(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                         const MaxBatch& m, std::uint64_t usableBytes);
std::string sweepJson(const Model& model, const TrainingConfig& config, const std::vector<SweepPoint>& points,
                      std::optional<std::uint64_t> usableBytes);
/// `fit-map`: the largest batch and tokens per step at each sequence length (and the cells, when the map has
/// batch columns).
std::string fitMapJson(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                       const FitMap& map);
/// `gpus --json`: every catalogue entry with its figures, family, bf16/fp8 and the sources of its capacity
/// and architecture.
std::string gpuCatalogueJson();
/// `gpus --fit --json`: each GPU's largest micro-batch at the set-up, least memory first.
std::string gpuFitsJson(const std::vector<GpuFit>& fits);
/// The training set-up as a JSON object text (for reports).
std::string configJson(const TrainingConfig& config);

} // namespace batchfit
