#!/usr/bin/python3
"""What autograd saves for a mean over dims and for adaptive average pooling, under the torch this runs with.

    /usr/bin/python3 tests/torch/mean_saved.py          # torch 1.13 (Debian 12)
    python3 tests/torch/mean_saved.py                   # torch 2.6 (a Debian 13 root)

Prints one line per op: the saved tensors (shape, dtype, storage bytes) on a [2,8,16,16] fp32 input. The rule in
core/src/ops/rules_pool.cpp follows it: 1.13 keeps the input of a mean over H, W (adaptive_avg_pool2d to 1x1
calls mean), 2.x keeps nothing; other output sizes keep the input under both.
"""
import torch
import torch.nn.functional as F


def saved(fn, shape):
    x = torch.randn(*shape, requires_grad=True)
    got = []

    def pack(t):
        st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        got.append((tuple(t.shape), str(t.dtype).replace("torch.", ""), st.nbytes()))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(x)
    return got


print("torch", torch.__version__)
for name, fn in [("mean([2,3])", lambda x: x.mean([2, 3])), ("mean()", lambda x: x.mean()),
                 ("mean(-1)", lambda x: x.mean(-1)), ("adaptive_avg_pool2d(x, 1)", lambda x: F.adaptive_avg_pool2d(x, 1)),
                 ("adaptive_avg_pool2d(x, 2)", lambda x: F.adaptive_avg_pool2d(x, 2)),
                 ("sum([2,3])", lambda x: x.sum([2, 3]))]:
    print(f"{name:28s} {saved(fn, (2, 8, 16, 16))}")
