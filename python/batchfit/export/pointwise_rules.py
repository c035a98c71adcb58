"""The elementwise and masking vocabulary of hand-written models -> BatchFit layers.

pow/square/rsqrt/sqrt/exp/log/clamp/abs/neg/reciprocal/sin/cos -> the op of that name; mean/sum over per-sample
dims -> mean/sum; comparisons -> compare (a bool tensor, no gradient); masked_fill and torch.where with one
activation -> masked_fill (the mask given by its shape when it was made from a buffer, or as a second input);
tril/triu of an activation -> scale (saves nothing); weight * x with a parameter -> learned_mul.
What each saves: core/src/ops/rules_pointwise.cpp (checked by tests/core/test_ops.cpp against tools/measure_ops.py
under torch 1.13 and 2.6).
"""
import torch

from .common import DTYPE_NAMES
from .values import Const, Param, Pending, Unmappable

UNARY = {"pow", "square", "rsqrt", "sqrt", "exp", "log", "clamp", "clamp_min", "clamp_max", "abs", "neg",
         "reciprocal", "sin", "cos"}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}


class PointwiseRules:
    """Mapper's pointwise, reduction and masking rules (a part of mapping.Mapper)."""

    def pointwise(self, n, kind):
        a = n.args
        x = self.tin(a[0])
        if kind in ("pow", "square"):
            e = 2 if kind == "square" else self.arg(n, 1, "exponent")
            if not isinstance(e, (int, float)) or isinstance(e, bool):
                raise Unmappable("pow with a tensor exponent")
            return self.emit(n, "pow", [x], exponent=None if e == 2 else float(e), torch_op=n.target_name())
        if kind.startswith("clamp"):
            lo = self.arg(n, 1, "min", None) if kind in ("clamp", "clamp_min") else None
            hi = self.arg(n, 2 if kind == "clamp" else 1, "max", None) if kind in ("clamp", "clamp_max") else None
            for v in (lo, hi):
                if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)):
                    raise Unmappable("clamp with tensor bounds")
            if lo is None and hi is None:
                return x
            return self.emit(n, "clamp", [x], min=None if lo is None else float(lo),
                             max=None if hi is None else float(hi))
        return self.emit(n, kind, [x])

    def reduction(self, n, kind):
        x = self.tin(n.args[0])
        shape = self.ps_shape(n.args[0])
        dims = self.arg(n, 1, "dim", None)
        keep = bool(self.arg(n, 2, "keepdim", False))
        if dims is None:
            raise Unmappable(f"{kind} over every dim, the batch too (a loss; not an activation)")
        if self.arg(n, 3, "dtype", None) is not None:
            raise Unmappable(f"{kind} with a dtype")
        ndim = len(shape) + 1
        dims = dims if isinstance(dims, (tuple, list)) else [dims]
        pdims = sorted(self.ps_dim(d, ndim) for d in dims)
        if kind == "mean" and len(shape) == 3 and pdims == [1, 2]:
            return self.mean(n)  # a global average pool, as torchvision writes it
        return self.emit(n, kind, [x], dims=pdims[0] if len(pdims) == 1 else pdims, keepdim=True if keep else None)

    def comparison(self, n):
        a, b = n.args[0], n.args[1] if len(n.args) > 1 else n.kwargs.get("other")
        va, vb = self.value(a), self.value(b)
        if not isinstance(va, str):
            va, vb = vb, va
        if not isinstance(va, str):
            raise Unmappable("a comparison without an activation operand")
        inputs = [va] + ([vb] if isinstance(vb, str) else [])
        if isinstance(vb, (Param, Const)):
            raise Unmappable("a comparison of an activation with a tensor")
        return self.emit(n, "compare", inputs, torch_op=n.target_name())

    def _mask_attrs(self, mask_val):
        """Attributes of a mask computed without the model input (a buffer, or a comparison on one)."""
        meta = mask_val.meta
        if meta.dtype != torch.bool:
            raise Unmappable("a mask that is not bool")
        attrs = {"mask_shape": list(meta.shape)}
        if isinstance(mask_val, Param):
            buf = self.buffers.get(mask_val.key, (None, None))[1]
            if buf is None:
                raise Unmappable("a mask that is a parameter")
            attrs["mask"] = "buffer"
            bufs = {mask_val.key: buf}
        else:
            attrs["mask"] = None  # "computed", the default
            bufs = {k: self.buffers[k][1] for k in getattr(mask_val, "buffers", ()) if k in self.buffers}
            if mask_val.saved[0] or mask_val.saved[1]:
                raise Unmappable("a mask whose computation saves tensors")
        new = [(k, b) for k, b in bufs.items() if k not in self.owner]
        if len(new) > 1:
            raise Unmappable("a mask made from several buffers")
        claims = []
        if new:
            key, buf = new[0]
            attrs["buffer_shape"] = list(buf.shape)
            if buf.dtype != torch.bool:
                attrs["buffer_dtype"] = DTYPE_NAMES.get(buf.dtype, "float32")
            claims = [(buf, "mask")]
        elif attrs["mask"] == "buffer":
            attrs["mask"] = "shared"  # held (and saved) by the layer that used it first
        return attrs, claims

    def masked_fill(self, n, where=False):
        if where:
            cond, x_arg, y_arg = (list(n.args) + [None] * 3)[:3]
            vx, vy = self.value(x_arg), self.value(y_arg)
            if isinstance(vx, str) and isinstance(vy, str):
                raise Unmappable("torch.where of two activations")
            x_arg = x_arg if isinstance(vx, str) else y_arg
            other = vy if isinstance(vx, str) else vx
            if isinstance(other, Const) and other.meta.requires_grad:
                raise Unmappable("torch.where with a learned fill tensor")
            mask_arg = cond
        else:
            x_arg = n.args[0]
            mask_arg = self.arg(n, 1, "mask")
            value = self.arg(n, 2, "value")
            if isinstance(self.value(value), (str, Param)):
                raise Unmappable("masked_fill with a tensor value computed from the input or learned")
        x = self.tin(x_arg)
        mask_val = self.value(mask_arg)
        if isinstance(mask_val, str):
            return self.emit(n, "masked_fill", [x, mask_val], torch_op="where" if where else None)
        if isinstance(mask_val, Pending) and mask_val.kind == "param-view":
            mask_val = mask_val.data
        if not isinstance(mask_val, (Param, Const)):
            raise Unmappable("a mask that is not a tensor")
        attrs, claims = self._mask_attrs(mask_val)
        if isinstance(mask_val, Const):
            mask_val.consumed = True
        return self.emit(n, "masked_fill", [x], claims=claims, torch_op="where" if where else None, **attrs)

    def sdpa(self, n):
        """F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa) on
        [B, H, S, D] -> scaled_dot_product_attention (core/src/ops/rules_attention.cpp says what each backend
        saves)."""
        q, k, v = (self.tin(self.arg(n, i, nm), nm) for i, nm in enumerate(("query", "key", "value")))
        shapes = [self.ps_shape(self.arg(n, i, nm)) for i, nm in enumerate(("query", "key", "value"))]
        if any(len(s) != 3 for s in shapes):
            raise Unmappable(f"scaled_dot_product_attention on per-sample shapes {shapes} (expected [H, S, D])")
        attrs = {}
        if shapes[1][0] != shapes[0][0]:
            if not self.arg(n, 7, "enable_gqa", False):
                raise Unmappable("scaled_dot_product_attention: k, v have fewer heads than q without enable_gqa")
            attrs["enable_gqa"] = True
        mask_arg = self.arg(n, 3, "attn_mask", None)
        if mask_arg is not None:
            mv = self.value(mask_arg)
            if isinstance(mv, Pending) and mv.kind == "param-view":
                mv = mv.data
            if not isinstance(mv, (Param, Const)):
                raise Unmappable("scaled_dot_product_attention with a mask computed from the input")
            attrs["mask_shape"] = list(mv.meta.shape)
        p = float(self.arg(n, 4, "dropout_p", 0.0) or 0.0)
        if p:
            attrs["dropout"] = p
        if self.arg(n, 5, "is_causal", False):
            attrs["causal"] = True
        impl = self.opts.get("attention_impl") or "auto"
        if impl == "eager":
            raise Unmappable("--attention-impl eager: F.scaled_dot_product_attention has no eager form here")
        attrs["impl"] = None if impl == "auto" else impl
        return self.emit(n, "scaled_dot_product_attention", [q, k, v], **attrs)

    def learned_mul(self, n, x_arg, p):
        """x * weight (a parameter broadcast over the per-sample shape)."""
        x = self.tin(x_arg)
        shape = list(p.shape)
        xshape = self.ps_shape(x_arg)
        while len(shape) > len(xshape) and shape[0] == 1:
            shape = shape[1:]
        if len(shape) > len(xshape) or any(a not in (1, b) for a, b in zip(shape[::-1], xshape[::-1])):
            raise Unmappable(f"mul with a learned parameter of shape {list(p.shape)}")
        if p.data_ptr() in self.owner:
            raise Unmappable("a second use of a learned scale (shared)")
        default = shape == [xshape[-1]]
        return self.emit(n, "learned_mul", [x], claims=[(p, "weight")], shape=None if default else shape)
