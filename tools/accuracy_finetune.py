#!/usr/bin/env python3
"""The fine-tuning accuracy table of docs/accuracy-finetune.md: frozen layers measured in torch next to BatchFit.

    python3 tools/accuracy_finetune.py measure [--out tests/data/torch/finetune-torch2.json]   # torch 2.x or 1.13
    python3 tools/accuracy_finetune.py check BATCHFIT_CLI [--write-doc]                        # any python3

measure: for every configuration, builds the model, sets requires_grad=False on the frozen modules' parameters (as a
user does: `for p in model.layer1.parameters(): p.requires_grad = False`), builds AdamW (foreach) over the parameters
that still require grad, exports the model with tools/torch_export.py's machinery (frozen layers are written
"trainable": false) and measures at the configuration's batch: trainable parameters, gradients (unique .grad
storages after backward), optimizer states (every tensor in optimizer.state) and saved bytes (unique storages
autograd saves in forward + loss, saved_tensors_hooks). It also exports the model with nothing frozen, so that check
can estimate it with the configuration's --freeze / --train-only patterns. The data file for torch 1.13 is
finetune-torch1.13.json, for 2.x finetune-torch2.json.

check: estimates each stored model file with the CLI (--optimizer adamw --impl foreach, --torch 1.13 for 1.13's
data) and fails unless trainable parameters, gradients and optimizer states are exact and saved bytes are within 1%;
the unfrozen export estimated with the patterns must give the frozen export's figures. --write-doc rewrites the
table between the markers of docs/accuracy-finetune.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "python"))
HAND = os.path.join(ROOT, "tests", "data", "torch", "hand_models.py")
DATA_DIR = os.path.join(ROOT, "tests", "data", "torch")
DOC = os.path.join(ROOT, "docs", "accuracy-finetune.md")
BEGIN, END = "<!-- BEGIN accuracy_finetune.py frozen -->", "<!-- END accuracy_finetune.py frozen -->"
LORA_BEGIN, LORA_END = "<!-- BEGIN accuracy_finetune.py lora -->", "<!-- END accuracy_finetune.py lora -->"
SAVED_BOUND = 0.01

# name, what, callable, kwargs, per-sample input, input dtype, loss, batch, frozen module prefixes (torch names),
# the CLI patterns that say the same over the exported layer names
CASES = [
    ("resnet50 frozen backbone", "torchvision resnet50, only fc trains", "torchvision.models:resnet50", {},
     [3, 224, 224], "float32", "cross-entropy", 2, {"train_only": ["fc"]}, ["--train-only", "fc"]),
    ("resnet18 first half frozen", "stem, layer1 and layer2 frozen", "torchvision.models:resnet18", {},
     [3, 224, 224], "float32", "cross-entropy", 2, {"freeze": ["conv1", "bn1", "layer1", "layer2"]},
     ["--freeze", "conv1,bn1,layer1*,layer2*"]),
    ("BERT frozen embeddings", "hand-written BERT, token, position and token-type embeddings frozen",
     HAND + ":HandBert", {"vocab": 4000, "d": 128, "seq": 128, "layers": 2, "heads": 4}, [128], "int64",
     "cross-entropy", 2, {"freeze": ["tok", "pos", "tok_type"]}, ["--freeze", "tok,pos,tok_type"]),
    ("BERT frozen encoder", "hand-written BERT, only the last block and the head train",
     HAND + ":HandBert", {"vocab": 4000, "d": 128, "seq": 128, "layers": 2, "heads": 4}, [128], "int64",
     "cross-entropy", 2, {"train_only": ["blocks.1", "head"]}, None),
    ("nanoGPT first block frozen", "nanoGPT (tied head), block 0 frozen", HAND + ":NanoGpt",
     {"vocab": 2000, "d": 128, "block": 128, "layers": 2, "heads": 4}, [128], "int64", "cross-entropy", 2,
     {"freeze": ["h.0"]}, None),
    ("Llama-style, last block trains", "hand-written Llama, only layers.1, the final norm and the head train",
     HAND + ":HandLlama", {"vocab": 2000, "d": 128, "seq": 128, "layers": 2, "heads": 4, "hidden": 344}, [128],
     "int64", "cross-entropy", 2, {"train_only": ["layers.1", "norm", "output"]}, None),
]


LLAMA = (HAND + ":HandLlama", {"vocab": 2000, "d": 128, "seq": 128, "layers": 2, "heads": 4, "hidden": 344})
GPT = (HAND + ":NanoGpt", {"vocab": 2000, "d": 128, "block": 128, "layers": 2, "heads": 4})
BERT = (HAND + ":HandBert", {"vocab": 4000, "d": 128, "seq": 128, "layers": 2, "heads": 4})
# LoRA: name, model, dtype of the base weights, targets, r, alpha, dropout, modules_to_save; batch 2, seq 128
LORA_CASES = [
    ("Llama q,v r=16", LLAMA, "fp32", ["wq", "wv"], 16, 32, 0.0, []),
    ("Llama q,v r=16 bf16", LLAMA, "bf16", ["wq", "wv"], 16, 32, 0.0, []),
    ("Llama all linears r=8, dropout 0.05", LLAMA, "fp32", ["wq", "wk", "wv", "wo", "w1", "w2", "w3"], 8, 16, 0.05,
     []),
    ("Llama all linears r=8, dropout 0.05 bf16", LLAMA, "bf16", ["wq", "wk", "wv", "wo", "w1", "w2", "w3"], 8, 16,
     0.05, []),
    ("nanoGPT c_attn r=64, dropout 0.1", GPT, "fp32", ["c_attn"], 64, 16, 0.1, []),
    ("BERT qkv r=4 + head (modules_to_save)", BERT, "fp32", ["qkv"], 4, 8, 0.0, ["head"]),
]


def measure_step(model, shape, in_dtype, loss_kind, batch):
    """Two AdamW (foreach) steps over the parameters that require grad, then what the second one had: unique
    parameters and trainable ones, gradient and optimizer-state bytes, and the bytes autograd saves."""
    import torch
    from batchfit.export.common import TrainingLoss, make_input, make_target
    from torch_measure import saved_activation_bytes, unique_storage_bytes
    loss_fn = TrainingLoss(loss_kind)
    x = make_input(model, shape, in_dtype, batch)
    with torch.no_grad():
        t = make_target(model(x), loss_kind)
    params = [p for p in model.parameters() if p.requires_grad]
    kwargs = {"foreach": True} if int(torch.__version__.split(".")[0]) >= 2 else {}
    opt = torch.optim.AdamW(params, lr=1e-4, **kwargs)
    grads = 0
    for _ in range(2):  # steady state: the states exist
        loss_fn(model(x), t).backward()
        grads = unique_storage_bytes([p.grad for p in model.parameters()])
        opt.step()
        opt.zero_grad(set_to_none=True)
    seen, total, trainable = set(), 0, 0
    for p in model.parameters():
        if p.data_ptr() not in seen:
            seen.add(p.data_ptr())
            total += p.numel()
            trainable += p.numel() if p.requires_grad else 0
    return {"parameters": total, "trainable": trainable, "gradient_bytes": grads,
            "optimizer_state_bytes": unique_storage_bytes(
                [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)]),
            "saved_bytes": saved_activation_bytes(model, loss_fn, x, t)}


def measure_lora(case):
    import torch
    from batchfit.export.common import build_model, use_native_dropout
    from batchfit.export.export import export_model
    sys.path.insert(0, os.path.dirname(HAND))
    import hand_models
    name, (spec, kw), dtype, targets, r, alpha, dropout, train_only = case
    model = build_model(spec, json.dumps(kw))
    if dtype == "bf16":
        model = model.to(torch.bfloat16)
    base, _ = export_model(model, [128], torch.int64, "cross-entropy", name=name)
    wrapped = hand_models.apply_lora(model, targets, r, alpha, dropout, train_only)
    use_native_dropout(model)
    m = measure_step(model, [128], torch.int64, "cross-entropy", 2)
    options = ["--lora-rank", str(r), "--lora-alpha", str(alpha), "--lora-dropout", str(dropout),
               "--lora-targets", ",".join(targets)] + (["--train-only", ",".join(train_only)] if train_only else []) \
        + (["--precision", "pure-bf16"] if dtype == "bf16" else [])
    return {"name": name, "what": f"{len(wrapped)} adapted linears", "batch": 2, **m, "options": options,
            "model_file": base}


def _frozen(name, rule):
    def under(prefixes):
        return any(name == p or name.startswith(p + ".") for p in prefixes)
    if "train_only" in rule:
        return not under(rule["train_only"])
    return under(rule["freeze"])


def measure_one(case):
    import torch
    from batchfit.export.common import build_model, use_native_dropout
    from batchfit.export.export import export_model
    name, what, spec, kw, shape, idt, loss_kind, batch, rule, patterns = case
    in_dtype = {"float32": torch.float32, "int64": torch.int64}[idt]
    model = build_model(spec, json.dumps(kw))
    use_native_dropout(model)
    plain, _ = export_model(model, shape, in_dtype, loss_kind, name=name)
    for pname, p in model.named_parameters():
        if _frozen(pname, rule):
            p.requires_grad_(False)
    doc, report = export_model(model, shape, in_dtype, loss_kind, name=name)
    m = measure_step(model, shape, in_dtype, loss_kind, batch)
    return {"name": name, "what": what, "batch": batch, **m,
            "frozen_layers": len(report.get("frozen_layers", [])), "patterns": patterns,
            "model_file": doc, "plain_model_file": plain if patterns else None}


def cmd_measure(args):
    import torch
    torch.set_num_threads(args.threads)
    v1 = int(torch.__version__.split(".")[0]) < 2
    out = args.out or os.path.join(DATA_DIR, "finetune-torch1.13.json" if v1 else "finetune-torch2.json")
    rows, lora = [], []
    for case in CASES:
        r = measure_one(case)
        rows.append(r)
        print(f"{r['name']:32s} trainable {r['trainable']:>11,d} of {r['parameters']:>11,d}  "
              f"saved {r['saved_bytes']:>12,d}", flush=True)
    for case in LORA_CASES:
        r = measure_lora(case)
        lora.append(r)
        print(f"{r['name']:40s} trainable {r['trainable']:>11,d} of {r['parameters']:>11,d}  "
              f"saved {r['saved_bytes']:>12,d}", flush=True)
    with open(out, "w") as f:
        json.dump({"torch": torch.__version__, "command": "python3 tools/accuracy_finetune.py measure",
                   "rows": rows, "lora": lora}, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(rows)} configurations -> {out}")
    return 0


def estimate(cli, doc, batch, torch_rules, tmp, extra=()):
    path = os.path.join(tmp, "model.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    cmd = [cli, "estimate", "--model", path, "--batch", str(batch), "--optimizer", "adamw", "--impl", "foreach",
           "--torch", torch_rules, "--json", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)["totals"]


def compare(r, t):
    """What differs between a measured row and BatchFit's totals: (problems, saved error)."""
    problems = []
    for k, e in (("trainable", t["trainable_parameter_count"]), ("parameters", t["parameter_count"]),
                 ("gradient_bytes", t["gradient_bytes"]), ("optimizer_state_bytes", t["optimizer_state_bytes"])):
        if e != r[k]:
            problems.append(f"{k}: estimated {e:,d}, measured {r[k]:,d}")
    err = (t["saved_activation_bytes"] - r["saved_bytes"]) / r["saved_bytes"]
    if abs(err) > SAVED_BOUND:
        problems.append(f"saved: estimated {t['saved_activation_bytes']:,d}, measured {r['saved_bytes']:,d} "
                        f"({100 * err:+.2f}%)")
    return problems, err


def check_file(cli, path, tmp):
    with open(path) as f:
        data = json.load(f)
    rules = "1.13" if data["torch"].startswith("1.") else "2"
    failures = 0
    out = {"rows": [], "lora": []}
    for kind in ("rows", "lora"):
        for r in data.get(kind, []):
            t = estimate(cli, r["model_file"], r["batch"], rules, tmp, r.get("options", ()))
            problems, err = compare(r, t)
            if r.get("patterns"):
                g = estimate(cli, r["plain_model_file"], r["batch"], rules, tmp, r["patterns"])
                if (g["trainable_parameter_count"], g["saved_activation_bytes"]) != \
                        (t["trainable_parameter_count"], t["saved_activation_bytes"]):
                    problems.append(f"{' '.join(r['patterns'])} on the unfrozen export: trainable "
                                    f"{g['trainable_parameter_count']:,d}, saved {g['saved_activation_bytes']:,d}")
            label = ("LoRA " if kind == "lora" else "") + r["name"]
            print(f"{'ok  ' if not problems else 'FAIL'} torch {data['torch']:14s} {label:45s} saved "
                  f"{t['saved_activation_bytes'] - r['saved_bytes']:+,d} B ({100 * err:+.3f}%)")
            for p in problems:
                print(f"     {p}")
            failures += bool(problems)
            out[kind].append((r, t, err))
    return data["torch"], (out["rows"], out["lora"]), failures


def cmd_check(args):
    files = [os.path.join(DATA_DIR, f) for f in ("finetune-torch2.json", "finetune-torch1.13.json")
             if os.path.exists(os.path.join(DATA_DIR, f))]
    if not files:
        print("no data: run `tools/accuracy_finetune.py measure` under torch first")
        return 1
    tables, failures = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            version, rows, bad = check_file(args.cli, path, tmp)
            failures += bad
            tables.append((version, rows))
    if args.write_doc:
        lines, lora_lines = [], []
        for i, (version, (rows, lora)) in enumerate(tables):
            source = f"`tests/data/torch/{os.path.basename(files[i])}`"
            if lora:
                lora_lines += [f"Measured under torch {version} ({source}):", "",
                               "| configuration | trainable / all parameters | gradients B | optimizer states B | "
                               "saved measured B | estimated B | error | BatchFit options |",
                               "|---|---:|---:|---:|---:|---:|---:|---|"]
                for r, t, err in lora:
                    lora_lines.append(
                        f"| {r['name']} ({r['what']}) | {r['trainable']:,d} / {r['parameters']:,d} | "
                        f"{r['gradient_bytes']:,d} | {r['optimizer_state_bytes']:,d} | {r['saved_bytes']:,d} | "
                        f"{t['saved_activation_bytes']:,d} | {t['saved_activation_bytes'] - r['saved_bytes']:+,d} B "
                        f"({100 * err:+.3f}%) | `{' '.join(r['options'])}` |")
                lora_lines.append("")
            lines += [f"Measured under torch {version} ({source}):",
                      "",
                      "| configuration | trainable / all parameters | gradients B | optimizer states B | "
                      "saved measured B | estimated B | error | as `--freeze`/`--train-only` |",
                      "|---|---:|---:|---:|---:|---:|---:|---|"]
            for r, t, err in rows:
                pat = f"`{' '.join(r['patterns'])}`" if r.get("patterns") else "(the file's `\"trainable\": false`)"
                lines.append(f"| {r['name']}: {r['what']} | {r['trainable']:,d} / {r['parameters']:,d} | "
                             f"{r['gradient_bytes']:,d} | {r['optimizer_state_bytes']:,d} | {r['saved_bytes']:,d} | "
                             f"{t['saved_activation_bytes']:,d} | "
                             f"{t['saved_activation_bytes'] - r['saved_bytes']:+,d} B ({100 * err:+.3f}%) | {pat} |")
            lines.append("")
        with open(args.doc, encoding="utf-8") as f:
            text = f.read()
        gen = "\n<!-- generated by `python3 tools/accuracy_finetune.py check BATCHFIT_CLI --write-doc` -->\n\n"
        for begin, end, body in ((BEGIN, END, lines), (LORA_BEGIN, LORA_END, lora_lines)):
            head, rest = text.split(begin, 1)
            _, tail = rest.split(end, 1)
            text = head + begin + gen + "\n".join(body) + end + tail
        with open(args.doc, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.doc}")
    print("all configurations exact (saved within 1%)" if not failures else f"{failures} configuration(s) off")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", default=None)
    m.add_argument("--threads", type=int, default=2)
    c = sub.add_parser("check")
    c.add_argument("cli")
    c.add_argument("--doc", default=DOC)
    c.add_argument("--write-doc", action="store_true")
    args = ap.parse_args()
    return cmd_measure(args) if args.cmd == "measure" else cmd_check(args)


if __name__ == "__main__":
    sys.exit(main())
