"""The intermediate graph the mapper reads, built by torch.fx or by the eager fallback tracer.

Both tracers run the model twice, at batch 1 and batch 2, under ``saved_lib.SavedRecorder``:
every node gets the description of its output at both batch sizes (``Node.vals``: shapes,
dtypes, storage identity, contiguity) and the bytes of the *new* storages autograd saved while
it ran (``Node.saved``).  Shapes at two batch sizes tell which dim is the batch; the saved bytes
are what an opaque layer carries.

* ``trace_fx``: ``torch.fx`` symbolic tracing with a tracer that records the module path of every
  node and the source line (``record_stack_traces``), and treats as leaves the torch.nn modules
  (fx's default), dropout/stochastic-depth modules, and any module path the caller names (the
  exporter makes a module a leaf when something inside it cannot be mapped).
* ``trace_eager``: for models fx cannot trace (data-dependent Python control flow, iteration
  over proxies...): the model runs for real; forward hooks record leaf-module calls and a
  ``TorchFunctionMode`` records the torch functions and tensor methods called outside leaf
  modules.  Python control flow is resolved for the example input; the two runs (batch 1, 2)
  must take the same path.
"""
import dis
import gc
import inspect
import operator
import os
import re
import sys
import traceback

import torch
import torch.fx as fx
import torch.nn as nn

from .saved_lib import SavedRecorder

try:  # torch >= 1.13
    from torch.overrides import TorchFunctionMode
except ImportError:  # pragma: no cover - very old torch
    TorchFunctionMode = None


# torch.utils.checkpoint regions being traced: a stack of region ids (export._CheckpointCalls pushes and pops
# them around each checkpoint() call); every node created inside gets the outermost one as ``Node.ckpt``.
CHECKPOINT_STACK = []


def current_checkpoint_region():
    return CHECKPOINT_STACK[0] if CHECKPOINT_STACK else None


class TraceError(Exception):
    pass


class Ref:
    """A reference to the output of node ``name`` inside args/kwargs."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"%{self.name}"


class TMeta:
    """Description of a tensor value."""
    __slots__ = ("shape", "dtype", "requires_grad", "storage", "storage_nbytes", "contiguous", "param",
                 "offset", "stride")

    def __init__(self, t, param_names):
        self.shape = tuple(t.shape)
        self.dtype = t.dtype
        self.requires_grad = bool(t.requires_grad)
        try:
            st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
            self.storage = st.data_ptr()
            self.storage_nbytes = st.nbytes()
        except Exception:  # noqa: BLE001 - sparse, meta...
            self.storage, self.storage_nbytes = None, 0
        self.contiguous = t.is_contiguous()
        self.offset = t.storage_offset() if self.storage is not None else 0
        self.stride = tuple(t.stride()) if self.storage is not None else ()
        self.param = param_names.get(self.storage)

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"T{list(self.shape)}:{str(self.dtype).replace('torch.', '')}"


def describe(v, param_names, depth=0):
    if isinstance(v, torch.Tensor):
        return TMeta(v, param_names)
    if depth > 3:
        return None
    if isinstance(v, (tuple, list)):
        return tuple(describe(x, param_names, depth + 1) for x in v)
    if isinstance(v, dict):
        return {k: describe(x, param_names, depth + 1) for k, x in v.items()}
    if hasattr(v, "keys") and hasattr(v, "__getitem__"):  # ModelOutput-like
        try:
            return {k: describe(v[k], param_names, depth + 1) for k in v.keys()}
        except Exception:  # noqa: BLE001
            return None
    if isinstance(v, (int, float, bool, str, type(None), torch.dtype, torch.device, slice, type(Ellipsis))):
        return v
    if isinstance(v, torch.Size):
        return tuple(v)
    return None


class Node:
    """One operation: kind is 'input', 'attr' (a parameter/buffer/constant), 'module' (target: module
    path), 'function' (target: callable), 'method' (target: tensor method name) or 'output'."""

    def __init__(self, name, kind, target, args=(), kwargs=None, module_path="", location=""):
        self.name = name
        self.kind = kind
        self.target = target
        self.args = args
        self.kwargs = kwargs or {}
        self.module_path = module_path
        self.location = location
        self.vals = [None, None]   # output description at batch 1 and 2
        self.saved = [0, 0]        # new saved bytes at batch 1 and 2
        self.users = []
        self.ckpt = current_checkpoint_region()  # the torch.utils.checkpoint region it ran in (fx: set later)

    def target_name(self):
        t = self.target
        if self.kind in ("module", "attr", "method", "input", "output"):
            return str(t)
        mod = getattr(t, "__module__", None) or ""
        name = getattr(t, "__name__", None) or str(t)
        if mod in ("_operator", "operator"):
            return f"operator.{name}"
        if mod.startswith("torch._C"):
            mod = "torch"
        return f"{mod}.{name}" if mod else name

    def where(self):
        loc = f" ({self.location})" if self.location else ""
        return f"in module '{self.module_path or '<root>'}'{loc}"

    def __repr__(self):
        return f"{self.name} = {self.kind}[{self.target_name()}]{self.args}"


class Graph:
    def __init__(self, nodes, method, param_names):
        self.nodes = nodes
        self.by_name = {n.name: n for n in nodes}
        self.method = method       # 'fx' or 'eager'
        self.param_names = param_names
        for n in nodes:
            for r in iter_refs((n.args, n.kwargs)):
                self.by_name[r.name].users.append(n)


def iter_refs(obj):
    if isinstance(obj, Ref):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            yield from iter_refs(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from iter_refs(x)
    elif isinstance(obj, slice):
        yield from iter_refs((obj.start, obj.stop, obj.step))


def param_name_map(model):
    """storage data_ptr -> 'name' for every parameter and buffer (parameters first)."""
    out = {}
    for name, p in model.named_parameters():
        out.setdefault(p.data_ptr(), name)
    for name, b in model.named_buffers():
        try:
            out.setdefault(b.data_ptr(), "buffer:" + name)
        except Exception:  # noqa: BLE001
            pass
    return out


def _location_from_stack(text, innermost_first=False):
    """'file.py:123 in forward' (the innermost frame outside torch) from a formatted stack."""
    if not text:
        return ""
    found = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', text)
    if innermost_first:
        found.reverse()
    user = [f for f in found if not _internal(f[0])]
    if not (user or found):
        return ""
    f, line, fn = (user or found)[-1]
    return f"{f.rsplit('/', 1)[-1]}:{line} in {fn}"


# torch itself, the batchfit package (this exporter and the API that calls it), and the tools/ scripts of a
# clone that drive it (tools/torch_export.py is the outermost frame of every stack: it must never be reported as
# where an op is).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INTERNAL_DIRS = (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep, _PACKAGE_DIR + os.sep,
                  os.path.join(os.path.dirname(os.path.dirname(_PACKAGE_DIR)), "tools") + os.sep)


def _internal(path):
    """Frames of torch itself and of this package (not torchvision's, not the user's)."""
    return os.path.abspath(path).startswith(_INTERNAL_DIRS)


# ----------------------------------------------------------------------------------------------
# leaves
# ----------------------------------------------------------------------------------------------
LEAF_CLASS_NAMES = {"NativeDropout", "StochasticDepth", "DropPath"}


def is_hf_conv1d(m):
    """transformers' Conv1D (GPT-2's c_attn, c_fc, c_proj): a linear whose weight is stored [in, out]."""
    return type(m).__name__ == "Conv1D" and type(m).__module__.startswith("transformers")


def default_is_leaf(m, qualname):
    if type(m).__name__ in LEAF_CLASS_NAMES or is_hf_conv1d(m):
        return True
    mod = type(m).__module__
    return (mod.startswith("torch.nn") or mod.startswith("torch.ao.nn")) and not isinstance(m, nn.Sequential)


# ----------------------------------------------------------------------------------------------
# torch.fx
# ----------------------------------------------------------------------------------------------
class _Tracer(fx.Tracer):
    def __init__(self, leaf_paths):
        super().__init__()
        self.leaf_paths = set(leaf_paths)
        self.record_stack_traces = True
        self._stack = []

    def is_leaf_module(self, m, qualname):
        if qualname in self.leaf_paths:
            return True
        return default_is_leaf(m, qualname)

    def call_module(self, m, forward, args, kwargs):
        try:
            path = self.path_of_module(m)
        except Exception:  # noqa: BLE001
            path = "?"
        self._stack.append(path)
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self._stack.pop()

    def create_node(self, *a, **kw):
        node = super().create_node(*a, **kw)
        node.meta["bf_module_path"] = self._stack[-1] if self._stack else ""
        node.meta["bf_ckpt"] = current_checkpoint_region()
        return node


def _proxy_iter(self):
    """``a, b = proxy`` for torch < 2.0 on Python >= 3.11: torch 1.x finds the UNPACK_SEQUENCE at
    ``f_lasti // 2``, which inline caches make wrong (IndexError); look it up by offset."""
    frame = inspect.currentframe()
    try:
        calling = frame.f_back
        for inst in dis.get_instructions(calling.f_code):
            if inst.offset == calling.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
    finally:
        del frame
    return self.tracer.iter(self)


def _needs_iter_patch():
    return sys.version_info >= (3, 11) and int(torch.__version__.split(".")[0]) < 2


def fx_graph_module(model, leaf_paths=()):
    tracer = _Tracer(leaf_paths)
    orig = fx.proxy.Proxy.__iter__
    if _needs_iter_patch():
        fx.proxy.Proxy.__iter__ = _proxy_iter
    try:
        graph = tracer.trace(model)
    finally:
        fx.proxy.Proxy.__iter__ = orig
    return fx.GraphModule(tracer.root, graph, type(model).__name__)


class _Recorder(fx.Interpreter):
    def __init__(self, gm, rec, param_names):
        super().__init__(gm)
        self.rec = rec
        self.param_names = param_names
        self.vals, self.saved, self.keep = {}, {}, []

    def run_node(self, n):
        before = self.rec.total
        out = super().run_node(n)
        self.saved[n.name] = self.rec.total - before
        self.vals[n.name] = describe(out, self.param_names)
        self.keep.append(out)
        return out


def trace_fx(model, inputs, leaf_paths=()):
    """inputs: [x_batch1, x_batch2]. Returns a Graph."""
    gm = fx_graph_module(model, leaf_paths)
    gm.train(model.training)
    params = list(model.parameters())
    pnames = param_name_map(model)
    nodes, placeholders = [], []
    for n in gm.graph.nodes:
        def conv(a):
            return fx.node.map_arg(a, lambda x: Ref(x.name))
        kind = {"placeholder": "input", "get_attr": "attr", "call_module": "module", "call_function": "function",
                "call_method": "method", "output": "output"}[n.op]
        node = Node(n.name, kind, n.target, conv(n.args), conv(dict(n.kwargs)), n.meta.get("bf_module_path", ""),
                    # torch 1.13 wrote fx stack traces innermost first; 2.x writes them innermost last
                    _location_from_stack(n.stack_trace, innermost_first=int(torch.__version__.split(".")[0]) < 2))
        node.ckpt = n.meta.get("bf_ckpt")
        if kind == "module":
            node.module_path = n.target
        if kind == "input":
            placeholders.append(n)
        nodes.append(node)
    required = [p for p in placeholders if not p.args]  # placeholders with a default have args
    if len(required) > 1:
        raise TraceError(f"the model's forward takes {len(required)} inputs ({', '.join(p.target for p in required)}); "
                         "BatchFit model files have one input")
    for bi, x in enumerate(inputs):
        rec = SavedRecorder(params)
        interp = _Recorder(gm, rec, pnames)
        with rec:
            out = interp.run(x)
        del out
        for node in nodes:
            node.vals[bi] = interp.vals.get(node.name)
            node.saved[bi] = interp.saved.get(node.name, 0)
        _release(rec)
        interp.keep.clear()
        del interp, rec
        gc.collect()
    return Graph(nodes, "fx", pnames), gm


def untracked_view(base):
    """Stands for a view of ``base`` the eager tracer saw only when it was used (its shape, strides and
    offset tell which select/slice it is)."""
    raise RuntimeError("placeholder, never called")


# ----------------------------------------------------------------------------------------------
# eager fallback
# ----------------------------------------------------------------------------------------------
_DUNDER = {
    "__add__": (operator.add, False), "__radd__": (operator.add, True), "__iadd__": (operator.iadd, False),
    "__sub__": (operator.sub, False), "__rsub__": (operator.sub, True), "__isub__": (operator.isub, False),
    "__mul__": (operator.mul, False), "__rmul__": (operator.mul, True), "__imul__": (operator.imul, False),
    "__truediv__": (operator.truediv, False), "__rtruediv__": (operator.truediv, True),
    "__itruediv__": (operator.itruediv, False), "__div__": (operator.truediv, False),
    "__matmul__": (operator.matmul, False), "__rmatmul__": (operator.matmul, True),
    "__getitem__": (operator.getitem, False), "__neg__": (operator.neg, False),
}


def _normalize(func, args):
    """(kind, target, args) for a function seen by __torch_function__."""
    name = getattr(func, "__name__", "")
    for dunder, (op, swap) in _DUNDER.items():
        if func is getattr(torch.Tensor, dunder, None):
            return "function", op, (tuple(reversed(args[:2])) + tuple(args[2:])) if swap else tuple(args)
    qual = getattr(func, "__qualname__", "") or ""
    if qual.startswith("_TensorBase.") or qual.startswith("Tensor.") or qual.startswith("TensorBase."):
        if name in _DUNDER:
            op, swap = _DUNDER[name]
            return "function", op, (tuple(reversed(args[:2])) + tuple(args[2:])) if swap else tuple(args)
        return "method", name, tuple(args)
    return "function", func, tuple(args)


def _has_tensor(obj, depth=0):
    if isinstance(obj, torch.Tensor):
        return True
    if depth > 3:
        return False
    if isinstance(obj, (tuple, list)):
        return any(_has_tensor(x, depth + 1) for x in obj)
    if isinstance(obj, dict):
        return any(_has_tensor(x, depth + 1) for x in obj.values())
    return False


class _EagerTracer:
    def __init__(self, model, leaf_paths, rec, param_names):
        self.model = model
        self.leaf_paths = set(leaf_paths)
        self.rec = rec
        self.pnames = param_names
        self.nodes = []
        self.tensor_ref = {}   # id(tensor) -> node name
        self.storage_ref = {}  # storage data_ptr -> the last node whose output lives there
        self.keep = []
        self.stack = []
        self.leaf_depth = 0
        self.fn_depth = 0
        self.busy = 0          # > 0 while the tracer itself runs tensor methods
        self.handles = []
        self.counts = {}
        self.used = {"x", "output"}  # the input and output nodes' names: a module called "output" is output_1
        self.attr_nodes = {}

    # -- names and refs -----------------------------------------------------------------------
    def _name(self, base):
        base = re.sub(r"[^0-9A-Za-z_]", "_", base).strip("_") or "op"
        k = self.counts.get(base, 0)
        while True:
            name = base if k == 0 else f"{base}_{k}"
            k += 1
            if name not in self.used:
                break
        self.counts[base] = k
        self.used.add(name)
        return name

    def _register(self, t, name):
        self.tensor_ref[id(t)] = name
        try:
            if t.layout == torch.strided and t.data_ptr() not in self.pnames:
                st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
                self.storage_ref[st.data_ptr()] = name
        except Exception:  # noqa: BLE001
            pass

    def _add(self, node, out, saved):
        node.vals[0] = describe(out, self.pnames)
        node.saved[0] = saved
        self.nodes.append(node)
        self.keep.append(out)
        if isinstance(out, torch.Tensor):
            self._register(out, node.name)
        elif isinstance(out, (tuple, list)):
            for i, t in enumerate(out):
                if isinstance(t, torch.Tensor):
                    g = Node(self._name(f"{node.name}_{i}"), "function", operator.getitem, (Ref(node.name), i),
                             module_path=node.module_path, location=node.location)
                    g.vals[0] = describe(t, self.pnames)
                    self.nodes.append(g)
                    self._register(t, g.name)
        return node

    def refs(self, obj, depth=0):
        if isinstance(obj, torch.Tensor):
            r = self.tensor_ref.get(id(obj))
            if r is not None:
                return Ref(r)
            # a view made without __torch_function__ (torch 1.x: integer indexing ``x[0]``)
            try:
                st = obj.untyped_storage() if hasattr(obj, "untyped_storage") else obj.storage()
                base = self.storage_ref.get(st.data_ptr()) if obj.layout == torch.strided else None
            except Exception:  # noqa: BLE001
                base = None
            if base is not None:
                node = Node(self._name("view"), "function", untracked_view, (Ref(base),), module_path=self.path())
                self._add(node, obj, 0)
                return Ref(node.name)
            key = obj.data_ptr() if obj.layout == torch.strided else None
            pname = self.pnames.get(key) if isinstance(obj, nn.Parameter) or key in self.pnames else None
            name = self.attr_nodes.get(id(obj))
            if name is None:
                target = pname.replace("buffer:", "") if pname else None
                name = self._name(target or "constant")
                node = Node(name, "attr", target or "<constant>", module_path=self.path())
                self.attr_nodes[id(obj)] = name
                self._add(node, obj, 0)
            return Ref(name)
        if depth > 3:
            return obj
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return tuple(self.refs(x, depth + 1) for x in obj)
        if isinstance(obj, (tuple, list)):
            return type(obj)(self.refs(x, depth + 1) for x in obj)
        if isinstance(obj, dict):
            return {k: self.refs(x, depth + 1) for k, x in obj.items()}
        if isinstance(obj, slice):
            return slice(self.refs(obj.start, depth + 1), self.refs(obj.stop, depth + 1),
                         self.refs(obj.step, depth + 1))
        return obj

    def path(self):
        return self.stack[-1] if self.stack else ""

    # -- module wrappers ----------------------------------------------------------------------
    def install(self):
        """Wraps every module's forward: the path stack for all, a node for each outermost leaf call
        (a wrapper sees keyword arguments, which forward pre-hooks of torch < 2.0 do not)."""
        for path, m in self.model.named_modules():
            leaf = path != "" and (path in self.leaf_paths or default_is_leaf(m, path))
            had = "forward" in m.__dict__
            self.handles.append((m, had, m.__dict__.get("forward")))
            m.forward = self._wrap(m, m.forward, path, leaf)

    def _wrap(self, m, orig, path, leaf):
        def forward(*args, **kwargs):
            self.stack.append(path)
            try:
                if not leaf or self.leaf_depth > 0 or self.fn_depth > 0:
                    if leaf:
                        self.leaf_depth += 1
                    try:
                        return orig(*args, **kwargs)
                    finally:
                        if leaf:
                            self.leaf_depth -= 1
                self.busy += 1
                try:
                    loc = _location_from_stack("".join(traceback.format_stack(limit=40)[:-1]))
                    node = Node(self._name(path.replace(".", "_")), "module", path, self.refs(tuple(args)),
                                self.refs(dict(kwargs)), module_path=path, location=loc)
                finally:
                    self.busy -= 1
                before = self.rec.total
                self.leaf_depth += 1
                try:
                    out = orig(*args, **kwargs)
                finally:
                    self.leaf_depth -= 1
                self.busy += 1
                try:
                    self._add(node, out, self.rec.total - before)
                finally:
                    self.busy -= 1
                return out
            finally:
                self.stack.pop()
        return forward

    def remove(self):
        for m, had, fwd in self.handles:
            if had:
                m.forward = fwd
            else:
                del m.forward

    # -- functions ----------------------------------------------------------------------------
    def on_function(self, func, types, args, kwargs):
        if self.leaf_depth > 0 or self.fn_depth > 0 or self.busy > 0:
            return func(*args, **kwargs)
        kind, target, nargs = _normalize(func, args)
        before = self.rec.total
        self.fn_depth += 1
        try:
            out = func(*args, **kwargs)
        finally:
            self.fn_depth -= 1
        if out is None and args and isinstance(args[0], torch.Tensor):  # e.g. __setitem__
            out = args[0]
        if not _has_tensor(out):
            return out
        self.busy += 1
        try:
            arg_refs = self.refs(tuple(nargs))
            kw_refs = self.refs(dict(kwargs))
            name = self._name(target if isinstance(target, str) else getattr(target, "__name__", "op"))
            loc = _location_from_stack("".join(traceback.format_stack(limit=40)[:-1]))
            self._add(Node(name, kind, target, arg_refs, kw_refs, module_path=self.path(), location=loc), out,
                      self.rec.total - before)
        finally:
            self.busy -= 1
        return out


if TorchFunctionMode is not None:
    class _Mode(TorchFunctionMode):
        def __init__(self, tracer):
            super().__init__()
            self.tracer = tracer

        def __torch_function__(self, func, types, args=(), kwargs=None):
            return self.tracer.on_function(func, types, args, kwargs or {})


def _release(rec):
    """Drops the tensors a SavedRecorder holds (it is in a reference cycle with its hooks, so it would
    otherwise keep every saved tensor alive until the next garbage collection)."""
    rec.tensors.clear()
    rec.records.clear()
    rec._ctx = None


def _eager_once(model, x, leaf_paths, pnames):
    if TorchFunctionMode is None:
        raise TraceError("the eager fallback needs torch >= 1.13 (TorchFunctionMode)")
    params = list(model.parameters())
    rec = SavedRecorder(params)
    tr = _EagerTracer(model, leaf_paths, rec, pnames)
    inp = Node("x", "input", "x")
    tr._add(inp, x, 0)
    tr.install()
    try:
        with rec:
            with _Mode(tr):
                out = model(x)
    finally:
        tr.remove()
    tr.busy += 1
    outnode = Node("output", "output", "output", (tr.refs(out),))
    outnode.vals[0] = describe(out, pnames)
    tr.nodes.append(outnode)
    return tr.nodes, (tr.keep, rec)


def _batch_divergence(a, b, first):
    """The message for runs at batch 1 and 2 that differ: where, what each ran, and what to try."""
    def where(n):
        at = f"{n.module_path or '<top level>'}"
        return at + (f" ({n.location})" if n.location else "")
    if first is None:  # one run is a prefix of the other
        first = min(len(a), len(b))
        longer = a if len(a) > len(b) else b
        what = f"only batch {1 if longer is a else 2} runs {longer[first].target_name()} in {where(longer[first])}"
    else:
        p, q = a[first], b[first]
        what = (f"operation {first + 1} differs in {where(p)}: batch 1 runs {p.target_name()}, batch 2 runs "
                f"{q.target_name()}")
    return ("the model runs different operations at batch 1 and batch 2 (control flow depends on the batch "
            f"size): {what}. Export a wrapper that makes the path fixed (for Hugging Face models: "
            "use_cache=False, return_dict=True, and an explicit attention_mask of ones, which keeps the mask "
            "code on one branch), or a batch-independent variant of that module; cannot export it")


def trace_eager(model, inputs, leaf_paths=()):
    pnames = param_name_map(model)
    runs = []
    for x in inputs:
        nodes, (keep, rec) = _eager_once(model, x, leaf_paths, pnames)
        runs.append(nodes)
        keep.clear()
        _release(rec)
        del keep, rec
        gc.collect()
    a, b = runs
    first = next((i for i, (p, q) in enumerate(zip(a, b))
                  if p.kind != q.kind or p.target is not q.target and p.target != q.target), None)
    if first is not None or len(a) != len(b):
        raise TraceError(_batch_divergence(a, b, first))
    for p, q in zip(a, b):
        p.vals[1] = q.vals[0]
        p.saved[1] = q.saved[0]
    return Graph(a, "eager", pnames)
