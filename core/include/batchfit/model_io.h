#pragma once
// Model file (JSON, "format": "batchfit-model", "version": 1): load, validate, save. See
// docs/model-format.md.
#include "batchfit/model.h"
#include "batchfit/result.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace batchfit {

inline constexpr int kModelFormatVersion = 1;
/// Files larger than this are refused before parsing (the largest real models take well under 1 MiB; parsing
/// 16 MiB of JSON already takes about a second and ~300 MB).
inline constexpr std::size_t kMaxModelFileBytes = 16u * 1024u * 1024u;
/// Largest `repeat` of a block (importers that build blocks keep to it, so their models save and load).
inline constexpr std::int64_t kMaxBlockRepeat = 100000;

/// Parses model JSON text. `source` names the file in messages. Checks structure, not shapes (see
/// validateModel).
Result<Model> parseModel(const std::string& jsonText, const std::string& source = "<model>");
/// Reads and parses a file.
Result<Model> loadModelFile(const std::string& path);
/// Canonical JSON text (2-space indent, trailing newline): save -> load -> save is byte-identical.
std::string serializeModel(const Model& model);
/// Writes atomically (temporary file + rename); the old file is intact on failure.
Status saveModelFile(const Model& model, const std::string& path);
/// Full check: structure, known ops, attributes and shape inference through the whole model.
Status validateModel(const Model& model);

} // namespace batchfit
