"""BatchFit: the GPU memory of a training step, and the largest batch that fits, before a GPU-hour is spent.

    import batchfit
    r = batchfit.estimate("llama-2-7b", batch_size=4, gpu="a100-80gb", precision="amp-bf16")
    r.fits, r.required_bytes, r.max_batch

Every option of ``batchfit-cli`` is a keyword argument under the same name (``--lora-rank 16`` is
``lora_rank=16``); ``batchfit.options_help()`` lists them. The core is the C++ library the CLI and the desktop app
run, bound in process (``batchfit._batchfit``). ``batchfit.export`` turns an nn.Module into a model file.
"""
from .api import BatchFitError, InputError, UsageError, check_fit, estimate, max_batch, options_help, run_cli
from .models import ModelSource, from_pretrained_config, gpu_from_torch
from .result import CheckFit, Estimate, MaxBatch

__all__ = ["BatchFitError", "CheckFit", "Estimate", "InputError", "MaxBatch", "ModelSource", "UsageError", "check_fit",
           "estimate", "from_pretrained_config", "gpu_from_torch", "max_batch", "options_help", "run_cli"]
__version__ = "0.1.0"
