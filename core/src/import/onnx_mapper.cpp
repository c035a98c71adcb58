// ONNX ModelProto -> layer stack. Steps: parse (bounded protobuf reader), structural checks (every value
// defined once, no cycles, sane dims and tensor sizes, nodes valid against their ONNX schema), topological
// order, ONNX shape inference (re-run with the shapes of dynamic Reshapes filled in by a small evaluator of
// shape arithmetic), then a mapping of each node that reads the model input, directly or not, to BatchFit ops
// with the batch dimension dropped. Nodes that only compute on constants (shape arithmetic) are evaluated,
// not emitted. Initializers consumed as weights become the layers' parameters.
#include "import/onnx_mapper.h"

#include "batchfit/model_io.h"
#include "import/layer_builder.h"
#include "import/onnx_graph_mapper.h"

#include <functional>
#include <google/protobuf/io/coded_stream.h>
#include <map>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <queue>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace batchfit::onnximport {

Result<Model> Mapper::run(const std::uint8_t* data, std::size_t size) {
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
            if (const AttributeProto* a = findAttr(n, "value"); a && a->has_t())
                m_inits.emplace(n.output(0), &a->t());
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
        return fail(
            std::to_string(m_problems.size()) + " node(s) BatchFit cannot map: " + list +
            ". Import with 'allow opaque' (batchfit-cli --onnx-allow-opaque; in the app, the import dialog's "
            "opaque layers box) to keep them as opaque layers "
            "(parameters counted, saved activations not)");
    }
    if (cancelled()) return fail("import cancelled");
    return finish();
}

bool Mapper::cancelled() const {
    return m_opts.cancelled && m_opts.cancelled();
}

Error Mapper::fail(const std::string& what) const {
    return makeError(m_source + ": " + what);
}

std::string Mapper::nodeLabel(int i) const {
    const NodeProto& n = m_g->node(i);
    return (n.name().empty() ? "#" + std::to_string(i) : "'" + printable(n.name()) + "'") + " (" +
           printable(n.op_type(), 40) + ")";
}

Error Mapper::failNode(int i, const std::string& what) const {
    return fail("node " + nodeLabel(i) + ": " + what);
}

std::string Mapper::quoted(const std::string& s) {
    return "'" + printable(s) + "'";
}

Status Mapper::checkOpset() {
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
    m_model.clear_functions(); // model-local functions are not mapped; nodes calling them are unknown ops
    return Ok{};
}

Status Mapper::checkType(const TypeProto& t, const std::string& what) {
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

Status Mapper::checkTensor(const TensorProto& t, const std::string& what) {
    if (t.dims_size() > kMaxRank)
        return fail(what + ": rank " + std::to_string(t.dims_size()) + " is too large");
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
        if (es == 0 || __builtin_mul_overflow(*numel, static_cast<std::uint64_t>(es), &want) ||
            t.raw_data().size() != want)
            return fail(what + ": raw data of " + std::to_string(t.raw_data().size()) +
                        " bytes does not match its " + std::to_string(*numel) + " elements");
        return Ok{};
    }
    const std::uint64_t typed =
        static_cast<std::uint64_t>(t.float_data_size()) + static_cast<std::uint64_t>(t.int32_data_size()) +
        static_cast<std::uint64_t>(t.int64_data_size()) + static_cast<std::uint64_t>(t.double_data_size()) +
        static_cast<std::uint64_t>(t.uint64_data_size()) + static_cast<std::uint64_t>(t.string_data_size());
    const std::uint64_t perElem =
        (t.data_type() == TensorProto::COMPLEX64 || t.data_type() == TensorProto::COMPLEX128) ? 2 : 1;
    if (typed != 0 && typed != *numel * perElem)
        return fail(what + ": " + std::to_string(typed) + " values do not match its " +
                    std::to_string(*numel) + " elements");
    return Ok{}; // no data at all (a weight-stripped model): the dims are all BatchFit needs
}

Status Mapper::checkStructure() {
    GraphProto& g = *m_g;
    if (g.node_size() > kMaxNodes) return fail("too many nodes (" + std::to_string(g.node_size()) + ")");
    if (g.node_size() == 0) return fail("the graph has no nodes");
    g.clear_sparse_initializer();
    std::unordered_set<std::string> defined;
    for (int i = 0; i < g.initializer_size(); ++i) {
        const TensorProto& t = g.initializer(i);
        if (t.name().empty()) return fail("initializer #" + std::to_string(i) + " has no name");
        if (auto s = checkTensor(t, "initializer " + quoted(t.name())); !s) return s;
        if (!m_inits.emplace(t.name(), &t).second)
            return fail("initializer " + quoted(t.name()) + " is defined twice");
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
                return failNode(i,
                                "output " + quoted(o) +
                                    " is already defined (by another node, an initializer or a graph input)");
            m_producer[o] = i;
        }
        for (const auto& a : n.attribute()) {
            if (a.type() == AttributeProto::GRAPH || a.type() == AttributeProto::GRAPHS || a.has_g() ||
                a.graphs_size())
                return failNode(i, "has a subgraph (attribute '" + printable(a.name()) +
                                       "'): control flow (If, Loop, Scan) is not supported");
            if (a.has_t())
                if (auto s = checkTensor(a.t(),
                                         "node " + nodeLabel(i) + " attribute '" + printable(a.name()) + "'");
                    !s)
                    return s;
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
                                       ", which is neither a graph input, an initializer nor a node output "
                                       "(a missing initializer?)");
        const bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
        if (!defaultDomain) continue;
        const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), m_opset, "");
        if (!schema) continue;
        try {
            schema->Verify(n);
        } catch (const std::exception& e) {
            return failNode(i,
                            "invalid for opset " + std::to_string(m_opset) + ": " + printable(e.what(), 300));
        }
    }
    return Ok{};
}

Status Mapper::sortNodes() {
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
        for (int i = 0; i < n; ++i)
            nodes[static_cast<std::size_t>(i)].Swap(g.mutable_node(order[static_cast<std::size_t>(i)]));
        for (int i = 0; i < n; ++i) g.mutable_node(i)->Swap(&nodes[static_cast<std::size_t>(i)]);
        for (int i = 0; i < n; ++i)
            for (const auto& o : g.node(i).output())
                if (!o.empty()) m_producer[o] = i;
    }
    return Ok{};
}

Status Mapper::chooseInputOutput() {
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
    if (!m_producer.count(m_output))
        return fail("the graph output " + quoted(m_output) + " is not computed by any node");
    if (inputsRead.empty())
        return fail("the graph output " + quoted(m_output) + " does not depend on any graph input");
    if (inputsRead.size() > 1) {
        std::string names;
        for (const auto& s : inputsRead) names += (names.empty() ? "" : ", ") + quoted(s);
        return fail("the output depends on " + std::to_string(inputsRead.size()) + " graph inputs (" + names +
                    "); BatchFit models have one input");
    }
    m_input = *inputsRead.begin();
    return Ok{};
}

Status Mapper::checkInput() {
    auto it = m_types.find(m_input);
    if (it == m_types.end() || !it->second.hasShape)
        return fail("graph input " + quoted(m_input) + " has no tensor shape");
    TypeInfo& t = it->second;
    if (t.dims.empty())
        return fail("graph input " + quoted(m_input) + " is a scalar: it has no batch dimension");
    if (!t.dims[0].known() && t.dims[0].param.empty())
        t.dims[0].param = "batch"; // to follow it through the graph
    m_batchDim = t.dims[0];
    auto dt = toDType(t.elem);
    if (!dt)
        return fail("graph input " + quoted(m_input) + " has an element type BatchFit does not model (" +
                    std::to_string(t.elem) + ")");
    m_inputDtype = *dt;
    for (std::size_t k = 1; k < t.dims.size(); ++k) {
        if (!t.dims[k].known() || t.dims[k].value == 0)
            return fail(
                "graph input " + quoted(m_input) + ": dimension " + std::to_string(k) + " is " +
                (t.dims[k].param.empty() ? std::string("unknown")
                                         : "symbolic ('" + printable(t.dims[k].param) + "')") +
                "; BatchFit needs concrete per-sample sizes (only dim 0, the batch, may be symbolic). "
                "Export with fixed sizes or set them with onnx.tools.update_model_dims");
        m_inputShape.push_back(t.dims[k].value);
    }
    return Ok{};
}

Result<Model> Mapper::finish() {
    Model m;
    m.inputShape = m_inputShape;
    m.inputDtype = m_inputDtype;
    auto outIt = m_layerOf.find(m_output);
    if (outIt == m_layerOf.end())
        return fail("the graph output " + quoted(m_output) + " is not computed from the input");
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
    if (m_opts.loss == OnnxLoss::CrossEntropy)
        push("loss", "cross_entropy");
    else if (m_opts.loss == OnnxLoss::Mse)
        push("loss", "mse_loss");
    else if (outLayer != m.layers.back().name)
        push("output", "identity");

    std::string stem = m_source;
    if (auto slash = stem.find_last_of("/\\"); slash != std::string::npos) stem = stem.substr(slash + 1);
    if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".onnx") == 0) stem.resize(stem.size() - 5);
    m.name = printable(stem.empty() ? "onnx-model" : stem, 100);
    std::string d =
        "Imported from ONNX (" +
        (m_model.producer_name().empty()
             ? std::string("unknown producer")
             : printable(m_model.producer_name(), 40) + " " + printable(m_model.producer_version(), 20)) +
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
        return fail("the imported layer stack does not validate (please report this model): " +
                    s.error().message);
    return m;
}

Result<Model> importModelProto(const std::uint8_t* data, std::size_t size, const std::string& source,
                               const OnnxImportOptions& options) {
    Mapper m(source, options);
    return m.run(data, size);
}

} // namespace batchfit::onnximport
