#!/usr/bin/env python3
"""Checkpointing modes against torch: the CPU heap peak of a steady-state training step with every block
checkpointed reentrant, non-reentrant, or not at all, next to BatchFit's estimate of the same step.

    python3 tests/torch/checkpoint_peak.py BATCHFIT_CLI REPO_ROOT [--json OUT]     # torch 2.x (a Debian 13 root)

The model is tests/data/torch/mlp_blocks.json written in torch (a Linear(128, 128), then 4 residual blocks LayerNorm -> Linear(128, 512)
-> GELU -> Linear(512, 128), MSE loss, SGD without momentum, fp32, batch 4 of [64, 128]). The measured peak is the
running sum of the CPU allocator's alloc/free events that torch.profiler records (profile_memory=True) from the
batch being created to the end of optimizer.step(), i.e. everything but the parameters that exist before: the
batch, activations, gradients and temporaries. BatchFit's figure is peak_allocated_bytes minus the parameters,
with --cublas-workspace-kib 0 (CUDA's workspace does not exist on a CPU).

Exit 0 when each mode is within 7% and the reentrant - non-reentrant difference is BatchFit's plus at most one
CPU RNG state per checkpointed block (torch.get_rng_state(), 5,056 B of host memory that preserve_rng_state keeps;
not GPU memory); 77 without torch 2. Measured under torch 2.6 (tests/data/torch/checkpoint_peak-torch2.json):
every mode is 3.9-6.3% above BatchFit, the same ~262 KB in each (the first backward op on a CPU holds one more
[B,S,D] and one more weight-sized tensor than BatchFit's CUDA model), and reentrant keeps 131,072 B (the block's
recomputed output, BatchFit's figure) + 3 x 5,056 B (RNG states) more than non-reentrant.
"""
import argparse
import json
import os
import subprocess
import sys

B, S, D, H, BLOCKS = 4, 64, 128, 512, 4


def measure(mode):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.profiler import ProfilerActivity, profile
    from torch.utils.checkpoint import checkpoint

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln, self.fc1, self.fc2 = nn.LayerNorm(D), nn.Linear(D, H), nn.Linear(H, D)

        def forward(self, x):
            return x + self.fc2(F.gelu(self.fc1(self.ln(x))))

    torch.manual_seed(0)
    # an input projection first, as an embedding would be: reentrant checkpointing needs an input that requires
    # grad (with none, the block's output has no grad_fn and the backward stops)
    proj = nn.Linear(D, D)
    blocks = nn.ModuleList([Block() for _ in range(BLOCKS)])
    opt = torch.optim.SGD(list(proj.parameters()) + list(blocks.parameters()), lr=1e-3)

    def step():
        x = torch.randn(B, S, D, requires_grad=False)
        y = torch.randn(B, S, D)
        h = proj(x)
        for b in blocks:
            if mode == "none":
                h = b(h)
            else:
                h = checkpoint(b, h, use_reentrant=(mode == "reentrant"))
        F.mse_loss(h, y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()  # the first step: nothing lazily created is left for the measured one
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
                    key=lambda e: e.start_ns())
    live = peak = 0
    for e in events:
        live += e.nbytes()
        peak = max(peak, live)
    return peak


def estimate(cli, root, mode):
    model = os.path.join(root, "tests", "data", "torch", "mlp_blocks.json")
    cmd = [cli, "estimate", "--model", model, "--batch", str(B), "--optimizer", "sgd", "--cublas-workspace-kib", "0",
           "--json"]
    if mode != "none":
        cmd += ["--checkpointing", "every-block", "--checkpoint-mode", mode]
    e = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return e["peak_allocated_bytes"] - e["at_peak"]["parameter_bytes"], e


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cli")
    ap.add_argument("root")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        print(f"SKIPPED: no torch ({exc})")
        return 77
    if int(torch.__version__.split(".")[0]) < 2:
        print("SKIPPED: needs torch 2.x (use_reentrant=False with early stop)")
        return 77
    torch.set_num_threads(1)
    rows, ok = [], True
    for mode in ("none", "reentrant", "non-reentrant"):
        measured = measure(mode)
        est, e = estimate(args.cli, args.root, mode)
        err = (est - measured) / measured
        rows.append({"mode": mode, "measured_peak": measured, "estimated_peak": est, "error": err,
                     "estimate_peak_op": e["peak_op"]})
        good = abs(err) <= 0.07
        ok = ok and good
        print(f"{'ok  ' if good else 'FAIL'} {mode:14s} measured {measured:>12,d}  estimated {est:>12,d} "
              f"({100 * err:+.2f}%)  BatchFit's peak: {e['peak_op']}")
    dm = rows[1]["measured_peak"] - rows[2]["measured_peak"]
    de = rows[1]["estimated_peak"] - rows[2]["estimated_peak"]
    rng = 5056  # torch.get_rng_state().numel() on CPU: the Mersenne Twister state
    diff_ok = de > 0 and 0 <= dm - de <= BLOCKS * rng
    ok = ok and diff_ok
    print(f"{'ok  ' if diff_ok else 'FAIL'} reentrant - non-reentrant: measured {dm:,d} B, estimated {de:,d} B "
          f"(+ {dm - de:,d} B: {(dm - de) / rng:.2f} CPU RNG states)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "batch": B, "rows": rows,
                       "reentrant_minus_non_reentrant": {"measured": dm, "estimated": de}}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
