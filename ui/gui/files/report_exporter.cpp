#include "gui/files/report_exporter.h"

#ifdef BATCHFIT_HAVE_REPORT
#include "report/report_exporter.h"
#include "report/serving_report.h"
#endif

namespace batchfit {

#ifdef BATCHFIT_HAVE_REPORT
namespace {
ReportRequest makeRequest(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                          std::int64_t batch, const QString& language,
                          const std::vector<MeasurementComparison>& measured) {
    ReportRequest request;
    request.model = model;
    request.config = config;
    request.gpu = gpu;
    request.batch = batch;
    request.language = language;
    request.measured = measuredPoints(measured);
    request.comparisons = measured;
    return request;
}
} // namespace
#endif

bool ReportExporter::available() {
#ifdef BATCHFIT_HAVE_REPORT
    return true;
#else
    return false;
#endif
}

QString ReportExporter::exportServing(const QString& path, const ServingModel& model,
                                      const ServingConfig& config, const GpuSpec& gpu, std::int64_t tp,
                                      std::int64_t pp, std::int64_t sequences, std::int64_t context,
                                      const QString& language) {
#ifdef BATCHFIT_HAVE_REPORT
    ServingReportRequest r;
    r.model = model, r.config = config, r.gpu = gpu, r.tp = tp, r.pp = pp;
    r.sequences = sequences, r.context = context, r.language = language;
    const Status s = exportServingReport(r, path);
    return s ? QString() : QString::fromStdString(s.error().message);
#else
    (void)path, (void)model, (void)config, (void)gpu, (void)tp, (void)pp, (void)sequences, (void)context;
    (void)language;
    return tr("This build has no report support.");
#endif
}

QString ReportExporter::exportTo(const QString& path, const Model& model, const TrainingConfig& config,
                                 const GpuSpec& gpu, std::int64_t batch, const QString& language,
                                 const std::vector<MeasurementComparison>& measured) {
#ifdef BATCHFIT_HAVE_REPORT
    const ReportRequest request = makeRequest(model, config, gpu, batch, language, measured);
    const Status s = exportReport(request, path);
    return s ? QString() : QString::fromStdString(s.error().message);
#else
    (void)path, (void)model, (void)config, (void)gpu, (void)batch, (void)language, (void)measured;
    return tr("This build has no report support.");
#endif
}

QImage ReportExporter::chartImage(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                                  std::int64_t batch, const QString& language,
                                  const std::vector<MeasurementComparison>& measured, QSize pixels) {
#ifdef BATCHFIT_HAVE_REPORT
    const ReportRequest request = makeRequest(model, config, gpu, batch, language, measured);
    auto data = buildReportData(request);
    if (!data) return {};
    return renderReportChart(*data, pixels, 144, true);
#else
    (void)model, (void)config, (void)gpu, (void)batch, (void)language, (void)measured, (void)pixels;
    return {};
#endif
}

QString ReportExporter::fileFilter() {
    return tr("PDF report (*.pdf);;PNG image (*.png);;Markdown (*.md);;JSON (*.json);;CSV (*.csv)");
}

} // namespace batchfit
