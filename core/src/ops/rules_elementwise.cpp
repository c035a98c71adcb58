// add, mul, scale, concat, masked where. derivatives.yaml: add saves nothing; mul saves both operands (each
// one only if the other needs a gradient); mul by (or add of) a Python scalar saves nothing; cat saves only
// sizes; where saves the condition.
#include "ops/op_rule.h"

namespace batchfit {
namespace {

Result<TensorInfo> broadcast(const OpContext& c) {
    TensorInfo out = c.inputs[0];
    for (std::size_t k = 1; k < c.inputs.size(); ++k) {
        const auto& b = c.inputs[k];
        const std::size_t r = std::max(out.shape.size(), b.shape.size());
        Shape s(r);
        for (std::size_t i = 0; i < r; ++i) {
            const std::int64_t da = i < r - out.shape.size() ? 1 : out.shape[i - (r - out.shape.size())];
            const std::int64_t db = i < r - b.shape.size() ? 1 : b.shape[i - (r - b.shape.size())];
            if (da != db && da != 1 && db != 1)
                return c.fail("shapes do not broadcast: " + c.in(0) + " and " + c.in(static_cast<int>(k)));
            s[i] = std::max(da, db);
        }
        out.shape = s;
        out.batched = out.batched || b.batched;
        if (isFloating(b.dtype) && dtypeSize(b.dtype) > dtypeSize(out.dtype)) out.dtype = b.dtype;
    }
    out.contiguous = true;
    return out;
}

class AddRule : public OpRule {
public:
    explicit AddRule(bool mul) : m_mul(mul) {}
    int minInputs() const override { return 2; }
    int maxInputs() const override { return 2; }
    Result<OpPlan> plan(const OpContext& c) const override {
        auto out = broadcast(c);
        if (!out) return out.error();
        OpPlan p;
        p.outputs.push_back(*out);
        if (m_mul) {
            p.saved = {{SavedDecl::Kind::Input, 0, 1}, {SavedDecl::Kind::Input, 1, 0}};
            // mul_tensor_backward computes each operand's gradient at the output's shape and dtype; the
            // engine's validate_outputs then sums a broadcast operand's down (sum_to) and casts a narrower
            // one: both results of the node live until then, and each such one is a transient
            const auto full = out->bytes();
            bool overflow = false;
            for (const auto& in : c.inputs)
                if (full && (in.shape != out->shape || in.batched != out->batched || in.dtype != out->dtype))
                    p.bwdWorkspace = addAffine(p.bwdWorkspace, *full, overflow);
            if (overflow) return c.fail("mul: the backward's gradients are too large");
        } else {
            p.passthroughSameShape = true; // a broadcast operand's gradient is a new, reduced tensor
        }
        return p;
    }

private:
    bool m_mul;
};

class ScaleRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        if (!c.attrs.getDouble("factor")) return c.fail("scale needs a numeric 'factor'");
        if (c.attrs.has("offset") && !c.attrs.getDouble("offset"))
            return c.failAttribute("offset", "attribute 'offset' must be a number, got " +
                                                 attrToString(*c.attrs.find("offset")));
        OpPlan p;
        p.outputs.push_back({c.inputs[0].shape, c.inputs[0].dtype, c.inputs[0].batched, true});
        return p;
    }
};

class ConcatRule : public OpRule {
public:
    int minInputs() const override { return 2; }
    int maxInputs() const override { return 1024; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& a = c.inputs[0];
        std::int64_t dim = c.attrs.getInt("dim").value_or(0);
        if (dim < 0) dim += a.rank();
        if (dim < 0 || dim >= a.rank()) return c.fail("concat: dim out of range for " + c.in());
        TensorInfo out = a;
        out.shape[static_cast<std::size_t>(dim)] = 0;
        for (std::size_t k = 0; k < c.inputs.size(); ++k) {
            const auto& b = c.inputs[k];
            if (b.rank() != a.rank())
                return c.fail("concat: ranks differ: " + c.in(0) + " and " + c.in(static_cast<int>(k)));
            for (std::size_t i = 0; i < a.shape.size(); ++i)
                if (i != static_cast<std::size_t>(dim) && a.shape[i] != b.shape[i])
                    return c.fail("concat: shapes differ outside dim " + std::to_string(dim) + ": " +
                                  c.in(0) + " and " + c.in(static_cast<int>(k)));
            auto& d = out.shape[static_cast<std::size_t>(dim)];
            if (__builtin_add_overflow(d, b.shape[static_cast<std::size_t>(dim)], &d))
                return c.fail("concat: the output is too large");
            out.batched = out.batched || b.batched;
        }
        out.contiguous = true;
        OpPlan p;
        p.outputs.push_back(out);
        p.grad = GradKind::Passthrough; // the inputs' gradients are narrow views of the output's
        return p;
    }
};

/// torch.where(mask_buffer, x, min): the causal mask is a bool buffer of the layer, saved for backward.
class CausalWhereRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        const std::int64_t maxPos = c.attrs.getInt("max_positions").value_or(in.shape.back());
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        p.params.push_back({"bias", {1, 1, maxPos, maxPos}, true, DType::Bool});
        p.saved.push_back({SavedDecl::Kind::Param, 0});
        return p;
    }
};

} // namespace

void registerElementwiseOps() {
    addOpRule("add", std::make_unique<AddRule>(false));
    addOpRule("mul", std::make_unique<AddRule>(true));
    addOpRule("scale", std::make_unique<ScaleRule>());
    addOpRule("concat", std::make_unique<ConcatRule>());
    addOpRule("causal_where", std::make_unique<CausalWhereRule>(), true);
}

} // namespace batchfit
