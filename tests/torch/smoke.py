#!/usr/bin/env python3
"""Torch smoke test: measure a small set of models with real PyTorch and compare with batchfit-cli.

Usage: smoke.py BATCHFIT_CLI REPO_ROOT. Exit 77 (ctest: skipped) when torch is not installed.
The full model zoo is measured offline and committed as tests/data/reference/*.json; this runs torch live on
resnet50 (batch 1) and transformer-12 (batch 1) only, so CI stays fast.
"""
import json
import os
import subprocess
import sys

cli, root = sys.argv[1], sys.argv[2]
try:
    import torch  # noqa: F401
except Exception as exc:  # pragma: no cover - depends on the machine
    print(f"SKIPPED: torch not importable ({exc}); install python3-torch")
    sys.exit(77)

failures = 0
for model, optimizer in (("resnet50", "adam"), ("transformer-12", "adam")):
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"batchfit-smoke-{model}.json")
    subprocess.run([sys.executable, os.path.join(root, "tools", "measure_saved.py"), "--model", model,
                    "--batch", "1", "--optimizer", optimizer, "--out", out], check=True,
                   stdout=subprocess.DEVNULL)
    measured = json.load(open(out))
    import torch  # the estimate follows the rules of the torch that measured (2.x, or 1.13 where it differs)
    rules = "1.13" if int(torch.__version__.split(".")[0]) < 2 else "2"
    est = json.loads(subprocess.run([cli, "estimate", "--preset", model, "--batch", "1", "--optimizer", optimizer,
                                     "--json", "--torch", rules], check=True, capture_output=True,
                                    text=True).stdout)
    saved_m, saved_e = measured["saved"]["1"], est["totals"]["saved_activation_bytes"]
    err = abs(saved_e - saved_m) / saved_m
    ok = (err < 0.01 and est["totals"]["parameter_count"] == measured["params"]
          and est["totals"]["optimizer_state_bytes"] == measured["optimizer_state_bytes"])
    print(f"{model}: saved estimate {saved_e} vs torch {saved_m} ({100 * err:.4f}%), params "
          f"{est['totals']['parameter_count']} vs {measured['params']}, optimizer states "
          f"{est['totals']['optimizer_state_bytes']} vs {measured['optimizer_state_bytes']}: {'ok' if ok else 'FAIL'}")
    failures += not ok
sys.exit(1 if failures else 0)
