#!/usr/bin/python3
"""Run real training steps of a PyTorch model and print what PyTorch measures, as JSON BatchFit reads.

    /usr/bin/python3 tools/torch_measure.py MODULE:CALLABLE [--args JSON] --input-shape 3,224,224 \\
        [--input-dtype int64] [--loss cross-entropy|mse|none] [--batch 1 2 4] [--optimizer adam] \\
        [--device cpu|cuda] [--out measured.json]

Same model arguments as tools/torch_export.py.  For every batch size it runs a warm-up step (which
creates the optimizer states) and then the measured steps, each ``zero_grad(set_to_none=True)``,
forward, loss, backward, ``optimizer.step()`` - the steady state BatchFit estimates by default:

* ``parameter_bytes``: unique parameter storages (tied weights once; frozen ones included);
* ``gradient_bytes``: unique ``.grad`` storages after the backward;
* ``optimizer_state_bytes``: every tensor in ``optimizer.state`` (Adam's ``step`` tensors included);
* ``saved_activation_bytes``: unique storages autograd saves during the forward and the loss,
  parameters excluded, the input batch and the targets included (``saved_lib.SavedRecorder``, the
  counting of docs/accuracy-reference.md);
* ``max_memory_allocated`` (CUDA only, else null): ``torch.cuda.max_memory_allocated()`` over one
  step without hooks, after ``reset_peak_memory_stats()`` right after ``zero_grad``.

On CPU every ``nn.Dropout`` is replaced by ``torch.native_dropout`` (bool mask, as CUDA's
``F.dropout``) so that the saved bytes are those of a GPU run; ``--torch-dropout`` keeps CPU
behaviour (a float mask).  Output (stdout, or --out):

    {"format": "batchfit-measurement", "version": 1, "model": NAME, "device": "cpu" | "cuda (GPU name)",
     "torch_version": "2.3.1", "optimizer": "adam",
     "points": [{"batch": 1, "parameter_bytes": ..., "gradient_bytes": ..., "optimizer_state_bytes": ...,
                 "saved_activation_bytes": ..., "max_memory_allocated": null | int}, ...]}
"""
import argparse
import gc
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

import torch  # noqa: E402

from saved_lib import SavedRecorder  # noqa: E402
from batchfit.export.common import (DTYPES, LOSSES, SpecError, TrainingLoss, build_model, make_input,  # noqa: E402
                                  make_target, parse_shape, select_output, use_native_dropout)

OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.01),
    "sgd-momentum": lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9),
    "sgd-nesterov": lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9, nesterov=True),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-3),
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-3),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=1e-3),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=1e-2),
}


def unique_storage_bytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        if st.data_ptr() not in seen:
            seen.add(st.data_ptr())
            total += st.nbytes()
    return total


def optimizer_state_bytes(opt):
    total = 0
    for state in opt.state.values():
        for v in state.values():
            if isinstance(v, torch.Tensor):
                total += v.numel() * v.element_size()
    return total


def saved_activation_bytes(model, loss_fn, x, target, output_key=None):
    """Unique storages autograd saves in forward + loss (saved_lib counting)."""
    rec = SavedRecorder(list(model.parameters()))
    with rec:
        out = select_output(model(x), output_key)
        loss = loss_fn(out, target)
    total = rec.total
    # the recorder is in a reference cycle with its hooks: drop the saved tensors it holds now
    rec.tensors.clear()
    rec.records.clear()
    rec._ctx = None
    del rec, out, loss
    gc.collect()
    return total


def measure(model, input_shape, input_dtype, loss_kind, batches, optimizer="adam", device="cpu",
            output_key=None, steps=1):
    model = model.to(device)
    model.train()
    loss_fn = TrainingLoss(loss_kind)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = OPTIMIZERS[optimizer](params)
    cuda = device.startswith("cuda")
    points = []
    for B in batches:
        x = make_input(model, input_shape, input_dtype, B).to(device)
        with torch.no_grad():
            probe = select_output(model(x), output_key)
        target = make_target(probe, loss_kind)
        target = target.to(device) if target is not None else None
        del probe

        def step():
            opt.zero_grad(set_to_none=True)
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            loss = loss_fn(select_output(model(x), output_key), target)
            loss.backward()
            grads = unique_storage_bytes([p.grad for p in model.parameters()])
            opt.step()
            peak = None
            if cuda:
                torch.cuda.synchronize()
                peak = int(torch.cuda.max_memory_allocated())
            return grads, peak

        step()  # warm-up: optimizer states exist from now on
        for _ in range(max(1, steps)):
            grads, peak = step()
        opt.zero_grad(set_to_none=True)
        saved = saved_activation_bytes(model, loss_fn, x, target, output_key)
        points.append({
            "batch": B,
            "parameter_bytes": unique_storage_bytes(list(model.parameters())),
            "gradient_bytes": grads,
            "optimizer_state_bytes": optimizer_state_bytes(opt),
            "saved_activation_bytes": saved,
            "max_memory_allocated": peak,
        })
    return points


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec", metavar="MODULE:CALLABLE")
    ap.add_argument("--args", default=None)
    ap.add_argument("--input-shape", required=True)
    ap.add_argument("--input-dtype", default="float32", choices=sorted(DTYPES))
    ap.add_argument("--loss", default="cross-entropy", choices=LOSSES)
    ap.add_argument("--output", default=None, help="index or key of the output the loss is taken on")
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--optimizer", default="adam", choices=sorted(OPTIMIZERS))
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument("--steps", type=int, default=1, help="measured steps after the warm-up step (default 1)")
    ap.add_argument("--torch-dropout", action="store_true",
                    help="on CPU, keep nn.Dropout (float mask) instead of native_dropout (bool mask, as CUDA)")
    ap.add_argument("--name", default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        model = build_model(args.spec, args.args)
        if args.device == "cpu" and not args.torch_dropout:
            use_native_dropout(model)
        if args.device.startswith("cuda") and not torch.cuda.is_available():
            raise SpecError("--device cuda but torch.cuda.is_available() is False")
        points = measure(model, parse_shape(args.input_shape), DTYPES[args.input_dtype], args.loss,
                         sorted(set(args.batch)), args.optimizer, args.device, args.output, args.steps)
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    device = "cpu"
    if args.device.startswith("cuda"):
        device = f"cuda ({torch.cuda.get_device_name(torch.device(args.device))})"
    doc = {
        "format": "batchfit-measurement",
        "version": 1,
        "model": args.name or args.spec.rsplit(":", 1)[-1],
        "device": device,
        "torch_version": torch.__version__,
        "optimizer": args.optimizer,
        "points": points,
    }
    text = json.dumps(doc, indent=2) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
