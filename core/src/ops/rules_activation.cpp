// Activations, softmax and dropout. derivatives.yaml: relu/sigmoid/tanh/softmax/log_softmax save the result;
// gelu/silu/hardswish/leaky_relu/hardtanh(relu6) save self; in-place variants save the result (same storage).
// native_dropout saves a bool mask (CUDA).
#include "ops/op_rule.h"

namespace batchfit {
namespace {

enum class Saves { Result, Self };

class ActivationRule : public OpRule {
public:
    ActivationRule(Saves saves, bool canInPlace) : m_saves(saves), m_canInPlace(canInPlace) {}
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (!isFloating(in.dtype))
            return c.fail("expects a floating input, got " + std::string(dtypeName(in.dtype)));
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, in.contiguous});
        const bool inPlace = m_canInPlace && c.flag("inplace", false);
        if (inPlace) p.alias = Alias::InPlace;
        if (inPlace || m_saves == Saves::Result)
            p.saved.push_back({SavedDecl::Kind::Output, 0});
        else
            p.saved.push_back({SavedDecl::Kind::Input, 0});
        return p;
    }

private:
    Saves m_saves;
    bool m_canInPlace;
};

class SoftmaxRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Fp32; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (in.rank() < 1 || !isFloating(in.dtype))
            return c.fail("softmax expects a floating input, got " + c.in());
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        p.saved.push_back({SavedDecl::Kind::Output, 0});
        // backward: ATen's softmax/log_softmax backward kernels write grad_input in one pass (no temporary);
        // measured: the CPU heap peak of the accuracy matrix's BERT at its loss backward
        // (docs/accuracy-torch2.md)
        return p;
    }
};

class DropoutRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        const double prob = c.real("p", 0.5);
        if (!(prob >= 0.0 && prob < 1.0))
            return c.fail("dropout p must be in [0, 1), got " + std::to_string(prob));
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        if (prob == 0.0) { // a no-op in PyTorch (returns the input)
            p.alias = Alias::View;
            p.grad = GradKind::Passthrough;
            p.outputs[0].contiguous = in.contiguous;
            return p;
        }
        p.created.push_back({in.shape, DType::Bool, in.batched, true});
        p.createdRoles.push_back("mask");
        p.saved.push_back({SavedDecl::Kind::Created, 0});
        return p;
    }
};

} // namespace

void registerActivationOps() {
    addOpRule("relu", std::make_unique<ActivationRule>(Saves::Result, true));
    addOpRule("relu6", std::make_unique<ActivationRule>(Saves::Self, true));
    addOpRule("leaky_relu", std::make_unique<ActivationRule>(Saves::Self, true));
    addOpRule("gelu", std::make_unique<ActivationRule>(Saves::Self, false));
    addOpRule("silu", std::make_unique<ActivationRule>(Saves::Self, true));
    addOpRule("sigmoid", std::make_unique<ActivationRule>(Saves::Result, false));
    addOpRule("tanh", std::make_unique<ActivationRule>(Saves::Result, false));
    addOpRule("hardswish", std::make_unique<ActivationRule>(Saves::Self, true));
    addOpRule("softmax", std::make_unique<SoftmaxRule>());
    addOpRule("log_softmax", std::make_unique<SoftmaxRule>());
    addOpRule("dropout", std::make_unique<DropoutRule>());
}

} // namespace batchfit
