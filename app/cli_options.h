#pragma once
// Command-line parsing for batchfit-cli.
#include "batchfit/gpu.h"
#include "batchfit/result.h"
#include "batchfit/serving_config.h"
#include "batchfit/training_config.h"

#include <optional>
#include <string>
#include <vector>

namespace batchfit {

struct CliOptions {
    std::string command;
    std::string preset;
    std::string modelFile;
    std::string hfConfig;
    std::string onnxFile;
    std::optional<std::string> onnxLoss; ///< --onnx-loss cross-entropy|mse|none
    bool onnxAllowOpaque = false;
    std::optional<std::int64_t> sequence;
    std::optional<std::string> attention;
    std::optional<std::string> moeLoad; ///< --moe-load balanced|worst (HF mixture-of-experts imports)
    std::optional<std::string> moeImpl; ///< --moe-impl grouped_mm|loop (HF mixture-of-experts imports)
    std::int64_t batch = 1;
    bool batchGiven = false;
    std::optional<GpuSpec> gpu;
    TrainingConfig config;
    ServingConfig serving; ///< serve: the engine and its settings
    bool json = false;
    bool fit = false; ///< gpus --fit: the largest batch on every catalogue GPU for the model
    bool timeline = false;
    int top = 10;
    std::int64_t from = 1, to = 1024, step = 2;
    bool logScale = true;
    std::optional<std::int64_t> seqFrom, seqTo; ///< fit-map --seq-from/--seq-to
    std::int64_t seqStep = 0;                   ///< fit-map --seq-step (0: doubling)
    std::string out;
    std::string saveFile; ///< estimate --save FILE: the model and this set-up as a model file (the GUI opens it)
    std::string measuredFile;              ///< --measured: a tools/torch_measure.py file (estimate, report)
    std::string trace;                     ///< allocator-replay TRACE
    std::string traceOut;                  ///< estimate --trace-out FILE
    bool allocConfGiven = false;           ///< --alloc-conf on the command line
    std::optional<std::uint64_t> capacity; ///< allocator-replay --capacity 24GiB
    std::optional<double> memoryFraction;  ///< allocator-replay --memory-fraction F
    std::string lang = "en";
    bool help = false;
    bool version = false;
};

/// Parses `args` over `base` (defaults, or the training section of the --model file: options given override
/// it).
Result<CliOptions> parseCliOptions(const std::vector<std::string>& args, const CliOptions& base = {});

} // namespace batchfit
