"""Loading a model from ``MODULE:CALLABLE``, example inputs, targets and the training loss."""
import importlib
import importlib.util
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

TOOLS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if TOOLS_DIR not in sys.path:
    sys.path.insert(0, TOOLS_DIR)

DTYPES = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64,
    "int64": torch.int64, "int32": torch.int32, "uint8": torch.uint8, "bool": torch.bool,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
LOSSES = ("cross-entropy", "mse", "none")


class SpecError(Exception):
    """A user error in the command line (bad spec, bad shape...)."""


def load_callable(spec):
    """``pkg.module:attr`` or ``path/to/file.py:attr`` (attr may be dotted) -> the object."""
    if ":" not in spec:
        raise SpecError(f"model spec {spec!r} must be MODULE:CALLABLE (e.g. torchvision.models:resnet50 "
                        "or my_model.py:Net)")
    mod_name, attr = spec.rsplit(":", 1)
    if mod_name.endswith(".py") or os.sep in mod_name or os.path.exists(mod_name):
        path = os.path.abspath(mod_name)
        if not os.path.exists(path):
            raise SpecError(f"no such file: {mod_name}")
        name = "batchfit_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
        sys.path.insert(0, os.path.dirname(path))
        spec_ = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec_)
        sys.modules[name] = module
        spec_.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(mod_name)
        except ImportError as exc:
            raise SpecError(f"cannot import {mod_name!r}: {exc}") from exc
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise SpecError(f"{mod_name} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def parse_args_json(text):
    """--args: a JSON object (keyword arguments) or list (positional) -> (args, kwargs)."""
    if not text:
        return (), {}
    try:
        v = json.loads(text)
    except ValueError as exc:
        raise SpecError(f"--args is not valid JSON: {exc}") from exc
    if isinstance(v, dict):
        return (), v
    if isinstance(v, list):
        return tuple(v), {}
    raise SpecError("--args must be a JSON object (keyword arguments) or a list (positional arguments)")


def build_model(spec, args_json=None, seed=0):
    """Calls the callable; the result must be an nn.Module. Train mode."""
    fn = load_callable(spec)
    args, kwargs = parse_args_json(args_json)
    torch.manual_seed(seed)
    if isinstance(fn, nn.Module):
        model = fn
    else:
        model = fn(*args, **kwargs)
    if not isinstance(model, nn.Module):
        raise SpecError(f"{spec} returned {type(model).__name__}, not an nn.Module")
    model.train()
    return model


def parse_shape(text):
    try:
        shape = [int(s) for s in str(text).replace("x", ",").split(",") if s.strip()]
    except ValueError as exc:
        raise SpecError(f"bad --input-shape {text!r}: {exc}") from exc
    if not shape or any(d <= 0 for d in shape):
        raise SpecError(f"bad --input-shape {text!r}: positive integers, per sample (no batch dim)")
    return shape


def token_range(model):
    """Upper bound for random token ids: the smallest Embedding's num_embeddings."""
    sizes = [m.num_embeddings for m in model.modules() if isinstance(m, nn.Embedding)]
    return min(sizes) if sizes else 2


def make_input(model, shape, dtype, batch, seed=0):
    g = torch.Generator().manual_seed(seed + batch)
    full = [batch] + list(shape)
    if dtype.is_floating_point:
        return torch.randn(full, generator=g).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, full, generator=g).bool()
    return torch.randint(0, token_range(model), full, generator=g, dtype=torch.int64).to(dtype)


def select_output(out, key=None):
    """The tensor the loss is taken on: ``out`` itself, or out[key] / out.logits / out[0]."""
    if isinstance(out, torch.Tensor):
        return out
    if key is not None:
        if isinstance(out, dict) or hasattr(out, "keys"):
            return out[key]
        if isinstance(key, str) and hasattr(out, key):
            return getattr(out, key)
        return out[int(key)]
    if isinstance(out, dict) or hasattr(out, "keys"):
        if "logits" in out:
            return out["logits"]
        return next(iter(out.values()))
    if hasattr(out, "logits"):
        return out.logits
    if isinstance(out, (tuple, list)) and out:
        return out[0]
    raise SpecError(f"cannot find a tensor in the model output ({type(out).__name__}); use --output")


class TrainingLoss(nn.Module):
    """The loss a training script adds: cross-entropy over every position for sequence outputs
    (logits.view(-1, C) against labels.view(-1), in fp32), MSE, or ``output.sum()`` for none."""

    def __init__(self, kind):
        super().__init__()
        if kind not in LOSSES:
            raise SpecError(f"--loss must be one of {', '.join(LOSSES)}")
        self.kind = kind

    def forward(self, out, target):
        if self.kind == "cross-entropy":
            if out.dtype != torch.float32:
                out = out.float()
            if out.dim() > 2:
                return F.cross_entropy(out.reshape(-1, out.size(-1)), target.reshape(-1))
            return F.cross_entropy(out, target)
        if self.kind == "mse":
            return F.mse_loss(out, target)
        return out.sum()


def make_target(out, kind, seed=0):
    """Targets for the loss (None for 'none'): int64 class indices per sample (or per position)."""
    g = torch.Generator().manual_seed(seed + 1000 + out.shape[0])
    if kind == "cross-entropy":
        if out.dim() < 2:
            raise SpecError(f"cross-entropy needs logits [B, C] or [B, ..., C], the output is {list(out.shape)}")
        return torch.randint(0, out.shape[-1], tuple(out.shape[:-1]), generator=g, dtype=torch.int64)
    if kind == "mse":
        return torch.randn(tuple(out.shape), generator=g).to(out.dtype)
    return None


def use_native_dropout(model):
    """On CPU, make every nn.Dropout behave like CUDA's F.dropout (bool mask, native_dropout);
    reference_models.replace_dropout does it in place."""
    from .dropout import replace_dropout
    return replace_dropout(model)


def unique_param_stats(model):
    """(count, bytes, trainable count, trainable bytes) over unique parameter storages."""
    seen = set()
    count = nbytes = tcount = tbytes = 0
    for p in model.parameters():
        key = p.data_ptr()
        if key in seen:
            continue
        seen.add(key)
        n = p.numel()
        count += n
        nbytes += n * p.element_size()
        if p.requires_grad:
            tcount += n
            tbytes += n * p.element_size()
    return count, nbytes, tcount, tbytes
