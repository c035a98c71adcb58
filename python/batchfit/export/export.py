"""The export driver: trace, map, retrace with coarser leaves where needed, build the model file."""
import json

import torch

from .common import DTYPE_NAMES, make_input, unique_param_stats
from .mapping import Mapper, Unmappable
from .checkpoint_regions import group_checkpoint_regions
from .tracing import CHECKPOINT_STACK, TraceError, trace_eager, trace_fx


class ExportError(Exception):
    def __init__(self, message, unmapped=None, report=None):
        super().__init__(message)
        self.unmapped = unmapped or []
        self.report = report


def trace(model, inputs, leaf_paths, method):
    if method == "fx":
        graph, _ = trace_fx(model, inputs, leaf_paths)
        return graph
    return trace_eager(model, inputs, leaf_paths)


class _CheckpointCalls:
    """Follows torch.utils.checkpoint while tracing: counts the calls by mode and, around each call, pushes a
    region id on tracing.CHECKPOINT_STACK so that every node traced inside it is tagged (Node.ckpt); the export
    then groups each region's layers into a block with "checkpoint": true. Patches the module's internals, which
    checkpoint() looks up at call time however the model imported it (1.13 and 2.x names)."""

    def __init__(self, model):
        self.counts = {"reentrant": 0, "non-reentrant": 0}
        self.regions = {}   # id -> {"label": module path or function name, "mode": ...}
        self._paths = {id(m): name for name, m in model.named_modules()}
        self._saved = []

    def _open(self, fn, mode):
        self.counts[mode] += 1
        target = getattr(fn, "__self__", fn)  # a bound method (HF passes layer.__call__): its module
        label = self._paths.get(id(target)) or getattr(fn, "__name__", None) or "checkpoint"
        rid = len(self.regions)
        self.regions[rid] = {"label": label or "checkpoint", "mode": mode}
        CHECKPOINT_STACK.append(rid)

    @staticmethod
    def _close():
        CHECKPOINT_STACK.pop()

    def __enter__(self):
        import inspect

        import torch.utils.checkpoint as ck
        calls = self

        orig_fn = getattr(ck, "CheckpointFunction", None)
        if orig_fn is not None:
            class _Counted:
                @staticmethod
                def apply(function, *args, **kwargs):
                    calls._open(function, "reentrant")
                    try:
                        return orig_fn.apply(function, *args, **kwargs)
                    finally:
                        calls._close()

            self._saved.append(("CheckpointFunction", orig_fn))
            ck.CheckpointFunction = _Counted
        for name in ("_checkpoint_without_reentrant_generator", "_checkpoint_without_reentrant"):
            orig = getattr(ck, name, None)
            if orig is None:
                continue
            if inspect.isgeneratorfunction(orig):
                # 2.x: checkpoint() runs the function between the generator's two steps
                def counted(fn, *args, __orig=orig, **kwargs):
                    gen = __orig(fn, *args, **kwargs)

                    def region():
                        calls._open(fn, "non-reentrant")
                        try:
                            yield from gen
                        finally:
                            calls._close()
                    return region()
            else:
                def counted(fn, *args, __orig=orig, **kwargs):
                    calls._open(fn, "non-reentrant")
                    try:
                        return __orig(fn, *args, **kwargs)
                    finally:
                        calls._close()

            self._saved.append((name, orig))
            setattr(ck, name, counted)
        return self

    def __exit__(self, *exc):
        import torch.utils.checkpoint as ck
        for name, orig in self._saved:
            setattr(ck, name, orig)
        CHECKPOINT_STACK.clear()
        return False


def _trace_and_map(model, inputs, leaf_paths, methods, allow_opaque, attention_impl, output_key, report, log):
    """Traces (fx, else eager) and maps; retraces with coarser leaves where an op cannot even be opaque."""
    for _attempt in range(50):
        m = methods[0]
        try:
            graph = trace(model, inputs, leaf_paths, m)
        except Exception as exc:  # noqa: BLE001 - fx raises many kinds of errors
            if m == "fx" and len(methods) > 1 and not isinstance(exc, TraceError):
                fx_error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                log(f"torch.fx tracing failed ({fx_error}); trying the eager tracer")
                methods = methods[1:]
                report["fx_error"] = fx_error
                continue
            raise ExportError(f"tracing failed: {type(exc).__name__}: {exc}") from exc
        mapper = Mapper(graph, model, {"allow_opaque": allow_opaque, "attention_impl": attention_impl})
        try:
            out_ref = mapper.run(output_key)
        except Unmappable as exc:
            raise ExportError(str(exc)) from exc
        if mapper.unmapped and allow_opaque:
            # an op that cannot even be opaque (its output is not [B, ...]): make its module a leaf
            new = set()
            for n, _reason in mapper.unmapped:
                path = n.module_path if n.kind != "module" else n.module_path.rpartition(".")[0]
                if n.kind == "module" and n.module_path in leaf_paths:
                    path = n.module_path.rpartition(".")[0]
                if path and path not in leaf_paths:
                    new.add(path)
            if new:
                # keep the outermost ones only
                new = {p for p in new if not any(p.startswith(q + ".") for q in new if q != p)}
                log(f"mapping {len(new)} module(s) as a whole: {', '.join(sorted(new))}")
                leaf_paths |= new
                report["leaf_modules_added"] = sorted(leaf_paths)
                continue
        break
    mapper.out_ref = out_ref
    return graph, mapper


def export_model(model, input_shape, input_dtype=torch.float32, loss="cross-entropy", allow_opaque=False,
                 output_key=None, name=None, description=None, method="auto", seed=0, log=None,
                 attention_impl="auto"):
    """Returns (model_file_dict, report). Raises ExportError with the unmapped nodes."""
    log = log or (lambda *_: None)
    model.train()
    inputs = [make_input(model, input_shape, input_dtype, b, seed) for b in (1, 2)]
    leaf_paths = set()
    methods = ["fx", "eager"] if method == "auto" else [method]
    report = {"trace": None, "leaf_modules_added": [], "fx_error": None}
    ckpt = _CheckpointCalls(model)
    with ckpt:
        graph, mapper = _trace_and_map(model, inputs, leaf_paths, methods, allow_opaque, attention_impl, output_key,
                                       report, log)
    modes = [mode for mode, n in ckpt.counts.items() if n]
    if modes:
        report["checkpoint_modes"] = modes
    out_ref = mapper.out_ref
    report["trace"] = graph.method
    if mapper.unmapped:
        def what(n):
            if n.kind == "module":
                m = mapper.modules.get(n.target)
                return f"{type(m).__module__}.{type(m).__name__}" if m is not None else str(n.target)
            return n.target_name() if n.kind != "method" else f"Tensor.{n.target}"
        lines = [f"{n.name} ({what(n)}) {n.where()}: {reason}" for n, reason in mapper.unmapped]
        raise ExportError("cannot map " + str(len(lines)) + " op(s) to BatchFit ops (use --allow-opaque to write "
                          "them as opaque layers with their measured bytes):\n  " + "\n  ".join(lines),
                          unmapped=lines)
    final = mapper.val.get(out_ref.name)
    if not isinstance(final, str) or final == "@input":
        raise ExportError("the model output is not computed by a mapped layer")
    out_node = graph.by_name[out_ref.name]
    out_shape, out_dtype = mapper.info(out_node)
    if out_shape is None:
        raise ExportError("the model output has no batch dimension")

    # parameters nobody claimed (unused in forward): a dangling opaque layer keeps the count exact
    unused = []
    for key, (pname, p) in mapper.params.items():
        if key not in mapper.owner:
            unused.append((pname, p))
    if unused:
        n_unused = sum(p.numel() for _, p in unused)
        log(f"warning: {len(unused)} parameter tensor(s) ({n_unused:,d} elements) are not used by the forward: "
            + ", ".join(n for n, _ in unused[:8]) + (" ..." if len(unused) > 8 else ""))
        layer = {"name": mapper._unique("unused_parameters"), "op": "opaque", "inputs": ["@input"],
                 "params": int(n_unused), "saved_bytes_per_sample": 0, "output_shape": [1],
                 "torch_op": "parameters not used by forward()", "trainable": False}
        mapper.layers.append(layer)
        mapper.last = layer["name"]

    layers = mapper.layers
    if loss != "none":
        src = final
        if loss == "cross-entropy":
            if len(out_shape) == 0:
                raise ExportError("cross-entropy needs logits with a class dimension")
            if len(out_shape) > 2:
                layers.append({"name": mapper._unique("logits_flat"), "op": "reshape",
                               **({"inputs": [src]} if src != mapper.last else {}),
                               "shape": [-1, out_shape[-1]]})
                mapper.last = src = layers[-1]["name"]
            # TrainingLoss (and Hugging Face's models) compute the loss on fp32 logits: a copy when the model runs
            # in half, a no-op in fp32 (written either way, so the file estimated at half precision has it)
            layers.append({"name": mapper._unique("logits_float"), "op": "cast", "dtype": "float32",
                           **({"inputs": [src]} if src != mapper.last else {})})
            mapper.last = src = layers[-1]["name"]
            op = "cross_entropy"
        else:
            op = "mse_loss"
        layer = {"name": "loss", "op": op}
        if src != mapper.last:
            layer["inputs"] = [src]
        layers.append(layer)
    elif final != mapper.last:
        layers.append({"name": mapper._unique("output"), "op": "identity", "inputs": [final]})

    layers, grouped, problems = group_checkpoint_regions(layers, ckpt.regions)
    training = None
    if grouped:
        mode = max(set(grouped), key=grouped.count)
        training = {"checkpointing": "every-block", "checkpoint_mode": mode}
        log(f"{len(grouped)} torch.utils.checkpoint region(s) ({mode}) written as checkpoint blocks; the file's "
            f"training set-up says --checkpointing every-block --checkpoint-mode {mode}")
        if len(set(grouped)) > 1:
            mapper.warnings.append("the model mixes reentrant and non-reentrant checkpointing; the file says "
                                   f"{mode} for every block")
    for p in problems:
        mapper.warnings.append(f"a torch.utils.checkpoint region stays flat (counted as if not checkpointed): {p}")
    report["checkpoint_blocks"] = len(grouped)

    in_shape, in_dtype = mapper.input_meta
    total, total_bytes, trainable, trainable_bytes = unique_param_stats(model)
    emitted = sum(int(layer.get("params", 0)) for layer in _flat(layers) if layer.get("op") == "opaque")
    doc = {
        "format": "batchfit-model",
        "version": 2 if training else 1,
        "name": name or type(model).__name__,
        "description": description or (f"Exported from PyTorch {torch.__version__} by tools/torch_export.py "
                                        f"({graph.method} trace): {total:,d} parameters"
                                        + (f", {total - trainable:,d} of them frozen" if trainable != total else "")
                                        + (f"; {len(mapper.opaque)} opaque layer(s)" if mapper.opaque else "") + "."),
        "input": {"shape": list(in_shape), "dtype": DTYPE_NAMES.get(in_dtype, "float32")},
        **({"training": training} if training else {}),
        "layers": layers,
    }
    report.update({
        "layers": len(layers),
        "parameters": total, "parameter_bytes": total_bytes,
        "trainable_parameters": trainable, "trainable_parameter_bytes": trainable_bytes,
        "frozen_layers": mapper.frozen_layers,
        "unused_parameters": sum(p.numel() for _, p in unused),
        "opaque": mapper.opaque,
        "opaque_parameters": emitted,
        "warnings": mapper.warnings,
        "output_shape": out_shape,
    })
    return doc, report


def _flat(layers):
    for layer in layers:
        yield layer
        yield from _flat(layer.get("layers", []))


def _dump_layers(layers, indent):
    """One layer per line; a block's own layers one per line below it, indented."""
    lines = []
    for layer in layers:
        if "layers" not in layer:
            lines.append(indent + json.dumps(layer, separators=(", ", ": ")))
            continue
        head = json.dumps({k: v for k, v in layer.items() if k != "layers"}, separators=(", ", ": "))
        lines.append(indent + head[:-1] + ', "layers": [\n' + _dump_layers(layer["layers"], indent + "  ")
                     + "\n" + indent + "]}")
    return ",\n".join(lines)


def dumps_model(doc):
    """JSON text: top level indented, one layer per line."""
    head = {k: v for k, v in doc.items() if k != "layers"}
    text = json.dumps(head, indent=2)
    assert text.endswith("\n}")
    return text[:-2] + ',\n  "layers": [\n' + _dump_layers(doc["layers"], "    ") + "\n  ]\n}\n"
