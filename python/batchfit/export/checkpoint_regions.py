"""torch.utils.checkpoint regions into checkpoint blocks.

The mapper tags each layer it emits with the checkpoint region its node was traced in (``"_ckpt"``, see
export._CheckpointCalls). ``group_checkpoint_regions`` turns each region's run of consecutive layers into a block
``{"name": ..., "checkpoint": true, "layers": [...]}``: BatchFit then recomputes exactly what torch recomputes when
it is estimated with ``--checkpointing every-block``. A block's inner names are only visible inside it, so a region
is grouped only when nothing after it reads an inner layer other than its last one (the block's output); references
to that last layer (``inputs``, ``tied_to``) are rewritten to the block's name.
"""


def _block_name(label, taken):
    base = "".join(c if (c.isalnum() or c == "_") else "_" for c in label) or "checkpoint"
    if base[0].isdigit():
        base = "ckpt_" + base
    name, k = base, 1
    while name in taken:
        name = f"{base}_{k}"
        k += 1
    taken.add(name)
    return name


def _short_names(group, prefix):
    """Inner names without the block's prefix (blocks_0_ln -> ln, downs_1_0 -> 0) where they stay unique."""
    rename = {}
    for layer in group:
        n = layer["name"]
        short = n[len(prefix) + 1:] if n.startswith(prefix + "_") else n
        if not short or short == "loss":
            short = n
        rename[n] = short
    if len(set(rename.values())) != len(rename):
        return {n: n for n in rename}
    return rename


def group_checkpoint_regions(layers, regions):
    """Returns (layers, grouped, problems): the layer list with blocks, the modes of the grouped regions, and why
    the other regions stayed flat."""
    runs = []
    i = 0
    while i < len(layers):
        rid = layers[i].get("_ckpt")
        j = i + 1
        while rid is not None and j < len(layers) and layers[j].get("_ckpt") == rid:
            j += 1
        runs.append((rid, i, j))
        i = j
    problems, grouped = [], []
    counts = {}
    for rid, _, _ in runs:
        if rid is not None:
            counts[rid] = counts.get(rid, 0) + 1
    taken = {layer["name"] for layer in layers} | {"loss"}
    out, renamed = [], {}   # renamed: old name -> its path from the root now (for tied_to)
    for rid, i, j in runs:
        group = [dict(layer) for layer in layers[i:j]]
        for layer in group:
            layer.pop("_ckpt", None)
        if rid is None:
            out.extend(group)
            continue
        label = regions.get(rid, {}).get("label", "checkpoint")
        inner = {layer["name"] for layer in group}
        last = group[-1]["name"]
        read_later = {r for layer in layers[j:] for r in layer.get("inputs", [])}
        leaks = sorted((inner - {last}) & read_later)
        if counts[rid] > 1:
            problems.append(f"{label}: its layers are not consecutive in the export")
        elif leaks:
            problems.append(f"{label}: later layers read {', '.join(leaks[:3])} from inside it")
        else:
            name = _block_name(label.replace(".", "_"), taken)
            short = _short_names(group, label.replace(".", "_"))
            for layer in group:
                if "inputs" in layer:
                    layer["inputs"] = [short.get(r, r) for r in layer["inputs"]]
                renamed[layer["name"]] = f"{name}.{short[layer['name']]}"
                layer["name"] = short[layer["name"]]
            out.append({"name": name, "checkpoint": True, "layers": group})
            grouped.append(regions.get(rid, {}).get("mode", "reentrant"))
            # later references to the region's output now name the block
            for later in layers[j:]:
                if last in later.get("inputs", []):
                    later["inputs"] = [name if r == last else r for r in later["inputs"]]
            continue
        out.extend(group)
    # tied_to names a path from the root: follow layers that moved into a block (or became its name)
    def fix(items):
        for layer in items:
            if layer.get("tied_to") in renamed:
                layer["tied_to"] = renamed[layer["tied_to"]]
            if "layers" in layer:
                fix(layer["layers"])
    fix(out)
    return out, grouped, problems
