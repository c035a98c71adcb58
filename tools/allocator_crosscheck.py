#!/usr/bin/env python3
"""BatchFit's caching-allocator replay against an independent implementation: DynaPipe's simulator of PyTorch's
CUDA caching allocator (awslabs/optimizing-multitask-training-through-dynamic-pipelines @705cf383,
dynapipe/memory_opt/allocation_simulator.py, TorchCachingAllocatorSimulator; Apache-2.0, not part of BatchFit).

    python3 tools/allocator_crosscheck.py measure SIMULATOR.py build/app/batchfit-cli   # needs sortedcontainers
    python3 tools/allocator_crosscheck.py check build/app/batchfit-cli                   # ctest runs this

measure: for every case below, `batchfit-cli estimate ... --trace-out` writes the step's allocator trace
(docs/allocator-trace.md), DynaPipe's simulator replays it (its kSmallSize set to torch's 1 MiB, max_split_size
from the case's PYTORCH_CUDA_ALLOC_CONF, memory unlimited), and its peak allocated and peak reserved
(peak_backend_allocated_bytes) must equal BatchFit's `allocator` figures exactly. The agreed figures are written to
tests/data/reference/allocator-crosscheck.json.

check: every case estimated again; its allocator.peak_allocated_bytes and peak_reserved_bytes must still equal the
stored figures (no DynaPipe needed): a change to the allocator model that the independent simulator would not make
fails here.

DynaPipe has no expandable segments, garbage collection or roundup divisions: those are left to the hand-worked
unit tests (tests/core/test_allocator.cpp).
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "reference", "allocator-crosscheck.json")
HISTORY_DOWN = "896,768,640,512,384,256,128"
HISTORY_MIXED = "312,198,764,450,901,233,640,377,512,820"
LLAMA3_QLORA = ["--hf-config", os.path.join("tests", "data", "hf", "llama-3-8b.json"), "--seq", "1024",
                "--precision", "pure-bf16", "--quant", "nf4", "--double-quant", "--lora-rank", "8",
                "--lora-alpha", "16", "--lora-targets", "all-linear", "--batch", "2"]


def cases():
    out = []
    presets = [("gpt2-small", 8), ("resnet50", 64), ("transformer-12", 3), ("vgg16", 16), ("mobilenet_v2", 32),
               ("vit_b_16", 8), ("llama-2-7b", 1)]
    for conf in ("", "max_split_size_mb:128"):
        extra = ["--alloc-conf", conf] if conf else []
        for preset, batch in presets:
            out.append({"name": f"{preset} b{batch}" + (f" {conf}" if conf else ""),
                        "args": ["--preset", preset, "--batch", str(batch)] + extra})
        for history in (HISTORY_DOWN, HISTORY_MIXED):
            out.append({"name": f"gpt2-small b8 after {history}" + (f" {conf}" if conf else ""),
                        "args": ["--preset", "gpt2-small", "--batch", "8", "--replay-seqs", history] + extra})
    out.append({"name": "llama-3-8b QLoRA b2 seq 1024", "args": LLAMA3_QLORA})
    out.append({"name": f"llama-3-8b QLoRA b2 seq 1024 after {HISTORY_MIXED}",
                "args": LLAMA3_QLORA + ["--replay-seqs", HISTORY_MIXED]})
    return out


def estimate(cli, args, trace=None):
    cmd = [cli, "estimate", *args, "--json"] + (["--trace-out", trace] if trace else [])
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({run.returncode}): {run.stderr.strip()}")
    a = json.loads(run.stdout)["allocator"]
    return a["peak_allocated_bytes"], a["peak_reserved_bytes"]


def max_split(args):
    if "--alloc-conf" not in args:
        return float("inf")
    conf = args[args.index("--alloc-conf") + 1]
    assert conf.startswith("max_split_size_mb:"), conf
    return int(conf.split(":")[1]) << 20


def simulate(module, trace, max_split_size):
    config = module.TorchCachingAllocatorConfig(max_split_size=max_split_size, kSmallSize=1 << 20)
    sim = module.TorchCachingAllocatorSimulator(1e15, config)  # MB: unlimited
    live = {}
    with open(trace) as f:
        events = json.load(f)["events"]
    for e in events:
        if e["op"] == "alloc":
            live[e["id"]] = sim.malloc(e["size"]) if e["size"] > 0 else None
        elif e["op"] == "free":
            block = live.pop(e["id"])
            if block is not None:
                sim.free(block)
        else:
            sys.exit(f"{trace}: event {e} is not replayed here")
    return sim.peak_allocated_bytes, sim.peak_backend_allocated_bytes


def measure(simulator, cli):
    spec = importlib.util.spec_from_file_location("allocation_simulator", simulator)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases():
            trace = os.path.join(tmp, "step.trace.json")
            ours = estimate(cli, case["args"], trace)
            theirs = simulate(module, trace, max_split(case["args"]))
            status = "same" if ours == theirs else "DIFFERENT"
            print(f"{case['name']}: BatchFit {ours}, DynaPipe {theirs}: {status}")
            if ours != theirs:
                sys.exit("the replays disagree: nothing written")
            rows.append({**case, "peak_allocated_bytes": ours[0], "peak_reserved_bytes": ours[1]})
    doc = {"source": "DynaPipe TorchCachingAllocatorSimulator @705cf383 (kSmallSize = 1 MiB), through "
                     "tools/allocator_crosscheck.py measure", "cases": rows}
    with open(DATA, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{len(rows)} cases agree; wrote {os.path.relpath(DATA, ROOT)}")


def check(cli):
    with open(DATA) as f:
        doc = json.load(f)
    bad = 0
    for case in doc["cases"]:
        got = estimate(cli, case["args"])
        want = (case["peak_allocated_bytes"], case["peak_reserved_bytes"])
        if got != want:
            bad += 1
            print(f"{case['name']}: peak allocated, reserved {got}; the simulators agreed on {want}")
    if bad:
        sys.exit(f"{bad} of {len(doc['cases'])} cases differ from the cross-checked figures")
    print(f"{len(doc['cases'])} cases as cross-checked")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("simulator", help="dynapipe/memory_opt/allocation_simulator.py")
    m.add_argument("cli")
    c = sub.add_parser("check")
    c.add_argument("cli")
    a = p.parse_args()
    if a.command == "measure":
        measure(a.simulator, a.cli)
    else:
        check(a.cli)


if __name__ == "__main__":
    main()
