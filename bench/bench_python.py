#!/usr/bin/python3
"""batchfit.estimate against the CLI's in-process time (issue 31's target: within 2x), on GPT-2 small as a model
file (resources/presets/gpt2-small.json, what an export writes) at batch 8 on an A100 with the allocator replay.

    PYTHONPATH=build/python python3 bench/bench_python.py [--runs 15]

"in process" is batchfit._batchfit.run(): runCli, what batchfit-cli's main calls, with no process start. The
API adds choosing the model route, building the flags and reading the JSON back into an Estimate."""
import argparse
import os
import statistics
import sys
import time

import batchfit
from batchfit._native import native

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_seconds(fn, runs):
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    model = os.path.join(ROOT, "resources", "presets", "gpt2-small.json")
    cli_args = ["estimate", "--model", model, "--batch", "8", "--gpu", "a100-40gb", "--optimizer", "adamw", "--json"]
    core = median_seconds(lambda: native().run(cli_args), args.runs)
    api = median_seconds(lambda: batchfit.estimate(model, batch_size=8, gpu="a100-40gb", optimizer="adamw"),
                         args.runs)
    print(f"runCli in process: {core * 1e3:.1f} ms; batchfit.estimate: {api * 1e3:.1f} ms; ratio {api / core:.2f} "
          f"(target <= 2)")
    return 0 if api <= 2 * core else 1


if __name__ == "__main__":
    sys.exit(main())
