#!/usr/bin/env python3
"""The GPUMemNet CNN rows, rebuilt, against torch on the CPU (issue 26; docs/accuracy-gpu.md).

    python3 tools/gpumemnet_saved.py measure --cnn-py GPUMemNet/NeuroNetGen_scripts/CNN/cnn.py [--per-arch 5]
    python3 tools/gpumemnet_saved.py check BATCHFIT_CLI

The CNN rows of docs/accuracy-gpu.md come out under their A100 measurements. This separates what the rebuilt
network keeps from what the GPU adds: for a sample of clean CNN rows (the first --per-arch of every architecture,
taken evenly through the file), `measure` builds the network with GPUMemNet's own `CNN` class (its cnn.py, given
by path: a checkout of itu-rad/GPUMemNet; its torchsummary/torchinfo and tqdm imports are stubbed, they only
print) and counts what autograd saves in one training forward at batch 2 (saved_tensors_hooks, the rules of
python/batchfit/export/saved_lib.py, nn.Dropout as CUDA's native_dropout). The architecture's only random choice
(the dense transitions' pooling frequency, np.random.rand) is taken both ways and the one whose convolutions
match the rebuilt model kept. It writes tests/data/gpumemnet/saved-cpu.json.

`check` (no torch): rebuilds the same rows with tools/gpumemnet_accuracy.py and fails unless
`batchfit-cli estimate --batch 2 --json`'s `totals.saved_activation_bytes` equals torch's, byte for byte.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gpumemnet_accuracy as G  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "gpumemnet", "saved-cpu.json")
CNN_FILE = "cnn_data_step1_partial_f5a3f5d.csv"
BATCH = 2


def sample(per_arch):
    rows = [r for r in G.cnn_rows(G.read_csv(CNN_FILE), "cnn", CNN_FILE) if not r["excluded"]]
    by = {}
    for r in rows:
        by.setdefault(r["features"]["arch"], []).append(r)
    out = []
    for arch in sorted(by):
        rs = by[arch]
        out += rs[:: max(1, len(rs) // per_arch)][:per_arch]
    return out


def conv_count(layers):
    n = 0
    for layer in layers:
        n += conv_count(layer.get("layers", []))
        if isinstance(layer.get("shortcut"), list):
            n += conv_count(layer["shortcut"])
        n += layer.get("op") == "conv2d"
    return n


def load_cnn_module(path):
    for name in ("torchinfo", "torchsummary", "tqdm"):  # printing only
        stub = types.ModuleType(name)
        stub.summary = lambda *a, **k: None
        stub.tqdm = lambda it, *a, **k: it
        sys.modules.setdefault(name, stub)
    spec = importlib.util.spec_from_file_location("gpumemnet_cnn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(module, row):
    import numpy as np
    import torch.nn as nn
    m = G.CNN_NAME.fullmatch(row["filename"][:-4])
    f = row["features"]
    want = conv_count(row["model"]["layers"])
    for draw in (0.9, 0.1):  # np.random.rand() > 0.5 both ways
        saved_rand = np.random.rand
        np.random.rand = lambda *a: draw
        try:
            net = module.CNN(input_channels=f["channels"], num_classes=f["classes"], architecture=f["arch"],
                             base_num_filters=f["base"], depth=f["depth"], use_batch_norm=f["bn"],
                             use_dropout=f["dropout"], dropout_rate=float(m.group(9)), use_pooling=False,
                             activation=m.group(8), input_size=(f["size"], f["size"]))
        finally:
            np.random.rand = saved_rand
        if sum(isinstance(x, nn.Conv2d) for x in net.modules()) == want:
            return net
    raise RuntimeError(f"row {row['row']}: no draw gives the rebuilt model's {want} convolutions")


def cmd_measure(args):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import torch
    import torch.nn as nn
    from batchfit.export.dropout import replace_dropout
    from batchfit.export.saved_lib import SavedRecorder
    module = load_cnn_module(args.cnn_py)
    out = []
    for row in sample(args.per_arch):
        f = row["features"]
        torch.manual_seed(0)
        net = replace_dropout(build(module, row)).train()
        x = torch.randn(BATCH, f["channels"], f["size"], f["size"])
        y = torch.randint(0, f["classes"], (BATCH,))
        with SavedRecorder(exclude_tensors=list(net.parameters())) as rec:
            nn.CrossEntropyLoss()(net(x), y)
        out.append({"row": row["row"], "filename": row["filename"], "batch": BATCH, "saved_bytes": rec.total})
        rec.tensors.clear()
        print(f"cnn:{row['row']:<5d} {f['arch']:10s} saved {rec.total:>14,d}", flush=True)
    with open(args.out + ".tmp", "w") as fh:
        json.dump({"torch": torch.__version__, "cnn_py": "NeuroNetGen_scripts/CNN/cnn.py (" +
                   os.path.basename(args.cnn_py) + ")", "rows": out}, fh, indent=1)
        fh.write("\n")
    os.replace(args.out + ".tmp", args.out)


def cmd_check(args):
    with open(args.data) as fh:
        data = json.load(fh)
    models = {r["row"]: r for r in G.cnn_rows(G.read_csv(CNN_FILE), "cnn", CNN_FILE)}
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in data["rows"]:
            row = models[m["row"]]
            if row["filename"] != m["filename"] or row["excluded"]:
                print(f"FAIL cnn:{m['row']}: the row is not the one measured (or is excluded now)")
                failures += 1
                continue
            path = os.path.join(tmp, "m.json")
            with open(path, "w") as fh:
                json.dump(row["model"], fh)
            p = subprocess.run([args.cli, "estimate", "--model", path, "--batch", str(m["batch"]), "--json"],
                               capture_output=True, text=True)
            if p.returncode not in (0, 1):
                print(f"FAIL cnn:{m['row']}: batchfit-cli exit {p.returncode}: {p.stderr.strip()[:300]}")
                failures += 1
                continue
            est = json.loads(p.stdout)["totals"]["saved_activation_bytes"]
            ok = est == m["saved_bytes"]
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} cnn:{m['row']:<5d} {row['features']['arch']:10s} torch "
                  f"{m['saved_bytes']:>14,d}  BatchFit {est:>14,d}")
    print(f"{len(data['rows']) - failures}/{len(data['rows'])} rows: saved bytes equal torch {data['torch']}'s")
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--cnn-py", required=True, help="GPUMemNet's NeuroNetGen_scripts/CNN/cnn.py")
    m.add_argument("--per-arch", type=int, default=5)
    m.add_argument("--out", default=DATA)
    c = sub.add_parser("check")
    c.add_argument("cli")
    c.add_argument("--data", default=DATA)
    args = p.parse_args()
    if args.cmd == "measure":
        cmd_measure(args)
        return 0
    return cmd_check(args)


if __name__ == "__main__":
    sys.exit(main())
