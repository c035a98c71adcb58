#include "batchfit/what_if.h"

#include "batchfit/allocator_config.h"
#include "batchfit/estimator.h"

#include <algorithm>
#include <cstdint>

namespace batchfit {

namespace {

/// The path of the model's last linear layer (its output head), or "" when it sits in a repeated block.
void lastLinear(const std::vector<Layer>& layers, const std::string& prefix, bool repeated,
                std::string& out) {
    for (const Layer& l : layers) {
        const std::string path = l.name.empty() ? prefix : (prefix.empty() ? l.name : prefix + "." + l.name);
        if (l.isBlock()) {
            const bool rep = repeated || l.repeat > 1 || l.firstIndex >= 0;
            lastLinear(l.layers, path, rep, out);
            lastLinear(l.after, path, rep, out);
        } else if (l.op == "linear") {
            out = repeated ? std::string() : path;
        }
    }
}

} // namespace

std::uint64_t requiredAtOne(const Model& model, const TrainingConfig& config,
                            std::uint64_t cudaContextBytes) {
    auto e = Estimator::create(model, config, cudaContextBytes);
    if (!e) return UINT64_MAX;
    auto r = e->requiredBytes(1);
    return r ? *r : UINT64_MAX;
}

std::vector<Lever> rankLevers(const Model& model, const TrainingConfig& config, std::uint64_t capacityBytes,
                              std::uint64_t cudaContextBytes) {
    std::vector<Lever> levers;
    auto baseline = Estimator::create(model, config, cudaContextBytes);
    if (!baseline) return levers;
    const std::int64_t base = baseline->maxBatch(capacityBytes).largest;

    auto consider = [&](std::string id, std::string title, std::string cost, TrainingConfig c) {
        if (c == config) return;
        auto e = Estimator::create(model, c, cudaContextBytes);
        if (!e) return;
        // Batches are counted per optimizer update (micro-batch x accumulation steps).
        Lever l{std::move(id),
                std::move(title),
                std::move(cost),
                c,
                e->maxBatch(capacityBytes).largest * c.accumulationSteps,
                base * config.accumulationSteps};
        if (c.activationOffload != config.activationOffload || c.paramOffload != config.paramOffload) {
            auto at = e->estimate(std::max<std::int64_t>(1, l.maxMicroBatch()));
            if (at) {
                l.hostBytes = at->hostTotalBytes();
                l.transferBytes = at->activationTransferBytes + at->parameterTransferBytes;
            }
        }
        levers.push_back(std::move(l));
    };
    if (config.checkpointing != Checkpointing::EveryBlock) {
        TrainingConfig c = config;
        c.checkpointing = Checkpointing::EveryBlock;
        consider("checkpointing", "Gradient checkpointing of every block", "≈+33% compute", c);
    }
    if (config.precision == Precision::Fp32) {
        TrainingConfig c = config;
        c.precision = Precision::AmpBf16;
        consider("amp-bf16", "bf16 mixed precision (autocast)", "needs bf16 hardware (Ampere+)", c);
    }
    const bool adamLike = config.optimizer == OptimizerKind::Adam || config.optimizer == OptimizerKind::AdamW;
    if (adamLike) {
        TrainingConfig c = config;
        c.optimizer = OptimizerKind::Adam8bit;
        c.amsgrad = false;
        consider("adam8bit", "8-bit Adam (bitsandbytes)", "small accuracy risk", c);
        c = config;
        c.optimizer = OptimizerKind::SgdMomentum;
        c.amsgrad = false;
        consider("sgd-momentum", "SGD with momentum instead of Adam", "may need retuning", c);
    }
    // fused=True exists for Adam, AdamW and SGD (torch >= 2.0; torch/optim/adam.py `_fused_adam`): no foreach
    // copy of the parameters during step(). Not offered for 1.13 rules (Adam's fused is 2.0+).
    const bool fusable = adamLike || config.optimizer == OptimizerKind::Sgd ||
                         config.optimizer == OptimizerKind::SgdMomentum ||
                         config.optimizer == OptimizerKind::SgdNesterov;
    if (fusable && config.torch == TorchRules::Torch2 && resolvedImpl(config) != OptimizerImpl::Fused) {
        TrainingConfig c = config;
        c.impl = OptimizerImpl::Fused;
        consider("fused", "Fused optimizer (fused=True)", "none (CUDA, torch >= 2.0)", c);
    }
    if (config.recipe == Recipe::Dpo && config.refLogps == RefLogps::Live) {
        // precompute_ref_log_probs=True: no reference forward in the step, and no reference copy kept
        TrainingConfig c = config;
        c.refLogps = RefLogps::Precomputed;
        consider("ref-logps-precomputed", "Precompute DPO's reference log-probabilities",
                 "one inference pass over the data set before training", c);
    }
    if (config.recipe == Recipe::Grpo && config.refLogps == RefLogps::Live) {
        // beta=0.0 (TRL's default): no reference forward, and no reference copy kept
        TrainingConfig c = config;
        c.refLogps = RefLogps::None;
        consider("grpo-no-reference", "GRPO without the reference (beta=0.0)", "no KL penalty in the loss",
                 c);
    }
    if (config.lmLoss == LmLoss::Full && config.recipe == Recipe::Sft) { // DPO and GRPO run TRL's fused head
        // The same loss without the whole logits, as TRL's SFTTrainer computes it (no lever where the model
        // has no lm_head + cross_entropy, or under autocast: the estimator refuses those)
        TrainingConfig c = config;
        c.lmLoss = LmLoss::TrlFused;
        consider("trl-fused-loss", "TRL's fused LM head (SFTTrainer's loss, TRL 1.15+)",
                 "train with TRL's SFTTrainer (or a fused linear cross-entropy)", c);
    }
    if (config.activationOffload == ActivationOffload::Off && config.checkpointing != Checkpointing::None &&
        config.parallel.pp <= 1) {
        // transformers' offload of each checkpointed layer's input: what checkpointing keeps goes to pinned
        // host memory. Not save_on_cpu around the whole forward: it copies every saved tensor, the weights
        // too, a host bill no advice should run up unasked (the setting offers it).
        TrainingConfig c = config;
        c.activationOffload = ActivationOffload::Checkpoints;
        consider("activation-offload", "Offload the checkpointed layers' inputs to host memory",
                 "host memory and PCIe copies each step", c);
    }
    if (!config.paramOffload && shardsParameters(config.parallel.strategy)) {
        // ZeRO-Infinity / FSDP CPUOffload on the strategy already chosen
        TrainingConfig c = config;
        c.paramOffload = true;
        consider("param-offload", "Offload parameter shards to host memory (ZeRO-3 offload_param / FSDP CPUOffload)",
                 "host memory and PCIe copies each step", c);
    }
    if (!config.optimizerOffload && config.optimizer != OptimizerKind::Sgd) {
        TrainingConfig c = config;
        c.optimizerOffload = true;
        consider("offload", "Offload optimizer states to CPU", "slower optimizer step", c);
    }
    if (config.lora.dora) {
        // plain LoRA on the same targets: no magnitude, no norm, nothing but the adapters' own tensors
        TrainingConfig c = config;
        c.lora.dora = false;
        consider("lora-no-dora", "LoRA without DoRA (use_dora=False)", "plain LoRA adapters", c);
    }
    if (config.lora.rank == 0) {
        // LoRA r=16 on the family's default (attention) targets, bf16 weights when the set-up was fp32: what
        // people fine-tuning an LLM run (an error, and no lever, when the model has no default targets).
        TrainingConfig c = config;
        c.lora.rank = 16;
        c.lora.alpha = 32;
        c.lora.dropout = 0.05;
        if (c.precision == Precision::Fp32) c.precision = Precision::PureBf16;
        consider("lora", "LoRA r=16 on attention (PEFT defaults), bf16 weights", "fine-tunes adapters only",
                 c);
    }
    if (!config.quant.enabled()) {
        // QLoRA as its paper and PEFT's examples run it: NF4 + double quantization, bf16 compute under
        // autocast, prepare_model_for_kbit_training (fp32 non-quantized weights, checkpointing every
        // block), adapters as in the LoRA lever unless LoRA is already set.
        TrainingConfig c = config;
        if (c.lora.rank == 0) {
            c.lora.rank = 16;
            c.lora.alpha = 32;
            c.lora.dropout = 0.05;
        }
        c.quant.kind = QuantKind::Nf4;
        c.quant.doubleQuant = true;
        c.quant.computeDtype = DType::BFloat16;
        c.quant.prepare = true;
        if (c.precision != Precision::AmpFp16) c.precision = Precision::AmpBf16;
        applyQuantDefaults(c, config.checkpointing != Checkpointing::None);
        consider("qlora", "QLoRA: 4-bit NF4 base weights with LoRA r=16", "fine-tunes adapters only", c);
    }
    std::string head;
    lastLinear(model.layers, "", false, head);
    if (!head.empty() && config.lora.rank == 0 && config.trainOnly.empty() && config.freeze.empty()) {
        // Train the classifier only (a frozen backbone: linear probing / feature extraction).
        TrainingConfig c = config;
        c.trainOnly = {head};
        consider("freeze-backbone", "Freeze the backbone, train only " + head, "fine-tunes the head only", c);
    }
    if (config.parallel.enabled()) {
        // Data-parallel levers on the same GPUs: a stronger sharding, then more GPUs of the same kind.
        const ParallelStrategy now = config.parallel.strategy;
        if (!shardsGradients(now)) {
            TrainingConfig c = config;
            c.parallel.strategy = ParallelStrategy::Zero2;
            consider("zero2", "ZeRO-2 on these GPUs (optimizer states and gradients sharded)",
                     "reduce-scatter instead of all-reduce", c);
        }
        if (!shardsParameters(now)) {
            TrainingConfig c = config;
            c.parallel.strategy = ParallelStrategy::Fsdp;
            consider("fsdp", "FSDP full shard (parameters, gradients and states sharded)",
                     "an all-gather per block, forward and backward", c);
            c.parallel.strategy = ParallelStrategy::Zero3;
            consider("zero3", "DeepSpeed ZeRO-3 (parameters, gradients and states sharded)",
                     "an all-gather per layer, forward and backward", c);
        }
        if (config.parallel.tp == 1 && config.parallel.gpus % 2 == 0) {
            TrainingConfig c = config;
            c.parallel.tp = 2;
            consider("tp2", "Tensor parallel TP = 2 (heads and MLP columns split over pairs of GPUs)",
                     "an all-reduce per layer, forward and backward", c);
        }
        if (shardsOptimizerStates(now) && config.parallel.gpus <= 50000) {
            TrainingConfig c = config;
            c.parallel.gpus = config.parallel.gpus * 2;
            consider("more-gpus",
                     std::to_string(c.parallel.gpus) + " GPUs instead of " +
                         std::to_string(config.parallel.gpus),
                     "twice the GPUs", c);
        }
    }
    if (!config.fragmentationFraction) {
        // The caching allocator's fragmentation: one growing address range per pool instead of fixed
        // segments (PyTorch 2.1+; what torch's own OOM message suggests).
        auto conf = parseAllocConf(config.allocConf);
        if (conf && !conf->expandableSegments) {
            conf->expandableSegments = true;
            TrainingConfig c = config;
            c.allocConf = allocConfText(*conf);
            consider("expandable-segments", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                     "none (PyTorch >= 2.1)", c);
        }
    }
    if (config.accumulationSteps == 1 && base < 8) {
        TrainingConfig c = config;
        c.accumulationSteps = 4;
        consider("accumulation", "Micro-batches with gradient accumulation (×4)", "4 steps per update", c);
    }
    if (base == 0) { // nothing fits: what each change saves at batch 1 ranks them
        const std::uint64_t needs = requiredAtOne(model, config, cudaContextBytes);
        for (Lever& l : levers) {
            const std::uint64_t with = requiredAtOne(model, l.config, cudaContextBytes);
            l.savedBytesAtOne =
                with >= needs ? -static_cast<std::int64_t>(std::min<std::uint64_t>(with - needs, INT64_MAX))
                              : static_cast<std::int64_t>(std::min<std::uint64_t>(needs - with, INT64_MAX));
        }
    }
    // Memory-only changes first, by the batch they allow (by what they save at batch 1 while nothing fits);
    // then the fine-tuning ones (LoRA, a frozen backbone), which change what is trained: shown with their
    // batch, never the first suggestion for full training.
    // While nothing fits, a lever that makes batch 1 fit comes before every one that does not.
    std::stable_sort(levers.begin(), levers.end(), [](const Lever& a, const Lever& b) {
        if ((a.maxBatch > 0) != (b.maxBatch > 0)) return a.maxBatch > 0;
        if (leverChangesTraining(a) != leverChangesTraining(b)) return !leverChangesTraining(a);
        if (a.maxBatch != b.maxBatch) return a.maxBatch > b.maxBatch;
        return a.savedBytesAtOne > b.savedBytesAtOne;
    });
    return levers;
}

bool leverChangesTraining(const Lever& l) {
    // lora-no-dora: the magnitude vectors no longer train (a different method, as LoRA is to full training)
    return l.id == "lora" || l.id == "qlora" || l.id == "freeze-backbone" || l.id == "lora-no-dora";
}

bool leverHelps(const Lever& l) {
    if (l.baselineMaxBatch <= 0) return l.maxBatch > 0;
    // gain >= 1%, in integers: (max - base) * 100 >= base
    return l.maxBatch > l.baselineMaxBatch &&
           (l.maxBatch - l.baselineMaxBatch) >= (l.baselineMaxBatch + 99) / 100;
}

} // namespace batchfit
