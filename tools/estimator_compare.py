#!/usr/bin/env python3
"""DeepSpeed's and Hugging Face accelerate's own memory estimators beside BatchFit (issue 28, section 3):
docs/accuracy-real.md, "Other estimators".

    python3 tools/estimator_compare.py measure [--out tests/data/real/estimators.json]
    python3 tools/estimator_compare.py check BATCHFIT_CLI [--data ...] [--doc docs/accuracy-real.md] [--write-doc]

measure (the measurement virtual environment, scripts/measure-venv.sh): each Hugging Face config of
tests/data/hf below is built by transformers on the meta device (no weights), and the estimators run on it as
their users call them:

* DeepSpeed's estimate_zero2_model_states_mem_needs and estimate_zero3_model_states_mem_needs (the functions
  behind the *_all_live helpers; their model_to_params counts shared parameters by data_ptr, which the meta
  device does not have, so the totals come from model.parameters(), which skips shared ones too), for 8 GPUs
  on one node, with additional_buffer_factor 1.5 (their default);
* accelerate's `accelerate estimate-memory` arithmetic (commands/estimate.py: calculate_maximum_sizes and
  estimate_training_usage, the CLI's "Training using Adam" column is the largest of its four entries).

check (any python3, no torch): estimates the same set-ups with batchfit-cli and puts the figures side by side
(--write-doc). It fails when BatchFit's model states leave the byte counts these estimators' own comments
give for what each GPU holds: ZeRO-2 keeps 2 bytes of bf16 weights per parameter plus 14/N of gradients,
fp32 master weights and Adam's two states; ZeRO-3 16/N; with offload_param the host holds 16 bytes per
parameter per node (2 weights, 2 gradients, 12 master and states).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_check  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HF = os.path.join(ROOT, "tests", "data", "hf")
DATA = os.path.join(ROOT, "tests", "data", "real", "estimators.json")
DOC = os.path.join(ROOT, "docs", "accuracy-real.md")
BEGIN, END = "<!-- BEGIN estimator_compare.py -->", "<!-- END estimator_compare.py -->"
GPUS = 8
MODELS = [("gpt2", "gpt2.json"), ("qwen3-0.6b", "qwen3-0.6b.json"), ("llama-3.2-3b", "llama-3.2-3b.json"),
          ("mistral-7b", "mistral-7b.json")]
GIB = 2 ** 30


def measure_one(name, fixture):
    import torch
    import transformers
    from accelerate.commands.estimate import estimate_training_usage
    from accelerate.utils import calculate_maximum_sizes
    from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs
    with open(os.path.join(HF, fixture)) as f:
        cfg = json.load(f)
    fields = dict(cfg)
    config = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    total = sum(p.numel() for p in model.parameters())
    largest = max(sum(p.numel() for p in m.parameters(recurse=False)) for m in model.modules())
    row = {"model": name, "fixture": fixture, "parameters": total, "largest_layer_parameters": largest}
    for offload in (False, True):
        cpu, gpu = estimate_zero2_model_states_mem_needs(total, GPUS, 1, cpu_offload=offload)
        row[f"ds_zero2{'_offload' if offload else ''}"] = {"gpu": gpu, "cpu": cpu}
    for key, offload, params in (("ds_zero3", False, False), ("ds_zero3_offload", True, False),
                                 ("ds_zero3_offload_params", True, True)):
        cpu, gpu, _ = estimate_zero3_model_states_mem_needs(total, largest, GPUS, 1, cpu_offload=offload,
                                                            cpu_offload_params=params, zero_init=True)
        row[key] = {"gpu": gpu, "cpu": cpu}
    size, _ = calculate_maximum_sizes(model)
    row["accelerate_model_bytes"] = int(size)
    for dtype in ("float32", "bfloat16"):
        usage = estimate_training_usage(size, dtype)
        row[f"accelerate_{dtype}"] = {"entries": usage, "training": max(usage.values())}
    return row


def cmd_measure(args):
    import accelerate
    import deepspeed
    import transformers
    rows = [measure_one(n, f) for n, f in MODELS]
    with open(args.out + ".tmp", "w") as f:
        json.dump({"deepspeed": deepspeed.__version__, "accelerate": accelerate.__version__,
                   "transformers": transformers.__version__, "gpus": GPUS, "rows": rows}, f, indent=1)
        f.write("\n")
    os.replace(args.out + ".tmp", args.out)
    for r in rows:
        print(f"{r['model']:14s} {r['parameters']:>14,d} parameters, largest layer {r['largest_layer_parameters']:,d}")


# BatchFit's set-ups, one per estimator row: extra batchfit-cli options (batch 1, 1,024 tokens)
SETUPS = [
    ("accelerate float32", "accelerate_float32", ["--precision", "fp32"]),
    ("accelerate bfloat16", "accelerate_bfloat16", ["--precision", "amp-bf16"]),
    ("ZeRO-2", "ds_zero2", ["--precision", "mixed-bf16", "--gpus", str(GPUS), "--strategy", "zero2"]),
    ("ZeRO-2 + offload_optimizer", "ds_zero2_offload",
     ["--precision", "mixed-bf16", "--gpus", str(GPUS), "--strategy", "zero2", "--offload"]),
    ("ZeRO-3", "ds_zero3", ["--precision", "mixed-bf16", "--gpus", str(GPUS), "--strategy", "zero3"]),
    ("ZeRO-3 + offload_optimizer", "ds_zero3_offload",
     ["--precision", "mixed-bf16", "--gpus", str(GPUS), "--strategy", "zero3", "--offload"]),
    ("ZeRO-3 + offload_optimizer + offload_param", "ds_zero3_offload_params",
     ["--precision", "mixed-bf16", "--gpus", str(GPUS), "--strategy", "zero3", "--offload-params"]),
]


def batchfit(cli, fixture, opts):
    cmd = [cli, "estimate", "--hf-config", os.path.join(HF, fixture), "--seq", "1024", "--batch", "1",
           "--optimizer", "adamw", "--json"] + opts
    e = measure_check.run_json(cmd)
    t = e["totals"]
    states = t["parameter_bytes"] + t["gradient_bytes"] + (0 if "--offload" in opts or "--offload-params" in opts
                                                            else t["optimizer_state_bytes"])
    host = t["host_bytes"] + t.get("host_parameter_bytes", 0)
    return {"states": states, "host_node": host * GPUS if "--gpus" in opts else host,
            "peak": e["peak_allocated_bytes"], "required": e["required_bytes"]}


def problems_of(row, key, b):
    """BatchFit's per-GPU model states against the byte counts the estimators' comments give."""
    p, n = row["parameters"], GPUS
    expect = {"ds_zero2": 2 * p + 14 * p / n, "ds_zero3": 16 * p / n}.get(key)
    out = []
    if expect is not None and abs(b["states"] - expect) > 0.002 * expect + 2 ** 20:
        out.append(f"{key}: model states {b['states']:,d}, expected {expect:,.0f}")
    if key == "ds_zero3_offload_params" and abs(b["host_node"] - 16 * p) > 0.01 * 16 * p:
        out.append(f"{key}: host per node {b['host_node']:,d}, expected {16 * p:,d}")
    return out


def gib(x):
    return f"{x / GIB:,.2f}"


def cmd_check(args):
    with open(args.data) as f:
        data = json.load(f)
    lines, failures = [], 0
    for row in data["rows"]:
        for label, key, opts in SETUPS:
            b = batchfit(args.cli, row["fixture"], opts)
            problems = problems_of(row, key, b)
            failures += bool(problems)
            print(f"{'FAIL' if problems else 'ok  '} {row['model']:14s} {label}" +
                  "".join(f"\n     {p}" for p in problems))
            theirs = row[key]
            if key.startswith("accelerate"):
                their_gpu, their_cpu = theirs["training"], None
            else:
                their_gpu, their_cpu = theirs["gpu"], theirs["cpu"]
            lines.append(f"| {row['model']} | {label} | {gib(their_gpu)} | "
                         f"{gib(their_cpu) if their_cpu is not None else '–'} | {gib(b['states'])} | "
                         f"{gib(b['host_node']) if b['host_node'] else '–'} | {gib(b['required'])} |")
    if args.write_doc:
        table = (f"DeepSpeed {data['deepspeed']}, accelerate {data['accelerate']}, transformers "
                 f"{data['transformers']}; {data['gpus']} GPUs on one node for the ZeRO rows; BatchFit at batch 1 x "
                 "1,024 tokens, AdamW. GiB.\n\n"
                 "| model | set-up | theirs: GPU | theirs: host (node) | BatchFit: model states per GPU | "
                 "BatchFit: host (node) | BatchFit: nvidia-smi at the peak |\n"
                 "|---|---|---:|---:|---:|---:|---:|\n" + "\n".join(lines))
        measure_check.splice(args.doc, BEGIN, END, table)
    print(f"{failures} failures")
    return 1 if failures else 0


def main():
    return measure_check.main(__doc__, DATA, DOC, cmd_measure, cmd_check)


if __name__ == "__main__":
    sys.exit(main())
