#pragma once
// Shared pieces of the ONNX mapper: limits, type and constant records, and readers of protobuf tensors
// and node attributes (internal to the importer).
#include "batchfit/attributes.h"
#include "batchfit/dtype.h"
#include "import/layer_builder.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <vector>

namespace batchfit::onnximport {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx::TypeProto;

constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;
constexpr int kMaxRank = 16;
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 48;
constexpr std::size_t kMaxStaticElements =
    4096; ///< constants read for shape arithmetic; larger ones keep dims only
constexpr int kMaxNodes = 1000000;
constexpr int kMaxInferencePasses = 32;
constexpr std::size_t kMaxListedProblems = 20;

/// One dimension from ONNX type information: a value, a symbol, or unknown.
struct Dim {
    std::int64_t value = -1;
    std::string param;
    bool known() const { return value >= 0; }
};

struct TypeInfo {
    int elem = 0;
    bool hasShape = false;
    std::vector<Dim> dims;
};

/// One element of a constant evaluated for shape arithmetic.
struct SVal {
    enum Kind : std::uint8_t { Known, Batch, Unknown } kind = Unknown;
    std::int64_t i = 0;
    double d = 0;
    static SVal known(std::int64_t v) { return {Known, v, static_cast<double>(v)}; }
    static SVal real(double v) {
        SVal s{Known, 0, v};
        if (std::isfinite(v) && std::fabs(v) < 9.0e18) s.i = static_cast<std::int64_t>(v);
        return s;
    }
};

struct StaticValue {
    bool hasData = false;
    std::vector<SVal> v;
    std::string root; ///< the initializer it is a view of (through Identity/Transpose/Unsqueeze/...), if any
    bool transposed2d = false; ///< root viewed through a 2-D transpose
};

/// The outcome of mapping one node: done, or not expressible (with the reason) -> opaque or an error.
struct Outcome {
    bool mapped = true;
    std::string reason;
};

/// Several nodes mapped to one layer, emitted at the last node of the pattern (the anchor).
struct Fusion {
    std::string op;
    AttrList attrs;
    std::string input;                ///< the batched value it reads
    int nameNode = -1;                ///< the node whose name the layer takes
    std::vector<std::string> weights; ///< initializers it owns
};

/// A proto string made safe for messages and model files (printable ASCII, bounded).
std::string printable(const std::string& s, std::size_t max = 80);
float halfToFloat(std::uint16_t h);
float bf16ToFloat(std::uint16_t h);
/// Bytes per element of a fixed-size ONNX element type; 0 for strings and unknown types.
std::size_t elemSize(int t);
std::optional<DType> toDType(int t);
std::optional<std::uint64_t> tensorNumel(const TensorProto& t);
/// Reads a small tensor's values (<= kMaxStaticElements); nullopt when it has no (readable) data.
std::optional<std::vector<SVal>> readTensor(const TensorProto& t);
/// A float attribute as the double it was written as (1e-5f -> 1e-05, not 9.99999974738e-06).
double roundFloat(float f);
/// A value read from a float constant, written as the float was meant (0.1f -> 0.1).
double tidy(double v);
AttrValue intsAttr(const std::vector<std::int64_t>& v);
bool allEqual(const std::vector<std::int64_t>& v, std::int64_t x);
const AttributeProto* findAttr(const NodeProto& n, const char* name);
std::int64_t attrInt(const NodeProto& n, const char* name, std::int64_t def);
double attrFloat(const NodeProto& n, const char* name, double def);
std::string attrString(const NodeProto& n, const char* name, const std::string& def);
std::optional<std::vector<std::int64_t>> attrInts(const NodeProto& n, const char* name);
Outcome unsupported(std::string reason);

} // namespace batchfit::onnximport
