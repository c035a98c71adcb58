"""What batchfit.estimate, max_batch and check_fit return. An Estimate shows itself in a notebook: a table and the
stacked bar of the peak against the GPU (inline SVG, no plotting library needed)."""
import html
import os
import shutil
import subprocess
import tempfile

# The components of the peak, bottom to top, as the desktop app's chart stacks them (estimate --json "at_peak"),
# with the colours of its light palette.
COMPONENTS = (("parameter_bytes", "Parameters", "#4e79a7"), ("gradient_bytes", "Gradients", "#f28e2b"),
              ("optimizer_state_bytes", "Optimizer states", "#59a14f"),
              ("activation_bytes", "Activations", "#e15759"), ("temporary_bytes", "Temporaries", "#b07aa1"))


def gib(nbytes):
    """GiB with two decimals, as every figure is shown."""
    return f"{nbytes / (1 << 30):.2f} GiB"


class Estimate:
    """One training step at one batch (batchfit-cli estimate --json; docs/estimate-fields.md names every field,
    all of them in `json`)."""

    def __init__(self, report, args, source):
        self.json = report
        self._args = list(args)
        self._source = source  # keeps the temporary files its arguments name

    model = property(lambda self: self.json["model"])
    batch_size = property(lambda self: self.json["batch"])
    gpu = property(lambda self: self.json.get("gpu"))
    #: peak of PyTorch's allocated memory (torch.cuda.max_memory_allocated)
    peak_allocated_bytes = property(lambda self: self.json["peak_allocated_bytes"])
    #: peak reserved by the caching allocator (torch.cuda.max_memory_reserved)
    reserved_bytes = property(lambda self: self.json["overheads"]["peak_reserved_bytes"])
    #: what nvidia-smi shows at the peak: reserved plus the CUDA context and libraries
    required_bytes = property(lambda self: self.json["required_bytes"])
    phase = property(lambda self: self.json["peak_phase"])
    peak_op = property(lambda self: self.json["peak_op"])
    components = property(lambda self: dict(self.json["at_peak"]))
    layers = property(lambda self: list(self.json.get("top_layers", [])))
    verdict = property(lambda self: self.json.get("verdict"))

    @property
    def fits(self):
        """True or False on a GPU (the same decision as every surface: docs/memory-model.md), None without one."""
        return None if self.verdict is None else bool(self.verdict["fits"])

    @property
    def max_batch(self):
        """The largest batch that fits the GPU (None without one)."""
        m = self.json.get("max_batch")
        return None if m is None else m["largest"]

    def __repr__(self):
        where = f" on {self.gpu['name']}: {self.verdict['decision']}" if self.gpu else ""
        return (f"<batchfit.Estimate {self.model}, batch {self.batch_size}: needs {gib(self.required_bytes)}"
                f" (peak allocated {gib(self.peak_allocated_bytes)}, {self.phase}){where}>")

    def _rows(self):
        rows = [(label, self.components[key]) for key, label, _ in COMPONENTS]
        rows.append(("Peak allocated", self.peak_allocated_bytes))
        rows.append(("Reserved by PyTorch", self.reserved_bytes))
        rows.append(("Required (nvidia-smi)", self.required_bytes))
        return rows

    def chart_svg(self, width=560):
        """The peak's components as one stacked bar against the GPU's usable memory (dashed), with a legend
        (SVG text)."""
        usable = self.verdict["usable_bytes"] if self.verdict else 0
        bar = width - 4
        scale = bar / max(self.required_bytes, usable, 1)
        x, parts, legend = 2.0, [], []
        segments = [(self.components[key], label, colour) for key, label, colour in COMPONENTS]
        segments.append((self.required_bytes - self.peak_allocated_bytes, "Reserve + context", "#bab0ac"))
        for i, (nbytes, label, colour) in enumerate(segments):
            w = max(nbytes, 0) * scale
            title = f"<title>{html.escape(label)}: {gib(nbytes)}</title>"
            parts.append(f'<rect x="{x:.1f}" y="4" width="{w:.1f}" height="26" fill="{colour}">{title}</rect>')
            x += w
            lx, ly = 2 + (i % 3) * (width // 3), 64 + (i // 3) * 16
            legend.append(f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{colour}"/>'
                          f'<text x="{lx + 14}" y="{ly}" font-size="11">{html.escape(label)} {gib(nbytes)}</text>')
        needs = f"needs {gib(self.required_bytes)}"
        if usable:
            ux = 2 + usable * scale
            anchor = "end" if ux > width / 2 else "start"
            parts.append(f'<line x1="{ux:.1f}" x2="{ux:.1f}" y1="0" y2="34" stroke="#000" stroke-dasharray="3,2"/>'
                         f'<text x="{ux + (-3 if anchor == "end" else 3):.1f}" y="46" font-size="11" '
                         f'text-anchor="{anchor}">usable {gib(usable)}</text>')
            needs += f" ({self.verdict['decision']})"
        parts.append(f'<text x="2" y="46" font-size="11" font-weight="bold">{html.escape(needs)}</text>'
                     if not usable or 2 + usable * scale > width / 2 else
                     f'<text x="{width - 2}" y="46" font-size="11" font-weight="bold" text-anchor="end">'
                     f'{html.escape(needs)}</text>')
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{66 + 16 * 1}" '
                f'font-family="sans-serif">{"".join(parts + legend)}</svg>')

    def _repr_html_(self):
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td style='text-align:right'>{gib(v)}</td></tr>"
                       for k, v in self._rows())
        head = f"<b>{html.escape(self.model)}</b>, batch {self.batch_size}: peak in {html.escape(self.phase)}"
        if self.gpu:
            head += (f" on {html.escape(self.gpu['name'])}: <b>{html.escape(self.verdict['decision'])}</b>; "
                     f"largest batch {self.max_batch}")
        layers = "".join(f"<tr><td>{html.escape(l['path'])}</td><td>{html.escape(l['op'])}</td>"
                         f"<td style='text-align:right'>{gib(l['saved_activation_bytes'])}</td></tr>"
                         for l in self.layers)
        return (f"<div>{head}<br>{self.chart_svg()}<table>{rows}</table>"
                f"<details><summary>Top layers by saved activations</summary><table>{layers}</table></details>"
                "</div>")

    def save(self, path):
        """Writes the model with this set-up (GPU, batch, every setting) as a BatchFit model file."""
        from .api import _check, run_cli
        rc, _, err = run_cli(self._args + ["--save", os.fspath(path)])
        _check(rc, err)
        return os.fspath(path)

    def open_gui(self, executable=None):
        """Starts the desktop app (`batchfit`, on PATH or given) with this model and set-up loaded; returns the
        process. Raises FileNotFoundError when the app is not installed."""
        exe = executable or os.environ.get("BATCHFIT_GUI") or shutil.which("batchfit")
        if not exe:
            raise FileNotFoundError("the BatchFit desktop app (batchfit) is not on PATH; build it with ./run.sh or "
                                    "give its path (open_gui(executable=...) or $BATCHFIT_GUI)")
        path = self.save(os.path.join(tempfile.mkdtemp(prefix="batchfit-gui-"), "setup.json"))
        return subprocess.Popen([exe, "--model", path])


class MaxBatch:
    """The largest batch on a GPU (batchfit-cli max-batch --json)."""

    def __init__(self, report):
        self.json = report

    largest = property(lambda self: self.json["largest"])
    largest_multiple_of_8 = property(lambda self: self.json["largest_multiple_of_8"])
    #: True when the search stopped at its cap (the model fits more than it tried)
    capped = property(lambda self: self.json["capped"])
    required_bytes = property(lambda self: self.json["required_bytes_at_largest"])
    usable_bytes = property(lambda self: self.json["usable_bytes"])

    def __int__(self):
        return self.largest

    def __repr__(self):
        return (f"<batchfit.MaxBatch {self.largest}{'+' if self.capped else ''} (multiple of 8: "
                f"{self.largest_multiple_of_8}), needs {gib(self.required_bytes)} of {gib(self.usable_bytes)}>")


class CheckFit:
    """check-fit's answer: truthy when the step fits; `line` is its one line, `exit_code` 0 or 1."""

    def __init__(self, fits, line, exit_code):
        self.fits, self.line, self.exit_code = fits, line, exit_code

    def __bool__(self):
        return self.fits

    def __repr__(self):
        return f"<batchfit.CheckFit {self.line}>"
