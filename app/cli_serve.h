#pragma once
// `batchfit-cli serve`: the serving engine's start-up arithmetic for a Hugging Face config on --gpu.
#include "cli_options.h"

namespace batchfit {

/// Prints the engine's figures (or --json) and returns the exit code: 0 when the engine starts and --batch
/// sequences of --seq tokens fit at once, 1 when not, 3 on bad input (the message on stderr).
int cliServe(const CliOptions& o);

} // namespace batchfit
