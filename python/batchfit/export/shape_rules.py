"""Shape and view ops (cat, expand, split, indexing, view/reshape) and spatial means -> BatchFit layers."""
from .tracing import Ref, TMeta
from .values import Const, Param, Pending, Tup, Unmappable


class ShapeRules:
    """Mapper's shape, view and mean rules (a part of mapping.Mapper)."""

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
        if any(i is Ellipsis for i in idx):  # x[..., :h] (rotate_half): the ellipsis covers the batch too
            e = idx.index(Ellipsis)
            fill = len(shape) + 1 - (len(idx) - 1 - sum(1 for i in idx if i is None))
            idx = idx[:e] + (slice(None),) * fill + idx[e + 1:]
        # the first index must take the whole batch
        if not idx or not (isinstance(idx[0], slice) and idx[0] == slice(None, None, None)):
            raise Unmappable(f"indexing that does not keep the batch dimension: {idx}")
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
