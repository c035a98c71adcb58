#!/usr/bin/env python3
"""BatchFit's allocator trace (`estimate --trace-out`) against what torch allocates, event for event, on the CPU.

    /work/venv/bin/python tools/trace_vs_profiler.py measure [--cli build/app/batchfit-cli] [--cases NAME,...]
    python3 tools/trace_vs_profiler.py check [CLI]                     # standard library only; ctest-able

measure (torch 2.x, CPU): for every case below, the preset's torch model (tools/reference_models.py) runs a first
training step and a second (steady) step inside torch.profiler.profile(activities=[CPU], profile_memory=True,
record_shapes=True). The profiler's allocation records (the `[memory]` events: positive bytes allocate, negative
bytes free, paired by address) of each step are put in order, each with the op it happened in, and compared with
the same step of BatchFit's trace for the same set-up (`batchfit-cli estimate --preset P --batch B --optimizer adam
--impl foreach|for-loop --trace-out T`): the two sequences of (alloc|free, requested bytes) tokens are aligned
(difflib.SequenceMatcher, no junk heuristic), and what is left on either side is grouped (torch: by the op that
allocated it and its size; BatchFit: by its tag and size, with the torch op of the nearest matched events) and
classified (CUDA-only kernels, CPU-only kernels, host memory on a GPU, not modelled). The summary goes to
tests/data/torch/trace-vs-profiler.json and the torch token sequences (gzip, for `check`) to
tests/data/torch/trace-vs-profiler-torch.json.gz.

check: every stored case is estimated again (`--trace-out`); BatchFit's event counts and bytes per step must equal
the stored figures, and its steps aligned with the stored torch sequences must still match at least the stored
floor (the measured fraction, rounded down to the percent): a change to the step program that moves BatchFit
away from what torch allocates fails here.

CPU against CUDA (docs/trace-vs-profiler.md): the CPU allocator does not round (the profiler gives the requested
bytes, which is what BatchFit's trace holds); oneDNN (mkldnn) convolutions, CPU BLAS and the CPU attention kernel
allocate their own scratch through it; cuDNN/cuBLAS workspaces and CUDA attention kernels' buffers exist only in
BatchFit's GPU trace; Adam's `step` tensors are host tensors on a GPU (not in BatchFit's device trace).
"""
import argparse
import collections
import difflib
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "torch", "trace-vs-profiler.json")
TOKENS = os.path.join(ROOT, "tests", "data", "torch", "trace-vs-profiler-torch.json.gz")
DEFAULT_CLI = os.path.join(ROOT, "build-test", "app", "batchfit-cli")

# preset, batch, Adam implementation (foreach explicitly: torch's CPU default would be the for-loop)
CASES = [
    {"name": "resnet50 b2 foreach", "preset": "resnet50", "batch": 2, "impl": "foreach"},
    {"name": "mobilenet_v2 b4 foreach", "preset": "mobilenet_v2", "batch": 4, "impl": "foreach", "mkldnn": True},
    {"name": "transformer-12 b2 foreach", "preset": "transformer-12", "batch": 2, "impl": "foreach"},
    {"name": "gpt2-small b1 foreach", "preset": "gpt2-small", "batch": 1, "impl": "foreach"},
    {"name": "vit_b_16 b1 foreach", "preset": "vit_b_16", "batch": 1, "impl": "foreach"},
    {"name": "resnet50 b2 for-loop", "preset": "resnet50", "batch": 2, "impl": "for-loop"},
]
STEPS = ("first", "steady")
TOP_GROUPS = 8


# ----------------------------------------------------------------------------------------------------------
# BatchFit's side (standard library only)
# ----------------------------------------------------------------------------------------------------------
def cli_args(case, first_step=False):
    args = ["estimate", "--preset", case["preset"], "--batch", str(case["batch"]), "--optimizer", "adam",
            "--impl", case["impl"]]
    return args + (["--first-step"] if first_step else [])


def run_trace(cli, case, first_step=False):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        cmd = [cli, *cli_args(case, first_step), "--trace-out", path]
        run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({run.returncode}): {run.stderr.strip()}")
        with open(path) as f:
            return json.load(f)["events"]


def sized(events):
    """The trace's alloc/free events with sizes and tags resolved: (kind, size, tag, id)."""
    live, out = {}, []
    for e in events:
        if e["op"] == "alloc":
            live[e["id"]] = (e["size"], e.get("tag", ""))
            if e["size"] > 0:
                out.append(("alloc", e["size"], e.get("tag", ""), e["id"]))
        elif e["op"] == "free":
            size, tag = live.pop(e["id"])
            if size > 0:
                out.append(("free", size, tag, e["id"]))
    return out


def step_events(raw, info_of):
    """(kind, size, alloc ordinal, info) per event of one step: an alloc's ordinal is its index among the step's
    allocations, a free carries its allocation's ordinal, or None when that was allocated before the step."""
    ordinal, out = {}, []
    for e in raw:
        if e[0] == "alloc":
            ordinal[e[3]] = len(ordinal)
            out.append(("alloc", e[1], ordinal[e[3]], info_of(e)))
        else:
            out.append(("free", e[1], ordinal.get(e[3]), info_of(e)))
    return out


def batchfit_steps(cli, case):
    """BatchFit's trace split into its parts: the state before training (parameters and buffers), the first
    step and the steady step. The first-step trace (`--first-step`) is the default trace's prefix."""
    full = run_trace(cli, case)
    first = run_trace(cli, case, first_step=True)
    if full[:len(first)] != first:
        sys.exit(f"{case['name']}: the --first-step trace is not a prefix of the steady-state trace")
    n = 0
    while n < len(first) and first[n]["op"] == "alloc" and first[n].get("tag") == "parameters":
        n += 1
    whole = sized(full)
    n_pre = len(sized(first[:n]))
    n_first = len(sized(first))
    parts = {"prelude": whole[:n_pre], "first": whole[n_pre:n_first], "steady": whole[n_first:]}
    return {k: step_events(v, lambda e: e[2]) for k, v in parts.items()}


def summary_counts(events):
    allocs = [e for e in events if e[0] == "alloc"]
    frees = [e for e in events if e[0] == "free"]
    return {"allocs": len(allocs), "frees": len(frees), "alloc_bytes": sum(e[1] for e in allocs),
            "free_bytes": sum(e[1] for e in frees)}


# ----------------------------------------------------------------------------------------------------------
# alignment
# ----------------------------------------------------------------------------------------------------------
def align(torch_ev, bf_ev):
    """Two passes. 1: the (alloc|free, bytes) tokens in order (difflib.SequenceMatcher, no junk heuristic):
    which torch allocation is which BatchFit allocation (the allocations this pairs). 2: the whole sequences, where an allocation is the
    BatchFit allocation it was paired with and a free is the free *of* that allocation (frees of allocations
    made before the step: by size): events matched here happen in the same order on both sides.
    Returns (pairs in order, alloc pairs of pass 1 as {torch ordinal: BatchFit ordinal})."""
    sm = difflib.SequenceMatcher(None, [e[:2] for e in torch_ev], [e[:2] for e in bf_ev], autojunk=False)
    apair = {}
    for a, b, n in sm.get_matching_blocks():
        for k in range(n):
            if torch_ev[a + k][0] == "alloc":
                apair[torch_ev[a + k][2]] = bf_ev[b + k][2]

    def tok_t(i, e):
        if e[0] == "alloc":
            return ("a", apair[e[2]]) if e[2] in apair else ("ta", i)
        if e[2] is None:
            return ("fo", e[1])
        return ("f", apair[e[2]]) if e[2] in apair else ("tf", i)

    def tok_b(i, e):
        if e[0] == "alloc":
            return ("a", e[2])
        return ("fo", e[1]) if e[2] is None else ("f", e[2])

    tt = [tok_t(i, e) for i, e in enumerate(torch_ev)]
    bt = [tok_b(i, e) for i, e in enumerate(bf_ev)]
    sm = difflib.SequenceMatcher(None, tt, bt, autojunk=False)
    pairs = []
    for a, b, n in sm.get_matching_blocks():
        pairs.extend((a + k, b + k) for k in range(n))
    return pairs, apair


def out_of_order(torch_ev, bf_ev, pairs, apair):
    """Events of both sides that pass 1 paired (an allocation of the same size, or the free of such an
    allocation) but that pass 2 could not keep in order: (torch indices, BatchFit indices)."""
    mt = {a for a, _ in pairs}
    mb = {b for _, b in pairs}
    paired_b = set(apair.values())
    t_idx = [i for i, e in enumerate(torch_ev) if i not in mt and e[2] is not None and e[2] in apair]
    b_idx = [i for i, e in enumerate(bf_ev) if i not in mb and e[2] is not None and e[2] in paired_b]
    # frees of older allocations matched by size, in any order
    t_old = collections.Counter(e[1] for i, e in enumerate(torch_ev) if i not in mt and e[0] == "free"
                                and e[2] is None)
    b_old = collections.Counter(e[1] for i, e in enumerate(bf_ev) if i not in mb and e[0] == "free"
                                and e[2] is None)
    common = t_old & b_old
    for side, ev, m, idx in (("t", torch_ev, mt, t_idx), ("b", bf_ev, mb, b_idx)):
        left = collections.Counter(common)
        for i, e in enumerate(ev):
            if i not in m and e[0] == "free" and e[2] is None and left[e[1]] > 0:
                left[e[1]] -= 1
                idx.append(i)
    return set(t_idx), set(b_idx)


def fractions(torch_ev, bf_ev, pairs, ooo):
    mt = sum(torch_ev[i][1] for i, _ in pairs)
    tb = sum(e[1] for e in torch_ev)
    bb = sum(e[1] for e in bf_ev)
    ot, ob = ooo
    return {
        "matched_events": len(pairs),
        "matched_bytes": mt,
        "torch_event_fraction": round(len(pairs) / max(1, len(torch_ev)), 4),
        "batchfit_event_fraction": round(len(pairs) / max(1, len(bf_ev)), 4),
        "torch_byte_fraction": round(mt / max(1, tb), 4),
        "batchfit_byte_fraction": round(mt / max(1, bb), 4),
        "out_of_order_events": {"torch": len(ot), "batchfit": len(ob)},
        "out_of_order_bytes": {"torch": sum(torch_ev[i][1] for i in ot), "batchfit": sum(bf_ev[i][1] for i in ob)},
    }


def encode_torch(ev):
    """torch's events for `check`: an allocation is its size, a free minus one minus its allocation's
    ordinal, the free of an allocation made before the step "o" + its size."""
    return [e[1] if e[0] == "alloc" else (f"o{e[1]}" if e[2] is None else -1 - e[2]) for e in ev]


def decode_torch(vals):
    sizes, out = [], []
    for v in vals:
        if isinstance(v, str):
            out.append(("free", int(v[1:]), None, None))
        elif v > 0:
            out.append(("alloc", v, len(sizes), None))
            sizes.append(v)
        else:
            out.append(("free", sizes[-1 - v], -1 - v, None))
    return out


# ----------------------------------------------------------------------------------------------------------
# classification of what only one side has
# ----------------------------------------------------------------------------------------------------------
CONV_TOPS = ("aten::conv2d", "ConvolutionBackward0", "aten::convolution")
# (test on (op, top, size), category, why): the first that holds wins; docs/trace-vs-profiler.md
TORCH_RULES = [
    (lambda op, top, size: size <= 8, "CPU-only (host scalars)",
     "0-dim host tensors: Python scalars torch wraps as CPU tensors (BatchNorm's num_batches_tracked.add_(1), "
     "the CPU fallback of the foreach ops running one op per tensor with a wrapped scalar, a mean's divisor), "
     "and Adam's `step` tensors, which are host tensors on a GPU too (capturable=False)"),
    (lambda op, top, size: "mkldnn" in op, "CPU-only kernel",
     "oneDNN (mkldnn) convolution: reorders of weights and activations to blocked layouts and their copies back "
     "(aten/src/ATen/native/mkldnn/Conv.cpp, ideep); cuDNN reads the tensors as they are"),
    (lambda op, top, size: op in ("aten::empty", "aten::resize_") and any(t in top for t in CONV_TOPS),
     "CPU-only kernel",
     "slow_conv2d's im2col column buffer (aten/src/ATen/native/ConvolutionMM2d.cpp, compute_columns2d / "
     "slow_conv2d_backward_out_cpu_template's grad columns); on CUDA cuDNN takes its workspace instead"),
    (lambda op, top, size: op == "aten::empty" and "NativeBatchNormBackward0" in top, "CPU-only kernel",
     "batch_norm_backward_cpu (aten/src/ATen/native/Normalization.cpp): the CPU kernel's input-sized "
     "temporary; cuDNN's batch-norm backward allocates only grad_input, grad_weight, grad_bias"),
    (lambda op, top, size: op == "aten::empty" and top == "aten::batch_norm", "CPU-only kernel",
     "batch_norm_cpu_update_stats_template (aten/src/ATen/native/Normalization.cpp): per-channel mean and "
     "variance buffers for the running-stat update; cuDNN updates the running stats in its kernel"),
    (lambda op, top, size: top in ("aten::native_dropout", "aten::dropout")
     or "NativeDropoutBackward0" in top, "CPU-only kernel",
     "CPU native_dropout (aten/src/ATen/native/Dropout.cpp): draws the mask as a float tensor (bernoulli_) and "
     "multiplies out of place; its backward is the composite grad * mask * scale (a float copy of the mask "
     "and two products); CUDA's fused_dropout / masked_scale kernels write only the output and the bool mask"),
    (lambda op, top, size: "flash_attention_for_cpu" in op or "flash_attention_for_cpu" in top,
     "CPU-only kernel",
     "the CPU flash-attention kernel (aten/src/ATen/native/cpu/FlashAttentionKernel.cpp): per-thread "
     "buffers, and in backward its accumulators; CUDA runs the memory-efficient or flash kernel"),
]


def classify_torch(op, top, size):
    for test, cat, why in TORCH_RULES:
        if test(op, top, size):
            return cat, why
    return "not modelled by BatchFit", ""


def classify_batchfit(tag, size, context):
    ctx = " ".join(context)
    if tag == "temporaries" and size == 8519680:
        return "CUDA-only kernel", ("cuBLAS workspace: CUBLAS_WORKSPACE_CONFIG's default :4096:2:16:8 on sm_90 "
                                    "(4 MiB x 2 + 16 KiB x 8 = 8,519,680 B), torch's getCurrentCUDABlasHandle "
                                    "allocates it through the caching allocator per handle and stream")
    if tag == "temporaries" and any(t in ctx for t in CONV_TOPS):
        return "CUDA-only kernel", "cuDNN convolution workspace (BatchFit's conv temporaries)"
    if "scaled_dot_product" in ctx or "attention" in ctx.lower():
        return "CUDA-only kernel", "CUDA attention kernel's buffers (memory-efficient/flash: logsumexp, seeds)"
    return "not in torch's trace", ""


def group(groups, key, base, size, cat, why):
    g = groups.setdefault(key, dict(base, size=size, count=0, bytes=0, category=cat))
    if why:
        g["why"] = why
    g["count"] += 1
    g["bytes"] += size


def context_fn(pairs, torch_ev):
    """For an unmatched BatchFit event: the top-level torch ops of the events matched just before and after."""
    import bisect
    bf_to_t = dict((b, a) for a, b in pairs)
    matched_b = sorted(bf_to_t)

    def name(ev):
        op, top = ev[3]
        return top if top != "(python)" else op

    def ctx(i):
        k = bisect.bisect_left(matched_b, i)
        out = [name(torch_ev[bf_to_t[matched_b[j]]]) for j in (k - 1, k) if 0 <= j < len(matched_b)]
        return tuple(dict.fromkeys(out))
    return ctx


def compare(torch_ev, bf_ev):
    pairs, apair = align(torch_ev, bf_ev)
    ooo = out_of_order(torch_ev, bf_ev, pairs, apair)
    res = {"torch": summary_counts(torch_ev), "batchfit": summary_counts(bf_ev)}
    res.update(fractions(torch_ev, bf_ev, pairs, ooo))
    mt = {a for a, _ in pairs} | ooo[0]
    mb = {b for _, b in pairs} | ooo[1]
    # torch's leftovers by the op that allocated them (a free: its allocation's op)
    alloc_info = {}
    gt = {}
    for i, e in enumerate(torch_ev):
        if e[0] == "alloc":
            alloc_info[e[2]] = e[3]
        if i in mt:
            continue
        op, top = e[3] if e[0] == "alloc" else alloc_info.get(e[2], e[3])
        cat, why = classify_torch(op, top, e[1])
        group(gt, (e[0], op, top, e[1]), {"kind": e[0], "op": op, "top_op": top}, e[1], cat, why)
    ctx = context_fn(pairs, torch_ev)
    gb = {}
    for i, e in enumerate(bf_ev):
        if i in mb:
            continue
        c = ctx(i)
        cat, why = classify_batchfit(e[3], e[1], c)
        group(gb, (e[0], e[3], c, e[1]), {"kind": e[0], "tag": e[3], "torch_context": list(c)}, e[1], cat, why)
    ot = sorted(gt.values(), key=lambda g: (-g["bytes"], -g["count"]))
    ob = sorted(gb.values(), key=lambda g: (-g["bytes"], -g["count"]))
    res["only_torch_by_category"] = categories(ot)
    res["only_batchfit_by_category"] = categories(ob)
    res["only_torch_top"] = ot[:TOP_GROUPS]
    res["only_batchfit_top"] = ob[:TOP_GROUPS]
    return res


def categories(groups):
    out, cnt = collections.Counter(), collections.Counter()
    for g in groups:
        out[g["category"]] += g["bytes"]
        cnt[g["category"]] += g["count"]
    return {k: {"events": cnt[k], "bytes": out[k]} for k in sorted(out)}


# ----------------------------------------------------------------------------------------------------------
# torch's side
# ----------------------------------------------------------------------------------------------------------
def torch_run(case, threads):
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function
    from torch._C._profiler import _EventType

    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import reference_models

    torch.set_num_threads(threads)
    # oneDNN's convolutions reorder to blocked layouts (copies of every activation); the native CPU path
    # (slow_conv2d: the output and one im2col buffer) is closer to cuDNN. Depthwise convolutions need oneDNN
    # (without it torch runs one convolution per group).
    torch.backends.mkldnn.enabled = case.get("mkldnn", False)
    ref = reference_models.build(case["preset"])
    model, loss_fn = ref.model, ref.loss
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-3, foreach=(case["impl"] == "foreach"))
    torch.manual_seed(1)
    host_inputs, host_target = ref.make_batch(case["batch"])

    def step():
        # the batch arrives as a device copy each step (x.to("cuda")); the step keeps no reference to it
        # after the forward, as BatchFit assumes (it is freed when autograd releases what it saved)
        xs = [t.clone() for t in host_inputs]
        y = host_target.clone()
        loss = loss_fn(model(*xs), y)
        del xs, y
        loss.backward()
        del loss
        opt.step()
        opt.zero_grad(set_to_none=True)

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True) as prof:
        for name in STEPS:
            with record_function(f"batchfit::{name}_step"):
                step()
    roots = prof.profiler.kineto_results.experimental_event_tree()

    spans = {}
    allocs = []  # (time, bytes, ptr, innermost op, top-level op)

    def walk(node, top):
        if node.typed[0] == _EventType.Allocation:
            f = node.typed[1]
            if f.device.type == "cpu":
                parent = node.parent
                op = parent.name if parent and not parent.name.startswith("batchfit::") else "(python)"
                allocs.append((node.start_time_ns, f.alloc_size, f.ptr, op, top or "(python)"))
            return
        name = node.name
        if name.startswith("batchfit::"):
            spans[name[len("batchfit::"):-len("_step")]] = (node.start_time_ns, node.end_time_ns)
            top = None
        elif top is None:
            top = name
        for c in node.children:
            walk(c, top)

    for r in roots:
        walk(r, None)
    allocs.sort(key=lambda a: a[0])
    live = {}
    steps = {s: [] for s in STEPS}
    for t, nbytes, ptr, op, top in allocs:
        step_name = next((s for s, (a, b) in spans.items() if a <= t <= b), None)
        if nbytes > 0:
            live[ptr] = (nbytes, op, top, step_name, len(steps[step_name]) if step_name else None)
            ev = ("alloc", nbytes, ptr, (op, top))
        else:
            if ptr not in live:  # allocated before profiling: not in either step
                continue
            size, aop, atop, astep, _ = live.pop(ptr)
            ev = ("free", size, ptr if astep == step_name else ("old", ptr), (op, top))
        if step_name:
            steps[step_name].append(ev)
    # ptr -> step-local ordinals (addresses are reused: take them in order)
    out = {}
    for s, raw in steps.items():
        ordinal, ev, n = {}, [], 0
        for kind, size, ptr, info in raw:
            if kind == "alloc":
                ordinal[ptr] = n
                n += 1
                ev.append(("alloc", size, ordinal[ptr], info))
            else:
                k = None if isinstance(ptr, tuple) else ordinal.pop(ptr, None)
                ev.append(("free", size, k, info))
        out[s] = ev
    return out, torch.__version__


def measure(cli, names, threads):
    import torch
    doc = {"source": "tools/trace_vs_profiler.py measure", "torch_version": torch.__version__,
           "device": "cpu", "threads": threads, "cases": []}
    store = {}
    if names and os.path.exists(DATA):  # measure a few cases again, keep the others
        with open(DATA) as f:
            doc["cases"] = [c for c in json.load(f)["cases"] if c["name"] not in names]
        with gzip.open(TOKENS, "rt") as f:
            store = {k: v for k, v in json.load(f)["cases"].items() if k not in names}
    for case in CASES:
        if names and case["name"] not in names:
            continue
        t0 = time.time()
        torch_steps, _ = torch_run(case, threads)
        bf = batchfit_steps(cli, case)
        row = dict(case)
        row["cli"] = "batchfit-cli " + " ".join(cli_args(case)) + " --trace-out T.json"
        row["batchfit_prelude"] = summary_counts(bf["prelude"])
        row["steps"] = {}
        store[case["name"]] = {}
        for s in STEPS:
            res = compare(torch_steps[s], bf[s])
            res["floor_event_fraction"] = int(res["torch_event_fraction"] * 100) / 100
            res["floor_byte_fraction"] = int(res["torch_byte_fraction"] * 100) / 100
            row["steps"][s] = res
            store[case["name"]][s] = encode_torch(torch_steps[s])
            print(f"{case['name']} {s}: torch {len(torch_steps[s])} events, BatchFit {len(bf[s])}; in order "
                  f"{res['matched_events']} ({res['torch_event_fraction']:.1%} of torch's, "
                  f"{res['batchfit_event_fraction']:.1%} of BatchFit's), bytes {res['torch_byte_fraction']:.1%} / "
                  f"{res['batchfit_byte_fraction']:.1%}; out of order {res['out_of_order_events']}", flush=True)
        row["seconds"] = round(time.time() - t0, 1)
        doc["cases"].append(row)
    order = [c["name"] for c in CASES]
    doc["cases"].sort(key=lambda c: order.index(c["name"]) if c["name"] in order else len(order))
    with open(DATA, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with gzip.GzipFile(TOKENS, "wb", mtime=0) as f:
        f.write(json.dumps({"torch_version": doc["torch_version"], "cases": store},
                           separators=(",", ":")).encode())
    print(f"wrote {os.path.relpath(DATA, ROOT)} and {os.path.relpath(TOKENS, ROOT)}")


def check(cli):
    t0 = time.time()
    with open(DATA) as f:
        doc = json.load(f)
    with gzip.open(TOKENS, "rt") as f:
        store = json.load(f)["cases"]
    bad = 0
    for row in doc["cases"]:
        bf = batchfit_steps(cli, row)
        for s in STEPS:
            want = row["steps"][s]
            got = summary_counts(bf[s])
            if got != want["batchfit"]:
                bad += 1
                print(f"{row['name']} {s}: BatchFit's events {got}, stored {want['batchfit']}")
            te = decode_torch(store[row["name"]][s])
            pairs, apair = align(te, bf[s])
            fr = fractions(te, bf[s], pairs, out_of_order(te, bf[s], pairs, apair))
            if (fr["torch_event_fraction"] < want["floor_event_fraction"]
                    or fr["torch_byte_fraction"] < want["floor_byte_fraction"]):
                bad += 1
                print(f"{row['name']} {s}: matches {fr['torch_event_fraction']:.2%} of torch's events and "
                      f"{fr['torch_byte_fraction']:.2%} of its bytes in order; floor {want['floor_event_fraction']:.0%}"
                      f" and {want['floor_byte_fraction']:.0%}")
    if bad:
        sys.exit(f"{bad} differences from tests/data/torch/trace-vs-profiler.json "
                 "(regenerate with tools/trace_vs_profiler.py measure if intended)")
    print(f"{len(doc['cases'])} cases x {len(STEPS)} steps as stored (torch {doc['torch_version']}), "
          f"{time.time() - t0:.1f} s")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--cli", default=DEFAULT_CLI)
    m.add_argument("--cases", default="", help="comma-separated case or preset names (default: all)")
    m.add_argument("--threads", type=int, default=2)
    c = sub.add_parser("check")
    c.add_argument("cli", nargs="?", default=DEFAULT_CLI)
    a = p.parse_args()
    if a.command == "measure":
        measure(os.path.abspath(a.cli), [n for n in a.cases.split(",") if n], a.threads)
    else:
        check(os.path.abspath(a.cli))


if __name__ == "__main__":
    main()
