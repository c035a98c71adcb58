#pragma once
// batchfit-cli's commands, in process: what the CLI's main runs, and what the Python package binds (no Qt).
#include "batchfit/measurement.h"
#include "batchfit/model.h"
#include "cli_options.h"
#include "cli_serve.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace batchfit {

/// Renders `report` (o.out) and returns the exit code: 0 written, 2 usage, 3 bad input, 4 not written.
using ReportHook = std::function<int(const CliOptions& o, const Model& model,
                                     const std::optional<Measurement>& measured, const CliIo& io)>;

/// The report renderers, which need Qt: batchfit-cli's main sets them; without them `report` and `serve
/// --out` say that this build has no reports.
struct CliReportHooks {
    ReportHook report;
    ServingReportHook serving;
};

/// Runs one batchfit-cli command line (`args` after the program name) and returns its exit code (cli_help.h:
/// 0 fits or done, 1 does not fit, 2 usage, 3 bad input, 4 report not written; check-fit folds 3 and 4 into
/// 2).
int runCli(const std::vector<std::string>& args, const CliIo& io, const CliReportHooks& hooks = {});

} // namespace batchfit
