#!/usr/bin/python3
"""What autograd saves for a Hugging Face sparse-MoE block (tests/data/torch/hand_models.py HfSparseMoe, which follows
transformers' MixtralSparseMoeBlock.forward), under the torch this runs with.

    /usr/bin/python3 tests/torch/moe_saved.py          # torch 1.13 (Debian 12)

hidden 64, 4 experts, top-2, expert inner 128, seq 32, batch 2, fp32 on CPU, routing forced to be balanced (each
expert gets 2 * 32 * 2 / 4 = 32 tokens). Counting: tools/saved_lib.py's rules (unique storages, parameters left
out, the input batch counted when saved); the loss is out.sum(), which keeps nothing. Prints the per-expert token
counts (balanced, and a worst case where experts 0 and 1 get every token), one line per saved tensor (grad_fn, slot, shape, dtype, storage bytes, new?) and the total, which
tests/core/test_moe.cpp asserts BatchFit's estimate of tests/data/models/tiny-moe.json equals.
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "data", "torch"))
from saved_lib import SavedRecorder  # noqa: E402
from hand_models import HfSparseMoe  # noqa: E402


def measure(norm_topk_prob=True, batch=2, seq=32, worst=False):
    torch.manual_seed(0)
    m = HfSparseMoe(norm_topk_prob=norm_topk_prob)
    x = HfSparseMoe.balanced_input(batch, seq, worst=worst)
    rec = SavedRecorder(list(m.parameters()))
    with rec:
        out = m(x)
        loss = out.sum()
    rec.attribute(loss)
    return m, rec


if __name__ == "__main__":
    print("torch", torch.__version__)
    for norm, worst in ((True, False), (False, False), (True, True)):
        m, rec = measure(norm, worst=worst)
        print(f"norm_topk_prob={norm} routing={'worst' if worst else 'balanced'} "
              f"tokens per expert {m.tokens_per_expert}")
        for r in rec.records:
            if not r["param"]:
                print(f"  {r['node']:24s} {r['slot']:10s} {str(r['shape']):12s} {r['dtype']:8s} "
                      f"{r['storage_bytes']:7d} {'new' if r['new'] else ''}")
        print(f"  saved bytes (unique storages, parameters excluded): {rec.total}")
