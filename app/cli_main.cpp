// batchfit-cli: the estimation core for scripts and CI (the commands are in cli_run.cpp; this adds the Qt
// report renderers when the desktop build has them).
#include "cli_run.h"

#include <iostream>

#ifdef BATCHFIT_HAVE_REPORT
#include "batchfit/estimator.h"
#include "report/headless_app.h"
#include "report/report_exporter.h"
#include "report/report_language.h"
#include "report/serving_report.h"
#endif

using namespace batchfit;

namespace {

#ifdef BATCHFIT_HAVE_REPORT
enum Exit { kOk = 0, kUsage = 2, kBadInput = 3, kReportFailed = 4 };

int fail(const CliIo& io, int code, const std::string& msg) {
    io.err << "batchfit-cli: " << msg << "\n";
    return code;
}

// `report`: renders with batchfit_report on a headless QGuiApplication (works with no display, e.g. in CI).
int writeReportFile(const CliOptions& o, const Model& model, const std::optional<Measurement>& measured,
                    const CliIo& io) {
    const QString out = QString::fromStdString(o.out);
    const std::string formats = reportExtensionsText().toStdString();
    if (o.out.empty()) return fail(io, kUsage, "report needs --out FILE (" + formats + ")");
    if (!reportFormatForPath(out))
        return fail(io, kUsage, "--out: unknown report format '" + o.out + "' (use " + formats + ")");
    if (!o.gpu) return fail(io, kUsage, "report needs --gpu (a catalogue id or a capacity such as 24GiB)");
    if (const ReportLanguage lang(QString::fromStdString(o.lang)); !lang.ok())
        return fail(io, kUsage, "--lang: " + lang.error().toStdString());
    if (!ensureGuiApplication())
        return fail(io, kReportFailed, "cannot start the Qt GUI library to render the report");
    ReportRequest request;
    request.model = model;
    request.config = o.config;
    request.gpu = *o.gpu;
    request.batch = o.batch;
    request.language = QString::fromStdString(o.lang);
    request.topLayers = o.top;
    if (measured) {
        auto est = Estimator::create(model, o.config, *o.gpu);
        if (!est) return fail(io, kBadInput, est.error().message);
        auto cmp = compareMeasurement(*est, *measured);
        if (!cmp) return fail(io, kBadInput, o.measuredFile + ": " + cmp.error().message);
        request.measured = measuredPoints(*cmp);
        request.comparisons = std::move(*cmp);
    }
    auto data = buildReportData(request);
    if (!data) {
        const std::string& file = !o.modelFile.empty()  ? o.modelFile
                                  : !o.hfConfig.empty() ? o.hfConfig
                                                        : o.onnxFile;
        return fail(io, kBadInput, (file.empty() ? "" : file + ": ") + data.error().message);
    }
    if (auto written = writeReport(*data, out); !written)
        return fail(io, kReportFailed, written.error().message);
    io.out << "wrote " << o.out << "\n";
    return kOk;
}

Status writeServingReport(const CliOptions& o, const ServingModel& model, std::int64_t sequences,
                          std::int64_t context) {
    if (!ensureGuiApplication()) return Error{"cannot start the Qt GUI library to render the report", {}};
    ServingReportRequest r;
    r.model = model, r.config = o.serving, r.gpu = *o.gpu, r.tp = o.config.parallel.tp,
    r.pp = o.config.parallel.pp;
    r.sequences = sequences, r.context = context, r.language = QString::fromStdString(o.lang);
    return exportServingReport(r, QString::fromStdString(o.out));
}
#endif

} // namespace

int main(int argc, char** argv) {
    CliReportHooks hooks;
#ifdef BATCHFIT_HAVE_REPORT
    hooks.report = writeReportFile;
    hooks.serving = writeServingReport;
#endif
    return runCli(std::vector<std::string>(argv + 1, argv + argc), CliIo{std::cout, std::cerr}, hooks);
}
