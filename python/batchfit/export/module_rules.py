"""nn.Module calls -> BatchFit layers, and the layer builders the function rules share."""
import torch
import torch.nn as nn

from .tables import CLONING_INPLACE, IDENTITY_MODULES, TORCH_MAJOR
from .tracing import Ref, is_hf_conv1d
from .values import Const, Param, Tup, Unmappable, _compact, _is_default


class ModuleRules:
    """Mapper's module rules and layer builders (a part of mapping.Mapper)."""

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
        if is_hf_conv1d(m):  # addmm(bias, x.view(-1, nx), weight): what a linear saves
            return self.linear(n, self.tin(n.args[0]), m.weight, m.bias, out_features=int(m.weight.shape[1]))
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)) or name == "SyncBatchNorm":
            return self.batchnorm(n, m)
        if isinstance(m, nn.LayerNorm):
            return self.layernorm(n, self.tin(n.args[0]), len(m.normalized_shape), m.weight,
                                  getattr(m, "bias", None), m.eps)
        if getattr(nn, "RMSNorm", None) is not None and isinstance(m, nn.RMSNorm):  # torch >= 2.4
            return self.rmsnorm(n, m)
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

    def linear(self, n, x, weight, bias, out_features=None):
        if weight is None:
            raise Unmappable("linear without a weight")
        attrs = {"out_features": int(weight.shape[0]) if out_features is None else out_features}
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

    def rmsnorm(self, n, m):
        """nn.RMSNorm: F.rms_norm, the composite the eager rmsnorm rule follows (torch_op says which)."""
        x = self.tin(n.args[0])
        if len(m.normalized_shape) != 1:
            raise Unmappable("RMSNorm over more than the last dim")
        if m.weight is not None and m.weight.data_ptr() in self.owner:
            return self.opaque_layer(n, "a second use of RMSNorm parameters (shared)")
        attrs = {"eps": None if m.eps is None else float(m.eps), "torch_op": "nn.RMSNorm"}
        if m.weight is None:
            attrs["elementwise_affine"] = False
        return self.emit(n, "rmsnorm", [x], claims=[(m.weight, "weight")] if m.weight is not None else (), **attrs)

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
        if isinstance(v, (Const, Param)):
            # An index tensor the model builds itself (torch.arange, zeros_like(ids), a buffer of ids or a
            # slice of one): an ordinary lookup whose output has the shape of its index. Which kind decides the
            # memory: one per sample ("zeros": the output is batched) or one for the batch ("positions" when the
            # ids are 0..S-1, else "constant").
            shape = [d for d in v.meta.shape]
            while len(shape) > 1 and shape[0] == 1:
                shape = shape[1:]
            if len(shape) != 1 or v.meta.dtype not in (torch.int64, torch.int32):
                raise Unmappable(f"embedding of a constant index tensor {list(v.meta.shape)}")
            src = self._sequence_source(shape[0])
            out1, out2 = n.vals[0], n.vals[1]
            batched = hasattr(out1, "shape") and hasattr(out2, "shape") and len(out1.shape) == len(out2.shape) \
                and out1.shape[0] != out2.shape[0]
            if batched:
                attrs["indices"] = "zeros"
            else:
                attrs["indices"] = "positions" if self._is_arange(v, shape[0]) else "constant"
            return self.emit(n, "embedding", [src], claims=params, **attrs)
        raise Unmappable("embedding indices are not the model input, nor a tensor the model builds")

    def _is_arange(self, v, seq):
        """True when the index values are 0..seq-1 (torch.arange, or a view of a buffer holding it)."""
        node = getattr(v, "node", None)
        if node is not None and node.kind == "function" and node.target_name() == "torch.arange":
            return True
        if isinstance(v, Param):
            buf = self.buffers.get(v.key, (None, None))[1]
            m = v.meta
            if buf is None or getattr(m, "stride", None) is None:
                return False
            try:
                flat = buf.reshape(-1) if buf.is_contiguous() else buf.contiguous().reshape(-1)
                view = torch.as_strided(flat, m.shape, m.stride, m.offset or 0)
                return bool(torch.equal(view.reshape(-1)[-seq:].cpu(), torch.arange(seq, dtype=view.dtype)))
            except (RuntimeError, TypeError):
                return False
        return False

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
        # a view of a transposed tensor that torch saw as contiguous (e.g. an SDPA output transposed back):
        # BatchFit's layout flag would make it a copy, so say it is a view
        src = next((l for l in reversed(self.layers) if l["name"] == x), None)
        view = src is not None and src["op"] in ("transpose", "permute") and self.meta_of(x_arg).contiguous \
            and n.vals[0].storage == self.meta_of(x_arg).storage
        return self.emit(n, "reshape", [x], shape=out, view=True if view else None)

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
        elif impl == "cpu_flash" and (self.arg(n, 4, "need_weights", True) or TORCH_MAJOR < 2):
            impl = "eager"  # the scores are materialised on a CPU too
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
