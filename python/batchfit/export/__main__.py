"""Export a PyTorch model to a BatchFit model file (docs/model-format.md).

``python -m batchfit.export`` once the package is installed; ``tools/torch_export.py`` in a clone.

    python3 -m batchfit.export MODULE:CALLABLE [--args JSON] --input-shape 3,224,224 \\
        [--input-dtype int64] [--loss cross-entropy|mse|none] [--allow-opaque] --out model.json

MODULE:CALLABLE builds the nn.Module: ``torchvision.models:resnet50``, ``my_model.py:Net``
(``--args '{"num_classes": 10}'`` passes keyword arguments, a JSON list positional ones).
``--input-shape`` is per sample (no batch dim).  ``--loss`` is what the training step adds after
the output: cross-entropy (default; over every position for sequence outputs [S, C], on fp32
logits), mse, or none (BatchFit then uses ``output.sum()``).

The model is traced with torch.fx (falling back to an eager trace with module hooks and a
TorchFunctionMode when fx cannot trace it), run at batch 1 and 2 to learn every shape and what
autograd saves, and every op is mapped to a BatchFit op, keeping the graph (residual adds,
concatenations, tied and shared weights counted once).  An op without a BatchFit equivalent is
reported with its location; with --allow-opaque it is written as an ``opaque`` layer carrying its
measured parameter and saved-activation bytes.  Exit status: 0 written, 2 cannot map (the list is
printed), 1 other errors.

Works with torch 1.13 (Debian's /usr/bin/python3) and torch 2.x.  CPU is enough: the model runs
once at batch 1 and once at batch 2.
"""
import argparse
import json
import os
import sys
import time

import torch

from .common import DTYPES, LOSSES, SpecError, build_model, parse_shape
from .export import ExportError, dumps_model, export_model


def _write_atomically(path, text):
    """A temporary file beside `path`, renamed over it: an interrupted export leaves the old file whole."""
    tmp = path + ".tmp-batchfit"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec", metavar="MODULE:CALLABLE")
    ap.add_argument("--args", default=None, help="JSON object (keyword) or list (positional) arguments")
    ap.add_argument("--input-shape", required=True, help="per-sample input shape, e.g. 3,224,224 or 128")
    ap.add_argument("--input-dtype", default="float32", choices=sorted(DTYPES))
    ap.add_argument("--loss", default="cross-entropy", choices=LOSSES)
    ap.add_argument("--allow-opaque", action="store_true",
                    help="write ops without a BatchFit equivalent as opaque layers with their measured bytes")
    ap.add_argument("--output", default=None, help="which output the loss is taken on (index or key) when the "
                                                   "model returns a tuple or dict (default: logits / element 0)")
    ap.add_argument("--trace", default="auto", choices=("auto", "fx", "eager"))
    ap.add_argument("--attention-impl", default="auto",
                    choices=("auto", "eager", "mem_efficient", "flash", "cpu_flash"),
                    help="the SDPA backend of the attention layers written for nn.MultiheadAttention and "
                         "F.scaled_dot_product_attention (auto: what torch 2.x picks on CUDA: flash for fp16/bf16 "
                         "without a mask, else mem_efficient; MultiheadAttention on torch 1.x or with "
                         "need_weights=True is eager); cpu_flash: what a CPU runs, to compare with a CPU "
                         "measurement")
    ap.add_argument("--name", default=None)
    ap.add_argument("--description", default=None)
    ap.add_argument("--out", required=True, help="model file to write ('-' for stdout)")
    ap.add_argument("--report", default=None, help="also write a JSON report (mapping details) to this file")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    def log(msg):
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    if args.threads:
        torch.set_num_threads(args.threads)
    t0 = time.time()
    try:
        model = build_model(args.spec, args.args)
        doc, report = export_model(model, parse_shape(args.input_shape), DTYPES[args.input_dtype], args.loss,
                                   args.allow_opaque, args.output, args.name or args.spec.rsplit(":", 1)[-1],
                                   args.description, args.trace, log=log, attention_impl=args.attention_impl)
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if exc.unmapped else 1
    text = dumps_model(doc)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        _write_atomically(args.out, text)
    if args.report:
        _write_atomically(args.report, json.dumps(report, indent=1, default=str))
    log(f"{args.spec}: {report['layers']} layers ({report['trace']} trace), {report['parameters']:,d} parameters"
        + (f" ({report['parameters'] - report['trainable_parameters']:,d} frozen)"
           if report['trainable_parameters'] != report['parameters'] else "")
        + f", {len(report['opaque'])} opaque; {time.time() - t0:.1f} s"
        + ("" if args.out == "-" else f" -> {args.out}"))
    for o in report["opaque"]:
        log(f"  opaque {o['layer']}: {o['torch_op']} {o['where']}: {o['reason']} "
            f"(params {o['params']:,d}, saved {o['saved_b1']:,d} B at batch 1)")
    if report["frozen_layers"]:
        log(f"  note: {len(report['frozen_layers'])} layer(s) have frozen parameters, marked \"trainable\": false; "
            "BatchFit model files (version 1) have no frozen flag yet, so the estimate still gives them "
            "gradients and optimizer states")
    for w in report["warnings"]:
        log(f"  warning: {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
