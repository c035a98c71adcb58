"""What a model argument becomes on batchfit-cli's command line: a preset, a model file, an ONNX file, a Hugging
Face config (a path, a cached model id, a live ``PreTrainedModel``'s config) or an nn.Module exported by
``batchfit.export``."""
import json
import os
import re
import shutil
import tempfile
import weakref

from ._native import native


class ModelSource:
    """A model as batchfit-cli options (``["--hf-config", path, "--seq", "2048"]``), with the temporary files those
    options name kept alive as long as the source is."""

    def __init__(self, args, label, options=None, tmpdir=None):
        self.args = list(args)
        self.label = label
        self.options = dict(options or {})  # set-up the model implies (a live PEFT model's LoRA), under CLI names
        self._tmpdir = tmpdir

    def __repr__(self):
        return f"ModelSource({self.label!r}, {self.args!r})"


class _TempDir:
    """A temporary folder removed when its owner is collected (quietly, unlike TemporaryDirectory)."""

    def __init__(self):
        self.name = tempfile.mkdtemp(prefix="batchfit-")
        weakref.finalize(self, shutil.rmtree, self.name, True)


def _tmpdir():
    return _TempDir()


def _written(tmp, name, obj, folder=""):
    """`obj` (text, or JSON) as tmp/folder/name: an imported config is named after its folder."""
    os.makedirs(os.path.join(tmp.name, folder), exist_ok=True)
    path = os.path.join(tmp.name, folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def from_pretrained_config(name_or_path, seq=None):
    """A Hugging Face model by its config: a ``config.json``, a folder holding one, or a model id (``ORG/NAME``)
    looked up in the local cache ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub). Never downloads: a model
    id that is not cached raises ValueError saying where it looked. ``seq``: tokens per sample (--seq)."""
    path = os.fspath(name_or_path)
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    if not os.path.exists(path):
        if not native().is_hf_model_id(path):
            raise ValueError(f"{path}: no such config.json, and not a model id (ORG/NAME)")
        path = native().find_cached_hf_config(path)
    args = ["--hf-config", path] + (["--seq", str(int(seq))] if seq else [])
    return ModelSource(args, os.fspath(name_or_path))


def _preset_ids():
    rc, out, _ = native().run(["presets", "--json"])
    return {p["id"] for p in json.loads(out)} if rc == 0 else set()


def _from_text(model):
    path = os.fspath(model)
    if os.path.isdir(path) or os.path.basename(path) == "config.json":
        return from_pretrained_config(path)
    if os.path.exists(path):
        if path.lower().endswith(".onnx"):
            return ModelSource(["--onnx", path], path)
        with open(path, "rb") as f:
            head = f.read(1 << 16)
        if b'"model_type"' in head and b'"layers"' not in head:
            return ModelSource(["--hf-config", path], path)
        return ModelSource(["--model", path], path)
    if path in _preset_ids():
        return ModelSource(["--preset", path], path)
    if native().is_hf_model_id(path):
        return from_pretrained_config(path)
    raise ValueError(f"{path}: not a file, a preset ({', '.join(sorted(_preset_ids()))}) or a model id (ORG/NAME)")


def _from_dict(model):
    tmp = _tmpdir()
    if "layers" in model:
        return ModelSource(["--model", _written(tmp, "model.json", model)], model.get("name", "model"), tmpdir=tmp)
    if "model_type" in model:
        path = _written(tmp, "config.json", model, str(model["model_type"]).replace(os.sep, "_"))
        return ModelSource(["--hf-config", path], model["model_type"], tmpdir=tmp)
    raise ValueError("a dict model is a BatchFit model file (with \"layers\") or a Hugging Face config (with "
                     "\"model_type\")")


def _is_module(obj):
    return hasattr(obj, "parameters") and hasattr(obj, "named_modules") and callable(obj)


def _input_ids(example_inputs):
    """The token tensor of a Hugging Face-style input: a tensor [B, S], a dict with input_ids, or a tuple."""
    x = example_inputs
    if isinstance(x, dict):
        x = x.get("input_ids", next(iter(x.values()), None))
    if isinstance(x, (tuple, list)):
        x = x[0] if x else None
    return x if hasattr(x, "shape") else None


def model_source(model, example_inputs=None, route="auto", export_options=None):
    """The ModelSource of whatever `model` is (see batchfit.estimate)."""
    if isinstance(model, ModelSource):
        return model
    if isinstance(model, (str, os.PathLike)):
        return _from_text(model)
    if isinstance(model, dict):
        return _from_dict(model)
    if _is_module(model):
        from .live import hf_source, module_source
        if route not in ("auto", "config", "export"):
            raise ValueError(f"route must be auto, config or export, got {route!r}")
        if route != "export":
            source = hf_source(model, _input_ids(example_inputs))
            if source is not None:
                return source
            if route == "config":
                raise ValueError(f"{type(model).__name__} has no Hugging Face config (route='config')")
        return module_source(model, example_inputs, export_options or {})
    raise TypeError(f"model: expected a preset id, a file, a model id, a dict, a ModelSource or an nn.Module, got "
                    f"{type(model).__name__}")


def _name_tokens(name):
    """"NVIDIA A100-SXM4-40GB" -> {"a100", "sxm4", "40gb"}: lower case, the vendor and parenthesized notes out."""
    name = re.sub(r"\(.*?\)", " ", name.lower())
    return set(re.findall(r"[a-z0-9]+", name)) - {"nvidia"}


def catalogue_gpu(name, total_memory):
    """The catalogue id of a device torch names `name` with `total_memory` bytes: the same name, else the entry
    whose name's words are all in the device's (the most words) and whose capacity is within 3%. None if none."""
    rc, out, _ = native().run(["gpus", "--json"])
    if rc != 0:
        return None
    device = _name_tokens(name)
    best, best_score = None, 0
    for g in json.loads(out):
        if abs(int(g["memory_bytes"]) - total_memory) > 0.03 * total_memory:
            continue
        if g["name"].lower() == name.lower():
            return g["id"]
        words = _name_tokens(g["name"])
        if words and words <= device and len(words) > best_score:
            best, best_score = g["id"], len(words)
    return best


def gpu_from_torch(device=None):
    """The GPU torch sees, as --gpu takes it: its catalogue id (catalogue_gpu: the catalogue's CUDA context and
    architecture apply), else its capacity ("79.1GiB"). None without CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(device if device is not None else torch.cuda.current_device())
    return catalogue_gpu(props.name, props.total_memory) or f"{props.total_memory / (1 << 30):.6g}GiB"
