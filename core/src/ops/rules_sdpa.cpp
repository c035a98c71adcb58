// Fused scaled-dot-product attention: what each backend of F.scaled_dot_product_attention saves (torch 2.6,
// tools/autograd/derivatives.yaml): flash (CUDA: fp16/bf16, sm80+, no arbitrary mask; also the CPU kernel,
// `_scaled_dot_product_flash_attention_for_cpu`) keeps q, k, v, out and an fp32 logsumexp [H, S];
// memory-efficient (CUDA: fp32, masks, older GPUs) pads the logsumexp to 32 rows (`ceil_div(S, 32) * 32`) and
// keeps a mask as a bias; the CUDA kernels add the philox seed and offset when dropout is on. The CPU kernel
// is measured (tests/data/reference/ops-torch2.json); the CUDA ones are source-checked
// (aten/src/ATen/native/transformers).
#include "ops/op_rule.h"

#include <cstdlib>

namespace batchfit {
namespace {

/// Whether the GPU runs the flash kernel (sdp_utils.cpp check_flash_attention_hardware_support): CUDA sm_80
/// or newer (2.6 accepts sm_80..sm_90; Blackwell, sm_100/sm_120, came with 2.7, which the 2.6 wheels cannot
/// run anyway), ROCm gfx90a and gfx942 (AOTriton). An unknown GPU (a custom capacity) is assumed to.
bool gpuRunsFlash(const std::string& arch) {
    if (arch.empty()) return true;
    if (arch.rfind("sm_", 0) == 0) return std::atoi(arch.c_str() + 3) >= 80;
    return arch == "gfx90a" || arch == "gfx942";
}

/// The math fallback (_scaled_dot_product_attention_math): half inputs are computed in fp32
/// (allowFP16BF16ReductionMathSDP is off by default), k and v repeated to q's heads when grouped
/// (repeat_interleave), q and k scaled by sqrt(scale) into new tensors, softmax, dropout, @ v. It keeps the
/// scaled q, the scaled k transposed, the probabilities, the (repeated) v, and with dropout its mask and
/// result. A v that is not contiguous (a head-split view) is copied by bmm's reshape. Measured on CPU
/// (ops-torch2.json `sdpa_gqa_math*`; DeepSeek-V3's latent attention, docs/accuracy-real.md).
OpPlan mathPlan(const TensorInfo& q, const TensorInfo& k, const TensorInfo& v, double dropout) {
    const std::int64_t h = q.shape[0], s = q.shape[1], d = q.shape[2], sk = k.shape[1], dv = v.shape[2];
    const DType acc = DType::Float32;
    OpPlan p;
    p.outputs.push_back({{h, s, dv}, q.dtype, q.batched, true});
    auto keep = [&](Shape shape, DType dt, const char* role) {
        p.created.push_back({std::move(shape), dt, q.batched, true});
        p.createdRoles.push_back(role);
        p.saved.push_back({SavedDecl::Kind::Created, static_cast<int>(p.created.size()) - 1});
    };
    keep({h, s, d}, acc, "scaled q");
    keep({h, d, sk}, acc, "scaled k (transposed)");
    keep({h, s, sk}, acc, "attention probabilities");
    if (k.shape[0] == h && v.dtype == acc && v.contiguous)
        p.saved.push_back({SavedDecl::Kind::Input, 2}); // v itself: neither repeated, upcast nor copied
    else
        keep({h, sk, dv}, acc, "v (repeated to the heads, in fp32)");
    if (dropout > 0) {
        keep({h, s, sk}, DType::Bool, "attention dropout mask");
        keep({h, s, sk}, acc, "attention probabilities after dropout");
    }
    return p;
}

/// The plan both ops share: q, k, v, out and logsumexp saved; a mask bias and the rng state when present.
OpPlan fusedPlan(const TensorInfo& q, Shape out, std::int64_t heads, std::int64_t seq, bool unpadded,
                 const std::optional<Shape>& mask, bool rngState) {
    const std::int64_t rows = unpadded ? seq : (seq + 31) / 32 * 32;
    OpPlan p;
    p.outputs.push_back({std::move(out), q.dtype, q.batched, true});
    p.created.push_back({{heads, rows}, DType::Float32, q.batched, true});
    p.createdRoles.push_back("logsumexp");
    p.saved = {{SavedDecl::Kind::Input, 0},
               {SavedDecl::Kind::Input, 1},
               {SavedDecl::Kind::Input, 2},
               {SavedDecl::Kind::Output, 0},
               {SavedDecl::Kind::Created, 0}};
    auto keep = [&](TensorInfo t, const char* role) {
        p.created.push_back(std::move(t));
        p.createdRoles.push_back(role);
        p.saved.push_back({SavedDecl::Kind::Created, static_cast<int>(p.created.size()) - 1});
    };
    if (mask)
        keep({*mask, q.dtype, false, true},
             "attn_bias"); // a bool mask becomes a bias (convert_boolean_attn_mask)
    if (rngState) keep({{2}, DType::Int64, false, true}, "rng state"); // philox seed and offset
    // Backward: an fp32 accumulator for dq and the per-row softmax_d.
    auto dq = TensorInfo{q.shape, DType::Float32, q.batched, true}.bytes();
    auto d = TensorInfo{{heads, rows}, DType::Float32, q.batched, true}.bytes();
    if (dq && d) p.bwdWorkspace = Affine{dq->constant + d->constant, dq->perSample + d->perSample};
    return p;
}

/// The attention op's core on its projections' [S, H*hd] layout: impl "flash" (fp32 falls back to the
/// memory-efficient kernel), "mem_efficient" or "cpu_flash".
class SdpaRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Lower; }
    int minInputs() const override { return 3; }
    int maxInputs() const override { return 3; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto &q = c.inputs[0], &k = c.inputs[1], &v = c.inputs[2];
        auto h = c.positive("heads");
        if (!h) return h.error();
        const std::int64_t kvh = c.attrs.getInt("kv_heads").value_or(*h);
        if (q.rank() != 2 || k.rank() != 2 || v.rank() != 2 || kvh <= 0 || q.shape[1] % *h ||
            k.shape[1] % kvh || v.shape[1] % kvh || k.shape[0] != v.shape[0])
            return c.fail("sdpa expects q, k, v of per-sample shape [seq, heads * dim], got " + c.in(0) +
                          ", " + c.in(1) + ", " + c.in(2));
        const std::int64_t dv = v.shape[1] / kvh;
        const std::string impl = c.attrs.getString("impl").value_or("flash");
        // flash needs one head size for q, k and v (sdp_utils.cpp check_head_dim_size_flash); DeepSeek's
        // latent attention (q, k 192, v 128) gets the memory-efficient kernel on the GPU and the math
        // fallback on the CPU
        const bool oneHeadSize = q.shape[1] / *h == dv;
        const double drop = c.real("dropout", 0.0);
        if (impl == "math" || (impl == "cpu_flash" && !oneHeadSize)) {
            const auto perHead = [&](const TensorInfo& t, std::int64_t heads) { // as the kernel sees it
                return TensorInfo{{heads, t.shape[0], t.shape[1] / heads}, t.dtype, t.batched, heads == 1};
            };
            OpPlan p = mathPlan(perHead(q, *h), perHead(k, kvh), perHead(v, kvh), drop);
            p.outputs[0] = {{q.shape[0], *h * dv}, q.dtype, q.batched, false}; // head-major: see fusedCore
            return p;
        }
        // "flash" is torch's SDPA default: the flash kernel where the dtype and the GPU allow, else
        // memory-efficient (an fp32 model, a T4 or a V100)
        const bool unpadded =
            (impl == "flash" && q.dtype != DType::Float32 && gpuRunsFlash(c.gpuArch) && oneHeadSize) ||
            impl == "cpu_flash";
        const bool rng = drop > 0 && impl != "cpu_flash";
        return fusedPlan(q, {q.shape[0], *h * dv}, *h, q.shape[0], unpadded, std::nullopt, rng);
    }
};

/// F.scaled_dot_product_attention on [H, S, D] per-sample q, k, v (a hand-written model's call). impl "auto"
/// is CUDA's default choice (sdp_utils.cpp priority order: flash, then memory-efficient): flash for half
/// inputs without a mask, else memory-efficient; "cpu_flash" is what a CPU runs.
class ScaledDotProductRule : public OpRule {
public:
    PrecisionClass precision() const override { return PrecisionClass::Lower; }
    int minInputs() const override { return 3; }
    int maxInputs() const override { return 3; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto &q = c.inputs[0], &k = c.inputs[1], &v = c.inputs[2];
        if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3)
            return c.fail(
                "scaled_dot_product_attention expects q, k, v of per-sample shape [heads, seq, dim], "
                "got " +
                c.in(0) + ", " + c.in(1) + ", " + c.in(2));
        const bool gqa = c.flag("enable_gqa", false);
        const bool headsOk =
            k.shape[0] == v.shape[0] &&
            (k.shape[0] == q.shape[0] || (gqa && k.shape[0] > 0 && q.shape[0] % k.shape[0] == 0));
        if (!headsOk || k.shape[1] != v.shape[1] || k.shape[2] != q.shape[2])
            return c.fail("scaled_dot_product_attention: q " + c.in(0) + ", k " + c.in(1) + " and v " +
                          c.in(2) + " do not match (fewer k, v heads need enable_gqa, dividing q's heads)");
        const std::string impl = c.attrs.getString("impl").value_or("auto");
        if (impl != "auto" && impl != "flash" && impl != "mem_efficient" && impl != "cpu_flash" &&
            impl != "math")
            return c.failAttribute("impl", "impl must be \"auto\", \"flash\", \"mem_efficient\", "
                                           "\"cpu_flash\" or \"math\", got \"" +
                                               impl + "\"");
        auto mask = c.shapeList("mask_shape");
        if (!mask) return mask.error();
        const double drop = c.real("dropout", 0.0);
        if (!(drop >= 0.0 && drop < 1.0)) return c.failAttribute("dropout", "dropout must be in [0, 1)");
        const bool half = q.dtype != DType::Float32;
        const bool grouped = k.shape[0] != q.shape[0];
        // Grouped-query attention: only CUDA's flash kernel takes it
        // (backend_supports_grouped_query_attention); the memory-efficient and the CPU flash kernels do not,
        // so torch runs the math fallback (measured on CPU).
        const bool flash =
            q.shape[2] == v.shape[2] && ((impl == "flash" && half && !*mask) ||
                                         (impl == "auto" && half && !*mask && gpuRunsFlash(c.gpuArch)));
        if (impl == "math" || (grouped && !flash)) return mathPlan(q, k, v, drop);
        // "auto": torch's choice on the GPU; "flash": the flash kernel asked for (where it applies)
        const bool unpadded = impl == "cpu_flash" || flash;
        return fusedPlan(q, {q.shape[0], q.shape[1], v.shape[2]}, q.shape[0], q.shape[1], unpadded, *mask,
                         drop > 0 && impl != "cpu_flash");
    }
};

} // namespace

void registerSdpaOps() {
    addOpRule("sdpa", std::make_unique<SdpaRule>(), true);
    addOpRule("scaled_dot_product_attention", std::make_unique<ScaledDotProductRule>());
}

} // namespace batchfit
