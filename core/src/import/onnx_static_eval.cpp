// Mapper: constants and the small evaluator of shape arithmetic over them.
#include "import/onnx_graph_mapper.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace batchfit::onnximport {

const StaticValue* Mapper::staticOf(const std::string& v) {
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

bool Mapper::isStatic(const std::string& v) {
    return !v.empty() && !m_batched.count(v) && staticOf(v) != nullptr;
}

std::optional<std::vector<SVal>> Mapper::staticData(const std::string& v) {
    const StaticValue* s = staticOf(v);
    if (!s || !s->hasData) return std::nullopt;
    return s->v;
}

std::optional<std::vector<std::int64_t>> Mapper::staticInts(const std::string& v) {
    auto d = staticData(v);
    if (!d) return std::nullopt;
    std::vector<std::int64_t> out;
    for (const auto& e : *d) {
        if (e.kind != SVal::Known) return std::nullopt;
        out.push_back(e.i);
    }
    return out;
}

std::optional<double> Mapper::staticScalar(const std::string& v) {
    auto d = staticData(v);
    if (!d || d->size() != 1 || (*d)[0].kind != SVal::Known) return std::nullopt;
    return (*d)[0].d;
}

void Mapper::setStatic(const std::string& name, StaticValue v) {
    if (!name.empty()) m_static[name] = std::move(v);
}

void Mapper::evalStatic(int i) {
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
                if (k == 0 && batched)
                    out.v.push_back({SVal::Batch, 0, 0});
                else if (d.known())
                    out.v.push_back(SVal::known(d.value));
                else
                    out.v.push_back({});
            }
            out.hasData = true;
        }
    } else if (op == "Identity" || op == "Cast" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" ||
               op == "Flatten" || op == "Expand" || op == "Transpose") {
        if (auto d = in(0)) {
            out.v = std::move(*d);
            out.hasData = op != "Expand" && op != "Transpose"; // values kept only where order and count hold
            if (op == "Cast") {
                const std::int64_t to = attrInt(n, "to", 0);
                const bool integral = to == TensorProto::INT64 || to == TensorProto::INT32 ||
                                      to == TensorProto::INT16 || to == TensorProto::INT8 ||
                                      to == TensorProto::UINT8 || to == TensorProto::BOOL;
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
            if (!v || v->size() != 1)
                shape.reset();
            else
                fill = (*v)[0];
        }
        std::uint64_t count = 1;
        if (shape)
            for (auto d : *shape)
                if (d < 0 || __builtin_mul_overflow(count, static_cast<std::uint64_t>(d), &count) ||
                    count > kMaxStaticElements) {
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
                if (a.kind == SVal::Known && b.kind == SVal::Known)
                    out.v.push_back(SVal::known(a.d == b.d));
                else if (a.kind == SVal::Batch && b.kind == SVal::Known && b.i < 0)
                    out.v.push_back(SVal::known(0));
                else
                    out.v.push_back({});
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
                    if (op == "Add")
                        ok = ok && !__builtin_add_overflow(x.i, y.i, &ri);
                    else if (op == "Sub")
                        ok = ok && !__builtin_sub_overflow(x.i, y.i, &ri);
                    else if (op == "Mul")
                        ok = ok && !__builtin_mul_overflow(x.i, y.i, &ri);
                    else
                        ok = ok && y.i != 0 && !(x.i == INT64_MIN && y.i == -1) && (ri = x.i / y.i, true);
                    if (ok)
                        r = SVal::known(ri);
                    else {
                        const double v = op == "Add"   ? x.d + y.d
                                         : op == "Sub" ? x.d - y.d
                                         : op == "Mul" ? x.d * y.d
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

} // namespace batchfit::onnximport
