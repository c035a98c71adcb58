// DoRA (PEFT's LoraConfig(use_dora=True)) as its forward runs in training: peft/tuners/lora/dora.py
// DoraLinearLayer.forward and get_weight_norm, variants.py DoraLinearVariant.forward; read at peft 0.21.2.
// graph/lora_linear.cpp composes these with the plain LoRA path; docs/memory-model.md "DoRA".
#include "ops/op_rule.h"

namespace batchfit {
namespace {

/// mag_norm_scale = magnitude / ||W + scaling * (B A)||_row, with every tensor the forward makes for it.
/// Input: the adapters' input (its dtype is the adapters'); it gets no gradient. Outputs: mag_norm_scale [1,
/// out] (trains through the magnitude), then the tensors that live until the DoRA forward returns: eye(in),
/// lora_A's output on it [in, r], lora_weight [in, out] (get_lora_weight runs the adapters on the identity;
/// the graph of that product keeps eye and lora_A(eye) alive as long as lora_weight), and, when the base
/// weight is not in the adapters' dtype, its copy `weight.to(x.dtype)` [out, in] (attribute copy_weight).
/// Transient: get_weight_norm's `scaling * lora_weight` and `weight + ...` [out, in]. Saved: the detached
/// norm [out] (DivBackward keeps the divisor).
class DoraNormRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        auto inF = c.positive("in_features");
        if (!inF) return inF.error();
        auto outF = c.positive("out_features");
        if (!outF) return outF.error();
        auto rank = c.positive("rank");
        if (!rank) return rank.error();
        const DType dt = c.inputs[0].dtype;
        OpPlan p;
        p.params.push_back({"weight", {*outF}, false, dt}); // lora_magnitude_vector
        p.outputs.push_back({{1, *outF}, dt, false, true});
        p.outputs.push_back({{*inF, *inF}, dt, false, true});
        p.outputs.push_back({{*inF, *rank}, dt, false, true});
        p.outputs.push_back({{*inF, *outF}, dt, false, true});
        const TensorInfo weight{{*outF, *inF}, dt, false, true};
        if (c.flag("copy_weight", false)) p.outputs.push_back(weight);
        p.created.push_back({{*outF}, dt, false, true});
        p.createdRoles.push_back("DoRA weight norm");
        p.saved.push_back({SavedDecl::Kind::Created, 0});
        auto w = weight.bytes();
        if (!w) return c.fail("the weight " + shapeToString(weight.shape) + " is too large");
        p.fwdWorkspace = Affine{w->constant * 2, 0};
        p.gradInputs = 0;
        return p;
    }
};

/// base_result = F.linear(dropout(x), weight.to(x.dtype)): with lora_dropout, DoRA runs the base matmul again
/// on the dropped input. Inputs: the dropped input, then the weight's copy when there is one (else the frozen
/// base weight itself: nothing new is kept). The input's gradient needs the weight: its copy is saved.
class DoraBaseRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Lower; }
    int maxInputs() const override { return 2; }
    Result<OpPlan> plan(const OpContext& c) const override {
        auto outF = c.positive("out_features");
        if (!outF) return outF.error();
        TensorInfo o = c.inputs[0];
        o.shape.back() = *outF;
        o.contiguous = true;
        OpPlan p;
        p.outputs.push_back(o);
        if (c.inputs.size() == 2) {
            p.saved.push_back({SavedDecl::Kind::Input, 1, 0});
            p.gradInputs = 1;
        } else if (c.autocast) {
            // autocast's copy of the fp32 base weight (a frozen leaf: not in autocast's cache), saved
            p.created.push_back({{*outF, c.inputs[0].shape.back()}, *c.autocast, false, true});
            p.createdRoles.push_back("autocast weight copy");
            p.saved.push_back({SavedDecl::Kind::Created, 0, 0});
        }
        p.needsContiguous = c.inputs[0].rank() > 1;
        return p;
    }
};

/// a + b where the inputs after the first two live until here and get no gradient: the last op of a Python
/// function whose locals hold them (DoraLinearLayer.forward: `result_dora = t2 + t4`, with the tensors the
/// norm made; lora.Linear.forward: `result + lora_B(...) * scaling`, with its input and the input's cast).
class HeldAddRule : public OpRule {
public:
    int minInputs() const override { return 2; }
    int maxInputs() const override { return 9; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& a = c.inputs[0];
        const auto& b = c.inputs[1];
        if (a.shape != b.shape || a.batched != b.batched)
            return c.fail("held_add: shapes differ: " + c.in(0) + " and " + c.in(1));
        TensorInfo o = a;
        if (isFloating(b.dtype) && dtypeSize(b.dtype) > dtypeSize(o.dtype)) o.dtype = b.dtype;
        o.contiguous = true;
        OpPlan p;
        p.outputs.push_back(o);
        p.passthroughSameShape = true;
        p.gradInputs = 2;
        return p;
    }
};

} // namespace

void registerDoraOps() {
    addOpRule("dora_norm", std::make_unique<DoraNormRule>(), true);
    addOpRule("dora_base", std::make_unique<DoraBaseRule>(), true);
    addOpRule("held_add", std::make_unique<HeldAddRule>(), true);
}

} // namespace batchfit
