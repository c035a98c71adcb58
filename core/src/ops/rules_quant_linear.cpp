// quant_linear: a linear whose frozen weight bitsandbytes keeps packed (Linear4bit / Linear8bitLt).
// Sources (bitsandbytes 0.49.2, the last release whose 4-bit matmul is Python; 0.50.x's gemm_4bit op takes
// the same dequantize + F.linear path for training-sized inputs: backends/cuda/ops.py
// _gemm_4bit_use_custom_cuda returns False above 1536 rows):
// - nn/modules.py Linear4bit.forward: x.to(compute_dtype), matmul_4bit(...).to(inp_dtype);
//   set_compute_type: fp32 and bf16 inputs are computed in their own dtype, fp16 ones in compute_dtype.
// - autograd/_functions.py MatMul4Bit: forward F.linear(A, dequantize_4bit(B).to(A.dtype).t()); saves only
//   the packed weight (ctx.tensors = (None, B): the input is no longer kept since 0.43.2, PR #1270);
//   backward grad_A = matmul(grad_output, dequantize_4bit(B).to(grad_output.dtype)).
// - MatMul8bitLt: forward quantizes A (A.to(fp16), int8 rows + fp32 row scales), int8 matmul into int32,
//   keeps ctx.tensors = (CAt, subA, A): the input itself; backward dequantizes CB to A's dtype.
// - functional.py quantize_4bit: two codes per uint8, one fp32 absmax per 64; with compress_statistics
//   the absmax are quantized to uint8 in blocks of 256 with an fp32 absmax each, plus an fp32 offset; a
//   16-entry fp32 code table per weight.
#include "ops/op_rule.h"

namespace batchfit {
namespace {

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
    return (a + b - 1) / b;
}

Affine sum(std::initializer_list<Affine> parts) {
    Affine out;
    bool overflow = false;
    for (const Affine& a : parts) out = addAffine(out, a, overflow);
    return out;
}

Affine bytesOf(const TensorInfo& t) {
    return t.bytes().value_or(Affine{});
}

class QuantLinearRule : public OpRule {
public:
    // bitsandbytes' modules run outside autocast's op lists: the rule applies autocast's casts itself.
    PrecisionClass precision() const override { return PrecisionClass::Promote; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        if (in.rank() < 1 || !isFloating(in.dtype))
            return c.fail("quant_linear expects a floating [..., features] input, got " + c.in() + " " +
                          std::string(dtypeName(in.dtype)));
        auto out = c.positive("out_features");
        if (!out) return out.error();
        const std::string kind = c.attrs.getString("quant").value_or("nf4");
        if (kind != "nf4" && kind != "fp4" && kind != "int8")
            return c.failAttribute("quant", "quant must be nf4, fp4 or int8, got '" + kind + "'");
        const std::int64_t inF = in.shape.back();
        const auto n = static_cast<std::uint64_t>(*out) * static_cast<std::uint64_t>(inF);
        const DType a = in.dtype;

        OpPlan p;
        TensorInfo o = in;
        o.shape.back() = *out;
        o.contiguous = true;
        p.outputs.push_back(o); // .to(inp_dtype): the caller's dtype
        const auto weightOf = [&](DType d) {
            return Affine{n * static_cast<std::uint64_t>(dtypeSize(d)), 0};
        };
        const auto like = [&](const TensorInfo& t, DType d) {
            TensorInfo r = t;
            r.dtype = d;
            r.contiguous = true;
            return bytesOf(r);
        };

        if (kind == "int8") {
            // Int8Params: int8 CB plus one fp32 scale (SCB) per output row.
            ParamDecl w{"weight", {*out, inF}, false, DType::UInt8};
            w.storedBytes = n + static_cast<std::uint64_t>(*out) * 4;
            p.params.push_back(w);
            if (c.flag("bias", true)) p.params.push_back({"bias", {*out}});
            TensorInfo rows = in;
            rows.shape.back() = 1;
            p.fwdWorkspace = sum({a == DType::Float16 ? Affine{} : like(in, DType::Float16), // A.to(fp16)
                                  like(in, DType::UInt8), like(rows, DType::Float32),        // CA, SCA
                                  like(o, DType::Int32)});                                   // int32 result
            p.bwdWorkspace = sum({weightOf(a), Affine{static_cast<std::uint64_t>(*out) * 4, 0}}); // CB.to(A)
            p.saved = {{SavedDecl::Kind::Input, 0, 0}}; // ctx.tensors holds A itself
            p.needsContiguous = in.rank() > 1;
            return p;
        }

        const bool dq = c.flag("double_quant", false);
        const std::uint64_t blocks = ceilDiv(n, 64);
        ParamDecl w{"weight", {*out, inF}, false, DType::UInt8};
        w.storedBytes = ceilDiv(n, 2) + 16 * 4 + (dq ? blocks + ceilDiv(blocks, 256) * 4 + 4 : blocks * 4);
        p.params.push_back(w);
        if (c.flag("bias", true)) p.params.push_back({"bias", {*out}});
        // The dtype the weight was quantized from (quant_state.dtype): transformers loads bitsandbytes
        // models in half unless told otherwise.
        DType load = DType::Float16;
        if (auto s = c.attrs.getString("load_dtype"))
            if (auto d = parseDType(*s)) load = *d;
        DType compute = a;
        if (a == DType::Float16)
            if (auto s = c.attrs.getString("compute_dtype"))
                if (auto d = parseDType(*s)) compute = *d;
        const DType mm = c.autocast ? *c.autocast : compute; // F.linear's output dtype
        // Forward: x.to(compute); dequantize (load) then .to(compute), one temporary at a time; under
        // autocast F.linear casts x and the weight to half; its result, then .to(inp_dtype).
        Affine dequant = weightOf(compute);
        if (load != compute) dequant = sum({dequant, weightOf(load)});
        Affine linear = weightOf(compute);
        if (c.autocast && *c.autocast != compute) linear = sum({linear, weightOf(mm), like(in, mm)});
        const Affine peakPart =
            dequant.constant + dequant.perSample >= linear.constant + linear.perSample ? dequant : linear;
        p.fwdWorkspace =
            sum({compute != a ? like(in, compute) : Affine{}, peakPart, mm != a ? like(o, mm) : Affine{}});
        // Backward: the output gradient cast to mm, dequantize (load) .to(mm), grad_A in mm (cast to the
        // input's dtype by x.to()'s backward, which the scheduler allocates as the input gradient).
        p.bwdWorkspace = sum({mm != a ? like(o, mm) : Affine{}, weightOf(mm),
                              load != mm ? weightOf(load) : Affine{}, mm != a ? like(in, mm) : Affine{}});
        // Saved: only the packed weight (a parameter: no new bytes), as a ctx attribute (bitsandbytes
        // autograd/_functions.py MatMul4Bit/MatMul8bitLt: `ctx.tensors = (None, B)`), which no saved-tensor
        // hook sees
        p.saved = {{SavedDecl::Kind::Param, 0, -1, -1, 0}};
        p.needsContiguous = in.rank() > 1;
        return p;
    }
};

} // namespace

void registerQuantLinearOps() {
    addOpRule("quant_linear", std::make_unique<QuantLinearRule>(), /*internal=*/true);
}

} // namespace batchfit
