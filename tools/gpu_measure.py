#!/usr/bin/env python3
"""GPU truth for BatchFit: what one GPU really holds during the presets' training steps (issue 26, item 4).

    python3 tools/gpu_measure.py measure --out DIR [--cases resnet50,gpt2-small] [--budget-s 420]
    python3 tools/gpu_measure.py check build/app/batchfit-cli [--data tests/data/gpu]

measure (torch 2.x on a CUDA GPU; one GPU, under 8 minutes): every case runs in its own process, so that each
starts from a bare CUDA context. In that process:

1. the non-PyTorch memory as `nvidia-smi` sees it, step by step: `mem_get_info()` right after
   `torch.cuda.init()` (the context), after a matmul (cuBLAS/cuBLASLt loaded; its workspace is in the caching
   allocator and is subtracted through `memory_reserved()`), after a convolution (cuDNN loaded, CNN cases);
2. a first training step (it creates the optimizer states), then `reset_peak_memory_stats()` and
   `_record_memory_history()` around a second, steady step: `max_memory_allocated()`,
   `max_memory_reserved()`, `mem_get_info()` at the end (the caching allocator frees nothing back by itself, so
   total - free at the end is `nvidia-smi`'s peak, less anything freed by an OOM retry, which is recorded too:
   `num_alloc_retries`);
3. the snapshot, turned into a BatchFit allocator trace by tools/snapshot_to_trace.py (standard library only),
   written beside the figures as `<case>.trace.json`.

Each case gives `<case>.json` with the device name, total memory, driver, CUDA, cuDNN and torch versions,
`CUDA_MODULE_LOADING`, `cudnn.benchmark`, and the figures above. Copy them to tests/data/gpu/.

check (no torch, no GPU): for every `tests/data/gpu/*.json`, `batchfit-cli estimate` on the same set-up and GPU
(`--capacity` from the device's total) must come within the committed tolerance of the measured
`max_memory_allocated` (the autograd model: 3%) and of the measured `nvidia-smi` figure (the allocator and the
non-PyTorch model: 10%), and where `<case>.trace.json` is committed, `batchfit-cli allocator-replay` of it must give
the recorded peak reserved exactly (the allocator alone). With no data committed it runs on
tests/data/gpu-format/: a hand-written record that is not a measurement, whose figures are wrong on purpose
(`expect_fail`), so the check proves it reads the format and catches a miss.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MIB = 1 << 20

# name -> (preset, batch, optimizer): sized so that every case fits a 16 GB card and runs in seconds
CASES = {
    "resnet50": ("resnet50", 64, "adam"),
    "mobilenet_v2": ("mobilenet_v2", 64, "adam"),
    "vgg16": ("vgg16", 32, "adam"),
    "vit_b_16": ("vit_b_16", 32, "adam"),
    "transformer-12": ("transformer-12", 32, "adam"),
    "gpt2-small": ("gpt2-small", 4, "adamw"),
}
TOLERANCE = {"allocated": 0.03, "nvidia_smi": 0.10}


def _used(torch):
    free, total = torch.cuda.mem_get_info()
    return total - free, total


def _versions(torch):
    driver = None
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        pass
    return {"device": torch.cuda.get_device_name(0), "driver": driver, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "torch": torch.__version__,
            "cuda_module_loading": os.environ.get("CUDA_MODULE_LOADING", "(unset: LAZY since torch 1.13)"),
            "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")}


def run_case(name, out_dir):
    """One case in this process (a fresh CUDA context)."""
    import torch
    sys.path.insert(0, HERE)
    import reference_models
    preset, batch, optimizer = CASES[name]
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    stages = {}
    used, total = _used(torch)
    stages["context"] = used - torch.cuda.memory_reserved()
    a = torch.randn(256, 256, device="cuda")
    (a @ a).sum().item()
    used, _ = _used(torch)
    stages["after_matmul"] = used - torch.cuda.memory_reserved()
    if name in ("resnet50", "mobilenet_v2", "vgg16"):
        x = torch.randn(1, 3, 32, 32, device="cuda")
        torch.nn.functional.conv2d(x, torch.randn(8, 3, 3, 3, device="cuda")).sum().item()
        used, _ = _used(torch)
        stages["after_conv"] = used - torch.cuda.memory_reserved()
    del a
    torch.cuda.empty_cache()

    ref = reference_models.build(preset)
    model = ref.model.cuda()
    opt = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[optimizer](model.parameters(), lr=1e-3)
    inputs, target = ref.make_batch(batch)
    inputs = tuple(t.cuda() for t in inputs)
    target = target.cuda()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = ref.loss(model(*inputs), target)
        loss.backward()
        opt.step()
        del loss

    step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=200000)
    step()
    torch.cuda.synchronize()
    snap = os.path.join(out_dir, name + ".pickle")
    torch.cuda.memory._dump_snapshot(snap)
    torch.cuda.memory._record_memory_history(enabled=None)
    used, _ = _used(torch)
    stats = torch.cuda.memory_stats()
    record = {
        "format": "batchfit-gpu-measurement", "version": 1, "case": name, "preset": preset, "batch": batch,
        "optimizer": optimizer, "precision": "fp32", "total_bytes": total, **_versions(torch),
        "non_pytorch_bytes": stages,
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "nvidia_smi_used_at_end": used,
        "non_pytorch_at_end": used - torch.cuda.memory_reserved(),
        "num_alloc_retries": stats.get("num_alloc_retries", 0),
        "num_ooms": stats.get("num_ooms", 0),
    }
    subprocess.run([sys.executable, os.path.join(HERE, "snapshot_to_trace.py"), snap, "-o",
                    os.path.join(out_dir, name + ".trace.json")], check=False)
    os.remove(snap)
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(record, f, indent=1)
    print(json.dumps({k: record[k] for k in ("case", "max_memory_allocated", "max_memory_reserved",
                                             "nvidia_smi_used_at_end", "non_pytorch_bytes")}))


def measure(args):
    os.makedirs(args.out, exist_ok=True)
    start = time.time()
    for name in args.cases.split(","):
        if time.time() - start > args.budget_s:
            print(f"{name}: skipped, the time budget ({args.budget_s} s) is spent", file=sys.stderr)
            continue
        rc = subprocess.run([sys.executable, os.path.abspath(__file__), "_case", name, args.out],
                            timeout=max(30, args.budget_s - (time.time() - start) + 30)).returncode
        if rc != 0:
            print(f"{name}: failed (exit {rc})", file=sys.stderr)
    return 0


def _cli_json(cli, argv):
    r = subprocess.run([cli] + argv + ["--json"], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def gpu_id(cli, rec):
    """The catalogue GPU of the record's device (by name, then by total memory), else a custom capacity."""
    gpus = _cli_json(cli, ["gpus"])
    gpus = gpus.get("gpus", gpus) if isinstance(gpus, dict) else gpus
    flat = [g for x in gpus for g in (x.get("gpus", [x]) if isinstance(x, dict) else [])]
    for key in ("name", "memory_bytes"):
        want = rec["device"].lower() if key == "name" else rec["total_bytes"]
        for g in flat:
            if (g.get(key, "").lower() if key == "name" else g.get(key)) == want:
                return g["id"]
    return f"{rec['total_bytes'] / (1 << 30):.6f}GiB"


def compare(cli, rec):
    """[(what, measured, estimated, relative error, tolerance)] for one record."""
    est = _cli_json(cli, ["estimate", "--preset", rec["preset"], "--batch", str(rec["batch"]),
                          "--optimizer", rec["optimizer"], "--gpu", gpu_id(cli, rec)])
    alloc = est["allocator"]["peak_allocated_bytes"]
    smi = est["required_bytes"]
    measured_smi = rec["nvidia_smi_used_at_end"]
    rows = [("allocated", rec["max_memory_allocated"], alloc), ("nvidia_smi", measured_smi, smi)]
    return [(w, m, e, (e - m) / m, TOLERANCE[w]) for w, m, e in rows]


def check(args):
    files = sorted(glob.glob(os.path.join(args.data, "*.json")))
    if not files:
        files = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "gpu-format", "*.json")))
        print("no GPU measurement committed: checking the record format on tests/data/gpu-format/ "
              "(hand-written, not a measurement)")
    bad = 0
    for path in files:
        with open(path) as f:
            rec = json.load(f)
        if rec.get("format") != "batchfit-gpu-measurement":
            print(f"{path}: not a batchfit-gpu-measurement"); bad += 1; continue
        for what, m, e, err, tol in compare(args.cli, rec):
            expected_miss = what in rec.get("expect_fail", "").split(",")
            ok = (abs(err) > tol) if expected_miss else (abs(err) <= tol)
            print(f"{os.path.basename(path)} {what}: measured {m / MIB:.0f} MiB, BatchFit {e / MIB:.0f} MiB, "
                  f"{err:+.1%} (tolerance {tol:.0%}){'' if ok else '  FAIL'}{' (a miss, as expected)' if ok and expected_miss else ''}")
            bad += not ok
        trace = path[:-len(".json")] + ".trace.json"
        if os.path.exists(trace):
            r = _cli_json(args.cli, ["allocator-replay", trace])
            with open(trace) as f:
                want = json.load(f).get("recorded", {}).get("peak_reserved_bytes")
            got = r.get("peak_reserved_bytes")
            print(f"{os.path.basename(trace)}: replayed peak reserved {got}, recorded {want}"
                  f"{'' if got == want else '  FAIL'}")
            bad += got != want
    return 1 if bad else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_case":
        run_case(argv[1], argv[2])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", required=True)
    m.add_argument("--cases", default=",".join(CASES))
    m.add_argument("--budget-s", type=float, default=420)
    c = sub.add_parser("check")
    c.add_argument("cli")
    c.add_argument("--data", default=os.path.join(ROOT, "tests", "data", "gpu"))
    a = ap.parse_args(argv)
    return measure(a) if a.cmd == "measure" else check(a)


if __name__ == "__main__":
    sys.exit(main())
