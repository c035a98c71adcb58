"""BatchFit in a Lightning Trainer: at setup("fit"), before any dataloader or step, the batch is checked against
the GPU the run is on, with the Trainer's precision and accumulation and the module's own optimizer.

    from batchfit.integrations.lightning import BatchFitCallback
    trainer = L.Trainer(callbacks=[BatchFitCallback(action="set")])

The batch is the datamodule's `batch_size` (or the LightningModule's, or its hparams'); the module is exported
with `example_input_array` (or example_inputs=). action: "warn", "stop" (raises BatchFitOutOfMemory) or "set" (the
batch attribute becomes the largest batch that fits: the alternative to BatchSizeFinder, with no trial OOMs).
"""
import logging

try:
    from lightning.pytorch.callbacks import Callback
except ImportError:  # the older package name
    from pytorch_lightning.callbacks import Callback

from ..api import estimate
from ..models import gpu_from_torch

logger = logging.getLogger("batchfit")
ACTIONS = ("warn", "stop", "set")
# Trainer.precision -> --precision
PRECISIONS = {"32-true": "fp32", "32": "fp32", "bf16-mixed": "amp-bf16", "16-mixed": "amp-fp16",
              "bf16-true": "pure-bf16", "16-true": "pure-fp16"}
# torch.optim classes -> --optimizer (others: AdamW, with a warning)
OPTIMIZERS = {"SGD": "sgd", "Adam": "adam", "AdamW": "adamw", "RMSprop": "rmsprop", "Adagrad": "adagrad",
              "Adafactor": "adafactor"}


class BatchFitOutOfMemory(RuntimeError):
    """The configured batch does not fit the GPU (BatchFit's verdict, before any step ran)."""


def _optimizer_options(pl_module):
    """The module's optimizer as configure_optimizers() builds it (one optimizer; the first of several)."""
    try:
        conf = pl_module.configure_optimizers()
    except Exception as exc:  # noqa: BLE001 - the user's code; the estimate goes on with AdamW
        logger.warning(f"batchfit: configure_optimizers() failed ({exc}); estimating AdamW")
        return {"optimizer": "adamw"}
    if isinstance(conf, dict):
        conf = conf.get("optimizer")
    while isinstance(conf, (list, tuple)) and conf:
        conf = conf[0]
    if isinstance(conf, dict):
        conf = conf.get("optimizer")
    name = type(conf).__name__
    opts = {"optimizer": OPTIMIZERS.get(name, "adamw")}
    groups = getattr(conf, "param_groups", None) or [{}]
    if name == "SGD" and groups[0].get("momentum"):
        opts["optimizer"] = "sgd-nesterov" if groups[0].get("nesterov") else "sgd-momentum"
    if groups[0].get("amsgrad"):
        opts["amsgrad"] = True
    if name not in OPTIMIZERS:
        logger.warning(f"batchfit: optimizer {name} is not modelled; estimating AdamW")
    return opts


class BatchFitCallback(Callback):
    """Checks the batch against `gpu` (default: the CUDA device torch sees) at setup("fit").

    batch_attr: the attribute holding the batch. options: any batchfit-cli option (overrides what is read)."""

    def __init__(self, gpu=None, example_inputs=None, action="warn", batch_attr="batch_size", **options):
        if action not in ACTIONS:
            raise ValueError(f"action must be one of {ACTIONS}, got {action!r}")
        self.gpu, self.example_inputs, self.action = gpu, example_inputs, action
        self.batch_attr, self.options = batch_attr, options
        self.result = None
        self.largest = None

    def _holder(self, trainer, pl_module):
        for obj in (getattr(trainer, "datamodule", None), pl_module, getattr(pl_module, "hparams", None)):
            if obj is not None and hasattr(obj, self.batch_attr):
                return obj
        raise AttributeError(f"batchfit: no {self.batch_attr!r} on the datamodule, the module or its hparams "
                             "(give BatchFitCallback(batch_attr=...))")

    def setup(self, trainer, pl_module, stage):
        if stage != "fit":
            return
        gpu = self.gpu or gpu_from_torch()
        if gpu is None:
            logger.warning("batchfit: no GPU to check against (no CUDA device; give BatchFitCallback(gpu=...))")
            return
        holder = self._holder(trainer, pl_module)
        batch = int(getattr(holder, self.batch_attr))
        example = self.example_inputs if self.example_inputs is not None else pl_module.example_input_array
        opts = {"precision": PRECISIONS.get(str(trainer.precision), "fp32"),
                "accumulation": int(trainer.accumulate_grad_batches), **_optimizer_options(pl_module)}
        opts.update(self.options)
        self.result = estimate(pl_module, example, batch_size=batch, gpu=gpu, route="export", **opts)
        self.largest = self.result.max_batch
        line = (f"batchfit: batch {batch} on {self.result.gpu['name']}: {self.result.verdict['decision']}; "
                f"largest batch that fits: {self.largest}")
        if self.action == "set" and self.largest and self.largest != batch:
            setattr(holder, self.batch_attr, self.largest)
            logger.warning(line + f"; {self.batch_attr} set to {self.largest}")
        elif not self.result.fits and self.action != "warn":
            raise BatchFitOutOfMemory(line)
        elif not self.result.fits:
            logger.warning(line)
        else:
            logger.info(line)
