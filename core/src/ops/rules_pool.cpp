// Pooling. derivatives.yaml: max_pool2d_with_indices saves self and the int64 indices; avg_pool2d and
// _adaptive_avg_pool2d save self.
#include "ops/op_rule.h"

namespace batchfit {
namespace {

std::int64_t pooledSize(std::int64_t x, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d,
                        bool ceil) {
    const std::int64_t span = x + 2 * p - d * (k - 1) - 1;
    std::int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
    if (ceil && (o - 1) * s >= x + p)
        --o; // PyTorch: the last window must start inside the input or left padding
    return o;
}

class PoolRule : public OpRule {
public:
    explicit PoolRule(bool max) : m_max(max) {}
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        const std::string name = m_max ? "maxpool2d" : "avgpool2d";
        if (in.rank() != 3) return c.fail(name + " expects [C,H,W], got " + c.in());
        if (!c.attrs.has("kernel")) return c.fail("missing attribute 'kernel'");
        auto k = c.attrs.getInts("kernel", 2);
        auto s = c.attrs.has("stride") ? c.attrs.getInts("stride", 2) : k;
        auto p = c.attrs.has("padding") ? c.attrs.getInts("padding", 2) : std::vector<std::int64_t>{0, 0};
        auto d = c.attrs.has("dilation") ? c.attrs.getInts("dilation", 2) : std::vector<std::int64_t>{1, 1};
        if (!k || !s || !p || !d || k->size() != 2 || s->size() != 2 || p->size() != 2 || d->size() != 2)
            return c.fail(name + ": kernel, stride, padding and dilation must be integers or pairs");
        const bool ceil = c.flag("ceil_mode", false);
        Shape out{in.shape[0]};
        for (int i = 0; i < 2; ++i) {
            const auto ki = (*k)[i], si = (*s)[i], pi = (*p)[i], di = (*d)[i];
            if (ki <= 0 || si <= 0 || di <= 0 || pi < 0 || ki > (1 << 20) || si > (1 << 20) ||
                di > (1 << 20) || pi * 2 > ki)
                return c.fail(name + ": kernel/stride must be positive and padding at most half the kernel");
            const auto o = pooledSize(in.shape[static_cast<std::size_t>(i) + 1], ki, si, pi, di, ceil);
            if (o <= 0) return c.fail(name + ": input " + c.in() + " is smaller than the kernel");
            out.push_back(o);
        }
        OpPlan plan;
        plan.outputs.push_back({out, in.dtype, in.batched, true});
        plan.saved.push_back({SavedDecl::Kind::Input, 0});
        if (m_max) {
            plan.created.push_back({out, DType::Int64, in.batched, true});
            plan.createdRoles.push_back("indices");
            plan.saved.push_back({SavedDecl::Kind::Created, 0});
        }
        return plan;
    }

private:
    bool m_max;
};

class AdaptiveAvgPoolRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (in.rank() != 3) return c.fail("adaptive_avgpool2d expects [C,H,W], got " + c.in());
        auto o = c.attrs.getInts("output_size", 2);
        if (!o || o->size() != 2 || (*o)[0] <= 0 || (*o)[1] <= 0 || (*o)[0] > (1 << 20) ||
            (*o)[1] > (1 << 20))
            return c.fail("adaptive_avgpool2d needs 'output_size' (a positive integer or pair)");
        OpPlan p;
        p.outputs.push_back({{in.shape[0], (*o)[0], (*o)[1]}, in.dtype, in.batched, true});
        // Output 1x1 is a mean over H and W (aten/src/ATen/native/AdaptiveAveragePooling.cpp:
        // adaptive_avg_pool2d calls input.mean({-1, -2}, true)). 2.x's mean backward keeps only sizes and the
        // element count (derivatives.yaml, mean.dim: mean_backward(grad, self.sym_sizes(), dim,
        // self.sym_numel(), keepdim)); 1.13's used self.numel(), so autograd kept the input. Measured on CPU:
        // 2.6 saves nothing, 1.13 the [N,C,H,W] input (tests/torch/mean_saved.py, docs/memory-model.md).
        const bool mean = (*o)[0] == 1 && (*o)[1] == 1;
        if (!mean || c.torch == TorchRules::Torch113) p.saved.push_back({SavedDecl::Kind::Input, 0});
        return p;
    }
};

} // namespace

void registerPoolOps() {
    addOpRule("maxpool2d", std::make_unique<PoolRule>(true));
    addOpRule("avgpool2d", std::make_unique<PoolRule>(false));
    addOpRule("adaptive_avgpool2d", std::make_unique<AdaptiveAvgPoolRule>());
}

} // namespace batchfit
