"""batchfit.estimate, max_batch and check_fit: batchfit-cli's commands run in process, their JSON read back."""
import json
import warnings

from ._native import native
from .models import model_source
from .result import CheckFit, Estimate, MaxBatch

# batchfit-cli's exit codes (batchfit-cli --help).
EXIT_OK, EXIT_NO_FIT, EXIT_USAGE, EXIT_BAD_INPUT, EXIT_REPORT = 0, 1, 2, 3, 4


class BatchFitError(Exception):
    """A command batchfit-cli would refuse, with its message (the file, the JSON path, the op) and exit code:
    2 a usage error (an unknown option, a value out of range), 3 bad input (a model that cannot be read)."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


class UsageError(BatchFitError, ValueError):
    """An option batchfit-cli does not take, or a value it refuses (exit code 2)."""


class InputError(BatchFitError, ValueError):
    """A model or file that cannot be loaded, validated or estimated (exit code 3)."""


def options_help():
    """batchfit-cli --help: every option, which the functions here take as keywords (--lora-rank: lora_rank)."""
    return native().help()


def run_cli(args):
    """Runs one batchfit-cli command line in process: (exit code, stdout, stderr)."""
    return native().run([str(a) for a in args])


def _flag_value(value):
    if isinstance(value, (list, tuple, set)):
        return ",".join(str(v) for v in value)
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back to the same double
    return str(value)


def option_arguments(options):
    """Keyword options as batchfit-cli flags: lora_rank=16 is --lora-rank 16, amsgrad=True is --amsgrad (False and
    None leave the option out), a list is comma-separated. batch_size is --batch; a number for gpu is GiB."""
    args = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        if name == "batch_size":
            name = "batch"
        if name == "gpu" and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = f"{value}GiB"
        if name == "lora" and isinstance(value, dict):
            args += option_arguments({f"lora_{k}": v for k, v in value.items()})
            continue
        flag = "--" + name.replace("_", "-")
        args += [flag] if value is True else [flag, _flag_value(value)]
    return args


def _message(stderr):
    lines = [ln[len("batchfit-cli: "):] if ln.startswith("batchfit-cli: ") else ln for ln in stderr.splitlines()]
    return "\n".join(ln for ln in lines if ln)


def _check(rc, stderr):
    for line in stderr.splitlines():
        if line.startswith("batchfit-cli: warning: ") or line.startswith("batchfit-cli: note: "):
            warnings.warn(line[len("batchfit-cli: "):], stacklevel=3)
    if rc in (EXIT_OK, EXIT_NO_FIT):
        return
    cls = UsageError if rc == EXIT_USAGE else InputError if rc == EXIT_BAD_INPUT else BatchFitError
    raise cls(_message(stderr) or f"batchfit-cli exited with {rc}", rc)


def _command(command, model, example_inputs, route, export_options, options):
    source = model_source(model, example_inputs, route, export_options)
    merged = {**source.options, **options}  # what the user says overrides what the model implies
    return source, [command, *source.args, *option_arguments(merged)]


def estimate(model, example_inputs=None, *, batch_size=None, gpu=None, route="auto", export_options=None,
             **options):
    """The GPU memory of one training step: an Estimate with the peak, its components, the phase and op where it
    happens, the top layers, and with a gpu the verdict and the largest batch.

    model: a preset id ("llama-2-7b"), a BatchFit model file, an ONNX file, a Hugging Face config.json (or folder,
    or a model id in the local cache), a dict (a model file or a config), a ModelSource, or an nn.Module: a
    transformers model goes by its config (route="config"; its PEFT LoRA and bitsandbytes quantization are read
    from it) and any other module is exported (route="export", batchfit.export, with example_inputs).
    example_inputs: for a module, a tensor with its batch dimension; for a transformers model, input_ids [B, S]
    give the sequence length. gpu: a catalogue id ("rtx-4090"), a capacity ("24GiB"), or a number of GiB.
    options: every batchfit-cli option by its name (precision="amp-bf16", optimizer="adamw", lora_rank=16,
    strategy="zero3", gpus=8; options_help() lists them)."""
    source, args = _command("estimate", model, example_inputs, route, export_options,
                            {"batch": batch_size, "gpu": gpu, **options})
    rc, out, err = run_cli(args + ["--json"])
    _check(rc, err)
    return Estimate(json.loads(out), args, source)


def max_batch(model, example_inputs=None, *, gpu, route="auto", export_options=None, **options):
    """The largest batch that fits `gpu` (and the largest multiple of 8), as batchfit-cli max-batch decides it;
    the arguments are estimate's."""
    source, args = _command("max-batch", model, example_inputs, route, export_options, {"gpu": gpu, **options})
    rc, out, err = run_cli(args + ["--json"])
    _check(rc, err)
    return MaxBatch(json.loads(out))


def check_fit(model, example_inputs=None, *, batch_size=None, gpu, route="auto", export_options=None, **options):
    """batchfit-cli check-fit: a CheckFit that is truthy when the step fits, with its one line. Raises
    BatchFitError where check-fit exits 2."""
    source, args = _command("check-fit", model, example_inputs, route, export_options,
                            {"batch": batch_size, "gpu": gpu, **options})
    rc, out, err = run_cli(args)
    _check(rc, err)
    return CheckFit(rc == EXIT_OK, out.strip(), rc)
