#pragma once
// Measured points written by tools/torch_measure.py ("batchfit-measurement" files) and their comparison with
// the estimate at the same batch sizes. The format and what a point means: docs/estimate-fields.md.
#include "batchfit/estimator.h"
#include "batchfit/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace batchfit {

inline constexpr int kMeasurementFormatVersion = 1;
inline constexpr std::size_t kMaxMeasurementFileBytes = 4u * 1024u * 1024u;
inline constexpr std::size_t kMaxMeasuredPoints = 4096;
/// Largest byte count a measured field may hold (1 PiB): anything above is a corrupt file, not a GPU.
inline constexpr std::uint64_t kMaxMeasuredBytes = std::uint64_t{1} << 50;

/// What PyTorch measured for one batch size (one entry of "points").
struct MeasuredStep {
    std::int64_t batch = 0;
    std::uint64_t parameterBytes = 0;                ///< unique parameter storages
    std::uint64_t gradientBytes = 0;                 ///< unique .grad storages after backward
    std::uint64_t optimizerStateBytes = 0;           ///< every tensor in optimizer.state
    std::uint64_t savedActivationBytes = 0;          ///< unique storages autograd saved in forward + loss
    std::optional<std::uint64_t> maxMemoryAllocated; ///< torch.cuda.max_memory_allocated(); none on CPU

    /// parameters + gradients + optimizer states + saved activations.
    std::uint64_t componentSum() const;
    /// The figure drawn on the chart: max_memory_allocated when measured on CUDA, else componentSum().
    std::uint64_t chartBytes() const { return maxMemoryAllocated ? *maxMemoryAllocated : componentSum(); }

    bool operator==(const MeasuredStep&) const = default;
};

/// A parsed measurement file.
struct Measurement {
    std::string model;  ///< "resnet18" (may be empty)
    std::string device; ///< "cpu" or "cuda (NVIDIA ...)" (may be empty)
    std::string torchVersion;
    std::string optimizer;            ///< torch_measure.py's name, e.g. "adam" (may be empty)
    std::vector<MeasuredStep> points; ///< in file order, at least one

    bool operator==(const Measurement&) const = default;
};

/// Parses the JSON text; `source` (a file name) starts every error message, followed by the JSON path.
Result<Measurement> parseMeasurement(const std::string& jsonText, const std::string& source);
/// Reads and parses a file (at most kMaxMeasurementFileBytes).
Result<Measurement> loadMeasurementFile(const std::string& path);

/// Relative error of an estimate against a measurement: (estimated - measured) / measured; 0 when both are 0.
double relativeError(std::uint64_t estimated, std::uint64_t measured);

/// One measured point next to the estimate's matching figures at the same batch.
struct MeasurementComparison {
    MeasuredStep measured;
    std::uint64_t estimatedParameterBytes = 0; ///< weights only (Estimate::parameterBytes - bufferBytes)
    std::uint64_t estimatedGradientBytes = 0;
    std::uint64_t estimatedOptimizerStateBytes = 0;
    std::uint64_t estimatedSavedActivationBytes = 0;
    std::uint64_t estimatedPeakAllocatedBytes = 0;
    /// True: the chart figure is max_memory_allocated against the estimated peak allocated; false: the sum of
    /// the four components against the estimate's same sum.
    bool comparesPeak = false;
    std::uint64_t measuredBytes = 0;  ///< the chart figure (MeasuredStep::chartBytes())
    std::uint64_t estimatedBytes = 0; ///< the estimate of the same figure
    double error = 0;                 ///< relativeError(estimatedBytes, measuredBytes)
};

/// Estimates every measured batch and pairs the figures. Fails (naming the batch) if the estimator cannot
/// estimate one of them.
Result<std::vector<MeasurementComparison>> compareMeasurement(const Estimator& estimator,
                                                              const Measurement& measurement);

/// Why the measured points look like another model's, or nothing: the parameters' bytes (the same at every
/// batch) differ by more than 2% from the estimate's (the file's model name is quoted when it has one).
std::optional<std::string> measurementMismatch(const Measurement& measurement,
                                               const std::vector<MeasurementComparison>& comparisons,
                                               const std::string& modelName);

/// The comparisons as a JSON array text (the "measured" array of `estimate --json`, docs/estimate-fields.md).
std::string comparisonJson(const std::vector<MeasurementComparison>& comparisons);

} // namespace batchfit
