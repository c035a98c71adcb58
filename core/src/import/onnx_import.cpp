// ONNX import front end: always compiled. The mapping itself (onnx_mapper.cpp) needs libonnx; without it
// every import returns an Error that names the packages that enable it.
#include "batchfit/onnx_import.h"

#include "bounded_file.h"

#if BATCHFIT_HAVE_ONNX
#include "import/onnx_mapper.h"
#endif

#include <exception>
#include <iterator>

namespace batchfit {

bool onnxImportAvailable() {
    return BATCHFIT_HAVE_ONNX != 0;
}

Result<OnnxLoss> parseOnnxLoss(const std::string& text) {
    if (text == "cross-entropy" || text == "cross_entropy" || text == "ce") return OnnxLoss::CrossEntropy;
    if (text == "mse" || text == "mse_loss") return OnnxLoss::Mse;
    if (text == "none") return OnnxLoss::None;
    return makeError("the ONNX loss must be cross-entropy, mse or none, got '" + text + "'");
}

std::vector<std::string> onnxSupportedOperators() {
    return {"Add",
            "AveragePool",
            "BatchNormalization",
            "Cast",
            "Clip",
            "Concat",
            "Constant",
            "Conv",
            "ConvTranspose",
            "Div",
            "Dropout",
            "Flatten",
            "Gather",
            "Gelu",
            "Gemm",
            "GlobalAveragePool",
            "HardSwish",
            "Identity",
            "LayerNormalization",
            "LeakyRelu",
            "LogSoftmax",
            "MatMul",
            "MaxPool",
            "Mul",
            "ReduceMean",
            "Relu",
            "Reshape",
            "Shape",
            "Sigmoid",
            "Slice",
            "Softmax",
            "Split",
            "Squeeze",
            "Sub",
            "Tanh",
            "Transpose",
            "Unsqueeze"};
}

Result<Model> importOnnx(const std::uint8_t* data, std::size_t size, const std::string& source,
                         const OnnxImportOptions& options) {
#if BATCHFIT_HAVE_ONNX
    if (size > kMaxOnnxFileBytes)
        return makeError(source + ": an ONNX file of " + std::to_string(size) +
                         " bytes is too large (protobuf reads at most 2 GiB)");
    if (size == 0 || data == nullptr) return makeError(source + ": empty file (expected an ONNX ModelProto)");
    try {
        return onnximport::importModelProto(data, size, source, options);
    } catch (const std::exception& e) {
        return makeError(source + ": not a usable ONNX model: " + e.what());
    } catch (...) {
        return makeError(source + ": not a usable ONNX model");
    }
#else
    (void)data;
    (void)size;
    (void)options;
    return makeError(source + ": this BatchFit build has no ONNX support; rebuild it with libonnx-dev and "
                              "libprotobuf-dev installed (CMake option BATCHFIT_WITH_ONNX)");
#endif
}

Result<Model> importOnnx(const std::string& bytes, const std::string& source,
                         const OnnxImportOptions& options) {
    return importOnnx(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), source, options);
}

Result<Model> importOnnxFile(const std::string& path, const OnnxImportOptions& options) {
    if (!onnxImportAvailable()) return importOnnx(nullptr, 0, path, options);
    // protobuf reads at most 2 GiB
    auto bytes = readBoundedFile(path, kMaxOnnxFileBytes, "an ONNX file (protobuf's limit)");
    if (!bytes) return bytes.error();
    if (options.cancelled && options.cancelled()) return makeError(path + ": import cancelled");
    return importOnnx(*bytes, path, options);
}

} // namespace batchfit
