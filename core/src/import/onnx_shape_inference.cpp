// Mapper: shape propagation, node by node in topological order (inferNode holds the per-operator rules).
//
// libonnx's InferShapes segfaults on malformed graphs (a ConvTranspose whose weight rank differs from its
// input's, a Gemm of a scalar: onnx/onnx#6180, #6185), so shapes are propagated here, node by node, with
// every rank and attribute checked before use. Unknown results stay unknown (or take the file's value_info).
#include "import/onnx_graph_mapper.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace batchfit::onnximport {

Dim Mapper::windowDim(const Dim& in, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t pb,
                      std::int64_t pe, const std::string& autoPad, bool ceil) {
    if (!in.known() || k <= 0 || s <= 0 || d <= 0 || k > kMaxDim || s > kMaxDim || d > kMaxDim) return {};
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") return {(in.value + s - 1) / s, {}};
    if (autoPad == "VALID") pb = pe = 0;
    if (pb < 0 || pe < 0 || pb > kMaxDim || pe > kMaxDim) return {};
    const std::int64_t span = in.value + pb + pe - d * (k - 1) - 1;
    if (span < 0) return {};
    return {(ceil ? (span + s - 1) / s : span / s) + 1, {}};
}

Status Mapper::inferNode(int i, std::vector<std::optional<TypeInfo>>& out) {
    const NodeProto& n = m_g->node(i);
    const std::string& t = n.op_type();
    out.assign(static_cast<std::size_t>(n.output_size()), std::nullopt);
    if (out.empty()) return Ok{};
    const TypeInfo* x = shaped(n, 0);
    const int elem0 = n.input_size() >= 1 && typeOf(n.input(0)) ? typeOf(n.input(0))->elem : 0;
    const std::int64_t r = x ? static_cast<std::int64_t>(x->dims.size()) : -1;
    const Dim batchDim = m_batchDim;
    static const std::set<std::string> kUnary = {"Relu",
                                                 "Sigmoid",
                                                 "Tanh",
                                                 "HardSwish",
                                                 "LeakyRelu",
                                                 "Erf",
                                                 "Sqrt",
                                                 "Exp",
                                                 "Log",
                                                 "Neg",
                                                 "Abs",
                                                 "Softplus",
                                                 "Softsign",
                                                 "Elu",
                                                 "Selu",
                                                 "Celu",
                                                 "HardSigmoid",
                                                 "Mish",
                                                 "Identity",
                                                 "Clip",
                                                 "Softmax",
                                                 "LogSoftmax",
                                                 "Gelu",
                                                 "Floor",
                                                 "Ceil",
                                                 "Round",
                                                 "Reciprocal",
                                                 "Sin",
                                                 "Cos",
                                                 "Not",
                                                 "Sign",
                                                 "InstanceNormalization",
                                                 "LRN",
                                                 "ThresholdedRelu",
                                                 "Hardmax",
                                                 "CumSum",
                                                 "Dropout",
                                                 "Cast",
                                                 "BatchNormalization",
                                                 "LayerNormalization",
                                                 "IsNaN",
                                                 "IsInf",
                                                 "Shrink",
                                                 "PRelu"};
    static const std::set<std::string> kCompare = {"Equal",          "Less", "Greater", "LessOrEqual",
                                                   "GreaterOrEqual", "And",  "Or",      "Xor"};
    static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div",  "Pow",   "Mod",
                                                  "Max", "Min", "Sum", "Mean", "Where", "BitShift"};
    if (t == "Constant") {
        if (const AttributeProto* a = findAttr(n, "value"); a && a->has_t()) {
            std::vector<Dim> dims;
            for (auto d : a->t().dims()) dims.push_back({d, {}});
            out[0] = shapedType(a->t().data_type(), dims);
        } else if (findAttr(n, "value_int"))
            out[0] = shapedType(TensorProto::INT64, {});
        else if (findAttr(n, "value_float"))
            out[0] = shapedType(TensorProto::FLOAT, {});
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
        } else
            out[0] = shapedType(TensorProto::INT64, {Dim{}});
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
        int elem =
            t == "Where" && n.input_size() > 1 && typeOf(n.input(1)) ? typeOf(n.input(1))->elem : elem0;
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
        if (auto k = attrInts(n, "kernel_shape"))
            kernel = *k;
        else if (conv)
            for (std::size_t k = 2; k < w->dims.size(); ++k) kernel.push_back(w->dims[k].value);
        const auto strides = attrInts(n, "strides"), dil = attrInts(n, "dilations"),
                   pads = attrInts(n, "pads");
        if (kernel.size() != sp || (strides && strides->size() != sp) || (dil && dil->size() != sp) ||
            (pads && pads->size() != 2 * sp))
            return Ok{};
        const std::string autoPad = attrString(n, "auto_pad", "NOTSET");
        const bool ceil = attrInt(n, "ceil_mode", 0) != 0;
        std::vector<Dim> dims{x->dims[0]};
        if (t == "Conv")
            dims.push_back(w->dims[0]);
        else if (t == "ConvTranspose") {
            const std::int64_t g = attrInt(n, "group", 1);
            std::int64_t c = -1;
            if (w->dims[1].known() && g > 0 && !__builtin_mul_overflow(w->dims[1].value, g, &c) &&
                c <= kMaxDim)
                dims.push_back({c, {}});
            else
                dims.push_back({});
        } else
            dims.push_back(x->dims[1]);
        const auto outShape = attrInts(n, "output_shape"), outPad = attrInts(n, "output_padding");
        if (t == "ConvTranspose" &&
            ((outShape && outShape->size() != sp) || (outPad && outPad->size() != sp)))
            return Ok{};
        for (std::size_t k = 0; k < sp; ++k) {
            const std::int64_t s = strides ? (*strides)[k] : 1, d = dil ? (*dil)[k] : 1;
            const std::int64_t pb = pads ? (*pads)[k] : 0, pe = pads ? (*pads)[k + sp] : 0;
            const Dim& in = x->dims[k + 2];
            if (t != "ConvTranspose") {
                dims.push_back(windowDim(in, kernel[k], s, d, pb, pe, autoPad, ceil));
                continue;
            }
            if (outShape) {
                dims.push_back((*outShape)[k] > 0 && (*outShape)[k] <= kMaxDim ? Dim{(*outShape)[k], {}}
                                                                               : Dim{});
                continue;
            }
            const std::int64_t op = outPad ? (*outPad)[k] : 0;
            if (!in.known() || s <= 0 || d <= 0 || s > kMaxDim || d > kMaxDim || kernel[k] <= 0 ||
                kernel[k] > kMaxDim || op < 0 || op > kMaxDim || pb < 0 || pe < 0 || pb > kMaxDim ||
                pe > kMaxDim) {
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
        if (k1.known() && k2.known() && k1.value != k2.value)
            return failNode(i, "the inner dimensions differ");
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
            if (e.kind == SVal::Batch)
                dims.push_back(batchDim);
            else if (e.kind == SVal::Unknown)
                dims.push_back({});
            else if (e.i == 0 && !allowZero) {
                if (k >= x->dims.size()) return Ok{};
                dims.push_back(x->dims[k]);
            } else if (e.i == -1) {
                if (minusOne >= 0) return Ok{};
                minusOne = static_cast<int>(k);
                dims.push_back({});
            } else if (e.i > 0 && e.i <= kMaxDim)
                dims.push_back({e.i, {}});
            else
                return Ok{};
        }
        if (minusOne >= 0) { // sizes cancel: known products divide, symbols must match one for one
            std::multiset<std::string> symIn, symOut;
            std::int64_t pin = 1, pout = 1;
            bool ok = true;
            for (const auto& d : x->dims) {
                if (d.known())
                    ok = ok && !__builtin_mul_overflow(pin, d.value, &pin) &&
                         pin <= static_cast<std::int64_t>(kMaxElements);
                else if (!d.param.empty())
                    symIn.insert(d.param);
                else
                    ok = false;
            }
            for (std::size_t k = 0; k < dims.size(); ++k) {
                if (static_cast<int>(k) == minusOne) continue;
                const Dim& d = dims[k];
                if (d.known())
                    ok = ok && !__builtin_mul_overflow(pout, d.value, &pout);
                else if (!d.param.empty()) {
                    auto it = symIn.find(d.param);
                    if (it == symIn.end())
                        ok = false;
                    else
                        symIn.erase(it);
                } else
                    ok = false;
            }
            (void)symOut;
            if (ok && pout > 0 && pin % pout == 0) {
                const std::int64_t q = pin / pout;
                if (symIn.empty())
                    dims[static_cast<std::size_t>(minusOne)] = {q, {}};
                else if (symIn.size() == 1 && q == 1)
                    dims[static_cast<std::size_t>(minusOne)] = {-1, *symIn.begin()};
            }
        }
        out[0] = shapedType(elem0, dims);
        return Ok{};
    }
    if (t == "Transpose") {
        if (!x) return Ok{};
        std::vector<std::int64_t> perm;
        if (auto p = attrInts(n, "perm"))
            perm = *p;
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
        for (std::int64_t k = 0; k < outRank; ++k)
            dims.push_back(inserted[static_cast<std::size_t>(k)] ? Dim{1, {}} : x->dims[src++]);
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
            if (static_cast<std::int64_t>(s->dims.size()) != r)
                return failNode(i, "concatenates tensors of different ranks");
            const Dim& d = s->dims[static_cast<std::size_t>(*axis)];
            if (cat.known() && d.known() && !__builtin_add_overflow(cat.value, d.value, &cat.value) &&
                cat.value <= kMaxDim)
                continue;
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
            for (std::int64_t k = 0, left = d.value; k < parts; ++k, left -= each)
                sizes->push_back(std::clamp<std::int64_t>(left, 0, each));
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
            if (e.kind == SVal::Batch)
                want.push_back(batchDim);
            else if (e.kind == SVal::Known && e.i >= 0 && e.i <= kMaxDim)
                want.push_back({e.i, {}});
            else
                want.push_back({});
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
            dims.push_back(e.kind == SVal::Batch                                 ? batchDim
                           : e.kind == SVal::Known && e.i >= 0 && e.i <= kMaxDim ? Dim{e.i, {}}
                                                                                 : Dim{});
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
            if (count <= static_cast<double>(kMaxDim))
                len = {static_cast<std::int64_t>(std::max(count, 0.0)), {}};
        }
        out[0] = shapedType(elem0, {len});
        return Ok{};
    }
    if (t.rfind("Reduce", 0) == 0 || t == "ArgMax" || t == "ArgMin") {
        if (!x) return Ok{};
        const bool arg = t == "ArgMax" || t == "ArgMin";
        std::optional<std::vector<std::int64_t>> axes;
        if (arg)
            axes = std::vector<std::int64_t>{attrInt(n, "axis", 0)};
        else
            axes = intsArg(n, "axes", 1);
        const bool keep = attrInt(n, "keepdims", 1) != 0;
        std::vector<bool> red(static_cast<std::size_t>(r), !axes || axes->empty());
        if (axes && axes->empty() && attrInt(n, "noop_with_empty_axes", 0))
            std::fill(red.begin(), red.end(), false);
        if (!axes && n.input_size() >= 2 && !n.input(1).empty()) return Ok{}; // axes computed at run time
        if (axes)
            for (auto a : *axes) {
                auto k = normAxis(a, r);
                if (!k) return Ok{};
                red[static_cast<std::size_t>(*k)] = true;
            }
        std::vector<Dim> dims;
        for (std::int64_t k = 0; k < r; ++k) {
            if (!red[static_cast<std::size_t>(k)])
                dims.push_back(x->dims[static_cast<std::size_t>(k)]);
            else if (keep)
                dims.push_back({1, {}});
        }
        out[0] = shapedType(arg ? TensorProto::INT64 : elem0, dims);
        return Ok{};
    }
    if (t == "Pad") {
        if (!x) return Ok{};
        auto pads = intsArg(n, "pads", 1);
        if (!pads || static_cast<std::int64_t>(pads->size()) != 2 * r ||
            (n.input_size() >= 4 && !n.input(3).empty()))
            return Ok{};
        std::vector<Dim> dims = x->dims;
        for (std::int64_t k = 0; k < r; ++k) {
            Dim& d = dims[static_cast<std::size_t>(k)];
            const std::int64_t pb = (*pads)[static_cast<std::size_t>(k)],
                               pe = (*pads)[static_cast<std::size_t>(k + r)];
            if (pb == 0 && pe == 0) continue;
            if (!d.known() || std::llabs(pb) > kMaxDim || std::llabs(pe) > kMaxDim || d.value + pb + pe < 0)
                d = Dim{};
            else
                d = Dim{d.value + pb + pe, {}};
        }
        out[0] = shapedType(elem0, dims);
        return Ok{};
    }
    if (t == "Resize" || t == "Upsample") {
        if (!x) return Ok{};
        std::optional<std::vector<SVal>> scales, sizes;
        if (t == "Upsample")
            scales = n.input_size() >= 2 ? staticData(n.input(1)) : std::nullopt;
        else {
            if (n.input_size() >= 3 && !n.input(2).empty() && m_opset >= 11)
                scales = staticData(n.input(2));
            else if (n.input_size() >= 2 && !n.input(1).empty() && m_opset < 11)
                scales = staticData(n.input(1));
            if (n.input_size() >= 4 && !n.input(3).empty()) sizes = staticData(n.input(3));
        }
        std::vector<Dim> dims = x->dims;
        if (sizes && static_cast<std::int64_t>(sizes->size()) == r) {
            for (std::int64_t k = 0; k < r; ++k) {
                const SVal& e = (*sizes)[static_cast<std::size_t>(k)];
                dims[static_cast<std::size_t>(k)] = e.kind == SVal::Known && e.i >= 0 && e.i <= kMaxDim
                                                        ? Dim{e.i, {}}
                                                    : e.kind == SVal::Batch ? batchDim
                                                                            : Dim{};
            }
        } else if (scales && static_cast<std::int64_t>(scales->size()) == r) {
            for (std::int64_t k = 0; k < r; ++k) {
                const SVal& e = (*scales)[static_cast<std::size_t>(k)];
                Dim& d = dims[static_cast<std::size_t>(k)];
                if (e.kind == SVal::Known && e.d == 1.0) continue;
                const double v =
                    d.known() && e.kind == SVal::Known ? std::floor(static_cast<double>(d.value) * e.d) : -1;
                d = v >= 0 && v <= static_cast<double>(kMaxDim) ? Dim{static_cast<std::int64_t>(v), {}}
                                                                : Dim{};
            }
        } else
            return Ok{};
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
            d = d.known() && rep >= 0 && !__builtin_mul_overflow(d.value, rep, &v) && v <= kMaxDim
                    ? Dim{v, {}}
                    : Dim{};
        }
        out[0] = shapedType(elem0, dims);
        return Ok{};
    }
    return Ok{};
}

Status Mapper::propagate() {
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

} // namespace batchfit::onnximport
