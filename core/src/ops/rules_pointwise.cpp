// The elementwise and masking vocabulary of hand-written models: pow, rsqrt, sqrt, exp, log, clamp, abs, neg,
// reciprocal, sin, cos; mean and sum over dims; comparisons; masked_fill (and torch.where with one
// activation); a learned elementwise scale (a Llama RMSNorm's `weight * x`, ConvNeXt's layer scale). What
// each saves follows tools/autograd/derivatives.yaml and is measured with saved_tensors_hooks under torch
// 1.13 and 2.6 (tests/torch/pointwise_saved.py, tests/data/torch/pointwise_saved.json): pow/log/clamp/abs/
// sin/cos save self; rsqrt/sqrt/exp/reciprocal save the result; neg, sum and comparisons save nothing; mean
// saves nothing under 2.x (mean_backward keeps sizes) and its input under 1.13; masked_fill and where save
// the mask.
#include "ops/op_rule.h"

#include <algorithm>

namespace batchfit {
namespace {

enum class Keeps { Self, Result, Nothing };

class PointwiseRule : public OpRule {
public:
    explicit PointwiseRule(Keeps keeps) : m_keeps(keeps) {}
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (!isFloating(in.dtype))
            return c.fail("expects a floating input, got " + std::string(dtypeName(in.dtype)));
        for (const char* key : {"exponent", "min", "max"}) {
            if (c.attrs.has(key) && !c.attrs.getDouble(key))
                return c.failAttribute(key, std::string("attribute '") + key + "' must be a number, got " +
                                                attrToString(*c.attrs.find(key)));
        }
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        if (m_keeps == Keeps::Self) p.saved.push_back({SavedDecl::Kind::Input, 0});
        if (m_keeps == Keeps::Result) p.saved.push_back({SavedDecl::Kind::Output, 0});
        return p;
    }

private:
    Keeps m_keeps;
};

class ClampRule : public PointwiseRule {
public:
    ClampRule() : PointwiseRule(Keeps::Self) {}
    Result<OpPlan> plan(const OpContext& c) const override {
        if (!c.attrs.has("min") && !c.attrs.has("max")) return c.fail("clamp needs 'min', 'max' or both");
        return PointwiseRule::plan(c);
    }
};

/// The per-sample dims named by 'dims' (an integer or a list; negative counts from the end), sorted, unique.
Result<std::vector<std::size_t>> reduceDims(const OpContext& c) {
    const auto& in = c.inputs[0];
    const std::int64_t rank = in.rank();
    auto dims = c.attrs.has("dims") ? c.attrs.getInts("dims", 0) : std::vector<std::int64_t>{-1};
    if (!dims || dims->empty())
        return c.failAttribute("dims", "attribute 'dims' must be an integer or a list of integers");
    std::vector<std::size_t> out;
    for (std::int64_t d : *dims) {
        const std::int64_t k = d < 0 ? d + rank : d;
        if (k < 0 || k >= rank)
            return c.failAttribute("dims", "dim " + std::to_string(d) +
                                               " is out of range for per-sample shape " + c.in() +
                                               " (the batch dimension cannot be reduced)");
        out.push_back(static_cast<std::size_t>(k));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

class ReduceRule : public OpRule {
public:
    explicit ReduceRule(bool mean) : m_mean(mean) {}
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (!isFloating(in.dtype)) return c.fail("expects a floating input, got " + c.in());
        auto dims = reduceDims(c);
        if (!dims) return dims.error();
        const bool keep = c.flag("keepdim", false);
        Shape out;
        for (std::size_t i = 0; i < in.shape.size(); ++i) {
            const bool reduced = std::find(dims->begin(), dims->end(), i) != dims->end();
            if (!reduced)
                out.push_back(in.shape[i]);
            else if (keep)
                out.push_back(1);
        }
        OpPlan p;
        p.outputs.push_back({out, in.dtype, in.batched, true});
        // 2.x: mean.dim's backward is mean_backward(grad, self.sym_sizes(), dim, self.sym_numel(), keepdim),
        // sizes only; 1.13's divided by _safe_size(self.sizes(), dim) after sum_backward and kept self.
        if (m_mean && c.torch == TorchRules::Torch113) p.saved.push_back({SavedDecl::Kind::Input, 0});
        return p;
    }

private:
    bool m_mean;
};

/// x == y, x > 0, ...: a bool tensor, no gradient, nothing saved.
class CompareRule : public OpRule {
public:
    int maxInputs() const override { return 2; }
    Result<OpPlan> plan(const OpContext& c) const override {
        TensorInfo out = c.inputs[0];
        if (c.inputs.size() == 2 && c.inputs[1].shape != out.shape && shapeNumel(c.inputs[1].shape) != 1u)
            return c.fail("compare: the operands' shapes differ: " + c.in(0) + " and " + c.in(1));
        out.dtype = DType::Bool;
        out.contiguous = true;
        OpPlan p;
        p.outputs.push_back(out);
        return p;
    }
};

/// True if `mask` (an unbatched shape, or a per-sample one when batched) broadcasts to [B] + in.
bool broadcastsTo(const Shape& mask, bool batched, const Shape& in) {
    Shape full = in;
    full.insert(full.begin(), 2);
    Shape m = mask;
    if (batched) m.insert(m.begin(), 2);
    if (m.size() > full.size()) return false;
    for (std::size_t i = 0; i < m.size(); ++i) {
        const std::int64_t a = m[m.size() - 1 - i], b = full[full.size() - 1 - i];
        if (a != b && a != 1) return false;
    }
    return true;
}

/// masked_fill(x, mask, value) and where(cond, x, value): the output has x's shape; backward keeps the mask.
/// The mask is the second input (a bool tensor such as a comparison's), or given by attributes: 'mask_shape'
/// (its full shape, unbatched), made by a comparison on a buffer ('mask': "computed", a new bool tensor), a
/// bool buffer itself ('mask': "buffer", no new memory) or the buffer an earlier "buffer" layer declared
/// ('mask': "shared", nothing new: a model-wide causal buffer used by every block, saved by each);
/// 'buffer_shape'/ 'buffer_dtype' declare the buffer.
class MaskedFillRule : public OpRule {
public:
    int maxInputs() const override { return 2; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        if (c.inputs.size() == 2) {
            const auto& m = c.inputs[1];
            if (!broadcastsTo(m.shape, m.batched, in.shape))
                return c.fail("masked_fill: the mask " + c.in(1) + " does not broadcast to " + c.in(0));
            p.saved.push_back({SavedDecl::Kind::Input, 1});
            return p;
        }
        auto shape = c.shapeList("mask_shape");
        if (!shape) return shape.error();
        if (!*shape)
            return c.failAttribute("mask_shape",
                                   "masked_fill needs 'mask_shape' (the mask's shape, a list) or "
                                   "a second input");
        const Shape mask = **shape;
        if (!broadcastsTo(mask, false, in.shape))
            return c.failAttribute("mask_shape", "masked_fill: the mask " + shapeToString(mask) +
                                                     " does not broadcast to [batch] + " + c.in());
        const std::string kind = c.attrs.getString("mask").value_or("computed");
        if (kind != "computed" && kind != "buffer" && kind != "shared")
            return c.failAttribute("mask",
                                   "attribute 'mask' must be \"computed\", \"buffer\" or \"shared\", got " +
                                       attrToString(*c.attrs.find("mask")));
        if (kind == "shared") {
            // a view of the bool buffer an earlier layer declared ('mask': "buffer"): the same storage, saved
            // here too, which matters when the earlier layer needs no gradient (frozen) and saves nothing
            p.params.push_back({"mask", mask, true, DType::Bool, ParamDecl::Share::Use});
            p.saved.push_back({SavedDecl::Kind::Param, 0});
            return p;
        }
        DType bufType = DType::Bool;
        if (auto s = c.attrs.getString("buffer_dtype")) {
            auto d = parseDType(*s);
            if (!d) return c.failAttribute("buffer_dtype", "unknown dtype '" + *s + "'");
            bufType = *d;
        }
        auto bufferShape = c.shapeList("buffer_shape");
        if (!bufferShape) return bufferShape.error();
        std::optional<Shape> buffer = *bufferShape;
        if (!buffer && kind == "buffer") buffer = mask;
        if (buffer)
            p.params.push_back({"mask", *buffer, true, bufType,
                                kind == "buffer" ? ParamDecl::Share::Provide : ParamDecl::Share::None});
        if (kind == "buffer") {
            if (bufType != DType::Bool)
                return c.failAttribute("buffer_dtype", "a mask used as is must be a bool buffer");
            p.saved.push_back({SavedDecl::Kind::Param, 0}); // a view of the buffer: no new memory
        } else {
            p.created.push_back({mask, DType::Bool, false, true});
            p.createdRoles.push_back("mask");
            p.saved.push_back({SavedDecl::Kind::Created, 0});
        }
        return p;
    }
};

/// weight * x with a learned weight of shape 'shape' (default: the last dim), broadcast over x: saves x (for
/// the weight's gradient: not when the weight is frozen) and the weight (for x's).
class LearnedMulRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (in.rank() < 1) return c.fail("learned_mul expects at least one dim, got " + c.in());
        Shape w{in.shape.back()};
        auto given = c.shapeList("shape");
        if (!given) return given.error();
        if (*given) {
            w = **given;
            if (w.size() > in.shape.size())
                return c.failAttribute("shape",
                                       "the weight " + shapeToString(w) + " has more dims than " + c.in());
            for (std::size_t i = 0; i < w.size(); ++i) {
                const auto a = w[w.size() - 1 - i], b = in.shape[in.shape.size() - 1 - i];
                if (a != b && a != 1)
                    return c.failAttribute("shape", "the weight " + shapeToString(w) +
                                                        " does not broadcast to " + c.in());
            }
        }
        OpPlan p;
        p.params.push_back({"weight", w});
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        // mul: other (x) saved for self's (the weight's) gradient, self for other's
        p.saved = {{SavedDecl::Kind::Input, 0, -1, 0}, {SavedDecl::Kind::Param, 0, 0}};
        return p;
    }
};

} // namespace

void registerPointwiseOps() {
    addOpRule("pow", std::make_unique<PointwiseRule>(Keeps::Self));
    addOpRule("rsqrt", std::make_unique<PointwiseRule>(Keeps::Result));
    addOpRule("sqrt", std::make_unique<PointwiseRule>(Keeps::Result));
    addOpRule("exp", std::make_unique<PointwiseRule>(Keeps::Result));
    addOpRule("log", std::make_unique<PointwiseRule>(Keeps::Self));
    addOpRule("clamp", std::make_unique<ClampRule>());
    addOpRule("abs", std::make_unique<PointwiseRule>(Keeps::Self));
    addOpRule("neg", std::make_unique<PointwiseRule>(Keeps::Nothing));
    addOpRule("reciprocal", std::make_unique<PointwiseRule>(Keeps::Result));
    addOpRule("sin", std::make_unique<PointwiseRule>(Keeps::Self));
    addOpRule("cos", std::make_unique<PointwiseRule>(Keeps::Self));
    addOpRule("mean", std::make_unique<ReduceRule>(true));
    addOpRule("sum", std::make_unique<ReduceRule>(false));
    addOpRule("compare", std::make_unique<CompareRule>());
    addOpRule("masked_fill", std::make_unique<MaskedFillRule>());
    addOpRule("learned_mul", std::make_unique<LearnedMulRule>());
}

} // namespace batchfit
