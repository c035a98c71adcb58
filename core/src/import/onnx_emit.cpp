// Mapper: layer naming, emission of layers and opaque layers, and the per-node dispatch to the operator
// mappers.
#include "import/layer_builder.h"
#include "import/onnx_graph_mapper.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace batchfit::onnximport {

std::string Mapper::baseName(int i) const {
    const NodeProto& n = m_g->node(i);
    std::vector<std::string> parts;
    std::string cur;
    for (char c : n.name()) {
        if (c == '/') {
            if (!cur.empty()) parts.push_back(cur);
            cur.clear();
        } else
            cur += c;
    }
    if (!cur.empty()) parts.push_back(cur);
    if (!parts.empty() && parts.size() > 1 && parts.back() == n.op_type()) parts.pop_back();
    std::vector<std::string> kept; // torch scopes repeat the parent: "layer1/layer1.0/conv1"
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
        for (unsigned char c : n.op_type().substr(0, 32))
            t += std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '_';
        out = (t.empty() ? "node" : t) + "_" + std::to_string(i);
    }
    return out;
}

std::string Mapper::uniqueName(const std::string& base, int node) {
    if (m_names.insert(base).second) return base;
    std::string alt = base;
    if (node >= 0) {
        alt += "_";
        for (unsigned char c : m_g->node(node).op_type().substr(0, 32))
            alt += std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '_';
        if (m_names.insert(alt).second) return alt;
    }
    std::string name;
    for (int& k = m_nextSuffix[alt];;
         ++k) { // resumes where the last search for `alt` stopped: linear overall
        name = alt + "_" + std::to_string(std::max(k, 2));
        if (m_names.insert(name).second) return name;
    }
}

std::string Mapper::layerOf(const std::string& value) const {
    auto it = m_layerOf.find(value);
    if (it != m_layerOf.end()) return it->second;
    return value == m_input ? "@input" : "@unmapped"; // not a valid reference: validation refuses it
}

std::string Mapper::emit(int node, const std::string& suffix, const std::string& type, const AttrList& attrs,
                         const std::vector<std::string>& values) {
    std::vector<std::string> ins;
    for (const auto& v : values) ins.push_back(layerOf(v));
    return emitLayers(uniqueName(baseName(node) + suffix, node), type, attrs, ins);
}

std::string Mapper::emitLayers(const std::string& name, const std::string& type, const AttrList& attrs,
                               std::vector<std::string> ins) {
    Layer l = op(name, type, attrs);
    if (!(ins.size() == 1 && ins[0] == m_prev)) l.inputs = std::move(ins);
    m_layerOp[name] = type;
    m_layers.push_back(std::move(l));
    m_prev = name;
    return name;
}

void Mapper::bind(const std::string& value, const std::string& layer) {
    if (!value.empty()) m_layerOf[value] = layer;
}

void Mapper::own(const std::string& init, const std::string& layer) {
    if (init.empty() || !m_inits.count(init)) return;
    if (!m_owner.emplace(init, layer).second && m_owner[init] != layer)
        m_notes.push_back("initializer '" + printable(init) +
                          "' is used by several layers and counted once per use");
}

Status Mapper::visit(int i) {
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
    if (!batched || n.op_type() == "Shape" || n.op_type() == "Size") return Ok{}; // constants: evaluated
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

Status Mapper::emitOpaque(int i, const std::string& reason) {
    const NodeProto& n = m_g->node(i);
    for (int k = 1; k < n.output_size(); ++k)
        if (!consumers(n.output(k)).empty() || n.output(k) == m_output)
            return failNode(i,
                            "cannot become an opaque layer: it has several outputs in use (" + reason + ")");
    auto ps = perSample(n.output(0));
    if (!ps)
        return failNode(i, "cannot become an opaque layer: its output shape is unknown (" + reason + ")");
    if (!batchAtZero(n.output(0)))
        return failNode(i, "cannot become an opaque layer: its output does not keep the batch at dim 0 (" +
                               reason + ")");
    for (auto d : *ps)
        if (d <= 0) return failNode(i, "cannot become an opaque layer: its output has an empty dimension");
    auto dt = toDType(elemOf(n.output(0)));
    if (!dt)
        return failNode(i, "cannot become an opaque layer: its output element type is not modelled (" +
                               reason + ")");
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
                                  {{"params", params},
                                   {"saved_bytes_per_sample", std::int64_t{0}},
                                   {"output_shape", *ps},
                                   {"output_dtype", std::string(dtypeName(*dt))}},
                                  values);
    for (const auto& w : inits) own(w, name);
    bind(n.output(0), name);
    m_opaque.push_back(printable(n.op_type(), 40));
    return Ok{};
}

Result<Outcome> Mapper::mapNode(int i) {
    const NodeProto& n = m_g->node(i);
    const std::string& t = n.op_type();
    const bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
    if (!defaultDomain) return unsupported("operator of domain '" + printable(n.domain(), 40) + "'");
    if (n.output_size() < 1 || n.output(0).empty()) return unsupported("no output");
    for (int k = 1; k < n.input_size(); ++k)
        if (m_batched.count(n.input(k)) && t != "Add" && t != "Sub" && t != "Mul" && t != "Div" &&
            t != "MatMul" && t != "Concat" && t != "Gather" && t != "Gemm")
            return unsupported("an activation in a parameter position");
    if (t == "Conv") return mapConv(i, false);
    if (t == "ConvTranspose") return mapConv(i, true);
    if (t == "MaxPool") return mapPool(i, true);
    if (t == "AveragePool") return mapPool(i, false);
    if (t == "GlobalAveragePool") {
        if (rankOf(n.input(0)) != 4) return unsupported("only 2-d global pooling maps");
        bind(n.output(0),
             emit(i, "", "adaptive_avgpool2d", {{"output_size", std::int64_t{1}}}, {n.input(0)}));
        return Outcome{};
    }
    if (t == "ReduceMean") return mapReduceMean(i);
    if (t == "BatchNormalization" || t == "LayerNormalization") return mapNorm(i);
    if (t == "Gemm" || t == "MatMul") return mapLinear(i);
    if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") return mapBinary(i);
    if (t == "Relu" || t == "Sigmoid" || t == "Tanh" || t == "HardSwish" || t == "LeakyRelu" || t == "Gelu" ||
        t == "Clip")
        return mapActivation(i);
    if (t == "Softmax" || t == "LogSoftmax") return mapSoftmax(i);
    if (t == "Dropout") return mapDropout(i);
    if (t == "Identity") {
        bind(n.output(0), emit(i, "", "identity", {}, {n.input(0)}));
        return Outcome{};
    }
    if (t == "Cast") {
        if (attrInt(n, "to", 0) != elemOf(n.input(0)) || elemOf(n.input(0)) == 0)
            return unsupported("changes the element type");
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

} // namespace batchfit::onnximport
