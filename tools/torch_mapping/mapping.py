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
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import DTYPE_NAMES
from .tracing import Ref, TMeta, untracked_view


TORCH_MAJOR = int(torch.__version__.split(".")[0])


class Unmappable(Exception):
    """This node has no BatchFit equivalent (message: why)."""


class Param:
    def __init__(self, key, name, meta):
        self.key, self.name, self.meta = key, name, meta


class Const:
    """An unbatched tensor computed without the model input.  ``params``: the parameters it was computed
    from (claimed by the opaque layer that consumes it); ``saved``: what autograd saved while computing
    it (batch 1, 2), carried into that layer."""

    def __init__(self, node, meta, params=(), saved=(0, 0)):
        self.node, self.meta = node, meta
        self.params = set(params)
        self.saved = list(saved)
        self.consumed = False


class Pending:
    def __init__(self, kind, node, data):
        self.kind, self.node, self.data = kind, node, data


class Tup(tuple):
    pass


def _fn(*names):
    """The callables named (missing ones skipped, for old/new torch)."""
    roots = {"torch": torch, "F": F, "operator": operator, "torch.Tensor": torch.Tensor}
    out = set()
    for n in names:
        mod, _, attr = n.rpartition(".")
        obj = getattr(roots[mod], attr, None)
        if obj is not None:
            out.add(obj)
    return out


def _tv_stochastic_depth():
    try:
        from torchvision.ops import stochastic_depth
        return {stochastic_depth}
    except Exception:  # noqa: BLE001
        return set()


FN = {
    "add": _fn("operator.add", "operator.iadd", "torch.add"),
    "sub": _fn("operator.sub", "operator.isub", "torch.sub", "torch.subtract"),
    "mul": _fn("operator.mul", "operator.imul", "torch.mul", "torch.multiply"),
    "div": _fn("operator.truediv", "operator.itruediv", "torch.div", "torch.true_divide", "torch.divide"),
    "getitem": _fn("operator.getitem"),
    "cat": _fn("torch.cat", "torch.concat", "torch.concatenate"),
    "flatten": _fn("torch.flatten"),
    "reshape": _fn("torch.reshape", "torch.unsqueeze", "torch.squeeze"),
    "permute": _fn("torch.permute"),
    "transpose": _fn("torch.transpose", "torch.swapaxes", "torch.swapdims"),
    "matmul": _fn("torch.matmul", "operator.matmul", "torch.bmm", "torch.mm"),
    "relu": _fn("F.relu", "torch.relu", "torch.relu_", "F.relu_"),
    "relu6": _fn("F.relu6"),
    "hardtanh": _fn("F.hardtanh", "F.hardtanh_"),
    "gelu": _fn("F.gelu"),
    "silu": _fn("F.silu"),
    "hardswish": _fn("F.hardswish"),
    "hardsigmoid": _fn("F.hardsigmoid"),
    "leaky_relu": _fn("F.leaky_relu", "F.leaky_relu_"),
    "sigmoid": _fn("torch.sigmoid", "F.sigmoid"),
    "tanh": _fn("torch.tanh", "F.tanh"),
    "softmax": _fn("F.softmax", "torch.softmax"),
    "log_softmax": _fn("F.log_softmax", "torch.log_softmax"),
    "dropout": _fn("F.dropout", "torch.dropout"),
    "feature_dropout": _fn("F.dropout1d", "F.dropout2d", "F.dropout3d", "F.alpha_dropout",
                           "F.feature_alpha_dropout"),
    "adaptive_avg_pool2d": _fn("F.adaptive_avg_pool2d"),
    "avg_pool2d": _fn("F.avg_pool2d"),
    "max_pool2d": _fn("F.max_pool2d"),
    "mean": _fn("torch.mean"),
    "layer_norm": _fn("F.layer_norm"),
    "group_norm": _fn("F.group_norm"),
    "linear": _fn("F.linear"),
    "conv2d": _fn("F.conv2d"),
    "conv1d": _fn("F.conv1d"),
    "embedding": _fn("F.embedding"),
    "stochastic_depth": _tv_stochastic_depth(),
    "contiguous": set(),
}

METHOD = {
    "add": "add", "add_": "add", "sub": "sub", "sub_": "sub", "mul": "mul", "mul_": "mul", "div": "div",
    "div_": "div", "view": "reshape", "reshape": "reshape", "unsqueeze": "reshape", "squeeze": "reshape",
    "view_as": "reshape", "reshape_as": "reshape", "unflatten": "reshape",
    "flatten": "flatten", "permute": "permute", "transpose": "transpose", "swapaxes": "transpose",
    "contiguous": "contiguous", "matmul": "matmul", "bmm": "matmul", "relu": "relu", "relu_": "relu",
    "sigmoid": "sigmoid", "tanh": "tanh", "softmax": "softmax", "log_softmax": "log_softmax",
    "mean": "mean", "expand": "expand", "expand_as": "expand", "chunk": "chunk", "split": "split",
    "to": "to", "float": "to", "type_as": "to", "type": "to", "clone": "clone", "sigmoid_": "sigmoid",
    "__getitem__": "getitem",
}
FN_SPLIT = _fn("torch.chunk", "torch.split")

FACTORY_METHODS = {"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"}
FACTORIES = _fn("torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like", "torch.rand_like",
                "torch.randn_like", "torch.randint_like")

# In-place activations whose autograd formula needs the original input: autograd saves a clone.
CLONING_INPLACE = {"relu6", "silu", "hardswish"}

# Modules whose calls emit nothing (the output is the input).
IDENTITY_MODULES = (nn.Identity,)


def _compact(v, n=None):
    """(k, k) -> k; [a, b] stays a list."""
    if isinstance(v, (tuple, list)):
        v = [int(x) for x in v]
        return v[0] if len(set(v)) == 1 else v
    return int(v)


def _is_default(v, d):
    if isinstance(v, list):
        return all(x == d for x in v)
    return v == d


class Mapper:
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
    # helpers
    # ------------------------------------------------------------------------------------------
    def _unique(self, base):
        base = "".join(c if (c.isalnum() or c == "_") else "_" for c in base) or "layer"
        if base[0] == "@":
            base = "_" + base[1:]
        name, k = base, 1
        while name in self.layer_names or name in ("loss",):
            name = f"{base}_{k}"
            k += 1
        self.layer_names.add(name)
        return name

    def emit(self, node, op, inputs, suffix="", claims=(), **attrs):
        """Appends a layer; ``claims``: [(tensor, role)] parameters it owns."""
        name = self._unique(node.name + suffix if node is not None else suffix)
        layer = {"name": name, "op": op}
        if list(inputs) != [self.last]:
            layer["inputs"] = list(inputs)
        for k, v in attrs.items():
            if v is not None:
                layer[k] = v
        frozen = []
        for t, role in claims:
            key = t.data_ptr()
            if key not in self.owner:
                self.owner[key] = (name, op, role)
            if isinstance(t, nn.Parameter) and not t.requires_grad:
                frozen.append(role)
        if claims and frozen:
            if len(frozen) == len(claims):
                layer["trainable"] = False
            else:
                layer["frozen_params"] = frozen
            self.frozen_layers.append(name)
        self.layers.append(layer)
        self.last = name
        return name

    def info(self, node, i=1):
        """(per-sample shape, dtype) of a batched tensor output, or raise."""
        a, b = node.vals
        if not isinstance(a, TMeta) or not isinstance(b, TMeta):
            raise Unmappable("its output is not a tensor")
        return self._per_sample(a, b)

    @staticmethod
    def _per_sample(a, b):
        if len(a.shape) == len(b.shape) and len(a.shape) >= 1 and a.shape[0] == 1 and b.shape[0] == 2 \
                and a.shape[1:] == b.shape[1:]:
            return list(a.shape[1:]), a.dtype
        if a.shape == b.shape:
            return None, a.dtype  # unbatched
        raise Unmappable(f"its output's batch dimension is not dim 0 ({list(a.shape)} at batch 1, "
                         f"{list(b.shape)} at batch 2)")

    def value(self, arg):
        if isinstance(arg, Ref):
            return self.val.get(arg.name)
        return arg

    def tin(self, arg, what="input"):
        v = self.value(arg)
        if isinstance(v, str):
            return v
        if isinstance(v, Pending):
            raise Unmappable(f"its {what} is a {v.kind} pattern used in an unsupported way")
        if isinstance(v, (Param, Const)):
            raise Unmappable(f"its {what} is a parameter or constant tensor, not an activation")
        raise Unmappable(f"its {what} is not a tensor computed from the model input")

    def node_of(self, arg):
        return self.g.by_name[arg.name] if isinstance(arg, Ref) else None

    def meta_of(self, arg, i=0):
        n = self.node_of(arg)
        return n.vals[i] if n is not None else None

    def ps_shape(self, arg):
        n = self.node_of(arg)
        if n is None:
            raise Unmappable("an argument is not a tensor")
        shape, _ = self.info(n)
        if shape is None:
            raise Unmappable("an argument is not batched")
        return shape

    @staticmethod
    def ps_dim(d, ndim):
        """torch dim (of a batched tensor of rank ndim) -> per-sample dim."""
        d = int(d)
        if d < 0:
            d += ndim
        if d <= 0 or d >= ndim:
            raise Unmappable(f"it works on the batch dimension (dim {d})")
        return d - 1

    def arg(self, node, i, name, default=None):
        if len(node.args) > i:
            return node.args[i]
        return node.kwargs.get(name, default)

    def module(self, node):
        m = self.modules.get(node.target)
        if m is None:
            raise Unmappable(f"module {node.target} not found")
        return m

    def param_of(self, arg):
        v = self.value(arg)
        if isinstance(v, Param):
            t = self.params.get(v.key, (None, None))[1]
            return t if t is not None else self.buffers.get(v.key, (None, None))[1]
        return None

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
            keys, saved = set(), list(n.saved)
            for v in srcs:
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
                return Const(n, v0, keys, saved)
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

    # ------------------------------------------------------------------------------------------
    # modules
    # ------------------------------------------------------------------------------------------
    def map_module(self, n):
        m = self.module(n)
        t = type(m)
        name = t.__name__
        if isinstance(m, IDENTITY_MODULES):
            return self.value(n.args[0])
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            return self.conv(n, m, {nn.Conv1d: 1, nn.Conv2d: 2, nn.Conv3d: 3}[next(
                c for c in (nn.Conv1d, nn.Conv2d, nn.Conv3d) if isinstance(m, c))])
        if isinstance(m, nn.ConvTranspose2d):
            return self.conv(n, m, 2, transpose=True)
        if isinstance(m, nn.Linear):
            return self.linear(n, self.tin(n.args[0]), m.weight, m.bias)
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)) or name == "SyncBatchNorm":
            return self.batchnorm(n, m)
        if isinstance(m, nn.LayerNorm):
            return self.layernorm(n, self.tin(n.args[0]), len(m.normalized_shape), m.weight,
                                  getattr(m, "bias", None), m.eps)
        if isinstance(m, nn.GroupNorm):
            return self.groupnorm(n, self.tin(n.args[0]), m.num_groups, m.weight, m.bias, m.eps)
        if isinstance(m, nn.Embedding):
            return self.embedding(n, n.args[0], m.weight, m.num_embeddings, m.embedding_dim)
        if isinstance(m, nn.ReLU):
            return self.act(n, "relu", m.inplace)
        if isinstance(m, nn.ReLU6):
            return self.act(n, "relu6", m.inplace)
        if isinstance(m, nn.Hardtanh):
            if m.min_val == 0.0 and m.max_val == 6.0:
                return self.act(n, "relu6", m.inplace)
            raise Unmappable("Hardtanh other than ReLU6")
        if isinstance(m, nn.LeakyReLU):
            return self.act(n, "leaky_relu", m.inplace,
                            negative_slope=None if m.negative_slope == 0.01 else float(m.negative_slope))
        if isinstance(m, nn.GELU):
            approx = getattr(m, "approximate", "none")
            return self.act(n, "gelu", False, approximate=None if approx == "none" else approx)
        if isinstance(m, nn.SiLU):
            return self.act(n, "silu", m.inplace)
        if isinstance(m, nn.Hardswish):
            return self.act(n, "hardswish", getattr(m, "inplace", False))
        if isinstance(m, nn.Sigmoid):
            return self.act(n, "sigmoid", False)
        if isinstance(m, nn.Tanh):
            return self.act(n, "tanh", False)
        if isinstance(m, (nn.Softmax, nn.LogSoftmax)):
            if m.dim is None:
                raise Unmappable("Softmax without dim")
            x = self.tin(n.args[0])
            shape = self.ps_shape(n.args[0])
            return self.emit(n, "softmax" if isinstance(m, nn.Softmax) else "log_softmax", [x],
                             dim=self._dim_attr(m.dim, len(shape) + 1, -1))
        if isinstance(m, nn.Hardsigmoid):
            return self.opaque_layer(n, "Hardsigmoid is not in the op catalogue (saves its input)")
        if isinstance(m, (nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)) \
                if hasattr(nn, "Dropout1d") else isinstance(m, (nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout)):
            if not m.training or m.p == 0:
                return self.value(n.args[0])
            return self.opaque_layer(n, f"{name} saves a per-channel noise tensor")
        if isinstance(m, nn.Dropout) or ("Dropout" in name and hasattr(m, "p") and "2d" not in name
                                         and "3d" not in name and "1d" not in name):
            x = self.tin(n.args[0])
            p = float(m.p) if m.training else 0.0
            if p == 0.0:
                return x
            return self.emit(n, "dropout", [x], p=p)
        if name in ("StochasticDepth", "DropPath"):
            p = float(getattr(m, "p", getattr(m, "drop_prob", 0.0)))
            if not m.training or p == 0.0:
                return self.value(n.args[0])
            return self.opaque_layer(n, "stochastic depth in training: input * noise, saves the noise")
        if isinstance(m, nn.MaxPool2d):
            if m.return_indices:
                raise Unmappable("MaxPool2d(return_indices=True)")
            return self.pool(n, "maxpool2d", m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode)
        if isinstance(m, nn.AvgPool2d):
            if m.divisor_override:
                raise Unmappable("AvgPool2d(divisor_override)")
            return self.pool(n, "avgpool2d", m.kernel_size, m.stride, m.padding, 1, m.ceil_mode,
                             count_include_pad=m.count_include_pad)
        if isinstance(m, nn.AdaptiveAvgPool2d):
            return self.adaptive_pool(n, m.output_size)
        if isinstance(m, nn.Flatten):
            x = self.tin(n.args[0])
            return self.flatten_layer(n, x, len(self.ps_shape(n.args[0])) + 1, m.start_dim, m.end_dim)
        if isinstance(m, nn.Unflatten):
            return self.reshape(n)
        if isinstance(m, nn.MultiheadAttention):
            return self.mha(n, m)
        raise Unmappable(f"no BatchFit op for module {t.__module__}.{name}")

    # -- individual ops -------------------------------------------------------------------------
    def _dim_attr(self, d, ndim, default):
        pd = self.ps_dim(d, ndim)
        neg = pd - (ndim - 1)
        return None if neg == default else neg

    def act(self, n, op, inplace, **attrs):
        x = self.tin(n.args[0])
        if op in CLONING_INPLACE:
            # torch's relu6_/hardtanh_, silu_ and hardswish_ save a clone of their input (their backward
            # needs the original values), so in place they keep as much as out of place: written as
            # out of place, which BatchFit counts the same way.
            inplace = False
        return self.emit(n, op, [x], inplace=True if inplace else None, **attrs)

    def conv(self, n, m, d, transpose=False):
        x = self.tin(n.args[0])
        if getattr(m, "padding_mode", "zeros") != "zeros":
            raise Unmappable(f"padding_mode={m.padding_mode!r}")
        if m.weight.data_ptr() in self.owner:
            return self.opaque_layer(n, "a second call of a convolution (shared weights; conv has no tied_to)")
        pad = m.padding
        if isinstance(pad, str):
            pad = "same" if pad == "same" else 0
        else:
            pad = _compact(pad)
        attrs = {"out_channels": int(m.out_channels), "kernel": _compact(m.kernel_size)}
        for key, v, dflt in (("stride", _compact(m.stride), 1), ("padding", pad, 0),
                             ("dilation", _compact(m.dilation), 1), ("groups", int(m.groups), 1)):
            if not _is_default(v, dflt):
                attrs[key] = v
        if transpose:
            op = _compact(m.output_padding)
            if not _is_default(op, 0):
                attrs["output_padding"] = op
        if m.bias is None:
            attrs["bias"] = False
        params = [(m.weight, "weight")] + ([(m.bias, "bias")] if m.bias is not None else [])
        opname = "conv_transpose2d" if transpose else f"conv{d}d"
        return self.emit(n, opname, [x], claims=params, **attrs)

    def linear(self, n, x, weight, bias):
        if weight is None:
            raise Unmappable("linear without a weight")
        attrs = {"out_features": int(weight.shape[0])}
        tied = None
        wkey = weight.data_ptr()
        if wkey in self.owner:
            owner, op, role = self.owner[wkey]
            if op not in ("linear", "embedding") or role != "weight":
                return self.opaque_layer(n, f"its weight is shared with {owner} ({op}), which tied_to cannot express")
            tied = owner
        params = [] if tied else [(weight, "weight")]
        if bias is None:
            attrs["bias"] = False
        elif bias.data_ptr() in self.owner:
            attrs["bias"] = False  # a shared bias: mm instead of addmm saves the same tensors
        else:
            params.append((bias, "bias"))
        if tied:
            attrs["tied_to"] = tied
        return self.emit(n, "linear", [x], claims=params, **attrs)

    def batchnorm(self, n, m):
        x = self.tin(n.args[0])
        shape = self.ps_shape(n.args[0])
        if m.weight is not None and m.weight.data_ptr() in self.owner or \
                m.running_mean is not None and m.running_mean.data_ptr() in self.owner:
            return self.opaque_layer(n, "a second call of a batch norm module (shared parameters)")
        op = "batchnorm2d" if len(shape) == 3 else ("batchnorm1d" if len(shape) in (1, 2) else None)
        if op is None:
            raise Unmappable(f"batch norm over a {len(shape) + 1}-d input")
        attrs = {}
        if m.eps != 1e-5:
            attrs["eps"] = float(m.eps)
        if not m.affine:
            attrs["affine"] = False
        if not m.track_running_stats:
            attrs["track_running_stats"] = False
        params = [(m.weight, "weight"), (m.bias, "bias")] if m.affine else []
        if m.running_mean is not None:
            self.owner.setdefault(m.running_mean.data_ptr(), (n.name, op, "running_mean"))
        return self.emit(n, op, [x], claims=params, **attrs)

    def layernorm(self, n, x, ndims, weight, bias, eps):
        if weight is not None and weight.data_ptr() in self.owner:
            return self.opaque_layer(n, "a second use of layer norm parameters (shared)")
        attrs = {}
        if ndims != 1:
            attrs["normalized_dims"] = int(ndims)
        if weight is None:
            attrs["elementwise_affine"] = False
        elif bias is None:
            attrs["bias"] = False
        if eps != 1e-5:
            attrs["eps"] = float(eps)
        params = ([(weight, "weight")] if weight is not None else []) + ([(bias, "bias")] if bias is not None else [])
        return self.emit(n, "layernorm", [x], claims=params, **attrs)

    def groupnorm(self, n, x, groups, weight, bias, eps):
        if weight is not None and weight.data_ptr() in self.owner:
            return self.opaque_layer(n, "a second use of group norm parameters (shared)")
        attrs = {"groups": int(groups)}
        if weight is None:
            attrs["affine"] = False
        if eps != 1e-5:
            attrs["eps"] = float(eps)
        params = ([(weight, "weight")] if weight is not None else []) + ([(bias, "bias")] if bias is not None else [])
        return self.emit(n, "groupnorm", [x], claims=params, **attrs)

    def embedding(self, n, idx_arg, weight, num, dim):
        v = self.value(idx_arg)
        attrs = {"num_embeddings": int(num), "embedding_dim": int(dim)}
        wkey = weight.data_ptr()
        params = [(weight, "weight")]
        if wkey in self.owner:
            owner, op, role = self.owner[wkey]
            if op not in ("linear", "embedding") or role != "weight":
                return self.opaque_layer(n, f"its weight is shared with {owner} ({op})")
            attrs["tied_to"] = owner
            params = []
        if isinstance(v, str):
            return self.emit(n, "embedding", [v], claims=params, **attrs)
        if isinstance(v, Const):
            # positions: arange(S) (shape [S] or [1, S]) shared by the batch
            shape = [d for d in v.meta.shape]
            while len(shape) > 1 and shape[0] == 1:
                shape = shape[1:]
            if len(shape) != 1 or v.meta.dtype not in (torch.int64, torch.int32):
                raise Unmappable(f"embedding of a constant index tensor {list(v.meta.shape)}")
            src = self._sequence_source(shape[0])
            attrs["indices"] = "positions"
            return self.emit(n, "embedding", [src], claims=params, **attrs)
        raise Unmappable("embedding indices are not the model input or positions")

    def _sequence_source(self, seq):
        shape, _ = self.input_meta
        if shape and shape[0] == seq:
            return "@input"
        raise Unmappable(f"positions of length {seq}, but the model input is {shape}")

    def pool(self, n, op, k, s, p, d, ceil, count_include_pad=True):
        x = self.tin(n.args[0])
        shape = self.ps_shape(n.args[0])
        if len(shape) != 3:
            raise Unmappable(f"{op} on a {len(shape) + 1}-d input")
        k = _compact(k)
        s = _compact(s if s not in (None, [], ()) else k)
        attrs = {"kernel": k}
        if s != k:
            attrs["stride"] = s
        if not _is_default(_compact(p), 0):
            attrs["padding"] = _compact(p)
        if op == "maxpool2d" and not _is_default(_compact(d), 1):
            attrs["dilation"] = _compact(d)
        if ceil:
            attrs["ceil_mode"] = True
        if op == "avgpool2d" and not count_include_pad:
            attrs["count_include_pad"] = False
        return self.emit(n, op, [x], **attrs)

    def adaptive_pool(self, n, output_size):
        x = self.tin(n.args[0])
        shape = self.ps_shape(n.args[0])
        if len(shape) != 3:
            raise Unmappable("adaptive_avg_pool2d on a non-[C,H,W] input")
        o = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
        o = [shape[1 + i] if v is None else int(v) for i, v in enumerate(o)]
        return self.emit(n, "adaptive_avgpool2d", [x], output_size=o[0] if o[0] == o[1] else o)

    def flatten_layer(self, n, x, ndim, start, end):
        s = self.ps_dim(start, ndim) if (start % ndim) != 0 else None
        if s is None:
            raise Unmappable("flatten over the batch dimension")
        e = int(end)
        e = e if e < 0 else self.ps_dim(e, ndim)
        attrs = {}
        if s != 0:
            attrs["start_dim"] = s
        if e not in (-1, ndim - 2):
            attrs["end_dim"] = e
        return self.emit(n, "flatten", [x], **attrs)

    def reshape(self, n, x_arg=None):
        x_arg = n.args[0] if x_arg is None else x_arg
        x = self.tin(x_arg)
        out, _ = self.info(n)
        if out is None:
            raise Unmappable("a reshape that drops the batch dimension")
        if out == self.ps_shape(x_arg):
            return x if self.meta_of(x_arg).contiguous else self.emit(n, "reshape", [x], shape=out)
        return self.emit(n, "reshape", [x], shape=out)

    def mha(self, n, m):
        q, k, v = (self.arg(n, i, nm) for i, nm in enumerate(("query", "key", "value")))
        if not (isinstance(q, Ref) and isinstance(k, Ref) and isinstance(v, Ref) and q.name == k.name == v.name):
            raise Unmappable("MultiheadAttention other than self-attention (query, key and value differ)")
        for kw in ("attn_mask", "key_padding_mask"):
            if self.arg(n, {"key_padding_mask": 3, "attn_mask": 5}[kw], kw) is not None:
                raise Unmappable(f"MultiheadAttention with {kw}")
        if not m.batch_first:
            raise Unmappable("MultiheadAttention(batch_first=False): the batch is not dim 0")
        if not m._qkv_same_embed_dim or m.bias_k is not None or m.add_zero_attn:
            raise Unmappable("MultiheadAttention with kdim/vdim, bias_k/v or add_zero_attn")
        if self.arg(n, 7, "is_causal", False):
            raise Unmappable("MultiheadAttention(is_causal=True)")
        x = self.tin(q)
        shape = self.ps_shape(q)
        if len(shape) != 2:
            raise Unmappable(f"MultiheadAttention on a per-sample {shape} input")
        if m.in_proj_weight.data_ptr() in self.owner:
            return Tup((self.opaque_layer(n, "a second call of a MultiheadAttention (shared weights)",
                                          tensor_index=0), None))
        impl = self.opts.get("attention_impl") or "auto"
        if impl == "auto":
            # torch >= 2.0 runs need_weights=False through scaled_dot_product_attention (on CUDA in fp32 the
            # memory-efficient kernel); torch 1.x, and need_weights=True, materialise the scores (eager)
            need_weights = self.arg(n, 4, "need_weights", True)
            impl = "eager" if need_weights or TORCH_MAJOR < 2 else "mem_efficient"
        attrs = {"heads": int(m.num_heads), "qkv": "fused", "impl": impl}
        if m.in_proj_bias is None:
            attrs["bias"] = False
        if m.out_proj.bias is None:
            attrs["out_bias"] = False
        if m.dropout and m.training:
            attrs["dropout"] = float(m.dropout)
        params = [(m.in_proj_weight, "weight")] + ([(m.in_proj_bias, "bias")] if m.in_proj_bias is not None else [])
        params += [(m.out_proj.weight, "out_weight")]
        if m.out_proj.bias is not None:
            params.append((m.out_proj.bias, "out_bias"))
        name = self.emit(n, "attention", [x], claims=params, **attrs)
        return Tup((name, None))  # (output, attention weights: not representable)

    # ------------------------------------------------------------------------------------------
    # functions and methods
    # ------------------------------------------------------------------------------------------
    def map_method(self, n, name):
        kind = METHOD.get(name)
        if kind is None:
            raise Unmappable(f"no BatchFit op for tensor method .{name}()")
        if name.endswith("_") and kind in ("relu", "sigmoid"):
            return self.act(n, kind, kind == "relu")
        return self.dispatch(n, kind, method=True)

    def map_function(self, n, fn):
        for kind, fns in FN.items():
            if fn in fns:
                return self.dispatch(n, kind, method=False)
        if fn is untracked_view:
            return self.view_of(n)
        if fn in FN_SPLIT:
            return self.dispatch(n, "chunk" if getattr(fn, "__name__", "") == "chunk" else "split", method=False)
        if fn in (getattr(torch, "_assert", None),):
            return None
        raise Unmappable(f"no BatchFit op for function {n.target_name()}")

    def dispatch(self, n, kind, method):
        a = n.args
        if kind in ("add", "sub"):
            return self.binary(n, "add")
        if kind == "mul":
            return self.binary(n, "mul")
        if kind == "div":
            return self.division(n)
        if kind == "getitem":
            return self.getitem(n)
        if kind == "cat":
            return self.cat(n)
        if kind == "flatten":
            x = self.tin(a[0])
            ndim = len(self.ps_shape(a[0])) + 1
            start = self.arg(n, 1, "start_dim", 0)
            end = self.arg(n, 2, "end_dim", -1)
            return self.flatten_layer(n, x, ndim, start, end)
        if kind == "reshape":
            return self.reshape(n)
        if kind == "permute":
            x = self.tin(a[0])
            dims = list(a[1]) if len(a) == 2 and isinstance(a[1], (tuple, list)) else list(a[1:])
            if not dims:
                dims = list(n.kwargs.get("dims", []))
            ndim = len(dims)
            dims = [int(d) % ndim for d in dims]
            if dims[0] != 0:
                raise Unmappable("a permute that moves the batch dimension")
            return self.emit(n, "permute", [x], dims=[d - 1 for d in dims[1:]])
        if kind == "transpose":
            x = self.tin(a[0])
            ndim = len(self.ps_shape(a[0])) + 1
            d0 = self.ps_dim(self.arg(n, 1, "dim0"), ndim)
            d1 = self.ps_dim(self.arg(n, 2, "dim1"), ndim)
            return self.emit(n, "transpose", [x], dim0=d0, dim1=d1)
        if kind == "contiguous":
            x = self.tin(a[0])
            if self.meta_of(a[0]).contiguous:
                return x
            return self.emit(n, "contiguous", [x])
        if kind == "matmul":
            x, y = self.tin(a[0], "first operand"), self.tin(self.arg(n, 1, "other"), "second operand")
            return self.emit(n, "matmul", [x, y])
        if kind in ("relu", "relu6", "silu", "hardswish", "leaky_relu"):
            inplace = bool(self.arg(n, 2 if kind == "leaky_relu" else 1, "inplace", False)) or \
                getattr(n.target, "__name__", "").endswith("_")
            attrs = {}
            if kind == "leaky_relu":
                ns = self.arg(n, 1, "negative_slope", 0.01)
                attrs["negative_slope"] = None if ns == 0.01 else float(ns)
            return self.act(n, kind, inplace, **attrs)
        if kind == "hardtanh":
            lo, hi = self.arg(n, 1, "min_val", -1.0), self.arg(n, 2, "max_val", 1.0)
            if lo == 0.0 and hi == 6.0:
                return self.act(n, "relu6", bool(self.arg(n, 3, "inplace", False)))
            raise Unmappable("hardtanh other than relu6")
        if kind == "gelu":
            approx = n.kwargs.get("approximate", a[1] if len(a) > 1 else "none")
            return self.act(n, "gelu", False, approximate=None if approx == "none" else approx)
        if kind in ("sigmoid", "tanh"):
            return self.act(n, kind, False)
        if kind == "hardsigmoid":
            return self.opaque_layer(n, "hardsigmoid is not in the op catalogue (saves its input)")
        if kind in ("softmax", "log_softmax"):
            x = self.tin(a[0])
            d = self.arg(n, 1, "dim", None)
            if d is None:
                raise Unmappable(f"{kind} without dim")
            ndim = len(self.ps_shape(a[0])) + 1
            return self.emit(n, kind, [x], dim=self._dim_attr(d, ndim, -1))
        if kind == "dropout":
            x = self.tin(a[0])
            p = float(self.arg(n, 1, "p", 0.5))
            training = self.arg(n, 2, "training", True if method else True)
            if n.target is getattr(torch, "dropout", None):
                training = self.arg(n, 2, "train", True)
            if not training or p == 0.0:
                return x
            return self.emit(n, "dropout", [x], p=p)
        if kind == "feature_dropout":
            training = self.arg(n, 2, "training", True)
            if not training or float(self.arg(n, 1, "p", 0.5)) == 0.0:
                return self.tin(a[0])
            return self.opaque_layer(n, "feature dropout saves a per-channel noise tensor")
        if kind == "stochastic_depth":
            p = float(self.arg(n, 1, "p", 0.0))
            training = self.arg(n, 3, "training", True)
            if not training or p == 0.0:
                return self.tin(a[0])
            return self.opaque_layer(n, "stochastic depth in training: input * noise, saves the noise")
        if kind == "adaptive_avg_pool2d":
            return self.adaptive_pool(n, self.arg(n, 1, "output_size"))
        if kind == "avg_pool2d":
            if self.arg(n, 6, "divisor_override", None):
                raise Unmappable("avg_pool2d(divisor_override)")
            k = self.arg(n, 1, "kernel_size")
            return self.pool(n, "avgpool2d", k, self.arg(n, 2, "stride", None) or k, self.arg(n, 3, "padding", 0),
                             1, self.arg(n, 4, "ceil_mode", False), self.arg(n, 5, "count_include_pad", True))
        if kind == "max_pool2d":
            if self.arg(n, 6, "return_indices", False):
                raise Unmappable("max_pool2d(return_indices=True)")
            k = self.arg(n, 1, "kernel_size")
            return self.pool(n, "maxpool2d", k, self.arg(n, 2, "stride", None) or k, self.arg(n, 3, "padding", 0),
                             self.arg(n, 4, "dilation", 1), self.arg(n, 5, "ceil_mode", False))
        if kind == "mean":
            return self.mean(n)
        if kind == "layer_norm":
            x = self.tin(a[0])
            shape = self.arg(n, 1, "normalized_shape")
            w, b = self.param_of(self.arg(n, 2, "weight")), self.param_of(self.arg(n, 3, "bias"))
            if self.arg(n, 2, "weight") is not None and w is None:
                raise Unmappable("layer_norm with a computed weight")
            return self.layernorm(n, x, len(shape) if isinstance(shape, (tuple, list)) else 1, w, b,
                                  float(self.arg(n, 4, "eps", 1e-5)))
        if kind == "group_norm":
            x = self.tin(a[0])
            w, b = self.param_of(self.arg(n, 2, "weight")), self.param_of(self.arg(n, 3, "bias"))
            return self.groupnorm(n, x, int(self.arg(n, 1, "num_groups")), w, b, float(self.arg(n, 4, "eps", 1e-5)))
        if kind == "linear":
            x = self.tin(a[0])
            w, b = self.param_of(self.arg(n, 1, "weight")), self.param_of(self.arg(n, 2, "bias"))
            if w is None or (self.arg(n, 2, "bias") is not None and b is None):
                raise Unmappable("linear with a computed weight or bias")
            return self.linear(n, x, w, b)
        if kind in ("conv1d", "conv2d"):
            return self.functional_conv(n, 1 if kind == "conv1d" else 2)
        if kind == "embedding":
            w = self.param_of(self.arg(n, 1, "weight"))
            if w is None:
                raise Unmappable("embedding with a computed weight")
            return self.embedding(n, a[0], w, w.shape[0], w.shape[1])
        if kind == "expand":
            return self.expand(n)
        if kind in ("chunk", "split"):
            return self.split(n, kind)
        if kind == "to":
            x = self.tin(a[0])
            if n.vals[0].dtype == self.meta_of(a[0]).dtype:
                return x
            raise Unmappable("a dtype conversion (cast)")
        if kind == "clone":
            x = self.tin(a[0])
            return self.emit(n, "scale", [x], factor=1.0, torch_op="clone")
        raise Unmappable(f"no mapping for {kind}")

    def functional_conv(self, n, d):
        x = self.tin(n.args[0])
        w = self.param_of(self.arg(n, 1, "weight"))
        b_arg = self.arg(n, 2, "bias")
        b = self.param_of(b_arg)
        if w is None or (b_arg is not None and b is None):
            raise Unmappable("convolution with a computed weight")
        if w.data_ptr() in self.owner:
            return self.opaque_layer(n, "a convolution with a shared weight")
        pad = self.arg(n, 4, "padding", 0)
        pad = pad if isinstance(pad, str) else _compact(pad if isinstance(pad, (tuple, list)) else [pad] * d)
        attrs = {"out_channels": int(w.shape[0]), "kernel": _compact(list(w.shape[2:]))}
        for key, v, dflt in (("stride", _compact(_listify(self.arg(n, 3, "stride", 1), d)), 1),
                             ("padding", pad, 0), ("dilation", _compact(_listify(self.arg(n, 5, "dilation", 1), d)), 1),
                             ("groups", int(self.arg(n, 6, "groups", 1)), 1)):
            if isinstance(v, str):
                if v == "valid":
                    continue
                attrs[key] = v
            elif not _is_default(v, dflt):
                attrs[key] = v
        if b is None:
            attrs["bias"] = False
        params = [(w, "weight")] + ([(b, "bias")] if b is not None else [])
        return self.emit(n, f"conv{d}d", [x], claims=params, **attrs)

    def binary(self, n, op):
        a = n.args[0] if n.args else n.kwargs.get("input")
        b = n.args[1] if len(n.args) > 1 else n.kwargs.get("other")
        va, vb = self.value(a), self.value(b)
        if isinstance(va, str) and isinstance(vb, str):
            return self.emit(n, op, [va, vb])
        if not isinstance(va, str):
            va, vb, a, b = vb, va, b, a
        if not isinstance(va, str):
            raise Unmappable(f"{op} without an activation operand")
        if isinstance(vb, (int, float)) and not isinstance(vb, bool):
            if op == "mul":
                return self.emit(n, "scale", [va], factor=float(vb))
            return self.emit(n, "scale", [va], factor=1.0, torch_op="add of a Python number")
        if isinstance(vb, Param) and vb.key in self.params:
            p = self.params[vb.key][1]
            xshape = self.ps_shape(a)
            pshape = list(p.shape)
            while pshape and pshape[0] == 1 and len(pshape) > len(xshape):
                pshape = pshape[1:]
            if op == "add" and pshape == xshape and vb.key not in self.owner:
                return self.emit(n, "learned_add", [va], claims=[(p, "weight")])
            return self.opaque_layer(n, f"{op} with a learned parameter of shape {list(p.shape)}")
        if isinstance(vb, Const) and op == "add" and not vb.meta.requires_grad \
                and self.info(n)[0] == self.ps_shape(a):
            # adding a constant (no gradient) saves nothing: a new tensor, like a scale by 1
            return self.emit(n, "scale", [va], factor=1.0, torch_op="add of a constant tensor")
        if isinstance(vb, (Param, Const)):
            return self.opaque_layer(n, f"{op} with a constant tensor")
        raise Unmappable(f"{op} with an operand that is not an activation")

    def division(self, n):
        a, b = n.args[0], n.args[1] if len(n.args) > 1 else n.kwargs.get("other")
        va, vb = self.value(a), self.value(b)
        if isinstance(va, str) and isinstance(vb, (int, float)) and not isinstance(vb, bool):
            if n.kwargs.get("rounding_mode"):
                raise Unmappable("division with rounding")
            return self.emit(n, "scale", [va], factor=1.0 / float(vb))
        if isinstance(va, str) and isinstance(vb, str):
            return self.emit(n, "mul", [va, vb], torch_op="div")  # saves both operands, like mul
        if isinstance(va, str) and isinstance(vb, (Param, Const)):
            return self.opaque_layer(n, "division by a constant tensor")
        raise Unmappable("division with an operand that is not an activation")

    def cat(self, n):
        tensors = n.args[0] if n.args else n.kwargs.get("tensors")
        d = self.arg(n, 1, "dim", 0)
        vals = [self.value(t) for t in tensors]
        ndim = len(n.vals[0].shape)
        if len(vals) == 2 and isinstance(vals[0], Pending) and vals[0].kind == "class_token" \
                and isinstance(vals[1], str) and self.ps_dim(d, ndim) == 0 and vals[0].data.key not in self.owner:
            p = self.params[vals[0].data.key][1]
            if p.numel() == self.ps_shape(tensors[1])[-1]:
                return self.emit(n, "class_token", [vals[1]], claims=[(p, "weight")])
        if not all(isinstance(v, str) for v in vals):
            raise Unmappable("concatenation with a parameter or constant tensor")
        if len(vals) == 1:
            return vals[0]
        pd = self.ps_dim(d, ndim)
        return self.emit(n, "concat", vals, dim=pd if pd != 0 else None)

    def expand(self, n):
        v = self.value(n.args[0])
        if isinstance(v, Param) and v.key in self.params:
            shape, _ = self.info(n)
            p = self.params[v.key][1]
            if shape is not None and len(shape) == 2 and shape[0] == 1 and p.numel() == shape[1]:
                return Pending("class_token", n, v)
        raise Unmappable("expand (only a class token expanded over the batch and concatenated is supported)")

    def split(self, n, kind):
        x = self.tin(n.args[0])
        shape = self.ps_shape(n.args[0])
        ndim = len(shape) + 1
        d = self.arg(n, 2, "dim", 0)
        pd = self.ps_dim(d, ndim)
        outs = n.vals[0]
        parts, start = [], 0
        for i, o in enumerate(outs):
            size = o.shape[d % ndim]
            parts.append((x, pd, start, start + size))
            start += size
        return Tup(Pending("slice", n, part) for part in parts)

    def getitem(self, n):
        base = self.value(n.args[0])
        idx = n.args[1]
        if isinstance(base, Tup):
            v = base[int(idx)]
            if isinstance(v, Pending) and v.kind == "slice":
                x, pd, s, e = v.data
                return self.emit(n, "slice", [x], dim=pd, start=s if s else None, end=e)
            if v is None:
                raise Unmappable("uses an output that cannot be represented (e.g. attention weights)")
            return v
        if isinstance(base, (tuple, list)) and not isinstance(base, str):
            return base[int(idx)]
        src = self.node_of(n.args[0])
        if isinstance(base, str) and src is not None and isinstance(src.vals[0], tuple):
            # element of a tuple output that was mapped as one tensor (an opaque layer)
            first = next((i for i, x in enumerate(src.vals[0]) if isinstance(x, TMeta)), None)
            if int(idx) == first:
                return base
            raise Unmappable(f"uses output {idx} of {src.name}, which is represented by its output {first} only")
        if isinstance(base, (Param, Const)):
            if isinstance(base, Param):
                return Pending("param-view", n, base)
            raise Unmappable("indexing a constant tensor")
        x = self.tin(n.args[0])
        shape = self.ps_shape(n.args[0])
        if not isinstance(idx, tuple):
            idx = (idx,)
        # the first index must take the whole batch
        if not idx or not (isinstance(idx[0], slice) and idx[0] == slice(None, None, None)):
            raise Unmappable(f"indexing that does not keep the batch dimension: {idx}")
        if any(i is Ellipsis for i in idx):
            e = idx.index(Ellipsis)
            fill = len(shape) + 1 - (len(idx) - 1 - sum(1 for i in idx if i is None))
            idx = idx[:e] + (slice(None),) * fill + idx[e + 1:]
        out = x
        dim = 0  # per-sample dim of the current tensor
        cur = list(shape)
        for i in idx[1:]:
            if isinstance(i, slice):
                if i == slice(None, None, None):
                    dim += 1
                    continue
                if any(isinstance(v, Ref) for v in (i.start, i.stop, i.step)):
                    raise Unmappable("a slice with computed bounds")
                step = i.step or 1
                start, stop, _ = slice(i.start, i.stop, step).indices(cur[dim])
                attrs = {"dim": dim}
                if start:
                    attrs["start"] = start
                attrs["end"] = stop
                if step != 1:
                    attrs["step"] = step
                out = self.emit(n, "slice", [out], suffix="" if out == x else f"_{dim}", **attrs)
                cur[dim] = len(range(start, stop, step))
                dim += 1
            elif isinstance(i, int) and not isinstance(i, bool):
                out = self.emit(n, "select", [out], suffix="" if out == x else f"_{dim}", dim=dim, index=int(i))
                cur.pop(dim)
            elif i is None:
                raise Unmappable("indexing with None (unsqueeze)")
            else:
                raise Unmappable(f"advanced indexing ({type(i).__name__})")
        return out

    def view_of(self, n):
        """A select or slice recognised from shapes, strides and offsets (batch 2)."""
        x = self.tin(n.args[0])
        base, view = self.meta_of(n.args[0], 1), n.vals[1]
        self.ps_shape(n.args[0])
        shape, _ = self.info(n)
        if shape is None:
            raise Unmappable("a view without the batch dimension")
        bs, bt, vs, vt = list(base.shape), list(base.stride), list(view.shape), list(view.stride)
        for d in range(1, len(bs)):  # select
            if len(vs) == len(bs) - 1 and vs == bs[:d] + bs[d + 1:] and vt == bt[:d] + bt[d + 1:] \
                    and bt[d] and (view.offset - base.offset) % bt[d] == 0:
                i = (view.offset - base.offset) // bt[d]
                if 0 <= i < bs[d]:
                    return self.emit(n, "select", [x], dim=d - 1, index=int(i))
        if len(vs) == len(bs):  # slice with step 1
            diff = [d for d in range(len(bs)) if vs[d] != bs[d]]
            if len(diff) == 1 and diff[0] >= 1 and vt == bt and bt[diff[0]] \
                    and (view.offset - base.offset) % bt[diff[0]] == 0:
                d = diff[0]
                start = (view.offset - base.offset) // bt[d]
                attrs = {"dim": d - 1, "end": int(start + vs[d])}
                if start:
                    attrs["start"] = int(start)
                return self.emit(n, "slice", [x], **attrs)
            if not diff and vt == bt and view.offset == base.offset:
                return x
        raise Unmappable(f"a view of {list(bs)} as {list(vs)} the tracer cannot name")

    def mean(self, n):
        x = self.tin(n.args[0])
        shape = self.ps_shape(n.args[0])
        dims = self.arg(n, 1, "dim", None)
        keep = bool(self.arg(n, 2, "keepdim", False))
        if dims is None or len(shape) != 3:
            raise Unmappable("mean other than over the spatial dims of [C,H,W]")
        dims = sorted(int(d) % 4 for d in (dims if isinstance(dims, (tuple, list)) else [dims]))
        if dims != [2, 3]:
            raise Unmappable("mean other than over the spatial dims of [C,H,W]")
        pooled = self.emit(n, "adaptive_avgpool2d", [x], output_size=1, torch_op="mean over H, W")
        if keep:
            return pooled
        return self.emit(n, "reshape", [pooled], suffix="_squeeze", shape=[shape[0]])


def _listify(v, d):
    return list(v) if isinstance(v, (tuple, list)) else [v] * d


def _has_tmeta(v, depth=0):
    if isinstance(v, TMeta):
        return True
    if depth > 3:
        return False
    if isinstance(v, (tuple, list)):
        return any(_has_tmeta(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return any(_has_tmeta(x, depth + 1) for x in v.values())
    return False


def _refs(obj):
    if isinstance(obj, Ref):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            yield from _refs(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _refs(x)
    elif isinstance(obj, slice):
        yield from _refs((obj.start, obj.stop, obj.step))
