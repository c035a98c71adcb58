#!/usr/bin/python3
"""Shared counting machinery for measure_saved.py and measure_ops.py.

Counting rules (the "BatchFit reference rules"):

* every tensor autograd saves during the forward (and the loss) is seen through
  ``torch.autograd.graph.saved_tensors_hooks``;
* bytes are counted per *unique storage*: key ``t.storage().data_ptr()``, size
  ``t.storage().nbytes()`` (a saved view keeps its whole storage alive, so the
  whole storage is counted, once);
* storages of parameters are excluded (this also excludes views of parameters
  such as ``weight.t()``); buffers are not parameters and count;
* the input batch counts when it is saved (it is not a parameter).

After the forward, the autograd graph is walked and every ``_saved_<name>``
attribute of every node is read once.  Reading it runs our unpack hook, which
tells which node (``grad_fn`` name, e.g. ``ConvolutionBackward0``) and which
slot (``self``, ``result``, ``mat2``, ``indices``, ``mean``, ``rstd``...)
each packed tensor belongs to.
"""
import contextlib

import torch


def storage_key(t):
    """(storage identity, storage nbytes).  Identity = storage data_ptr; on the
    meta device (no data) the StorageImpl address, which views share too.  torch 2.x: the untyped
    storage (TypedStorage is deprecated and warns); torch 1.13 has untyped_storage() too, 1.12 not."""
    st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    if t.device.type == "meta":
        return ("meta", st._cdata), st.nbytes()
    return st.data_ptr(), st.nbytes()


class SavedRecorder:
    """Context manager recording every tensor autograd saves."""

    def __init__(self, exclude_tensors=(), module_path=lambda: ""):
        self.exclude = {storage_key(p)[0] for p in exclude_tensors}
        self.module_path = module_path
        self.records = []
        self.tensors = []
        self.sid = {}          # data_ptr -> storage id (first-seen order)
        self.seen = set()      # counted storages
        self.total = 0
        self._unpacked = []
        self._ctx = None

    # -- hooks -------------------------------------------------------------
    def _pack(self, t):
        idx = len(self.tensors)
        self.tensors.append(t)
        ptr, nbytes = storage_key(t)
        is_param = ptr in self.exclude
        new = False
        if not is_param and ptr not in self.seen and nbytes > 0:
            self.seen.add(ptr)
            self.total += nbytes
            new = True
        if ptr not in self.sid:
            self.sid[ptr] = len(self.sid)
        self.records.append({
            "idx": idx,
            "module": self.module_path(),
            "node": None,
            "slot": None,
            "shape": list(t.shape),
            "stride": list(t.stride()),
            "offset": t.storage_offset(),
            "dtype": str(t.dtype).replace("torch.", ""),
            "tensor_bytes": t.numel() * t.element_size(),
            "storage": self.sid[ptr],
            "storage_bytes": nbytes,
            "param": is_param,
            "new": new,
        })
        return idx

    def _unpack(self, idx):
        self._unpacked.append(idx)
        return self.tensors[idx]

    def __enter__(self):
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)

    # -- attribution -------------------------------------------------------
    def attribute(self, *roots):
        """Walk the graph from ``roots`` (tensors or grad_fns) and fill node/slot."""
        stack = []
        for r in roots:
            fn = r.grad_fn if isinstance(r, torch.Tensor) else r
            if fn is not None:
                stack.append(fn)
        visited = set()
        while stack:
            fn = stack.pop()
            if fn is None or fn in visited:
                continue
            visited.add(fn)
            for attr in dir(fn):
                if not attr.startswith("_saved_"):
                    continue
                self._unpacked = []
                try:
                    getattr(fn, attr)
                except Exception:  # noqa: BLE001 - some slots cannot be read
                    continue
                for i in self._unpacked:
                    rec = self.records[i]
                    if rec["node"] is None:
                        rec["node"] = fn.name()
                        rec["slot"] = attr[len("_saved_"):]
            for nxt, _ in fn.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        self._unpacked = []

    def unreachable_bytes(self):
        """After attribute(): bytes of the unique storages that only nodes outside the walked graph saved (a
        graph made and dropped inside the forward, as DoRA's lora_weight = lora_B(lora_A(eye)) whose result is
        only used detached): freed before the backward, so not held for it."""
        reached = {r["storage"] for r in self.records if r["node"] is not None}
        sizes = {r["storage"]: r["storage_bytes"] for r in self.records if not r["param"]}
        return sum(b for s, b in sizes.items() if s not in reached)

    def per_module(self):
        """module path -> {new_bytes, saved (records), new_storages}, forward order."""
        out = {}
        for r in self.records:
            m = out.setdefault(r["module"] or "<root>", {"new_bytes": 0, "saved": 0, "new_storages": 0})
            m["saved"] += 1
            if r["new"]:
                m["new_bytes"] += r["storage_bytes"]
                m["new_storages"] += 1
        return out


class ModuleTracker:
    """Keeps the dotted path of the module whose forward is running."""

    def __init__(self, named_modules):
        self.stack = []
        self.handles = []
        for name, mod in named_modules:
            self.handles.append(mod.register_forward_pre_hook(self._pre(name)))
            self.handles.append(mod.register_forward_hook(self._post(name)))

    def _pre(self, name):
        def hook(mod, inp):
            self.stack.append(name)
        return hook

    def _post(self, name):
        def hook(mod, inp, out):
            if self.stack and self.stack[-1] == name:
                self.stack.pop()
        return hook

    def path(self):
        return self.stack[-1] if self.stack else ""

    def remove(self):
        for h in self.handles:
            h.remove()


def named_modules_with_loss(model, loss):
    mods = [(n, m) for n, m in model.named_modules() if n != ""]
    mods.append(("<model>", model))
    mods = [("", model) if n == "<model>" else (n, m) for n, m in mods]
    if loss is not None:
        mods.append(("loss", loss))
    return mods


@contextlib.contextmanager
def tracked(model, loss=None):
    tr = ModuleTracker(named_modules_with_loss(model, loss))
    try:
        yield tr
    finally:
        tr.remove()


def dump_json(obj, path, compact_lists=("records", "saved_tensors"),
              compact_dicts=("per_module", "saved", "saved_0dim_bytes", "saved_device", "optimizer_state_by_kind", "attrs")):
    """json.dump with indent=1, but every element of the lists named in
    ``compact_lists`` (at any depth) written on one line (keeps files small and diffable)."""
    import json

    def enc(o, ind):
        pad = " " * ind
        if isinstance(o, dict):
            if not o:
                return "{}"
            parts = []
            for k, v in o.items():
                if k in compact_lists and isinstance(v, list):
                    inner = (",\n" + pad + "  ").join(json.dumps(e, separators=(",", ":")) for e in v)
                    parts.append(f'{pad} {json.dumps(k)}: [\n{pad}  {inner}\n{pad} ]' if v else
                                 f'{pad} {json.dumps(k)}: []')
                elif k in compact_dicts and isinstance(v, dict) and v:
                    inner = (",\n" + pad + "  ").join(
                        f"{json.dumps(kk)}: {json.dumps(vv, separators=(',', ':'))}" for kk, vv in v.items())
                    parts.append(f'{pad} {json.dumps(k)}: {{\n{pad}  {inner}\n{pad} }}')
                else:
                    parts.append(f"{pad} {json.dumps(k)}: {enc(v, ind + 1)}")
            return "{\n" + ",\n".join(parts) + "\n" + pad + "}"
        if isinstance(o, list):
            if all(not isinstance(e, (dict, list)) for e in o):
                return json.dumps(o)
            return "[\n" + ",\n".join(pad + " " + enc(e, ind + 1) for e in o) + "\n" + pad + "]"
        return json.dumps(o)

    with open(path, "w") as f:
        f.write(enc(obj, 0) + "\n")
