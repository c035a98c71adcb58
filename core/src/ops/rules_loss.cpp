// Losses. cross_entropy = log_softmax (saves its result) + nll_loss (saves self, target, total_weight).
// mse_loss saves self and target. Losses run in fp32 under autocast.
#include "graph/graph_builder.h"
#include "ops/op_rule.h"

namespace batchfit {
namespace {

class NllLossRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Fp32; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (in.rank() < 1 || in.rank() > 2 || !isFloating(in.dtype))
            return c.fail("cross_entropy expects logits [C] or [S, C], got " + c.in());
        OpPlan p;
        p.outputs.push_back({{}, in.dtype, false, true});
        Shape target(in.shape.begin(), in.shape.end() - 1);
        p.target = TensorInfo{target, DType::Int64, true, true};
        p.created.push_back({{}, in.dtype, false, true});
        p.createdRoles.push_back("total_weight");
        p.saved = {{SavedDecl::Kind::Input, 0}, {SavedDecl::Kind::Target, 0}, {SavedDecl::Kind::Created, 0}};
        p.isLoss = true;
        return p;
    }
};

class CrossEntropyRule : public OpRule {
public:
    bool composite() const override { return true; }
    Result<OpPlan> plan(const OpContext& c) const override { return c.fail("composite"); }
    Result<int> expand(GraphBuilder& b, const std::string& path, const Attributes& attrs,
                       const std::vector<int>& inputs) const override {
        const auto& in = b.info(inputs[0]);
        if (in.rank() < 1 || in.rank() > 2 || !isFloating(in.dtype))
            return makeError(path + ": cross_entropy expects logits [C] or [S, C], got " +
                             shapeToString(in.shape));
        Attributes none;
        auto ls = b.addOp("log_softmax", path + ".log_softmax", none, inputs);
        if (!ls) return ls.error();
        return b.addOp("nll_loss", path + ".nll_loss", attrs, {*ls});
    }
};

class MseLossRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Fp32; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (!isFloating(in.dtype)) return c.fail("mse_loss expects a floating input");
        OpPlan p;
        p.outputs.push_back({{}, in.dtype, false, true});
        p.target = TensorInfo{in.shape, in.dtype, in.batched, true};
        p.saved = {{SavedDecl::Kind::Input, 0}, {SavedDecl::Kind::Target, 0}};
        p.isLoss = true;
        return p;
    }
};

/// output.sum(): the implicit loss of a model without one; backward expands the gradient (a view).
class SumLossRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        OpPlan p;
        p.outputs.push_back({{}, c.inputs[0].dtype, false, true});
        p.grad = GradKind::Passthrough;
        p.isLoss = true;
        return p;
    }
};

} // namespace

void registerLossOps() {
    addOpRule("cross_entropy", std::make_unique<CrossEntropyRule>());
    addOpRule("mse_loss", std::make_unique<MseLossRule>());
    addOpRule("nll_loss", std::make_unique<NllLossRule>(), true);
    addOpRule("sum_loss", std::make_unique<SumLossRule>(), true);
}

} // namespace batchfit
