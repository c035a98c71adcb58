// Normalisations. derivatives.yaml: native_batch_norm saves input, weight, running_mean, running_var,
// save_mean, save_invstd; native_layer_norm saves input, weight, bias, mean, rstd; native_group_norm saves
// input, weight, mean, rstd. Eager RMSNorm (Llama): x.float(), pow, mean, rsqrt, mul, cast back, mul weight.
#include "ops/op_rule.h"

namespace batchfit {
namespace {

class BatchNormRule : public OpRule {
public:
    explicit BatchNormRule(int dims) : m_dims(dims) {}
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        const bool ok = m_dims == 2 ? in.rank() == 3 : (in.rank() == 1 || in.rank() == 2);
        if (!ok || !isFloating(in.dtype))
            return c.fail(std::string("batchnorm") +
                          (m_dims == 2 ? "2d expects [C,H,W]" : "1d expects [C] or [C,L]") + ", got " +
                          c.in());
        const std::int64_t ch = in.shape[0];
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        int idx = 0;
        if (c.flag("affine", true)) {
            p.params.push_back({"weight", {ch}});
            p.params.push_back({"bias", {ch}});
            p.saved.push_back({SavedDecl::Kind::Param, 0});
            idx = 2;
        }
        p.saved.push_back({SavedDecl::Kind::Input, 0});
        if (c.flag("track_running_stats", true)) {
            p.params.push_back({"running_mean", {ch}, true, DType::Float32});
            p.params.push_back({"running_var", {ch}, true, DType::Float32});
            p.saved.push_back({SavedDecl::Kind::Param, idx});
            p.saved.push_back({SavedDecl::Kind::Param, idx + 1});
            p.params.push_back({"num_batches_tracked", {}, true, DType::Int64});
        }
        p.created = {{{ch}, DType::Float32, false, true}, {{ch}, DType::Float32, false, true}};
        p.createdRoles = {"save_mean", "save_invstd"};
        p.saved.push_back({SavedDecl::Kind::Created, 0});
        p.saved.push_back({SavedDecl::Kind::Created, 1});
        return p;
    }

private:
    int m_dims;
};

class LayerNormRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Fp32; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        auto nd = c.integer("normalized_dims", 1, 1);
        if (!nd) return nd.error();
        if (in.rank() < *nd || !isFloating(in.dtype))
            return c.fail("layernorm over " + std::to_string(*nd) +
                          " trailing dim(s) needs a floating input of rank >= " + std::to_string(*nd) +
                          ", got " + c.in());
        Shape normShape(in.shape.end() - *nd, in.shape.end());
        Shape rows(in.shape.begin(), in.shape.end() - *nd);
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        p.saved.push_back({SavedDecl::Kind::Input, 0});
        if (c.flag("elementwise_affine", true)) {
            p.params.push_back({"weight", normShape});
            if (c.flag("bias", true)) p.params.push_back({"bias", normShape});
            p.saved.push_back({SavedDecl::Kind::Param, 0});
        }
        p.created = {{rows, DType::Float32, in.batched, true}, {rows, DType::Float32, in.batched, true}};
        p.createdRoles = {"mean", "rstd"};
        p.saved.push_back({SavedDecl::Kind::Created, 0});
        p.saved.push_back({SavedDecl::Kind::Created, 1});
        p.needsContiguous = true;
        return p;
    }
};

class GroupNormRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Fp32; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        auto g = c.positive("groups");
        if (!g) return g.error();
        if (in.rank() < 1 || in.shape[0] % *g)
            return c.fail("groupnorm: channels of " + c.in() + " are not divisible by groups " +
                          std::to_string(*g));
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        p.saved.push_back({SavedDecl::Kind::Input, 0});
        if (c.flag("affine", true)) {
            p.params = {{"weight", {in.shape[0]}}, {"bias", {in.shape[0]}}};
            p.saved.push_back({SavedDecl::Kind::Param, 0});
        }
        p.created = {{{*g}, DType::Float32, in.batched, true}, {{*g}, DType::Float32, in.batched, true}};
        p.createdRoles = {"mean", "rstd"};
        p.saved.push_back({SavedDecl::Kind::Created, 0});
        p.saved.push_back({SavedDecl::Kind::Created, 1});
        return p;
    }
};

class RmsNormRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (in.rank() < 1 || !isFloating(in.dtype))
            return c.fail("rmsnorm expects a floating input, got " + c.in());
        Shape rows(in.shape.begin(), in.shape.end() - 1);
        rows.push_back(1);
        const bool eager = c.attrs.getString("impl").value_or("eager") != "fused";
        // nn.RMSNorm(elementwise_affine=False): no weight, and the normalized tensor is the output
        const bool affine = c.flag("elementwise_affine", true);
        OpPlan p;
        p.outputs.push_back({in.shape, in.dtype, in.batched, true});
        if (affine) p.params.push_back({"weight", {in.shape.back()}});
        TensorInfo rstd{rows, DType::Float32, in.batched, true};
        if (!eager) {
            p.created = {rstd};
            p.createdRoles = {"rstd"};
            p.saved = {{SavedDecl::Kind::Input, 0}, {SavedDecl::Kind::Created, 0}};
            if (affine) p.saved.push_back({SavedDecl::Kind::Param, 0});
            return p;
        }
        // Eager: h = x.float(); r = rsqrt(h.pow(2).mean(-1) + eps); y = (h * r).to(dtype); out = w * y.
        // torch >= 2.4's nn.RMSNorm (F.rms_norm, a composite in aten/src/ATen/native/layer_norm.cpp) is the
        // same.
        // rsqrt saves its result and `h * r` saves both: r and h are each saved by two nodes (packs 2)
        p.created = {rstd};
        p.createdRoles = {"rstd"};
        p.saved = {{SavedDecl::Kind::Created, 0, -1, -1, 2}};
        if (affine) {
            // GemmaRMSNorm (gemma_scale): `h * r * (1.0 + weight.float())` in fp32, then type_as(x): the fp32
            // normalized tensor and the fp32 (1 + weight) are saved
            const bool gemma = c.flag("gemma_scale", false);
            p.created.push_back({in.shape, gemma ? DType::Float32 : in.dtype, in.batched, true});
            p.createdRoles.push_back("normalized");
            // `weight * y` saves y only for the weight's gradient: a frozen norm (LoRA) keeps it not
            p.saved.push_back({SavedDecl::Kind::Created, 1, -1, 0});
            p.saved.push_back({SavedDecl::Kind::Param, 0});
            if (gemma) {
                p.created.push_back({{in.shape.back()}, DType::Float32, false, true});
                p.createdRoles.push_back("1 + weight (fp32)");
                p.saved.push_back({SavedDecl::Kind::Created, 2, 0});
            }
        }
        // h, saved by pow(2) and by `h * r`
        if (in.dtype == DType::Float32) {
            p.saved.push_back({SavedDecl::Kind::Input, 0, -1, -1, 2});
        } else {
            TensorInfo up{in.shape, DType::Float32, in.batched, true};
            p.created.push_back(up);
            p.createdRoles.push_back("fp32 copy");
            p.saved.push_back({SavedDecl::Kind::Created, static_cast<int>(p.created.size()) - 1, -1, -1, 2});
        }
        const TensorInfo squared{in.shape, DType::Float32, in.batched, true};
        if (c.torch == TorchRules::Torch113) {
            // 1.13's mean() keeps its input, the pow(2) result (2.x keeps sizes: rules_pointwise.cpp, mean)
            p.created.push_back(squared);
            p.createdRoles.push_back("x^2 (kept by 1.13's mean)");
            p.saved.push_back({SavedDecl::Kind::Created, static_cast<int>(p.created.size()) - 1});
        } else if (auto pow = squared.bytes()) {
            p.fwdWorkspace = *pow; // the pow(2) result, freed after the mean
        }
        auto g = TensorInfo{in.shape, DType::Float32, in.batched, true}.bytes();
        if (g) p.bwdWorkspace = Affine{g->constant * 2, g->perSample * 2};
        return p;
    }
};

} // namespace

void registerNormOps() {
    addOpRule("batchnorm1d", std::make_unique<BatchNormRule>(1));
    addOpRule("batchnorm2d", std::make_unique<BatchNormRule>(2));
    addOpRule("layernorm", std::make_unique<LayerNormRule>());
    addOpRule("groupnorm", std::make_unique<GroupNormRule>());
    addOpRule("rmsnorm", std::make_unique<RmsNormRule>());
}

} // namespace batchfit
