#pragma once
// Builds a model from an ONNX file (a ModelProto): parse, ONNX shape inference, then a mapping of the common
// operators to BatchFit ops with the batch dimension made symbolic. Optional: without libonnx-dev at build
// time every call returns an Error that says so (onnxImportAvailable() tells beforehand).
#include "batchfit/model.h"
#include "batchfit/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace batchfit {

enum class OnnxLoss { CrossEntropy, Mse, None };

struct OnnxImportOptions {
    OnnxLoss loss = OnnxLoss::CrossEntropy; ///< the loss layer appended after the graph output
    /// Operators BatchFit cannot map become `opaque` layers (their initializers' parameter count, no saved
    /// bytes, the output shape from ONNX shape inference) instead of failing the import.
    bool allowOpaque = false;
    /// Polled between nodes (any thread); returning true abandons the import with the Error
    /// "<source>: import cancelled". Parsing the protobuf itself is not interruptible. Empty: never
    /// cancelled.
    std::function<bool()> cancelled = {};
};

/// Largest .onnx accepted (protobuf cannot parse messages of 2 GiB or more).
inline constexpr std::size_t kMaxOnnxFileBytes = (std::size_t{1} << 31) - 1;

/// True when this build links libonnx (CMake option BATCHFIT_WITH_ONNX).
bool onnxImportAvailable();
/// "cross-entropy", "mse" or "none" (also "cross_entropy", "mse_loss").
Result<OnnxLoss> parseOnnxLoss(const std::string& text);
/// Operator types (default domain) the importer maps; anything else is refused or, with allowOpaque, opaque.
std::vector<std::string> onnxSupportedOperators();

/// Imports serialized ModelProto bytes; `source` names the file in messages. Never throws and never crashes
/// on malformed or hostile input (the libFuzzer entry point: importOnnx(data, size, "fuzz.onnx")).
Result<Model> importOnnx(const std::uint8_t* data, std::size_t size, const std::string& source,
                         const OnnxImportOptions& options = {});
Result<Model> importOnnx(const std::string& bytes, const std::string& source,
                         const OnnxImportOptions& options = {});
Result<Model> importOnnxFile(const std::string& path, const OnnxImportOptions& options = {});

} // namespace batchfit
