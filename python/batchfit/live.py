"""Live PyTorch objects as BatchFit set-ups: a ``transformers`` model by its config (PEFT's LoRA and
bitsandbytes' quantization read from the model), any other nn.Module through ``batchfit.export``. Needs torch only
when a module is given."""
import os

from .models import ModelSource, _tmpdir, _written


def _base_model(model):
    """The transformers model under PEFT's wrappers."""
    get = getattr(model, "get_base_model", None)
    return get() if callable(get) else model


def lora_options(model):
    """--lora-* options of a PEFT model's active LoRA adapter (empty without one; use_dora=True is --lora-dora;
    use_rslora only changes the scaling, a Python float, so it changes nothing in memory).
    Adapters other than LoRA raise ValueError: BatchFit models LoRA and DoRA as PEFT's LoraLayer runs them."""
    configs = getattr(model, "peft_config", None)
    if not configs:
        return {}
    active = getattr(model, "active_adapter", None)
    active = active[0] if isinstance(active, (list, tuple)) else active
    cfg = configs.get(active) or next(iter(configs.values()))
    kind = str(getattr(cfg, "peft_type", "LORA")).rsplit(".", 1)[-1].upper()
    if kind != "LORA":
        raise ValueError(f"PEFT adapter type {kind}: BatchFit models LoRA only")
    targets = cfg.target_modules
    targets = targets if isinstance(targets, str) else ",".join(sorted(targets))
    return {"lora_rank": int(cfg.r), "lora_alpha": cfg.lora_alpha, "lora_dropout": float(cfg.lora_dropout),
            "lora_targets": targets, "lora_dora": bool(getattr(cfg, "use_dora", False))}


def quant_options(config):
    """--quant, --double-quant and --compute-dtype of a bitsandbytes quantization_config (empty without one)."""
    q = getattr(config, "quantization_config", None)
    if q is None:
        return {}
    q = q if isinstance(q, dict) else q.to_dict()
    if q.get("load_in_8bit"):
        return {"quant": "int8"}
    if not q.get("load_in_4bit"):
        method = q.get("quant_method", "?")
        raise ValueError(f"quantization_config with quant_method {method}: BatchFit's training estimate models "
                         "bitsandbytes (load_in_4bit / load_in_8bit)")
    dtype = str(q.get("bnb_4bit_compute_dtype") or "float32").replace("torch.", "")
    return {"quant": q.get("bnb_4bit_quant_type", "fp4"), "double_quant": bool(q.get("bnb_4bit_use_double_quant")),
            "compute_dtype": dtype}


def hf_source(model, input_ids=None, overrides=None):
    """A transformers model as --hf-config (its config written out, with `overrides`: the Trainer's use_cache), with
    --seq from `input_ids` [B, S], eager attention when the model runs it, and its PEFT LoRA and quantization as
    options. None when `model` has no Hugging Face config."""
    base = _base_model(model)
    config = getattr(base, "config", None)
    if config is None or not hasattr(config, "to_dict") or not getattr(config, "model_type", None):
        return None
    d = config.to_dict()
    d.pop("quantization_config", None)  # read below, as options
    d.update(overrides or {})
    tmp = _tmpdir()
    args = ["--hf-config", _written(tmp, "config.json", d, type(base).__name__)]
    if input_ids is not None and len(input_ids.shape) >= 2:
        args += ["--seq", str(int(input_ids.shape[1]))]
    if getattr(config, "_attn_implementation", None) == "eager":
        args += ["--attention", "eager"]
    options = {**lora_options(model), **quant_options(config)}
    return ModelSource(args, f"{type(base).__name__} ({config.model_type})", options, tmpdir=tmp)


def module_source(model, example_inputs, export_options):
    """Any nn.Module through batchfit.export: traced on the CPU at batch 1 and 2 with inputs shaped like
    `example_inputs` (a tensor with its batch dimension). export_options: loss ("cross-entropy", "mse", "none"),
    allow_opaque, output (which output the loss takes), trace ("auto", "fx", "eager"), attention_impl, name."""
    import torch

    from .export.export import dumps_model, export_model

    x = example_inputs[0] if isinstance(example_inputs, (tuple, list)) else example_inputs
    if not isinstance(x, torch.Tensor) or x.dim() < 1:
        raise ValueError("an nn.Module needs example_inputs: a tensor with its batch dimension, e.g. "
                         "torch.randn(1, 3, 224, 224)")
    devices = {p.device.type for p in model.parameters()}
    if devices - {"cpu", "meta"}:
        raise ValueError("batchfit.export runs the model on the CPU (twice, at batch 1 and 2): call it before "
                         f"model.to('cuda'), or on a copy on the CPU (the model is on {sorted(devices)})")
    unknown = set(export_options) - {"loss", "allow_opaque", "output", "trace", "attention_impl", "name"}
    if unknown:
        raise TypeError(f"export_options: unknown {sorted(unknown)}")
    was_training = model.training
    try:
        doc, _ = export_model(model, tuple(x.shape[1:]), x.dtype, export_options.get("loss", "cross-entropy"),
                              export_options.get("allow_opaque", False), export_options.get("output"),
                              export_options.get("name", type(model).__name__), None,
                              export_options.get("trace", "auto"),
                              attention_impl=export_options.get("attention_impl", "auto"))
    finally:
        model.train(was_training)
    tmp = _tmpdir()
    path = _written(tmp, "model.json", dumps_model(doc))
    return ModelSource(["--model", path], f"{type(model).__name__} (exported)", tmpdir=tmp)


def exported_file(model, example_inputs, path, **export_options):
    """Writes `model` exported by batchfit.export to `path` (a BatchFit model file) and returns the path."""
    source = module_source(model, example_inputs, export_options)
    with open(source.args[1], encoding="utf-8") as src, open(path + ".tmp-batchfit", "w", encoding="utf-8") as dst:
        dst.write(src.read())
    os.replace(path + ".tmp-batchfit", path)
    return path
