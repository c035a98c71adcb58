"""BatchFit in a transformers Trainer: before the first step, the configured batch is checked against the GPU
the run is on, with the Trainer's own optimizer, precision, checkpointing and the model's PEFT and quantization.

    from batchfit.integrations.transformers import BatchFitCallback
    trainer = Trainer(model, args, train_dataset=ds, callbacks=[BatchFitCallback(action="set")])

action: "warn" (log the verdict), "stop" (train() raises BatchFitOutOfMemory before the first step when it does
not fit) or "set" (per_device_train_batch_size becomes the largest batch that fits, with no trial OOMs: the
alternative to auto_find_batch_size). The verdict is in `callback.result` (a batchfit.Estimate).
"""
import inspect
import logging

import transformers
from transformers import TrainerCallback

from ..api import estimate
from ..live import hf_source
from ..models import gpu_from_torch
from .training_setup import sequence_length, trainer_options

logger = logging.getLogger("batchfit")
ACTIONS = ("warn", "stop", "set")


class BatchFitOutOfMemory(RuntimeError):
    """The configured batch does not fit the GPU (BatchFit's verdict, before any step ran)."""


def _find_trainer(args):
    """The Trainer whose __init__ is calling on_init_end (callbacks are not handed the trainer)."""
    frame = inspect.currentframe()
    while frame is not None:
        owner = frame.f_locals.get("self")
        if owner is not None and getattr(owner, "args", None) is args and hasattr(owner, "_train_batch_size"):
            return owner
        frame = frame.f_back
    return None


class BatchFitCallback(TrainerCallback):
    """Checks the Trainer's batch against `gpu` (default: the CUDA device torch sees) in on_init_end.

    seq_len: tokens per sample (default: the longest input_ids of the first 256 training examples; under TRL's
    GRPOTrainer the prompt's tokens, max_completion_length coming after them). options: any
    batchfit-cli option, overriding what is read from the Trainer (strategy="zero3", margin=0.1, ...)."""

    def __init__(self, gpu=None, seq_len=None, action="warn", **options):
        if action not in ACTIONS:
            raise ValueError(f"action must be one of {ACTIONS}, got {action!r}")
        self.gpu, self.seq_len, self.action, self.options = gpu, seq_len, action, options
        self.result = None
        self.largest = None
        self._stop_message = None

    def on_init_end(self, args, state, control, model=None, **kwargs):
        trainer = _find_trainer(args)
        gpu = self.gpu or gpu_from_torch()
        if gpu is None:
            logger.warning("batchfit: no GPU to check against (no CUDA device; give BatchFitCallback(gpu=...))")
            return control
        seq = self.seq_len or sequence_length(getattr(trainer, "train_dataset", None))
        major = int(transformers.__version__.split(".")[0])
        # The Trainer sets model.config.use_cache = args.use_cache right after on_init_end: the step runs with that.
        source = hf_source(model, None, {"use_cache": bool(getattr(args, "use_cache", False))})
        if source is None:
            raise TypeError(f"batchfit: {type(model).__name__} has no Hugging Face config; estimate it with "
                            "batchfit.estimate(model, example_inputs) instead")
        opts = {**trainer_options(args, model, major), **self.options, "gpu": gpu}
        completion = opts.pop("_completion", None)
        if completion:  # GRPO: seq_len is the prompt's tokens, the completion comes after it
            if not seq:
                logger.warning("batchfit: GRPO needs the prompt's length: give BatchFitCallback(seq_len=<prompt "
                               "tokens>)")
                return control
            opts.setdefault("prompt_len", seq)
            seq = opts["prompt_len"] + completion
        if seq:
            opts["seq"] = seq
        self.result = estimate(source, **opts)
        self.largest = self.result.max_batch
        self._act(args, trainer)
        return control

    def _act(self, args, trainer):
        r, batch = self.result, args.per_device_train_batch_size
        line = (f"batchfit: batch {batch} on {r.gpu['name']}: {r.verdict['decision']} (needs "
                f"{r.required_bytes / (1 << 30):.2f} of {r.verdict['usable_bytes'] / (1 << 30):.2f} GiB usable); "
                f"largest batch that fits: {self.largest}")
        if self.action == "set" and self.largest and self.largest != batch:
            if trainer is None:
                logger.warning(line + " (cannot reach the Trainer to set it)")
                return
            args.per_device_train_batch_size = self.largest
            trainer._train_batch_size = args.train_batch_size  # what get_train_dataloader batches by
            logger.warning(line + f"; per_device_train_batch_size set to {self.largest}")
            return
        if not r.fits:
            logger.warning(line)
            if self.action in ("stop", "set"):  # "set" with nothing that fits stops too
                self._stop_message = line
        else:
            logger.info(line)

    def on_train_begin(self, args, state, control, **kwargs):
        if self._stop_message:
            raise BatchFitOutOfMemory(self._stop_message)
        return control
