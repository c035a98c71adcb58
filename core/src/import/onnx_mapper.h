#pragma once
// The ONNX -> layer stack mapping (compiled only when the build links libonnx: BATCHFIT_WITH_ONNX).
#include "batchfit/onnx_import.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace batchfit::onnximport {

/// Parses serialized ModelProto bytes, runs ONNX shape inference and maps the graph. May throw only what
/// protobuf or libonnx throw (std::exception); importOnnx() catches it.
Result<Model> importModelProto(const std::uint8_t* data, std::size_t size, const std::string& source,
                               const OnnxImportOptions& options);

} // namespace batchfit::onnximport
