"""torch.* function and Tensor method calls -> BatchFit layers (dispatch, arithmetic, convolutions)."""
import torch

from .common import DTYPE_NAMES
from .pointwise_rules import UNARY
from .tables import FN, FN_SPLIT, METHOD
from .tracing import untracked_view
from .values import Const, Param, Unmappable, _compact, _is_default, _listify


class FunctionRules:
    """Mapper's function and tensor method rules (a part of mapping.Mapper)."""

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
        if kind in UNARY:
            return self.pointwise(n, kind)
        if kind in ("mean", "sum"):
            return self.reduction(n, kind)
        if kind == "compare":
            return self.comparison(n)
        if kind == "sdpa":
            return self.sdpa(n)
        if kind in ("masked_fill", "where"):
            return self.masked_fill(n, where=kind == "where")
        if kind == "tril":  # tril/triu of an activation: backward is grad.tril(k), nothing saved
            return self.emit(n, "scale", [self.tin(a[0])], factor=1.0, torch_op=n.target_name())
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
            # a dtype conversion: written as "cast" even when this trace's dtypes make it a no-op (x.float() on an
            # fp32 model), so that the file estimated at another precision converts where the model does
            x = self.tin(a[0])
            out, src = n.vals[0], self.meta_of(a[0])
            target = n.target if n.kind == "method" else getattr(n.target, "__name__", "")
            if target == "type_as" and isinstance(self.value(a[1]) if len(a) > 1 else None, str):
                return self.emit(n, "cast", [x, self.tin(a[1])])
            explicit = target in ("float", "half", "bfloat16", "double") or any(
                isinstance(v, torch.dtype) for v in list(a[1:]) + list(n.kwargs.values()))
            if out.dtype == src.dtype and not explicit:
                return x  # .to(device), .to(x) of the same dtype, .type_as(a constant)
            return self.emit(n, "cast", [x], dtype=DTYPE_NAMES.get(out.dtype, str(out.dtype).replace("torch.", "")))
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
            if op == "mul" and vb.key not in self.owner:
                try:
                    return self.learned_mul(n, a, p)
                except Unmappable:
                    pass
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
