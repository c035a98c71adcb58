// conv1d/2d/3d and conv_transpose2d. derivatives.yaml `convolution`: saves input (as given) and weight.
// cuDNN's workspaces: see the note in plan() and docs/memory-model.md 6.2.
#include "ops/op_rule.h"

namespace batchfit {
namespace {

class ConvRule : public OpRule {
public:
    ConvRule(int dims, bool transposed) : m_dims(dims), m_transposed(transposed) {}
    PrecisionClass precision() const override { return PrecisionClass::Lower; }

    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        const std::size_t d = static_cast<std::size_t>(m_dims);
        const std::string name = m_transposed ? "conv_transpose" + std::to_string(m_dims) + "d"
                                              : "conv" + std::to_string(m_dims) + "d";
        if (static_cast<std::size_t>(in.rank()) != d + 1 || !isFloating(in.dtype)) {
            std::string expect = d == 1 ? "[C,L]" : d == 2 ? "[C,H,W]" : "[C,D,H,W]";
            return c.fail(name + " expects " + expect + ", got " + c.in());
        }
        auto outC = c.positive("out_channels");
        if (!outC) return outC.error();
        if (!c.attrs.has("kernel")) return c.fail("missing attribute 'kernel'");
        auto kernel = c.attrs.getInts("kernel", d);
        auto stride = c.attrs.has("stride") ? c.attrs.getInts("stride", d) : std::vector<std::int64_t>(d, 1);
        auto dil = c.attrs.has("dilation") ? c.attrs.getInts("dilation", d) : std::vector<std::int64_t>(d, 1);
        auto outPad = c.attrs.has("output_padding") ? c.attrs.getInts("output_padding", d)
                                                    : std::vector<std::int64_t>(d, 0);
        if (!kernel || kernel->size() != d)
            return c.fail("'kernel' must be an integer or a list of " + std::to_string(d));
        if (!stride || stride->size() != d)
            return c.fail("'stride' must be an integer or a list of " + std::to_string(d));
        if (!dil || dil->size() != d)
            return c.fail("'dilation' must be an integer or a list of " + std::to_string(d));
        if (!outPad || outPad->size() != d) return c.fail("'output_padding' must be an integer or a list");
        std::vector<std::int64_t> pad(d, 0);
        bool same = c.attrs.getString("padding") == std::optional<std::string>("same");
        if (c.attrs.has("padding") && !same) {
            auto p = c.attrs.getInts("padding", d);
            if (!p || p->size() != d) return c.fail("'padding' must be an integer, a list or \"same\"");
            pad = *p;
        }
        auto groups = c.integer("groups", 1, 1);
        if (!groups) return groups.error();
        const std::int64_t inC = in.shape[0];
        if (inC % *groups || *outC % *groups)
            return c.fail(name + ": channels " + std::to_string(inC) + " -> " + std::to_string(*outC) +
                          " are not divisible by groups " + std::to_string(*groups));
        Shape out{*outC};
        for (std::size_t i = 0; i < d; ++i) {
            const std::int64_t k = (*kernel)[i], s = (*stride)[i], dl = (*dil)[i], x = in.shape[i + 1];
            if (k <= 0 || s <= 0 || dl <= 0 || pad[i] < 0 || k > (1 << 20) || s > (1 << 20) ||
                dl > (1 << 20) || pad[i] > (1 << 20))
                return c.fail(name +
                              ": kernel, stride and dilation must be positive and padding non-negative");
            std::int64_t o;
            if (m_transposed) {
                const std::int64_t op = (*outPad)[i];
                if (op < 0 || (op >= s && op >= dl)) // PyTorch: smaller than either stride or dilation
                    return c.fail(
                        name + ": output_padding must be non-negative and smaller than stride or dilation");
                // x can be up to 2^62 and s up to 2^20: check the product; the other terms are below 2^42.
                if (__builtin_mul_overflow(x - 1, s, &o) ||
                    __builtin_add_overflow(o, dl * (k - 1) + op + 1 - 2 * pad[i], &o))
                    return c.fail(name + ": output of input " + c.in() + " is too large");
            } else if (same)
                o = x;
            else
                o = (x + 2 * pad[i] - dl * (k - 1) - 1) / s + 1;
            if (o <= 0 || (!m_transposed && x + 2 * pad[i] < dl * (k - 1) + 1))
                return c.fail(name + ": input " + c.in() + " is too small for kernel " + std::to_string(k) +
                              " (dilation " + std::to_string(dl) + ", padding " + std::to_string(pad[i]) +
                              ")");
            out.push_back(o);
        }
        OpPlan p;
        p.outputs.push_back(
            {out, c.computeDtype == DType::Float32 ? in.dtype : c.computeDtype, in.batched, true});
        Shape w = m_transposed ? Shape{inC, *outC / *groups} : Shape{*outC, inC / *groups};
        for (auto k : *kernel) w.push_back(k);
        p.params.push_back({"weight", w});
        if (c.flag("bias", true)) p.params.push_back({"bias", {*outC}});
        // ConvolutionBackward0 saves the input as it was given: a strided view (ShuffleNetV2's channel slice
        // of x.chunk(2, dim=1)) keeps its whole base storage alive. ATen makes the contiguous copy below
        // autograd, as a temporary: at::_convolution passes input.contiguous(backend_memory_format) to the
        // backend and convolution_backward copies again (aten/src/ATen/native/Convolution.cpp).
        p.saved = {{SavedDecl::Kind::Input, 0}, {SavedDecl::Kind::Param, 0}};
        // cuDNN's workspaces (p.cudnnWorkspace, one per pass, elastic) stay 0: the size cuDNN's top engine
        // asks for is not pinned down without a GPU. At 1/2 or 1x the input plus output per pass the
        // GPUMemNet CNN rows' shortfall moved only from -30% to -25% (docs/memory-model.md 6.2,
        // docs/accuracy-gpu.md).
        if (!in.contiguous) {
            if (auto b = in.bytes()) {
                p.fwdWorkspace = *b;
                p.bwdWorkspace = *b;
            }
        }
        return p;
    }

private:
    int m_dims;
    bool m_transposed;
};

} // namespace

void registerConvOps() {
    addOpRule("conv1d", std::make_unique<ConvRule>(1, false));
    addOpRule("conv2d", std::make_unique<ConvRule>(2, false));
    addOpRule("conv3d", std::make_unique<ConvRule>(3, false));
    addOpRule("conv_transpose2d", std::make_unique<ConvRule>(2, true));
}

} // namespace batchfit
