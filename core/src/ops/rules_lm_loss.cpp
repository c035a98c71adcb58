// A language model's head and loss without the whole [S, vocab] logits: TRL's SFTTrainer
// (docs/memory-model.md, "The language-model loss"). Each replaces lm_head -> [softcap] -> .float() ->
// cross_entropy.
//
// trl_fused_lm_loss: TRL 1.16's default (loss_type "nll"; trl/trainer/utils.py add_fused_lm_head and
// trl/kernels/chunked_logprob.py ChunkedLogProbFunction), the CUDA path (Triton folds each tile in place):
//   forward: hidden_states[:, :-1][mask] and labels[:, 1:][mask] (copies of the valid tokens;
//     IndexBackward and masked_scatter keep the bool mask), seven [N] fp32 running statistics, one tile
//     buffer of [min(N, 4096), 32768] in the compute dtype reused for every tile; saved: the [N, H]
//     copy, the targets and log_z.
//   backward: grad_hidden [N, H] and, when the head trains, grad_weight [V, H] accumulated in fp32, the tile
//     buffer again, then both cast back to the parameters' dtype on return; IndexBackward's zero [N, H] and
//     the slice's zero-padded [S, H] gradient.
//
// trl_chunked_lm_loss: TRL's chunked_nll (#5575, the SFT default from 1.9 to 1.14; as in 1.14.2,
// trl/trainer/sft_trainer.py _chunked_cross_entropy_loss and _chunk). What torch allocates, in order:
//   pack (forward): hidden_states[..., :-1, :].reshape(-1, H) (a copy when the batch is above 1), the labels
//     shifted and flattened, the valid mask, argsort of it, hidden[order] (the packed [T, H] copy that every
//     chunk views) and labels[order]. IndexBackward keeps `order`; the checkpoint frames keep the packed
//     hidden and the sorted labels as their inputs.
//   chunks (forward): per chunk of C tokens, under torch.utils.checkpoint(use_reentrant=False), which keeps
//     nothing of its inside: (h @ W.t()) in the compute dtype, .float() of it, log_softmax, and for the
//     entropy metric exp(log_p) and the product: four [C, V] fp32 tensors at once. The model's final hidden
//     states stay alive to the end of the patched forward.
//   chunks (backward, per chunk, last first): the recomputation (the same peak; it keeps log_p, and tanh's
//     result with a soft-cap), nll and log_softmax backward ([C, V] fp32 each, with log_p), the cast back
//     ([C, V] in the compute dtype), mm backward (grad of h [C, H], and of W [V, H] when the head trains,
//     summed in the engine's input buffer: the parameter's gradient; the second one out of place), and
//     SliceBackward's [T, H] gradient added into the packed hidden's buffer.
#include "graph/graph_builder.h"
#include "ops/op_rule.h"

#include <algorithm>

namespace batchfit {
namespace {

constexpr std::uint64_t kF32 = 4;
constexpr std::int64_t kFusedTokenTile = 4096;  // chunked_logprob.py TOKEN_CHUNK_SIZE
constexpr std::int64_t kFusedVocabTile = 32768; // trainer/utils.py _CHUNKED_LOGPROB_CHUNK_SIZE

/// The constant transients of one chunk of trl_chunked_lm_loss, forward and backward (bytes); `weightGrad`:
/// what the backward adds when the head trains. The first chunk's [V, H] gradient is TBackward's view of mm's
/// result, so the engine adds the second one out of place (input_buffer.cpp, can_accumulate_inplace): the
/// buffer, the new gradient and their sum at once; later chunks add in place into the sum.
struct ChunkCost {
    std::uint64_t forward = 0;
    std::uint64_t backward = 0;
    std::uint64_t weightGrad = 0;
};

std::optional<ChunkCost> chunkCost(std::uint64_t v, std::uint64_t h, std::uint64_t c, std::uint64_t dt,
                                   bool softcap) {
    auto mul = [](std::uint64_t a, std::uint64_t b) { return checkedMul(a, b); };
    const auto vh = mul(v, h), cv = mul(c, v), ch = mul(c, h);
    if (!vh || !cv || !ch || *vh > kMaxBytes / 8 || *cv > kMaxBytes / 32 || *ch > kMaxBytes / 8)
        return std::nullopt;
    const std::uint64_t cv4 = *cv * kF32;
    const std::uint64_t entropy = 4 * cv4;                         // logits, log_p, exp, exp * log_p
    const std::uint64_t recompute = entropy + (softcap ? cv4 : 0); // and tanh's result, kept
    const std::uint64_t softmaxBackward = 3 * cv4;                 // log_p, nll's and log_softmax's grads
    const std::uint64_t mm = *cv * dt + *ch * dt;                  // the cast grad, grad of h
    // when the head trains: mm's gradient of W beside those, then (the cast grad freed) the second chunk's
    // out-of-place sum beside the new gradient
    const std::uint64_t mmWeight = *ch * dt + *vh * dt + std::max(*cv * dt, *vh * dt);
    ChunkCost k;
    k.forward = entropy;
    k.backward = std::max({recompute, softmaxBackward, mm});
    k.weightGrad = std::max({recompute, softmaxBackward, mmWeight}) - k.backward;
    return k;
}

/// Both heads take a language model's batched [S, H] hidden states, S >= 2 (the last token predicts nothing).
std::optional<Error> notHiddenStates(const OpContext& c, const std::string& op, const std::string& loss) {
    const auto& in = c.inputs[0];
    if (in.rank() == 2 && in.batched && isFloating(in.dtype) && in.shape[0] >= 2) return std::nullopt;
    return c.fail(op + " (--lm-loss " + loss + ") needs a language model's hidden states [S, H] " +
                  "(S >= 2 tokens), got " + c.in() + "; other models take --lm-loss full");
}

/// What both heads declare as the language-model head they replace: the weight [V, H] (bias, tying) and the
/// labels [S] that come with the batch. Returns V.
Result<std::int64_t> declareHead(const OpContext& c, std::int64_t s, std::int64_t h, OpPlan& p) {
    auto v = c.positive("out_features");
    if (!v) return v.error();
    p.params.push_back({"weight", {*v, h}});
    if (c.flag("bias", false)) p.params.push_back({"bias", {*v}});
    if (auto tied = c.attrs.getString("tied_to")) p.tiedTo = *tied;
    p.target = TensorInfo{{s}, DType::Int64, true, true};
    p.outputs.push_back({{}, DType::Float32, false, true});
    p.isLoss = true;
    return v;
}

/// trl_fused_lm_loss: [S, H] hidden states and the head's weight [V, H] -> the loss.
class FusedLmLossRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        if (auto e = notHiddenStates(c, "trl_fused_lm_loss", "trl-fused")) return *e;
        const auto& in = c.inputs[0];
        // the tokens scored: each but the first max(prompt, 1) (the prompt's labels are -100, and the first
        // token predicts none); on a GPU only those go through the head (add_fused_lm_head's `compact`)
        const std::int64_t prompt = std::max<std::int64_t>(c.attrs.getInt("prompt_tokens").value_or(0), 1);
        if (prompt >= in.shape[0])
            return c.failAttribute("prompt_tokens", "--prompt-len " + std::to_string(prompt) +
                                                        " leaves no token to score in a sequence of " +
                                                        std::to_string(in.shape[0]));
        const std::int64_t t = in.shape[0] - prompt, h = in.shape[1];
        OpPlan p;
        auto v = declareHead(c, in.shape[0], h, p);
        if (!v) return v.error();
        if (*v > (std::int64_t{1} << 32)) return c.failAttribute("out_features", "out_features is too large");
        const std::uint64_t dt = dtypeSize(in.dtype), tu = static_cast<std::uint64_t>(t),
                            hu = static_cast<std::uint64_t>(h), vu = static_cast<std::uint64_t>(*v);
        p.created.push_back({{t, h}, in.dtype, true, true}); // hidden_states[:, :-1][mask]
        p.createdRoles.push_back("valid_hidden");
        p.created.push_back({{t}, DType::Int64, true, true}); // labels[mask]
        p.createdRoles.push_back("targets");
        p.created.push_back({{t}, DType::Float32, true, true}); // log_z
        p.createdRoles.push_back("log_z");
        p.created.push_back(
            {{in.shape[0] - 1}, DType::Bool, true, true}); // the mask (IndexBackward, masked_scatter)
        p.createdRoles.push_back("mask");
        p.saved = {{SavedDecl::Kind::Created, 0},
                   {SavedDecl::Kind::Created, 1},
                   {SavedDecl::Kind::Created, 2},
                   {SavedDecl::Kind::Created, 3}};
        // the tile buffer: [min(N, 4096), 32768] whatever the vocabulary (chunked_logprob.py allocates
        // `chunk_size` columns, and add_fused_lm_head passes _CHUNKED_LOGPROB_CHUNK_SIZE; a smaller
        // vocabulary uses the first columns of each row); its rows are counted as the full 4096, which N
        // reaches from 4,096 predicted tokens on (below that an over-estimate), then the running statistics
        // and nonzero's indices of the two masked selects
        const std::uint64_t tile = static_cast<std::uint64_t>(kFusedTokenTile) * kFusedVocabTile * dt;
        p.fwdWorkspace = Affine{tile, tu * (8 * kF32 + 2 * 16)};
        // The backward's peak is at Function.backward's return: grad_hidden (fp32) and its cast, the tile
        // buffer (and the weight's buffers, below). Less the slice's [S, H] gradient the scheduler allocates
        // for the input, which comes only after they are freed; IndexBackward's [N, H] zeros then (with the
        // incoming gradient and that slice gradient) stay below it by the tile.
        const std::uint64_t ret = tu * hu * (kF32 + (dt == kF32 ? 0 : dt));
        const std::uint64_t inputGrad = static_cast<std::uint64_t>(in.shape[0]) * hu * dt;
        p.bwdWorkspace = Affine{tile, ret > inputGrad ? ret - inputGrad : 0};
        // then IndexBackward's zeros [S - 1, H] beside the slice's gradient (the input's, allocated above)
        if (prompt > 1) p.bwdTail = Affine{0, static_cast<std::uint64_t>(in.shape[0] - 1) * hu * dt};
        // grad_weight accumulated in fp32; cast on return, the cast is the parameter's gradient (an fp32
        // weight's is the buffer itself)
        auto vh = checkedMul(vu, hu);
        auto w32 = vh ? checkedMul(*vh, kF32) : std::nullopt;
        if (!w32 || *w32 > kMaxBytes) return c.fail("the head's weight is too large");
        if (dtypeSize(c.paramDtype) != kF32) p.bwdParamWorkspace = Affine{*w32, 0};
        return p;
    }
};

/// liger_fused_lm_loss: Liger's fused linear cross-entropy (liger_kernel 0.8.5, ops/fused_linear_cross_entropy.py
/// fused_linear_cross_entropy_forward; transformers/model/loss_utils.py LigerForCausalLMLoss), as
/// use_liger_kernel patches a causal LM: the labels are padded and shifted, the hidden states are not, so all
/// B x S tokens go in. The forward makes the gradients: grad_input [BT, H] (zeros_like the input) and, when
/// the input needs a gradient and the head trains, grad_weight [V, H] in the weight's dtype (accum_dtype None,
/// the default); per chunk of tokens the logits [chunk, V] go into one reused buffer in the input's dtype
/// (torch.mm(out=)), the Triton cross-entropy kernel turns them into their gradient in place, and mm / addmm
/// with out= write grad_input's rows and add into grad_weight. chunk = min(next_pow2(ceil(BT / ceil(V / H))),
/// BT): the buffer holds about BT x H elements, at most twice that (the power of two) plus 2 V, which BatchFit
/// counts. Saved: grad_input and grad_weight (ctx.save_for_backward); the backward only scales them in place
/// (element_mul_kernel, skipped for a gradient of 1) and hands them on: no allocation.
class LigerLmLossRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        if (auto e = notHiddenStates(c, "liger_fused_lm_loss", "liger")) return *e;
        const auto& in = c.inputs[0];
        const std::int64_t s = in.shape[0], h = in.shape[1];
        OpPlan p;
        auto v = declareHead(c, s, h, p);
        if (!v) return v.error();
        if (*v > (std::int64_t{1} << 32)) return c.failAttribute("out_features", "out_features is too large");
        p.created.push_back({{s, h}, in.dtype, true, true});
        p.createdRoles.push_back("grad_input (made in the forward)");
        p.created.push_back({{*v, h}, c.paramDtype, false, true});
        p.createdRoles.push_back("grad_weight (made in the forward)");
        p.inputGradCreated = 0;
        p.weightGradCreated = 1; // dropped by the graph builder unless the head trains
        p.saved = {{SavedDecl::Kind::Created, 0}, {SavedDecl::Kind::Created, 1, -1, 0}};
        const std::uint64_t dt = dtypeSize(in.dtype), su = static_cast<std::uint64_t>(s),
                            hu = static_cast<std::uint64_t>(h), vu = static_cast<std::uint64_t>(*v);
        // the logits buffer (<= 2 BT H + 2 V elements), loss_1d (fp32) and target_mask (bool) per token, the
        // padded and shifted labels (int64)
        p.fwdWorkspace = Affine{2 * vu * dt, su * (2 * hu * dt + kF32 + 1 + 2 * 8)};
        return p;
    }
};

/// Forward: [S, H] hidden states -> the packed [S-1, H] copy; creates the argsort order and sorted labels.
class LmLossPackRule : public OpRule {
public:
    Result<OpPlan> plan(const OpContext& c) const override {
        if (auto e = notHiddenStates(c, "trl_chunked_lm_loss", "trl-chunked")) return *e;
        const auto& in = c.inputs[0];
        const std::int64_t t = in.shape[0] - 1, h = in.shape[1];
        OpPlan p;
        p.outputs.push_back({{t, h}, in.dtype, true, true});
        p.created.push_back({{t}, DType::Int64, true, true}); // argsort's order, kept by IndexBackward
        p.createdRoles.push_back("order");
        p.created.push_back({{t}, DType::Int64, true, true}); // labels[order], the chunks' inputs
        p.createdRoles.push_back("sorted_labels");
        p.saved = {{SavedDecl::Kind::Created, 0}, {SavedDecl::Kind::Created, 1}};
        const auto rowBytes = static_cast<std::uint64_t>(h) * dtypeSize(in.dtype);
        const auto tu = static_cast<std::uint64_t>(t);
        // the reshape's copy (a view at batch 1), shifted labels, mask, int8 mask: freed within the pack
        p.fwdWorkspace = Affine{0, tu * rowBytes + tu * (8 + 1 + 1)};
        // IndexBackward: index_put into a zero [T, H] tensor, then the slice's zero-padded gradient
        p.bwdWorkspace = Affine{0, tu * rowBytes};
        return p;
    }
};

/// The chunk loop: inputs the packed [S-1, H] hidden and the model's final [S, H] hidden states (alive to
/// the end of the forward); the lm_head weight; the loss.
class LmLossChunksRule : public OpRule {
public:
    int minInputs() const override { return 2; }
    int maxInputs() const override { return 2; }
    Result<OpPlan> plan(const OpContext& c) const override {
        const auto& in = c.inputs[0];
        OpPlan p;
        auto v = declareHead(c, in.shape[0] + 1, in.shape[1], p);
        if (!v) return v.error();
        auto chunk = c.integer("chunk", 256, 1);
        if (!chunk) return chunk.error();
        if (*chunk > (std::int64_t{1} << 24))
            return c.failAttribute("chunk", "chunk must be at most 16777216");
        const std::int64_t h = in.shape[1];
        const bool softcap = c.real("softcap", 0.0) > 0;
        auto cost = chunkCost(static_cast<std::uint64_t>(*v), static_cast<std::uint64_t>(h),
                              static_cast<std::uint64_t>(*chunk), dtypeSize(in.dtype), softcap);
        if (!cost) return c.fail("the chunk's logits are too large");
        p.saved = {{SavedDecl::Kind::Input, 0}};
        p.gradInputs = 1; // the final hidden states get theirs through the pack's IndexBackward
        p.fwdWorkspace = Affine{cost->forward, 0};
        // SliceBackward's zero-padded [T, H] gradient of one chunk, added into the buffer
        const auto rowBytes = static_cast<std::uint64_t>(h) * dtypeSize(in.dtype);
        p.bwdWorkspace = Affine{cost->backward, static_cast<std::uint64_t>(in.shape[0]) * rowBytes};
        p.bwdParamWorkspace = Affine{cost->weightGrad, 0};
        return p;
    }
};

class ChunkedLmLossRule : public OpRule {
public:
    bool composite() const override { return true; }
    Result<OpPlan> plan(const OpContext& c) const override { return c.fail("composite"); }
    Result<int> expand(GraphBuilder& b, const std::string& path, const Attributes& attrs,
                       const std::vector<int>& inputs) const override {
        Attributes none;
        auto packed = b.addOp("lm_loss_pack", path + ".pack", none, inputs);
        if (!packed) return packed.error();
        return b.addOp("lm_loss_chunks", path, attrs, {*packed, inputs[0]});
    }
};

} // namespace

void registerLmLossOps() {
    addOpRule("trl_fused_lm_loss", std::make_unique<FusedLmLossRule>());
    addOpRule("trl_chunked_lm_loss", std::make_unique<ChunkedLmLossRule>());
    addOpRule("liger_fused_lm_loss", std::make_unique<LigerLmLossRule>());
    addOpRule("lm_loss_pack", std::make_unique<LmLossPackRule>(), true);
    addOpRule("lm_loss_chunks", std::make_unique<LmLossChunksRule>(), true);
}

} // namespace batchfit
