"""A transformers TrainingArguments (and the live model) as batchfit-cli options: the optimizer, precision,
checkpointing, accumulation and data parallelism the Trainer will run. Shared by the callbacks; needs no
transformers itself (it reads attributes)."""
import json
import warnings

# TrainingArguments.optim (transformers' OptimizerNames) -> (--optimizer, --impl). Others are warned about and
# estimated as AdamW.
OPTIMIZERS = {
    "adamw_torch": ("adamw", None), "adamw_hf": ("adamw", None), "adamw_torch_fused": ("adamw", "fused"),
    "adamw_torch_foreach": ("adamw", "foreach"), "adafactor": ("adafactor", None), "sgd": ("sgd", None),
    "adagrad": ("adagrad", None), "rmsprop": ("rmsprop", None), "adamw_bnb_8bit": ("adam8bit", None),
    "adamw_8bit": ("adam8bit", None), "paged_adamw_32bit": ("paged-adamw", None),
    "paged_adamw_8bit": ("paged-adamw-8bit", None), "lion_32bit": ("lion", None),
}


def _value(x):
    return getattr(x, "value", x)  # enums (OptimizerNames) and plain strings alike


def optimizer_options(args):
    name = str(_value(getattr(args, "optim", "adamw_torch")))
    if name not in OPTIMIZERS:
        warnings.warn(f"batchfit: optimizer {name!r} is not modelled; estimating AdamW", stacklevel=3)
    optimizer, impl = OPTIMIZERS.get(name, ("adamw", None))
    return {"optimizer": optimizer, "impl": impl}


def precision_option(args, model):
    """Pure half precision when the trainable weights are half (autocast changes nothing then), AMP when fp32
    weights run under bf16/fp16 autocast, else fp32."""
    dtypes = {str(p.dtype) for p in model.parameters() if p.requires_grad and p.is_floating_point()}
    if dtypes == {"torch.bfloat16"}:
        return "pure-bf16"
    if dtypes == {"torch.float16"}:
        return "pure-fp16"
    if getattr(args, "bf16", False):
        return "amp-bf16"
    if getattr(args, "fp16", False):
        return "amp-fp16"
    return "fp32"


def checkpointing_options(args, transformers_major):
    """Activation (gradient) checkpointing as the Trainer turns it on: transformers 5 calls it
    activation_checkpointing and defaults to use_reentrant=False; 4.x gradient_checkpointing, reentrant.
    transformers 5's `offload` key puts each checkpointed layer's input in pinned host memory."""
    on = getattr(args, "activation_checkpointing", None) or getattr(args, "gradient_checkpointing", False)
    if not on:
        return {}
    kwargs = dict(getattr(args, "activation_checkpointing_kwargs", None) or
                  getattr(args, "gradient_checkpointing_kwargs", None) or {})
    every = int(kwargs.pop("every_n_layers", 1))
    offload = kwargs.pop("offload", False)
    reentrant = kwargs.get("use_reentrant", transformers_major < 5)
    opts = {"checkpointing": "every-k" if every > 1 else "every-block",
            "checkpoint_mode": "reentrant" if reentrant else "non-reentrant"}
    if offload:
        opts["activation_offload"] = "checkpoints"
    if every > 1:
        opts["checkpoint_every"] = every
    return opts


def lm_loss_option(args, precision, trl_version=None):
    """The language-model loss the trainer runs: Liger's fused linear cross-entropy with use_liger_kernel; else
    TRL's SFTTrainer's (its SFTConfig has loss_type): TRL 1.15+ a fused head for "nll" (and its alias
    "chunked_nll"), TRL 1.9-1.14 the checkpointed chunks for "chunked_nll". None for a plain Trainer
    (transformers' full logits) and for what BatchFit does not model (DFT; autocast), which then estimates the
    full logits: more memory than the trainer uses, never less."""
    if getattr(args, "use_liger_kernel", False):  # TrainingArguments' (a plain Trainer's too)
        if precision.startswith("amp-"):
            warnings.warn("batchfit: Liger's fused linear cross-entropy under autocast is not modelled; the full "
                          "logits are estimated (more than Liger uses)", stacklevel=3)
            return None
        return "liger"
    loss_type = getattr(args, "loss_type", None)
    if loss_type is None:
        return None
    if trl_version is None:
        try:
            import trl
            trl_version = trl.__version__
        except ImportError:
            return None
    major_minor = tuple(int(p) for p in trl_version.split(".")[:2] if p.isdigit())
    chosen = None
    if major_minor >= (1, 15) and loss_type in ("nll", "chunked_nll"):
        chosen = "trl-fused"
    elif major_minor >= (1, 9) and loss_type == "chunked_nll":
        chosen = "trl-chunked"
    if chosen and precision.startswith("amp-"):
        warnings.warn(f"batchfit: TRL's {loss_type} under autocast is not modelled; the full logits are "
                      "estimated (more than TRL uses)", stacklevel=3)
        chosen = None
    return chosen


def grpo_options(args):
    """TRL's GRPOConfig: the recipe, the reference (beta), where the completions are generated, and
    "_completion", max_completion_length, which the caller turns into --prompt-len with the sequence length."""
    if not (hasattr(args, "num_generations") and hasattr(args, "max_completion_length") and hasattr(args, "beta")):
        return {}
    opts = {"recipe": "grpo", "ref_logps": "live" if float(args.beta or 0) != 0 else "none",
            "_completion": int(args.max_completion_length)}
    if getattr(args, "use_vllm", False):
        colocate = getattr(args, "vllm_mode", "colocate") == "colocate"
        opts["generation"] = "vllm-colocate" if colocate else "vllm-server"
        if colocate:
            opts["vllm_memory"] = float(getattr(args, "vllm_gpu_memory_utilization", 0.3))
            if getattr(args, "vllm_enable_sleep_mode", False):
                warnings.warn("batchfit: vLLM's sleep mode is not modelled; its share of the GPU is counted in "
                              "the training step too (more than the trainer uses)", stacklevel=3)
    # GRPOConfig.__post_init__ sets steps_per_generation (from generation_batch_size, or the accumulation)
    steps = getattr(args, "steps_per_generation", None)
    accumulation = int(getattr(args, "gradient_accumulation_steps", 1) or 1)
    if steps and int(steps) != accumulation:
        opts["steps_per_generation"] = int(steps)
    iterations = int(getattr(args, "num_iterations", 1) or 1)
    if iterations != 1:
        opts["num_iterations"] = iterations
    return opts


def trainer_options(args, model, transformers_major=5):
    """Every option TrainingArguments decides: batch, accumulation, optimizer, precision, checkpointing, GPUs."""
    opts = {"batch": int(args.per_device_train_batch_size),
            "accumulation": int(getattr(args, "gradient_accumulation_steps", 1) or 1),
            "precision": precision_option(args, model)}
    opts.update(optimizer_options(args))
    opts.update(checkpointing_options(args, transformers_major))
    lm_loss = lm_loss_option(args, opts["precision"])
    if lm_loss:
        opts["lm_loss"] = lm_loss
    if hasattr(args, "precompute_ref_log_probs") and hasattr(args, "beta"):  # TRL's DPOConfig
        opts["recipe"] = "dpo"
        opts["ref_logps"] = "precomputed" if args.precompute_ref_log_probs else "live"
    opts.update(grpo_options(args))
    if getattr(args, "activation_offloading", False):  # TRL's SFTConfig: torchtune's OffloadActivations
        warnings.warn("batchfit: TRL's activation_offloading (CUDA streams, a stash of recent tensors) is not "
                      "modelled; estimated with the activations on the GPU (an upper bound)", stacklevel=3)
    world = int(getattr(args, "world_size", 1) or 1)
    sharding = sharding_options(args)
    if world > 1:
        opts["gpus"] = world
        opts["strategy"] = "ddp"
    if sharding.get("strategy") and (world > 1 or sharding.get("offload_params")):
        opts.update(sharding)  # one GPU: only ZeRO-Infinity / FSDP offload changes anything
    elif sharding.get("offload"):
        opts["offload"] = True
    return opts


def _deepspeed_config(ds):
    if isinstance(ds, dict):
        return ds
    try:
        with open(ds) as f:
            return json.load(f)
    except (OSError, ValueError, TypeError):
        warnings.warn(f"batchfit: the DeepSpeed config {ds!r} could not be read; its ZeRO stage is not used",
                      stacklevel=4)
        return {}


def sharding_options(args):
    """The strategy and offloads of TrainingArguments' DeepSpeed config (zero_optimization: stage,
    offload_optimizer, offload_param) or FSDP options (full_shard, shard_grad_op, hybrid_shard, offload;
    fsdp_config version 2, transformers 5's default, or 1)."""
    ds = getattr(args, "deepspeed", None)
    if ds:
        zero = _deepspeed_config(ds).get("zero_optimization") or {}
        try:
            stage = int(zero.get("stage", 0) or 0)
        except (TypeError, ValueError):  # "auto"
            stage = 0
        opts = {"strategy": f"zero{stage}"} if stage in (1, 2, 3) else {}

        def on_host(key):
            v = zero.get(key)
            return isinstance(v, dict) and v.get("device") in ("cpu", "nvme")
        if stage == 3 and on_host("offload_param"):
            opts["offload_params"] = True
        elif on_host("offload_optimizer"):
            opts["offload"] = True
        return opts
    fsdp = getattr(args, "fsdp", None)
    if not fsdp:
        return {}
    words = fsdp.split() if isinstance(fsdp, str) else [str(getattr(w, "value", w)) for w in fsdp]
    config = getattr(args, "fsdp_config", None) or {}
    if "full_shard" in words:
        strategy = "fsdp2" if int(config.get("version", 2)) == 2 else "fsdp"
    elif "shard_grad_op" in words:
        strategy = "fsdp-grad-op"
    elif "hybrid_shard" in words or "hybrid_shard_zero2" in words:
        strategy = "hsdp"
    else:
        return {}
    opts = {"strategy": strategy}
    if "offload" in words or config.get("cpu_offload"):
        opts["offload_params"] = True
    return opts


def sequence_length(dataset, samples=256):
    """The longest input_ids among the first `samples` examples (a padding collator pads a batch to its longest);
    None when the dataset has no input_ids."""
    if dataset is None:
        return None
    longest = None
    try:
        for i in range(min(len(dataset), samples)):
            ids = dataset[i].get("input_ids") if hasattr(dataset[i], "get") else None
            if ids is not None:
                longest = max(longest or 0, len(ids))
    except (TypeError, KeyError, IndexError, NotImplementedError):
        return longest
    return longest
