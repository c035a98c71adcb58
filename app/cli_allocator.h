#pragma once
// `batchfit-cli allocator-replay TRACE`: a trace through the caching-allocator model, compared with what a
// real run recorded; and `estimate --trace-out FILE`: the simulated step's own trace.
#include "batchfit/allocator_trace.h"
#include "batchfit/estimator.h"
#include "cli_options.h"

#include <string>

namespace batchfit {

/// The replay's result as text, or as JSON with --json (docs/allocator-trace.md lists the fields).
Result<std::string> allocatorReplayOutput(const CliOptions& o, bool& oomOut);
/// Writes the step's trace at o.batch to o.traceOut (atomically).
Status writeStepTrace(const CliOptions& o, const Estimator& est);

} // namespace batchfit
