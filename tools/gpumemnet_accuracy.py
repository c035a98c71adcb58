#!/usr/bin/env python3
"""BatchFit against the public GPUMemNet measurements (issue 26, item 5): docs/accuracy-gpu.md.

    python3 tools/gpumemnet_accuracy.py convert [--raw DIR] [--write-models DIR]
    python3 tools/gpumemnet_accuracy.py measure BATCHFIT_CLI [--jobs 2] [--limit N]
    python3 tools/gpumemnet_accuracy.py check BATCHFIT_CLI
    python3 tools/gpumemnet_accuracy.py doc

Standard library only (no torch, no GPU).

The data: itu-rad/GPUMemNet @ f01eb0592e1b2030d3bceb73441747912b6652a6 (tests/data/gpumemnet/README.md). Every row
is one training run on an NVIDIA A100-SXM4-40GB (fp32, torch.optim.Adam defaults, no AMP, cudnn.benchmark not set)
and its figure is the largest `nvidia-smi --query-gpu=memory.used -l 1` sample seen during the run (about 60 s).
The three CSVs are committed xz-compressed in tests/data/gpumemnet/.

convert: (with --raw DIR) compresses the raw CSVs of DIR into tests/data/gpumemnet/*.csv.xz after checking their
    sha256; then rebuilds every row as a BatchFit model file in memory, checks the rebuilt network layer by layer
    against the (type, output elements, parameters) list the GPUMemNet cleaner parsed out of the run's
    torchsummary printout, and prints the counts (rows, rebuildable, excluded and why). --write-models DIR also
    writes the model files.
measure: `batchfit-cli estimate --model FILE --batch B --optimizer adam --gpu a100-40gb --eager-loading --json`
    for every clean row (and the same without --eager-loading, and with --epoch-samples 4096, for comparison), in
    a process pool; writes tests/data/gpumemnet/results.json: the summary per family, the CNN error fits, and a
    committed sample of rows with their inputs and BatchFit's figures at the time.
check: (< 30 s) estimates the committed sample again; fails when a figure moved by more than 1 MiB (regenerate
    with `measure` after a deliberate change to the model), or when the statistics over the sample leave the
    committed bounds.
doc: regenerates docs/accuracy-gpu.md from results.json.

Definitions (the bar of issue 26): the *step* of a row is measured - BatchFit's non-PyTorch figure (JSON
`overheads.non_pytorch.total_bytes`); a row counts when its step is above 500 MiB; the error is
(BatchFit's required_bytes - measured) / step.
"""
import argparse
import csv
import hashlib
import io
import json
import lzma
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "tests", "data", "gpumemnet")
RESULTS = os.path.join(DATA, "results.json")
DOC = os.path.join(ROOT, "docs", "accuracy-gpu.md")
MIB = 1 << 20
GIB = 1 << 30

REPO = "itu-rad/GPUMemNet"
COMMIT = "f01eb0592e1b2030d3bceb73441747912b6652a6"
# file -> (family, origin in the repository, sha256 of the raw CSV)
CSVS = {
    "mlp_data_step1.csv": ("mlp1", "Datasets/MLP/mlp_data_step1.csv @ f01eb05 (blob 19bc8ce)",
                           "5f7cd9e1"),
    "mlp_data_step2.csv": ("mlp2", "Datasets/MLP/mlp_data_step2.csv @ f01eb05 (blob 28294ac)",
                           "c095068a"),
    "cnn_data_step1_partial_f5a3f5d.csv": ("cnn", "cnn_data_step1.csv @ f5a3f5d (blob d894700)", "a51ccd74"),
}
FAMILIES = ("mlp1", "mlp2", "cnn")
FAMILY_NAMES = {"mlp1": "MLP step 1", "mlp2": "MLP step 2", "cnn": "CNN (step 1, partial file)"}
GPU = "a100-40gb"
BASE_ARGS = ["--optimizer", "adam", "--gpu", GPU, "--json"]
VARIANTS = {  # name -> extra CLI arguments
    "eager": ["--eager-loading"],
    "lazy": [],
    "eager_epoch": ["--eager-loading", "--epoch-samples", "4096"],
}
STEP_MIN = 500 * MIB     # a row counts when its step uses more than this
BIG_STEP = GIB           # "never under by more than 3% on rows whose step > 1 GiB"
BAR = {"mlp1": {"median": 0.01, "p90": 0.05}, "mlp2": {"median": 0.01, "p90": 0.05}, "cnn": {"median": 0.05}}
UNDER_LIMIT = 0.03
MOVE_LIMIT = MIB         # check: a committed figure may move by at most this much
SAMPLE_PER_FAMILY = 20
BUCKETS = [(-math.inf, -0.10), (-0.10, -0.03), (-0.03, -0.01), (-0.01, 0.0), (0.0, 0.01), (0.01, 0.03),
           (0.03, 0.10), (0.10, math.inf)]

csv.field_size_limit(sys.maxsize)


# ---------------------------------------------------------------------------------------------------------------
# Reading the committed CSVs
# ---------------------------------------------------------------------------------------------------------------
def read_csv(name, raw_dir=None):
    if raw_dir:
        with open(os.path.join(raw_dir, name), newline="") as f:
            text = f.read()
    else:
        with lzma.open(os.path.join(DATA, name + ".xz"), "rt", newline="") as f:
            text = f.read()
    return list(csv.DictReader(io.StringIO(text, newline="")))


def parse_layer_list(s):
    """The cleaner's list of (type, output elements, params) tuples: Python literal syntax, tuples of str/int."""
    s = (s or "").strip()
    if not s:
        return []
    import ast
    return [tuple(t) for t in ast.literal_eval(s)]


# Activation names: the launchers' CLI names -> torch module class (NeuroNetGen_scripts/*/ activation dicts)
ACT_CLI_TO_TORCH = {"relu": "ReLU", "leaky_relu": "LeakyReLU", "prelu": "PReLU", "elu": "ELU", "selu": "SELU",
                    "tanh": "Tanh", "softplus": "Softplus", "swish": "SiLU", "mish": "Mish", "gelu": "GELU",
                    "identity": "Identity"}
# torch module -> BatchFit op. BatchFit has no PReLU, ELU, SELU, Softplus or Mish: each of these saves its *input*
# for backward (prelu: input + weight; elu/selu: elu_backward(is_result=False, self); softplus_backward(self);
# mish_backward(self)) and returns a new tensor of the same shape, which is what leaky_relu / gelu do in BatchFit.
# PReLU's one parameter (4 bytes, plus its gradient and Adam states) is left out.
ACT_OP = {"ReLU": ("relu", {}), "LeakyReLU": ("leaky_relu", {}), "PReLU": ("leaky_relu", {}),
          "ELU": ("gelu", {}), "SELU": ("gelu", {}), "Softplus": ("gelu", {}), "Mish": ("gelu", {}),
          "GELU": ("gelu", {}), "Tanh": ("tanh", {}), "SiLU": ("silu", {}), "Identity": ("identity", {})}


# ---------------------------------------------------------------------------------------------------------------
# MLP: NeuroNetGen_scripts/MLP/mlp.py (blob 9ede7af) and mlp_next.py (blob 428fb5a), MLP.__init__
# ---------------------------------------------------------------------------------------------------------------
MLP_NAME = re.compile(r"input:(\d+)_output:(\d+)_depth:(\d+)_arch:([a-z]+)_batch:(\d+)"
                      r"(?:_act:([a-z_]+)_dropout:([0-9.eE+-]+)_dropout:(True|False)_batchnorm:(True|False))?")


def mlp_spec(filename, step, final_act=None):
    m = MLP_NAME.fullmatch(filename[:-4] if filename.endswith(".out") else filename)
    if not m:
        raise ValueError("unparsed MLP file name: " + filename)
    I, O, D, arch, B = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4), int(m.group(5))
    if step == 1:
        act, bn, do, p = "ReLU", False, False, None
    else:
        act, p = ACT_CLI_TO_TORCH[m.group(6)], float(m.group(7))
        do, bn = m.group(8) == "True", m.group(9) == "True"
    layers = []

    def hidden(i, o):
        layers.append(("linear", i, o))
        if bn:
            layers.append(("batchnorm1d", o))
        layers.append(("act", act, o))
        if do:
            layers.append(("dropout", p, o))

    in_f = I
    if arch in ("pyramid", "bottleneck"):
        for _ in range(D):
            out = max(int(in_f * 0.5), O)
            hidden(in_f, out)
            in_f = out
        if arch == "bottleneck":
            out = max(int(in_f * 0.5), O)
            hidden(in_f, out)
            in_f = out
    elif arch == "uniform":
        for _ in range(D):
            hidden(in_f, in_f)
    elif arch == "gradual":
        dec = (I - O) // D
        for _ in range(D):
            out = max(in_f - dec, O)
            hidden(in_f, out)
            in_f = out
    else:
        raise ValueError(arch)
    layers.append(("linear", in_f, O))
    if step == 2:
        layers.append(("softmax", O) if O > 1 else ((final_act or "?"), 1))
    return {"input": I, "classes": O, "depth": D, "arch": arch, "batch": B, "act": act, "bn": bn, "dropout": do,
            "p": p, "layers": layers}


def mlp_cleaner_list(spec):
    """What data_cleaner_mlp_step{1,2}.py (blobs 4c5d96f, 5cec9bc) wrote for this network."""
    out = []
    for L in spec["layers"]:
        if L[0] == "linear":
            out.append(("linear", L[2], L[1] * L[2] + L[2]))
        elif L[0] == "batchnorm1d":
            out.append(("batch_normalization", L[1], 2 * L[1]))
        elif L[0] == "act":
            out.append((L[1], L[2], 0))
        elif L[0] == "dropout":
            out.append(("dropout", L[2], 0))
        elif L[0] == "softmax":
            out.append(("Softmax", L[1], 0))
        else:
            out.append((L[0], 1, 0))
    return out


def mlp_model(spec, name):
    layers = []
    n = 0
    for L in spec["layers"]:
        if L[0] == "linear":
            layers.append({"name": f"fc{n}", "op": "linear", "out_features": L[2]})
            n += 1
        elif L[0] == "batchnorm1d":
            layers.append({"name": f"bn{n - 1}", "op": "batchnorm1d"})
        elif L[0] == "act":
            op, attrs = ACT_OP[L[1]]
            layers.append(dict({"name": f"act{n - 1}", "op": op}, **attrs))
        elif L[0] == "dropout":
            layers.append({"name": f"drop{n - 1}", "op": "dropout", "p": L[1]})
        elif L[0] == "softmax":
            layers.append({"name": "softmax", "op": "softmax", "dim": -1})
        elif L[0] == "Sigmoid":
            layers.append({"name": "sigmoid", "op": "sigmoid"})
        elif L[0] == "Identity":
            layers.append({"name": "out_identity", "op": "identity"})
    if spec["classes"] > 1:
        layers.append({"name": "loss", "op": "cross_entropy"})
    else:
        # BCEWithLogitsLoss on (N,1) float targets: BatchFit has no BCE; mse_loss has the same float target of the
        # output's shape and saves as little (N floats)
        layers.append({"name": "loss", "op": "mse_loss"})
    return {"format": "batchfit-model", "version": 1, "name": name,
            "input": {"shape": [spec["input"]], "dtype": "float32"}, "layers": layers}


def mlp_rows(rows, step, family, fname):
    out = []
    for idx, r in enumerate(rows):
        got = parse_layer_list(r["Activations-Params"])
        final = None
        if step == 2 and got and got[-1][0] in ("Sigmoid", "Identity"):
            final = got[-1][0]
        spec = mlp_spec(r["Filename"], step, final)
        B, O = spec["batch"], spec["classes"]
        excluded = []
        if mlp_cleaner_list(spec) != got:
            excluded.append("not_rebuildable: the rebuilt network differs from the cleaner's layer list")
        if step == 1 and O == 1:
            excluded.append("crash_first_step: BCEWithLogitsLoss gets an int64 (N,) target for an (N,1) output; "
                            "context + model + one forward only")
        if step == 2 and spec["bn"] and 4096 % B == 1:
            excluded.append("crash_end_of_epoch_1: BatchNorm1d on a last batch of 1 sample; the 1 s polling may "
                            "miss the training peak")
        row = {"family": family, "file": fname, "row": idx, "filename": r["Filename"], "batch": B,
               "measured_mib": int(r["Max GPU Memory (MiB)"]), "status": "SUCCESSFUL", "excluded": excluded,
               "features": {"input": spec["input"], "classes": O, "depth": spec["depth"], "arch": spec["arch"],
                            "act": spec["act"], "bn": spec["bn"], "dropout": spec["dropout"],
                            "widths": [L[2] for L in spec["layers"] if L[0] == "linear"]}}
        row["model"] = mlp_model(spec, f"gpumemnet-{family}-{idx}")
        out.append(row)
    return out


# ---------------------------------------------------------------------------------------------------------------
# CNN: NeuroNetGen_scripts/CNN/cnn.py (blob 393434f: CNN, ConvBlock, ResidualBlock, DenseBlock, TransitionBlock)
# ---------------------------------------------------------------------------------------------------------------
MAXF = 2048
CNN_NAME = re.compile(r"input_channels:(\d+)_num_classes:(\d+)_depth:(\d+)_arch:([a-z_]+?)_base_filters:(\d+)"
                      r"_batch:(\d+)_input_size:(\d+)_act:([a-z_]+)_dropout:([0-9.eE+-]+)_dropout:(True|False)"
                      r"_batchnorm:(True|False)")


def conv_out(h, k, s, p):
    return (h + 2 * p - k) // s + 1


class CNNBuilder:
    """CNN.__init__ and the forward's shapes. The launcher never passes --use_pooling, so only the dense
    architecture's transition placement depends on the unseeded np.random.rand() (pooling_frequency)."""

    def __init__(self, cfg, dense_freq=None):
        self.c = cfg
        self.freq = dense_freq
        self.trace = []   # the cleaner's per-sample (type, output elements, params)
        self.convs = []   # (cin, cout, k, s, p, h, w, ho, wo) of every convolution

    def convblock(self, cin, cout, h, w, k=3, s=1, pad=1, act=None, bn=None, do=None):
        act = self.c["act"] if act is None else act
        bn = self.c["bn"] if bn is None else bn
        do = self.c["dropout"] if do is None else do
        ho, wo = conv_out(h, k, s, pad), conv_out(w, k, s, pad)
        self.convs.append((cin, cout, k, s, pad, h, w, ho, wo))
        L = [("conv2d", cout, k, s, pad)]
        self.trace.append(("conv2d", cout * ho * wo, cin * cout * k * k + cout))
        if bn:
            L.append(("batchnorm2d",))
            self.trace.append(("batchnorm2d", cout * ho * wo, 2 * cout))
        L.append(("act", act))
        self.trace.append((act, cout * ho * wo, 0))
        if do:
            L.append(("dropout", self.c["p"]))
            self.trace.append(("dropout", cout * ho * wo, 0))
        return L, ho, wo

    def build(self):
        c = self.c
        arch, depth, base = c["arch"], c["depth"], c["base"]
        H = W = c["size"]
        cin = c["channels"]
        blocks = []
        cur = H  # the size the code tracks (it halves with //, the real size is (H-1)//2+1)
        if arch == "residual":
            gf = (MAXF / base) ** (1 / depth)
            for i in range(depth // 2):
                out = min(int(base * (gf ** i)), MAXF)
                stride = 2 if i % 2 == 1 and cur > 7 else 1
                sc = None
                if cin != out or stride != 1:
                    ho, wo = conv_out(H, 1, stride, 0), conv_out(W, 1, stride, 0)
                    self.convs.append((cin, out, 1, stride, 0, H, W, ho, wo))
                    sc = [("conv2d", out, 1, stride, 0)]
                    self.trace.append(("conv2d", out * ho * wo, cin * out + out))
                    if c["bn"]:
                        sc.append(("batchnorm2d",))
                        self.trace.append(("batchnorm2d", out * ho * wo, 2 * out))
                b1, h1, w1 = self.convblock(cin, out, H, W, s=stride)
                b2, h2, w2 = self.convblock(out, out, h1, w1)
                blocks.append(("residual", sc, b1, b2))
                cin, H, W = out, h2, w2
                if stride == 2:
                    cur //= 2
                if cur <= 7:
                    break
        elif arch == "dense":
            count = depth // 4
            for i in range(count):
                ls = []
                for j in range(4):
                    L, _, _ = self.convblock(cin + j * 32, 32, H, W)
                    ls.append(L)
                cin += 128
                blocks.append(("dense", ls))
                if cur >= 14:
                    cur //= 2
                if i % self.freq == 0 and i != count - 1:
                    L, H2, W2 = self.convblock(cin, cin // 2, H, W, k=1, s=1, pad=0, act="ReLU", do=False)
                    pool = H2 > 1 and W2 > 1
                    H, W = (H2 // 2, W2 // 2) if pool else (H2, W2)
                    blocks.append(("transition", L, pool))
                    cin //= 2
        else:
            contracting = depth // 2
            expanding = depth - contracting
            for i in range(depth):
                if arch == "pyramid":
                    out = min(int(base * (((MAXF / base) ** (1 / depth)) ** i)), MAXF)
                elif arch == "reverse_pyramid":
                    out = max(int(base / (((MAXF / base) ** (1 / depth)) ** i)), 1)
                elif arch == "bottleneck":
                    g = 2 if depth <= 2 else (MAXF / base) ** (1 / (depth - 1))
                    out = base * 2 if i == 0 else min(int(base * (g ** (i - 1))), MAXF)
                elif arch == "gradual":
                    out = min(int(base * (((MAXF / base) ** (1 / (2 * depth))) ** i)), MAXF)
                elif arch == "hourglass":
                    if i < contracting:
                        out = min(int(base * (((MAXF / base) ** (1 / contracting)) ** i)), MAXF)
                    else:
                        out = max(int(base * (((MAXF / base) ** (1 / expanding)) ** (depth - i - 1))), base)
                elif arch == "uniform":
                    out = base
                else:
                    raise ValueError(arch)
                L, H, W = self.convblock(cin, out, H, W)
                blocks.append(("plain", L))
                cin = out
        K = c["classes"]
        self.trace.append(("adaptive_avg_pool2d", cin, 0))
        self.trace.append(("linear", K, cin * K + K))
        if K > 1:
            self.trace.append(("softmax", K, 0))
        return blocks, cin


def cnn_cleaner_list(trace):
    """data_cleaner_cnn_step1.py (blob 5aa4cad, per-sample counts): [] when no activation layer was printed
    (Counter([]).most_common(1)[0] raises and the row is left empty)."""
    acts = {"ReLU", "LeakyReLU", "PReLU", "ELU", "SELU", "GELU", "Tanh", "SiLU", "Softplus", "Mish"}
    return list(trace) if any(t[0] in acts for t in trace) else []


def cnn_layers(L, prefix):
    out = []
    for e in L:
        if e[0] == "conv2d":
            out.append({"name": prefix + "conv", "op": "conv2d", "out_channels": e[1], "kernel": e[2],
                        "stride": e[3], "padding": e[4]})
        elif e[0] == "batchnorm2d":
            out.append({"name": prefix + "bn", "op": "batchnorm2d"})
        elif e[0] == "act":
            op, attrs = ACT_OP[e[1]]
            out.append(dict({"name": prefix + "act", "op": op}, **attrs))
        elif e[0] == "dropout":
            out.append({"name": prefix + "drop", "op": "dropout", "p": e[1]})
    return out


def cnn_model(cfg, blocks, name):
    layers = []
    for i, b in enumerate(blocks):
        if b[0] == "plain":
            layers += cnn_layers(b[1], f"b{i}_")
        elif b[0] == "residual":
            _, sc, b1, b2 = b
            blk = {"name": f"b{i}", "layers": cnn_layers(b1, "c1_") + cnn_layers(b2, "c2_"),
                   "shortcut": cnn_layers(sc, "sc_") if sc else "identity"}
            layers.append(blk)
        elif b[0] == "dense":
            # DenseBlock.forward: features=[x]; each layer runs on torch.cat(features, 1) (a new tensor, a copy of
            # x for the first layer); the block returns torch.cat(features, 1)
            inner = [{"name": "cat0", "op": "contiguous", "inputs": ["@input"]}]
            outs = []
            for j, L in enumerate(b[1]):
                ls = cnn_layers(L, f"l{j}_")
                ls[0]["inputs"] = [f"cat{j}"]
                inner += ls
                outs.append(ls[-1]["name"])
                inner.append({"name": f"cat{j + 1}", "op": "concat", "inputs": ["@input"] + outs, "dim": 0})
            layers.append({"name": f"b{i}", "layers": inner})
        elif b[0] == "transition":
            layers += cnn_layers(b[1], f"b{i}_")
            if b[2]:
                layers.append({"name": f"b{i}_pool", "op": "avgpool2d", "kernel": 2, "stride": 2})
    layers += [{"name": "gap", "op": "adaptive_avgpool2d", "output_size": 1},
               {"name": "flatten", "op": "flatten"},
               {"name": "fc", "op": "linear", "out_features": cfg["classes"]}]
    if cfg["classes"] > 1:
        layers += [{"name": "softmax", "op": "softmax", "dim": -1}, {"name": "loss", "op": "cross_entropy"}]
    else:
        layers += [{"name": "sigmoid", "op": "sigmoid"}, {"name": "loss", "op": "mse_loss"}]
    return {"format": "batchfit-model", "version": 1, "name": name,
            "input": {"shape": [cfg["channels"], cfg["size"], cfg["size"]], "dtype": "float32"}, "layers": layers}


def conv_features(convs, B, C, S):
    """Per-row quantities for the workspace diagnosis (bytes at the row's batch, fp32)."""
    f = {"input_bytes": 4 * B * C * S * S, "convs": len(convs)}
    if not convs:
        f.update(max_conv_io_bytes=0, max_conv_out_bytes=0, max_conv_in_bytes=0, sum_conv_io_bytes=0,
                 max_conv_weight_bytes=0, max_conv_flops=0, max_channels=0, max_conv_bhwc=0,
                 max_conv_unfold_bytes=0)
        return f
    io_ = [4 * B * (ci * h * w + co * ho * wo) for (ci, co, k, s, p, h, w, ho, wo) in convs]
    f.update(
        max_conv_io_bytes=max(io_),
        sum_conv_io_bytes=sum(io_),
        max_conv_out_bytes=max(4 * B * co * ho * wo for (ci, co, k, s, p, h, w, ho, wo) in convs),
        max_conv_in_bytes=max(4 * B * ci * h * w for (ci, co, k, s, p, h, w, ho, wo) in convs),
        max_conv_weight_bytes=max(4 * ci * co * k * k for (ci, co, k, s, p, h, w, ho, wo) in convs),
        max_conv_flops=max(2 * B * ci * co * k * k * ho * wo for (ci, co, k, s, p, h, w, ho, wo) in convs),
        max_channels=max(max(ci, co) for (ci, co, *_r) in convs),
        # batch * H * W * C of the largest conv (by its output)
        max_conv_bhwc=max(B * co * ho * wo for (ci, co, k, s, p, h, w, ho, wo) in convs),
        # im2col of the largest conv: B * Cin * k * k * Ho * Wo floats
        max_conv_unfold_bytes=max(4 * B * ci * k * k * ho * wo for (ci, co, k, s, p, h, w, ho, wo) in convs),
    )
    return f


def cnn_rows(rows, family, fname):
    out = []
    for idx, r in enumerate(rows):
        m = CNN_NAME.fullmatch(r["Filename"][:-4] if r["Filename"].endswith(".out") else r["Filename"])
        if not m:
            raise ValueError("unparsed CNN file name: " + r["Filename"])
        cfg = {"channels": int(m.group(1)), "classes": int(m.group(2)), "depth": int(m.group(3)),
               "arch": m.group(4), "base": int(m.group(5)), "batch": int(m.group(6)), "size": int(m.group(7)),
               "act": ACT_CLI_TO_TORCH[m.group(8)], "p": float(m.group(9)), "dropout": m.group(10) == "True",
               "bn": m.group(11) == "True"}
        row = {"family": family, "file": fname, "row": idx, "filename": r["Filename"], "batch": cfg["batch"],
               "measured_mib": int(r["Max GPU Memory (MiB)"]), "status": r.get("Status", ""), "excluded": [],
               "features": {k: cfg[k] for k in ("channels", "size", "classes", "arch", "depth", "base", "act",
                                                 "bn", "dropout")}}
        out.append(row)
        if cfg["size"] // 7 == 0:
            row["excluded"].append("no_model: input_size < 7, math.log2(0) raises in CNN.__init__ before CUDA is "
                                   "used (0 MiB)")
            row["model"] = None
            continue
        got = [tuple(x) for x in parse_layer_list(r["Activations-Params"])]
        tp = max(1, int(math.log2(cfg["size"] // 7)))
        freqs = [max(1, math.ceil(cfg["depth"] / tp)), 5] if cfg["arch"] == "dense" else [None]
        cands = []
        for fq in freqs:
            b = CNNBuilder(cfg, fq)
            blocks, _ = b.build()
            cands.append((blocks, b, cnn_cleaner_list(b.trace)))
        distinct = {repr(c[0]) for c in cands}
        if len(distinct) == 1:
            blocks, b, exp = cands[0]
            ok = exp == got
        else:
            match = [c for c in cands if c[2] == got]
            ok = bool(match)
            blocks, b, exp = match[0] if match else cands[0]
        if not ok:
            row["excluded"].append("not_rebuildable: the rebuilt network differs from the cleaner's layer list")
        if r.get("Status") == "OOM_CRASH":
            row["excluded"].append("oom_crash: torch.OutOfMemoryError; the figure is not the run's need")
        if cfg["classes"] == 1:
            row["excluded"].append("crash_first_step: Sigmoid + BCELoss with an int64 (N,) target")
        row["model"] = cnn_model(cfg, blocks, f"gpumemnet-{family}-{idx}")
        row["features"].update(conv_features(b.convs, cfg["batch"], cfg["channels"], cfg["size"]))
        row["features"]["head_only"] = not blocks
    return out


def load_rows(raw_dir=None):
    rows = []
    for fname, (family, _origin, _sha) in CSVS.items():
        data = read_csv(fname, raw_dir)
        if family == "cnn":
            rows += cnn_rows(data, family, fname)
        else:
            rows += mlp_rows(data, 1 if family == "mlp1" else 2, family, fname)
    return rows


def row_id(r):
    return f"{r['family']}:{r['row']}"


# ---------------------------------------------------------------------------------------------------------------
# Estimating
# ---------------------------------------------------------------------------------------------------------------
def estimate(cli, model, batch, extra, tmpdir):
    path = os.path.join(tmpdir, f"m{os.getpid()}.json")
    with open(path, "w") as f:
        json.dump(model, f)
    p = subprocess.run([cli, "estimate", "--model", path, "--batch", str(batch)] + BASE_ARGS + extra,
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"batchfit-cli exit {p.returncode}: {p.stderr.strip()[:400]}")
    d = json.loads(p.stdout)
    v = d.get("verdict") or {}
    return {"required": d["required_bytes"], "non_pytorch": d["overheads"]["non_pytorch"]["total_bytes"],
            "cudnn": d["overheads"]["non_pytorch"].get("cudnn_bytes", 0),
            "reserved": d["overheads"].get("peak_reserved_bytes", d["overheads"].get("reserved_bytes")),
            "allocated": d["peak_allocated_bytes"], "decision": v.get("decision"),
            "gpu_required": v.get("required_bytes")}


_CLI = None
_TMP = None


def _init(cli, tmp):
    global _CLI, _TMP
    _CLI, _TMP = cli, tmp


def _work(item):
    rid, model, batch, variants = item
    res = {}
    for v in variants:
        res[v] = estimate(_CLI, model, batch, VARIANTS[v], _TMP)
    return rid, res


def estimate_all(cli, items, jobs, variants):
    import multiprocessing
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = [(row_id(r), r["model"], r["batch"], variants) for r in items]
        if jobs <= 1:
            _init(cli, tmp)
            for w in work:
                k, v = _work(w)
                out[k] = v
        else:
            with multiprocessing.Pool(jobs, initializer=_init, initargs=(cli, tmp)) as pool:
                for i, (k, v) in enumerate(pool.imap_unordered(_work, work, chunksize=16)):
                    out[k] = v
                    if (i + 1) % 1000 == 0:
                        print(f"  {i + 1}/{len(work)}", file=sys.stderr)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------------------------
def quantile(xs, q):
    """Linear interpolation between order statistics (numpy's default)."""
    if not xs:
        return None
    s = sorted(xs)
    pos = (len(s) - 1) * q
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def row_error(measured_mib, est, variant="eager", np_variant="eager"):
    """(BatchFit - measured) / (measured - non_pytorch), the step measured by BatchFit's non-PyTorch figure of
    np_variant (the eager-loading stack)."""
    meas = measured_mib * MIB
    step = meas - est[np_variant]["non_pytorch"]
    return (est[variant]["required"] - meas) / step if step > 0 else None, step


def summarize(recs, variant="eager"):
    """recs: dicts with measured_mib, est (variant -> figures). Statistics over rows whose step > 500 MiB."""
    errs, under_big, big, worst = [], 0, 0, []
    counted = []
    for r in recs:
        e, step = row_error(r["measured_mib"], r["est"], variant)
        if step <= STEP_MIN or e is None:
            continue
        counted.append((e, step, r))
        errs.append(e)
        if step > BIG_STEP:
            big += 1
            if e < -UNDER_LIMIT:
                under_big += 1
    absd = [abs(e) for e in errs]
    hist = [sum(1 for e in errs if lo <= e < hi) for lo, hi in BUCKETS]
    return {
        "rows_clean": len(recs),
        "rows_counted": len(errs),
        "median_abs": quantile(absd, 0.5),
        "p90_abs": quantile(absd, 0.9),
        "median_signed": quantile(errs, 0.5),
        "mean_signed": (sum(errs) / len(errs)) if errs else None,
        "median_signed_mib": quantile([e * s / MIB for e, s, _ in counted], 0.5),
        "rows_step_over_1gib": big,
        "under_3pct_over_1gib": under_big,
        "share_under_3pct_over_1gib": (under_big / big) if big else None,
        "histogram": hist,
    }


def bar_verdict(family, s):
    b = BAR[family]
    ok = {}
    if s["median_abs"] is not None:
        ok["median"] = s["median_abs"] <= b["median"]
        if "p90" in b:
            ok["p90"] = s["p90_abs"] <= b["p90"]
    ok["never_under_3pct_over_1gib"] = s["under_3pct_over_1gib"] == 0
    ok["met"] = all(ok.values())
    return ok


def linfit(xs, ys):
    """Least squares y = a + b x; returns a, b, r^2 and the residual's median absolute value."""
    n = len(xs)
    if n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    b = sxy / sxx
    a = my - b * mx
    res = [y - (a + b * x) for x, y in zip(xs, ys)]
    return {"intercept": a, "slope": b, "r2": (sxy * sxy) / (sxx * syy),
            "median_abs_residual": quantile([abs(v) for v in res], 0.5), "n": n}


def prop_fit(xs, ys):
    """y = b x through the origin."""
    sxx = sum(x * x for x in xs)
    if not sxx:
        return None
    b = sum(x * y for x, y in zip(xs, ys)) / sxx
    res = [y - b * x for x, y in zip(xs, ys)]
    return {"slope": b, "median_abs_residual": quantile([abs(v) for v in res], 0.5), "n": len(xs)}


def pearson(xs, ys):
    f = linfit(xs, ys)
    if not f:
        return None
    return math.copysign(math.sqrt(f["r2"]), f["slope"])


def cnn_diagnosis(recs):
    """How the CNN error in MiB relates to the convolutions' sizes (what a cuDNN workspace model needs)."""
    pts = []
    for r in recs:
        e, step = row_error(r["measured_mib"], r["est"])
        if step <= STEP_MIN or e is None or r["features"].get("head_only"):
            continue
        err_mib = (r["est"]["eager"]["required"] - r["measured_mib"] * MIB) / MIB
        pts.append((err_mib, r["features"], r))
    out = {"rows": len(pts)}
    if len(pts) < 3:
        return out
    ys = [-p[0] for p in pts]  # the shortfall (MiB): measured - BatchFit
    keys = ["max_conv_io_bytes", "max_conv_out_bytes", "max_conv_in_bytes", "sum_conv_io_bytes", "input_bytes",
            "max_conv_bhwc", "max_conv_unfold_bytes", "max_conv_weight_bytes", "max_conv_flops", "max_channels"]
    corr = {}
    fits = {}
    for k in keys:
        xs = [p[1][k] / (MIB if k.endswith("bytes") else 1) for p in pts]
        corr[k] = pearson(xs, ys)
        fits[k] = linfit(xs, ys)
        pf = prop_fit(xs, ys)
        if pf:
            fits[k + ":through_origin"] = pf
    out["shortfall_mib_pearson"] = corr
    out["shortfall_mib_fits"] = fits
    # by architecture and by input channels
    by = {}
    for k in ("arch", "channels", "bn", "dropout"):
        groups = {}
        for err_mib, f, r in pts:
            groups.setdefault(str(f[k]), []).append(err_mib)
        by[k] = {g: {"n": len(v), "median_err_mib": quantile(v, 0.5)} for g, v in sorted(groups.items())}
    out["by"] = by
    # shortfall against the step (is it a fraction of the step?)
    steps = [(p[2]["measured_mib"] * MIB - p[2]["est"]["eager"]["non_pytorch"]) / MIB for p in pts]
    out["shortfall_vs_step"] = linfit(steps, ys)
    bf_steps = [(p[2]["est"]["eager"]["required"] - p[2]["est"]["eager"]["non_pytorch"]) / MIB for p in pts]
    out["shortfall_vs_batchfit_step"] = linfit(bf_steps, ys)
    out["shortfall_over_batchfit_step"] = {"p10": quantile([y / x for x, y in zip(bf_steps, ys)], 0.1),
                                           "p50": quantile([y / x for x, y in zip(bf_steps, ys)], 0.5),
                                           "p90": quantile([y / x for x, y in zip(bf_steps, ys)], 0.9)}
    ratio = {}
    for k in ("arch",):
        groups = {}
        for (err_mib, f, r), x, y in zip(pts, bf_steps, ys):
            groups.setdefault(str(f[k]), []).append(y / x)
        ratio[k] = {g: quantile(v, 0.5) for g, v in sorted(groups.items())}
    out["shortfall_over_batchfit_step_by"] = ratio
    out["shortfall_mib_quantiles"] = {q: quantile(ys, q) for q in ("0.1", "0.5", "0.9")} if False else {
        "p10": quantile(ys, 0.1), "p50": quantile(ys, 0.5), "p90": quantile(ys, 0.9)}
    return out


def cnn_bins(recs):
    """The shortfall (MiB) of every clean CNN run with a convolution, binned by BatchFit's own step."""
    bins = [(0, 50), (50, 200), (200, 500), (500, 1000), (1000, 2000), (2000, 5000), (5000, 10000), (10000, 40000)]
    out = []
    for lo, hi in bins:
        s = []
        for r in recs:
            if r["features"].get("head_only"):
                continue
            e = r["est"]["eager"]
            bf = (e["required"] - e["non_pytorch"]) / MIB
            if lo <= bf < hi:
                s.append(r["measured_mib"] - e["required"] / MIB)
        if s:
            out.append({"batchfit_step_mib": [lo, hi], "n": len(s), "p10": quantile(s, 0.1),
                        "median": quantile(s, 0.5), "p90": quantile(s, 0.9)})
    head = [r["measured_mib"] - r["est"]["eager"]["required"] / MIB for r in recs if r["features"].get("head_only")]
    return {"bins": out, "head_only": {"n": len(head), "median": quantile(head, 0.5)}}


def impl_probe(cli, recs, jobs):
    """The MLP runs with the most parameters under for-loop Adam (torch 1.x's default) and fused, against foreach
    (torch 2.x's default on CUDA): which one the measurements follow tells the torch major version."""
    big = sorted(recs, key=lambda r: (-sum(a * b + b for a, b in zip([r["features"]["input"]] + r["features"]["widths"],
                                                                    r["features"]["widths"])), r["row"]))[:12]
    VARIANTS["for_loop"] = ["--eager-loading", "--impl", "for-loop"]
    VARIANTS["fused"] = ["--eager-loading", "--impl", "fused"]
    try:
        est = estimate_all(cli, big, jobs, ["for_loop", "fused"])
    finally:
        del VARIANTS["for_loop"], VARIANTS["fused"]
    out = []
    for r in big:
        params = sum(a * b + b for a, b in zip([r["features"]["input"]] + r["features"]["widths"], r["features"]["widths"]))
        out.append({"id": row_id(r), "params": params, "batch": r["batch"], "measured_mib": r["measured_mib"],
                    "foreach_mib": r["est"]["eager"]["required"] / MIB,
                    "for_loop_mib": est[row_id(r)]["for_loop"]["required"] / MIB,
                    "fused_mib": est[row_id(r)]["fused"]["required"] / MIB})
    return out


def shifted(recs, shift_mib):
    """The statistics if BatchFit's figure were shift_mib higher (a what-if for the constant MLP offset)."""
    moved = []
    for r in recs:
        e = dict(r["est"]["eager"])
        e["required"] += shift_mib * MIB
        moved.append({"measured_mib": r["measured_mib"], "est": {"eager": e}})
    s = summarize(moved, "eager")
    return {k: s[k] for k in ("median_abs", "p90_abs", "median_signed", "under_3pct_over_1gib",
                              "rows_step_over_1gib")}


def mlp_diagnosis(recs):
    """Signed error in MiB against simple quantities: is the miss constant (non-PyTorch, cuBLAS workspace), or does
    it follow the parameters (Adam temporaries) or the batch's input (pinned/staging memory)?"""
    pts = []
    for r in recs:
        e, step = row_error(r["measured_mib"], r["est"])
        if e is None:
            continue
        f = r["features"]
        params = 0
        prev = f["input"]
        for w in f["widths"]:
            params += prev * w + w
            prev = w
        acts = sum(f["widths"]) * r["batch"]
        pts.append({"err_mib": (r["est"]["eager"]["required"] - r["measured_mib"] * MIB) / MIB,
                    "step_mib": step / MIB, "params_mib": 4 * params / MIB,
                    "input_mib": 4 * r["batch"] * f["input"] / MIB, "acts_mib": 4 * acts / MIB,
                    "reserved_mib": r["est"]["eager"]["reserved"] / MIB, "counted": step > STEP_MIN})
    out = {}
    for sel, name in ((lambda p: True, "all_clean"), (lambda p: p["counted"], "step_over_500mib"),
                      (lambda p: p["step_mib"] < 100, "step_under_100mib")):
        ps = [p for p in pts if sel(p)]
        if len(ps) < 3:
            continue
        ys = [p["err_mib"] for p in ps]
        d = {"n": len(ps), "err_mib_p10": quantile(ys, 0.1), "err_mib_median": quantile(ys, 0.5),
             "err_mib_p90": quantile(ys, 0.9)}
        for k in ("params_mib", "input_mib", "acts_mib", "step_mib", "reserved_mib"):
            xs = [p[k] for p in ps]
            d["fit_" + k] = linfit(xs, ys)
        out[name] = d
    return out


# ---------------------------------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------------------------------
def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cmd_convert(args):
    if args.raw:
        os.makedirs(DATA, exist_ok=True)
        for fname, (_fam, origin, prefix) in CSVS.items():
            src = os.path.join(args.raw, fname)
            digest = sha256(src)
            if not digest.startswith(prefix):
                sys.exit(f"{src}: sha256 {digest[:8]}... is not the published file's ({prefix}...)")
            with open(src, "rb") as f, lzma.open(os.path.join(DATA, fname + ".xz"), "wb", preset=9 | lzma.PRESET_EXTREME) as g:
                shutil.copyfileobj(f, g)
            print(f"{fname}.xz  <- {origin}  sha256 {digest[:16]}...  "
                  f"{os.path.getsize(os.path.join(DATA, fname + '.xz')):,} bytes")
    rows = load_rows(args.raw)
    from collections import Counter
    for fam in FAMILIES:
        fr = [r for r in rows if r["family"] == fam]
        clean = [r for r in fr if not r["excluded"]]
        reasons = Counter(e.split(":")[0] for r in fr for e in r["excluded"])
        print(f"{FAMILY_NAMES[fam]:28s} rows {len(fr):5d}  clean {len(clean):5d}  excluded: "
              + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    if args.write_models:
        os.makedirs(args.write_models, exist_ok=True)
        for r in rows:
            if r["model"]:
                with open(os.path.join(args.write_models, f"{r['family']}-{r['row']:04d}.json"), "w") as f:
                    json.dump(r["model"], f, indent=1)
        print("models written to", args.write_models)


def pick_sample(fam, recs):
    """A deterministic sample: the 5 worst counted rows, the 3 smallest clean rows, and the rest spread evenly over
    the counted rows ordered by step."""
    counted = []
    small = []
    for r in recs:
        e, step = row_error(r["measured_mib"], r["est"])
        (counted if step > STEP_MIN else small).append((e, step, r))
    chosen = {}
    for e, s, r in sorted(counted, key=lambda t: (-abs(t[0]), t[2]["row"]))[:5]:
        chosen[row_id(r)] = r
    for e, s, r in sorted(small, key=lambda t: (t[1], t[2]["row"]))[:3]:
        chosen[row_id(r)] = r
    by_step = sorted(counted, key=lambda t: (t[1], t[2]["row"]))
    n = SAMPLE_PER_FAMILY - len(chosen)
    if by_step and n > 0:
        for i in range(n):
            r = by_step[min(len(by_step) - 1, round(i * (len(by_step) - 1) / max(1, n - 1)))][2]
            chosen.setdefault(row_id(r), r)
    return sorted(chosen.values(), key=lambda r: r["row"])


def brief(r, est_keys=("eager", "lazy")):
    e, step = row_error(r["measured_mib"], r["est"])
    return {"id": row_id(r), "filename": r["filename"], "batch": r["batch"], "measured_mib": r["measured_mib"],
            "step_mib": round(step / MIB, 1),
            "batchfit_mib": {k: round(r["est"][k]["required"] / MIB, 2) for k in est_keys if k in r["est"]},
            "non_pytorch_mib": round(r["est"]["eager"]["non_pytorch"] / MIB, 2),
            "decision": r["est"]["eager"]["decision"],
            "error": round(e, 5) if e is not None else None}


def cmd_measure(args):
    t0 = time.time()
    rows = load_rows()
    clean = [r for r in rows if not r["excluded"]]
    if args.limit:
        clean = [r for fam in FAMILIES for r in [x for x in clean if x["family"] == fam][:args.limit]]
    print(f"estimating {len(clean)} clean rows x {len(VARIANTS)} set-ups with {args.jobs} processes",
          file=sys.stderr)
    est = estimate_all(args.cli, clean, args.jobs, list(VARIANTS))
    for r in clean:
        r["est"] = est[row_id(r)]
    # OOM rows: does BatchFit also say they do not fit?
    oom_rows = [r for r in rows if r["status"] == "OOM_CRASH" and r["model"] is not None
                and not any(e.startswith("not_rebuildable") for e in r["excluded"])]
    oom_est = estimate_all(args.cli, oom_rows, args.jobs, ["eager"])
    version = subprocess.run([args.cli, "--version"], capture_output=True, text=True).stdout.strip()

    summary, fams = {}, {}
    for fam in FAMILIES:
        recs = [r for r in clean if r["family"] == fam]
        s = {v: summarize(recs, v) for v in VARIANTS}
        # lazy against the same (eager-stack) step
        worst = []
        for r in recs:
            e, step = row_error(r["measured_mib"], r["est"])
            if step > STEP_MIN and e is not None:
                worst.append((abs(e), r))
        worst.sort(key=lambda t: (-t[0], t[1]["row"]))
        decisions = {}
        for r in recs:
            decisions[r["est"]["eager"]["decision"]] = decisions.get(r["est"]["eager"]["decision"], 0) + 1
        summary[fam] = {"eager": s["eager"], "lazy": s["lazy"], "eager_epoch_samples_4096": s["eager_epoch"],
                        "bar": bar_verdict(fam, s["eager"]), "decisions_on_clean_rows": decisions,
                        "worst": [brief(r, ("eager", "lazy", "eager_epoch")) for _, r in worst[:10]]}
        fams[fam] = recs
    # the stack: the smallest complete runs against BatchFit's fixed figures
    tiny = min((r for r in clean if r["family"] == "mlp1"), key=lambda r: r["measured_mib"])
    floor = {"measured_floor_mib": {"mlp_complete_runs": min(r["measured_mib"] for r in clean if r["family"] != "cnn"),
                                    "mlp_crash_before_backward": min(r["measured_mib"] for r in rows
                                                                     if r["family"] == "mlp1" and r["excluded"]),
                                    "cnn_head_only": min((r["measured_mib"] for r in clean if r["family"] == "cnn"
                                                          and r["features"].get("head_only")), default=None),
                                    "cnn_with_conv": min((r["measured_mib"] for r in clean if r["family"] == "cnn"
                                                          and not r["features"].get("head_only")), default=None)},
             "tiny_row": brief(tiny, ("eager", "lazy")),
             "batchfit_non_pytorch_mib": {"eager": tiny["est"]["eager"]["non_pytorch"] / MIB,
                                          "lazy": tiny["est"]["lazy"]["non_pytorch"] / MIB}}
    conv_row = next((r for r in clean if r["family"] == "cnn" and not r["features"].get("head_only")), None)
    if conv_row:
        floor["batchfit_non_pytorch_mib"]["eager_with_conv"] = conv_row["est"]["eager"]["non_pytorch"] / MIB
        floor["batchfit_non_pytorch_mib"]["lazy_with_conv"] = conv_row["est"]["lazy"]["non_pytorch"] / MIB
        floor["batchfit_non_pytorch_mib"]["cudnn_eager"] = conv_row["est"]["eager"]["cudnn"] / MIB
        floor["batchfit_non_pytorch_mib"]["cudnn_lazy"] = conv_row["est"]["lazy"]["cudnn"] / MIB
    # the constant MLP offset: the median miss of the runs whose step is under 100 MiB
    small = [r["measured_mib"] - r["est"]["eager"]["required"] / MIB for r in clean if r["family"] != "cnn"
             and r["measured_mib"] * MIB - r["est"]["eager"]["non_pytorch"] < 100 * MIB]
    mlp_offset = quantile(small, 0.5) if small else 0
    oom_dec = {}
    for r in oom_rows:
        d = oom_est[row_id(r)]["eager"]["decision"]
        oom_dec[d] = oom_dec.get(d, 0) + 1
    # samples
    sample = []
    for fam in FAMILIES:
        for r in pick_sample(fam, fams[fam]):
            sample.append({"id": row_id(r), "family": fam, "file": r["file"], "row": r["row"],
                           "filename": r["filename"], "batch": r["batch"], "measured_mib": r["measured_mib"],
                           "batchfit": {v: {"required_bytes": r["est"][v]["required"],
                                            "non_pytorch_bytes": r["est"][v]["non_pytorch"],
                                            "decision": r["est"][v]["decision"]} for v in ("eager", "lazy")}})
    sample_summary = {}
    for fam in FAMILIES:
        sample_summary[fam] = sample_stats([s for s in sample if s["family"] == fam])
    res = {
        "source": {"repo": REPO, "commit": COMMIT, "files": {k: v[1] for k, v in CSVS.items()},
                   "gpu": "NVIDIA A100-SXM4-40GB", "measured": "max nvidia-smi memory.used, 1 s polling"},
        "batchfit": {"version": version, "command": "batchfit-cli estimate --model FILE --batch B "
                                                    + " ".join(BASE_ARGS + VARIANTS["eager"]),
                     "variants": {k: " ".join(v) for k, v in VARIANTS.items()}},
        "definitions": {"step": "measured - BatchFit's overheads.non_pytorch.total_bytes (eager loading)",
                        "error": "(BatchFit required_bytes - measured) / step",
                        "counted": "rows whose step is above 500 MiB", "buckets": [[lo, hi] for lo, hi in BUCKETS],
                        "quantiles": "linear interpolation between order statistics"},
        "bar": {k: v for k, v in BAR.items()}, "under_limit": UNDER_LIMIT,
        "rows": {fam: {"total": sum(1 for r in rows if r["family"] == fam),
                       "clean": len(fams[fam]),
                       "excluded": count_excluded([r for r in rows if r["family"] == fam])} for fam in FAMILIES},
        "stack": floor,
        "summary": summary,
        "oom_rows": {"n": len(oom_rows), "batchfit_decision": oom_dec},
        "diagnosis": {"cnn": cnn_diagnosis(fams["cnn"]), "cnn_bins": cnn_bins(fams["cnn"]),
                      "mlp1": mlp_diagnosis(fams["mlp1"]), "mlp2": mlp_diagnosis(fams["mlp2"]),
                      "mlp_offset_mib": mlp_offset,
                      "mlp_shifted": {fam: shifted(fams[fam], mlp_offset) for fam in ("mlp1", "mlp2")},
                      "adam_impl_probe": impl_probe(args.cli, fams["mlp1"], args.jobs)},
        "sample": sample,
        "sample_summary": sample_summary,
        "elapsed_s": round(time.time() - t0, 1),
    }
    if args.limit:
        print(json.dumps(summary, indent=1))
        print("--limit given: results.json not written")
        return
    with open(RESULTS, "w") as f:
        json.dump(res, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"wrote {os.path.relpath(RESULTS, ROOT)} in {time.time() - t0:.0f} s")
    print_summary(res)


def count_excluded(rows):
    c = {}
    for r in rows:
        for e in r["excluded"]:
            k = e.split(":")[0]
            c[k] = c.get(k, 0) + 1
    return c


def sample_stats(items, fig=None):
    """Statistics over committed sample rows: fig(item) -> (required, non_pytorch) bytes."""
    errs = []
    for s in items:
        req, npb = fig(s) if fig else (s["batchfit"]["eager"]["required_bytes"],
                                        s["batchfit"]["eager"]["non_pytorch_bytes"])
        step = s["measured_mib"] * MIB - npb
        if step > STEP_MIN:
            errs.append((req - s["measured_mib"] * MIB) / step)
    a = [abs(e) for e in errs]
    return {"n": len(errs), "median_abs": quantile(a, 0.5), "p90_abs": quantile(a, 0.9),
            "median_signed": quantile(errs, 0.5)}


def pct(x, digits=1):
    return "—" if x is None else f"{100 * x:+.{digits}f}%"


def apct(x, digits=1):
    return "—" if x is None else f"{100 * x:.{digits}f}%"


def print_summary(res):
    print(f"{'family':28s} {'clean':>6s} {'>500MiB':>8s} {'median|e|':>10s} {'p90|e|':>8s} {'signed':>8s} "
          f"{'under>3%':>12s}  lazy signed  bar")
    for fam in FAMILIES:
        s = res["summary"][fam]["eager"]
        lz = res["summary"][fam]["lazy"]
        print(f"{FAMILY_NAMES[fam]:28s} {s['rows_clean']:6d} {s['rows_counted']:8d} {apct(s['median_abs'], 2):>10s} "
              f"{apct(s['p90_abs']):>8s} {pct(s['median_signed'], 2):>8s} "
              f"{s['under_3pct_over_1gib']:4d}/{s['rows_step_over_1gib']:<4d}({apct(s['share_under_3pct_over_1gib'])})"
              f"  {pct(lz['median_signed']):>10s}  {'met' if res['summary'][fam]['bar']['met'] else 'NOT met'}")


def cmd_check(args):
    t0 = time.time()
    with open(RESULTS) as f:
        res = json.load(f)
    rows = {row_id(r): r for r in load_rows()}
    sample = res["sample"]
    items = []
    for s in sample:
        r = rows.get(s["id"])
        if r is None or r["filename"] != s["filename"] or r["batch"] != s["batch"] \
                or r["measured_mib"] != s["measured_mib"] or r["excluded"]:
            sys.exit(f"FAIL {s['id']}: the committed CSVs no longer give this row as recorded")
        items.append(r)
    est = estimate_all(args.cli, items, args.jobs, ["eager", "lazy"])
    failures = []
    print(f"{'row':10s} {'batch':>5s} {'measured':>9s} {'committed':>10s} {'now':>10s} {'moved':>8s} {'error':>8s} "
          f"{'lazy now':>9s}  filename")
    for s in sample:
        now = est[s["id"]]
        line_moved = 0.0
        for v in ("eager", "lazy"):
            moved = (now[v]["required"] - s["batchfit"][v]["required_bytes"])
            if abs(moved) > MOVE_LIMIT:
                failures.append(f"{s['id']} ({v}): {s['batchfit'][v]['required_bytes'] / MIB:.1f} -> "
                                f"{now[v]['required'] / MIB:.1f} MiB")
            if v == "eager":
                line_moved = moved
        step = s["measured_mib"] * MIB - now["eager"]["non_pytorch"]
        e = (now["eager"]["required"] - s["measured_mib"] * MIB) / step if step > 0 else None
        mark = "" if abs(line_moved) <= MOVE_LIMIT else "  <-- moved"
        print(f"{s['id']:10s} {s['batch']:5d} {s['measured_mib']:9d} "
              f"{s['batchfit']['eager']['required_bytes'] / MIB:10.1f} {now['eager']['required'] / MIB:10.1f} "
              f"{line_moved / MIB:+8.1f} {pct(e):>8s} {now['lazy']['required'] / MIB:9.1f}  "
              f"{s['filename'][:60]}{mark}")
    print()
    print(f"{'family':28s} {'n':>3s} {'median|e|':>10s} {'(committed)':>12s} {'p90|e|':>8s} {'(committed)':>12s} "
          f"{'signed':>8s} {'(committed)':>12s}")
    tol = 0.005
    for fam in FAMILIES:
        committed = res["sample_summary"][fam]
        now = sample_stats([s for s in sample if s["family"] == fam],
                           lambda s: (est[s["id"]]["eager"]["required"], est[s["id"]]["eager"]["non_pytorch"]))
        print(f"{FAMILY_NAMES[fam]:28s} {now['n']:3d} {apct(now['median_abs'], 2):>10s} "
              f"{apct(committed['median_abs'], 2):>12s} {apct(now['p90_abs']):>8s} {apct(committed['p90_abs']):>12s} "
              f"{pct(now['median_signed'], 2):>8s} {pct(committed['median_signed'], 2):>12s}")
        if now["n"] != committed["n"]:
            failures.append(f"{fam}: {now['n']} sample rows counted, committed {committed['n']}")
        for k in ("median_abs", "p90_abs"):
            if now[k] is not None and committed[k] is not None and now[k] > committed[k] + tol:
                failures.append(f"{fam}: sample {k} {apct(now[k], 2)} above the committed {apct(committed[k], 2)}")
        if now["median_signed"] is not None and committed["median_signed"] is not None \
                and abs(now["median_signed"] - committed["median_signed"]) > tol:
            failures.append(f"{fam}: sample signed median moved {pct(committed['median_signed'], 2)} -> "
                            f"{pct(now['median_signed'], 2)}")
    # the committed summary agrees with its own bar verdicts
    for fam in FAMILIES:
        s = res["summary"][fam]
        if bar_verdict(fam, s["eager"]) != s["bar"]:
            failures.append(f"{fam}: the committed bar verdict does not follow from the committed statistics")
    print()
    print_summary(res)
    print(f"\n{len(sample)} rows estimated again in {time.time() - t0:.1f} s")
    if failures:
        print("\nFAIL (run `tools/gpumemnet_accuracy.py measure CLI` and `doc` if the change is deliberate):")
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print("OK: every committed figure within 1 MiB, the sample's statistics within the committed bounds")


# ---------------------------------------------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------------------------------------------
def hist_table(res):
    heads = []
    for lo, hi in BUCKETS:
        if lo == -math.inf:
            heads.append(f"< {100 * hi:.0f}%")
        elif hi == math.inf:
            heads.append(f"≥ +{100 * lo:.0f}%")
        else:
            heads.append(f"{100 * lo:+.0f}…{100 * hi:+.0f}%")
    out = ["| family | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    for fam in FAMILIES:
        h = res["summary"][fam]["eager"]["histogram"]
        out.append(f"| {FAMILY_NAMES[fam]} | " + " | ".join(str(x) for x in h) + " |")
    return "\n".join(out)


def fmt_mib(x):
    return "—" if x is None else f"{x:,.0f}"


def cmd_doc(args):
    with open(RESULTS) as f:
        res = json.load(f)
    st = res["stack"]
    npm = st["batchfit_non_pytorch_mib"]
    fl = st["measured_floor_mib"]
    S = res["summary"]
    L = []
    w = L.append
    w("# Accuracy against GPU measurements: the GPUMemNet runs (A100-SXM4-40GB)")
    w("")
    w("<!-- Generated by tools/gpumemnet_accuracy.py doc from tests/data/gpumemnet/results.json; do not edit. -->")
    w("")
    w(f"BatchFit's `nvidia-smi` figure against **{sum(res['rows'][f]['clean'] for f in FAMILIES):,} real training "
      f"runs** on an NVIDIA A100-SXM4-40GB, published by the GPUMemNet authors ([{REPO}]"
      f"(https://github.com/{REPO}) @ `{COMMIT[:12]}`; paper: arXiv 2602.17817). Each run trains a generated "
      "MLP or CNN for about 60 s in fp32 with `torch.optim.Adam` (defaults), no AMP, `cudnn.benchmark` not set; its "
      "figure is the largest `memory.used` that `nvidia-smi --query-gpu=uuid,memory.used,memory.total "
      "--format=csv -l 1` printed for that GPU during the run. The data and their licence are described in "
      "[tests/data/gpumemnet/README.md](../tests/data/gpumemnet/README.md).")
    w("")
    w(f"BatchFit: `{res['batchfit']['version']}`, "
      f"`{res['batchfit']['command']}`.")
    w("")
    w("## The bar (issue 26) and where BatchFit stands")
    w("")
    w("The *step* of a run is the measured figure minus BatchFit's memory outside PyTorch (`overheads.non_pytorch."
      "total_bytes`); a run counts when its step is above 500 MiB. The error is (BatchFit − measured) / step: "
      "positive means BatchFit asks for more than the run used. The bar: MLP median |error| ≤ 1% and p90 ≤ 5%; "
      "CNN median ≤ 5%; never under by more than 3% on a run whose step is above 1 GiB.")
    w("")
    w("| family | clean runs | counted (step > 500 MiB) | median \\|error\\| | p90 \\|error\\| | signed median "
      "(MiB) | under by > 3% (step > 1 GiB) | bar |")
    w("|---|---:|---:|---:|---:|---:|---:|---|")
    for fam in FAMILIES:
        s = S[fam]["eager"]
        b = S[fam]["bar"]
        parts = []
        parts.append(("median ✓" if b.get("median") else "median ✗"))
        if "p90" in b:
            parts.append("p90 ✓" if b["p90"] else "p90 ✗")
        parts.append("under ✓" if b["never_under_3pct_over_1gib"] else "under ✗")
        w(f"| {FAMILY_NAMES[fam]} | {s['rows_clean']:,} | {s['rows_counted']:,} | {apct(s['median_abs'], 2)} | "
          f"{apct(s['p90_abs'])} | {pct(s['median_signed'], 2)} ({s['median_signed_mib']:+.0f}) | "
          f"{s['under_3pct_over_1gib']} of {s['rows_step_over_1gib']} ({apct(s['share_under_3pct_over_1gib'])}) | "
          f"{'**met**' if b['met'] else '**not met**'}: {', '.join(parts)} |")
    w("")
    w("Distribution of the signed error (counted runs):")
    w("")
    w(hist_table(res))
    w("")
    w("The same runs under the two alternatives (signed median; median |error|):")
    w("")
    w("| family | eager loading (above) | lazy loading (no `--eager-loading`) | eager + `--epoch-samples 4096` |")
    w("|---|---|---|---|")
    for fam in FAMILIES:
        e, lz, ep = S[fam]["eager"], S[fam]["lazy"], S[fam]["eager_epoch_samples_4096"]
        w(f"| {FAMILY_NAMES[fam]} | {pct(e['median_signed'], 2)}; {apct(e['median_abs'], 2)} | "
          f"{pct(lz['median_signed'], 1)}; {apct(lz['median_abs'], 1)} | "
          f"{pct(ep['median_signed'], 2)}; {apct(ep['median_abs'], 2)} |")
    w("")
    w("(The lazy column divides by the same step as the eager one, so the two compare directly.)")
    w("")
    w("## The stack: eager module loading, inferred from the floor")
    w("")
    w("The data set does not record its torch, CUDA or driver versions. Its floor says which stack it ran:")
    w("")
    w(f"* the smallest complete MLP runs (tens to hundreds of parameters, steps of a few MiB) read "
      f"**{fl['mlp_complete_runs']:,} MiB**; MLP runs that crash in their first step (context + model + one "
      f"forward) read {fl['mlp_crash_before_backward']:,} MiB; the smallest conv-free CNN runs (pool → linear) "
      f"read {fmt_mib(fl['cnn_head_only'])} MiB and the smallest with a convolution {fmt_mib(fl['cnn_with_conv'])} MiB;")
    w(f"* BatchFit's memory outside PyTorch on an A100 is **{npm['lazy']:,.0f} MiB** with lazy module loading "
      f"(CUDA 11.7+ and torch ≥ 1.13's default: the context and cuBLAS) and **{npm['eager']:,.0f} MiB** with "
      f"eager loading (all kernel images at start-up, `--eager-loading`: about 900 MiB more);")
    tr = st["tiny_row"]
    w(f"* for the smallest MLP run (`{tr['filename']}`, batch {tr['batch']}, {tr['measured_mib']:,} MiB) BatchFit "
      f"gives {tr['batchfit_mib']['eager']:,.0f} MiB with eager loading and {tr['batchfit_mib']['lazy']:,.0f} MiB "
      "with lazy loading.")
    if "eager_with_conv" in npm:
        w(f"* with a convolution BatchFit adds cuDNN: {npm['cudnn_eager']:,.0f} MiB with eager loading "
          f"({npm['eager_with_conv']:,.0f} MiB in all), {npm['cudnn_lazy']:,.0f} MiB with lazy loading "
          f"({npm['lazy_with_conv']:,.0f} MiB); the runs step up by about {fmt_mib((fl['cnn_with_conv'] or 0) - (fl['cnn_head_only'] or 0))} MiB "
          "from the conv-free floor to the smallest run with a convolution.")
    w("")
    w("A lazily loaded context would leave the floor about 900 MiB lower, so the runs are taken as **eager "
      "loading**. This is an inference from the floor, not a recorded fact: the same floor could come from another "
      "stack with about the same fixed cost. Torch older than 1.13 loads eagerly too, but the runs' Adam memory "
      "follows torch 2.x's foreach implementation (see \"What the MLP errors follow\"), so the likelier stack is "
      "torch 2 with `CUDA_MODULE_LOADING=EAGER` or a driver without lazy loading. Every figure on this page uses "
      "`--eager-loading`.")
    w("")
    w("## How the runs are rebuilt")
    w("")
    w("`tools/gpumemnet_accuracy.py` rebuilds every run from its file name (which encodes every argument the "
      "launcher passed) as a BatchFit model file, in memory, and checks the network layer by layer against the "
      "(type, output elements, parameters) list the GPUMemNet cleaner parsed out of the run's torchsummary "
      "printout (the `Activations-Params` column). The rules follow the generating scripts at the commit above:")
    w("")
    w("* **MLP step 1**: `NeuroNetGen_scripts/MLP/mlp.py` (blob `9ede7af`), `MLP.__init__`: `Linear` + `ReLU` per "
      "hidden layer (pyramid, uniform, bottleneck, gradual widths), a final `Linear`, no output activation; "
      "`CrossEntropyLoss` (int64 labels); `launcher_mlp.py` (blob `46b170e`). Input `[input_dim]`.")
    w("* **MLP step 2**: `NeuroNetGen_scripts/MLP/mlp_next.py` (blob `428fb5a`): each hidden layer `Linear → "
      "[BatchNorm1d] → activation → [Dropout(p)]`, the head `Linear → Softmax(dim=1)` then `CrossEntropyLoss` "
      "(the softmax is a layer before the loss, as the script has it); with one output `Sigmoid` or `Identity` "
      "(read from the layer list) and `BCEWithLogitsLoss` on float targets, which BatchFit writes as `mse_loss` "
      "(same target shape, nothing large saved); `launcher_mlp_next.py` (blob `c5a215f`).")
    w("* **CNN**: `NeuroNetGen_scripts/CNN/cnn.py` (blob `393434f`, the version that printed the torchsummary the "
      "cleaner read): `ConvBlock = Conv2d(3×3, s1, p1) → [BatchNorm2d] → activation → [Dropout]`; pyramid, "
      "bottleneck, gradual, hourglass and uniform stack `depth` blocks without pooling (the launcher never "
      "passes `--use_pooling`); `ResidualBlock` (1×1 shortcut with BN or none, stride 2 on odd blocks, added); "
      "`DenseBlock` (four layers, each on `torch.cat(features, 1)`: a copy of the input for the first, written "
      "`contiguous`, then concatenations) and `TransitionBlock` (1×1 conv, ReLU, `AvgPool2d(2)`); the head "
      "`AdaptiveAvgPool2d(1) → flatten → Linear → Softmax(dim=1) → CrossEntropyLoss`; `launcher_cnn.py` "
      "(blob `b8df2eb`). The data are the partial step-1 file of commit `f5a3f5d` (2,061 of the 9,000 CNN runs; "
      "the full file was not obtainable offline).")
    w("* Activations BatchFit has no op for (`PReLU`, `ELU`, `SELU`, `Softplus`, `Mish`) are written as "
      "`leaky_relu` or `gelu`: each saves its input and returns a new tensor, as those do. PReLU's single weight "
      "is left out.")
    w("")
    w("Runs left out:")
    w("")
    w("| family | runs | clean | left out |")
    w("|---|---:|---:|---|")
    for fam in FAMILIES:
        rr = res["rows"][fam]
        w(f"| {FAMILY_NAMES[fam]} | {rr['total']:,} | {rr['clean']:,} | "
          + (", ".join(f"{k} {v}" for k, v in sorted(rr["excluded"].items())) or "none") + " |")
    w("")
    w("`oom_crash` runs died with `torch.OutOfMemoryError` (their figure is what the GPU held when they died, not "
      "their need); `crash_first_step` runs fed an int64 target to a BCE loss and died after one forward; "
      "`crash_end_of_epoch_1` runs (BatchNorm1d meeting a last batch of one sample) lived one epoch, too short for "
      "the 1 s polling; `no_model` runs (input smaller than 7) never built a network.")
    od = res["oom_rows"]
    w(f"Of the {od['n']} rebuildable OOM runs BatchFit says: "
      + ", ".join(f"{k or 'none'} {v}" for k, v in sorted(od["batchfit_decision"].items(), key=lambda t: str(t[0])))
      + ".")
    w("")
    w("## The worst runs")
    w("")
    for fam in FAMILIES:
        w(f"**{FAMILY_NAMES[fam]}**")
        w("")
        w("| run | batch | measured MiB | step MiB | BatchFit MiB | error | lazy MiB |")
        w("|---|---:|---:|---:|---:|---:|---:|")
        for r in S[fam]["worst"][:6]:
            w(f"| `{r['filename'][:-4] if r['filename'].endswith('.out') else r['filename']}` | {r['batch']} | "
              f"{r['measured_mib']:,} | {r['step_mib']:,.0f} | {r['batchfit_mib']['eager']:,.0f} | "
              f"{pct(r['error'])} | {r['batchfit_mib']['lazy']:,.0f} |")
        w("")
    dg = res["diagnosis"]
    w("## What the MLP errors follow")
    w("")
    off = dg["mlp_offset_mib"]
    w(f"The MLP miss is mostly **one constant**: the runs whose step is under 100 MiB come out "
      f"{off:.0f} MiB under (median), and the MLP runs that crash in their first step (context, model, one "
      f"forward; no backward, no Adam) read {fl['mlp_crash_before_backward']:,} MiB against BatchFit's "
      f"{npm['eager']:,.0f} MiB outside PyTorch plus a forward's cuBLAS workspace, so the offset is already there "
      "before backward and the optimizer: it belongs to the fixed part (context and libraries of this stack), not "
      "to Adam or the data loader (the MLP scripts pin nothing; each batch is copied from pageable host memory).")
    w("")
    w("| family | p10 error MiB | median | p90 | fit error = a + b·(parameter MiB): a, b, r² | "
      "fit against the input batch's MiB: a, b, r² |")
    w("|---|---:|---:|---:|---|---|")
    for fam in ("mlp1", "mlp2"):
        x = dg[fam]["step_over_500mib"]
        fp, fi = x["fit_params_mib"], x["fit_input_mib"]
        w(f"| {FAMILY_NAMES[fam]} (step > 500 MiB) | {x['err_mib_p10']:+.0f} | {x['err_mib_median']:+.0f} | "
          f"{x['err_mib_p90']:+.0f} | {fp['intercept']:+.1f}, {fp['slope']:+.4f}, {fp['r2']:.3f} | "
          f"{fi['intercept']:+.1f}, {fi['slope']:+.3f}, {fi['r2']:.3f} |")
    w("")
    w(f"With {off:.0f} MiB more (a what-if, not BatchFit's figure):")
    w("")
    w("| family | median \\|error\\| | p90 | signed median | under by > 3% (step > 1 GiB) |")
    w("|---|---:|---:|---:|---:|")
    for fam in ("mlp1", "mlp2"):
        x = dg["mlp_shifted"][fam]
        w(f"| {FAMILY_NAMES[fam]} | {apct(x['median_abs'], 2)} | {apct(x['p90_abs'])} | "
          f"{pct(x['median_signed'], 2)} | {x['under_3pct_over_1gib']} of {x['rows_step_over_1gib']} |")
    w("")
    w("What remains after the constant is a tail of runs under by a further 20–60 MiB, most of them `gradual` "
      "networks (every layer a different width, so few cached blocks can be reused) and, in step 2, BatchNorm; "
      "the error does not grow with the parameters (Adam's states and temporaries) or with the input batch.")
    w("")
    w("**The Adam implementation tells the torch version.** The runs with the most parameters (up to 640 MiB of "
      "weights) under the three implementations BatchFit knows:")
    w("")
    w("| run | parameters | batch | measured MiB | foreach (torch 2.x) | for-loop (torch 1.x) | fused |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    for x in dg["adam_impl_probe"][:6]:
        w(f"| {x['id']} | {x['params'] / 1e6:.0f} M | {x['batch']} | {x['measured_mib']:,} | "
          f"{x['foreach_mib']:,.0f} | {x['for_loop_mib']:,.0f} | {x['fused_mib']:,.0f} |")
    w("")
    w("Only foreach, torch 2.x's default for CUDA parameters, comes near: these runs used torch ≥ 2.0. The extra "
      "~900 MiB of their floor is then not an old torch but eager module loading under torch 2 "
      "(`CUDA_MODULE_LOADING=EAGER` set, or a driver without lazy loading).")
    w("")
    d = dg["cnn"]
    if d.get("shortfall_mib_pearson"):
        w("## What the CNN errors follow")
        w("")
        saved_cpu = os.path.join(DATA, "saved-cpu.json")
        if os.path.exists(saved_cpu):
            with open(saved_cpu) as fh:
                sc = json.load(fh)
            archs = len({re.search(r"_arch:([a-z_]+?)_", r["filename"]).group(1) for r in sc["rows"]})
            w(f"**Not the rebuilt networks.** For {len(sc['rows'])} clean CNN rows across the {archs} "
              f"architectures, GPUMemNet's own `CNN` class (cnn.py, blob `393434f`) saves under torch "
              f"{sc['torch']} on the CPU exactly the bytes BatchFit gives the rebuilt model, byte for byte "
              "(`tools/gpumemnet_saved.py`, `tests/data/gpumemnet/saved-cpu.json`, checked by ctest). What the "
              "A100 runs hold beyond BatchFit is the GPU's: cuDNN's convolution workspaces and what the caching "
              "allocator makes of them.")
            w("")
        w(f"Over the {d['rows']} counted CNN runs with a convolution, the shortfall (measured − BatchFit, MiB; "
          f"p10 {d['shortfall_mib_quantiles']['p10']:+.0f}, median {d['shortfall_mib_quantiles']['p50']:+.0f}, "
          f"p90 {d['shortfall_mib_quantiles']['p90']:+.0f}) against the convolutions' sizes at the run's batch:")
        w("")
        w("| quantity x (MiB where bytes) | Pearson r | fit shortfall = a + b·x: a (MiB) | b | r² | median \\|residual\\| MiB |")
        w("|---|---:|---:|---:|---:|---:|")
        names = {"max_conv_io_bytes": "max over convs of input + output bytes",
                 "max_conv_out_bytes": "largest conv output bytes", "max_conv_in_bytes": "largest conv input bytes",
                 "sum_conv_io_bytes": "sum over convs of input + output bytes", "input_bytes": "the batch's input bytes",
                 "max_conv_bhwc": "B·C·H·W of the largest conv output (elements)",
                 "max_conv_unfold_bytes": "largest im2col (B·Cin·k²·Ho·Wo·4 bytes)",
                 "max_conv_weight_bytes": "largest conv weight bytes", "max_conv_flops": "largest conv FLOPs",
                 "max_channels": "largest channel count"}
        for k, nm in names.items():
            f = d["shortfall_mib_fits"].get(k)
            if not f:
                continue
            w(f"| {nm} | {d['shortfall_mib_pearson'][k]:+.2f} | {f['intercept']:+.0f} | {f['slope']:.3g} | "
              f"{f['r2']:.2f} | {f['median_abs_residual']:.0f} |")
        w("")
        fb = d["shortfall_vs_batchfit_step"]
        rb = d["shortfall_over_batchfit_step"]
        w(f"The shortfall follows the size of the step better than any single convolution: against BatchFit's "
          f"own step (required − outside PyTorch, MiB) the fit is {fb['intercept']:+.0f} MiB + "
          f"{fb['slope']:.3f} × step (r² {fb['r2']:.2f}); the shortfall is {apct(rb['p10'], 0)}, "
          f"{apct(rb['p50'], 0)} and {apct(rb['p90'], 0)} (p10, median, p90) of BatchFit's step. By "
          "architecture (median of shortfall / BatchFit's step): " + ", ".join(
              f"{k} {apct(v, 0)}" for k, v in d["shortfall_over_batchfit_step_by"]["arch"].items()) + ".")
        w("")
        w("All clean CNN runs with a convolution, by BatchFit's step (the shortfall in MiB):")
        w("")
        w("| BatchFit step (MiB) | runs | p10 | median | p90 |")
        w("|---|---:|---:|---:|---:|")
        for b in dg["cnn_bins"]["bins"]:
            w(f"| {b['batchfit_step_mib'][0]:,}–{b['batchfit_step_mib'][1]:,} | {b['n']} | {b['p10']:+.0f} | "
              f"{b['median']:+.0f} | {b['p90']:+.0f} |")
        w("")
        w(f"The conv-free CNNs (pool → linear) miss by {dg['cnn_bins']['head_only']['median']:+.0f} MiB (median of "
          f"{dg['cnn_bins']['head_only']['n']}), the MLPs' constant. (BatchFit's cuDNN figure, 256 MiB, was read "
          "off this data set's floor, so the smallest CNNs are not an independent check of it.)")
        w("")
        w("Median error (MiB) by architecture: " + ", ".join(
            f"{k} {v['median_err_mib']:+.0f} ({v['n']})" for k, v in d["by"]["arch"].items()) + ".")
        w("")
    w("## What is not modelled")
    w("")
    w("* **cuDNN convolution workspaces.** With `cudnn.benchmark` off, cuDNN's heuristics pick each convolution's "
      "algorithm (forward, backward data, backward filter), and PyTorch allocates the workspace it asks for from "
      "the caching allocator for the duration of the call. BatchFit does not model these workspaces yet, so "
      "convolutional runs are expected to come out under; the table above is the input for that model.")
    w("* **The 1 s polling.** The figure is the largest of ~60 one-second samples. A run's steady state lasts the "
      "whole minute, so the caching allocator's reserve is seen; a peak shorter than a second between two samples "
      "(the very first step) could be missed.")
    w("* **The data loaders.** The MLP scripts move each batch from the CPU with `.to('cuda')` (no pinning, no "
      "workers). The CNN script uses `DataLoader(num_workers=2, pin_memory=True)`: pinned buffers are host "
      "memory, but the worker processes do not touch CUDA, so they add nothing to `memory.used`.")
    w("* **torchsummary's forward.** Before training each script runs `torchsummary.summary`, one forward of a "
      "batch of 2 on the GPU. It runs before the first step and leaves at most a few small blocks in the cache.")
    w("* **The epoch's last batch.** 4,096 samples per epoch with `drop_last=False`: the last batch is smaller "
      "whenever the batch does not divide 4,096. The column `--epoch-samples 4096` above replays it.")
    w("* **The software stack.** Unknown torch/CUDA/driver versions (see above); the activations BatchFit writes "
      "through a substitute op; PReLU's weight.")
    w("")
    w("## Regenerating")
    w("")
    w("```sh")
    w("python3 tools/gpumemnet_accuracy.py convert            # rebuild every run, print the counts")
    w("python3 tools/gpumemnet_accuracy.py measure build/app/batchfit-cli --jobs 2   # results.json")
    w("python3 tools/gpumemnet_accuracy.py doc                # this page")
    w("python3 tools/gpumemnet_accuracy.py check build/app/batchfit-cli              # the committed sample (ctest)")
    w("```")
    w("")
    with open(DOC, "w") as f:
        f.write("\n".join(L))
    print("wrote", os.path.relpath(DOC, ROOT))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("convert")
    c.add_argument("--raw", help="a folder with the raw CSVs: compress them into tests/data/gpumemnet/")
    c.add_argument("--write-models", help="also write every rebuilt model file into this folder")
    m = sub.add_parser("measure")
    m.add_argument("cli")
    m.add_argument("--jobs", type=int, default=2)
    m.add_argument("--limit", type=int, default=0, help="only the first N clean rows per family (no file written)")
    k = sub.add_parser("check")
    k.add_argument("cli")
    k.add_argument("--jobs", type=int, default=2)
    sub.add_parser("doc")
    args = ap.parse_args()
    {"convert": cmd_convert, "measure": cmd_measure, "check": cmd_check, "doc": cmd_doc}[args.cmd](args)


if __name__ == "__main__":
    main()
