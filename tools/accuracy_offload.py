#!/usr/bin/env python3
"""Activation offload against real PyTorch and transformers (issue 29, section 3): docs/accuracy-llm.md.

    python3 tools/accuracy_offload.py measure [--out tests/data/real/accuracy-offload.json]
    python3 tools/accuracy_offload.py check BATCHFIT_CLI [--data ...] [--doc docs/accuracy-llm.md] [--write-doc]

measure (the measurement virtual environment, scripts/measure-venv.sh) builds real transformers models from the
fixture configs of tests/data/hf, cut to four layers with an 8,192-token vocabulary (so that the layers, not
the logits, make the peak), and runs a Trainer-like step
(forward with labels, backward, AdamW foreach, zero_grad) on the CPU with the saved tensors offloaded the two
ways users do it:

* `all`: the forward and loss under `torch.autograd.graph.save_on_cpu()` (torch's documented use; FSDP's
  offload_wrapper around a whole model): every tensor autograd saves, the weights included; `all-pinned`: the
  same with pin_memory=True (the same copies; only the host allocator's rounding differs);
* `checkpoints`: transformers 5's own `activation_checkpointing_enable(offload=True)` (TrainingArguments'
  activation_checkpointing_kwargs={"offload": True}): each checkpointed layer's call runs under
  `save_on_cpu(pin_memory=True)`, so what goes to the host is what the checkpoint keeps, its inputs.

On the CPU, save_on_cpu copies nothing (the tensors are on the CPU already), so the measurement runs torch's
save_on_cpu with the host side moved out of torch's allocator: pack copies the tensor into a NumPy buffer (host
memory, which torch's profiler does not see), unpack copies it back into a new torch tensor (the GPU copy
`tensor.to(device)` makes). Torch's CPU heap then allocates and frees what the GPU would, and the NumPy buffers are
the host memory. transformers' offload path is patched only there: `transformers.modeling_utils.save_on_cpu` is
this class, so its checkpoint function and its arguments are transformers' own.

It records per row: the step's heap peak over what lives across steps (accuracy_torch2.heap_peak, the third step),
the host bytes alive at most (before the pinned allocator's power-of-two rounding, which BatchFit applies from
CachingHostAllocator.h) and the number of tensors packed.

check (any python3, no torch): estimates each row with `batchfit-cli estimate --hf-config ... --activation-offload`
and fails when the host bytes differ by more than 1% or the step peak by more than accuracy_real's bound.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_check  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "real", "accuracy-offload.json")
DOC = os.path.join(ROOT, "docs", "accuracy-llm.md")
BEGIN, END = "<!-- BEGIN accuracy_offload.py -->", "<!-- END accuracy_offload.py -->"
HOST_BOUND = 0.01
HEAP_BOUND = 0.10
BATCH, SEQ = 2, 512

LORA = {"r": 16, "target_modules": ["q_proj", "v_proj"]}
# Four layers and an 8,192-token vocabulary, so that the layers' saved tensors, not the logits, make the peak.
SMALL = {"num_hidden_layers": 4, "vocab_size": 8192}
# name, fixture, overrides, dtype, checkpointing, offload, LoRA
ROWS = [
    ("qwen3", "qwen3-0.6b.json", SMALL, dtype, ckpt, offload, lora)
    for dtype in ("fp32", "bf16")
    for ckpt, offload, lora in (
        (False, "off", None), (False, "all", None), (False, "all", LORA),
        (True, "off", None), (True, "checkpoints", None), (True, "all", None),
        (True, "off", LORA), (True, "checkpoints", LORA))
] + [
    ("qwen3", "qwen3-0.6b.json", SMALL, "bf16", False, "all-pinned", LORA),
] + [
    ("gpt2", "gpt2.json", {"n_layer": 4, "vocab_size": 8192}, "fp32", ckpt, offload, None)
    for ckpt, offload in ((False, "off"), (False, "all"), (True, "checkpoints"))
] + [
    ("llama-3.2", "llama-3.2-3b.json", SMALL, "bf16", True, offload, LORA) for offload in ("off", "checkpoints")
]


class HostOffload:
    """torch.autograd.graph.save_on_cpu with the host copies in NumPy buffers (see the module's text)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        import numpy as np
        import torch
        self.live = self.peak = self.packed = self.packed_bytes = 0
        self.sizes = []
        stats = self

        class Packed:
            def __init__(self, t):
                self.shape, self.dtype, self.nbytes = t.shape, t.dtype, t.numel() * t.element_size()
                self.buf = np.empty(self.nbytes, dtype=np.uint8)
                if self.nbytes:
                    torch.from_numpy(self.buf).view(t.dtype).view(t.shape).copy_(t)
                stats.live += self.nbytes
                stats.peak = max(stats.peak, stats.live)
                stats.packed += 1
                stats.packed_bytes += self.nbytes
                stats.sizes.append(self.nbytes)

            def __del__(self):
                stats.live -= self.nbytes

        def pack(t):
            return Packed(t)

        def unpack(p):
            if not p.nbytes:
                return torch.empty(p.shape, dtype=p.dtype)
            return torch.from_numpy(p.buf).view(p.dtype).view(p.shape).clone()

        self.hooks = torch.autograd.graph.saved_tensors_hooks(pack, unpack)

    def __enter__(self):
        self.hooks.__enter__()
        return self

    def __exit__(self, *exc):
        return self.hooks.__exit__(*exc)


def measure_row(name, fixture, overrides, dtype_name, ckpt, offload, lora):
    import contextlib

    import torch
    import transformers.modeling_utils as mu
    from accuracy_real import build, row_config
    from accuracy_torch2 import heap_peak
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
    cfg = row_config(fixture, overrides, "sdpa")
    model, config = build(cfg, "sdpa", dtype)
    stats = []

    def make(*a, **k):
        stats.append(HostOffload(*a, **k))
        return stats[-1]
    mu.save_on_cpu = make  # transformers' activation_checkpointing_enable(offload=True) takes this one
    if ckpt:
        model.activation_checkpointing_enable(offload=offload == "checkpoints")
    if lora:
        import peft
        model = peft.get_peft_model(model, peft.LoraConfig(**lora))
    ids = torch.randint(config.vocab_size, (BATCH, SEQ))
    inputs = {"input_ids": ids, "labels": ids}
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4, foreach=True)
    step_stats = {}

    def step():
        stats.clear()
        outer = make() if offload.startswith("all") else contextlib.nullcontext()
        with outer:
            loss = model(**inputs).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        # one step's host figures: the packs of every offload context it opened (transformers opens one per
        # checkpointed layer call); alive at once, since the backward releases them only after the forward
        step_stats.update(packed=sum(s.packed for s in stats), packed_bytes=sum(s.packed_bytes for s in stats),
                          sizes=sorted(x for s in stats for x in s.sizes))
    step()
    step()
    peak, op = heap_peak(step)
    key = f"{name}/{dtype_name}/{'ckpt' if ckpt else 'no-ckpt'}/{offload}" + (
        f"/lora-r{lora['r']}-{','.join(lora['target_modules'])}" if lora else "")
    return {"key": key, "model": name, "fixture": fixture, "config": cfg, "dtype": dtype_name,
            "checkpointing": ckpt, "offload": offload, "lora": lora, "batch": BATCH, "seq": SEQ,
            "heap_peak": peak, "heap_peak_op": op, "host_bytes": step_stats["packed_bytes"],
            "host_bytes_pinned": sum(1 << (x - 1).bit_length() if x else 0 for x in step_stats["sizes"]),
            "packed": step_stats["packed"]}


def cmd_measure(args):
    import torch
    import transformers
    from accuracy_real import cuda_dropout
    cuda_dropout()
    rows = []
    for spec in ROWS:
        row = measure_row(*spec)
        rows.append(row)
        print(f"{row['key']:44s} heap peak {row['heap_peak']:>14,d} host {row['host_bytes']:>13,d} "
              f"({row['packed']} tensors)", flush=True)
        with open(args.out + ".tmp", "w") as f:
            json.dump({"torch": torch.__version__, "transformers": transformers.__version__, "rows": rows}, f,
                      indent=1)
            f.write("\n")
        os.replace(args.out + ".tmp", args.out)


def estimate(cli, row, tmp):
    cmd = [cli, "estimate", "--hf-config", measure_check.config_file(tmp, row), "--batch", str(row["batch"]), "--seq", str(row["seq"]),
           "--precision", "pure-bf16" if row["dtype"] == "bf16" else "fp32", "--optimizer", "adamw", "--impl",
           "foreach", "--cublas-workspace-kib", "0", "--attention", "flash", "--json"]
    if row["checkpointing"]:
        cmd += ["--checkpointing", "every-block", "--checkpoint-mode", "non-reentrant"]
    cmd += ["--activation-offload", row["offload"]]
    if row.get("lora"):
        cmd += ["--lora-rank", str(row["lora"]["r"]), "--lora-targets", ",".join(row["lora"]["target_modules"])]
    e = measure_check.run_json(cmd)
    return {"heap_peak": measure_check.heap_peak(e), "host_bytes": e["totals"]["host_activation_bytes"],
            "peak_op": e["peak_op"]}


def pct(a, b):
    return (a - b) / b if b else (0.0 if a == b else float("inf"))


def cmd_check(args):
    with open(args.data) as f:
        data = json.load(f)
    rows, lines, failures = data["rows"], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            e = estimate(args.cli, row, tmp)
            # the measured host bytes are unrounded; BatchFit's, for pinned offload, are the pinned allocator's
            measured_host = row["host_bytes"] if row["offload"] == "all" else row["host_bytes_pinned"]
            he, pe = pct(e["host_bytes"], measured_host), pct(e["heap_peak"], row["heap_peak"])
            problems = []
            if abs(he) > HOST_BOUND:
                problems.append(f"host: estimated {e['host_bytes']:,d}, measured {measured_host:,d}")
            if abs(pe) > HEAP_BOUND:
                problems.append(f"step peak: estimated {e['heap_peak']:,d}, measured {row['heap_peak']:,d}")
            failures += bool(problems)
            print(f"{'FAIL' if problems else 'ok  '} {row['key']:44s} host {100 * he:+.2f}% step peak {100 * pe:+.1f}%"
                  + "".join(f"\n     {p}" for p in problems))
            lora = f"r={row['lora']['r']} {','.join(row['lora']['target_modules'])}" if row.get("lora") else "–"
            lines.append(f"| {row['model']} | {row['dtype']} | {'every layer' if row['checkpointing'] else '–'} | "
                         f"{lora} | {row['offload']} | {row['packed']:,d} | {measured_host / 2**20:,.2f} | "
                         f"{e['host_bytes'] / 2**20:,.2f} | {100 * he:+.2f}% | {row['heap_peak'] / 2**20:,.1f} | "
                         f"{e['heap_peak'] / 2**20:,.1f} | {100 * pe:+.1f}% |")
    if args.write_doc:
        table = ("| model | weights | checkpointing | PEFT LoRA | offload | tensors packed | host MiB measured | "
                 "estimated | error | step peak MiB measured | estimated | error |\n"
                 "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n" + "\n".join(lines))
        versions = (f"Measured under torch {data['torch']}, transformers {data['transformers']}; batch {BATCH} x "
                    f"{SEQ} tokens, four layers, 8,192-token vocabulary.\n\n")
        measure_check.splice(args.doc, BEGIN, END, versions + table)
    print(f"{len(rows) - failures}/{len(rows)} rows within the bounds")
    return 1 if failures else 0


def main():
    return measure_check.main(__doc__, DATA, DOC, cmd_measure, cmd_check)


if __name__ == "__main__":
    sys.exit(main())
