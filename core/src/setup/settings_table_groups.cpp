// The settings table's groups: LoRA ("lora."), quantization ("quant.") and parallelism ("parallel."). A group
// is written to a model file as one object, present when the group is in use (groupInUse()).
#include "batchfit/dtype.h"
#include "setting_builders.h"

namespace batchfit::settingdef {
namespace {

constexpr double kMaxElements = static_cast<double>(std::int64_t{1} << 50);

void addLora(std::vector<SettingInfo>& out) {
    SettingInfo rank = base({"lora.rank", "--lora-rank", "R", "LoRA rank",
                             "LoRA fine-tuning (PEFT): adapters of rank R on the target linears, the rest "
                             "frozen"},
                            SettingType::Integer);
    bindIntOrUnset(
        rank, [](auto& t) -> auto& { return t.config.lora.rank; }, 0);
    out.push_back(std::move(range(rank, 1, 65536)));

    SettingInfo alpha = base({"lora.alpha", "--lora-alpha", "A", "LoRA alpha",
                              "lora_alpha (default 8; the adapter output is scaled by A/R)"},
                             SettingType::Number);
    alpha.minExcluded = true;
    bindReal(
        alpha, [](auto& t) -> auto& { return t.config.lora.alpha; });
    out.push_back(std::move(range(alpha, 0, 1e6)));

    SettingInfo dropout = base({"lora.dropout", "--lora-dropout", "P", "LoRA dropout",
                                "lora_dropout (default 0); each adapted linear has its own dropout"},
                               SettingType::Number);
    dropout.maxExcluded = true;
    bindReal(
        dropout, [](auto& t) -> auto& { return t.config.lora.dropout; });
    out.push_back(std::move(range(dropout, 0, 1)));

    SettingInfo dora =
        base({"lora.dora", "--lora-dora", "", "DoRA",
              "use_dora: weight-decomposed LoRA (a trainable magnitude per output row; every "
              "forward recomputes the row norms of W + BA in the adapters' dtype, and keeps the "
              "base output and the adapter output of each adapted linear for the backward)"},
             SettingType::Switch);
    dora.form = FlagForm::SetsTrue;
    bindBool(
        dora, [](auto& t) -> auto& { return t.config.lora.dora; });
    out.push_back(std::move(dora));

    SettingInfo targets = base(
        {"lora.targets", "--lora-targets", "NAMES|all-linear", "LoRA targets",
         "target_modules: names a linear's path ends with (q_proj,v_proj), or every linear but the output "
         "head; default: PEFT's for the model's family (q_proj,v_proj for Llama/Mistral/Qwen, c_attn for "
         "GPT-2, query,value for BERT)"},
        SettingType::List);
    targets.maxItems = 4096;
    bindStrings(
        targets, [](auto& t) -> auto& { return t.config.lora.targets; });
    out.push_back(std::move(targets));
}

void addQuant(std::vector<SettingInfo>& out) {
    SettingInfo type = base(
        {"quant.type", "--quant", "nf4|fp4|int8", "Quantized base weights",
         "QLoRA-style base weights (bitsandbytes via transformers' BitsAndBytesConfig): every linear but "
         "the output head and tied weights stores 4-bit codes + an fp32 absmax per 64 (0.5625 B/param), or "
         "int8 + a scale per row; the matmul dequantizes its weight on the fly; implies PEFT's "
         "prepare_model_for_kbit_training (the other weights in fp32, checkpointing every block unless "
         "--checkpointing says otherwise)"},
        SettingType::Choice);
    bindChoice(
        type, [](auto& t) -> auto& { return t.config.quant.kind; }, quantKindName, parseQuantKind,
        std::vector<QuantKind>{QuantKind::None, QuantKind::Nf4, QuantKind::Fp4, QuantKind::Int8});
    out.push_back(std::move(type));

    SettingInfo dq = base({"quant.double_quant", "--double-quant", "", "Double quantization",
                           "bnb_4bit_use_double_quant: 8-bit absmax (0.5159 B/param)"},
                          SettingType::Switch);
    dq.form = FlagForm::SetsTrue;
    bindBool(
        dq, [](auto& t) -> auto& { return t.config.quant.doubleQuant; });
    out.push_back(std::move(dq));

    SettingInfo dtype =
        base({"quant.compute_dtype", "--compute-dtype", "D", "Compute dtype",
              "bnb_4bit_compute_dtype float32 (default), bfloat16, float16 (fp32, bf16, fp16): "
              "used for fp16 inputs (bitsandbytes computes fp32 and bf16 inputs in their own "
              "dtype)"},
             SettingType::Choice);
    dtype.choices = {"float32", "bfloat16", "float16"};
    dtype.get = [](const TrainingSetup& t) -> SettingValue {
        return std::string(dtypeName(t.config.quant.computeDtype));
    };
    dtype.set = [](TrainingSetup& t, const SettingValue& v) {
        if (auto d = parseDType(std::get<std::string>(v))) t.config.quant.computeDtype = *d;
    };
    dtype.canonical = [](std::string_view text) -> Result<std::string> {
        const auto d = parseDType(text);
        if (!d || !isFloating(*d) || *d == DType::Float64)
            return makeError("expected float32, bfloat16 or float16 (fp32, bf16, fp16), got '" +
                             std::string(text) + "'");
        return std::string(dtypeName(*d));
    };
    out.push_back(std::move(dtype));

    SettingInfo prepare = base({"quant.prepare", "--no-kbit-prepare", "", "prepare_model_for_kbit_training",
                                "quantize without prepare_model_for_kbit_training"},
                               SettingType::Switch);
    prepare.form = FlagForm::SetsFalse;
    bindBool(
        prepare, [](auto& t) -> auto& { return t.config.quant.prepare; });
    out.push_back(std::move(prepare));
}

void addParallelSizes(std::vector<SettingInfo>& out) {
    SettingInfo gpus = base({"parallel.gpus", "--gpus", "N", "GPUs",
                             "data parallelism over N GPUs (default 1); the batch is the micro-batch per GPU "
                             "and every figure is one GPU's (the most loaded rank)"},
                            SettingType::Integer);
    bindInt(
        gpus, [](auto& t) -> auto& { return t.config.parallel.gpus; });
    out.push_back(std::move(range(gpus, 1, 100000)));

    SettingInfo tp =
        base({"parallel.tp", "--tp", "T", "Tensor parallelism",
              "Megatron tensor parallelism over T of the GPUs (heads, MLP columns and the vocab "
              "split; norms, dropout and the residual stream whole): data-parallel size GPUs / T"},
             SettingType::Integer);
    bindInt(
        tp, [](auto& t) -> auto& { return t.config.parallel.tp; });
    out.push_back(std::move(range(tp, 1, 1024)));

    SettingInfo sp = base({"parallel.sequence_parallel", "--sequence-parallel", "", "Sequence parallelism",
                           "with --tp T > 1: Megatron sequence parallelism, the norms, dropouts and residual "
                           "stream split over the T GPUs along the sequence (s/T tokens each); a "
                           "column-parallel linear all-gathers its input into one kept buffer and saves only "
                           "its shard"},
                          SettingType::Switch);
    sp.form = FlagForm::SetsTrue;
    bindBool(
        sp, [](auto& t) -> auto& { return t.config.parallel.sequenceParallel; });
    out.push_back(std::move(sp));

    SettingInfo pp =
        base({"parallel.pp", "--pp", "P", "Pipeline stages",
              "pipeline parallelism, 1F1B: the first stage (the embedding and ceil(L/P) layers, "
              "min(M, P) micro-batches in flight) and the last (floor(L/P) layers, the head and the "
              "loss, 1 in flight) are simulated and the heavier is shown; data-parallel size GPUs "
              "/ (T x P)"},
             SettingType::Integer);
    bindInt(
        pp, [](auto& t) -> auto& { return t.config.parallel.pp; });
    out.push_back(std::move(range(pp, 1, 4096)));

    SettingInfo micro = base({"parallel.microbatches", "--microbatches", "M", "Pipeline micro-batches",
                              "micro-batches per step in the pipeline (default: as many as stages)"},
                             SettingType::Integer);
    bindIntOrUnset(
        micro, [](auto& t) -> auto& { return t.config.parallel.microbatches; }, 0);
    out.push_back(std::move(range(micro, 1, 1000000)));

    SettingInfo strategy =
        base({"parallel.strategy", "--strategy", "S", "Data-parallel strategy",
              "ddp, zero1, zero2, zero3 (DeepSpeed ZeRO stages), fsdp (FULL_SHARD), "
              "fsdp-grad-op (SHARD_GRAD_OP), hsdp (HYBRID_SHARD: shards within a node), fsdp2 "
              "(fully_shard)"},
             SettingType::Choice);
    bindChoice(
        strategy, [](auto& t) -> auto& { return t.config.parallel.strategy; }, parallelStrategyName,
        parseParallelStrategy, allParallelStrategies());
    out.push_back(std::move(strategy));

    SettingInfo perNode = base({"parallel.gpus_per_node", "--gpus-per-node", "G", "GPUs per node",
                                "GPUs per node (default 8): HSDP's shard group"},
                               SettingType::Integer);
    bindInt(
        perNode, [](auto& t) -> auto& { return t.config.parallel.gpusPerNode; });
    out.push_back(std::move(range(perNode, 1, 100000)));

    SettingInfo zi = base({"parallel.zero_impl", "--zero-impl", "deepspeed|torch", "ZeRO-1 implementation",
                           "zero1 by DeepSpeed (flat partitions) or torch's ZeroRedundancyOptimizer over DDP "
                           "(whole tensors, greedy by size)"},
                          SettingType::Choice);
    bindChoice(
        zi, [](auto& t) -> auto& { return t.config.parallel.zeroImpl; }, zeroImplName, parseZeroImpl,
        std::vector<ZeroImpl>{ZeroImpl::DeepSpeed, ZeroImpl::Torch});
    out.push_back(std::move(zi));
}

void addParallelKnobs(std::vector<SettingInfo>& out) {
    SettingInfo cap = base({"parallel.bucket_cap_mb", "--bucket-cap-mb", "M", "DDP bucket size",
                            "DDP bucket_cap_mb (default 25)"},
                           SettingType::Number);
    cap.minExcluded = true;
    bindReal(
        cap, [](auto& t) -> auto& { return t.config.parallel.bucketCapMb; });
    out.push_back(std::move(range(cap, 0, 1e6)));

    SettingInfo view = base({"parallel.gradient_as_bucket_view", "--gradient-as-bucket-view", "",
                             "Gradients as bucket views",
                             "gradients are views into DDP's buckets (without it, the buckets are one more "
                             "gradient-sized buffer)"},
                            SettingType::Switch);
    view.form = FlagForm::SetsTrue;
    bindBool(
        view, [](auto& t) -> auto& { return t.config.parallel.gradientAsBucketView; });
    out.push_back(std::move(view));

    SettingInfo reduce =
        base({"parallel.reduce_bucket_size", "--reduce-bucket-size", "E", "ZeRO reduce bucket",
              "DeepSpeed reduce_bucket_size in elements (default 5e8)"},
             SettingType::Integer);
    bindInt(
        reduce, [](auto& t) -> auto& { return t.config.parallel.reduceBucketSize; });
    out.push_back(std::move(range(reduce, 0, kMaxElements)));

    SettingInfo overlap = base({"parallel.overlap_comm", "--overlap-comm", "on|off", "ZeRO overlap_comm",
                                "DeepSpeed overlap_comm (DeepSpeed's default: on for stage 3 only)"},
                               SettingType::Switch);
    overlap.optional = true;
    overlap.get = [](const TrainingSetup& t) -> SettingValue {
        if (t.config.parallel.overlapComm < 0) return std::monostate{};
        return t.config.parallel.overlapComm == 1;
    };
    overlap.set = [](TrainingSetup& t, const SettingValue& v) {
        const bool* on = std::get_if<bool>(&v);
        t.config.parallel.overlapComm = on ? (*on ? 1 : 0) : -1;
    };
    out.push_back(std::move(overlap));

    SettingInfo persist =
        base({"parallel.stage3_param_persistence_threshold", "--stage3-param-persistence-threshold", "E",
              "ZeRO-3 persistence threshold",
              "DeepSpeed stage3_param_persistence_threshold in elements (default 1e5: smaller "
              "parameters stay whole on every GPU)"},
             SettingType::Integer);
    bindInt(
        persist, [](auto& t) -> auto& { return t.config.parallel.stage3ParamPersistenceThreshold; });
    out.push_back(std::move(range(persist, 0, kMaxElements)));

    SettingInfo limit = base({"parallel.limit_all_gathers", "--no-limit-all-gathers", "",
                              "FSDP all-gather rate limiter", "FSDP without the rate limiter"},
                             SettingType::Switch);
    limit.form = FlagForm::SetsFalse;
    bindBool(
        limit, [](auto& t) -> auto& { return t.config.parallel.limitAllGathers; });
    out.push_back(std::move(limit));

    SettingInfo prefetch = base({"parallel.backward_prefetch", "--backward-prefetch", "pre|post",
                                 "FSDP backward prefetch", "FSDP backward_prefetch (default pre)"},
                                SettingType::Choice);
    prefetch.choices = {"pre", "post"};
    prefetch.get = [](const TrainingSetup& t) -> SettingValue {
        return std::string(t.config.parallel.backwardPrefetchPre ? "pre" : "post");
    };
    prefetch.set = [](TrainingSetup& t, const SettingValue& v) {
        t.config.parallel.backwardPrefetchPre = std::get<std::string>(v) == "pre";
    };
    prefetch.canonical = [](std::string_view text) -> Result<std::string> {
        if (text == "pre" || text == "post") return std::string(text);
        return makeError("expected pre or post, got '" + std::string(text) + "'");
    };
    out.push_back(std::move(prefetch));

    SettingInfo reshard =
        base({"parallel.reshard_after_forward", "--no-reshard-after-forward", "",
              "FSDP2 reshard after forward", "FSDP2: keep gathered parameters to the backward"},
             SettingType::Switch);
    reshard.form = FlagForm::SetsFalse;
    bindBool(
        reshard, [](auto& t) -> auto& { return t.config.parallel.reshardAfterForward; });
    out.push_back(std::move(reshard));
}

} // namespace

void addGroupSettings(std::vector<SettingInfo>& out) {
    addLora(out);
    addQuant(out);
    addParallelSizes(out);
    addParallelKnobs(out);
}

} // namespace batchfit::settingdef
