// Views and copies: flatten, reshape, transpose, permute, select, slice, contiguous, identity, cast, split.
// Views share their input's storage and save nothing; select/slice backward allocate a zero-filled
// input-sized gradient (select_backward / slice_backward).
#include "ops/op_rule.h"

#include <algorithm>

namespace batchfit {
namespace {

Result<std::size_t> dimIndex(const OpContext& c, std::int64_t dim, std::int64_t rank,
                             const std::string& what) {
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank)
        return c.fail(what + " " + std::to_string(dim) + " is out of range for per-sample shape " + c.in());
    return static_cast<std::size_t>(dim);
}

OpPlan viewPlan(const TensorInfo& in, Shape shape, bool contiguous) {
    OpPlan p;
    p.outputs.push_back({std::move(shape), in.dtype, in.batched, contiguous});
    p.alias = Alias::View;
    p.grad = GradKind::Passthrough;
    return p;
}

/// reshape semantics: a view of a contiguous input, else a copy.
OpPlan reshapePlan(const TensorInfo& in, Shape shape) {
    if (in.contiguous) return viewPlan(in, std::move(shape), true);
    OpPlan p;
    p.outputs.push_back({std::move(shape), in.dtype, in.batched, true});
    p.grad = GradKind::Passthrough;
    return p;
}

class FlattenRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        const auto rank = in.rank();
        auto s = dimIndex(c, c.attrs.getInt("start_dim").value_or(0), rank, "start_dim");
        if (!s) return s.error();
        auto e = dimIndex(c, c.attrs.getInt("end_dim").value_or(-1), rank, "end_dim");
        if (!e) return e.error();
        if (*e < *s) return c.fail("flatten: end_dim before start_dim");
        Shape out(in.shape.begin(), in.shape.begin() + static_cast<std::ptrdiff_t>(*s));
        std::int64_t n = 1;
        for (std::size_t i = *s; i <= *e; ++i) n *= in.shape[i];
        out.push_back(n);
        out.insert(out.end(), in.shape.begin() + static_cast<std::ptrdiff_t>(*e) + 1, in.shape.end());
        return reshapePlan(in, out);
    }
};

class ReshapeRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        auto shape = c.attrs.getInts("shape", 0);
        if (!shape || shape->empty()) return c.fail("reshape needs 'shape' (a per-sample integer list)");
        const std::uint64_t total = shapeNumel(in.shape).value_or(0);
        std::uint64_t known = 1;
        int inferred = -1;
        for (std::size_t i = 0; i < shape->size(); ++i) {
            const auto d = (*shape)[i];
            if (d == -1 && inferred < 0)
                inferred = static_cast<int>(i);
            else if (d <= 0)
                return c.fail("reshape: bad dimension " + std::to_string(d) + " in " + shapeToString(*shape));
            else if (__builtin_mul_overflow(known, static_cast<std::uint64_t>(d), &known))
                return c.fail("reshape: cannot view " + c.in() + " as " + shapeToString(*shape));
            if (known > total) break;
        }
        Shape out = *shape;
        if (inferred >= 0) {
            if (known == 0 || total % known)
                return c.fail("reshape: cannot view " + c.in() + " as " + shapeToString(*shape));
            out[static_cast<std::size_t>(inferred)] = static_cast<std::int64_t>(total / known);
        } else if (known != total) {
            return c.fail("reshape: " + c.in() + " has " + std::to_string(total) + " elements per sample, " +
                          shapeToString(*shape) + " has " + std::to_string(known));
        }
        // "view": true - the input's memory is already in this order although its layout flag says otherwise
        // (an SDPA output [H, S, D] transposed back to [S, H, D] is the kernel's [S, H, D] storage); written
        // by the exporter when the traced reshape shared its input's storage.
        if (c.flag("view", false)) return viewPlan(in, std::move(out), true);
        // "strided_view": true - a view that keeps its input's strides (a head split's part seen as
        // [S, H*d], as DeepSeek's v is): still not contiguous, so a kernel that needs it dense copies it
        if (c.flag("strided_view", false)) return viewPlan(in, std::move(out), false);
        return reshapePlan(in, out);
    }
};

class TransposeRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (!c.attrs.has("dim0") || !c.attrs.has("dim1")) return c.fail("transpose needs 'dim0' and 'dim1'");
        auto a = dimIndex(c, c.attrs.getInt("dim0").value_or(0), in.rank(), "dim0");
        if (!a) return a.error();
        auto b = dimIndex(c, c.attrs.getInt("dim1").value_or(0), in.rank(), "dim1");
        if (!b) return b.error();
        Shape out = in.shape;
        std::swap(out[*a], out[*b]);
        return viewPlan(in, out, *a == *b || (in.contiguous && (in.shape[*a] == 1 || in.shape[*b] == 1)));
    }
};

class PermuteRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        auto dims = c.attrs.getInts("dims", 0);
        if (!dims || static_cast<std::int64_t>(dims->size()) != in.rank())
            return c.fail("permute needs 'dims', a permutation of the " + std::to_string(in.rank()) +
                          " per-sample dims of " + c.in());
        Shape out;
        std::vector<bool> seen(dims->size(), false);
        bool identity = true;
        for (std::size_t i = 0; i < dims->size(); ++i) {
            auto d = dimIndex(c, (*dims)[i], in.rank(), "dim");
            if (!d) return d.error();
            if (seen[*d]) return c.fail("permute: dims repeat a dimension");
            seen[*d] = true;
            identity = identity && *d == i;
            out.push_back(in.shape[*d]);
        }
        return viewPlan(in, out, identity && in.contiguous);
    }
};

class SelectRule : public OpRule {
public:
    explicit SelectRule(bool slice) : m_slice(slice) {}
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (!c.attrs.has("dim")) return c.fail("missing attribute 'dim'");
        auto d = dimIndex(c, c.attrs.getInt("dim").value_or(0), in.rank(), "dim");
        if (!d) return d.error();
        const std::int64_t size = in.shape[*d];
        Shape out = in.shape;
        if (!m_slice) {
            auto idx = c.attrs.getInt("index");
            if (!idx || *idx < -size || *idx >= size)
                return c.fail("select: index must be in [" + std::to_string(-size) + ", " +
                              std::to_string(size) + ") for " + c.in());
            out.erase(out.begin() + static_cast<std::ptrdiff_t>(*d));
        } else {
            std::int64_t start = c.attrs.getInt("start").value_or(0),
                         end = c.attrs.getInt("end").value_or(size);
            const std::int64_t step = c.attrs.getInt("step").value_or(1);
            if (start < 0) start += size;
            if (end < 0) end += size;
            start = std::clamp<std::int64_t>(start, 0, size);
            end = std::clamp<std::int64_t>(end, 0, size);
            if (step <= 0 || end <= start) return c.fail("slice: empty or backwards range on " + c.in());
            out[*d] =
                (end - start - 1) / step + 1; // ceil((end - start) / step) without overflow for a huge step
        }
        OpPlan p;
        p.outputs.push_back({out, in.dtype, in.batched, false});
        p.alias = Alias::View;
        return p; // backward: a zero-filled gradient of the input's size
    }

private:
    bool m_slice;
};

class ContiguousRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        // copy: a new tensor even from a contiguous input (x.clone(), torch.cat([empty, x]))
        if (in.contiguous && !c.flag("copy", false)) return viewPlan(in, in.shape, true);
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        p.grad = GradKind::Passthrough;
        return p;
    }
};

class IdentityRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        return viewPlan(c.inputs[0], c.inputs[0].shape, c.inputs[0].contiguous);
    }
};

/// x.to(dtype), x.float(), x.type_as(y): a new tensor of the dtype ('dtype', or the second input's), or x
/// itself when it has that dtype already. derivatives.yaml `_to_copy`: the backward casts the gradient back,
/// saving nothing.
class CastRule : public OpRule {
public:
    int maxInputs() const override { return 2; }
    Result<OpPlan> plan(const OpContext& c) const override {
        std::optional<DType> dt;
        if (c.inputs.size() == 2) {
            dt = c.inputs[1].dtype;
        } else {
            auto name = c.attrs.getString("dtype");
            if (!name)
                return c.failAttribute("dtype", "cast needs a 'dtype' (float32, float16, bfloat16, ...) or a "
                                                "second input whose dtype it takes (type_as)");
            auto parsed = parseDType(*name);
            if (!parsed) return c.failAttribute("dtype", "unknown dtype '" + *name + "'");
            dt = *parsed;
        }
        const auto& in = c.inputs[0];
        if (in.dtype == *dt) return viewPlan(in, in.shape, in.contiguous);
        OpPlan p;
        p.outputs.push_back({in.shape, *dt, in.batched, true});
        return p;
    }
};

/// Splits the last dim into parts (views); backward assembles one input-sized gradient.
class SplitRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        auto sizes = c.attrs.getInts("sizes", 0);
        if (!sizes || sizes->empty()) return c.fail("split needs 'sizes'");
        std::int64_t sum = 0;
        OpPlan p;
        for (auto s : *sizes) {
            sum += s;
            Shape o = in.shape;
            o.back() = s;
            p.outputs.push_back({o, in.dtype, in.batched, false});
        }
        if (sum != in.shape.back()) return c.fail("split sizes do not add up to " + c.in());
        p.alias = Alias::View;
        return p;
    }
};

} // namespace

void registerShapeOps() {
    addOpRule("flatten", std::make_unique<FlattenRule>());
    addOpRule("reshape", std::make_unique<ReshapeRule>());
    addOpRule("transpose", std::make_unique<TransposeRule>());
    addOpRule("permute", std::make_unique<PermuteRule>());
    addOpRule("select", std::make_unique<SelectRule>(false));
    addOpRule("slice", std::make_unique<SelectRule>(true));
    addOpRule("contiguous", std::make_unique<ContiguousRule>());
    addOpRule("identity", std::make_unique<IdentityRule>());
    addOpRule("cast", std::make_unique<CastRule>());
    addOpRule("split", std::make_unique<SplitRule>(), true);
}

} // namespace batchfit
