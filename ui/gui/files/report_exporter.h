#pragma once
// File > Export report…: hands the current model, set-up, GPU and batch to the report library when it is
// built.
#include "batchfit/gpu.h"
#include "batchfit/measurement.h"
#include "batchfit/model.h"
#include "batchfit/serving.h"
#include "batchfit/training_config.h"

#include <QCoreApplication>
#include <QImage>
#include <QSize>
#include <QString>
#include <cstdint>
#include <vector>

namespace batchfit {

/// Thin adapter over batchfit::exportReport (ui/report). Without that library, available() is false.
class ReportExporter {
    Q_DECLARE_TR_FUNCTIONS(batchfit::ReportExporter)

public:
    static bool available();
    /// Writes a report (format by extension: .pdf, .png, ...), with the measured points on its chart.
    /// Returns an empty string or the error message.
    /// The serving report (.pdf or .png) of serving mode's set-up; the error, or empty when written.
    static QString exportServing(const QString& path, const ServingModel& model, const ServingConfig& config,
                                 const GpuSpec& gpu, std::int64_t tp, std::int64_t pp, std::int64_t sequences,
                                 std::int64_t context, const QString& language);
    static QString exportTo(const QString& path, const Model& model, const TrainingConfig& config,
                            const GpuSpec& gpu, std::int64_t batch, const QString& language,
                            const std::vector<MeasurementComparison>& measured = {});
    /// The report's chart with a title line (set-up and verdict), for Copy Chart; a null image without the
    /// report library or when the estimate fails.
    static QImage chartImage(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                             std::int64_t batch, const QString& language,
                             const std::vector<MeasurementComparison>& measured, QSize pixels);
    /// The file dialog's filter ("PDF (*.pdf);;PNG image (*.png)").
    static QString fileFilter();
};

} // namespace batchfit
