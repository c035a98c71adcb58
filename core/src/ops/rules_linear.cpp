// linear and matmul. Sources: derivatives.yaml `addmm`/`mm`/`bmm` (save both operands); F.linear on >2-D
// input runs matmul on a (contiguous) view, so non-contiguous inputs are copied first.
#include "ops/op_rule.h"

namespace batchfit {
namespace {

class LinearRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Lower; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (in.rank() < 1 || !isFloating(in.dtype))
            return c.fail("linear expects a floating [..., features] input, got " + c.in() + " " +
                          std::string(dtypeName(in.dtype)));
        auto out = c.positive("out_features");
        if (!out) return out.error();
        const std::int64_t inF = in.shape.back();
        OpPlan p;
        TensorInfo o = in;
        o.shape.back() = *out;
        o.dtype = c.computeDtype == DType::Float32 ? in.dtype : c.computeDtype;
        o.contiguous = true;
        p.outputs.push_back(o);
        p.params.push_back({"weight", {*out, inF}});
        if (c.flag("bias", true)) p.params.push_back({"bias", {*out}});
        if (auto t = c.attrs.getString("tied_to")) p.tiedTo = *t;
        // mm/addmm save mat1 (the input) only for the weight's gradient and mat2 (the weight) only for the
        // input's (derivatives.yaml: one formula per operand; codegen saves under should_compute_output)
        p.saved = {{SavedDecl::Kind::Input, 0, -1, 0}, {SavedDecl::Kind::Param, 0, 0}};
        p.needsContiguous = in.rank() > 1;
        return p;
    }
};

/// Batched matrix product of two activations (broadcasting batch dims).
class MatmulRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Lower; }
    int minInputs() const override { return 2; }
    int maxInputs() const override { return 2; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& a = c.inputs[0];
        const auto& b = c.inputs[1];
        if (a.rank() < 2 || b.rank() < 2)
            return c.fail("matmul expects two inputs of rank >= 2, got " + c.in(0) + " and " + c.in(1));
        if (a.shape.back() != b.shape[b.shape.size() - 2])
            return c.fail("matmul inner dimensions differ: " + c.in(0) + " @ " + c.in(1));
        Shape batchA(a.shape.begin(), a.shape.end() - 2), batchB(b.shape.begin(), b.shape.end() - 2);
        Shape out;
        const std::size_t r = std::max(batchA.size(), batchB.size());
        for (std::size_t i = 0; i < r; ++i) {
            std::int64_t da = i < r - batchA.size() ? 1 : batchA[i - (r - batchA.size())];
            std::int64_t db = i < r - batchB.size() ? 1 : batchB[i - (r - batchB.size())];
            if (da != db && da != 1 && db != 1)
                return c.fail("matmul batch dims do not broadcast: " + c.in(0) + " @ " + c.in(1));
            out.push_back(std::max(da, db));
        }
        out.push_back(a.shape[a.shape.size() - 2]);
        out.push_back(b.shape.back());
        OpPlan p;
        p.outputs.push_back({out, a.dtype, a.batched || b.batched, true});
        p.saved = {{SavedDecl::Kind::Input, 0, 1}, {SavedDecl::Kind::Input, 1, 0}};
        p.needsContiguous = true;
        return p;
    }
};

} // namespace

void registerLinearOps() {
    addOpRule("linear", std::make_unique<LinearRule>());
    addOpRule("matmul", std::make_unique<MatmulRule>());
}

} // namespace batchfit
