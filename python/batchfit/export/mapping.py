"""Nodes of the traced graph -> BatchFit layers (docs/model-format.md).

Values: every node output is represented by

* ``str``       - the name of a BatchFit layer (or ``@input``) whose output is this tensor;
* ``Param``     - a parameter or buffer of the model (not an activation);
* ``Const``     - an unbatched tensor that is neither (``torch.arange``, a noise tensor...);
* ``Pending``   - a partially matched pattern (a class token ``expand`` waiting for its ``cat``);
* ``Tup``       - a tuple of values (``chunk``, ``nn.MultiheadAttention``'s outputs);
* anything else - a Python value (sizes, flags), which emits nothing.

Parameters are claimed by the first layer that uses them.  A later use of the same weight becomes
``tied_to`` for linear/embedding (a shared bias is then written as ``bias: false``, which saves the
same tensors), and an opaque layer with no parameters and the measured saved bytes for ops without
``tied_to`` (conv, norms).

"Known opaque" ops are mapped on purpose to an ``opaque`` layer with the bytes autograd saved for
them (measured while tracing); they need no ``--allow-opaque``: torchvision's ``StochasticDepth``
in training (``input * noise``: saves the ``[B,1,..]`` noise), ``Hardsigmoid`` (saves its input),
ConvNeXt's ``layer_scale * x`` (a learned per-channel scale: its parameter and the saved input),
``Dropout1d/2d/3d`` (saves a per-channel float noise), a second call of a conv or norm module
(shared weights), and arithmetic with constant tensors.
"""
import torch

from .common import DTYPE_NAMES
from .function_rules import FunctionRules
from .mapper_base import MapperBase
from .module_rules import ModuleRules
from .pointwise_rules import PointwiseRules
from .shape_rules import ShapeRules
from .tables import (CLONING_INPLACE, FACTORIES, FACTORY_METHODS, FN, FN_SPLIT, IDENTITY_MODULES, METHOD,
                     TORCH_MAJOR)
from .tracing import Ref, TMeta
from .values import Const, Param, Pending, Tup, Unmappable, _has_tmeta, _refs

# Names other modules import from here (the tables and value classes moved to tables.py / values.py).
__all__ = ["Mapper", "Unmappable", "Param", "Const", "Pending", "Tup", "TORCH_MAJOR", "FN", "METHOD", "FN_SPLIT",
           "FACTORY_METHODS", "FACTORIES", "CLONING_INPLACE", "IDENTITY_MODULES"]


class Mapper(MapperBase, ModuleRules, FunctionRules, ShapeRules, PointwiseRules):
    """Maps a traced graph to BatchFit layers: the driver and the dispatch here; the rules in the mixins
    (mapper_base.py, module_rules.py, function_rules.py, shape_rules.py, pointwise_rules.py)."""

    def __init__(self, graph, model, options):
        self.g = graph
        self.model = model
        self.modules = dict(model.named_modules())
        self.opts = options
        self.params = {}  # storage key -> (name, tensor)
        for name, p in model.named_parameters():
            self.params.setdefault(p.data_ptr(), (name, p))
        self.buffers = {}
        for name, b in model.named_buffers():
            self.buffers.setdefault(b.data_ptr(), (name, b))
        self.owner = {}       # param key -> (layer name, BatchFit op, role)
        self.layers = []
        self.layer_names = set()
        self.last = "@input"
        self.val = {}
        self.unmapped = []    # (node, reason)
        self.failed = set()   # nodes unmapped, or computed from unmapped ones
        self.opaque = []      # layer dicts written as opaque (with reason)
        self.warnings = []
        self.frozen_layers = []
        self.input_meta = None

    # ------------------------------------------------------------------------------------------
    # driver
    # ------------------------------------------------------------------------------------------
    def live_nodes(self, out_ref):
        live, stack = set(), [out_ref]
        while stack:
            n = self.g.by_name[stack.pop()]
            if n.name in live:
                continue
            live.add(n.name)
            for r in _refs((n.args, n.kwargs)):
                stack.append(r.name)
        return live

    def run(self, output_key=None):
        outnode = next(n for n in self.g.nodes if n.kind == "output")
        out_ref = self._select_output(outnode.args[0] if outnode.args else None, output_key)
        live = self.live_nodes(out_ref.name)
        for n in self.g.nodes:
            if n.kind == "output":
                continue
            if n.name not in live:
                if n.saved[0] or n.saved[1]:
                    self.warnings.append(f"{n.name} ({n.target_name()}) {n.where()} is not on the path to the output "
                                         f"but saves {n.saved[0]:,d} B at batch 1; not in the estimate")
                continue
            if any(r.name in self.failed for r in _refs((n.args, n.kwargs))):
                self.failed.add(n.name)  # follows from an op already reported
                self.val[n.name] = None
                continue
            try:
                self.val[n.name] = self.map_node(n)
            except Unmappable as exc:
                self.val[n.name] = self.on_unmappable(n, str(exc))
                if self.val[n.name] is None:
                    self.failed.add(n.name)
        return out_ref

    def _select_output(self, arg, key):
        v = arg
        if key is not None:
            if isinstance(v, dict):
                v = v[key]
            else:
                v = v[int(key)]
        else:
            while not isinstance(v, Ref):
                if isinstance(v, dict):
                    v = v["logits"] if "logits" in v else next(iter(v.values()))
                elif isinstance(v, (tuple, list)) and v:
                    v = v[0]
                else:
                    raise Unmappable("the model output is not a tensor")
        if not isinstance(v, Ref):
            raise Unmappable("the selected model output is not a tensor")
        n = self.g.by_name[v.name]
        if isinstance(n.vals[0], tuple) and n.vals[0] and isinstance(n.vals[0][0], TMeta):
            # a namedtuple output from fx is a call; pick its element 0 through a synthetic getitem
            raise Unmappable("the model output is a tuple; use --output INDEX")
        return v

    def on_unmappable(self, n, reason):
        """Opaque (with --allow-opaque) or recorded as a failure.  Without --allow-opaque the node still
        gets an opaque stand-in, so that the ops after it are mapped and every unmappable op is reported
        (the file is not written)."""
        try:
            value = self.opaque_layer(n, reason, known=False)
        except Unmappable as exc:
            reason = f"{reason}; cannot be opaque either: {exc}"
            value = None
            self.unmapped.append((n, reason))
            return None
        if not self.opts.get("allow_opaque"):
            self.unmapped.append((n, reason))
        return value

    # ------------------------------------------------------------------------------------------
    # opaque
    # ------------------------------------------------------------------------------------------
    def opaque_layer(self, n, reason, known=True, tensor_index=None, claim=True):
        """An opaque layer for node n: its new (unclaimed) parameters and the measured saved bytes."""
        out = n.vals
        a, b = out
        if isinstance(a, tuple):  # pick the single tensor element
            idx = [i for i, x in enumerate(a) if isinstance(x, TMeta)] if tensor_index is None else [tensor_index]
            if not idx:
                raise Unmappable("no tensor output")
            a, b = a[idx[0]], b[idx[0]]
        if not isinstance(a, TMeta):
            raise Unmappable("its output is not a tensor")
        shape, dtype = self._per_sample(a, b)
        if shape is None:
            raise Unmappable("its output is not batched")
        inputs = []
        params = []
        s1, s2 = n.saved
        for r in _refs((n.args, n.kwargs)):
            v = self.val.get(r.name)
            if isinstance(v, str) and v not in inputs:
                inputs.append(v)
            elif isinstance(v, Const):
                params += [self.params[k][1] for k in v.params]
                if not v.consumed:
                    s1, s2 = s1 + v.saved[0], s2 + v.saved[1]
                    v.consumed = True
            elif isinstance(v, Param):
                t = self.params.get(v.key, (None, None))[1]
                if t is not None:
                    params.append(t)
            elif isinstance(v, Pending) and v.kind == "param-view":
                t = self.params.get(v.data.key, (None, None))[1]
                if t is not None:
                    params.append(t)
        if n.kind == "module":
            params += [p for p in self.module(n).parameters()]
        seen, new = set(), []
        for p in params:
            k = p.data_ptr()
            if k in seen or k in self.owner:
                continue
            seen.add(k)
            new.append(p)
        per_sample = max(0, s2 - s1)
        constant = max(0, s1 - per_sample)
        if not inputs:
            inputs = ["@input"]
        attrs = {
            "params": int(sum(p.numel() for p in new)),
            "saved_bytes_per_sample": int(per_sample),
            "output_shape": shape,
        }
        if constant:
            attrs["saved_bytes_constant"] = int(constant)
        if dtype != torch.float32:
            attrs["output_dtype"] = DTYPE_NAMES.get(dtype, "float32")
        attrs["torch_op"] = n.target_name() if n.kind != "module" else type(self.module(n)).__name__
        name = self.emit(n, "opaque", inputs, claims=[(p, "weight") for p in new] if claim else (), **attrs)
        self.opaque.append({"layer": name, "node": n.name, "torch_op": attrs["torch_op"], "where": n.where(),
                            "known": known, "reason": reason, "params": attrs["params"],
                            "saved_b1": s1, "saved_b2": s2})
        return name

    # ------------------------------------------------------------------------------------------
    # dispatch
    # ------------------------------------------------------------------------------------------
    def map_node(self, n):
        if n.kind == "input":
            shape, dtype = self.info(n)
            if shape is None:
                raise Unmappable("the model input has no batch dimension")
            self.input_meta = (shape, dtype)
            return "@input"
        if n.kind == "attr":
            return self.attr_value(n)
        v0 = n.vals[0]
        if not _has_tmeta(v0):
            return v0  # a Python value: sizes, flags...
        if n.kind == "method" and n.target in FACTORY_METHODS or n.kind == "function" and n.target in FACTORIES:
            return Const(n, v0)  # new tensors whose values do not depend on the input's
        if n.kind in ("function", "method") and isinstance(v0, TMeta) and isinstance(n.vals[1], TMeta) \
                and v0.shape == n.vals[1].shape \
                and not any(isinstance(self.val.get(r.name), str) for r in _refs((n.args, n.kwargs))):
            # computed without the model input: a constant (torch.arange, a noise tensor, a view of a buffer)
            srcs = [self.val.get(r.name) for r in _refs((n.args, n.kwargs))]
            params = [s for s in srcs if isinstance(s, Param)]
            if params and v0.storage is not None and v0.storage == params[0].key and len(srcs) == 1:
                return Param(params[0].key, params[0].name, v0)  # a view of a parameter or buffer
            keys, bufs, saved = set(), set(), list(n.saved)
            for v in srcs:
                if isinstance(v, Param) and v.key in self.buffers:
                    bufs.add(v.key)
                elif isinstance(v, Const):
                    bufs |= v.buffers
                if isinstance(v, Param) and v.key in self.params:
                    keys.add(v.key)
                elif isinstance(v, Pending) and v.kind == "param-view" and v.data.key in self.params:
                    keys.add(v.data.key)
                elif isinstance(v, Const):
                    keys |= v.params
                    if not v.consumed:
                        saved = [a + b for a, b in zip(saved, v.saved)]
                        v.consumed = True
            if all(isinstance(v, (Param, Const, Pending)) or v is None or not hasattr(v, "shape") for v in srcs):
                return Const(n, v0, keys, saved, bufs)
        if n.kind == "module":
            return self.map_module(n)
        if n.kind == "function":
            return self.map_function(n, n.target)
        if n.kind == "method":
            return self.map_method(n, n.target)
        raise Unmappable(f"unknown node kind {n.kind}")

    def attr_value(self, n):
        m = n.vals[0]
        if isinstance(m, TMeta):
            key = m.storage
            if key in self.params or key in self.buffers:
                return Param(key, (self.params.get(key) or self.buffers.get(key))[0], m)
            return Const(n, m)
        return m
