// The settings table: every training setting, declared once (batchfit/settings.h). The groups (LoRA,
// quantization, parallelism) are in settings_table_groups.cpp.
#include "batchfit/allocator_config.h"
#include "batchfit/gpu.h"
#include "setting_builders.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace batchfit {
namespace settingdef {

void addGroupSettings(std::vector<SettingInfo>& out);   // settings_table_groups.cpp
void addServingSettings(std::vector<SettingInfo>& out); // settings_table_serving.cpp

namespace {

constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50; // 1 PiB: far above any device

/// A TrainingConfig switch with its flag: `--amsgrad` sets it, `--no-set-to-none` clears it.
struct Switch {
    const char *key, *flag, *label, *help;
    bool TrainingConfig::*member;
    FlagForm form = FlagForm::SetsTrue;
};

void addSwitches(std::vector<SettingInfo>& out, std::initializer_list<Switch> switches) {
    for (const Switch& f : switches) {
        SettingInfo s = base({f.key, f.flag, "", f.label, f.help}, SettingType::Switch);
        s.form = f.form;
        auto member = f.member;
        bindBool(
            s, [member](auto& t) -> auto& { return t.config.*member; });
        out.push_back(std::move(s));
    }
}

void addGpuAndBatch(std::vector<SettingInfo>& out) {
    SettingInfo gpu = base(
        {"gpu", "--gpu", "ID|NGiB", "GPU", "a catalogue GPU (see `gpus`) or a custom capacity, e.g. 24GiB"},
        SettingType::Text);
    gpu.get = [](const TrainingSetup& t) -> SettingValue { return t.gpuId; };
    gpu.set = [](TrainingSetup& t, const SettingValue& v) { t.gpuId = std::get<std::string>(v); };
    // A catalogue id in the catalogue's spelling, or "custom" (its capacity is gpu_memory_bytes). The
    // command line's capacity form (24GiB) sets both: batchfit-cli handles --gpu itself.
    gpu.canonical = [](std::string_view text) -> Result<std::string> {
        if (text == "custom") return std::string("custom");
        auto g = findGpu(std::string(text));
        if (!g) return g.error();
        return g->id;
    };
    out.push_back(std::move(gpu));

    SettingInfo capacity = base(
        {"gpu_memory_bytes", "", "", "Custom GPU capacity", "the capacity of a \"custom\" GPU, in bytes"},
        SettingType::Bytes);
    capacity.unit = "GiB";
    bindIntOrUnset(
        capacity, [](auto& t) -> auto& { return t.customGpuBytes; }, 0);
    out.push_back(std::move(range(capacity, 1, kMaxBytes)));

    SettingInfo batch =
        base({"batch", "--batch", "N", "Micro-batch", "micro-batch size (default 1)"}, SettingType::Integer);
    bindInt(
        batch, [](auto& t) -> auto& { return t.batch; });
    out.push_back(std::move(range(batch, 1, static_cast<double>(std::int64_t{1} << 31))));
}

void addOptimizer(std::vector<SettingInfo>& out) {
    SettingInfo opt =
        base({"optimizer", "--optimizer", "NAME", "Optimizer",
              "sgd, sgd-momentum, sgd-nesterov, adam (default), adamw, rmsprop, adagrad, adafactor, lion, "
              "adam8bit, paged-adamw, paged-adamw-8bit (bitsandbytes' paged optimizers: states of tensors "
              ">= 1e5 elements in CUDA managed memory, reported apart from the peak)"},
             SettingType::Choice);
    bindChoice(
        opt, [](auto& t) -> auto& { return t.config.optimizer; }, optimizerName, parseOptimizer,
        allOptimizers());
    out.push_back(std::move(opt));

    SettingInfo impl = base({"optimizer_impl", "--impl", "NAME", "Optimizer implementation",
                             "default (what torch picks on a GPU: foreach in 2.x for SGD/Adam/AdamW/RMSprop/"
                             "Adagrad, for-loop in 1.13), for-loop, foreach, fused"},
                            SettingType::Choice);
    bindChoice(
        impl, [](auto& t) -> auto& { return t.config.impl; }, optimizerImplName, parseOptimizerImpl,
        std::vector<OptimizerImpl>{OptimizerImpl::Default, OptimizerImpl::ForLoop, OptimizerImpl::Foreach,
                                   OptimizerImpl::Fused});
    out.push_back(std::move(impl));

    addSwitches(
        out, {{"amsgrad", "--amsgrad", "AMSGrad", "Adam/AdamW keep max_exp_avg_sq", &TrainingConfig::amsgrad},
              {"rmsprop_momentum", "--rmsprop-momentum", "RMSprop momentum",
               "RMSprop keeps a momentum buffer", &TrainingConfig::rmspropMomentum},
              {"rmsprop_centered", "--rmsprop-centered", "RMSprop centered",
               "RMSprop keeps grad_avg (centered=True)", &TrainingConfig::rmspropCentered}});
}

void addStepShape(std::vector<SettingInfo>& out) {
    SettingInfo precision = base({"precision", "--precision", "NAME", "Precision",
                                  "fp32 (default), amp-fp16, amp-bf16, pure-fp16, pure-bf16, mixed-fp16, "
                                  "mixed-bf16"},
                                 SettingType::Choice);
    bindChoice(
        precision, [](auto& t) -> auto& { return t.config.precision; }, precisionName, parsePrecision,
        allPrecisions());
    out.push_back(std::move(precision));

    SettingInfo ckpt = base({"checkpointing", "--checkpointing", "MODE", "Checkpointing",
                             "none (default), every-block, every-k, selective"},
                            SettingType::Choice);
    bindChoice(
        ckpt, [](auto& t) -> auto& { return t.config.checkpointing; }, checkpointingName, parseCheckpointing,
        std::vector<Checkpointing>{Checkpointing::None, Checkpointing::EveryBlock,
                                   Checkpointing::EveryKthBlock, Checkpointing::Selective});
    out.push_back(std::move(ckpt));

    SettingInfo every = base({"checkpoint_every", "--checkpoint-every", "K", "Checkpoint every k blocks",
                              "k for every-k (default 2)"},
                             SettingType::Integer);
    bindInt(
        every, [](auto& t) -> auto& { return t.config.checkpointEvery; });
    out.push_back(std::move(range(every, 1, 1000000)));

    SettingInfo mode = base({"checkpoint_mode", "--checkpoint-mode", "M", "Checkpoint mode",
                             "reentrant (torch.utils.checkpoint's default, and Hugging Face's) or "
                             "non-reentrant (use_reentrant=False): what the recomputation keeps"},
                            SettingType::Choice);
    bindChoice(
        mode, [](auto& t) -> auto& { return t.config.checkpointMode; }, checkpointModeName,
        parseCheckpointMode,
        std::vector<CheckpointMode>{CheckpointMode::Reentrant, CheckpointMode::NonReentrant});
    out.push_back(std::move(mode));

    SettingInfo loss =
        base({"lm_loss", "--lm-loss", "NAME", "Language-model loss",
              "full (default: transformers' ForCausalLMLoss over the whole [S, vocab] logits), "
              "trl-fused (TRL 1.16 SFTTrainer: a fused head, logits in tiles), trl-chunked "
              "(TRL 1.9-1.14's chunked_nll: 256 tokens at a time, checkpointed) or liger (Liger's fused "
              "linear cross-entropy, use_liger_kernel: the head's gradients made in the forward)"},
             SettingType::Choice);
    bindChoice(
        loss, [](auto& t) -> auto& { return t.config.lmLoss; }, lmLossName, parseLmLoss,
        std::vector<LmLoss>{LmLoss::Full, LmLoss::TrlFused, LmLoss::TrlChunked, LmLoss::Liger});
    out.push_back(std::move(loss));

    SettingInfo offload = base(
        {"activation_offload", "--activation-offload", "MODE", "Activation offload",
         "off (default), all (the forward and loss under torch.autograd.graph.save_on_cpu(): every saved "
         "tensor, weights included, to pageable host memory), all-pinned (the same, pin_memory=True) or "
         "checkpoints (transformers 5's activation_checkpointing_kwargs={\"offload\": True}: each "
         "checkpointed layer's input to pinned host memory; needs --checkpointing)"},
        SettingType::Choice);
    bindChoice(
        offload, [](auto& t) -> auto& { return t.config.activationOffload; }, activationOffloadName,
        parseActivationOffload,
        std::vector<ActivationOffload>{ActivationOffload::Off, ActivationOffload::All,
                                       ActivationOffload::AllPinned, ActivationOffload::Checkpoints});
    out.push_back(std::move(offload));

    SettingInfo recipe = base(
        {"recipe", "--recipe", "NAME", "Recipe",
         "sft (default: supervised fine-tuning), dpo (TRL's DPOTrainer: the batch counts chosen/rejected "
         "pairs, run as twice as many sequences; a reference forward without gradients after the policy's) "
         "or grpo (TRL's GRPOTrainer: the batch counts completions of --prompt-len tokens plus the rest of "
         "the sequence, generated before the step; see --generation); both score with TRL's fused head"},
        SettingType::Choice);
    bindChoice(
        recipe, [](auto& t) -> auto& { return t.config.recipe; }, recipeName, parseRecipe,
        std::vector<Recipe>{Recipe::Sft, Recipe::Dpo, Recipe::Grpo});
    out.push_back(std::move(recipe));

    SettingInfo ref = base(
        {"ref_logps", "--ref-logps", "WHEN", "Reference log-probabilities",
         "live (default: the reference's forward in every step; the base model under LoRA, else a frozen "
         "copy of the model on the GPU), precomputed (DPO's precompute_ref_log_probs=True: no reference in "
         "the steps) or none (GRPO's beta=0.0, TRL's default: no reference)"},
        SettingType::Choice);
    bindChoice(
        ref, [](auto& t) -> auto& { return t.config.refLogps; }, refLogpsName, parseRefLogps,
        std::vector<RefLogps>{RefLogps::Live, RefLogps::Precomputed, RefLogps::None});
    out.push_back(std::move(ref));

    SettingInfo prompt = base({"prompt_tokens", "--prompt-len", "N", "Prompt tokens",
                               "tokens at the start of each sequence that are not scored (labels -100): "
                               "TRL's fused head scores the rest; GRPO's completions are the rest (default "
                               "0: none; under GRPO, all but TRL's default 512 completion tokens)"},
                              SettingType::Integer);
    bindInt(
        prompt, [](auto& t) -> auto& { return t.config.promptTokens; });
    out.push_back(std::move(range(prompt, 0, static_cast<double>(std::int64_t{1} << 40))));

    SettingInfo gen = base(
        {"generation", "--generation", "WHERE", "Generation",
         "GRPO's completions: transformers (default: generate() on this GPU before the step), vllm-colocate "
         "(a vLLM engine in the training process keeps --vllm-memory of the GPU) or vllm-server (other "
         "GPUs)"},
        SettingType::Choice);
    bindChoice(
        gen, [](auto& t) -> auto& { return t.config.generation; }, generationName, parseGeneration,
        std::vector<Generation>{Generation::Transformers, Generation::VllmColocate, Generation::VllmServer});
    out.push_back(std::move(gen));

    SettingInfo vllm = base({"vllm_memory_fraction", "--vllm-memory", "F", "vLLM share of the GPU",
                             "vllm_gpu_memory_utilization of a colocated vLLM engine (default 0.3)"},
                            SettingType::Number);
    vllm.unit = "%";
    vllm.maxExcluded = true;
    bindReal(
        vllm, [](auto& t) -> auto& { return t.config.vllmMemoryFraction; });
    out.push_back(std::move(range(vllm, 0, 1)));

    SettingInfo spg =
        base({"steps_per_generation", "--steps-per-generation", "N", "Steps per generation",
              "GRPO's steps_per_generation: completions for N micro-batches are generated at once "
              "(batch x N sequences; default 0: the gradient accumulation)"},
             SettingType::Integer);
    bindInt(
        spg, [](auto& t) -> auto& { return t.config.stepsPerGeneration; });
    out.push_back(std::move(range(spg, 0, 1 << 20)));

    SettingInfo iterations =
        base({"num_iterations", "--num-iterations", "N", "GRPO iterations",
              "GRPO's num_iterations: optimization passes over each generation batch "
              "(default 1; above 1 TRL also computes the old policy's log-probabilities)"},
             SettingType::Integer);
    bindInt(
        iterations, [](auto& t) -> auto& { return t.config.numIterations; });
    out.push_back(std::move(range(iterations, 1, 1 << 20)));

    SettingInfo acc = base({"accumulation_steps", "--accumulation", "N", "Gradient accumulation",
                            "micro-batches per optimizer step (default 1)"},
                           SettingType::Integer);
    bindInt(
        acc, [](auto& t) -> auto& { return t.config.accumulationSteps; });
    out.push_back(std::move(range(acc, 1, 1000000)));

    addSwitches(
        out, {{"zero_grad_set_to_none", "--no-set-to-none", "zero_grad(set_to_none)",
               "zero_grad(set_to_none=False): gradients stay allocated", &TrainingConfig::zeroGradSetToNone,
               FlagForm::SetsFalse},
              {"optimizer_offload", "--offload", "Optimizer offload",
               "optimizer states and master weights in host memory", &TrainingConfig::optimizerOffload},
              {"param_offload", "--offload-params", "Parameter offload",
               "parameter and gradient shards in host memory, the optimizer step on the CPU (ZeRO-3 "
               "offload_param / FSDP CPUOffload(offload_params=True)); needs --strategy zero3, fsdp, "
               "fsdp-grad-op, hsdp or fsdp2 (one GPU is enough)",
               &TrainingConfig::paramOffload},
              {"eager_module_loading", "--eager-loading", "Eager module loading",
               "CUDA_MODULE_LOADING=EAGER, or torch < 1.13 / CUDA < 11.7: all kernel images load at start-up "
               "(about 900 MiB more outside PyTorch's allocator)",
               &TrainingConfig::eagerModuleLoading},
              {"first_step", "--first-step", "First step",
               "simulate step 1 (optimizer states created in step()) instead of the steady state",
               &TrainingConfig::firstStep}});

    SettingInfo torch =
        base({"torch", "--torch", "2|1.13", "PyTorch rules",
              "whose autograd formulas decide what is saved (default 2: PyTorch 2.x; 1.13 kept "
              "more, e.g. the input of a mean over dims or a global average pool)"},
             SettingType::Choice);
    bindChoice(
        torch, [](auto& t) -> auto& { return t.config.torch; }, torchRulesName, parseTorchRules,
        std::vector<TorchRules>{TorchRules::Torch2, TorchRules::Torch113});
    out.push_back(std::move(torch));

    for (const bool freeze : {true, false}) {
        SettingInfo s =
            freeze
                ? base({"freeze", "--freeze", "GLOB[,GLOB]", "Frozen layers",
                        "freeze these layers (requires_grad=False): no gradient, no optimizer state, and ops "
                        "save only what the remaining gradients need; GLOB matches a layer path (`check` "
                        "lists them: 'layer1*', 'h[0]*') or a PyTorch module name ('h.0.*'), and a block's "
                        "path covers what it contains"},
                       SettingType::List)
                : base({"train_only", "--train-only", "GLOB[,GLOB]", "Layers that train",
                        "only these layers train (e.g. 'fc' for a frozen backbone); with --freeze too, a "
                        "layer trains when it is listed here and not frozen there; with LoRA: the layers "
                        "that train besides the adapters (PEFT's modules_to_save)"},
                       SettingType::List);
        s.maxItems = 4096;
        if (freeze)
            bindStrings(
                s, [](auto& t) -> auto& { return t.config.freeze; });
        else
            bindStrings(
                s, [](auto& t) -> auto& { return t.config.trainOnly; });
        out.push_back(std::move(s));
    }
}

void addOverheads(std::vector<SettingInfo>& out) {
    SettingInfo ctx = base({"cuda_context_bytes", "--context-mib", "N", "CUDA context",
                            "CUDA context and libraries outside PyTorch's allocator, in MiB (default: the "
                            "GPU's)"},
                           SettingType::Bytes);
    ctx.unit = "MiB";
    bindOptional(
        ctx, [](auto& t) -> auto& { return t.config.cudaContextBytes; });
    out.push_back(std::move(range(ctx, 0, kMaxBytes)));

    SettingInfo cublas = base({"cublas_workspace_bytes", "--cublas-workspace-kib", "N", "cuBLAS workspace",
                               "cuBLAS workspace per handle in KiB (default: the GPU's; 0 as with "
                               "CUBLAS_WORKSPACE_CONFIG=:0:0, or to compare with a CPU measurement)"},
                              SettingType::Bytes);
    cublas.unit = "KiB";
    bindOptional(
        cublas, [](auto& t) -> auto& { return t.config.cublasWorkspaceBytes; });
    out.push_back(std::move(range(cublas, 0, kMaxBytes)));

    SettingInfo wscap =
        base({"cudnn_workspace_cap_bytes", "--cudnn-ws-cap-mib", "N", "cuDNN workspace cap",
              "CUDNN_CONV_WSCAP_DBG: each cuDNN convolution workspace at most N MiB (default: "
              "uncapped; workspaces never cause an out-of-memory error, PyTorch falls back to "
              "engines that need less)"},
             SettingType::Bytes);
    wscap.unit = "MiB";
    bindOptional(
        wscap, [](auto& t) -> auto& { return t.config.cudnnWorkspaceCapBytes; });
    out.push_back(std::move(range(wscap, 0, kMaxBytes)));

    SettingInfo frag = base({"fragmentation_fraction", "--fragmentation", "F", "Fragmentation override",
                             "override the replay: reserved = peak x (1 + F), rounded to 2 MiB"},
                            SettingType::Number);
    frag.maxExcluded = true;
    bindOptional(
        frag, [](auto& t) -> auto& { return t.config.fragmentationFraction; });
    out.push_back(std::move(range(frag, 0, 1)));

    SettingInfo conf =
        base({"alloc_conf", "--alloc-conf", "TEXT", "PYTORCH_CUDA_ALLOC_CONF",
              "PYTORCH_CUDA_ALLOC_CONF for the caching-allocator replay that gives reserved "
              "memory and the verdict, e.g. expandable_segments:True or max_split_size_mb:128"},
             SettingType::Text);
    conf.get = [](const TrainingSetup& t) -> SettingValue { return t.config.allocConf; };
    conf.set = [](TrainingSetup& t, const SettingValue& v) { t.config.allocConf = std::get<std::string>(v); };
    conf.canonical = [](std::string_view text) -> Result<std::string> {
        auto c = parseAllocConf(text);
        if (!c) return c.error();
        return allocConfText(*c);
    };
    out.push_back(std::move(conf));

    SettingInfo seqs = base({"replay_sequences", "--replay-seqs", "L,L,...", "Batch lengths replayed",
                             "variable-length batches: the sequence lengths of the steps replayed before the "
                             "one estimated (the first is the first step, then steady steps; the model's own "
                             "length, the longest, comes last), e.g. 256,1024,512: the cache they leave "
                             "fragments"},
                            SettingType::Lengths);
    seqs.maxItems = kMaxReplaySequences;
    seqs.get = [](const TrainingSetup& t) -> SettingValue { return t.config.replaySequences; };
    seqs.set = [](TrainingSetup& t, const SettingValue& v) {
        t.config.replaySequences = std::get<std::vector<std::int64_t>>(v);
    };
    out.push_back(std::move(range(seqs, 1, std::int64_t{1} << 24)));

    SettingInfo epoch =
        base({"epoch_samples", "--epoch-samples", "N", "Samples per epoch",
              "training samples per epoch (len(dataset)): the epoch's last, smaller batch "
              "(DataLoader drop_last=False; per GPU ceil(N / data-parallel GPUs)) is replayed "
              "before the step estimated, as the next epoch's first batch meets its cache"},
             SettingType::Integer);
    bindOptional(
        epoch, [](auto& t) -> auto& { return t.config.epochSamples; });
    out.push_back(std::move(range(epoch, 1, static_cast<double>(kMaxEpochSamples))));

    SettingInfo margin = base({"margin_fraction", "--margin", "F", "Safety margin",
                               "safety margin, a fraction of capacity (0.05) or a percentage (5%)"},
                              SettingType::Number);
    margin.unit = "%";
    margin.maxExcluded = true;
    bindReal(
        margin, [](auto& t) -> auto& { return t.config.marginFraction; });
    out.push_back(std::move(range(margin, 0, 1)));
}

std::vector<SettingInfo> buildTable() {
    std::vector<SettingInfo> out;
    addGpuAndBatch(out);
    addOptimizer(out);
    addStepShape(out);
    addGroupSettings(out);
    addOverheads(out);
    addServingSettings(out);
    const TrainingSetup defaults;
    for (auto& s : out) s.defaultValue = s.get(defaults);
    return out;
}

} // namespace
} // namespace settingdef

const std::vector<SettingInfo>& settingsTable() {
    static const std::vector<SettingInfo> table = settingdef::buildTable();
    return table;
}

const SettingInfo* findSetting(std::string_view key) {
    for (const auto& s : settingsTable())
        if (s.key == key) return &s;
    return nullptr;
}

const SettingInfo* findSettingByFlag(std::string_view flag) {
    if (flag.empty()) return nullptr;
    for (const auto& s : settingsTable())
        if (s.flag == flag) return &s;
    return nullptr;
}

} // namespace batchfit
