// Mapper: tensor-shaping operators (reshape, transpose, concat, gather, slice, split, reduce mean).
#include "import/layer_builder.h"
#include "import/onnx_graph_mapper.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace batchfit::onnximport {

std::optional<std::int64_t> Mapper::sampleDim(std::int64_t axis, std::optional<std::int64_t> rank,
                                              bool keepNegative) {
    if (axis < 0) {
        if (keepNegative) return axis;
        if (!rank) return std::nullopt;
        axis += *rank;
    }
    if (axis < 1 || (rank && axis >= *rank)) return std::nullopt;
    return axis - 1;
}

Result<Outcome> Mapper::mapReshapeLike(int i) {
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
    if (t == "Flatten") { // axis >= 2: [d1 * ... * d(axis-1), the rest] per sample
        auto ps = perSample(x);
        const std::int64_t axis =
            attrInt(n, "axis", 1) < 0 ? attrInt(n, "axis", 1) + rankOf(x).value_or(0) : attrInt(n, "axis", 1);
        if (!ps || axis > static_cast<std::int64_t>(ps->size()) + 1)
            return unsupported("unknown input shape");
        std::int64_t a = 1, b = 1;
        for (std::size_t k = 0; k < ps->size(); ++k)
            ((static_cast<std::int64_t>(k) < axis - 1) ? a : b) *= (*ps)[k];
        target = Shape{a, b};
    } else {
        auto outType = typeOf(n.output(0));
        if (!outType || !outType->hasShape || !fullType(n.output(0)))
            return unsupported("the output shape could not be determined (a target computed at run time?)");
        if (!batchAtZero(n.output(0)) || !batchAtZero(x))
            return unsupported("moves or merges the batch dimension");
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

Result<Outcome> Mapper::mapTranspose(int i) {
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
    if (moved.empty())
        name = emit(i, "", "identity", {}, {n.input(0)});
    else if (moved.size() == 2 && dims[moved[0]] == static_cast<std::int64_t>(moved[1]))
        name = emit(
            i, "", "transpose",
            {{"dim0", static_cast<std::int64_t>(moved[0])}, {"dim1", static_cast<std::int64_t>(moved[1])}},
            {n.input(0)});
    else
        name = emit(i, "", "permute", {{"dims", dims}}, {n.input(0)});
    bind(n.output(0), name);
    return Outcome{};
}

Result<Outcome> Mapper::mapConcat(int i) {
    const NodeProto& n = m_g->node(i);
    const auto r = rankOf(n.output(0));
    const std::int64_t axis = attrInt(n, "axis", 0);
    std::vector<std::string> values;
    std::vector<std::string> constants;
    for (const auto& in : n.input()) {
        if (m_batched.count(in))
            values.push_back(in);
        else
            constants.push_back(in);
    }
    auto d = sampleDim(axis, r, false);
    if (!d) return unsupported("concatenates along the batch dimension");
    if (constants.size() == 1 && values.size() == 1 && n.input_size() == 2 && n.input(0) == constants[0] &&
        *d == 0) {
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

Result<Outcome> Mapper::mapGather(int i) {
    const NodeProto& n = m_g->node(i);
    const bool data = m_batched.count(n.input(0)) != 0, idx = m_batched.count(n.input(1)) != 0;
    const std::int64_t axis = attrInt(n, "axis", 0);
    if (!data && idx) {
        const StaticValue* s = staticOf(n.input(0));
        const TypeInfo* wt = s && !s->root.empty() && s->root == n.input(0) ? initType(s->root) : nullptr;
        if (!wt || wt->dims.size() != 2 || axis != 0)
            return unsupported("only a lookup in a 2-d weight initializer maps (embedding)");
        AttrList a{{"num_embeddings", wt->dims[0].value}, {"embedding_dim", wt->dims[1].value}};
        auto owner = m_owner.find(s->root); // a second lookup in the same table shares its weight
        const bool tied = owner != m_owner.end() && m_layerOp.count(owner->second) &&
                          m_layerOp[owner->second] == "embedding";
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
        if (!index || index->size() != 1 || (*index)[0].kind != SVal::Known ||
            rankOf(n.input(1)).value_or(1) != 0)
            return unsupported("only a single constant index maps (select)");
        bind(n.output(0), emit(i, "", "select", {{"dim", *d}, {"index", (*index)[0].i}}, {n.input(0)}));
        return Outcome{};
    }
    return unsupported("gathers with activation indices from an activation");
}

Result<Outcome> Mapper::mapSlice(int i) {
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
    if (!starts || !ends || starts->size() != ends->size())
        return unsupported("slice bounds are not constants");
    const auto r = rankOf(n.input(0));
    auto ps = perSample(n.input(0));
    if (!r || !ps) return unsupported("unknown input shape");
    std::string value = n.input(0);
    std::string name;
    for (std::size_t k = 0; k < starts->size(); ++k) {
        std::int64_t axis =
            axes && axes->size() == starts->size() ? (*axes)[k] : static_cast<std::int64_t>(k);
        if (axis < 0) axis += *r;
        const std::int64_t step = steps && steps->size() == starts->size() ? (*steps)[k] : 1;
        if (axis < 0 || axis >= *r) return unsupported("axis out of range");
        if (step <= 0) return unsupported("negative or zero step");
        std::int64_t s = (*starts)[k], e = (*ends)[k];
        if (axis == 0) {
            if (s == 0 && e >= INT32_MAX) continue; // the whole batch
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

Result<Outcome> Mapper::mapSplit(int i) {
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
        for (std::int64_t k = 0, left = size; k < parts; ++k, left -= each)
            sizes->push_back(std::max<std::int64_t>(0, std::min(each, left)));
    }
    if (static_cast<int>(sizes->size()) != n.output_size())
        return unsupported("split sizes do not match the outputs");
    std::int64_t start = 0;
    for (int k = 0; k < n.output_size(); ++k) {
        const std::int64_t len = (*sizes)[static_cast<std::size_t>(k)];
        if (len <= 0 || start + len > size) return unsupported("bad split sizes");
        if (!n.output(k).empty() && (!consumers(n.output(k)).empty() || n.output(k) == m_output))
            bind(n.output(k),
                 emit(i, "_" + std::to_string(k), "slice",
                      {{"dim", axis - 1}, {"start", start}, {"end", start + len}}, {n.input(0)}));
        start += len;
    }
    return Outcome{};
}

Result<Outcome> Mapper::mapReduceMean(int i) {
    const NodeProto& n = m_g->node(i);
    const auto r = rankOf(n.input(0));
    std::optional<std::vector<std::int64_t>> axes = attrInts(n, "axes");
    if (!axes && n.input_size() >= 2 && !n.input(1).empty()) axes = staticInts(n.input(1));
    if (!r || *r != 4 || !axes || axes->size() != 2)
        return unsupported("only a mean over H and W of [N,C,H,W] maps");
    std::vector<std::int64_t> ax = *axes;
    for (auto& a : ax)
        if (a < 0) a += 4;
    std::sort(ax.begin(), ax.end());
    if (ax != std::vector<std::int64_t>{2, 3})
        return unsupported("only a mean over H and W of [N,C,H,W] maps");
    std::string name = emit(i, "", "adaptive_avgpool2d", {{"output_size", std::int64_t{1}}}, {n.input(0)});
    if (!attrInt(n, "keepdims", 1))
        name = emitLayers(uniqueName(baseName(i) + "_flatten"), "flatten", {}, {name});
    bind(n.output(0), name);
    return Outcome{};
}

} // namespace batchfit::onnximport
