#pragma once
// The ONNX graph -> layer stack mapper (internal): its state and steps. The definitions are spread over
// onnx_mapper.cpp (driver, checks, result) and the onnx_*.cpp files of each phase.
#include "batchfit/model.h"
#include "batchfit/onnx_import.h"
#include "batchfit/result.h"
#include "import/layer_builder.h"
#include "import/onnx_proto_util.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <onnx/onnx_pb.h>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace batchfit::onnximport {

class Mapper {
public:
    Mapper(const std::string& source, const OnnxImportOptions& options) : m_source(source), m_opts(options) {}
    Result<Model> run(const std::uint8_t* data, std::size_t size);

private:
    // ---------------------------------------------------------------- messages
    bool cancelled() const;
    Error fail(const std::string& what) const;
    std::string nodeLabel(int i) const;
    Error failNode(int i, const std::string& what) const;
    static std::string quoted(const std::string& s);

    // ---------------------------------------------------------------- structure
    Status checkOpset();
    Status checkType(const TypeProto& t, const std::string& what);
    Status checkTensor(const TensorProto& t, const std::string& what);
    Status checkStructure();
    /// Stable topological order (ties keep file order); the proto's nodes are rearranged to it.
    Status sortNodes();
    /// The first graph output is the model's output; only its ancestors are mapped. The model input is the
    /// (single) non-initializer graph input they read.
    Status chooseInputOutput();

    // ---------------------------------------------------------------- shape propagation
    static TypeInfo typeFrom(const TypeProto& tp);
    void initTypes();
    const TypeInfo* typeOf(const std::string& v) const;
    /// A type with a shape (rank known).
    const TypeInfo* shaped(const NodeProto& n, int k) const;
    static bool sameDim(const Dim& a, const Dim& b);
    static TypeInfo shapedType(int elem, std::vector<Dim> dims);
    static std::optional<std::int64_t> normAxis(std::int64_t axis, std::int64_t rank);
    /// Ints from an attribute (older opsets) or a constant input (newer ones).
    std::optional<std::vector<std::int64_t>> intsArg(const NodeProto& n, const char* attr, int input);
    /// Right-aligned numpy broadcasting; nullopt when two known dims differ and neither is 1.
    static std::optional<std::vector<Dim>> broadcastDims(const std::vector<const std::vector<Dim>*>& shapes);
    /// Conv/pool output size along one spatial dim.
    static Dim windowDim(const Dim& in, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t pb,
                         std::int64_t pe, const std::string& autoPad, bool ceil);
    /// Output types of node i from its inputs' types and constants; Error only for a graph that is wrong
    /// beyond doubt (shapes that cannot broadcast or concatenate).
    Status inferNode(int i, std::vector<std::optional<TypeInfo>>& out);
    /// One forward pass in topological order: which values depend on the model input (Shape and Size cut the
    /// dependency), the constants' values where shape arithmetic needs them, and every value's type.
    Status propagate();
    /// Every dim after the batch known.
    std::optional<TypeInfo> fullType(const std::string& v) const;
    /// Dim 0 of v is the batch dimension of the model input.
    bool batchAtZero(const std::string& v) const;
    /// Per-sample shape: the ONNX shape without dim 0 (all other dims known).
    std::optional<Shape> perSample(const std::string& v) const;
    /// Full ONNX rank (batch included) when known.
    std::optional<std::int64_t> rankOf(const std::string& v) const;
    int elemOf(const std::string& v) const;

    // ---------------------------------------------------------------- batched values and constants
    const StaticValue* staticOf(const std::string& v);
    bool isStatic(const std::string& v);
    std::optional<std::vector<SVal>> staticData(const std::string& v);
    std::optional<std::vector<std::int64_t>> staticInts(const std::string& v);
    std::optional<double> staticScalar(const std::string& v);
    void setStatic(const std::string& name, StaticValue v);
    /// Evaluates a node over constants where BatchFit needs the values (shape arithmetic, scalars).
    void evalStatic(int i);
    Status checkInput();

    // ---------------------------------------------------------------- fusions
    const std::vector<int>& consumers(const std::string& v) const;
    /// The single needed consumer of v (v not a graph output), or -1.
    int soleConsumer(const std::string& v) const;
    bool scalarNear(const std::string& v, double want);
    /// For a binary node reading `v`, the other operand.
    static std::string other(const NodeProto& n, const std::string& v);
    void findFusions();
    /// x @ W + b (an initializer W [K, N] and a bias b of N elements) -> linear with bias.
    void fuseLinearBias(int i);
    /// x * sigmoid(x) -> silu.
    void fuseSilu(int i);
    /// torch's exact GELU: (x * (erf(x / sqrt(2)) + 1)) * 0.5 -> gelu.
    void fuseErfGelu(int e);
    /// torch's layer_norm before opset 17: (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * w + b.
    void fuseLayerNorm(int i);

    // ---------------------------------------------------------------- emission
    std::string baseName(int i) const;
    /// `base`, else `base_<op type>` ("attn" for /attn/MatMul, then "attn_div" for /attn/Div), else numbered.
    std::string uniqueName(const std::string& base, int node = -1);
    std::string layerOf(const std::string& value) const;
    /// Appends a layer reading the given batched values; explicit inputs unless it reads the previous layer.
    std::string emit(int node, const std::string& suffix, const std::string& type, const AttrList& attrs,
                     const std::vector<std::string>& values);
    std::string emitLayers(const std::string& name, const std::string& type, const AttrList& attrs,
                           std::vector<std::string> ins);
    void bind(const std::string& value, const std::string& layer);
    /// Records that an initializer is a parameter of `layer` (the first layer to use it).
    void own(const std::string& init, const std::string& layer);
    Status visit(int i);
    Status emitOpaque(int i, const std::string& reason);

    // ---------------------------------------------------------------- operators
    /// Symmetric per-dim padding for a conv/pool; nullopt when ONNX pads asymmetrically.
    std::optional<std::vector<std::int64_t>> padding(const NodeProto& n, const std::string& x,
                                                     const std::vector<std::int64_t>& kernel,
                                                     const std::vector<std::int64_t>& strides,
                                                     const std::vector<std::int64_t>& dilations);
    static std::vector<std::int64_t> intsOr(const std::optional<std::vector<std::int64_t>>& v, std::size_t d,
                                            std::int64_t def);
    const TypeInfo* initType(const std::string& v);
    Result<Outcome> mapConv(int i, bool transposed);
    Result<Outcome> mapPool(int i, bool max);
    Result<Outcome> mapNorm(int i);
    /// Gemm (2-d) or MatMul with a weight initializer -> linear; MatMul of two activations -> matmul.
    Result<Outcome> mapLinear(int i);
    Result<Outcome> mapBinary(int i);
    Result<Outcome> mapActivation(int i);
    /// A per-sample dim from an ONNX axis (normalised with the rank); nullopt for the batch axis.
    std::optional<std::int64_t> sampleDim(std::int64_t axis, std::optional<std::int64_t> rank,
                                          bool keepNegative = true);
    Result<Outcome> mapSoftmax(int i);
    Result<Outcome> mapDropout(int i);
    Result<Outcome> mapReshapeLike(int i);
    Result<Outcome> mapTranspose(int i);
    Result<Outcome> mapConcat(int i);
    Result<Outcome> mapGather(int i);
    Result<Outcome> mapSlice(int i);
    Result<Outcome> mapSplit(int i);
    Result<Outcome> mapReduceMean(int i);
    Result<Outcome> mapNode(int i);

    // ---------------------------------------------------------------- result
    Result<Model> finish();

    const std::string& m_source;
    const OnnxImportOptions& m_opts;
    ModelProto m_model;
    GraphProto* m_g = nullptr;
    std::int64_t m_opset = 0;
    std::unordered_map<std::string, const TensorProto*> m_inits;
    std::unordered_map<std::string, int> m_producer;
    std::unordered_map<std::string, TypeInfo> m_types;
    std::unordered_map<std::string, TypeInfo>
        m_declared; ///< value_info and graph outputs written in the file
    Dim m_batchDim;
    std::unordered_map<std::string, StaticValue> m_static;
    std::unordered_set<std::string> m_batched;
    std::unordered_map<std::string, std::vector<int>> m_consumers;
    std::vector<bool> m_needed, m_absorbed;
    std::map<int, Fusion> m_fusions;
    std::string m_input, m_output;
    Shape m_inputShape;
    DType m_inputDtype = DType::Float32;
    // Mapping state.
    std::unordered_map<std::string, std::string> m_layerOf;
    std::unordered_map<std::string, std::string> m_owner; ///< initializer -> the layer whose parameter it is
    std::vector<Layer> m_layers;
    std::string m_prev = "@input";
    std::set<std::string> m_names{"@input", "@prev"};
    std::unordered_map<std::string, int> m_nextSuffix;
    std::unordered_map<std::string, std::string> m_layerOp; ///< layer name -> op
    std::vector<std::string> m_problems, m_notes, m_opaque;
};

} // namespace batchfit::onnximport
