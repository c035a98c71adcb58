#pragma once
// The batchfit-cli command line that reproduces a set-up (the GUI's "Copy as CLI Command").
#include "batchfit/gpu.h"
#include "batchfit/training_config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace batchfit {

/// The command line and what it cannot say.
struct CliCommand {
    std::vector<std::string> arguments; ///< after the program name: "estimate", "--preset", "resnet50", ...
    std::string line; ///< "batchfit-cli estimate --preset resnet50 --batch 64 ...", shell-quoted
    std::vector<std::string> unsaid; ///< set-up the CLI has no option for ("RMSprop momentum", ...)
    /// The same set-up as a call of the Python package: "import batchfit\nbatchfit.estimate(\"resnet50\",
    /// batch_size=64, gpu=\"rtx-4090\", optimizer=\"adamw\")" (each option under its flag's name).
    std::string python;
};

/// `estimate` for the model given as `modelOption` ("--preset" or "--model") and `modelValue`, with every
/// option of `config` that differs from the CLI's default, the batch and the GPU (a catalogue id, or NGiB for
/// a custom capacity).
CliCommand cliCommand(const std::string& modelOption, const std::string& modelValue,
                      const TrainingConfig& config, const GpuSpec& gpu, std::int64_t batch);

/// `arguments` of `estimate` (CliCommand::arguments: "estimate", "--preset", "resnet50", ...) as the same call of
/// the Python package: each option under its flag's name (--batch as batch_size), switches as True.
std::string pythonEstimateCall(const std::vector<std::string>& arguments);

/// `s` as a Python literal: a number as it is ("64", "0.05"), anything else a double-quoted string.
std::string pythonLiteral(const std::string& s);

/// `s` quoted for a POSIX shell when it needs it ("my model.json" -> 'my model.json').
std::string shellQuote(const std::string& s);

} // namespace batchfit
