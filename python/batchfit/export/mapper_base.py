"""The Mapper's helpers: emitting layers, naming, reading node arguments, values and shapes."""
import torch.nn as nn

from .tracing import Ref, TMeta
from .values import Const, Param, Pending, Unmappable


class MapperBase:
    """Mapper's helpers (a part of mapping.Mapper)."""

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
        if node is not None and node.ckpt is not None:
            layer["_ckpt"] = node.ckpt  # grouped into a checkpoint block (and removed) by the export
        # the torch module the layer stands for (its parameters' owner, or the leaf module called): BatchFit's
        # --freeze/--train-only and --lora-targets match it as they match PyTorch module names
        module = None
        for t, _role in claims:
            pname = self.g.param_names.get(t.data_ptr())
            if pname and not pname.startswith("buffer:"):
                module = pname.rpartition(".")[0]
                break
        if module is None and node is not None and node.kind == "module":
            module = node.module_path
        if module:
            layer["module"] = module
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
