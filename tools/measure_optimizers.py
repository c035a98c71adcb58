#!/usr/bin/python3
"""Optimizer-state bytes of a reference model for every optimizer BatchFit knows.

    /usr/bin/python3 tools/measure_optimizers.py --model resnet50 \
        --out tests/data/reference/optimizers.json

For each optimizer: one real step (forward, loss, backward, step at batch 1,
then zero_grad(set_to_none=True)); state bytes = sum of numel*element_size of
every tensor in optimizer.state (torch 1.13: Adam/AdamW/RMSprop/Adagrad keep a
0-dim float32 ``step`` tensor per parameter tensor = 4 B each; SGD keeps none).
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_models  # noqa: E402
from measure_saved import optimizer_state_bytes, unique_bytes  # noqa: E402
from saved_lib import dump_json  # noqa: E402

DESCR = {
    "sgd": "SGD(lr=0.01)",
    "sgd-momentum": "SGD(lr=0.01, momentum=0.9)",
    "adam": "Adam(lr=1e-3)",
    "adamw": "AdamW(lr=1e-3)",
    "adamw-amsgrad": "AdamW(lr=1e-3, amsgrad=True)",
    "rmsprop": "RMSprop(lr=1e-3)",
    "rmsprop-momentum": "RMSprop(lr=1e-3, momentum=0.9)",
    "rmsprop-centered": "RMSprop(lr=1e-3, centered=True)",
    "adagrad": "Adagrad(lr=1e-2)",
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet50", choices=reference_models.MODELS)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    ref = reference_models.build(args.model)
    params = list(ref.model.parameters())
    P = unique_bytes(params)
    out = {"model": args.model, "torch_version": torch.__version__,
           "params": sum(p.numel() for p in params), "param_tensors": len(params), "param_bytes": P,
           "optimizers": {}}
    for name in DESCR:
        torch.manual_seed(0)
        total, per_kind = optimizer_state_bytes(ref, name)
        out["optimizers"][name] = {"torch": DESCR[name], "state_bytes": total,
                                   "state_over_param_bytes": round(total / P, 6), "by_kind": per_kind}
        print(f"{name:18s} {total:>14,d} B  = {total / P:.6f} x params  {per_kind}", flush=True)
    if args.out:
        dump_json(out, args.out, compact_dicts=("by_kind",))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
