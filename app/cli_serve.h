#pragma once
// `batchfit-cli serve`: the serving engine's start-up arithmetic for a Hugging Face config on --gpu.
#include "batchfit/result.h"
#include "batchfit/serving.h"
#include "cli_options.h"

#include <cstdint>
#include <functional>
#include <ostream>

namespace batchfit {

/// Where a CLI run writes: what it prints (stdout) and its messages (stderr).
struct CliIo {
    std::ostream& out;
    std::ostream& err;
};

/// Renders the serving report to o.out (the Qt report library's, set by batchfit-cli's main; none without
/// Qt).
using ServingReportHook = std::function<Status(const CliOptions& o, const ServingModel& model,
                                               std::int64_t sequences, std::int64_t context)>;

/// Prints the engine's figures (or --json) and returns the exit code: 0 when the engine starts and --batch
/// sequences of --seq tokens fit at once, 1 when not, 3 on bad input (the message on io.err).
int cliServe(const CliOptions& o, const CliIo& io, const ServingReportHook& report);

} // namespace batchfit
