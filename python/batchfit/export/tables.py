"""Which torch functions, tensor methods and modules each mapping rule covers."""
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F


TORCH_MAJOR = int(torch.__version__.split(".")[0])


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
    "pow": _fn("torch.pow", "operator.pow"),
    "square": _fn("torch.square"),
    "rsqrt": _fn("torch.rsqrt"),
    "sqrt": _fn("torch.sqrt"),
    "exp": _fn("torch.exp"),
    "log": _fn("torch.log"),
    "clamp": _fn("torch.clamp", "torch.clip"),
    "clamp_min": _fn("torch.clamp_min"),
    "clamp_max": _fn("torch.clamp_max"),
    "abs": _fn("torch.abs", "operator.abs"),
    "neg": _fn("torch.neg", "torch.negative", "operator.neg"),
    "reciprocal": _fn("torch.reciprocal"),
    "sin": _fn("torch.sin"),
    "cos": _fn("torch.cos"),
    "sum": _fn("torch.sum"),
    "compare": _fn("operator.eq", "operator.ne", "operator.lt", "operator.le", "operator.gt", "operator.ge",
                   "torch.eq", "torch.ne", "torch.lt", "torch.le", "torch.gt", "torch.ge"),
    "masked_fill": _fn("torch.masked_fill"),
    "where": _fn("torch.where"),
    "tril": _fn("torch.tril", "torch.triu"),
    "sdpa": _fn("F.scaled_dot_product_attention"),
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
    "to": "to", "float": "to", "half": "to", "bfloat16": "to", "double": "to", "type_as": "to", "type": "to",
    "clone": "clone", "sigmoid_": "sigmoid",
    "__getitem__": "getitem",
    "pow": "pow", "square": "square", "rsqrt": "rsqrt", "sqrt": "sqrt", "exp": "exp", "log": "log",
    "clamp": "clamp", "clip": "clamp", "clamp_min": "clamp_min", "clamp_max": "clamp_max", "abs": "abs",
    "neg": "neg", "reciprocal": "reciprocal", "sin": "sin", "cos": "cos", "sum": "sum",
    "eq": "compare", "ne": "compare", "lt": "compare", "le": "compare", "gt": "compare", "ge": "compare",
    "masked_fill": "masked_fill", "masked_fill_": "masked_fill", "tril": "tril", "triu": "tril",
}
FN_SPLIT = _fn("torch.chunk", "torch.split")

FACTORY_METHODS = {"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"}
FACTORIES = _fn("torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like", "torch.rand_like",
                "torch.randn_like", "torch.randint_like")

# In-place activations whose autograd formula needs the original input: autograd saves a clone.
CLONING_INPLACE = {"relu6", "silu", "hardswish"}

# Modules whose calls emit nothing (the output is the input).
IDENTITY_MODULES = (nn.Identity,)
