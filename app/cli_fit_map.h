#pragma once
// `batchfit-cli fit-map`: the largest micro-batch and the tokens per step at each sequence length.
#include "batchfit/fit_map.h"
#include "batchfit/gpu.h"
#include "batchfit/model.h"
#include "batchfit/result.h"
#include "cli_options.h"

#include <string>

namespace batchfit {

/// The map over --seq-from..--seq-to (default: suggestedFitMapRange) on --gpu. `hfConfigPath` non-empty: the
/// model is imported again from that config.json at each length; otherwise `model` is reshaped.
Result<FitMap> cliFitMap(const CliOptions& o, const Model& model, const std::string& hfConfigPath);
/// The table: seq | largest batch | tokens per step | peak at that batch | needs.
std::string fitMapText(const Model& model, const GpuSpec& gpu, const FitMap& map);

} // namespace batchfit
