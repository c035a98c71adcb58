// Mapper: operators with their own layers (conv, pooling, norms, linear, elementwise, activations, softmax).
#include "import/layer_builder.h"
#include "import/onnx_graph_mapper.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace batchfit::onnximport {

std::optional<std::vector<std::int64_t>> Mapper::padding(const NodeProto& n, const std::string& x,
                                                         const std::vector<std::int64_t>& kernel,
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
            const std::int64_t total =
                std::max<std::int64_t>((o - 1) * s + dilations[k] * (kernel[k] - 1) + 1 - in, 0);
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

std::vector<std::int64_t> Mapper::intsOr(const std::optional<std::vector<std::int64_t>>& v, std::size_t d,
                                         std::int64_t def) {
    return v && v->size() == d ? *v : std::vector<std::int64_t>(d, def);
}

const TypeInfo* Mapper::initType(const std::string& v) {
    if (!m_inits.count(v)) return nullptr;
    auto it = m_types.find(v);
    return it == m_types.end() ? nullptr : &it->second;
}

Result<Outcome> Mapper::mapConv(int i, bool transposed) {
    const NodeProto& n = m_g->node(i);
    const TypeInfo* w = n.input_size() >= 2 ? initType(n.input(1)) : nullptr;
    if (!m_batched.count(n.input(0))) return unsupported("the data input is a constant");
    if (!w) return unsupported("the weight is not an initializer");
    const std::size_t spatial = w->dims.size() >= 2 ? w->dims.size() - 2 : 0;
    if (spatial < 1 || spatial > 3 || (transposed && spatial != 2))
        return unsupported(std::to_string(spatial) + "-d " + (transposed ? "transposed " : "") +
                           "convolution");
    std::vector<std::int64_t> kernel;
    for (std::size_t k = 2; k < w->dims.size(); ++k) kernel.push_back(w->dims[k].value);
    const std::int64_t group = attrInt(n, "group", 1);
    const auto strides = intsOr(attrInts(n, "strides"), spatial, 1);
    const auto dil = intsOr(attrInts(n, "dilations"), spatial, 1);
    auto pad = padding(n, n.input(0), kernel, strides, dil);
    if (!pad) return unsupported("asymmetric padding");
    if (transposed && findAttr(n, "output_shape")) return unsupported("output_shape");
    std::int64_t outC = w->dims[0].value;
    if (transposed && __builtin_mul_overflow(w->dims[1].value, group, &outC))
        return unsupported("channels overflow");
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

Result<Outcome> Mapper::mapPool(int i, bool max) {
    const NodeProto& n = m_g->node(i);
    if (rankOf(n.input(0)) != 4) return unsupported("only 2-d pooling maps");
    auto kernel = attrInts(n, "kernel_shape");
    if (!kernel || kernel->size() != 2) return unsupported("kernel_shape is not 2-d");
    const auto strides = intsOr(attrInts(n, "strides"), 2, 1);
    const auto dil = intsOr(attrInts(n, "dilations"), 2, 1);
    auto pad = padding(n, n.input(0), *kernel, strides, dil);
    if (!pad) return unsupported("asymmetric padding");
    if (max && n.output_size() > 1 && !consumers(n.output(1)).empty())
        return unsupported("the indices output is used");
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

Result<Outcome> Mapper::mapNorm(int i) {
    const NodeProto& n = m_g->node(i);
    const std::string& t = n.op_type();
    if (!m_batched.count(n.input(0))) return unsupported("the data input is a constant");
    for (int k = 1; k < n.input_size(); ++k)
        if (!n.input(k).empty() && !m_inits.count(n.input(k)))
            return unsupported("a parameter is not an initializer");
    const auto r = rankOf(n.input(0));
    if (!r) return unsupported("unknown input rank");
    if (t == "BatchNormalization") {
        for (int k = 1; k < n.output_size(); ++k)
            if (!consumers(n.output(k)).empty())
                return unsupported("the running statistics outputs are used");
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

Result<Outcome> Mapper::mapLinear(int i) {
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
    if (!tied) own(w->root, name); // a second, untied use is counted twice (noted)
    if (bias) own(n.input(2), name);
    bind(n.output(0), name);
    return Outcome{};
}

Result<Outcome> Mapper::mapBinary(int i) {
    const NodeProto& n = m_g->node(i);
    const std::string& t = n.op_type();
    if (n.input_size() != 2) return unsupported("expects two inputs");
    const bool a = m_batched.count(n.input(0)) != 0, b = m_batched.count(n.input(1)) != 0;
    if (a && b) {
        bind(n.output(0),
             emit(i, "", t == "Add" || t == "Sub" ? "add" : "mul", {}, {n.input(0), n.input(1)}));
        return Outcome{};
    }
    const std::string x = a ? n.input(0) : n.input(1), c = a ? n.input(1) : n.input(0);
    auto psx = perSample(x), pso = perSample(n.output(0));
    if (!psx || !pso) return unsupported("the shapes could not be determined");
    if (*psx != *pso) return unsupported("a constant operand broadcasts the activation to a new shape");
    if (t == "Div" && !a) return unsupported("a constant divided by an activation");
    const StaticValue* s = staticOf(c);
    auto scalar = staticScalar(c);
    const bool param = s && !s->root.empty() && s->root == c && toDType(elemOf(c)) &&
                       isFloating(*toDType(elemOf(c))) && tensorNumel(*m_inits.at(c)).value_or(0) > 1;
    if ((t == "Add" || t == "Sub") && param && !m_owner.count(c)) {
        // A learned tensor added to the activation (ViT's position embedding): exact when it holds one
        // sample.
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

Result<Outcome> Mapper::mapActivation(int i) {
    const NodeProto& n = m_g->node(i);
    const std::string& t = n.op_type();
    std::string type;
    AttrList a;
    if (t == "Relu")
        type = "relu";
    else if (t == "Sigmoid")
        type = "sigmoid";
    else if (t == "Tanh")
        type = "tanh";
    else if (t == "HardSwish")
        type = "hardswish";
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
        if (lo && *lo == 0.0 && hi && *hi == 6.0)
            type = "relu6";
        else if (lo && *lo == 0.0 && !hi)
            type = "relu";
        else
            return unsupported("only Clip(0, 6) (relu6) and Clip(0) (relu) map");
    }
    bind(n.output(0), emit(i, "", type, a, {n.input(0)}));
    return Outcome{};
}

Result<Outcome> Mapper::mapSoftmax(int i) {
    const NodeProto& n = m_g->node(i);
    const auto r = rankOf(n.input(0));
    std::int64_t axis = attrInt(n, "axis", m_opset >= 13 ? -1 : 1);
    if (m_opset < 13) { // softmax over the flattened trailing dims: the same as dim -1 only at the last axis
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

Result<Outcome> Mapper::mapDropout(int i) {
    const NodeProto& n = m_g->node(i);
    if (n.output_size() > 1 && !consumers(n.output(1)).empty()) return unsupported("the mask output is used");
    double p = 0.5;
    if (m_opset < 12)
        p = attrFloat(n, "ratio", 0.5);
    else if (n.input_size() >= 2 && !n.input(1).empty()) {
        auto r = staticScalar(n.input(1));
        if (!r) return unsupported("the ratio is not a constant");
        p = *r;
    }
    if (!(p >= 0.0 && p < 1.0)) return unsupported("ratio " + std::to_string(p) + " is outside [0, 1)");
    bind(n.output(0), emit(i, "", "dropout", {{"p", tidy(p)}}, {n.input(0)}));
    return Outcome{};
}

} // namespace batchfit::onnximport
