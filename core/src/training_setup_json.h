#pragma once
// The "training" section of a model file, read and written (used by model_io.cpp).
#include "batchfit/training_setup.h"

#include <nlohmann/json.hpp>
#include <string>

namespace batchfit::setupjson {

/// Reads the section at JSON path `path` ("$.training"); messages start with `source`.
Result<TrainingSetup> read(const nlohmann::json& j, const std::string& source, const std::string& path);
/// The section, every field written (defaults too), in a fixed order.
nlohmann::ordered_json write(const TrainingSetup& setup);
/// {"type": "nf4", "double_quant": ..., "compute_dtype": ..., "prepare": ...}: the "quant" object of the
/// training section and of the estimate JSON's config.
nlohmann::ordered_json quantJson(const QuantConfig& quant);

} // namespace batchfit::setupjson
