// Mapper: value types read from the file, and queries on the propagated types (rank, per-sample shape, ...).
#include "import/onnx_graph_mapper.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace batchfit::onnximport {

TypeInfo Mapper::typeFrom(const TypeProto& tp) {
    TypeInfo t;
    if (!tp.has_tensor_type()) return t;
    const auto& tt = tp.tensor_type();
    t.elem = tt.elem_type();
    if (tt.has_shape()) {
        t.hasShape = true;
        for (const auto& d : tt.shape().dim()) {
            Dim x;
            if (d.has_dim_value())
                x.value = d.dim_value();
            else if (d.has_dim_param())
                x.param = d.dim_param();
            t.dims.push_back(std::move(x));
        }
    }
    return t;
}

void Mapper::initTypes() {
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

const TypeInfo* Mapper::typeOf(const std::string& v) const {
    auto it = m_types.find(v);
    return it == m_types.end() ? nullptr : &it->second;
}

const TypeInfo* Mapper::shaped(const NodeProto& n, int k) const {
    if (k >= n.input_size() || n.input(k).empty()) return nullptr;
    const TypeInfo* t = typeOf(n.input(k));
    return t && t->hasShape ? t : nullptr;
}

bool Mapper::sameDim(const Dim& a, const Dim& b) {
    if (a.known() || b.known()) return a.value == b.value;
    return !a.param.empty() && a.param == b.param;
}

TypeInfo Mapper::shapedType(int elem, std::vector<Dim> dims) {
    TypeInfo t;
    t.elem = elem;
    t.hasShape = true;
    t.dims = std::move(dims);
    return t;
}

std::optional<std::int64_t> Mapper::normAxis(std::int64_t axis, std::int64_t rank) {
    if (axis < -rank || axis >= rank) return std::nullopt;
    return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<std::int64_t>> Mapper::intsArg(const NodeProto& n, const char* attr, int input) {
    if (auto a = attrInts(n, attr)) return a;
    if (input < n.input_size() && !n.input(input).empty()) return staticInts(n.input(input));
    return std::nullopt;
}

std::optional<std::vector<Dim>> Mapper::broadcastDims(const std::vector<const std::vector<Dim>*>& shapes) {
    std::size_t r = 0;
    for (const auto* s : shapes) r = std::max(r, s->size());
    std::vector<Dim> out(r, Dim{1, {}});
    for (const auto* s : shapes) {
        for (std::size_t k = 0; k < s->size(); ++k) {
            Dim& o = out[r - s->size() + k];
            const Dim& d = (*s)[k];
            if (d.known() && d.value == 1) continue;
            if (o.known() && o.value == 1)
                o = d;
            else if (d.known() && o.known()) {
                if (d.value != o.value) return std::nullopt;
            } else if (!sameDim(o, d)) {
                if (d.known())
                    o = d; // a known size > 1 wins over a symbol (which must equal it)
                else if (!o.known())
                    o = Dim{};
            }
        }
    }
    return out;
}

std::optional<TypeInfo> Mapper::fullType(const std::string& v) const {
    auto it = m_types.find(v);
    if (it == m_types.end() || !it->second.hasShape || it->second.dims.empty()) return std::nullopt;
    for (std::size_t k = 1; k < it->second.dims.size(); ++k)
        if (!it->second.dims[k].known()) return std::nullopt;
    return it->second;
}

bool Mapper::batchAtZero(const std::string& v) const {
    const TypeInfo* t = typeOf(v);
    return t && t->hasShape && !t->dims.empty() && sameDim(t->dims[0], m_batchDim);
}

std::optional<Shape> Mapper::perSample(const std::string& v) const {
    auto t = fullType(v);
    if (!t) return std::nullopt;
    Shape s;
    for (std::size_t k = 1; k < t->dims.size(); ++k) s.push_back(t->dims[k].value);
    return s;
}

std::optional<std::int64_t> Mapper::rankOf(const std::string& v) const {
    auto it = m_types.find(v);
    if (it == m_types.end() || !it->second.hasShape) return std::nullopt;
    return static_cast<std::int64_t>(it->second.dims.size());
}

int Mapper::elemOf(const std::string& v) const {
    auto it = m_types.find(v);
    return it == m_types.end() ? 0 : it->second.elem;
}

} // namespace batchfit::onnximport
