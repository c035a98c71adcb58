#!/usr/bin/python3
"""ONNX fixtures for the ONNX importer (core/src/import/onnx_mapper.cpp, tests/core/test_onnx_import.cpp).

    /usr/bin/python3 tools/export_onnx_fixture.py tiny tests/data/onnx
        Writes the small committed fixtures (python3-onnx only, no torch): mapping cases and hostile files.
        Deterministic: rerunning gives the same bytes.

    /usr/bin/python3 tools/export_onnx_fixture.py resnet18 OUT.onnx
        Exports torchvision's resnet18 with Debian's torch (training mode, so BatchNormalization stays a node;
        no constant folding; batch dimension dynamic). About 45 MB: never commit it.

    /usr/bin/python3 tools/export_onnx_fixture.py check-resnet18 --cli build/app/batchfit-cli --workdir DIR
        The ctest "onnx: resnet18 exported by torch": exports resnet18 into DIR, imports it with
        `batchfit-cli estimate --onnx ... --batch 2 --json` and compares with torch: the parameter count must be
        exactly 11,689,512 and the saved activation bytes within 1% of what tools/saved_lib.py counts for
        torchvision's resnet18 at batch 2 (same counting rules as tools/measure_saved.py). Exits 77 (skipped)
        when torch, torchvision or onnx is missing.
"""
import argparse
import json
import os
import subprocess
import sys

SKIP = 77


# --------------------------------------------------------------------------------------------------------------
# tiny fixtures (onnx.helper only)
# --------------------------------------------------------------------------------------------------------------
def _tiny(outdir):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    os.makedirs(outdir, exist_ok=True)

    def init(name, shape, value=0.0, dtype=np.float32):
        return numpy_helper.from_array(np.full(shape, value, dtype=dtype), name)

    def const(name, values, dtype=np.int64):
        return helper.make_node("Constant", [], [name], name=name,
                                value=numpy_helper.from_array(np.array(values, dtype=dtype), name + "_value"))

    def save(model, name, check=True):
        if check:
            onnx.checker.check_model(model)
        path = os.path.join(outdir, name)
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")

    def model(graph, opset=17):
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="batchfit-fixture",
                              producer_version="1")
        m.ir_version = 8
        return m

    def vin(name, shape, elem=TensorProto.FLOAT):
        return helper.make_tensor_value_info(name, elem, shape)

    # 1. A small CNN: conv (no bias), BN, ReLU, max-pool, conv (bias, stride 2), ReLU6 (Clip), global pool,
    #    flatten, Gemm (transB). 8*3*9 + 2*8 + 16*8*9 + 16 + 10*16 + 10 = 1,570 parameters.
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight"], ["c1"], name="/conv1/Conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn1.weight", "bn1.bias", "bn1.mean", "bn1.var"], ["b1"],
                         name="/bn1/BatchNormalization", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="/relu/Relu"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="/pool/MaxPool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="/conv2/Conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        const("clip_min", 0.0, np.float32), const("clip_max", 6.0, np.float32),
        helper.make_node("Clip", ["c2", "clip_min", "clip_max"], ["r2"], name="/act/Clip"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="/avgpool/GlobalAveragePool"),
        helper.make_node("Flatten", ["g"], ["f"], name="/Flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="/fc/Gemm", transB=1),
    ]
    inits = [init("conv1.weight", [8, 3, 3, 3]), init("bn1.weight", [8], 1.0), init("bn1.bias", [8]),
             init("bn1.mean", [8]), init("bn1.var", [8], 1.0), init("conv2.weight", [16, 8, 3, 3]),
             init("conv2.bias", [16]), init("fc.weight", [10, 16]), init("fc.bias", [10])]
    g = helper.make_graph(nodes, "tiny_cnn", [vin("x", ["N", 3, 16, 16])], [vin("logits", ["N", 10])], inits)
    save(model(g), "tiny_cnn.onnx")

    # 2. An MLP over tokens: MatMul + Add (-> linear), torch's erf GELU, LayerNormalization (opset 17), a
    #    reshape whose target is computed from Shape (x.view(x.size(0), -1)), Gemm, then logits [5].
    nodes = [
        helper.make_node("MatMul", ["x", "fc1.weight"], ["m1"], name="/fc1/MatMul"),
        helper.make_node("Add", ["fc1.bias", "m1"], ["a1"], name="/fc1/Add"),
        const("sqrt2", 1.4142135623730951, np.float32), const("one", 1.0, np.float32), const("half", 0.5, np.float32),
        helper.make_node("Div", ["a1", "sqrt2"], ["d"], name="/act/Div"),
        helper.make_node("Erf", ["d"], ["e"], name="/act/Erf"),
        helper.make_node("Add", ["e", "one"], ["e1"], name="/act/Add"),
        helper.make_node("Mul", ["a1", "e1"], ["g1"], name="/act/Mul"),
        helper.make_node("Mul", ["g1", "half"], ["g"], name="/act/Mul_1"),
        helper.make_node("MatMul", ["g", "fc2.weight"], ["m2"], name="/fc2/MatMul"),
        helper.make_node("Add", ["m2", "fc2.bias"], ["a2"], name="/fc2/Add"),
        helper.make_node("LayerNormalization", ["a2", "ln.weight", "ln.bias"], ["n"], name="/ln/LayerNormalization",
                         axis=-1, epsilon=1e-5),
        helper.make_node("Shape", ["n"], ["s"], name="/Shape"),
        const("zero", 0), helper.make_node("Gather", ["s", "zero"], ["b"], name="/Gather", axis=0),
        const("axes0", [0]), helper.make_node("Unsqueeze", ["b", "axes0"], ["bu"], name="/Unsqueeze"),
        const("minus1", [-1]), helper.make_node("Concat", ["bu", "minus1"], ["shape"], name="/Concat", axis=0),
        helper.make_node("Reshape", ["n", "shape"], ["flat"], name="/Reshape"),
        helper.make_node("Dropout", ["flat", "ratio"], ["dr"], name="/drop/Dropout"),
        helper.make_node("Gemm", ["dr", "head.weight", "head.bias"], ["logits"], name="/head/Gemm", transB=1),
    ]
    inits = [init("fc1.weight", [8, 16]), init("fc1.bias", [16]), init("fc2.weight", [16, 8]), init("fc2.bias", [8]),
             init("ln.weight", [8], 1.0), init("ln.bias", [8]), init("ratio", [], 0.25), init("head.weight", [5, 32]),
             init("head.bias", [5])]
    g = helper.make_graph(nodes, "token_mlp", [vin("x", ["batch", 4, 8])], [vin("logits", ["batch", 5])], inits)
    save(model(g), "token_mlp.onnx")

    # 3. Eager self-attention (BERT-style, 2 heads of 4) with a residual, an MSE-style output [S, D].
    S, D, H = 6, 8, 2
    dh = D // H
    nodes = []
    for p in ("q", "k", "v"):
        nodes += [helper.make_node("MatMul", ["x", f"{p}.weight"], [f"{p}m"], name=f"/attn/{p}/MatMul"),
                  helper.make_node("Add", [f"{p}m", f"{p}.bias"], [f"{p}a"], name=f"/attn/{p}/Add"),
                  helper.make_node("Reshape", [f"{p}a", "heads_shape"], [f"{p}r"], name=f"/attn/{p}/Reshape")]
    nodes += [
        helper.make_node("Transpose", ["qr"], ["qt"], name="/attn/q/Transpose", perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["kr"], ["kt"], name="/attn/k/Transpose", perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["vr"], ["vt"], name="/attn/v/Transpose", perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qt", "kt"], ["scores"], name="/attn/MatMul"),
        const("scale", float(np.sqrt(dh)), np.float32),
        helper.make_node("Div", ["scores", "scale"], ["scaled"], name="/attn/Div"),
        helper.make_node("Softmax", ["scaled"], ["probs"], name="/attn/Softmax", axis=-1),
        helper.make_node("MatMul", ["probs", "vt"], ["ctx"], name="/attn/MatMul_1"),
        helper.make_node("Transpose", ["ctx"], ["ctxt"], name="/attn/Transpose", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctxt", "model_shape"], ["merged"], name="/attn/Reshape"),
        helper.make_node("MatMul", ["merged", "o.weight"], ["om"], name="/attn/o/MatMul"),
        helper.make_node("Add", ["om", "o.bias"], ["oa"], name="/attn/o/Add"),
        helper.make_node("Add", ["oa", "x"], ["y"], name="/residual/Add"),
    ]
    inits = []
    for p in ("q", "k", "v", "o"):
        inits += [init(f"{p}.weight", [D, D]), init(f"{p}.bias", [D])]
    inits += [numpy_helper.from_array(np.array([0, 0, H, dh], dtype=np.int64), "heads_shape"),
              numpy_helper.from_array(np.array([0, 0, D], dtype=np.int64), "model_shape")]
    g = helper.make_graph(nodes, "attention", [vin("x", ["N", S, D])], [vin("y", ["N", S, D])], inits)
    save(model(g), "attention.onnx")

    # 4. ViT-style tokens: patch conv, flatten + transpose, a class token (Expand of a learned [1,1,D] over the
    #    batch, concatenated in front), a learned position embedding (Add of [1,N+1,D]), SiLU (x * sigmoid(x)),
    #    the first token (Gather), a Gemm head.
    nodes = [
        helper.make_node("Conv", ["x", "patch.weight", "patch.bias"], ["p"], name="/patch/Conv", kernel_shape=[4, 4],
                         strides=[4, 4]),
        helper.make_node("Reshape", ["p", "tok_shape"], ["pr"], name="/Reshape"),
        helper.make_node("Transpose", ["pr"], ["tok"], name="/Transpose", perm=[0, 2, 1]),
        helper.make_node("Shape", ["tok"], ["ts"], name="/Shape"),
        const("zero", 0), helper.make_node("Gather", ["ts", "zero"], ["b"], name="/Gather", axis=0),
        const("axes0", [0]), helper.make_node("Unsqueeze", ["b", "axes0"], ["bu"], name="/Unsqueeze"),
        const("one_d", [1, 16]), helper.make_node("Concat", ["bu", "one_d"], ["cls_shape"], name="/Concat", axis=0),
        helper.make_node("Expand", ["cls", "cls_shape"], ["cls_b"], name="/Expand"),
        helper.make_node("Concat", ["cls_b", "tok"], ["seq"], name="/Concat_1", axis=1),
        helper.make_node("Add", ["seq", "pos"], ["emb"], name="/pos/Add"),
        helper.make_node("Sigmoid", ["emb"], ["sg"], name="/act/Sigmoid"),
        helper.make_node("Mul", ["emb", "sg"], ["act"], name="/act/Mul"),
        const("first", 0), helper.make_node("Gather", ["act", "first"], ["cls_out"], name="/Gather_1", axis=1),
        helper.make_node("Gemm", ["cls_out", "head.weight", "head.bias"], ["logits"], name="/head/Gemm", transB=1),
    ]
    inits = [init("patch.weight", [16, 3, 4, 4]), init("patch.bias", [16]),
             numpy_helper.from_array(np.array([0, 16, -1], dtype=np.int64), "tok_shape"),
             init("cls", [1, 1, 16]), init("pos", [1, 5, 16]), init("head.weight", [10, 16]), init("head.bias", [10])]
    g = helper.make_graph(nodes, "vit_tiny", [vin("x", ["N", 3, 8, 8])], [vin("logits", ["N", 10])], inits)
    save(model(g), "vit_tiny.onnx")

    # 5. torch's layer_norm below opset 17 (ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul w, Add b),
    #    then a linear over the last dim: logits [4, 3] per sample.
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["mean"], name="/ln/ReduceMean", axes=[-1]),
        helper.make_node("Sub", ["x", "mean"], ["centred"], name="/ln/Sub"),
        const("two", 2.0, np.float32), const("eps", 1e-5, np.float32),
        helper.make_node("Pow", ["centred", "two"], ["sq"], name="/ln/Pow"),
        helper.make_node("ReduceMean", ["sq"], ["var"], name="/ln/ReduceMean_1", axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["var_eps"], name="/ln/Add"),
        helper.make_node("Sqrt", ["var_eps"], ["std"], name="/ln/Sqrt"),
        helper.make_node("Div", ["centred", "std"], ["normed"], name="/ln/Div"),
        helper.make_node("Mul", ["normed", "ln.weight"], ["scaled"], name="/ln/Mul"),
        helper.make_node("Add", ["scaled", "ln.bias"], ["ln_out"], name="/ln/Add_1"),
        helper.make_node("MatMul", ["ln_out", "fc.weight"], ["m"], name="/fc/MatMul"),
        helper.make_node("Add", ["m", "fc.bias"], ["logits"], name="/fc/Add"),
    ]
    inits = [init("ln.weight", [8], 1.0), init("ln.bias", [8]), init("fc.weight", [8, 3]), init("fc.bias", [3])]
    g = helper.make_graph(nodes, "layernorm_opset14", [vin("x", ["N", 4, 8])], [vin("logits", ["N", 4, 3])], inits)
    save(model(g, opset=14), "layernorm_opset14.onnx")

    # 6. Operators BatchFit does not map: Erf on its own and a custom-domain op.
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="/conv/Conv", kernel_shape=[1, 1]),
        helper.make_node("Erf", ["c"], ["e"], name="/odd/Erf"),
        helper.make_node("Softplus", ["e"], ["s"], name="/odd/Softplus"),
        helper.make_node("GlobalAveragePool", ["s"], ["g"], name="/pool/GlobalAveragePool"),
        helper.make_node("Flatten", ["g"], ["logits"], name="/Flatten"),
    ]
    g = helper.make_graph(nodes, "unknown_ops", [vin("x", ["N", 3, 4, 4])], [vin("logits", ["N", 4])],
                          [init("w", [4, 3, 1, 1])])
    save(model(g), "unknown_ops.onnx")

    # ---- hostile files: each must give a clean error --------------------------------------------------------
    def simple(input_shape, extra_nodes=(), inits=(), name="hostile"):
        nodes = [helper.make_node("Relu", ["x"], ["y"], name="/relu/Relu")] + list(extra_nodes)
        return helper.make_graph(nodes, name, [vin("x", input_shape)], [vin("y", input_shape)], list(inits))

    save(model(simple(["N", 1 << 62, 4])), "huge_dim.onnx", check=False)
    save(model(simple(["N", -3, 4])), "negative_dim.onnx", check=False)
    save(model(simple(["N", "S", 4])), "symbolic_dim.onnx", check=False)
    # A cycle: a = Add(x, b), b = Relu(a); output b.
    g = helper.make_graph([helper.make_node("Add", ["x", "b"], ["a"], name="/cyc/Add"),
                           helper.make_node("Relu", ["a"], ["b"], name="/cyc/Relu")],
                          "cycle", [vin("x", ["N", 4])], [vin("b", ["N", 4])])
    save(model(g), "cycle.onnx", check=False)
    # A Conv whose weight initializer is missing.
    g = helper.make_graph([helper.make_node("Conv", ["x", "conv.weight"], ["y"], name="/conv/Conv", kernel_shape=[3, 3])],
                          "missing_initializer", [vin("x", ["N", 3, 8, 8])], [vin("y", ["N", 4, 6, 6])])
    save(model(g), "missing_initializer.onnx", check=False)
    # An initializer whose raw data does not match its dims.
    bad = init("conv.weight", [4, 3, 3, 3])
    bad.raw_data = bad.raw_data[:10]
    g = helper.make_graph([helper.make_node("Conv", ["x", "conv.weight"], ["y"], name="/conv/Conv", kernel_shape=[3, 3])],
                          "short_raw", [vin("x", ["N", 3, 8, 8])], [vin("y", ["N", 4, 6, 6])], [bad])
    save(model(g), "short_initializer.onnx", check=False)
    # An initializer declaring 2^40 x 2^40 elements (and no data).
    huge = TensorProto()
    huge.name = "conv.weight"
    huge.data_type = TensorProto.FLOAT
    huge.dims.extend([1 << 40, 1 << 40, 3, 3])
    g = helper.make_graph([helper.make_node("Conv", ["x", "conv.weight"], ["y"], name="/conv/Conv", kernel_shape=[3, 3])],
                          "huge_initializer", [vin("x", ["N", 3, 8, 8])], [vin("y", ["N", 4, 6, 6])], [huge])
    save(model(g), "huge_initializer.onnx", check=False)
    # Two inputs the output depends on.
    g = helper.make_graph([helper.make_node("Add", ["x", "z"], ["y"], name="/Add")], "two_inputs",
                          [vin("x", ["N", 4]), vin("z", ["N", 4])], [vin("y", ["N", 4])])
    save(model(g), "two_inputs.onnx")
    # A Conv with a wrong attribute type (kernel_shape as a string): fails ONNX's schema check.
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="/conv/Conv", kernel_shape="3x3")],
                          "bad_attribute", [vin("x", ["N", 3, 8, 8])], [vin("y", ["N", 4, 6, 6])], [init("w", [4, 3, 3, 3])])
    save(model(g), "bad_attribute.onnx", check=False)


# --------------------------------------------------------------------------------------------------------------
# resnet18 (torch)
# --------------------------------------------------------------------------------------------------------------
def _import_torch():
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        import onnx  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print(f"skipped: {e}")
        sys.exit(SKIP)


def export_resnet18(path):
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=1000)
    x = torch.randn(2, 3, 224, 224)
    torch.onnx.export(model, x, path, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      opset_version=15, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    print(f"wrote {path} ({os.path.getsize(path):,d} bytes)")


def measure_resnet18(batch):
    """Saved activation bytes of torchvision's resnet18 + cross-entropy at `batch` (tools/saved_lib.py rules)."""
    import torch
    import torchvision
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from reference_models import CrossEntropy, replace_dropout
    from saved_lib import SavedRecorder, tracked
    torch.manual_seed(0)
    model = replace_dropout(torchvision.models.resnet18(weights=None, num_classes=1000)).train()
    loss_fn = CrossEntropy()
    x = torch.randn(batch, 3, 224, 224)
    y = torch.randint(0, 1000, (batch,), dtype=torch.int64)
    params = list(model.parameters())
    with tracked(model, loss_fn) as tr:
        rec = SavedRecorder(params, tr.path)
        with rec:
            loss_fn(model(x), y)
    return rec.total, sum(p.numel() for p in params)


def check_resnet18(cli, workdir, batch, tolerance):
    _import_torch()
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "resnet18.onnx")
    export_resnet18(path)
    run = subprocess.run([cli, "estimate", "--onnx", path, "--batch", str(batch), "--json"], capture_output=True,
                         text=True, timeout=300)
    if run.returncode != 0:
        print(run.stdout, run.stderr)
        print(f"FAIL: batchfit-cli exited {run.returncode}")
        return 1
    report = json.loads(run.stdout)
    totals = report["totals"]
    est_params = totals["parameter_count"]
    est_saved = totals["saved_activation_bytes"]
    measured, params = measure_resnet18(batch)
    diff = (est_saved - measured) / measured
    print(f"resnet18 via ONNX, batch {batch}: parameters {est_params:,d} (torch {params:,d}); saved activations "
          f"estimated {est_saved:,d} B, measured {measured:,d} B ({100 * diff:+.3f}%)")
    ok = True
    if est_params != 11689512 or params != 11689512:
        print("FAIL: the parameter count must be exactly 11,689,512")
        ok = False
    if abs(diff) > tolerance:
        print(f"FAIL: saved activations differ by more than {100 * tolerance:.1f}%")
        ok = False
    # A damaged copy of the real file: an error (exit 3) or a model, never a crash.
    with open(path, "rb") as f:
        data = f.read()
    damaged = os.path.join(workdir, "resnet18-damaged.onnx")
    cases = [("truncated at %d" % cut, data[:cut]) for cut in (1, 100, 5000, len(data) // 2, len(data) - 1)]
    for k, pos in enumerate((10, 2000, len(data) // 3, len(data) - 300)):
        b = bytearray(data)
        b[pos] ^= 0x5A
        cases.append((f"byte {pos} flipped", bytes(b)))
    for what, blob in cases:
        with open(damaged, "wb") as f:
            f.write(blob)
        run = subprocess.run([cli, "check", "--onnx", damaged], capture_output=True, text=True, timeout=120)
        if run.returncode not in (0, 3):
            print(f"FAIL: {what}: batchfit-cli exited {run.returncode}: {run.stderr.strip()}")
            ok = False
    os.remove(damaged)
    return 0 if ok else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tiny")
    t.add_argument("outdir")
    r = sub.add_parser("resnet18")
    r.add_argument("out")
    m = sub.add_parser("measure-resnet18")
    m.add_argument("--batch", type=int, default=2)
    c = sub.add_parser("check-resnet18")
    c.add_argument("--cli", required=True)
    c.add_argument("--workdir", required=True)
    c.add_argument("--batch", type=int, default=2)
    c.add_argument("--tolerance", type=float, default=0.01)
    args = ap.parse_args(argv)
    if args.cmd == "tiny":
        try:
            import onnx  # noqa: F401
        except ImportError as e:
            print(f"skipped: {e}")
            return SKIP
        _tiny(args.outdir)
        return 0
    if args.cmd == "resnet18":
        _import_torch()
        export_resnet18(args.out)
        return 0
    if args.cmd == "measure-resnet18":
        _import_torch()
        saved, params = measure_resnet18(args.batch)
        print(json.dumps({"batch": args.batch, "saved_activation_bytes": saved, "params": params}))
        return 0
    return check_resnet18(args.cli, args.workdir, args.batch, args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
