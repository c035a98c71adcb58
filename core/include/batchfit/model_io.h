#pragma once
// Model file (JSON, "format": "batchfit-model", "version": 1 or 2): load, validate, save. Version 2 adds the
// optional "training" section (GPU, batch, training set-up). See docs/model-format.md.
#include "batchfit/model.h"
#include "batchfit/result.h"
#include "batchfit/training_setup.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace batchfit {

/// The newest format version this build reads.
inline constexpr int kModelFormatVersion = 3;
/// The first version with a "training" section.
inline constexpr int kModelSetupVersion = 2;
/// The first version whose training.fragmentation_fraction is an explicit override of the allocator
/// replay (version 2 files always carried the old default 0.05, which is dropped when read).
inline constexpr int kModelAllocatorVersion = 3;
/// Files larger than this are refused before parsing (the largest real models take well under 1 MiB; parsing
/// 16 MiB of JSON already takes about a second and ~300 MB).
inline constexpr std::size_t kMaxModelFileBytes = 16u * 1024u * 1024u;
/// Largest `repeat` of a block (importers that build blocks keep to it, so their models save and load).
inline constexpr std::int64_t kMaxBlockRepeat = 100000;

/// A model file: the model and, when the file stores one, its training set-up.
struct ModelDocument {
    Model model;
    std::optional<TrainingSetup> setup;
    /// What the file holds but this build cannot use, said rather than refused: a GPU id the catalogue does
    /// not know opens on the default GPU ("...: $.training.gpu: unknown GPU 'x' ...; showing rtx-4090
    /// instead").
    std::vector<std::string> warnings;
};

/// Parses a model file with its training section. `source` names the file in messages.
Result<ModelDocument> parseModelDocument(const std::string& jsonText, const std::string& source = "<model>");
/// Reads and parses a file with its training section.
Result<ModelDocument> loadModelDocument(const std::string& path);
/// Canonical JSON text; with a set-up the file is version 2, without one version 1.
std::string serializeModelDocument(const Model& model, const std::optional<TrainingSetup>& setup);

/// Parses model JSON text (a training section is checked, then dropped). `source` names the file in messages.
/// Checks structure, not shapes (see validateModel).
Result<Model> parseModel(const std::string& jsonText, const std::string& source = "<model>");
/// Reads and parses a file.
Result<Model> loadModelFile(const std::string& path);
/// Canonical JSON text (2-space indent, trailing newline): save -> load -> save is byte-identical.
std::string serializeModel(const Model& model);
/// Writes atomically (temporary file + rename); the old file is intact on failure.
Status saveModelFile(const Model& model, const std::string& path);
/// The model with its set-up (serializeModelDocument), written atomically as saveModelFile writes.
Status saveModelDocument(const Model& model, const std::optional<TrainingSetup>& setup, const std::string& path);
/// Full check: structure, known ops, attributes and shape inference through the whole model.
Status validateModel(const Model& model);

} // namespace batchfit
