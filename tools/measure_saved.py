#!/usr/bin/python3
"""Measure what autograd saves for one training step of a reference model.

    /usr/bin/python3 tools/measure_saved.py --model resnet50 --batch 1 2 4 \
        --optimizer adam [--out FILE.json] [--trace] [--records REGEX|none]

Counting rules: see tools/saved_lib.py (unique storages, parameters excluded,
buffers and the input batch included).  The loss is part of the forward.

--trace adds, at the smallest batch, a per-module-path summary (module path ->
new saved bytes, in forward order) and one record per saved tensor (grad_fn
name, slot, module path, shape, dtype, storage id, storage bytes, new?).
--records REGEX keeps only the per-tensor records whose module path matches
REGEX (``none`` drops them; the per-module summary is always complete).
"""
import argparse
import json
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_models  # noqa: E402
from saved_lib import SavedRecorder, dump_json, storage_key, tracked  # noqa: E402

OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.01),
    "sgd-momentum": lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-3),
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-3),
    "adamw-amsgrad": lambda p: torch.optim.AdamW(p, lr=1e-3, amsgrad=True),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=1e-3),
    "rmsprop-momentum": lambda p: torch.optim.RMSprop(p, lr=1e-3, momentum=0.9),
    "rmsprop-centered": lambda p: torch.optim.RMSprop(p, lr=1e-3, centered=True),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=1e-2),
}


def unique_bytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        key, nbytes = storage_key(t)
        if key not in seen:
            seen.add(key)
            total += nbytes
    return total


def measure_forward(ref, B, trace=False, device="cpu"):
    model, loss_fn = ref.model, ref.loss
    inputs, target = ref.make_batch(B)
    if device != "cpu":
        inputs = tuple(x.to(device) for x in inputs)
        target = target.to(device)
    params = list(model.parameters())
    with tracked(model, loss_fn) as tr:
        rec = SavedRecorder(params, tr.path)
        with rec:
            out = model(*inputs)
            loss = loss_fn(out, target)
    if trace:
        rec.attribute(loss)
    return rec, loss


def optimizer_state_bytes(ref, opt_name):
    model = ref.model
    opt = OPTIMIZERS[opt_name](model.parameters())
    opt.zero_grad(set_to_none=True)
    inputs, target = ref.optimizer_batch()
    loss = ref.loss(model(*inputs), target)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    total, per_kind = 0, {}
    for state in opt.state.values():
        for k, v in state.items():
            if isinstance(v, torch.Tensor):
                nb = v.numel() * v.element_size()
                total += nb
                per_kind[k] = per_kind.get(k, 0) + nb
    return total, per_kind


def print_summary(name, per_module, records, out=sys.stdout):
    print(f"\n== {name}: per-module new saved bytes (forward order) ==", file=out)
    for path, m in per_module.items():
        if m["new_bytes"] or m["saved"]:
            print(f"  {path:50s} {m['new_bytes']:>14,d} B  ({m['saved']} saved, "
                  f"{m['new_storages']} new storages)", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, choices=reference_models.MODELS)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--optimizer", default=None, choices=sorted(OPTIMIZERS),
                    help="default: the preset's optimizer (adamw for gpt2-small, else adam)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--records", default=".*",
                    help="with --trace: regex on module path of per-tensor records to keep; 'none' keeps none")
    ap.add_argument("--print-records", action="store_true", help="print every per-tensor record")
    ap.add_argument("--device", default="cpu", choices=["cpu", "meta"],
                    help="meta: run the forward on the meta device (no compute; storages identified by "
                         "StorageImpl). Same saved bytes as cpu in every case checked (see docs); the "
                         "optimizer step always runs on a real cpu copy of the model")
    ap.add_argument("--merge", action="store_true",
                    help="--out exists: keep its other batch sizes and its trace (unless --trace), update the rest")
    args = ap.parse_args(argv)

    torch.manual_seed(0)
    ref = reference_models.build(args.model)
    model = ref.model
    opt_name = args.optimizer or ref.default_optimizer
    params = list(model.parameters())
    result = {
        "model": args.model,
        "torch_version": torch.__version__,
        "params": sum(p.numel() for p in params),
        "param_tensors": len(params),
        "param_bytes": unique_bytes(params),
        "buffer_bytes": unique_bytes(list(model.buffers())),
        "optimizer": opt_name,
    }

    if args.device != "cpu":
        ref.model.to(args.device)
    batches = sorted(set(args.batch))
    saved, zero_dim = {}, {}
    for B in batches:
        trace = args.trace and B == batches[0]
        rec, loss = measure_forward(ref, B, trace, args.device)
        saved[str(B)] = rec.total
        zero_dim[str(B)] = sum(r["storage_bytes"] for r in rec.records if r["new"] and r["shape"] == [])
        print(f"{args.model} batch {B}: saved {rec.total:,d} B (of which 0-dim tensors {zero_dim[str(B)]} B)",
              flush=True)
        if trace:
            per_module = rec.per_module()
            result["trace_batch"] = B
            result["per_module"] = per_module
            if args.records != "none":
                rx = re.compile(args.records)
                keep = [r for r in rec.records if rx.fullmatch(r["module"] or "<root>")]
                for r in keep:
                    r.pop("idx")
                result["records_filter"] = args.records
                result["records"] = keep
            print_summary(args.model, per_module, rec.records)
            if args.print_records:
                for r in rec.records:
                    print(f"  {r['module']:40s} {str(r['node']):28s} {str(r['slot']):10s} "
                          f"{str(r['shape']):22s} {r['dtype']:8s} st{r['storage']:<4d} "
                          f"{r['storage_bytes']:>12,d} {'NEW' if r['new'] else ('param' if r['param'] else 'old')}")
        del rec, loss
    result["saved"] = saved
    result["saved_device"] = {str(B): args.device for B in batches}
    result["saved_0dim_bytes"] = zero_dim

    if args.device != "cpu":
        torch.manual_seed(0)
        ref = reference_models.build(args.model)  # a real (cpu) model for the optimizer step
    state, per_kind = optimizer_state_bytes(ref, opt_name)
    result["optimizer_state_bytes"] = state
    result["optimizer_state_by_kind"] = per_kind
    print(f"params {result['params']:,d} ({result['param_bytes']:,d} B), buffers {result['buffer_bytes']:,d} B, "
          f"{opt_name} state {state:,d} B {per_kind}")

    # keep per_module and records at the end of the file for readability
    for k in ("per_module", "records_filter", "records"):
        if k in result:
            result[k] = result.pop(k)
    if args.out and args.merge and os.path.exists(args.out):
        with open(args.out) as f:
            old = json.load(f)
        for k in ("saved", "saved_0dim_bytes", "saved_device"):
            merged = dict(old.get(k, {}) if k != "saved_device" else
                          old.get(k, {b: "cpu" for b in old.get("saved", {})}))
            merged.update(result[k])
            result[k] = {b: merged[b] for b in sorted(merged, key=int)}
        if "per_module" not in result:
            for k in ("trace_batch", "per_module", "records_filter", "records"):
                if k in old:
                    result[k] = old[k]
    if args.out:
        dump_json(result, args.out)
        print(f"wrote {args.out}")
    return result


if __name__ == "__main__":
    main()
