#include "graph/lm_loss_rewrite.h"

#include <algorithm>

namespace batchfit {
namespace {

bool chained(const Layer& l) {
    return !l.isBlock() && l.inputs.empty();
}

std::string tail(const std::vector<Layer>& layers) {
    std::string s;
    const std::size_t from = layers.size() > 4 ? layers.size() - 4 : 0;
    for (std::size_t i = from; i < layers.size(); ++i)
        s += (s.empty() ? "" : " -> ") + (layers[i].isBlock() ? std::string("block") : layers[i].op);
    return s.empty() ? "nothing" : s;
}

} // namespace

Result<Model> applyLmLoss(const Model& model, const TrainingConfig& config) {
    if (config.lmLoss == LmLoss::Full) return model;
    const std::string what = "--lm-loss " + std::string(lmLossName(config.lmLoss));
    if (config.precision == Precision::AmpFp16 || config.precision == Precision::AmpBf16)
        return makeError(what +
                         " is not modelled under autocast (amp-fp16, amp-bf16) yet: the chunk's matmul "
                         "then runs in half with a cached weight copy; use fp32, pure-* or mixed-*");
    if (config.parallel.tp > 1)
        return makeError(what + " is not modelled with tensor parallelism (--tp): the fused head needs the "
                                "whole vocabulary");
    if (config.lmLoss == LmLoss::Liger && config.activationOffload != ActivationOffload::Off &&
        config.activationOffload != ActivationOffload::Checkpoints)
        return makeError(what + " is not modelled with --activation-offload all: Liger saves the head's "
                                "gradients for the backward, which save_on_cpu would copy to the host");
    const auto& ls = model.layers;
    std::size_t i = ls.size();
    auto fail = [&] {
        return makeError(what +
                         " needs a language model that ends in its lm_head (linear) and cross_entropy, "
                         "as transformers' causal LMs do; this one ends in " +
                         tail(ls));
    };
    if (i == 0 || !chained(ls[i - 1]) || ls[i - 1].op != "cross_entropy") return fail();
    --i;
    if (i > 0 && chained(ls[i - 1]) && ls[i - 1].op == "cast" &&
        ls[i - 1].attrs.getString("dtype").value_or("") == "float32")
        --i;
    double softcap = 0;
    if (i >= 3 && chained(ls[i - 3]) && chained(ls[i - 2]) && chained(ls[i - 1]) && ls[i - 3].op == "scale" &&
        ls[i - 2].op == "tanh" && ls[i - 1].op == "scale") {
        const double f = ls[i - 1].attrs.getDouble("factor").value_or(0);
        if (f > 0) {
            softcap = f;
            i -= 3;
        }
    }
    if (i == 0 || ls[i - 1].isBlock() || ls[i - 1].op != "linear") return fail();
    const Layer& head = ls[i - 1];
    if (config.lora.rank > 0 && std::find(config.lora.targets.begin(), config.lora.targets.end(),
                                          head.name) != config.lora.targets.end())
        return makeError(what + ": LoRA on '" + head.name +
                         "' is not modelled (TRL uses the head's weight directly and refuses an "
                         "adapter on it)");
    Layer loss;
    loss.name = head.name;
    loss.op = config.lmLoss == LmLoss::TrlFused     ? "trl_fused_lm_loss"
              : config.lmLoss == LmLoss::TrlChunked ? "trl_chunked_lm_loss"
                                                    : "liger_fused_lm_loss";
    loss.inputs = head.inputs;
    loss.trainable = head.trainable;
    loss.frozenParams = head.frozenParams;
    for (const char* key : {"out_features", "tied_to"})
        if (const auto* v = head.attrs.find(key)) loss.attrs.set(key, *v);
    loss.attrs.set("bias", head.attrs.getBool("bias").value_or(true));
    // sft_trainer.py _CHUNKED_LM_HEAD_CHUNK_SIZE (TRL does not make it a setting)
    if (config.lmLoss == LmLoss::TrlChunked) loss.attrs.set("chunk", std::int64_t{256});
    if (config.lmLoss == LmLoss::TrlFused && config.promptTokens > 0)
        loss.attrs.set("prompt_tokens", config.promptTokens);
    if (softcap > 0) loss.attrs.set("softcap", softcap);
    Model out = model;
    out.layers.resize(i - 1);
    out.layers.push_back(std::move(loss));
    return out;
}

} // namespace batchfit
