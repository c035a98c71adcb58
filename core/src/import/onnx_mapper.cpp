// ONNX ModelProto -> layer stack. Steps: parse (bounded protobuf reader), structural checks (every value
// defined once, no cycles, sane dims and tensor sizes, nodes valid against their ONNX schema), topological
// order, ONNX shape inference (re-run with the shapes of dynamic Reshapes filled in by a small evaluator of
// shape arithmetic), then a mapping of each node that reads the model input, directly or not, to BatchFit ops
// with the batch dimension dropped. Nodes that only compute on constants (shape arithmetic) are evaluated, not
// emitted. Initializers consumed as weights become the layers' parameters.
#include "import/onnx_mapper.h"

#include "batchfit/model_io.h"
#include "import/layer_builder.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace batchfit::onnximport {
namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx::TypeProto;

constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;
constexpr int kMaxRank = 16;
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 48;
constexpr std::size_t kMaxStaticElements = 4096;  ///< constants read for shape arithmetic; larger ones keep dims only
constexpr int kMaxNodes = 1000000;
constexpr int kMaxInferencePasses = 32;
constexpr std::size_t kMaxListedProblems = 20;

/// A proto string made safe for messages and model files (printable ASCII, bounded).
std::string printable(const std::string& s, std::size_t max = 80) {
    std::string out;
    for (unsigned char c : s) {
        if (out.size() >= max) {
            out += "...";
            break;
        }
        out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
    }
    return out;
}

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
    std::string root;  ///< the initializer it is a view of (through Identity/Transpose/Unsqueeze/...), if any
    bool transposed2d = false;  ///< root viewed through a 2-D transpose
};

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
    std::uint32_t bits;
    if (exp == 0) {
        if (man == 0) bits = sign;
        else {  // subnormal
            float f = std::ldexp(static_cast<float>(man), -24);
            return sign ? -f : f;
        }
    } else if (exp == 31) bits = sign | 0x7f800000u | (man << 13);
    else bits = sign | ((exp + 112) << 23) | (man << 13);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

float bf16ToFloat(std::uint16_t h) {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

/// Bytes per element of a fixed-size ONNX element type; 0 for strings and unknown types.
std::size_t elemSize(int t) {
    switch (t) {
    case TensorProto::FLOAT: case TensorProto::INT32: case TensorProto::UINT32: return 4;
    case TensorProto::DOUBLE: case TensorProto::INT64: case TensorProto::UINT64: case TensorProto::COMPLEX64: return 8;
    case TensorProto::COMPLEX128: return 16;
    case TensorProto::FLOAT16: case TensorProto::BFLOAT16: case TensorProto::INT16: case TensorProto::UINT16: return 2;
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::BOOL: return 1;
    default: return 0;
    }
}

std::optional<DType> toDType(int t) {
    switch (t) {
    case TensorProto::FLOAT: return DType::Float32;
    case TensorProto::FLOAT16: return DType::Float16;
    case TensorProto::BFLOAT16: return DType::BFloat16;
    case TensorProto::DOUBLE: return DType::Float64;
    case TensorProto::INT64: return DType::Int64;
    case TensorProto::INT32: return DType::Int32;
    case TensorProto::UINT8: return DType::UInt8;
    case TensorProto::BOOL: return DType::Bool;
    default: return std::nullopt;
    }
}

std::optional<std::uint64_t> tensorNumel(const TensorProto& t) {
    std::uint64_t n = 1;
    for (auto d : t.dims()) {
        if (d < 0 || d > kMaxDim) return std::nullopt;
        if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n) || n > kMaxElements) return std::nullopt;
    }
    return n;
}

/// Reads a small tensor's values (<= kMaxStaticElements); nullopt when it has no (readable) data.
std::optional<std::vector<SVal>> readTensor(const TensorProto& t) {
    if constexpr (std::endian::native != std::endian::little) return std::nullopt;
    auto numel = tensorNumel(t);
    if (!numel || *numel > kMaxStaticElements) return std::nullopt;
    if (t.has_data_location() && t.data_location() == TensorProto::EXTERNAL) return std::nullopt;
    const std::size_t n = static_cast<std::size_t>(*numel);
    const std::size_t es = elemSize(t.data_type());
    std::vector<SVal> out;
    out.reserve(n);
    const std::string& raw = t.raw_data();
    const bool useRaw = !raw.empty() || (n == 0 && t.has_raw_data());
    if (useRaw && (es == 0 || raw.size() != n * es)) return std::nullopt;
    auto rawAt = [&](std::size_t i, void* dst) { std::memcpy(dst, raw.data() + i * es, es); };
    switch (t.data_type()) {
    case TensorProto::INT64:
        if (!useRaw && static_cast<std::size_t>(t.int64_data_size()) != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t v;
            if (useRaw) rawAt(i, &v);
            else v = t.int64_data(static_cast<int>(i));
            out.push_back(SVal::known(v));
        }
        return out;
    case TensorProto::INT32: case TensorProto::INT16: case TensorProto::INT8: case TensorProto::UINT8:
    case TensorProto::UINT16: case TensorProto::BOOL:
        if (!useRaw && static_cast<std::size_t>(t.int32_data_size()) != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t v = 0;
            if (useRaw) {
                switch (t.data_type()) {
                case TensorProto::INT32: { std::int32_t x; rawAt(i, &x); v = x; break; }
                case TensorProto::INT16: { std::int16_t x; rawAt(i, &x); v = x; break; }
                case TensorProto::INT8: { std::int8_t x; rawAt(i, &x); v = x; break; }
                case TensorProto::UINT16: { std::uint16_t x; rawAt(i, &x); v = x; break; }
                default: { std::uint8_t x; rawAt(i, &x); v = x; break; }
                }
            } else v = t.int32_data(static_cast<int>(i));
            out.push_back(SVal::known(v));
        }
        return out;
    case TensorProto::FLOAT:
        if (!useRaw && static_cast<std::size_t>(t.float_data_size()) != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            float v;
            if (useRaw) rawAt(i, &v);
            else v = t.float_data(static_cast<int>(i));
            out.push_back(SVal::real(v));
        }
        return out;
    case TensorProto::DOUBLE:
        if (!useRaw && static_cast<std::size_t>(t.double_data_size()) != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            double v;
            if (useRaw) rawAt(i, &v);
            else v = t.double_data(static_cast<int>(i));
            out.push_back(SVal::real(v));
        }
        return out;
    case TensorProto::FLOAT16: case TensorProto::BFLOAT16:
        if (!useRaw && static_cast<std::size_t>(t.int32_data_size()) != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t bits;
            if (useRaw) rawAt(i, &bits);
            else bits = static_cast<std::uint16_t>(t.int32_data(static_cast<int>(i)));
            out.push_back(SVal::real(t.data_type() == TensorProto::FLOAT16 ? halfToFloat(bits) : bf16ToFloat(bits)));
        }
        return out;
    default:
        return std::nullopt;
    }
}

/// A float attribute as the double it was written as (1e-5f -> 1e-05, not 9.99999974738e-06).
double roundFloat(float f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(f));
    return std::strtod(buf, nullptr);
}

/// A value read from a float constant, written as the float was meant (0.1f -> 0.1).
double tidy(double v) {
    const float f = static_cast<float>(v);
    return static_cast<double>(f) == v ? roundFloat(f) : v;
}

AttrValue intsAttr(const std::vector<std::int64_t>& v) {
    if (!v.empty() && std::all_of(v.begin(), v.end(), [&](std::int64_t x) { return x == v[0]; })) return v[0];
    return v;
}

bool allEqual(const std::vector<std::int64_t>& v, std::int64_t x) {
    return std::all_of(v.begin(), v.end(), [&](std::int64_t e) { return e == x; });
}

const AttributeProto* findAttr(const NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

std::int64_t attrInt(const NodeProto& n, const char* name, std::int64_t def) {
    const AttributeProto* a = findAttr(n, name);
    return a && a->type() == AttributeProto::INT ? a->i() : def;
}

double attrFloat(const NodeProto& n, const char* name, double def) {
    const AttributeProto* a = findAttr(n, name);
    return a && a->type() == AttributeProto::FLOAT ? roundFloat(a->f()) : def;
}

std::string attrString(const NodeProto& n, const char* name, const std::string& def) {
    const AttributeProto* a = findAttr(n, name);
    return a && a->type() == AttributeProto::STRING ? a->s() : def;
}

std::optional<std::vector<std::int64_t>> attrInts(const NodeProto& n, const char* name) {
    const AttributeProto* a = findAttr(n, name);
    if (!a || a->type() != AttributeProto::INTS) return std::nullopt;
    return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}

/// The outcome of mapping one node: done, or not expressible (with the reason) -> opaque or an error.
struct Outcome {
    bool mapped = true;
    std::string reason;
};
Outcome unsupported(std::string reason) { return {false, std::move(reason)}; }

/// Several nodes mapped to one layer, emitted at the last node of the pattern (the anchor).
struct Fusion {
    std::string op;
    AttrList attrs;
    std::string input;          ///< the batched value it reads
    int nameNode = -1;          ///< the node whose name the layer takes
    std::vector<std::string> weights;  ///< initializers it owns
};

class Mapper {
public:
    Mapper(const std::string& source, const OnnxImportOptions& options) : m_source(source), m_opts(options) {}

    Result<Model> run(const std::uint8_t* data, std::size_t size) {
        google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
        in.SetRecursionLimit(64);
        if (!m_model.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
            return fail("not an ONNX model: the protobuf message is truncated or malformed");
        if (!m_model.has_graph()) return fail("not an ONNX model: no graph (an empty or unrelated protobuf?)");
        if (cancelled()) return fail("import cancelled");
        m_g = m_model.mutable_graph();
        if (auto s = checkOpset(); !s) return s.error();
        if (auto s = checkStructure(); !s) return s.error();
        if (auto s = sortNodes(); !s) return s.error();
        // Constant nodes holding a tensor are read like initializers (some exporters store weights that way).
        for (const auto& n : m_g->node())
            if (n.op_type() == "Constant" && n.output_size() == 1 && !n.output(0).empty())
                if (const AttributeProto* a = findAttr(n, "value"); a && a->has_t()) m_inits.emplace(n.output(0), &a->t());
        if (auto s = chooseInputOutput(); !s) return s.error();
        initTypes();
        if (auto s = checkInput(); !s) return s.error();
        if (auto s = propagate(); !s) return s.error();
        findFusions();
        for (int i = 0; i < m_g->node_size(); ++i) {
            if (!m_needed[static_cast<std::size_t>(i)] || m_absorbed[static_cast<std::size_t>(i)]) continue;
            if (cancelled()) return fail("import cancelled");
            if (auto s = visit(i); !s) return s.error();
        }
        if (!m_problems.empty()) {
            std::string list;
            for (std::size_t k = 0; k < m_problems.size() && k < kMaxListedProblems; ++k)
                list += (k ? "; " : "") + m_problems[k];
            if (m_problems.size() > kMaxListedProblems)
                list += "; and " + std::to_string(m_problems.size() - kMaxListedProblems) + " more";
            return fail(std::to_string(m_problems.size()) + " node(s) BatchFit cannot map: " + list +
                        ". Import with 'allow opaque' (batchfit-cli --onnx-allow-opaque; in the app, the import dialog's "
                        "opaque layers box) to keep them as opaque layers "
                        "(parameters counted, saved activations not)");
        }
        if (cancelled()) return fail("import cancelled");
        return finish();
    }

private:
    // ---------------------------------------------------------------- messages
    bool cancelled() const { return m_opts.cancelled && m_opts.cancelled(); }
    Error fail(const std::string& what) const { return makeError(m_source + ": " + what); }
    std::string nodeLabel(int i) const {
        const NodeProto& n = m_g->node(i);
        return (n.name().empty() ? "#" + std::to_string(i) : "'" + printable(n.name()) + "'") + " (" +
               printable(n.op_type(), 40) + ")";
    }
    Error failNode(int i, const std::string& what) const { return fail("node " + nodeLabel(i) + ": " + what); }
    static std::string quoted(const std::string& s) { return "'" + printable(s) + "'"; }

    // ---------------------------------------------------------------- structure
    Status checkOpset() {
        bool found = false;
        for (const auto& o : m_model.opset_import()) {
            if (o.domain().empty() || o.domain() == "ai.onnx") {
                m_opset = o.version();
                found = true;
            }
        }
        if (!found) return fail("the model imports no opset of the default ONNX domain (opset_import)");
        if (m_opset < 7 || m_opset > 30)
            return fail("opset " + std::to_string(m_opset) + " is outside the range BatchFit reads (7 to 30)");
        m_model.clear_functions();  // model-local functions are not mapped; nodes calling them are unknown ops
        return Ok{};
    }

    Status checkType(const TypeProto& t, const std::string& what) {
        if (!t.has_tensor_type()) return Ok{};
        const auto& tt = t.tensor_type();
        if (!tt.has_shape()) return Ok{};
        if (tt.shape().dim_size() > kMaxRank)
            return fail(what + ": rank " + std::to_string(tt.shape().dim_size()) + " is too large (at most " +
                        std::to_string(kMaxRank) + ")");
        for (const auto& d : tt.shape().dim()) {
            if (d.has_dim_value() && d.dim_value() < 0)
                return fail(what + ": negative dimension " + std::to_string(d.dim_value()));
            if (d.has_dim_value() && d.dim_value() > kMaxDim)
                return fail(what + ": dimension " + std::to_string(d.dim_value()) + " is too large");
        }
        return Ok{};
    }

    Status checkTensor(const TensorProto& t, const std::string& what) {
        if (t.dims_size() > kMaxRank) return fail(what + ": rank " + std::to_string(t.dims_size()) + " is too large");
        for (auto d : t.dims()) {
            if (d < 0) return fail(what + ": negative dimension " + std::to_string(d));
            if (d > kMaxDim) return fail(what + ": dimension " + std::to_string(d) + " is too large");
        }
        auto numel = tensorNumel(t);
        if (!numel) return fail(what + ": too large (the product of its dims overflows)");
        if (t.has_data_location() && t.data_location() == TensorProto::EXTERNAL) return Ok{};
        if (t.data_type() == TensorProto::UNDEFINED || !TensorProto::DataType_IsValid(t.data_type()))
            return fail(what + ": undefined element type");
        const std::size_t es = elemSize(t.data_type());
        if (!t.raw_data().empty()) {
            std::uint64_t want = 0;
            if (es == 0 || __builtin_mul_overflow(*numel, static_cast<std::uint64_t>(es), &want) || t.raw_data().size() != want)
                return fail(what + ": raw data of " + std::to_string(t.raw_data().size()) + " bytes does not match its " +
                            std::to_string(*numel) + " elements");
            return Ok{};
        }
        const std::uint64_t typed = static_cast<std::uint64_t>(t.float_data_size()) + static_cast<std::uint64_t>(t.int32_data_size()) +
                                    static_cast<std::uint64_t>(t.int64_data_size()) + static_cast<std::uint64_t>(t.double_data_size()) +
                                    static_cast<std::uint64_t>(t.uint64_data_size()) + static_cast<std::uint64_t>(t.string_data_size());
        const std::uint64_t perElem = (t.data_type() == TensorProto::COMPLEX64 || t.data_type() == TensorProto::COMPLEX128) ? 2 : 1;
        if (typed != 0 && typed != *numel * perElem)
            return fail(what + ": " + std::to_string(typed) + " values do not match its " + std::to_string(*numel) + " elements");
        return Ok{};  // no data at all (a weight-stripped model): the dims are all BatchFit needs
    }

    Status checkStructure() {
        GraphProto& g = *m_g;
        if (g.node_size() > kMaxNodes) return fail("too many nodes (" + std::to_string(g.node_size()) + ")");
        if (g.node_size() == 0) return fail("the graph has no nodes");
        g.clear_sparse_initializer();
        std::unordered_set<std::string> defined;
        for (int i = 0; i < g.initializer_size(); ++i) {
            const TensorProto& t = g.initializer(i);
            if (t.name().empty()) return fail("initializer #" + std::to_string(i) + " has no name");
            if (auto s = checkTensor(t, "initializer " + quoted(t.name())); !s) return s;
            if (!m_inits.emplace(t.name(), &t).second) return fail("initializer " + quoted(t.name()) + " is defined twice");
            defined.insert(t.name());
        }
        for (const auto& v : g.input()) {
            if (auto s = checkType(v.type(), "graph input " + quoted(v.name())); !s) return s;
            defined.insert(v.name());
        }
        for (const auto& v : g.output())
            if (auto s = checkType(v.type(), "graph output " + quoted(v.name())); !s) return s;
        for (const auto& v : g.value_info())
            if (auto s = checkType(v.type(), "value_info " + quoted(v.name())); !s) return s;
        for (int i = 0; i < g.node_size(); ++i) {
            const NodeProto& n = g.node(i);
            for (const auto& o : n.output()) {
                if (o.empty()) continue;
                if (!defined.insert(o).second)
                    return failNode(i, "output " + quoted(o) + " is already defined (by another node, an initializer or a graph input)");
                m_producer[o] = i;
            }
            for (const auto& a : n.attribute()) {
                if (a.type() == AttributeProto::GRAPH || a.type() == AttributeProto::GRAPHS || a.has_g() || a.graphs_size())
                    return failNode(i, "has a subgraph (attribute '" + printable(a.name()) +
                                           "'): control flow (If, Loop, Scan) is not supported");
                if (a.has_t())
                    if (auto s = checkTensor(a.t(), "node " + nodeLabel(i) + " attribute '" + printable(a.name()) + "'"); !s) return s;
                if (a.has_sparse_tensor() || a.sparse_tensors_size())
                    return failNode(i, "sparse tensor attributes are not supported");
                if (a.tensors_size()) return failNode(i, "tensor-list attributes are not supported");
            }
        }
        for (int i = 0; i < g.node_size(); ++i) {
            const NodeProto& n = g.node(i);
            for (const auto& in : n.input())
                if (!in.empty() && !defined.count(in))
                    return failNode(i, "reads " + quoted(in) +
                                           ", which is neither a graph input, an initializer nor a node output (a missing initializer?)");
            const bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
            if (!defaultDomain) continue;
            const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), m_opset, "");
            if (!schema) continue;
            try {
                schema->Verify(n);
            } catch (const std::exception& e) {
                return failNode(i, "invalid for opset " + std::to_string(m_opset) + ": " + printable(e.what(), 300));
            }
        }
        return Ok{};
    }

    /// Stable topological order (ties keep file order); the proto's nodes are rearranged to it.
    Status sortNodes() {
        GraphProto& g = *m_g;
        const int n = g.node_size();
        std::vector<std::vector<int>> users(static_cast<std::size_t>(n));
        std::vector<int> pending(static_cast<std::size_t>(n), 0);
        for (int i = 0; i < n; ++i) {
            std::set<int> deps;
            for (const auto& in : g.node(i).input()) {
                auto it = m_producer.find(in);
                if (it != m_producer.end()) deps.insert(it->second);
            }
            for (int d : deps) users[static_cast<std::size_t>(d)].push_back(i);
            pending[static_cast<std::size_t>(i)] = static_cast<int>(deps.size());
        }
        std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
        for (int i = 0; i < n; ++i)
            if (pending[static_cast<std::size_t>(i)] == 0) ready.push(i);
        std::vector<int> order;
        order.reserve(static_cast<std::size_t>(n));
        while (!ready.empty()) {
            const int i = ready.top();
            ready.pop();
            order.push_back(i);
            for (int u : users[static_cast<std::size_t>(i)])
                if (--pending[static_cast<std::size_t>(u)] == 0) ready.push(u);
        }
        if (static_cast<int>(order.size()) != n) {
            for (int i = 0; i < n; ++i)
                if (pending[static_cast<std::size_t>(i)] > 0)
                    return failNode(i, "is part of a cycle: the graph is not a DAG");
        }
        bool sorted = true;
        for (int i = 0; i < n; ++i) sorted = sorted && order[static_cast<std::size_t>(i)] == i;
        if (!sorted) {
            std::vector<NodeProto> nodes(static_cast<std::size_t>(n));
            for (int i = 0; i < n; ++i) nodes[static_cast<std::size_t>(i)].Swap(g.mutable_node(order[static_cast<std::size_t>(i)]));
            for (int i = 0; i < n; ++i) g.mutable_node(i)->Swap(&nodes[static_cast<std::size_t>(i)]);
            for (int i = 0; i < n; ++i)
                for (const auto& o : g.node(i).output())
                    if (!o.empty()) m_producer[o] = i;
        }
        return Ok{};
    }

    /// The first graph output is the model's output; only its ancestors are mapped. The model input is the
    /// (single) non-initializer graph input they read.
    Status chooseInputOutput() {
        const GraphProto& g = *m_g;
        if (g.output_size() == 0) return fail("the graph has no outputs");
        m_output = g.output(0).name();
        if (g.output_size() > 1)
            m_notes.push_back("only the first graph output '" + printable(m_output) + "' is modelled (" +
                              std::to_string(g.output_size() - 1) + " more ignored)");
        m_needed.assign(static_cast<std::size_t>(g.node_size()), false);
        m_absorbed.assign(static_cast<std::size_t>(g.node_size()), false);
        std::vector<std::string> stack{m_output};
        std::unordered_set<std::string> seen;
        std::set<std::string> inputsRead;
        std::unordered_set<std::string> graphInputs;
        for (const auto& v : g.input())
            if (!m_inits.count(v.name())) graphInputs.insert(v.name());
        while (!stack.empty()) {
            std::string v = std::move(stack.back());
            stack.pop_back();
            if (v.empty() || !seen.insert(v).second) continue;
            if (graphInputs.count(v)) inputsRead.insert(v);
            auto it = m_producer.find(v);
            if (it == m_producer.end()) continue;
            if (m_needed[static_cast<std::size_t>(it->second)]) continue;
            m_needed[static_cast<std::size_t>(it->second)] = true;
            for (const auto& in : g.node(it->second).input()) stack.push_back(in);
        }
        if (!m_producer.count(m_output)) return fail("the graph output " + quoted(m_output) + " is not computed by any node");
        if (inputsRead.empty()) return fail("the graph output " + quoted(m_output) + " does not depend on any graph input");
        if (inputsRead.size() > 1) {
            std::string names;
            for (const auto& s : inputsRead) names += (names.empty() ? "" : ", ") + quoted(s);
            return fail("the output depends on " + std::to_string(inputsRead.size()) + " graph inputs (" + names +
                        "); BatchFit models have one input");
        }
        m_input = *inputsRead.begin();
        return Ok{};
    }

    // ---------------------------------------------------------------- shape propagation
    // libonnx's InferShapes segfaults on malformed graphs (a ConvTranspose whose weight rank differs from its
    // input's, a Gemm of a scalar: onnx/onnx#6180, #6185), so shapes are propagated here, node by node, with every
    // rank and attribute checked before use. Unknown results stay unknown (or take the file's value_info).

    static TypeInfo typeFrom(const TypeProto& tp) {
        TypeInfo t;
        if (!tp.has_tensor_type()) return t;
        const auto& tt = tp.tensor_type();
        t.elem = tt.elem_type();
        if (tt.has_shape()) {
            t.hasShape = true;
            for (const auto& d : tt.shape().dim()) {
                Dim x;
                if (d.has_dim_value()) x.value = d.dim_value();
                else if (d.has_dim_param()) x.param = d.dim_param();
                t.dims.push_back(std::move(x));
            }
        }
        return t;
    }

    void initTypes() {
        for (const auto& v : m_g->value_info()) m_declared[v.name()] = typeFrom(v.type());
        for (const auto& v : m_g->output()) m_declared[v.name()] = typeFrom(v.type());
        for (const auto& v : m_g->input())
            if (!m_inits.count(v.name())) m_types[v.name()] = typeFrom(v.type());
        for (const auto& [name, t] : m_inits) {
            TypeInfo ti;
            ti.elem = t->data_type();
            ti.hasShape = true;
            for (auto d : t->dims()) ti.dims.push_back({d, {}});
            m_types[name] = std::move(ti);
        }
    }

    const TypeInfo* typeOf(const std::string& v) const {
        auto it = m_types.find(v);
        return it == m_types.end() ? nullptr : &it->second;
    }
    /// A type with a shape (rank known).
    const TypeInfo* shaped(const NodeProto& n, int k) const {
        if (k >= n.input_size() || n.input(k).empty()) return nullptr;
        const TypeInfo* t = typeOf(n.input(k));
        return t && t->hasShape ? t : nullptr;
    }
    static bool sameDim(const Dim& a, const Dim& b) {
        if (a.known() || b.known()) return a.value == b.value;
        return !a.param.empty() && a.param == b.param;
    }
    static TypeInfo shapedType(int elem, std::vector<Dim> dims) {
        TypeInfo t;
        t.elem = elem;
        t.hasShape = true;
        t.dims = std::move(dims);
        return t;
    }
    static std::optional<std::int64_t> normAxis(std::int64_t axis, std::int64_t rank) {
        if (axis < -rank || axis >= rank) return std::nullopt;
        return axis < 0 ? axis + rank : axis;
    }
    /// Ints from an attribute (older opsets) or a constant input (newer ones).
    std::optional<std::vector<std::int64_t>> intsArg(const NodeProto& n, const char* attr, int input) {
        if (auto a = attrInts(n, attr)) return a;
        if (input < n.input_size() && !n.input(input).empty()) return staticInts(n.input(input));
        return std::nullopt;
    }

    /// Right-aligned numpy broadcasting; nullopt when two known dims differ and neither is 1.
    static std::optional<std::vector<Dim>> broadcastDims(const std::vector<const std::vector<Dim>*>& shapes) {
        std::size_t r = 0;
        for (const auto* s : shapes) r = std::max(r, s->size());
        std::vector<Dim> out(r, Dim{1, {}});
        for (const auto* s : shapes) {
            for (std::size_t k = 0; k < s->size(); ++k) {
                Dim& o = out[r - s->size() + k];
                const Dim& d = (*s)[k];
                if (d.known() && d.value == 1) continue;
                if (o.known() && o.value == 1) o = d;
                else if (d.known() && o.known()) {
                    if (d.value != o.value) return std::nullopt;
                } else if (!sameDim(o, d)) {
                    if (d.known()) o = d;          // a known size > 1 wins over a symbol (which must equal it)
                    else if (!o.known()) o = Dim{};
                }
            }
        }
        return out;
    }

    /// Conv/pool output size along one spatial dim.
    static Dim windowDim(const Dim& in, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t pb, std::int64_t pe,
                         const std::string& autoPad, bool ceil) {
        if (!in.known() || k <= 0 || s <= 0 || d <= 0 || k > kMaxDim || s > kMaxDim || d > kMaxDim) return {};
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") return {(in.value + s - 1) / s, {}};
        if (autoPad == "VALID") pb = pe = 0;
        if (pb < 0 || pe < 0 || pb > kMaxDim || pe > kMaxDim) return {};
        const std::int64_t span = in.value + pb + pe - d * (k - 1) - 1;
        if (span < 0) return {};
        return {(ceil ? (span + s - 1) / s : span / s) + 1, {}};
    }

    /// Output types of node i from its inputs' types and constants; Error only for a graph that is wrong beyond
    /// doubt (shapes that cannot broadcast or concatenate).
    Status inferNode(int i, std::vector<std::optional<TypeInfo>>& out) {
        const NodeProto& n = m_g->node(i);
        const std::string& t = n.op_type();
        out.assign(static_cast<std::size_t>(n.output_size()), std::nullopt);
        if (out.empty()) return Ok{};
        const TypeInfo* x = shaped(n, 0);
        const int elem0 = n.input_size() >= 1 && typeOf(n.input(0)) ? typeOf(n.input(0))->elem : 0;
        const std::int64_t r = x ? static_cast<std::int64_t>(x->dims.size()) : -1;
        const Dim batchDim = m_batchDim;
        static const std::set<std::string> kUnary = {
            "Relu", "Sigmoid", "Tanh", "HardSwish", "LeakyRelu", "Erf", "Sqrt", "Exp", "Log", "Neg", "Abs", "Softplus",
            "Softsign", "Elu", "Selu", "Celu", "HardSigmoid", "Mish", "Identity", "Clip", "Softmax", "LogSoftmax", "Gelu",
            "Floor", "Ceil", "Round", "Reciprocal", "Sin", "Cos", "Not", "Sign", "InstanceNormalization", "LRN",
            "ThresholdedRelu", "Hardmax", "CumSum", "Dropout", "Cast", "BatchNormalization", "LayerNormalization",
            "IsNaN", "IsInf", "Shrink", "PRelu"};
        static const std::set<std::string> kCompare = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                                                       "And", "Or", "Xor"};
        static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum",
                                                      "Mean", "Where", "BitShift"};
        if (t == "Constant") {
            if (const AttributeProto* a = findAttr(n, "value"); a && a->has_t()) {
                std::vector<Dim> dims;
                for (auto d : a->t().dims()) dims.push_back({d, {}});
                out[0] = shapedType(a->t().data_type(), dims);
            } else if (findAttr(n, "value_int")) out[0] = shapedType(TensorProto::INT64, {});
            else if (findAttr(n, "value_float")) out[0] = shapedType(TensorProto::FLOAT, {});
            else if (const AttributeProto* b = findAttr(n, "value_ints"))
                out[0] = shapedType(TensorProto::INT64, {{static_cast<std::int64_t>(b->ints_size()), {}}});
            else if (const AttributeProto* c = findAttr(n, "value_floats"))
                out[0] = shapedType(TensorProto::FLOAT, {{static_cast<std::int64_t>(c->floats_size()), {}}});
            return Ok{};
        }
        if (t == "Shape") {
            if (x) {
                std::int64_t s = attrInt(n, "start", 0), e = attrInt(n, "end", r);
                if (s < 0) s += r;
                if (e < 0) e += r;
                s = std::clamp<std::int64_t>(s, 0, r);
                e = std::clamp<std::int64_t>(e, 0, r);
                out[0] = shapedType(TensorProto::INT64, {{std::max<std::int64_t>(e - s, 0), {}}});
            } else out[0] = shapedType(TensorProto::INT64, {Dim{}});
            return Ok{};
        }
        if (t == "Size") {
            out[0] = shapedType(TensorProto::INT64, {});
            return Ok{};
        }
        if (kUnary.count(t)) {
            if (!x) return Ok{};
            int elem = elem0;
            if (t == "Cast") elem = static_cast<int>(attrInt(n, "to", 0));
            if (t == "Not" || t == "IsNaN" || t == "IsInf") elem = TensorProto::BOOL;
            out[0] = shapedType(elem, x->dims);
            if (t == "Dropout" && out.size() > 1) out[1] = shapedType(TensorProto::BOOL, x->dims);
            if (t == "BatchNormalization" && r >= 2)
                for (std::size_t k = 1; k < out.size() && k < 5; ++k) out[k] = shapedType(elem0, {x->dims[1]});
            return Ok{};
        }
        if (kBinary.count(t) || kCompare.count(t)) {
            std::vector<const std::vector<Dim>*> shapes;
            for (int k = 0; k < n.input_size(); ++k) {
                const TypeInfo* s = shaped(n, k);
                if (!s) return Ok{};
                shapes.push_back(&s->dims);
            }
            if (shapes.empty()) return Ok{};
            auto dims = broadcastDims(shapes);
            if (!dims) return failNode(i, "its input shapes do not broadcast");
            int elem = t == "Where" && n.input_size() > 1 && typeOf(n.input(1)) ? typeOf(n.input(1))->elem : elem0;
            if (kCompare.count(t)) elem = TensorProto::BOOL;
            out[0] = shapedType(elem, std::move(*dims));
            return Ok{};
        }
        if (t == "Conv" || t == "ConvTranspose" || t == "MaxPool" || t == "AveragePool" || t == "LpPool") {
            const bool conv = t == "Conv" || t == "ConvTranspose";
            if (!x || r < 3) return Ok{};
            const std::size_t sp = static_cast<std::size_t>(r - 2);
            const TypeInfo* w = conv ? shaped(n, 1) : nullptr;
            if (conv && (!w || w->dims.size() != x->dims.size())) return Ok{};
            std::vector<std::int64_t> kernel;
            if (auto k = attrInts(n, "kernel_shape")) kernel = *k;
            else if (conv)
                for (std::size_t k = 2; k < w->dims.size(); ++k) kernel.push_back(w->dims[k].value);
            const auto strides = attrInts(n, "strides"), dil = attrInts(n, "dilations"), pads = attrInts(n, "pads");
            if (kernel.size() != sp || (strides && strides->size() != sp) || (dil && dil->size() != sp) ||
                (pads && pads->size() != 2 * sp))
                return Ok{};
            const std::string autoPad = attrString(n, "auto_pad", "NOTSET");
            const bool ceil = attrInt(n, "ceil_mode", 0) != 0;
            std::vector<Dim> dims{x->dims[0]};
            if (t == "Conv") dims.push_back(w->dims[0]);
            else if (t == "ConvTranspose") {
                const std::int64_t g = attrInt(n, "group", 1);
                std::int64_t c = -1;
                if (w->dims[1].known() && g > 0 && !__builtin_mul_overflow(w->dims[1].value, g, &c) && c <= kMaxDim) dims.push_back({c, {}});
                else dims.push_back({});
            } else dims.push_back(x->dims[1]);
            const auto outShape = attrInts(n, "output_shape"), outPad = attrInts(n, "output_padding");
            if (t == "ConvTranspose" && ((outShape && outShape->size() != sp) || (outPad && outPad->size() != sp))) return Ok{};
            for (std::size_t k = 0; k < sp; ++k) {
                const std::int64_t s = strides ? (*strides)[k] : 1, d = dil ? (*dil)[k] : 1;
                const std::int64_t pb = pads ? (*pads)[k] : 0, pe = pads ? (*pads)[k + sp] : 0;
                const Dim& in = x->dims[k + 2];
                if (t != "ConvTranspose") {
                    dims.push_back(windowDim(in, kernel[k], s, d, pb, pe, autoPad, ceil));
                    continue;
                }
                if (outShape) {
                    dims.push_back((*outShape)[k] > 0 && (*outShape)[k] <= kMaxDim ? Dim{(*outShape)[k], {}} : Dim{});
                    continue;
                }
                const std::int64_t op = outPad ? (*outPad)[k] : 0;
                if (!in.known() || s <= 0 || d <= 0 || s > kMaxDim || d > kMaxDim || kernel[k] <= 0 || kernel[k] > kMaxDim ||
                    op < 0 || op > kMaxDim || pb < 0 || pe < 0 || pb > kMaxDim || pe > kMaxDim) {
                    dims.push_back({});
                    continue;
                }
                std::int64_t o = (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
                                     ? in.value * s
                                     : s * (in.value - 1) + op + (kernel[k] - 1) * d + 1 - pb - pe;
                dims.push_back(o > 0 && o <= kMaxDim ? Dim{o, {}} : Dim{});
            }
            out[0] = shapedType(elem0, dims);
            if (t == "MaxPool" && out.size() > 1) out[1] = shapedType(TensorProto::INT64, dims);
            return Ok{};
        }
        if (t == "GlobalAveragePool" || t == "GlobalMaxPool" || t == "GlobalLpPool") {
            if (!x || r < 3) return Ok{};
            std::vector<Dim> dims{x->dims[0], x->dims[1]};
            dims.resize(static_cast<std::size_t>(r), Dim{1, {}});
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        if (t == "Gemm") {
            const TypeInfo* b = shaped(n, 1);
            if (!x || !b || r != 2 || b->dims.size() != 2) return Ok{};
            const bool ta = attrInt(n, "transA", 0) != 0, tb = attrInt(n, "transB", 0) != 0;
            out[0] = shapedType(elem0, {x->dims[ta ? 1 : 0], b->dims[tb ? 0 : 1]});
            return Ok{};
        }
        if (t == "MatMul") {
            const TypeInfo* b = shaped(n, 1);
            if (!x || !b || r < 1 || b->dims.empty()) return Ok{};
            std::vector<Dim> a = x->dims, c = b->dims;
            const bool aVec = a.size() == 1, bVec = c.size() == 1;
            if (aVec) a.insert(a.begin(), Dim{1, {}});
            if (bVec) c.push_back(Dim{1, {}});
            std::vector<Dim> ab(a.begin(), a.end() - 2), cb(c.begin(), c.end() - 2);
            auto batch = broadcastDims({&ab, &cb});
            if (!batch) return failNode(i, "its batch dimensions do not broadcast");
            const Dim& k1 = a.back();
            const Dim& k2 = c[c.size() - 2];
            if (k1.known() && k2.known() && k1.value != k2.value) return failNode(i, "the inner dimensions differ");
            std::vector<Dim> dims = *batch;
            if (!aVec) dims.push_back(a[a.size() - 2]);
            if (!bVec) dims.push_back(c.back());
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        if (t == "Flatten") {
            if (!x) return Ok{};
            std::int64_t axis = attrInt(n, "axis", 1);
            if (axis < 0) axis += r;
            if (axis < 0 || axis > r) return Ok{};
            auto prod = [&](std::int64_t from, std::int64_t to) -> Dim {
                if (from == 0 && to == 1) return x->dims[0];
                std::int64_t p = 1;
                for (std::int64_t k = from; k < to; ++k) {
                    const Dim& d = x->dims[static_cast<std::size_t>(k)];
                    if (!d.known() || __builtin_mul_overflow(p, d.value, &p) || p > kMaxDim) return {};
                }
                return {p, {}};
            };
            out[0] = shapedType(elem0, {prod(0, axis), prod(axis, r)});
            return Ok{};
        }
        if (t == "Reshape") {
            auto target = n.input_size() >= 2 ? staticData(n.input(1)) : std::nullopt;
            if (!x || !target || target->size() > static_cast<std::size_t>(kMaxRank)) return Ok{};
            const bool allowZero = attrInt(n, "allowzero", 0) != 0;
            std::vector<Dim> dims;
            int minusOne = -1;
            for (std::size_t k = 0; k < target->size(); ++k) {
                const SVal& e = (*target)[k];
                if (e.kind == SVal::Batch) dims.push_back(batchDim);
                else if (e.kind == SVal::Unknown) dims.push_back({});
                else if (e.i == 0 && !allowZero) {
                    if (k >= x->dims.size()) return Ok{};
                    dims.push_back(x->dims[k]);
                } else if (e.i == -1) {
                    if (minusOne >= 0) return Ok{};
                    minusOne = static_cast<int>(k);
                    dims.push_back({});
                } else if (e.i > 0 && e.i <= kMaxDim) dims.push_back({e.i, {}});
                else return Ok{};
            }
            if (minusOne >= 0) {  // sizes cancel: known products divide, symbols must match one for one
                std::multiset<std::string> symIn, symOut;
                std::int64_t pin = 1, pout = 1;
                bool ok = true;
                for (const auto& d : x->dims) {
                    if (d.known()) ok = ok && !__builtin_mul_overflow(pin, d.value, &pin) && pin <= static_cast<std::int64_t>(kMaxElements);
                    else if (!d.param.empty()) symIn.insert(d.param);
                    else ok = false;
                }
                for (std::size_t k = 0; k < dims.size(); ++k) {
                    if (static_cast<int>(k) == minusOne) continue;
                    const Dim& d = dims[k];
                    if (d.known()) ok = ok && !__builtin_mul_overflow(pout, d.value, &pout);
                    else if (!d.param.empty()) {
                        auto it = symIn.find(d.param);
                        if (it == symIn.end()) ok = false;
                        else symIn.erase(it);
                    } else ok = false;
                }
                (void)symOut;
                if (ok && pout > 0 && pin % pout == 0) {
                    const std::int64_t q = pin / pout;
                    if (symIn.empty()) dims[static_cast<std::size_t>(minusOne)] = {q, {}};
                    else if (symIn.size() == 1 && q == 1) dims[static_cast<std::size_t>(minusOne)] = {-1, *symIn.begin()};
                }
            }
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        if (t == "Transpose") {
            if (!x) return Ok{};
            std::vector<std::int64_t> perm;
            if (auto p = attrInts(n, "perm")) perm = *p;
            else
                for (std::int64_t k = r - 1; k >= 0; --k) perm.push_back(k);
            if (static_cast<std::int64_t>(perm.size()) != r) return Ok{};
            std::vector<bool> seen(static_cast<std::size_t>(r), false);
            std::vector<Dim> dims;
            for (auto p : perm) {
                if (p < 0 || p >= r || seen[static_cast<std::size_t>(p)]) return Ok{};
                seen[static_cast<std::size_t>(p)] = true;
                dims.push_back(x->dims[static_cast<std::size_t>(p)]);
            }
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        if (t == "Squeeze" || t == "Unsqueeze") {
            if (!x) return Ok{};
            auto axes = intsArg(n, "axes", 1);
            if (t == "Squeeze") {
                std::vector<bool> drop(static_cast<std::size_t>(r), false);
                if (axes) {
                    for (auto a : *axes) {
                        auto k = normAxis(a, r);
                        if (!k) return Ok{};
                        drop[static_cast<std::size_t>(*k)] = true;
                    }
                } else {
                    for (std::int64_t k = 0; k < r; ++k) {
                        const Dim& d = x->dims[static_cast<std::size_t>(k)];
                        if (!d.known()) return Ok{};
                        drop[static_cast<std::size_t>(k)] = d.value == 1;
                    }
                }
                std::vector<Dim> dims;
                for (std::int64_t k = 0; k < r; ++k)
                    if (!drop[static_cast<std::size_t>(k)]) dims.push_back(x->dims[static_cast<std::size_t>(k)]);
                out[0] = shapedType(elem0, dims);
                return Ok{};
            }
            if (!axes) return Ok{};
            const std::int64_t outRank = r + static_cast<std::int64_t>(axes->size());
            if (outRank > kMaxRank) return Ok{};
            std::vector<bool> inserted(static_cast<std::size_t>(outRank), false);
            for (auto a : *axes) {
                auto k = normAxis(a, outRank);
                if (!k || inserted[static_cast<std::size_t>(*k)]) return Ok{};
                inserted[static_cast<std::size_t>(*k)] = true;
            }
            std::vector<Dim> dims;
            std::size_t src = 0;
            for (std::int64_t k = 0; k < outRank; ++k) dims.push_back(inserted[static_cast<std::size_t>(k)] ? Dim{1, {}} : x->dims[src++]);
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        if (t == "Concat") {
            if (!x) return Ok{};
            auto axis = normAxis(attrInt(n, "axis", 0), r);
            if (!axis) return Ok{};
            std::vector<Dim> dims = x->dims;
            Dim& cat = dims[static_cast<std::size_t>(*axis)];
            cat = Dim{0, {}};
            for (int k = 0; k < n.input_size(); ++k) {
                const TypeInfo* s = shaped(n, k);
                if (!s) return Ok{};
                if (static_cast<std::int64_t>(s->dims.size()) != r) return failNode(i, "concatenates tensors of different ranks");
                const Dim& d = s->dims[static_cast<std::size_t>(*axis)];
                if (cat.known() && d.known() && !__builtin_add_overflow(cat.value, d.value, &cat.value) && cat.value <= kMaxDim) continue;
                cat = Dim{};
            }
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        if (t == "Split") {
            if (!x) return Ok{};
            auto axis = normAxis(attrInt(n, "axis", 0), r);
            if (!axis) return Ok{};
            const Dim& d = x->dims[static_cast<std::size_t>(*axis)];
            auto sizes = intsArg(n, "split", 1);
            const std::int64_t parts = static_cast<std::int64_t>(out.size());
            if (!sizes && d.known()) {
                sizes = std::vector<std::int64_t>();
                const std::int64_t each = (d.value + parts - 1) / parts;
                for (std::int64_t k = 0, left = d.value; k < parts; ++k, left -= each) sizes->push_back(std::clamp<std::int64_t>(left, 0, each));
            }
            if (!sizes || static_cast<std::int64_t>(sizes->size()) != parts) return Ok{};
            for (std::size_t k = 0; k < out.size(); ++k) {
                std::vector<Dim> dims = x->dims;
                const std::int64_t v = (*sizes)[k];
                dims[static_cast<std::size_t>(*axis)] = v >= 0 && v <= kMaxDim ? Dim{v, {}} : Dim{};
                out[k] = shapedType(elem0, dims);
            }
            return Ok{};
        }
        if (t == "Slice") {
            if (!x) return Ok{};
            std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
            if (m_opset < 10) {
                starts = attrInts(n, "starts");
                ends = attrInts(n, "ends");
                axes = attrInts(n, "axes");
            } else {
                if (n.input_size() >= 2 && !n.input(1).empty()) starts = staticInts(n.input(1));
                if (n.input_size() >= 3 && !n.input(2).empty()) ends = staticInts(n.input(2));
                if (n.input_size() >= 4 && !n.input(3).empty()) axes = staticInts(n.input(3));
                if (n.input_size() >= 5 && !n.input(4).empty()) steps = staticInts(n.input(4));
            }
            if (!starts || !ends || starts->size() != ends->size() || (axes && axes->size() != starts->size()) ||
                (steps && steps->size() != starts->size()))
                return Ok{};
            std::vector<Dim> dims = x->dims;
            for (std::size_t k = 0; k < starts->size(); ++k) {
                auto axis = normAxis(axes ? (*axes)[k] : static_cast<std::int64_t>(k), r);
                const std::int64_t step = steps ? (*steps)[k] : 1;
                if (!axis || step == 0 || step == INT64_MIN) return Ok{};
                Dim& d = dims[static_cast<std::size_t>(*axis)];
                if (!d.known()) {
                    if (!((*starts)[k] == 0 && (*ends)[k] >= INT32_MAX && step == 1)) d = Dim{};
                    continue;
                }
                const std::int64_t size = d.value;
                std::int64_t s = (*starts)[k], e = (*ends)[k];
                if (s < 0) s = s < -size ? -1 : s + size;
                if (e < 0) e = e < -size ? -1 : e + size;
                std::int64_t len;
                if (step > 0) {
                    s = std::clamp<std::int64_t>(s, 0, size);
                    e = std::clamp<std::int64_t>(e, 0, size);
                    len = e > s ? (e - s - 1) / step + 1 : 0;
                } else {
                    s = std::clamp<std::int64_t>(s, -1, size - 1);
                    e = std::clamp<std::int64_t>(e, -1, size - 1);
                    len = s > e ? (s - e - 1) / -step + 1 : 0;
                }
                d = Dim{len, {}};
            }
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        if (t == "Gather") {
            const TypeInfo* idx = shaped(n, 1);
            if (!x || !idx || r < 1) return Ok{};
            auto axis = normAxis(attrInt(n, "axis", 0), r);
            if (!axis || r + static_cast<std::int64_t>(idx->dims.size()) - 1 > kMaxRank) return Ok{};
            std::vector<Dim> dims(x->dims.begin(), x->dims.begin() + *axis);
            dims.insert(dims.end(), idx->dims.begin(), idx->dims.end());
            dims.insert(dims.end(), x->dims.begin() + *axis + 1, x->dims.end());
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        if (t == "Expand") {
            auto target = n.input_size() >= 2 ? staticData(n.input(1)) : std::nullopt;
            if (!x || !target || target->size() > static_cast<std::size_t>(kMaxRank)) return Ok{};
            std::vector<Dim> want;
            for (const auto& e : *target) {
                if (e.kind == SVal::Batch) want.push_back(batchDim);
                else if (e.kind == SVal::Known && e.i >= 0 && e.i <= kMaxDim) want.push_back({e.i, {}});
                else want.push_back({});
            }
            auto dims = broadcastDims({&x->dims, &want});
            if (!dims) return failNode(i, "expands to a shape its input does not broadcast to");
            out[0] = shapedType(elem0, std::move(*dims));
            return Ok{};
        }
        if (t == "ConstantOfShape") {
            auto target = n.input_size() >= 1 ? staticData(n.input(0)) : std::nullopt;
            int elem = TensorProto::FLOAT;
            if (const AttributeProto* a = findAttr(n, "value"); a && a->has_t()) elem = a->t().data_type();
            if (!target || target->size() > static_cast<std::size_t>(kMaxRank)) return Ok{};
            std::vector<Dim> dims;
            for (const auto& e : *target)
                dims.push_back(e.kind == SVal::Batch ? batchDim : e.kind == SVal::Known && e.i >= 0 && e.i <= kMaxDim ? Dim{e.i, {}} : Dim{});
            out[0] = shapedType(elem, dims);
            return Ok{};
        }
        if (t == "Range") {
            double v[3] = {0, 0, 0};
            bool have = n.input_size() >= 3;
            for (int k = 0; k < 3 && have; ++k) {
                auto e = staticScalar(n.input(k));
                have = e.has_value() && std::isfinite(*e);
                if (have) v[k] = *e;
            }
            Dim len;
            if (have && v[2] != 0) {
                const double count = std::ceil((v[1] - v[0]) / v[2]);
                if (count <= static_cast<double>(kMaxDim)) len = {static_cast<std::int64_t>(std::max(count, 0.0)), {}};
            }
            out[0] = shapedType(elem0, {len});
            return Ok{};
        }
        if (t.rfind("Reduce", 0) == 0 || t == "ArgMax" || t == "ArgMin") {
            if (!x) return Ok{};
            const bool arg = t == "ArgMax" || t == "ArgMin";
            std::optional<std::vector<std::int64_t>> axes;
            if (arg) axes = std::vector<std::int64_t>{attrInt(n, "axis", 0)};
            else axes = intsArg(n, "axes", 1);
            const bool keep = attrInt(n, "keepdims", 1) != 0;
            std::vector<bool> red(static_cast<std::size_t>(r), !axes || axes->empty());
            if (axes && axes->empty() && attrInt(n, "noop_with_empty_axes", 0)) std::fill(red.begin(), red.end(), false);
            if (!axes && n.input_size() >= 2 && !n.input(1).empty()) return Ok{};  // axes computed at run time
            if (axes)
                for (auto a : *axes) {
                    auto k = normAxis(a, r);
                    if (!k) return Ok{};
                    red[static_cast<std::size_t>(*k)] = true;
                }
            std::vector<Dim> dims;
            for (std::int64_t k = 0; k < r; ++k) {
                if (!red[static_cast<std::size_t>(k)]) dims.push_back(x->dims[static_cast<std::size_t>(k)]);
                else if (keep) dims.push_back({1, {}});
            }
            out[0] = shapedType(arg ? TensorProto::INT64 : elem0, dims);
            return Ok{};
        }
        if (t == "Pad") {
            if (!x) return Ok{};
            auto pads = intsArg(n, "pads", 1);
            if (!pads || static_cast<std::int64_t>(pads->size()) != 2 * r || (n.input_size() >= 4 && !n.input(3).empty())) return Ok{};
            std::vector<Dim> dims = x->dims;
            for (std::int64_t k = 0; k < r; ++k) {
                Dim& d = dims[static_cast<std::size_t>(k)];
                const std::int64_t pb = (*pads)[static_cast<std::size_t>(k)], pe = (*pads)[static_cast<std::size_t>(k + r)];
                if (pb == 0 && pe == 0) continue;
                if (!d.known() || std::llabs(pb) > kMaxDim || std::llabs(pe) > kMaxDim || d.value + pb + pe < 0) d = Dim{};
                else d = Dim{d.value + pb + pe, {}};
            }
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        if (t == "Resize" || t == "Upsample") {
            if (!x) return Ok{};
            std::optional<std::vector<SVal>> scales, sizes;
            if (t == "Upsample") scales = n.input_size() >= 2 ? staticData(n.input(1)) : std::nullopt;
            else {
                if (n.input_size() >= 3 && !n.input(2).empty() && m_opset >= 11) scales = staticData(n.input(2));
                else if (n.input_size() >= 2 && !n.input(1).empty() && m_opset < 11) scales = staticData(n.input(1));
                if (n.input_size() >= 4 && !n.input(3).empty()) sizes = staticData(n.input(3));
            }
            std::vector<Dim> dims = x->dims;
            if (sizes && static_cast<std::int64_t>(sizes->size()) == r) {
                for (std::int64_t k = 0; k < r; ++k) {
                    const SVal& e = (*sizes)[static_cast<std::size_t>(k)];
                    dims[static_cast<std::size_t>(k)] = e.kind == SVal::Known && e.i >= 0 && e.i <= kMaxDim ? Dim{e.i, {}}
                                                        : e.kind == SVal::Batch ? batchDim : Dim{};
                }
            } else if (scales && static_cast<std::int64_t>(scales->size()) == r) {
                for (std::int64_t k = 0; k < r; ++k) {
                    const SVal& e = (*scales)[static_cast<std::size_t>(k)];
                    Dim& d = dims[static_cast<std::size_t>(k)];
                    if (e.kind == SVal::Known && e.d == 1.0) continue;
                    const double v = d.known() && e.kind == SVal::Known ? std::floor(static_cast<double>(d.value) * e.d) : -1;
                    d = v >= 0 && v <= static_cast<double>(kMaxDim) ? Dim{static_cast<std::int64_t>(v), {}} : Dim{};
                }
            } else return Ok{};
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        if (t == "Tile") {
            auto reps = n.input_size() >= 2 ? staticInts(n.input(1)) : std::nullopt;
            if (!x || !reps || static_cast<std::int64_t>(reps->size()) != r) return Ok{};
            std::vector<Dim> dims = x->dims;
            for (std::int64_t k = 0; k < r; ++k) {
                Dim& d = dims[static_cast<std::size_t>(k)];
                const std::int64_t rep = (*reps)[static_cast<std::size_t>(k)];
                if (rep == 1) continue;
                std::int64_t v = 0;
                d = d.known() && rep >= 0 && !__builtin_mul_overflow(d.value, rep, &v) && v <= kMaxDim ? Dim{v, {}} : Dim{};
            }
            out[0] = shapedType(elem0, dims);
            return Ok{};
        }
        return Ok{};
    }

    /// One forward pass in topological order: which values depend on the model input (Shape and Size cut the
    /// dependency), the constants' values where shape arithmetic needs them, and every value's type.
    Status propagate() {
        m_batched.insert(m_input);
        std::vector<std::optional<TypeInfo>> out;
        for (int i = 0; i < m_g->node_size(); ++i) {
            if (!m_needed[static_cast<std::size_t>(i)]) continue;
            if (cancelled()) return fail("import cancelled");
            const NodeProto& n = m_g->node(i);
            bool batched = false;
            for (const auto& in : n.input()) batched = batched || m_batched.count(in);
            const bool shapeOp = n.op_type() == "Shape" || n.op_type() == "Size";
            if (auto s = inferNode(i, out); !s) return s;
            for (int k = 0; k < n.output_size(); ++k) {
                const std::string& o = n.output(k);
                if (o.empty()) continue;
                std::optional<TypeInfo> ti = out[static_cast<std::size_t>(k)];
                if (ti) {
                    for (auto& d : ti->dims)
                        if (d.value < -1 || d.value > kMaxDim) d = Dim{};
                    if (ti->dims.size() > static_cast<std::size_t>(kMaxRank)) ti.reset();
                }
                auto declared = m_declared.find(o);
                if ((!ti || !ti->hasShape) && declared != m_declared.end()) ti = declared->second;
                if (ti) m_types[o] = std::move(*ti);
                if (batched && !shapeOp) m_batched.insert(o);
            }
            if (!batched || shapeOp) evalStatic(i);
        }
        return Ok{};
    }

    /// Every dim after the batch known.
    std::optional<TypeInfo> fullType(const std::string& v) const {
        auto it = m_types.find(v);
        if (it == m_types.end() || !it->second.hasShape || it->second.dims.empty()) return std::nullopt;
        for (std::size_t k = 1; k < it->second.dims.size(); ++k)
            if (!it->second.dims[k].known()) return std::nullopt;
        return it->second;
    }
    /// Dim 0 of v is the batch dimension of the model input.
    bool batchAtZero(const std::string& v) const {
        const TypeInfo* t = typeOf(v);
        return t && t->hasShape && !t->dims.empty() && sameDim(t->dims[0], m_batchDim);
    }

    /// Per-sample shape: the ONNX shape without dim 0 (all other dims known).
    std::optional<Shape> perSample(const std::string& v) const {
        auto t = fullType(v);
        if (!t) return std::nullopt;
        Shape s;
        for (std::size_t k = 1; k < t->dims.size(); ++k) s.push_back(t->dims[k].value);
        return s;
    }
    /// Full ONNX rank (batch included) when known.
    std::optional<std::int64_t> rankOf(const std::string& v) const {
        auto it = m_types.find(v);
        if (it == m_types.end() || !it->second.hasShape) return std::nullopt;
        return static_cast<std::int64_t>(it->second.dims.size());
    }
    int elemOf(const std::string& v) const {
        auto it = m_types.find(v);
        return it == m_types.end() ? 0 : it->second.elem;
    }

    // ---------------------------------------------------------------- batched values and constants
    const StaticValue* staticOf(const std::string& v) {
        auto it = m_static.find(v);
        if (it != m_static.end()) return &it->second;
        auto init = m_inits.find(v);
        if (init == m_inits.end()) return nullptr;
        StaticValue s;
        s.root = v;
        if (auto data = readTensor(*init->second)) {
            s.hasData = true;
            s.v = std::move(*data);
        }
        return &m_static.emplace(v, std::move(s)).first->second;
    }
    bool isStatic(const std::string& v) { return !v.empty() && !m_batched.count(v) && staticOf(v) != nullptr; }

    std::optional<std::vector<SVal>> staticData(const std::string& v) {
        const StaticValue* s = staticOf(v);
        if (!s || !s->hasData) return std::nullopt;
        return s->v;
    }
    std::optional<std::vector<std::int64_t>> staticInts(const std::string& v) {
        auto d = staticData(v);
        if (!d) return std::nullopt;
        std::vector<std::int64_t> out;
        for (const auto& e : *d) {
            if (e.kind != SVal::Known) return std::nullopt;
            out.push_back(e.i);
        }
        return out;
    }
    std::optional<double> staticScalar(const std::string& v) {
        auto d = staticData(v);
        if (!d || d->size() != 1 || (*d)[0].kind != SVal::Known) return std::nullopt;
        return (*d)[0].d;
    }

    void setStatic(const std::string& name, StaticValue v) {
        if (!name.empty()) m_static[name] = std::move(v);
    }

    /// Evaluates a node over constants where BatchFit needs the values (shape arithmetic, scalars).
    void evalStatic(int i) {
        const NodeProto& n = m_g->node(i);
        const std::string& op = n.op_type();
        StaticValue out;
        auto in = [&](int k) -> std::optional<std::vector<SVal>> {
            if (k >= n.input_size() || n.input(k).empty()) return std::nullopt;
            return staticData(n.input(k));
        };
        auto viewOf = [&](int k) {
            if (k < n.input_size())
                if (const StaticValue* s = staticOf(n.input(k))) {
                    out.root = s->root;
                    out.transposed2d = s->transposed2d;
                }
        };
        if (op == "Constant") {
            if (const AttributeProto* a = findAttr(n, "value"); a && a->has_t()) {
                if (auto d = readTensor(a->t())) out.v = std::move(*d), out.hasData = true;
                if (n.output_size() == 1 && m_inits.count(n.output(0))) out.root = n.output(0);
            } else if (const AttributeProto* b = findAttr(n, "value_int")) {
                out.v.push_back(SVal::known(b->i())), out.hasData = true;
            } else if (const AttributeProto* c = findAttr(n, "value_ints")) {
                for (auto x : c->ints()) out.v.push_back(SVal::known(x));
                out.hasData = out.v.size() <= kMaxStaticElements;
            } else if (const AttributeProto* f = findAttr(n, "value_float")) {
                out.v.push_back(SVal::real(f->f())), out.hasData = true;
            } else if (const AttributeProto* fs = findAttr(n, "value_floats")) {
                for (auto x : fs->floats()) out.v.push_back(SVal::real(x));
                out.hasData = out.v.size() <= kMaxStaticElements;
            }
        } else if (op == "Shape" && n.input_size() >= 1) {
            auto it = m_types.find(n.input(0));
            if (it != m_types.end() && it->second.hasShape) {
                const auto& dims = it->second.dims;
                const bool batched = m_batched.count(n.input(0)) != 0;
                std::int64_t r = static_cast<std::int64_t>(dims.size());
                std::int64_t start = attrInt(n, "start", 0), end = attrInt(n, "end", r);
                if (start < 0) start += r;
                if (end < 0) end += r;
                start = std::clamp<std::int64_t>(start, 0, r);
                end = std::clamp<std::int64_t>(end, 0, r);
                for (std::int64_t k = start; k < end; ++k) {
                    const Dim& d = dims[static_cast<std::size_t>(k)];
                    if (k == 0 && batched) out.v.push_back({SVal::Batch, 0, 0});
                    else if (d.known()) out.v.push_back(SVal::known(d.value));
                    else out.v.push_back({});
                }
                out.hasData = true;
            }
        } else if (op == "Identity" || op == "Cast" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" ||
                   op == "Flatten" || op == "Expand" || op == "Transpose") {
            if (auto d = in(0)) {
                out.v = std::move(*d);
                out.hasData = op != "Expand" && op != "Transpose";  // values kept only where order and count hold
                if (op == "Cast") {
                    const std::int64_t to = attrInt(n, "to", 0);
                    const bool integral = to == TensorProto::INT64 || to == TensorProto::INT32 || to == TensorProto::INT16 ||
                                          to == TensorProto::INT8 || to == TensorProto::UINT8 || to == TensorProto::BOOL;
                    for (auto& e : out.v)
                        if (e.kind == SVal::Known && integral) e = SVal::known(e.i);
                }
            }
            viewOf(0);
            if (op == "Transpose") {
                auto r = rankOf(n.input(0));
                out.transposed2d = r && *r == 2 && !out.transposed2d;
            }
        } else if (op == "Gather" && n.input_size() >= 2) {
            auto data = in(0);
            auto idx = in(1);
            if (data && idx && attrInt(n, "axis", 0) == 0 && rankOf(n.input(0)).value_or(0) == 1) {
                const std::int64_t size = static_cast<std::int64_t>(data->size());
                out.hasData = true;
                for (const auto& e : *idx) {
                    std::int64_t k = e.i;
                    if (e.kind != SVal::Known || k < -size || k >= size) {
                        out.hasData = false;
                        break;
                    }
                    if (k < 0) k += size;
                    out.v.push_back((*data)[static_cast<std::size_t>(k)]);
                }
            }
            if (!out.hasData) {
                out.v.clear();
                viewOf(0);
            }
        } else if (op == "Concat") {
            out.hasData = attrInt(n, "axis", 0) == 0 || attrInt(n, "axis", 0) == -1;
            for (int k = 0; k < n.input_size() && out.hasData; ++k) {
                auto d = in(k);
                if (!d || rankOf(n.input(k)).value_or(2) > 1 || out.v.size() + d->size() > kMaxStaticElements) {
                    out.hasData = false;
                    break;
                }
                out.v.insert(out.v.end(), d->begin(), d->end());
            }
            if (!out.hasData) out.v.clear();
        } else if (op == "Slice" && n.input_size() >= 3) {
            auto data = in(0);
            auto starts = staticInts(n.input(1)), ends = staticInts(n.input(2));
            std::optional<std::vector<std::int64_t>> steps;
            if (n.input_size() >= 5 && !n.input(4).empty()) steps = staticInts(n.input(4));
            if (data && starts && ends && starts->size() == 1 && ends->size() == 1 &&
                rankOf(n.input(0)).value_or(0) == 1 && (!steps || (steps->size() == 1 && (*steps)[0] > 0))) {
                const std::int64_t size = static_cast<std::int64_t>(data->size());
                const std::int64_t step = steps ? (*steps)[0] : 1;
                std::int64_t s = (*starts)[0], e = (*ends)[0];
                if (s < 0) s += size;
                if (e < 0) e += size;
                s = std::clamp<std::int64_t>(s, 0, size);
                e = std::clamp<std::int64_t>(e, 0, size);
                for (std::int64_t k = s; k < e; k += step) out.v.push_back((*data)[static_cast<std::size_t>(k)]);
                out.hasData = true;
            }
        } else if (op == "ConstantOfShape" && n.input_size() == 1) {
            auto shape = staticInts(n.input(0));
            SVal fill = SVal::known(0);
            if (const AttributeProto* a = findAttr(n, "value"); a && a->has_t()) {
                auto v = readTensor(a->t());
                if (!v || v->size() != 1) shape.reset();
                else fill = (*v)[0];
            }
            std::uint64_t count = 1;
            if (shape)
                for (auto d : *shape)
                    if (d < 0 || __builtin_mul_overflow(count, static_cast<std::uint64_t>(d), &count) || count > kMaxStaticElements) {
                        shape.reset();
                        break;
                    }
            if (shape) {
                out.v.assign(static_cast<std::size_t>(count), fill);
                out.hasData = true;
            }
        } else if ((op == "Equal" && n.input_size() == 2) || (op == "Where" && n.input_size() == 3)) {
            std::vector<std::vector<SVal>> ins;
            std::size_t len = 1;
            for (int k = 0; k < n.input_size(); ++k) {
                auto d = in(k);
                if (!d) break;
                len = std::max(len, d->size());
                ins.push_back(std::move(*d));
            }
            bool ok = static_cast<int>(ins.size()) == n.input_size();
            for (const auto& v : ins) ok = ok && (v.size() == len || v.size() == 1);
            for (std::size_t k = 0; ok && k < len; ++k) {
                auto at = [&](std::size_t j) -> const SVal& { return ins[j][ins[j].size() == 1 ? 0 : k]; };
                if (op == "Equal") {
                    const SVal &a = at(0), &b = at(1);
                    if (a.kind == SVal::Known && b.kind == SVal::Known) out.v.push_back(SVal::known(a.d == b.d));
                    else if (a.kind == SVal::Batch && b.kind == SVal::Known && b.i < 0) out.v.push_back(SVal::known(0));
                    else out.v.push_back({});
                } else {
                    const SVal& c = at(0);
                    out.v.push_back(c.kind == SVal::Known ? (c.i ? at(1) : at(2)) : SVal{});
                }
            }
            out.hasData = ok;
            if (!ok) out.v.clear();
        } else if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && n.input_size() == 2) {
            auto a = in(0), b = in(1);
            if (a && b && (a->size() == b->size() || a->size() == 1 || b->size() == 1)) {
                const std::size_t len = std::max(a->size(), b->size());
                out.hasData = true;
                for (std::size_t k = 0; k < len; ++k) {
                    const SVal& x = (*a)[a->size() == 1 ? 0 : k];
                    const SVal& y = (*b)[b->size() == 1 ? 0 : k];
                    SVal r;
                    if (x.kind == SVal::Known && y.kind == SVal::Known) {
                        const bool ints = static_cast<double>(x.i) == x.d && static_cast<double>(y.i) == y.d;
                        std::int64_t ri = 0;
                        bool ok = ints;
                        if (op == "Add") ok = ok && !__builtin_add_overflow(x.i, y.i, &ri);
                        else if (op == "Sub") ok = ok && !__builtin_sub_overflow(x.i, y.i, &ri);
                        else if (op == "Mul") ok = ok && !__builtin_mul_overflow(x.i, y.i, &ri);
                        else ok = ok && y.i != 0 && !(x.i == INT64_MIN && y.i == -1) && (ri = x.i / y.i, true);
                        if (ok) r = SVal::known(ri);
                        else {
                            const double v = op == "Add" ? x.d + y.d : op == "Sub" ? x.d - y.d : op == "Mul" ? x.d * y.d
                                                                                                         : x.d / y.d;
                            r = SVal::real(v);
                        }
                    }
                    out.v.push_back(r);
                }
            }
        }
        for (const auto& o : n.output()) setStatic(o, out);
    }

    Status checkInput() {
        auto it = m_types.find(m_input);
        if (it == m_types.end() || !it->second.hasShape)
            return fail("graph input " + quoted(m_input) + " has no tensor shape");
        TypeInfo& t = it->second;
        if (t.dims.empty()) return fail("graph input " + quoted(m_input) + " is a scalar: it has no batch dimension");
        if (!t.dims[0].known() && t.dims[0].param.empty()) t.dims[0].param = "batch";  // to follow it through the graph
        m_batchDim = t.dims[0];
        auto dt = toDType(t.elem);
        if (!dt) return fail("graph input " + quoted(m_input) + " has an element type BatchFit does not model (" +
                             std::to_string(t.elem) + ")");
        m_inputDtype = *dt;
        for (std::size_t k = 1; k < t.dims.size(); ++k) {
            if (!t.dims[k].known() || t.dims[k].value == 0)
                return fail("graph input " + quoted(m_input) + ": dimension " + std::to_string(k) + " is " +
                            (t.dims[k].param.empty() ? std::string("unknown") : "symbolic ('" + printable(t.dims[k].param) + "')") +
                            "; BatchFit needs concrete per-sample sizes (only dim 0, the batch, may be symbolic). "
                            "Export with fixed sizes or set them with onnx.tools.update_model_dims");
            m_inputShape.push_back(t.dims[k].value);
        }
        return Ok{};
    }

    // ---------------------------------------------------------------- fusions
    const std::vector<int>& consumers(const std::string& v) const {
        static const std::vector<int> none;
        auto it = m_consumers.find(v);
        return it == m_consumers.end() ? none : it->second;
    }
    /// The single needed consumer of v (v not a graph output), or -1.
    int soleConsumer(const std::string& v) const {
        if (v == m_output) return -1;
        const auto& c = consumers(v);
        return c.size() == 1 ? c[0] : -1;
    }
    bool scalarNear(const std::string& v, double want) {
        auto s = staticScalar(v);
        return s && std::fabs(*s - want) <= 1e-3 * std::max(1.0, std::fabs(want));
    }
    /// For a binary node reading `v`, the other operand.
    static std::string other(const NodeProto& n, const std::string& v) {
        if (n.input_size() != 2) return {};
        if (n.input(0) == v) return n.input(1);
        if (n.input(1) == v) return n.input(0);
        return {};
    }

    void findFusions() {
        m_consumers.clear();
        for (int i = 0; i < m_g->node_size(); ++i) {
            if (!m_needed[static_cast<std::size_t>(i)]) continue;
            std::set<std::string> distinct(m_g->node(i).input().begin(), m_g->node(i).input().end());
            for (const auto& in : distinct)
                if (!in.empty()) m_consumers[in].push_back(i);
        }
        for (int i = 0; i < m_g->node_size(); ++i) {
            if (!m_needed[static_cast<std::size_t>(i)] || m_absorbed[static_cast<std::size_t>(i)]) continue;
            const NodeProto& n = m_g->node(i);
            if (n.op_type() == "MatMul" && n.input_size() == 2 && m_batched.count(n.input(0))) fuseLinearBias(i);
            else if (n.op_type() == "Sigmoid" && n.input_size() == 1 && m_batched.count(n.input(0))) fuseSilu(i);
            else if (n.op_type() == "Erf" && n.input_size() == 1) fuseErfGelu(i);
            else if (n.op_type() == "ReduceMean" && n.input_size() >= 1 && m_batched.count(n.input(0))) fuseLayerNorm(i);
        }
    }

    /// x @ W + b (an initializer W [K, N] and a bias b of N elements) -> linear with bias.
    void fuseLinearBias(int i) {
        const NodeProto& mm = m_g->node(i);
        auto w = m_types.find(mm.input(1));
        if (!m_inits.count(mm.input(1)) || w == m_types.end() || w->second.dims.size() != 2) return;
        const int a = soleConsumer(mm.output(0));
        if (a < 0) return;
        const NodeProto& add = m_g->node(a);
        if (add.op_type() != "Add") return;
        const std::string b = other(add, mm.output(0));
        if (b.empty() || !m_inits.count(b)) return;
        auto numel = tensorNumel(*m_inits.at(b));
        if (!numel || static_cast<std::int64_t>(*numel) != w->second.dims[1].value) return;
        auto bt = m_types.find(b);
        if (bt == m_types.end() || bt->second.dims.empty() || bt->second.dims.back().value != w->second.dims[1].value) return;
        Fusion f{"linear", {{"out_features", w->second.dims[1].value}, {"bias", true}}, mm.input(0), i, {mm.input(1), b}};
        m_absorbed[static_cast<std::size_t>(i)] = true;
        m_fusions[a] = std::move(f);
    }

    /// x * sigmoid(x) -> silu.
    void fuseSilu(int i) {
        const NodeProto& s = m_g->node(i);
        const int m = soleConsumer(s.output(0));
        if (m < 0) return;
        const NodeProto& mul = m_g->node(m);
        if (mul.op_type() != "Mul" || other(mul, s.output(0)) != s.input(0)) return;
        m_absorbed[static_cast<std::size_t>(i)] = true;
        m_fusions[m] = Fusion{"silu", {}, s.input(0), i, {}};
    }

    /// torch's exact GELU: (x * (erf(x / sqrt(2)) + 1)) * 0.5 -> gelu.
    void fuseErfGelu(int e) {
        const NodeProto& erf = m_g->node(e);
        auto pd = m_producer.find(erf.input(0));
        if (pd == m_producer.end() || !m_needed[static_cast<std::size_t>(pd->second)]) return;
        const int d = pd->second;
        const NodeProto& div = m_g->node(d);
        if (div.input_size() != 2 || !m_batched.count(div.input(0))) return;
        const std::string x = div.input(0);
        const bool byDiv = div.op_type() == "Div" && scalarNear(div.input(1), std::sqrt(2.0));
        const bool byMul = div.op_type() == "Mul" && scalarNear(div.input(1), std::sqrt(0.5));
        if (!(byDiv || byMul) || soleConsumer(div.output(0)) != e) return;
        const int a = soleConsumer(erf.output(0));
        if (a < 0 || m_g->node(a).op_type() != "Add" || !scalarNear(other(m_g->node(a), erf.output(0)), 1.0)) return;
        const int m1 = soleConsumer(m_g->node(a).output(0));
        if (m1 < 0 || m_g->node(m1).op_type() != "Mul" || other(m_g->node(m1), m_g->node(a).output(0)) != x) return;
        const int m2 = soleConsumer(m_g->node(m1).output(0));
        if (m2 < 0 || m_g->node(m2).op_type() != "Mul" || !scalarNear(other(m_g->node(m2), m_g->node(m1).output(0)), 0.5))
            return;
        for (int k : {d, e, a, m1}) m_absorbed[static_cast<std::size_t>(k)] = true;
        m_fusions[m2] = Fusion{"gelu", {}, x, d, {}};
    }

    /// torch's layer_norm before opset 17: (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * w + b.
    void fuseLayerNorm(int i) {
        const NodeProto& rm1 = m_g->node(i);
        const std::string x = rm1.input(0);
        const auto r = rankOf(x);
        auto axes = intsArg(rm1, "axes", 1);
        if (!r || !axes || axes->empty() || static_cast<std::int64_t>(axes->size()) >= *r || !attrInt(rm1, "keepdims", 1)) return;
        std::vector<std::int64_t> ax;
        for (auto a : *axes) {
            auto k = normAxis(a, *r);
            if (!k) return;
            ax.push_back(*k);
        }
        std::sort(ax.begin(), ax.end());
        const std::int64_t nd = static_cast<std::int64_t>(ax.size());
        for (std::int64_t k = 0; k < nd; ++k)
            if (ax[static_cast<std::size_t>(k)] != *r - nd + k) return;
        auto node = [&](int k) -> const NodeProto& { return m_g->node(k); };
        const int sub = soleConsumer(rm1.output(0));
        if (sub < 0 || node(sub).op_type() != "Sub" || node(sub).input_size() != 2 || node(sub).input(0) != x ||
            node(sub).input(1) != rm1.output(0))
            return;
        const std::string centred = node(sub).output(0);
        const auto& users = consumers(centred);
        if (users.size() != 2 || centred == m_output) return;
        int pw = -1, dv = -1;
        for (int u : users) {
            if (node(u).op_type() == "Pow" && node(u).input_size() == 2 && node(u).input(0) == centred && scalarNear(node(u).input(1), 2.0)) pw = u;
            else if (node(u).op_type() == "Div" && node(u).input_size() == 2 && node(u).input(0) == centred) dv = u;
        }
        if (pw < 0 || dv < 0) return;
        const int rm2 = soleConsumer(node(pw).output(0));
        if (rm2 < 0 || node(rm2).op_type() != "ReduceMean" || intsArg(node(rm2), "axes", 1) != axes) return;
        const int ae = soleConsumer(node(rm2).output(0));
        if (ae < 0 || node(ae).op_type() != "Add") return;
        auto eps = staticScalar(other(node(ae), node(rm2).output(0)));
        if (!eps || !(*eps >= 0.0 && *eps < 1.0)) return;
        const int sq = soleConsumer(node(ae).output(0));
        if (sq < 0 || node(sq).op_type() != "Sqrt" || soleConsumer(node(sq).output(0)) != dv || node(dv).input(1) != node(sq).output(0)) return;
        std::vector<int> absorbed{i, sub, pw, rm2, ae, sq};
        int anchor = dv;
        std::vector<std::string> weights;
        bool affine = false, bias = false;
        std::uint64_t normNumel = 1;
        if (auto ps = perSample(x)) {
            for (std::int64_t k = static_cast<std::int64_t>(ps->size()) - nd; k < static_cast<std::int64_t>(ps->size()); ++k)
                normNumel *= static_cast<std::uint64_t>((*ps)[static_cast<std::size_t>(k)]);
        } else return;
        auto isParam = [&](const std::string& v) {
            return m_inits.count(v) && tensorNumel(*m_inits.at(v)).value_or(0) == normNumel;
        };
        const int mul = soleConsumer(node(dv).output(0));
        if (mul >= 0 && node(mul).op_type() == "Mul" && isParam(other(node(mul), node(dv).output(0)))) {
            affine = true;
            weights.push_back(other(node(mul), node(dv).output(0)));
            absorbed.push_back(dv);
            anchor = mul;
            const int add = soleConsumer(node(mul).output(0));
            if (add >= 0 && node(add).op_type() == "Add" && isParam(other(node(add), node(mul).output(0)))) {
                bias = true;
                weights.push_back(other(node(add), node(mul).output(0)));
                absorbed.push_back(mul);
                anchor = add;
            }
        }
        for (int k : absorbed) m_absorbed[static_cast<std::size_t>(k)] = true;
        AttrList a{{"eps", tidy(*eps)}};
        if (nd != 1) a.push_back({"normalized_dims", nd});
        if (!affine) a.push_back({"elementwise_affine", false});
        else a.push_back({"bias", bias});
        m_fusions[anchor] = Fusion{"layernorm", a, x, i, weights};
    }

    // ---------------------------------------------------------------- emission
    std::string baseName(int i) const {
        const NodeProto& n = m_g->node(i);
        std::vector<std::string> parts;
        std::string cur;
        for (char c : n.name()) {
            if (c == '/') {
                if (!cur.empty()) parts.push_back(cur);
                cur.clear();
            } else cur += c;
        }
        if (!cur.empty()) parts.push_back(cur);
        if (!parts.empty() && parts.size() > 1 && parts.back() == n.op_type()) parts.pop_back();
        std::vector<std::string> kept;  // torch scopes repeat the parent: "layer1/layer1.0/conv1"
        for (std::size_t k = 0; k < parts.size(); ++k) {
            if (k + 1 < parts.size() && parts[k + 1].rfind(parts[k] + ".", 0) == 0) continue;
            kept.push_back(parts[k]);
        }
        std::string s;
        for (const auto& p : kept) s += (s.empty() ? "" : "_") + p;
        std::string out;
        for (unsigned char c : s) {
            if (out.size() >= 96) break;
            out += std::isalnum(c) || c == '-' ? static_cast<char>(c) : '_';
        }
        if (out.empty() || out == n.op_type()) {
            std::string t;
            for (unsigned char c : n.op_type().substr(0, 32)) t += std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '_';
            out = (t.empty() ? "node" : t) + "_" + std::to_string(i);
        }
        return out;
    }

    /// `base`, else `base_<op type>` ("attn" for /attn/MatMul, then "attn_div" for /attn/Div), else numbered.
    std::string uniqueName(const std::string& base, int node = -1) {
        if (m_names.insert(base).second) return base;
        std::string alt = base;
        if (node >= 0) {
            alt += "_";
            for (unsigned char c : m_g->node(node).op_type().substr(0, 32))
                alt += std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '_';
            if (m_names.insert(alt).second) return alt;
        }
        std::string name;
        for (int& k = m_nextSuffix[alt];; ++k) {  // resumes where the last search for `alt` stopped: linear overall
            name = alt + "_" + std::to_string(std::max(k, 2));
            if (m_names.insert(name).second) return name;
        }
    }

    std::string layerOf(const std::string& value) const {
        auto it = m_layerOf.find(value);
        if (it != m_layerOf.end()) return it->second;
        return value == m_input ? "@input" : "@unmapped";  // not a valid reference: validation refuses it
    }

    /// Appends a layer reading the given batched values; explicit inputs unless it reads the previous layer.
    std::string emit(int node, const std::string& suffix, const std::string& type, const AttrList& attrs,
                     const std::vector<std::string>& values) {
        std::vector<std::string> ins;
        for (const auto& v : values) ins.push_back(layerOf(v));
        return emitLayers(uniqueName(baseName(node) + suffix, node), type, attrs, ins);
    }
    std::string emitLayers(const std::string& name, const std::string& type, const AttrList& attrs,
                           std::vector<std::string> ins) {
        Layer l = op(name, type, attrs);
        if (!(ins.size() == 1 && ins[0] == m_prev)) l.inputs = std::move(ins);
        m_layerOp[name] = type;
        m_layers.push_back(std::move(l));
        m_prev = name;
        return name;
    }
    void bind(const std::string& value, const std::string& layer) {
        if (!value.empty()) m_layerOf[value] = layer;
    }
    /// Records that an initializer is a parameter of `layer` (the first layer to use it).
    void own(const std::string& init, const std::string& layer) {
        if (init.empty() || !m_inits.count(init)) return;
        if (!m_owner.emplace(init, layer).second && m_owner[init] != layer)
            m_notes.push_back("initializer '" + printable(init) + "' is used by several layers and counted once per use");
    }

    Status visit(int i) {
        const NodeProto& n = m_g->node(i);
        if (n.output_size() < 1 || n.output(0).empty()) {
            for (const auto& o : n.output())
                if (!o.empty() && (!consumers(o).empty() || o == m_output)) {
                    m_problems.push_back(nodeLabel(i) + ": its first output is unnamed");
                    break;
                }
            return Ok{};
        }
        bool batched = false;
        for (const auto& in : n.input()) batched = batched || m_batched.count(in);
        if (!batched || n.op_type() == "Shape" || n.op_type() == "Size") return Ok{};  // constants: evaluated
        auto f = m_fusions.find(i);
        if (f != m_fusions.end()) {
            const Fusion& fu = f->second;
            const std::string name = emit(fu.nameNode, "", fu.op, fu.attrs, {fu.input});
            for (const auto& w : fu.weights) own(w, name);
            bind(n.output(0), name);
            return Ok{};
        }
        auto r = mapNode(i);
        if (!r) return r.error();
        if (r->mapped) return Ok{};
        const std::string reason = r->reason;
        if (!m_opts.allowOpaque) {
            m_problems.push_back(nodeLabel(i) + (reason.empty() ? "" : ": " + reason));
            // Keep going with a placeholder so that every unmappable node is reported at once.
            const std::string name = uniqueName(baseName(i), i);
            for (const auto& o : n.output()) bind(o, name);
            m_prev = name;
            return Ok{};
        }
        return emitOpaque(i, reason);
    }

    Status emitOpaque(int i, const std::string& reason) {
        const NodeProto& n = m_g->node(i);
        for (int k = 1; k < n.output_size(); ++k)
            if (!consumers(n.output(k)).empty() || n.output(k) == m_output)
                return failNode(i, "cannot become an opaque layer: it has several outputs in use (" + reason + ")");
        auto ps = perSample(n.output(0));
        if (!ps) return failNode(i, "cannot become an opaque layer: its output shape is unknown (" + reason + ")");
        if (!batchAtZero(n.output(0)))
            return failNode(i, "cannot become an opaque layer: its output does not keep the batch at dim 0 (" + reason + ")");
        for (auto d : *ps)
            if (d <= 0) return failNode(i, "cannot become an opaque layer: its output has an empty dimension");
        auto dt = toDType(elemOf(n.output(0)));
        if (!dt) return failNode(i, "cannot become an opaque layer: its output element type is not modelled (" + reason + ")");
        std::int64_t params = 0;
        std::vector<std::string> values, inits;
        for (const auto& in : n.input()) {
            if (in.empty()) continue;
            if (m_batched.count(in)) {
                if (std::find(values.begin(), values.end(), in) == values.end()) values.push_back(in);
            } else if (const StaticValue* s = staticOf(in); s && !s->root.empty() && !m_owner.count(s->root) &&
                                                              elemOf(s->root) != 0 && toDType(elemOf(s->root)) &&
                                                              isFloating(*toDType(elemOf(s->root)))) {
                if (std::find(inits.begin(), inits.end(), s->root) != inits.end()) continue;
                inits.push_back(s->root);
                params += static_cast<std::int64_t>(tensorNumel(*m_inits.at(s->root)).value_or(0));
            }
        }
        if (values.size() > 64) return failNode(i, "cannot become an opaque layer: more than 64 inputs");
        const std::string name = emit(i, "", "opaque",
                                      {{"params", params}, {"saved_bytes_per_sample", std::int64_t{0}},
                                       {"output_shape", *ps}, {"output_dtype", std::string(dtypeName(*dt))}},
                                      values);
        for (const auto& w : inits) own(w, name);
        bind(n.output(0), name);
        m_opaque.push_back(printable(n.op_type(), 40));
        return Ok{};
    }

    // ---------------------------------------------------------------- operators
    /// Symmetric per-dim padding for a conv/pool; nullopt when ONNX pads asymmetrically.
    std::optional<std::vector<std::int64_t>> padding(const NodeProto& n, const std::string& x, const std::vector<std::int64_t>& kernel,
                                                     const std::vector<std::int64_t>& strides,
                                                     const std::vector<std::int64_t>& dilations) {
        const std::size_t d = kernel.size();
        const std::string autoPad = attrString(n, "auto_pad", "NOTSET");
        if (autoPad == "VALID") return std::vector<std::int64_t>(d, 0);
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            auto ps = perSample(x);
            if (!ps || ps->size() != d + 1) return std::nullopt;
            std::vector<std::int64_t> out;
            for (std::size_t k = 0; k < d; ++k) {
                const std::int64_t in = (*ps)[k + 1], s = strides[k];
                const std::int64_t o = (in + s - 1) / s;
                const std::int64_t total = std::max<std::int64_t>((o - 1) * s + dilations[k] * (kernel[k] - 1) + 1 - in, 0);
                if (total % 2) return std::nullopt;
                out.push_back(total / 2);
            }
            return out;
        }
        auto pads = attrInts(n, "pads");
        if (!pads) return std::vector<std::int64_t>(d, 0);
        if (pads->size() != 2 * d) return std::nullopt;
        std::vector<std::int64_t> out;
        for (std::size_t k = 0; k < d; ++k) {
            if ((*pads)[k] != (*pads)[k + d]) return std::nullopt;
            out.push_back((*pads)[k]);
        }
        return out;
    }

    static std::vector<std::int64_t> intsOr(const std::optional<std::vector<std::int64_t>>& v, std::size_t d, std::int64_t def) {
        return v && v->size() == d ? *v : std::vector<std::int64_t>(d, def);
    }

    const TypeInfo* initType(const std::string& v) {
        if (!m_inits.count(v)) return nullptr;
        auto it = m_types.find(v);
        return it == m_types.end() ? nullptr : &it->second;
    }

    Result<Outcome> mapConv(int i, bool transposed) {
        const NodeProto& n = m_g->node(i);
        const TypeInfo* w = n.input_size() >= 2 ? initType(n.input(1)) : nullptr;
        if (!m_batched.count(n.input(0))) return unsupported("the data input is a constant");
        if (!w) return unsupported("the weight is not an initializer");
        const std::size_t spatial = w->dims.size() >= 2 ? w->dims.size() - 2 : 0;
        if (spatial < 1 || spatial > 3 || (transposed && spatial != 2))
            return unsupported(std::to_string(spatial) + "-d " + (transposed ? "transposed " : "") + "convolution");
        std::vector<std::int64_t> kernel;
        for (std::size_t k = 2; k < w->dims.size(); ++k) kernel.push_back(w->dims[k].value);
        const std::int64_t group = attrInt(n, "group", 1);
        const auto strides = intsOr(attrInts(n, "strides"), spatial, 1);
        const auto dil = intsOr(attrInts(n, "dilations"), spatial, 1);
        auto pad = padding(n, n.input(0), kernel, strides, dil);
        if (!pad) return unsupported("asymmetric padding");
        if (transposed && findAttr(n, "output_shape")) return unsupported("output_shape");
        std::int64_t outC = w->dims[0].value;
        if (transposed && __builtin_mul_overflow(w->dims[1].value, group, &outC)) return unsupported("channels overflow");
        AttrList a{{"out_channels", outC}, {"kernel", intsAttr(kernel)}};
        if (!allEqual(strides, 1)) a.push_back({"stride", intsAttr(strides)});
        if (!allEqual(*pad, 0)) a.push_back({"padding", intsAttr(*pad)});
        if (!allEqual(dil, 1)) a.push_back({"dilation", intsAttr(dil)});
        if (transposed) {
            const auto op = intsOr(attrInts(n, "output_padding"), spatial, 0);
            if (!allEqual(op, 0)) a.push_back({"output_padding", intsAttr(op)});
        }
        if (group != 1) a.push_back({"groups", group});
        const bool bias = n.input_size() >= 3 && !n.input(2).empty();
        if (bias && !m_inits.count(n.input(2))) return unsupported("the bias is not an initializer");
        a.push_back({"bias", bias});
        const std::string type = transposed ? "conv_transpose2d" : "conv" + std::to_string(spatial) + "d";
        const std::string name = emit(i, "", type, a, {n.input(0)});
        own(n.input(1), name);
        if (bias) own(n.input(2), name);
        bind(n.output(0), name);
        return Outcome{};
    }

    Result<Outcome> mapPool(int i, bool max) {
        const NodeProto& n = m_g->node(i);
        if (rankOf(n.input(0)) != 4) return unsupported("only 2-d pooling maps");
        auto kernel = attrInts(n, "kernel_shape");
        if (!kernel || kernel->size() != 2) return unsupported("kernel_shape is not 2-d");
        const auto strides = intsOr(attrInts(n, "strides"), 2, 1);
        const auto dil = intsOr(attrInts(n, "dilations"), 2, 1);
        auto pad = padding(n, n.input(0), *kernel, strides, dil);
        if (!pad) return unsupported("asymmetric padding");
        if (max && n.output_size() > 1 && !consumers(n.output(1)).empty()) return unsupported("the indices output is used");
        AttrList a{{"kernel", intsAttr(*kernel)}, {"stride", intsAttr(strides)}};
        if (!allEqual(*pad, 0)) a.push_back({"padding", intsAttr(*pad)});
        if (!allEqual(dil, 1)) {
            if (!max) return unsupported("dilated average pooling");
            a.push_back({"dilation", intsAttr(dil)});
        }
        if (attrInt(n, "ceil_mode", 0)) a.push_back({"ceil_mode", true});
        if (!max) a.push_back({"count_include_pad", attrInt(n, "count_include_pad", 0) != 0});
        if (attrInt(n, "storage_order", 0)) return unsupported("column-major indices");
        bind(n.output(0), emit(i, "", max ? "maxpool2d" : "avgpool2d", a, {n.input(0)}));
        return Outcome{};
    }

    Result<Outcome> mapNorm(int i) {
        const NodeProto& n = m_g->node(i);
        const std::string& t = n.op_type();
        if (!m_batched.count(n.input(0))) return unsupported("the data input is a constant");
        for (int k = 1; k < n.input_size(); ++k)
            if (!n.input(k).empty() && !m_inits.count(n.input(k))) return unsupported("a parameter is not an initializer");
        const auto r = rankOf(n.input(0));
        if (!r) return unsupported("unknown input rank");
        if (t == "BatchNormalization") {
            for (int k = 1; k < n.output_size(); ++k)
                if (!consumers(n.output(k)).empty()) return unsupported("the running statistics outputs are used");
            std::string type = *r == 4 ? "batchnorm2d" : (*r == 2 || *r == 3) ? "batchnorm1d" : "";
            if (type.empty()) return unsupported("rank " + std::to_string(*r) + " batch norm");
            const std::string name = emit(i, "", type, {{"eps", attrFloat(n, "epsilon", 1e-5)}}, {n.input(0)});
            for (int k = 1; k < n.input_size(); ++k) own(n.input(k), name);
            bind(n.output(0), name);
            return Outcome{};
        }
        // LayerNormalization (opset 17)
        std::int64_t axis = attrInt(n, "axis", -1);
        if (axis < 0) axis += *r;
        if (axis < 1 || axis >= *r) return unsupported("normalises over the batch dimension");
        const bool bias = n.input_size() >= 3 && !n.input(2).empty();
        AttrList a{{"eps", attrFloat(n, "epsilon", 1e-5)}, {"bias", bias}};
        if (*r - axis != 1) a.push_back({"normalized_dims", *r - axis});
        const std::string name = emit(i, "", "layernorm", a, {n.input(0)});
        for (int k = 1; k < n.input_size(); ++k) own(n.input(k), name);
        bind(n.output(0), name);
        return Outcome{};
    }

    /// Gemm (2-d) or MatMul with a weight initializer -> linear; MatMul of two activations -> matmul.
    Result<Outcome> mapLinear(int i) {
        const NodeProto& n = m_g->node(i);
        const bool gemm = n.op_type() == "Gemm";
        const bool a = m_batched.count(n.input(0)) != 0, b = m_batched.count(n.input(1)) != 0;
        if (!a) return unsupported("the left operand is a constant");
        if (b) {
            if (gemm) return unsupported("Gemm of two activations");
            if (rankOf(n.input(0)).value_or(0) < 3 || rankOf(n.input(1)).value_or(0) < 3)
                return unsupported("matmul of activations needs per-sample matrices");
            bind(n.output(0), emit(i, "", "matmul", {}, {n.input(0), n.input(1)}));
            return Outcome{};
        }
        if (gemm && attrInt(n, "transA", 0)) return unsupported("transA moves the batch dimension");
        const StaticValue* w = staticOf(n.input(1));
        if (!w || w->root.empty()) return unsupported("the weight is not an initializer");
        const TypeInfo* wt = initType(w->root);
        if (!wt || wt->dims.size() != 2) return unsupported("the weight is not a matrix");
        bool transB = gemm && attrInt(n, "transB", 0);
        if (w->transposed2d) transB = !transB;
        const std::int64_t out = transB ? wt->dims[0].value : wt->dims[1].value;
        const bool bias = gemm && n.input_size() >= 3 && !n.input(2).empty();
        if (bias && !m_inits.count(n.input(2))) return unsupported("the bias is not an initializer");
        AttrList attrs{{"out_features", out}, {"bias", bias}};
        // A weight already owned by an embedding (or linear) of the same [out, in] shape: tied (GPT-2's lm_head).
        auto owner = m_owner.find(w->root);
        bool tied = false;
        if (owner != m_owner.end() && transB) {
            auto op = m_layerOp.find(owner->second);
            tied = op != m_layerOp.end() && op->second == "embedding";
        }
        if (tied) attrs.push_back({"tied_to", owner->second});
        const std::string name = emit(i, "", "linear", attrs, {n.input(0)});
        if (!tied) own(w->root, name);  // a second, untied use is counted twice (noted)
        if (bias) own(n.input(2), name);
        bind(n.output(0), name);
        return Outcome{};
    }

    Result<Outcome> mapBinary(int i) {
        const NodeProto& n = m_g->node(i);
        const std::string& t = n.op_type();
        if (n.input_size() != 2) return unsupported("expects two inputs");
        const bool a = m_batched.count(n.input(0)) != 0, b = m_batched.count(n.input(1)) != 0;
        if (a && b) {
            bind(n.output(0), emit(i, "", t == "Add" || t == "Sub" ? "add" : "mul", {}, {n.input(0), n.input(1)}));
            return Outcome{};
        }
        const std::string x = a ? n.input(0) : n.input(1), c = a ? n.input(1) : n.input(0);
        auto psx = perSample(x), pso = perSample(n.output(0));
        if (!psx || !pso) return unsupported("the shapes could not be determined");
        if (*psx != *pso) return unsupported("a constant operand broadcasts the activation to a new shape");
        if (t == "Div" && !a) return unsupported("a constant divided by an activation");
        const StaticValue* s = staticOf(c);
        auto scalar = staticScalar(c);
        const bool param = s && !s->root.empty() && s->root == c && toDType(elemOf(c)) && isFloating(*toDType(elemOf(c))) &&
                           tensorNumel(*m_inits.at(c)).value_or(0) > 1;
        if ((t == "Add" || t == "Sub") && param && !m_owner.count(c)) {
            // A learned tensor added to the activation (ViT's position embedding): exact when it holds one sample.
            auto ct = initType(c);
            Shape cs;
            if (ct)
                for (const auto& d : ct->dims) cs.push_back(d.value);
            while (!cs.empty() && cs.front() == 1 && cs.size() > psx->size()) cs.erase(cs.begin());
            if (cs == *psx) {
                const std::string name = emit(i, "", "learned_add", {}, {x});
                own(c, name);
                bind(n.output(0), name);
                return Outcome{};
            }
        }
        double factor = 1.0;
        if (scalar && (t == "Mul" || t == "Div") && std::isfinite(*scalar) && *scalar != 0.0)
            factor = tidy(t == "Mul" ? *scalar : 1.0 / *scalar);
        if (param && !m_owner.count(c))
            m_notes.push_back("the " + printable(t, 10) + " of the initializer '" + printable(c) +
                              "' is modelled as a constant (its parameters are not counted)");
        // An activation combined with a constant: a new tensor, nothing saved (as x * python_scalar).
        bind(n.output(0), emit(i, "", "scale", {{"factor", factor}}, {x}));
        return Outcome{};
    }

    Result<Outcome> mapActivation(int i) {
        const NodeProto& n = m_g->node(i);
        const std::string& t = n.op_type();
        std::string type;
        AttrList a;
        if (t == "Relu") type = "relu";
        else if (t == "Sigmoid") type = "sigmoid";
        else if (t == "Tanh") type = "tanh";
        else if (t == "HardSwish") type = "hardswish";
        else if (t == "LeakyRelu") {
            type = "leaky_relu";
            a.push_back({"negative_slope", attrFloat(n, "alpha", 0.01)});
        } else if (t == "Gelu") {
            type = "gelu";
            if (attrString(n, "approximate", "none") == "tanh") a.push_back({"approximate", std::string("tanh")});
        } else if (t == "Clip") {
            std::optional<double> lo, hi;
            if (m_opset < 11) {
                if (findAttr(n, "min")) lo = attrFloat(n, "min", 0);
                if (findAttr(n, "max")) hi = attrFloat(n, "max", 0);
            } else {
                if (n.input_size() >= 2 && !n.input(1).empty()) {
                    lo = staticScalar(n.input(1));
                    if (!lo) return unsupported("min is not a constant");
                }
                if (n.input_size() >= 3 && !n.input(2).empty()) {
                    hi = staticScalar(n.input(2));
                    if (!hi) return unsupported("max is not a constant");
                }
            }
            if (lo && *lo == 0.0 && hi && *hi == 6.0) type = "relu6";
            else if (lo && *lo == 0.0 && !hi) type = "relu";
            else return unsupported("only Clip(0, 6) (relu6) and Clip(0) (relu) map");
        }
        bind(n.output(0), emit(i, "", type, a, {n.input(0)}));
        return Outcome{};
    }

    /// A per-sample dim from an ONNX axis (normalised with the rank); nullopt for the batch axis.
    std::optional<std::int64_t> sampleDim(std::int64_t axis, std::optional<std::int64_t> rank, bool keepNegative = true) {
        if (axis < 0) {
            if (keepNegative) return axis;
            if (!rank) return std::nullopt;
            axis += *rank;
        }
        if (axis < 1 || (rank && axis >= *rank)) return std::nullopt;
        return axis - 1;
    }

    Result<Outcome> mapSoftmax(int i) {
        const NodeProto& n = m_g->node(i);
        const auto r = rankOf(n.input(0));
        std::int64_t axis = attrInt(n, "axis", m_opset >= 13 ? -1 : 1);
        if (m_opset < 13) {  // softmax over the flattened trailing dims: the same as dim -1 only at the last axis
            if (!r) return unsupported("unknown input rank");
            if (axis < 0) axis += *r;
            if (axis != *r - 1) return unsupported("a pre-opset-13 softmax over several axes");
            axis = -1;
        }
        if (axis < 0 && r && axis < -(*r - 1)) return unsupported("softmax over the batch dimension");
        auto d = sampleDim(axis, r);
        if (!d) return unsupported("softmax over the batch dimension");
        AttrList a;
        if (*d != -1) a.push_back({"dim", *d});
        bind(n.output(0), emit(i, "", n.op_type() == "Softmax" ? "softmax" : "log_softmax", a, {n.input(0)}));
        return Outcome{};
    }

    Result<Outcome> mapDropout(int i) {
        const NodeProto& n = m_g->node(i);
        if (n.output_size() > 1 && !consumers(n.output(1)).empty()) return unsupported("the mask output is used");
        double p = 0.5;
        if (m_opset < 12) p = attrFloat(n, "ratio", 0.5);
        else if (n.input_size() >= 2 && !n.input(1).empty()) {
            auto r = staticScalar(n.input(1));
            if (!r) return unsupported("the ratio is not a constant");
            p = *r;
        }
        if (!(p >= 0.0 && p < 1.0)) return unsupported("ratio " + std::to_string(p) + " is outside [0, 1)");
        bind(n.output(0), emit(i, "", "dropout", {{"p", tidy(p)}}, {n.input(0)}));
        return Outcome{};
    }

    Result<Outcome> mapReshapeLike(int i) {
        const NodeProto& n = m_g->node(i);
        const std::string& t = n.op_type();
        const std::string& x = n.input(0);
        if (t == "Flatten") {
            const auto r = rankOf(x);
            std::int64_t axis = attrInt(n, "axis", 1);
            if (axis < 0) {
                if (!r) return unsupported("unknown input rank");
                axis += *r;
            }
            if (axis == 1) {
                bind(n.output(0), emit(i, "", "flatten", {}, {x}));
                return Outcome{};
            }
            if (axis < 1) return unsupported("flattens the batch dimension into the features");
        }
        std::optional<Shape> target;
        if (t == "Flatten") {  // axis >= 2: [d1 * ... * d(axis-1), the rest] per sample
            auto ps = perSample(x);
            const std::int64_t axis = attrInt(n, "axis", 1) < 0 ? attrInt(n, "axis", 1) + rankOf(x).value_or(0) : attrInt(n, "axis", 1);
            if (!ps || axis > static_cast<std::int64_t>(ps->size()) + 1) return unsupported("unknown input shape");
            std::int64_t a = 1, b = 1;
            for (std::size_t k = 0; k < ps->size(); ++k) ((static_cast<std::int64_t>(k) < axis - 1) ? a : b) *= (*ps)[k];
            target = Shape{a, b};
        } else {
            auto outType = typeOf(n.output(0));
            if (!outType || !outType->hasShape || !fullType(n.output(0)))
                return unsupported("the output shape could not be determined (a target computed at run time?)");
            if (!batchAtZero(n.output(0)) || !batchAtZero(x)) return unsupported("moves or merges the batch dimension");
            target = perSample(n.output(0));
        }
        if (t == "Squeeze" || t == "Unsqueeze") {
            const auto axes = intsArg(n, "axes", 1);
            const auto r = rankOf(t == "Squeeze" ? x : n.output(0));
            if (!axes || !r) return unsupported("the axes are not constants");
            for (auto ax : *axes)
                if (ax == 0 || ax == -*r) return unsupported("squeezes or unsqueezes the batch dimension");
        }
        if (target->empty()) return unsupported("the output has no per-sample dimensions");
        bind(n.output(0), emit(i, "", "reshape", {{"shape", *target}}, {x}));
        return Outcome{};
    }

    Result<Outcome> mapTranspose(int i) {
        const NodeProto& n = m_g->node(i);
        auto perm = attrInts(n, "perm");
        if (!perm || perm->empty()) return unsupported("the default permutation reverses the batch dimension");
        if ((*perm)[0] != 0) return unsupported("moves the batch dimension");
        std::vector<std::int64_t> dims;
        std::vector<std::size_t> moved;
        for (std::size_t k = 1; k < perm->size(); ++k) {
            dims.push_back((*perm)[k] - 1);
            if ((*perm)[k] != static_cast<std::int64_t>(k)) moved.push_back(k - 1);
        }
        std::string name;
        if (moved.empty()) name = emit(i, "", "identity", {}, {n.input(0)});
        else if (moved.size() == 2 && dims[moved[0]] == static_cast<std::int64_t>(moved[1]))
            name = emit(i, "", "transpose", {{"dim0", static_cast<std::int64_t>(moved[0])}, {"dim1", static_cast<std::int64_t>(moved[1])}},
                        {n.input(0)});
        else name = emit(i, "", "permute", {{"dims", dims}}, {n.input(0)});
        bind(n.output(0), name);
        return Outcome{};
    }

    Result<Outcome> mapConcat(int i) {
        const NodeProto& n = m_g->node(i);
        const auto r = rankOf(n.output(0));
        const std::int64_t axis = attrInt(n, "axis", 0);
        std::vector<std::string> values;
        std::vector<std::string> constants;
        for (const auto& in : n.input()) {
            if (m_batched.count(in)) values.push_back(in);
            else constants.push_back(in);
        }
        auto d = sampleDim(axis, r, false);
        if (!d) return unsupported("concatenates along the batch dimension");
        if (constants.size() == 1 && values.size() == 1 && n.input_size() == 2 && n.input(0) == constants[0] && *d == 0) {
            // [cls, x] along the tokens, cls a learned [1, 1, D] expanded over the batch: ViT's class token.
            const StaticValue* s = staticOf(constants[0]);
            auto ps = perSample(values[0]);
            if (s && !s->root.empty() && ps && ps->size() == 2 &&
                tensorNumel(*m_inits.at(s->root)).value_or(0) == static_cast<std::uint64_t>((*ps)[1])) {
                const std::string name = emit(i, "", "class_token", {}, {values[0]});
                own(s->root, name);
                bind(n.output(0), name);
                return Outcome{};
            }
        }
        if (!constants.empty()) return unsupported("concatenates a constant with activations");
        if (values.size() == 1) {
            bind(n.output(0), emit(i, "", "identity", {}, values));
            return Outcome{};
        }
        bind(n.output(0), emit(i, "", "concat", {{"dim", *d}}, values));
        return Outcome{};
    }

    Result<Outcome> mapGather(int i) {
        const NodeProto& n = m_g->node(i);
        const bool data = m_batched.count(n.input(0)) != 0, idx = m_batched.count(n.input(1)) != 0;
        const std::int64_t axis = attrInt(n, "axis", 0);
        if (!data && idx) {
            const StaticValue* s = staticOf(n.input(0));
            const TypeInfo* wt = s && !s->root.empty() && s->root == n.input(0) ? initType(s->root) : nullptr;
            if (!wt || wt->dims.size() != 2 || axis != 0) return unsupported("only a lookup in a 2-d weight initializer maps (embedding)");
            AttrList a{{"num_embeddings", wt->dims[0].value}, {"embedding_dim", wt->dims[1].value}};
            auto owner = m_owner.find(s->root);  // a second lookup in the same table shares its weight
            const bool tied = owner != m_owner.end() && m_layerOp.count(owner->second) && m_layerOp[owner->second] == "embedding";
            if (tied) a.push_back({"tied_to", owner->second});
            const std::string name = emit(i, "", "embedding", a, {n.input(1)});
            if (!tied) own(s->root, name);
            bind(n.output(0), name);
            return Outcome{};
        }
        if (data && !idx) {
            auto index = staticData(n.input(1));
            auto d = sampleDim(axis, rankOf(n.input(0)), false);
            if (!d) return unsupported("gathers along the batch dimension");
            if (!index || index->size() != 1 || (*index)[0].kind != SVal::Known || rankOf(n.input(1)).value_or(1) != 0)
                return unsupported("only a single constant index maps (select)");
            bind(n.output(0), emit(i, "", "select", {{"dim", *d}, {"index", (*index)[0].i}}, {n.input(0)}));
            return Outcome{};
        }
        return unsupported("gathers with activation indices from an activation");
    }

    Result<Outcome> mapSlice(int i) {
        const NodeProto& n = m_g->node(i);
        std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
        if (m_opset < 10) {
            starts = attrInts(n, "starts");
            ends = attrInts(n, "ends");
            axes = attrInts(n, "axes");
        } else {
            for (int k = 1; k < n.input_size() && k < 5; ++k) {
                if (n.input(k).empty()) continue;
                if (m_batched.count(n.input(k))) return unsupported("slice bounds computed from activations");
                auto v = staticInts(n.input(k));
                if (!v) return unsupported("slice bounds are not constants");
                (k == 1 ? starts : k == 2 ? ends : k == 3 ? axes : steps) = std::move(v);
            }
        }
        if (!starts || !ends || starts->size() != ends->size()) return unsupported("slice bounds are not constants");
        const auto r = rankOf(n.input(0));
        auto ps = perSample(n.input(0));
        if (!r || !ps) return unsupported("unknown input shape");
        std::string value = n.input(0);
        std::string name;
        for (std::size_t k = 0; k < starts->size(); ++k) {
            std::int64_t axis = axes && axes->size() == starts->size() ? (*axes)[k] : static_cast<std::int64_t>(k);
            if (axis < 0) axis += *r;
            const std::int64_t step = steps && steps->size() == starts->size() ? (*steps)[k] : 1;
            if (axis < 0 || axis >= *r) return unsupported("axis out of range");
            if (step <= 0) return unsupported("negative or zero step");
            std::int64_t s = (*starts)[k], e = (*ends)[k];
            if (axis == 0) {
                if (s == 0 && e >= INT32_MAX) continue;  // the whole batch
                return unsupported("slices the batch dimension");
            }
            const std::int64_t size = (*ps)[static_cast<std::size_t>(axis - 1)];
            if (s < 0) s += size;
            if (e < 0) e += size;
            s = std::clamp<std::int64_t>(s, 0, size);
            e = std::clamp<std::int64_t>(e, 0, size);
            if (s == 0 && e == size && step == 1) continue;
            if (e <= s) return unsupported("an empty slice");
            AttrList a{{"dim", axis - 1}, {"start", s}, {"end", e}};
            if (step != 1) a.push_back({"step", step});
            name = emit(i, name.empty() ? "" : "_" + std::to_string(axis), "slice", a, {value});
            bind("\x01slice" + name, name);
            value = "\x01slice" + name;
        }
        if (name.empty()) name = emit(i, "", "identity", {}, {n.input(0)});
        bind(n.output(0), name);
        return Outcome{};
    }

    Result<Outcome> mapSplit(int i) {
        const NodeProto& n = m_g->node(i);
        const auto r = rankOf(n.input(0));
        auto ps = perSample(n.input(0));
        std::int64_t axis = attrInt(n, "axis", 0);
        if (!r || !ps) return unsupported("unknown input shape");
        if (axis < 0) axis += *r;
        if (axis < 1 || axis >= *r) return unsupported("splits the batch dimension");
        const std::int64_t size = (*ps)[static_cast<std::size_t>(axis - 1)];
        std::optional<std::vector<std::int64_t>> sizes = attrInts(n, "split");
        if (!sizes && n.input_size() >= 2 && !n.input(1).empty()) sizes = staticInts(n.input(1));
        if (!sizes) {
            const std::int64_t parts = n.output_size();
            if (parts <= 0) return unsupported("no outputs");
            const std::int64_t each = (size + parts - 1) / parts;
            sizes = std::vector<std::int64_t>();
            for (std::int64_t k = 0, left = size; k < parts; ++k, left -= each) sizes->push_back(std::max<std::int64_t>(0, std::min(each, left)));
        }
        if (static_cast<int>(sizes->size()) != n.output_size()) return unsupported("split sizes do not match the outputs");
        std::int64_t start = 0;
        for (int k = 0; k < n.output_size(); ++k) {
            const std::int64_t len = (*sizes)[static_cast<std::size_t>(k)];
            if (len <= 0 || start + len > size) return unsupported("bad split sizes");
            if (!n.output(k).empty() && (!consumers(n.output(k)).empty() || n.output(k) == m_output))
                bind(n.output(k), emit(i, "_" + std::to_string(k), "slice", {{"dim", axis - 1}, {"start", start}, {"end", start + len}},
                                       {n.input(0)}));
            start += len;
        }
        return Outcome{};
    }

    Result<Outcome> mapReduceMean(int i) {
        const NodeProto& n = m_g->node(i);
        const auto r = rankOf(n.input(0));
        std::optional<std::vector<std::int64_t>> axes = attrInts(n, "axes");
        if (!axes && n.input_size() >= 2 && !n.input(1).empty()) axes = staticInts(n.input(1));
        if (!r || *r != 4 || !axes || axes->size() != 2) return unsupported("only a mean over H and W of [N,C,H,W] maps");
        std::vector<std::int64_t> ax = *axes;
        for (auto& a : ax)
            if (a < 0) a += 4;
        std::sort(ax.begin(), ax.end());
        if (ax != std::vector<std::int64_t>{2, 3}) return unsupported("only a mean over H and W of [N,C,H,W] maps");
        std::string name = emit(i, "", "adaptive_avgpool2d", {{"output_size", std::int64_t{1}}}, {n.input(0)});
        if (!attrInt(n, "keepdims", 1)) name = emitLayers(uniqueName(baseName(i) + "_flatten"), "flatten", {}, {name});
        bind(n.output(0), name);
        return Outcome{};
    }

    Result<Outcome> mapNode(int i) {
        const NodeProto& n = m_g->node(i);
        const std::string& t = n.op_type();
        const bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
        if (!defaultDomain) return unsupported("operator of domain '" + printable(n.domain(), 40) + "'");
        if (n.output_size() < 1 || n.output(0).empty()) return unsupported("no output");
        for (int k = 1; k < n.input_size(); ++k)
            if (m_batched.count(n.input(k)) && t != "Add" && t != "Sub" && t != "Mul" && t != "Div" && t != "MatMul" &&
                t != "Concat" && t != "Gather" && t != "Gemm")
                return unsupported("an activation in a parameter position");
        if (t == "Conv") return mapConv(i, false);
        if (t == "ConvTranspose") return mapConv(i, true);
        if (t == "MaxPool") return mapPool(i, true);
        if (t == "AveragePool") return mapPool(i, false);
        if (t == "GlobalAveragePool") {
            if (rankOf(n.input(0)) != 4) return unsupported("only 2-d global pooling maps");
            bind(n.output(0), emit(i, "", "adaptive_avgpool2d", {{"output_size", std::int64_t{1}}}, {n.input(0)}));
            return Outcome{};
        }
        if (t == "ReduceMean") return mapReduceMean(i);
        if (t == "BatchNormalization" || t == "LayerNormalization") return mapNorm(i);
        if (t == "Gemm" || t == "MatMul") return mapLinear(i);
        if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") return mapBinary(i);
        if (t == "Relu" || t == "Sigmoid" || t == "Tanh" || t == "HardSwish" || t == "LeakyRelu" || t == "Gelu" || t == "Clip")
            return mapActivation(i);
        if (t == "Softmax" || t == "LogSoftmax") return mapSoftmax(i);
        if (t == "Dropout") return mapDropout(i);
        if (t == "Identity") {
            bind(n.output(0), emit(i, "", "identity", {}, {n.input(0)}));
            return Outcome{};
        }
        if (t == "Cast") {
            if (attrInt(n, "to", 0) != elemOf(n.input(0)) || elemOf(n.input(0)) == 0) return unsupported("changes the element type");
            bind(n.output(0), emit(i, "", "identity", {}, {n.input(0)}));
            return Outcome{};
        }
        if (t == "Flatten" || t == "Reshape" || t == "Squeeze" || t == "Unsqueeze") return mapReshapeLike(i);
        if (t == "Transpose") return mapTranspose(i);
        if (t == "Concat") return mapConcat(i);
        if (t == "Gather") return mapGather(i);
        if (t == "Slice") return mapSlice(i);
        if (t == "Split") return mapSplit(i);
        return unsupported("");
    }

    // ---------------------------------------------------------------- result
    Result<Model> finish() {
        Model m;
        m.inputShape = m_inputShape;
        m.inputDtype = m_inputDtype;
        auto outIt = m_layerOf.find(m_output);
        if (outIt == m_layerOf.end()) return fail("the graph output " + quoted(m_output) + " is not computed from the input");
        const std::string outLayer = outIt->second;
        m.layers = std::move(m_layers);
        if (m.layers.empty()) return fail("no node of the graph maps to a layer");
        if (m_opts.loss == OnnxLoss::CrossEntropy) {
            auto ps = perSample(m_output);
            if (ps && ps->size() != 1 && ps->size() != 2)
                return fail("the graph output " + quoted(m_output) + " is per sample " + shapeToString(*ps) +
                            ": cross-entropy needs logits [C] or [S, C] (import with the loss mse or none)");
        }
        std::vector<std::string> ins{outLayer};
        auto push = [&](const std::string& name, const std::string& type) {
            Layer l = op(uniqueName(name), type);
            if (outLayer != m.layers.back().name) l.inputs = ins;
            m.layers.push_back(std::move(l));
        };
        if (m_opts.loss == OnnxLoss::CrossEntropy) push("loss", "cross_entropy");
        else if (m_opts.loss == OnnxLoss::Mse) push("loss", "mse_loss");
        else if (outLayer != m.layers.back().name) push("output", "identity");

        std::string stem = m_source;
        if (auto slash = stem.find_last_of("/\\"); slash != std::string::npos) stem = stem.substr(slash + 1);
        if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".onnx") == 0) stem.resize(stem.size() - 5);
        m.name = printable(stem.empty() ? "onnx-model" : stem, 100);
        std::string d = "Imported from ONNX (" + (m_model.producer_name().empty() ? std::string("unknown producer")
                                                                                   : printable(m_model.producer_name(), 40) + " " +
                                                                                         printable(m_model.producer_version(), 20)) +
                        ", opset " + std::to_string(m_opset) + "): " + std::to_string(m.layers.size()) + " layers";
        if (!m_opaque.empty()) {
            std::map<std::string, int> count;
            for (const auto& o : m_opaque) ++count[o];
            std::string list;
            std::size_t shown = 0;
            for (const auto& [k, v] : count) {
                if (++shown > 10) {
                    list += ", ...";
                    break;
                }
                list += (list.empty() ? "" : ", ") + k + " x" + std::to_string(v);
            }
            d += "; " + std::to_string(m_opaque.size()) + " opaque (saved activations not counted): " + list;
        }
        std::set<std::string> uniqueNotes(m_notes.begin(), m_notes.end());
        std::size_t k = 0;
        for (const auto& note : m_notes) {
            if (!uniqueNotes.erase(note)) continue;
            if (++k > 5) {
                d += "; ...";
                break;
            }
            d += "; " + note;
        }
        m.description = d + ".";
        if (auto s = validateModel(m); !s)
            return fail("the imported layer stack does not validate (please report this model): " + s.error().message);
        return m;
    }

    const std::string& m_source;
    const OnnxImportOptions& m_opts;
    ModelProto m_model;
    GraphProto* m_g = nullptr;
    std::int64_t m_opset = 0;
    std::unordered_map<std::string, const TensorProto*> m_inits;
    std::unordered_map<std::string, int> m_producer;
    std::unordered_map<std::string, TypeInfo> m_types;
    std::unordered_map<std::string, TypeInfo> m_declared;  ///< value_info and graph outputs written in the file
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
    std::unordered_map<std::string, std::string> m_owner;  ///< initializer -> the layer whose parameter it is
    std::vector<Layer> m_layers;
    std::string m_prev = "@input";
    std::set<std::string> m_names{"@input", "@prev"};
    std::unordered_map<std::string, int> m_nextSuffix;
    std::unordered_map<std::string, std::string> m_layerOp;  ///< layer name -> op
    std::vector<std::string> m_problems, m_notes, m_opaque;
};

} // namespace

Result<Model> importModelProto(const std::uint8_t* data, std::size_t size, const std::string& source,
                               const OnnxImportOptions& options) {
    Mapper m(source, options);
    return m.run(data, size);
}

} // namespace batchfit::onnximport
