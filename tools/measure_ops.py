#!/usr/bin/python3
"""Measure what autograd saves for single ops, as a model uses them.

    /usr/bin/python3 tools/measure_ops.py [--out tests/data/reference/ops.json] [--only REGEX] [--print]

Same counting rules as measure_saved.py (tools/saved_lib.py): unique storages,
parameters excluded, buffers and the op inputs included.  Floating-point
activation inputs have requires_grad=True (they come from earlier layers);
integer inputs (indices, labels) do not.  Every case is measured at batch 1
and batch 2; each saved tensor is listed (batch 1 shape) with its storage
bytes at batch 1 and batch 2, the autograd node and slot that saved it and a
role ("input:x", "output", "intermediate", "param", "buffer", "mask",
"indices", "mean", "rstd", ...).

Cases with ``"autocast": "cpu-bf16"`` run under
``torch.autocast('cpu', dtype=torch.bfloat16)`` (torch 1.13 CPU autocast).
"""
import argparse
import math
import os
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from saved_lib import SavedRecorder, dump_json, storage_key  # noqa: E402

F32 = torch.float32
I64 = torch.int64

CASES = []


def case(name, op, attrs, inputs, fn, module=None, autocast=False, note=None, batches=(1, 2)):
    """inputs: list of (name, per_sample_shape, dtype, kind)
    kind: 'act' (float, requires_grad), 'const' (float, no grad), 'index' (int, values < attrs['num_classes'] or 'num_embeddings')."""
    CASES.append(dict(name=name, op=op, attrs=attrs, inputs=inputs, fn=fn, module=module,
                      autocast=autocast, note=note, batches=batches))


# ------------------------------------------------------------------ cases
def _mod(fn):
    return lambda m, *xs: m(*xs)


# linear
case("linear_2d_bias", "linear", {"in": 768, "out": 3072, "bias": True}, [("x", [768], F32, "act")],
     _mod(None), lambda: nn.Linear(768, 3072))
case("linear_2d_nobias", "linear", {"in": 768, "out": 3072, "bias": False}, [("x", [768], F32, "act")],
     _mod(None), lambda: nn.Linear(768, 3072, bias=False))
case("linear_3d_bias", "linear", {"in": 768, "out": 3072, "bias": True}, [("x", [128, 768], F32, "act")],
     _mod(None), lambda: nn.Linear(768, 3072))
case("linear_3d_nobias", "linear", {"in": 768, "out": 3072, "bias": False}, [("x", [128, 768], F32, "act")],
     _mod(None), lambda: nn.Linear(768, 3072, bias=False))
case("linear_3d_noncontig_input", "linear", {"in": 64, "out": 64, "bias": True,
     "input": "x.transpose(1,2) of a [B,64,32] tensor"}, [("x", [64, 32], F32, "act")],
     lambda m, x: m(x.transpose(1, 2)), lambda: nn.Linear(64, 64))
case("linear_first_token_view", "linear", {"in": 768, "out": 768, "bias": True,
     "input": "x[:, 0] (select view of [B,128,768], BERT pooler)"}, [("x", [128, 768], F32, "act")],
     lambda m, x: m(x[:, 0]), lambda: nn.Linear(768, 768))

# convolutions
case("conv1d", "conv1d", {"cin": 64, "cout": 128, "k": 3, "stride": 1, "padding": 1, "bias": True},
     [("x", [64, 100], F32, "act")], _mod(None), lambda: nn.Conv1d(64, 128, 3, padding=1))
case("conv2d_3x3", "conv2d", {"cin": 64, "cout": 64, "k": 3, "stride": 1, "padding": 1, "bias": False},
     [("x", [64, 56, 56], F32, "act")], _mod(None), lambda: nn.Conv2d(64, 64, 3, padding=1, bias=False))
case("conv2d_stem_input_nograd", "conv2d", {"cin": 3, "cout": 64, "k": 7, "stride": 2, "padding": 3, "bias": False,
     "input": "image batch, requires_grad=False"},
     [("x", [3, 224, 224], F32, "const")], _mod(None), lambda: nn.Conv2d(3, 64, 7, 2, 3, bias=False))
case("conv2d_stride2_bias", "conv2d", {"cin": 32, "cout": 64, "k": 3, "stride": 2, "padding": 1, "bias": True},
     [("x", [32, 56, 56], F32, "act")], _mod(None), lambda: nn.Conv2d(32, 64, 3, 2, 1))
case("conv2d_dilation2", "conv2d", {"cin": 32, "cout": 32, "k": 3, "stride": 1, "padding": 2, "dilation": 2,
     "bias": True}, [("x", [32, 28, 28], F32, "act")], _mod(None), lambda: nn.Conv2d(32, 32, 3, padding=2, dilation=2))
case("conv2d_depthwise", "conv2d", {"cin": 32, "cout": 32, "k": 3, "stride": 1, "padding": 1, "groups": 32,
     "bias": False}, [("x", [32, 56, 56], F32, "act")], _mod(None),
     lambda: nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False))
case("conv2d_groups4", "conv2d", {"cin": 64, "cout": 64, "k": 3, "stride": 1, "padding": 1, "groups": 4,
     "bias": True}, [("x", [64, 28, 28], F32, "act")], _mod(None), lambda: nn.Conv2d(64, 64, 3, padding=1, groups=4))
case("conv2d_1x1", "conv2d", {"cin": 256, "cout": 64, "k": 1, "stride": 1, "padding": 0, "bias": False},
     [("x", [256, 56, 56], F32, "act")], _mod(None), lambda: nn.Conv2d(256, 64, 1, bias=False))
case("conv2d_patchify_vit", "conv2d", {"cin": 3, "cout": 768, "k": 16, "stride": 16, "bias": True,
     "input": "image batch, requires_grad=False"},
     [("x", [3, 224, 224], F32, "const")], _mod(None), lambda: nn.Conv2d(3, 768, 16, 16))
case("conv3d", "conv3d", {"cin": 8, "cout": 16, "k": 3, "stride": 1, "padding": 1, "bias": True},
     [("x", [8, 8, 16, 16], F32, "act")], _mod(None), lambda: nn.Conv3d(8, 16, 3, padding=1))
case("conv_transpose2d", "conv_transpose2d", {"cin": 64, "cout": 32, "k": 4, "stride": 2, "padding": 1,
     "bias": True}, [("x", [64, 28, 28], F32, "act")], _mod(None), lambda: nn.ConvTranspose2d(64, 32, 4, 2, 1))
# ShuffleNetV2's branch: ConvolutionBackward0 saves the strided channel slice as is (the whole [B,64,...] storage
# stays alive); the contiguous copy the kernel makes is a temporary of the forward (and of the backward).
case("conv2d_channel_slice_input", "conv2d", {"cin": 32, "cout": 32, "k": 1, "stride": 1, "padding": 0,
     "bias": False, "input": "x.chunk(2, dim=1)[1] of a [B,64,28,28] tensor (ShuffleNetV2 branch2)"},
     [("x", [64, 28, 28], F32, "act")], lambda m, x: m(x.chunk(2, dim=1)[1]),
     lambda: nn.Conv2d(32, 32, 1, bias=False))

# normalisation
case("batchnorm1d", "batchnorm1d", {"C": 256, "train": True,
     "note": "2-D input [N,C] needs N>1 in training: measured at batch 2 and 4"}, [("x", [256], F32, "act")],
     _mod(None), lambda: nn.BatchNorm1d(256), batches=(2, 4))
case("batchnorm1d_3d", "batchnorm1d", {"C": 64, "train": True}, [("x", [64, 100], F32, "act")],
     _mod(None), lambda: nn.BatchNorm1d(64))
case("batchnorm2d", "batchnorm2d", {"C": 64, "train": True}, [("x", [64, 56, 56], F32, "act")],
     _mod(None), lambda: nn.BatchNorm2d(64))
case("layernorm", "layernorm", {"normalized_shape": [768], "eps": 1e-5}, [("x", [128, 768], F32, "act")],
     _mod(None), lambda: nn.LayerNorm(768))
case("groupnorm", "groupnorm", {"groups": 32, "C": 256}, [("x", [256, 28, 28], F32, "act")],
     _mod(None), lambda: nn.GroupNorm(32, 256))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):  # as Llama writes it (fp32)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


case("rmsnorm_llama", "rmsnorm", {"d": 768, "eps": 1e-6,
     "formula": "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight"},
     [("x", [128, 768], F32, "act")], _mod(None), lambda: RMSNorm(768))

# embedding
case("embedding", "embedding", {"num_embeddings": 30522, "dim": 768}, [("ids", [128], I64, "index")],
     _mod(None), lambda: nn.Embedding(30522, 768))

# activations (input is an activation requiring grad)
case("relu", "relu", {}, [("x", [3072], F32, "act")], lambda m, x: F.relu(x))
case("linear_relu_inplace", "linear+relu_", {"in": 768, "out": 3072, "bias": True, "inplace": True},
     [("x", [768], F32, "act")], lambda m, x: F.relu(m(x), inplace=True), lambda: nn.Linear(768, 3072))
case("linear_relu", "linear+relu", {"in": 768, "out": 3072, "bias": True, "inplace": False},
     [("x", [768], F32, "act")], lambda m, x: F.relu(m(x)), lambda: nn.Linear(768, 3072))
case("relu6", "relu6", {}, [("x", [3072], F32, "act")], lambda m, x: F.relu6(x))
case("leaky_relu", "leaky_relu", {"negative_slope": 0.01}, [("x", [3072], F32, "act")], lambda m, x: F.leaky_relu(x))
case("gelu", "gelu", {"approximate": "none"}, [("x", [3072], F32, "act")], lambda m, x: F.gelu(x))
case("gelu_tanh", "gelu", {"approximate": "tanh"}, [("x", [3072], F32, "act")],
     lambda m, x: F.gelu(x, approximate="tanh"))
case("silu", "silu", {}, [("x", [3072], F32, "act")], lambda m, x: F.silu(x))
case("sigmoid", "sigmoid", {}, [("x", [3072], F32, "act")], lambda m, x: torch.sigmoid(x))
case("tanh", "tanh", {}, [("x", [3072], F32, "act")], lambda m, x: torch.tanh(x))
case("hardswish", "hardswish", {}, [("x", [3072], F32, "act")], lambda m, x: F.hardswish(x))
case("softmax", "softmax", {"dim": -1}, [("x", [12, 128, 128], F32, "act")], lambda m, x: F.softmax(x, dim=-1))
case("native_dropout", "native_dropout", {"p": 0.1}, [("x", [128, 768], F32, "act")],
     lambda m, x: torch.native_dropout(x, 0.1, True)[0])
case("dropout_cpu_F_dropout", "dropout", {"p": 0.1, "note": "CPU F.dropout path (NOT what CUDA does)"},
     [("x", [128, 768], F32, "act")], lambda m, x: F.dropout(x, 0.1, True))

# pooling / shape
case("maxpool2d", "maxpool2d", {"k": 3, "stride": 2, "padding": 1}, [("x", [64, 112, 112], F32, "act")],
     _mod(None), lambda: nn.MaxPool2d(3, 2, 1))
case("avgpool2d", "avgpool2d", {"k": 2, "stride": 2}, [("x", [64, 56, 56], F32, "act")],
     _mod(None), lambda: nn.AvgPool2d(2, 2))
case("adaptive_avgpool2d_1", "adaptive_avgpool2d", {"output": [1, 1]}, [("x", [2048, 7, 7], F32, "act")],
     _mod(None), lambda: nn.AdaptiveAvgPool2d(1))
case("adaptive_avgpool2d_7", "adaptive_avgpool2d", {"output": [7, 7]}, [("x", [512, 14, 14], F32, "act")],
     _mod(None), lambda: nn.AdaptiveAvgPool2d(7))
case("flatten", "flatten", {"start_dim": 1}, [("x", [512, 7, 7], F32, "act")], lambda m, x: torch.flatten(x, 1))
case("flatten_linear", "flatten+linear", {"start_dim": 1, "in": 2048, "out": 1000},
     [("x", [2048, 1, 1], F32, "act")], lambda m, x: m(torch.flatten(x, 1)), lambda: nn.Linear(2048, 1000))

# binary
case("add", "add", {}, [("a", [128, 768], F32, "act"), ("b", [128, 768], F32, "act")], lambda m, a, b: a + b)
case("mul", "mul", {}, [("a", [128, 768], F32, "act"), ("b", [128, 768], F32, "act")], lambda m, a, b: a * b)
case("mul_one_requires_grad", "mul", {"note": "b does not require grad"},
     [("a", [128, 768], F32, "act"), ("b", [128, 768], F32, "const")], lambda m, a, b: a * b)
case("mul_scalar", "mul", {"other": "python float 0.125"}, [("a", [128, 768], F32, "act")],
     lambda m, a: a * 0.125)
case("div_scalar", "div", {"other": "python float 8.0 (BERT attention scale)"}, [("a", [12, 128, 128], F32, "act")],
     lambda m, a: a / 8.0)
case("concat", "cat", {"dim": 1}, [("a", [64, 28, 28], F32, "act"), ("b", [32, 28, 28], F32, "act")],
     lambda m, a, b: torch.cat([a, b], dim=1))

# matmul / attention
case("matmul_3d", "matmul", {}, [("a", [128, 64], F32, "act"), ("b", [64, 128], F32, "act")],
     lambda m, a, b: torch.matmul(a, b))
case("matmul_4d", "matmul", {}, [("a", [12, 128, 64], F32, "act"), ("b", [12, 64, 128], F32, "act")],
     lambda m, a, b: torch.matmul(a, b))
case("matmul_4d_permuted_views", "matmul", {"note": "q,k are permute views of [B,S,H,D] (HF transpose_for_scores)"},
     [("q", [128, 12, 64], F32, "act"), ("k", [128, 12, 64], F32, "act")],
     lambda m, q, k: torch.matmul(q.permute(0, 2, 1, 3), k.permute(0, 2, 3, 1)))


def _sdpa(m, q, k, v):
    s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
    p = F.softmax(s, dim=-1)
    p = torch.native_dropout(p, 0.1, True)[0]
    return torch.matmul(p, v)


case("sdpa_eager", "attention", {"heads": 12, "seq": 128, "head_dim": 64, "dropout": 0.1,
     "formula": "native_dropout(softmax(q@k^T/sqrt(d)))@v; q,k,v contiguous [B,h,S,d]"},
     [("q", [12, 128, 64], F32, "act"), ("k", [12, 128, 64], F32, "act"), ("v", [12, 128, 64], F32, "act")], _sdpa)

# losses
case("cross_entropy_2d", "cross_entropy", {"classes": 1000},
     [("logits", [1000], F32, "act"), ("target", [], I64, "index")], lambda m, x, t: F.cross_entropy(x, t))
case("cross_entropy_3d_positions", "cross_entropy",
     {"classes": 1000, "formula": "F.cross_entropy(logits.view(-1, V), labels.view(-1))"},
     [("logits", [64, 1000], F32, "act"), ("target", [64], I64, "index")],
     lambda m, x, t: F.cross_entropy(x.view(-1, x.size(-1)), t.view(-1)))
case("mse_loss", "mse_loss", {}, [("x", [1000], F32, "act"), ("y", [1000], F32, "const")],
     lambda m, x, y: F.mse_loss(x, y))

# autocast (CPU bf16)
AC = {"autocast": "cpu-bf16"}
case("ac_linear_3d_bias", "linear", {"in": 768, "out": 3072, "bias": True, **AC}, [("x", [128, 768], F32, "act")],
     _mod(None), lambda: nn.Linear(768, 3072), autocast=True)
case("ac_linear_2d_bias", "linear", {"in": 768, "out": 3072, "bias": True, **AC}, [("x", [768], F32, "act")],
     _mod(None), lambda: nn.Linear(768, 3072), autocast=True)
case("ac_linear_twice_same_weight", "linear", {"in": 768, "out": 768, "bias": True, **AC,
     "note": "same layer applied twice: is the bf16 weight cast cached (one storage) or recast?"},
     [("x", [128, 768], F32, "act")], lambda m, x: m(m(x)), lambda: nn.Linear(768, 768), autocast=True)
case("ac_conv2d", "conv2d", {"cin": 64, "cout": 64, "k": 3, "padding": 1, "bias": False, **AC},
     [("x", [64, 56, 56], F32, "act")], _mod(None), lambda: nn.Conv2d(64, 64, 3, padding=1, bias=False), autocast=True)
case("ac_matmul_4d", "matmul", {**AC}, [("a", [12, 128, 64], F32, "act"), ("b", [12, 64, 128], F32, "act")],
     lambda m, a, b: torch.matmul(a, b), autocast=True)
case("ac_layernorm", "layernorm", {"normalized_shape": [768], **AC}, [("x", [128, 768], F32, "act")],
     _mod(None), lambda: nn.LayerNorm(768), autocast=True)
case("ac_layernorm_bf16_input", "layernorm", {"normalized_shape": [768], **AC,
     "input": "bf16 activation (output of an autocast linear)"}, [("x", [128, 768], F32, "act")],
     lambda m, x: m[1](m[0](x)), lambda: nn.Sequential(nn.Linear(768, 768), nn.LayerNorm(768)), autocast=True)
case("ac_softmax", "softmax", {"dim": -1, **AC}, [("x", [12, 128, 128], F32, "act")],
     lambda m, x: F.softmax(x, dim=-1), autocast=True)
case("ac_softmax_bf16_input", "softmax", {"dim": -1, **AC, "input": "bf16 scores from an autocast matmul"},
     [("a", [12, 128, 64], F32, "act"), ("b", [12, 64, 128], F32, "act")],
     lambda m, a, b: F.softmax(torch.matmul(a, b), dim=-1), autocast=True)
case("ac_gelu", "gelu", {**AC}, [("x", [3072], F32, "act")], lambda m, x: F.gelu(x), autocast=True)
case("ac_gelu_bf16_input", "gelu", {**AC, "input": "bf16 output of an autocast linear"},
     [("x", [768], F32, "act")], lambda m, x: F.gelu(m(x)), lambda: nn.Linear(768, 3072), autocast=True)
case("ac_cross_entropy", "cross_entropy", {"classes": 1000, **AC},
     [("logits", [1000], F32, "act"), ("target", [], I64, "index")], lambda m, x, t: F.cross_entropy(x, t),
     autocast=True)
case("ac_cross_entropy_bf16_logits", "cross_entropy", {"classes": 1000, **AC,
     "input": "bf16 logits from an autocast linear 768->1000"},
     [("x", [768], F32, "act"), ("target", [], I64, "index")], lambda m, x, t: F.cross_entropy(m(x), t),
     lambda: nn.Linear(768, 1000), autocast=True)


# the elementwise and masking vocabulary of hand-written models (core/src/ops/rules_pointwise.cpp)
X = [("x", [128, 64], F32, "act")]
for _n, _f in [("pow2", lambda m, x: x.pow(2)), ("rsqrt", lambda m, x: torch.rsqrt(x)),
               ("sqrt", lambda m, x: torch.sqrt(x)), ("exp", lambda m, x: torch.exp(x)),
               ("log", lambda m, x: torch.log(x)), ("clamp", lambda m, x: x.clamp(-1.0, 1.0)),
               ("clamp_min", lambda m, x: x.clamp(min=1e-6)), ("abs", lambda m, x: x.abs()),
               ("neg", lambda m, x: -x), ("reciprocal", lambda m, x: torch.reciprocal(x)),
               ("sin", lambda m, x: torch.sin(x)), ("cos", lambda m, x: torch.cos(x)),
               ("mean_last_keepdim", lambda m, x: x.mean(-1, keepdim=True)),
               ("sum_last", lambda m, x: x.sum(-1)),
               ("tril", lambda m, x: torch.tril(x)),
               ("compare_masked_fill", lambda m, x: x.masked_fill(x.detach() > 0, 0.0))]:
    case("pw_" + _n, _n.split("_")[0], {}, X, _f)


class _CausalMask(nn.Module):
    """nanoGPT's mask: a float tril buffer, compared with 0 in forward (a new bool [1,1,T,T] tensor)."""

    def __init__(self, t, bool_buffer=False):
        super().__init__()
        m = torch.tril(torch.ones(t, t)).view(1, 1, t, t)
        self.register_buffer("bias", m.bool() if bool_buffer else m)
        self.bool_buffer = bool_buffer

    def forward(self, x):
        t = x.size(-1)
        mask = self.bias[:, :, :t, :t]
        if self.bool_buffer:  # HF GPT-2 style: torch.where(mask, x, min)
            return torch.where(mask, x, torch.tensor(torch.finfo(x.dtype).min))
        return x.masked_fill(mask == 0, float("-inf"))


case("pw_masked_fill_buffer_eq0", "masked_fill", {"buffer": [1, 1, 256, 256], "mask": "bias[:,:,:T,:T] == 0"},
     [("x", [4, 128, 128], F32, "act")], _mod(None), lambda: _CausalMask(256))
case("pw_where_bool_buffer", "masked_fill", {"buffer": [1, 1, 256, 256], "mask": "bool buffer view"},
     [("x", [4, 128, 128], F32, "act")], _mod(None), lambda: _CausalMask(256, True))


class _Scale(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(shape))

    def forward(self, x):
        return self.weight * x


case("pw_learned_mul", "learned_mul", {"shape": [64]}, X, _mod(None), lambda: _Scale(64))
case("pw_learned_mul_channels", "learned_mul", {"shape": [32, 1, 1]}, [("x", [32, 8, 8], F32, "act")], _mod(None),
     lambda: _Scale((32, 1, 1)))
if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0; on CPU the flash kernel for CPU
    QKV = [(n, [4, 40, 16], F32, "act") for n in ("q", "k", "v")]
    case("sdpa_cpu_flash", "scaled_dot_product_attention", {"backend": "cpu flash"}, QKV,
         lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v))
    case("sdpa_cpu_flash_causal", "scaled_dot_product_attention", {"is_causal": True}, QKV,
         lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    case("sdpa_cpu_flash_bool_mask", "scaled_dot_product_attention", {"attn_mask": "bool [40,40]"}, QKV,
         lambda m, q, k, v: F.scaled_dot_product_attention(
             q, k, v, attn_mask=torch.ones(40, 40, dtype=torch.bool).tril()))
    if tuple(int(x) for x in torch.__version__.split(".")[:2]) >= (2, 5):  # enable_gqa: torch >= 2.5
        # grouped-query attention: 4 query heads, 2 key/value heads; the CPU runs the math fallback
        GQA = [("q", [4, 40, 16], F32, "act"), ("k", [2, 40, 16], F32, "act"), ("v", [2, 40, 16], F32, "act")]
        case("sdpa_gqa_math", "scaled_dot_product_attention", {"enable_gqa": True, "is_causal": True}, GQA,
             lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
        case("sdpa_gqa_math_bf16", "scaled_dot_product_attention", {"enable_gqa": True, "dtype": "bfloat16"},
             [(n, s, torch.bfloat16, kd) for n, s, _, kd in GQA],
             lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
if hasattr(nn, "RMSNorm"):  # torch >= 2.4: F.rms_norm, a composite of the same ops
    case("rmsnorm_nn", "rmsnorm", {"d": 768, "eps": 1e-6}, [("x", [128, 768], F32, "act")], _mod(None),
         lambda: nn.RMSNorm(768, eps=1e-6))
    case("rmsnorm_nn_noaffine", "rmsnorm", {"d": 768, "elementwise_affine": False}, [("x", [128, 768], F32, "act")],
         _mod(None), lambda: nn.RMSNorm(768, elementwise_affine=False))


# ------------------------------------------------------------------ runner
def make_inputs(c, B):
    xs = []
    for name, shape, dtype, kind in c["inputs"]:
        full = [B] + list(shape)
        if kind == "index":
            hi = c["attrs"].get("num_embeddings") or c["attrs"].get("classes") or 2
            xs.append(torch.randint(0, hi, full, dtype=dtype))
        else:
            xs.append(torch.randn(full, dtype=dtype, requires_grad=(kind == "act")))
    return xs


SLOT_ROLE = {"indices": "indices", "mean": "mean", "rstd": "rstd", "save_mean": "mean",
             "save_invstd": "invstd", "running_mean": "running_mean", "running_var": "running_var",
             "total_weight": "total_weight", "target": "target", "condition": "mask"}


def run_case(c, B):
    torch.manual_seed(0)
    mod = c["module"]() if c["module"] else None
    if mod is not None:
        mod.train()
    xs = make_inputs(c, B)
    params = list(mod.parameters()) if mod is not None else []
    buffers = list(mod.buffers()) if mod is not None else []
    rec = SavedRecorder(params)
    with rec:
        if c["autocast"]:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = c["fn"](mod, *xs)
        else:
            out = c["fn"](mod, *xs)
    rec.attribute(out)
    in_st = {storage_key(x)[0]: n for (n, *_), x in zip(c["inputs"], xs)}
    buf_st = {storage_key(b)[0] for b in buffers}
    out_st = storage_key(out)[0]
    saved = []
    for r, t in zip(rec.records, rec.tensors):
        ptr = storage_key(t)[0]
        if r["param"]:
            role = "param"
        elif ptr in in_st:
            role = "input:" + in_st[ptr]
        elif ptr in buf_st:
            role = "buffer"
        elif ptr == out_st:
            role = "output"
        elif c["autocast"] and t.dtype == torch.bfloat16 and any(
                list(t.shape) in (list(p.shape), list(p.shape)[::-1]) for p in params if p.dim() >= 2):
            role = "param_cast_bf16"
        elif c["autocast"] and t.dtype == torch.bfloat16 and any(
                t.numel() == x.numel() for x in xs if x.is_floating_point()) and r["node"] in (
                "AddmmBackward0", "MmBackward0", "BmmBackward0", "ConvolutionBackward0") and (
                len([x for x in xs if x.is_floating_point()]) > 1 or
                not any(sv["role"] == "input_cast_bf16" for sv in saved)):
            role = "input_cast_bf16"
        elif r["slot"] in SLOT_ROLE:
            role = SLOT_ROLE[r["slot"]]
        elif r["node"] == "NativeDropoutBackward0" or (r["dtype"] == "bool"):
            role = "mask"
        elif c["op"] == "dropout" and r["node"] == "MulBackward0":
            role = "mask(float)"
        elif r["node"] == "NativeBatchNormBackward0" and r["slot"] in ("result1", "result2"):
            role = {"result1": "save_mean", "result2": "save_invstd"}[r["slot"]]
        elif r["node"] == "NativeLayerNormBackward0" and r["slot"] in ("result1", "result2"):
            role = {"result1": "mean", "result2": "rstd"}[r["slot"]]
        elif r["node"] == "NativeGroupNormBackward0" and r["slot"] in ("result1", "result2"):
            role = {"result1": "mean", "result2": "rstd"}[r["slot"]]
        elif r["node"] == "MaxPool2DWithIndicesBackward0" and r["slot"] == "result1":
            role = "indices"
        elif r["slot"] in ("result", "result0"):
            role = "intermediate_output"
        elif t.dim() == 0:
            role = "scalar"
        else:
            role = "intermediate"
        saved.append({"node": r["node"], "slot": r["slot"], "shape": r["shape"], "dtype": r["dtype"],
                      "contiguous": t.is_contiguous(), "storage": r["storage"],
                      "storage_bytes": r["storage_bytes"], "counted": r["new"], "role": role})
    return rec.total, saved, str(out.dtype).replace("torch.", "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help="regex on case name")
    ap.add_argument("--print", action="store_true", help="print every saved tensor")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    results = []
    for c in CASES:
        if args.only and not re.search(args.only, c["name"]):
            continue
        bs = list(c["batches"])
        try:
            b1, s1, odt = run_case(c, bs[0])
            b2, s2, _ = run_case(c, bs[1])
        except RuntimeError as e:  # e.g. CPU autocast does not cast layer_norm inputs
            msg = str(e).splitlines()[0]
            print(f"{c['name']:32s} ERROR {msg}")
            results.append({"name": c["name"], "op": c["op"], "attrs": c["attrs"],
                            "autocast": "cpu-bf16" if c["autocast"] else None, "error": msg})
            continue
        assert len(s1) == len(s2), c["name"]
        for a, b in zip(s1, s2):
            a["storage_bytes"] = {str(bs[0]): a["storage_bytes"], str(bs[1]): b["storage_bytes"]}
            if a["role"] != b["role"] or a["counted"] != b["counted"]:
                # e.g. a permuted view reshapes without copy at batch 1 but is copied at batch 2
                a["at_batch_" + str(bs[1])] = {"role": b["role"], "counted": b["counted"]}
        entry = {
            "name": c["name"], "op": c["op"], "attrs": c["attrs"],
            "inputs": [{"name": n, "per_sample_shape": s, "dtype": str(d).replace("torch.", ""),
                        "requires_grad": k == "act"} for n, s, d, k in c["inputs"]],
            "autocast": "cpu-bf16" if c["autocast"] else None,
            "output_dtype": odt,
            "saved": {str(bs[0]): b1, str(bs[1]): b2},
            "saved_tensors_shape_batch": bs[0],
            "saved_tensors": s1,
        }
        results.append(entry)
        print(f"{c['name']:32s} b{bs[0]} {b1:>12,d}  b{bs[1]} {b2:>12,d}")
        if args.print:
            for s in s1:
                print(f"    {s['node']:32s} {s['slot']:14s} {str(s['shape']):20s} {s['dtype']:9s} "
                      f"st{s['storage']} {s['storage_bytes'][str(bs[0])]:>10,d} {'counted' if s['counted'] else '-':8s}"
                      f" {s['role']}")
    doc = {"torch_version": torch.__version__,
           "rules": "unique storages (storage data_ptr, storage nbytes); parameters excluded; buffers and inputs "
                    "included; float activation inputs require grad; storage_bytes per saved tensor per batch (shape at the first batch); "
                    "counted=false when the storage was already counted or is a parameter",
           "cases": results}
    if args.out:
        dump_json(doc, args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
