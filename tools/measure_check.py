"""The shape every measurement tool of tools/ shares: `measure` (in the measurement virtual environment) writes
committed data, `check BATCHFIT_CLI` (any python3) estimates it again, and --write-doc puts the table between
a doc's BEGIN/END markers."""
import argparse
import json
import os
import subprocess


def main(doc, data, doc_path, measure, check, measure_args=()):
    """Parses `measure [--out] [extra]` / `check CLI [--data] [--doc] [--write-doc]` and runs one.
    measure_args: (flag, keyword arguments) pairs the measure command also takes."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", default=data)
    for flag, kwargs in measure_args:
        m.add_argument(flag, **kwargs)
    c = sub.add_parser("check")
    c.add_argument("cli")
    c.add_argument("--data", default=data)
    c.add_argument("--doc", default=doc_path)
    c.add_argument("--write-doc", action="store_true")
    args = p.parse_args()
    if args.cmd == "measure":
        measure(args)
        return 0
    return check(args)


def splice(path, begin, end, text):
    """Replaces what lies between the markers `begin` and `end` in the file at `path` by `text`."""
    with open(path) as f:
        doc = f.read()
    head, rest = doc.split(begin, 1)
    tail = rest.split(end, 1)[1]
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + "\n" + end + tail)


def run_json(cmd):
    """Runs a batchfit-cli command with --json (exit 0: fits, 1: does not) and returns its document."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def heap_peak(e):
    """An estimate's peak as a CPU heap measurement sees it: less what lives across steps (the parameters and
    the optimizer states at the peak)."""
    at = e["at_peak"]
    return e["peak_allocated_bytes"] - at["parameter_bytes"] - at["optimizer_state_bytes"]


def config_file(tmp, row):
    """The row's Hugging Face config written into the folder `tmp`, for --hf-config; its path."""
    path = os.path.join(tmp, row["key"].replace("/", "_") + ".json")
    with open(path, "w") as f:
        json.dump(row["config"], f)
    return path


def compare(row, est, saved_bound, heap_bound, compare_saved=True):
    """A trainer row against its estimate: (saved error, step-peak error, what is out of bounds). Counts must be
    equal; the saved bytes (when compared: not under non-reentrant checkpointing, whose own hooks pack what
    the layers save) and the step's heap peak within their bounds."""
    se = (est["saved_bytes"] - row["saved_bytes"]) / row["saved_bytes"]
    he = (est["heap_peak"] - row["heap_peak"]) / row["heap_peak"]
    bad = [f"{k}: estimated {est[k]:,d}, measured {row[k]:,d}" for k in ("parameters", "trainable")
           if est[k] != row[k]]
    if compare_saved and abs(se) > saved_bound:
        bad.append(f"saved {100 * se:+.2f}%")
    if abs(he) > heap_bound:
        bad.append(f"step peak {100 * he:+.1f}%")
    return se, he, bad


def trl_estimate(cli, row, tmp, recipe_args):
    """`batchfit-cli estimate --json --timeline` for a row measured with a TRL trainer: the row's config, batch,
    sequence, weights, LoRA and checkpointing, AdamW (foreach) as the scripts step it, no cuBLAS workspace (the
    CPU has none), SDPA's flash kernel, plus `recipe_args`. Returns the document and the figures compared."""
    cmd = [cli, "estimate", "--hf-config", config_file(tmp, row), "--batch", str(row["batch"]), "--seq",
           str(row["seq"]), "--precision", "pure-bf16" if row["dtype"] == "bf16" else "fp32", "--optimizer",
           "adamw", "--impl", "foreach", "--cublas-workspace-kib", "0", "--attention", "flash", "--json",
           "--timeline"] + list(recipe_args)
    if row["checkpointing"]:
        cmd += ["--checkpointing", "every-block", "--checkpoint-mode", "non-reentrant"]
    if row["lora"]:
        cmd += ["--lora-rank", str(row["lora"]["r"]), "--lora-targets", ",".join(row["lora"]["target_modules"])]
    e = run_json(cmd)
    t = e["totals"]
    return e, {"parameters": t["parameter_count"], "trainable": t["trainable_parameter_count"],
               "saved_bytes": t["saved_activation_bytes"], "heap_peak": heap_peak(e),
               "reference": t["reference_model_bytes"], "peak_op": e["peak_op"]}
