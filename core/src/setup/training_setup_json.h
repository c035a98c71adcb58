#pragma once
// The "training" section of a model file, read and written through the settings table (used by
// model_io.cpp and json_report.cpp).
#include "batchfit/training_setup.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace batchfit::setupjson {

/// Reads the section at JSON path `path` ("$.training"); messages start with `source`. With `warnings`, a GPU
/// id the catalogue does not know is not an error: the default GPU is used and a warning says so.
Result<TrainingSetup> read(const nlohmann::json& j, const std::string& source, const std::string& path,
                           std::vector<std::string>* warnings = nullptr);
/// The section in the table's order; unset optional settings and empty lists are left out (or written as
/// null with `unsetAsNull`, as the JSON report does), and a group only when it is in use.
nlohmann::ordered_json write(const TrainingSetup& setup, bool unsetAsNull = false);
/// {"type": "nf4", "double_quant": ..., "compute_dtype": ..., "prepare": ...}: the "quant" object.
nlohmann::ordered_json quantJson(const QuantConfig& quant);

} // namespace batchfit::setupjson
