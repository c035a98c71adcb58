#!/usr/bin/env python3
"""Turn a PyTorch CUDA memory snapshot (a pickle) into a BatchFit allocator trace (docs/allocator-trace.md).

    python3 tools/snapshot_to_trace.py snap.pickle -o trace.json [--device N] [--device-total-bytes 24GiB]
    batchfit-cli allocator-replay trace.json --json

Only the standard library is needed (no torch). Record the snapshot on the GPU with

    torch.cuda.memory._record_memory_history(max_entries=100000)
    ... one training step ...
    torch.cuda.memory._dump_snapshot("snap.pickle")

SECURITY: unpickling can run code. The snapshot is read with a restricted pickle.Unpickler whose find_class refuses
every global, so only plain data (dict, list, tuple, str, int, float, bool, None) can come out of the file and no
function or class named in it is ever imported or called. A file that needs a global is refused (exit 2).

What is read, and where the format comes from (pytorch/pytorch sources read for this script):

* torch/cuda/memory.py @ 00b65a04: `_snapshot()` returns `_C._cuda_memorySnapshot(None)`, a dict;
  `_dump_snapshot(filename)` is `pickle.dump(_snapshot(), f)`. Its docstring documents Segment, Block and
  TraceEntry.
* torch/csrc/cuda/memory_snapshot.cpp @ 00067369 (`_memory_snapshot_pickled`; torch/csrc/cuda/Module.cpp builds the
  same dict for Python): the top level is {"segments", "device_traces", "allocator_settings"}.
  - segments[]: device, address, total_size, allocated_size, active_size, requested_size, stream (the raw
    cudaStream_t as an int), segment_type ("small"/"large"), segment_pool_id (a 2-tuple), is_expandable, frames,
    blocks[] {address, size, requested_size, state ("active_allocated" | "active_pending_free" | "inactive"),
    frames}.  The viewer's docstring says "active_awaiting_free"; the C++ writes "active_pending_free".
  - device_traces[d][]: {action, addr (device_free for "oom"), size, stream, time_us, frames}; actions "alloc",
    "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map", "segment_unmap",
    "snapshot", "oom" (newer versions add "annotate" and keys such as pool_id, user_metadata: ignored here).
  - allocator_settings (2.1+): "PYTORCH_CUDA_ALLOC_CONF" (the last settings string parsed, may be ""),
    "max_split_size" (int64_t(SIZE_MAX) = -1 when unlimited), "garbage_collection_threshold" (a float, 0 = off),
    "expandable_segments" (bool), "pinned_num_register_threads", "release_lock_on_cudamalloc",
    "pinned_use_cuda_host_register", and "roundup_power2_divisions": a dict {"1": d0, "2": d1, "4": d2, ...,
    "32768": d15}, one entry per power-of-two MiB interval.  Newer builds may name the string "PYTORCH_ALLOC_CONF".
* c10/cuda/CUDACachingAllocator.cpp @ 001074d2 (about 2.5), what each trace entry's size is:
  - "alloc" (alloc_found_block): record_trace(ALLOC, block->ptr, orig_size, ...): the size the caller ASKED for,
    not the rounded block size (stats.allocated_bytes is increased by block->size, requested_bytes by orig_size);
  - "free_requested" (free) and "free_completed" (free_block): block->requested_size, again the asked size.
    free_requested is written when the tensor is freed (allocated_bytes drops then); free_completed when the block
    is back in the pool (at once, or after the events of record_stream uses complete); both carry the block's
    address before any merge, the same address as its alloc;
  - "segment_alloc" (alloc_block): the cudaMalloc size; "segment_free" (release_block): the segment's size;
    "segment_map" / "segment_unmap" (map_block / unmap_block, expandable segments): the bytes of pages mapped or
    unmapped;
  - snapshot() lists one segment per cudaMalloc (per contiguous mapped range for expandable segments), sorted by
    address, total_size being the mapped bytes, and appends a "snapshot" entry (addr 0).
* torch/cuda/_memory_viz.py @ 0044eb67 (`_read`: a pickle that is a list holds segments only, the old format;
  `trace()`) and torch/utils/viz/MemoryViz.js (`process_alloc_data`: a free without an alloc in the trace, and a
  block active in the segments without one, were allocated before recording began: "initially_allocated").

Mapping:

* events: each "alloc" gets a fresh id (ids are numbered 1, 2, ... in the order of the written events), keyed by
  its address until its free. Frees use "free_completed" entries when the trace has any (the block is reusable
  from then on), otherwise "free_requested" (an old name "free" counts as free_requested).
* A free of an address with no live alloc in the trace, and an "active_allocated" block of the final segments
  that the trace did not leave allocated, were allocated before recording began: each gets an alloc at the start
  of the events (size: the free entry's size, or the block's requested_size), counted in
  recorded.preexisting_allocations.
* An "alloc" of an address that is still live (its free is missing from the trace) frees the old id first
  (a warning says so).
* A run of "segment_free"/"segment_unmap" entries that is not followed by a "segment_alloc", "segment_map" or
  "oom" entry is written as {"op": "empty_cache"}; a run followed by one of those is the allocator freeing cached
  segments inside a malloc that could not get memory (release_available_cached_blocks / release_cached_blocks),
  which the replay does by itself when it has a capacity (a heuristic: an empty_cache() directly followed by a
  malloc that needs a new segment looks the same and is not written).
* Streams: the raw stream values are numbered 0, 1, 2 ... in the order they first appear in the device's trace
  (then in its segments).
* alloc_conf: when the snapshot has allocator_settings, the canonical PYTORCH_CUDA_ALLOC_CONF text of the settings
  in effect (expandable_segments, max_split_size_mb, roundup_power2_divisions with all 16 intervals,
  garbage_collection_threshold; "" for the defaults), rebuilt from the structured fields; when only the settings
  string is there, that string. Older pickles have no allocator_settings: no alloc_conf is written.

recorded (walked over the device's trace entries; "at start" figures are inferred from the final segments):

* peak_reserved_bytes: reserved_at_start_bytes plus the highest running sum of segment_alloc/segment_map sizes
  minus segment_free/segment_unmap sizes; reserved_at_start_bytes = the final segments' total_size sum minus that
  sum's net change over the trace (0 when recording covered the allocator's whole life).
* peak_allocated_bytes: the same kind of walk over allocations, each counted as its block size, decreased at
  free_requested when the trace has such entries (when torch's allocated_bytes drops), otherwise at
  free_completed.  The trace only has requested sizes, so a block's size is taken as round_size(requested)
  (512-byte multiples, or roundup_power2_divisions, PyTorch 2.5's rule); the blocks still allocated at the end
  that were allocated before recording use their exact size from the segments.  It equals
  torch.cuda.max_memory_allocated() unless a block was handed out whole (a large-pool remainder of 1 MiB or less,
  an oversize block), where torch counts the whole block.
* peak_requested_bytes: the same walk with the sizes as asked (torch's requested_bytes).
* segment_allocs / segment_frees: the segment_alloc + segment_map / segment_free + segment_unmap entries, plus, in
  segment_allocs, segments_at_start: the final non-expandable segments that the trace did not allocate (they
  existed when recording began, and a replay that starts empty allocates them too).
* segments: the snapshot's final segments of the device, in address order: {"size": total_size, "stream"}.

Exit codes: 0 written; 2 the snapshot cannot be read or is not a snapshot (a message names the file and what was
expected), or bad arguments.
"""
import argparse
import io
import json
import os
import pickle
import re
import sys

FORMAT = "batchfit-allocator-trace"
VERSION = 1
MIB = 1 << 20
K_MIN_BLOCK = 512
FREE_ALIASES = {"free": "free_requested"}  # an older action name; MemoryViz.js still accepts "free"
SEGMENT_ADD = ("segment_alloc", "segment_map")
SEGMENT_SUB = ("segment_free", "segment_unmap")
INT64_MAX = (1 << 63) - 1

HELP_SECURITY = (
    "The pickle is read with a restricted unpickler that refuses every global (no class or function named in "
    "the file is imported or called): a snapshot holds only dicts, lists, tuples, strings, numbers and booleans. "
    "A file that needs anything else is refused with exit code 2.")


class SnapshotError(Exception):
    """The input is not a readable snapshot; the message says why."""


# The pure-Python unpickler keeps its memo in a dict. The C one (pickle.Unpickler) grows an array to the largest
# index a BINPUT/LONG_BINPUT names: a 4 KB file asking for index 175 million made it take 2.4 GB (found by
# fuzz/fuzz_snapshot.py). About 4x slower (0.5 s -> 2.3 s for an 11 MB snapshot), bounded in memory by the file.
_PythonUnpickler = getattr(pickle, "_Unpickler", pickle.Unpickler)


class _DataOnlyUnpickler(_PythonUnpickler):
    """Refuses every global: no code named in the file is imported or run."""

    def _refuse_bytearray(self):
        # BYTEARRAY8 allocates (and zeroes) the length it reads before reading: 16 bytes could ask for 2 GB
        # (fuzz/fuzz_snapshot.py). A snapshot holds no bytearray.
        raise pickle.UnpicklingError("it holds a bytearray (BYTEARRAY8), which a memory snapshot never does")

    if hasattr(_PythonUnpickler, "dispatch"):
        dispatch = dict(_PythonUnpickler.dispatch)
        dispatch[pickle.BYTEARRAY8[0]] = _refuse_bytearray

    def find_class(self, module, name):
        raise pickle.UnpicklingError(
            f"it refers to the global {module}.{name}, which is refused (a memory snapshot holds only plain data)")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("it uses a persistent id, which is refused (not a memory snapshot)")


def load_snapshot(path):
    """Reads a snapshot pickle with the restricted unpickler. Raises SnapshotError."""
    try:
        with open(path, "rb") as f:
            return _unpickle(f, path)
    except OSError as e:
        raise SnapshotError(f"{path}: cannot read it ({e.strerror or e})") from None


def loads_snapshot(data, path="<snapshot>"):
    """load_snapshot for bytes in memory (`path` names them in messages). Raises SnapshotError."""
    return _unpickle(io.BytesIO(data), path)


def _unpickle(f, path):
    try:
        head = f.read(1)
        if not head:
            raise SnapshotError(f"{path}: the file is empty; expected the pickle written by "
                                "torch.cuda.memory._dump_snapshot()")
        f.seek(0)
        return _DataOnlyUnpickler(f).load()
    except SnapshotError:
        raise
    except OSError as e:
        raise SnapshotError(f"{path}: cannot read it ({e.strerror or e})") from None
    except pickle.UnpicklingError as e:
        raise SnapshotError(f"{path}: not a readable memory snapshot: {e}; expected the pickle written by "
                            "torch.cuda.memory._dump_snapshot()") from None
    except (EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError, ImportError,
            UnicodeDecodeError, OverflowError, MemoryError, RecursionError) as e:
        what = "it ends too early" if isinstance(e, EOFError) else f"{type(e).__name__}: {e}"
        raise SnapshotError(f"{path}: not a pickle ({what}); expected the pickle written by "
                            "torch.cuda.memory._dump_snapshot()") from None
    except Exception as e:  # anything else the unpickler raises: still a message, never a traceback
        raise SnapshotError(f"{path}: not a readable pickle ({type(e).__name__}: {e}); expected the pickle "
                            "written by torch.cuda.memory._dump_snapshot()") from None


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _need_int(d, key, where, default=None, minimum=None):
    v = d.get(key, default)
    if not _is_int(v):
        raise SnapshotError(f"{where}: expected an integer '{key}', got {v!r:.60}")
    if minimum is not None and v < minimum:
        raise SnapshotError(f"{where}: '{key}' is {v}, expected at least {minimum}")
    return v


def round_size(n, divisions):
    """c10 round_size, PyTorch 2.5 (divisions > 1 rounds to the next power-of-2 division, else 512 bytes)."""
    if n < K_MIN_BLOCK:
        return K_MIN_BLOCK
    index = min(max(n.bit_length() - 1 - 20, 0), 15)
    d = divisions[index]
    if d > 1 and n > K_MIN_BLOCK * d:
        if n & (n - 1) == 0:
            return n
        floor2 = 1 << (n.bit_length() - 1)
        step = floor2 >> (d.bit_length() - 1)
        if step == 0:
            return floor2 << 1
        down = n & ~(step - 1)
        return n if down == n else down + step
    return (n + K_MIN_BLOCK - 1) // K_MIN_BLOCK * K_MIN_BLOCK


def _divisions_from(value, where):
    """roundup_power2_divisions of allocator_settings: {"1": d0, "2": d1, ...} (also a list or one int)."""
    out = [0] * 16
    if value is None:
        return out
    if _is_int(value):
        return [max(value, 0)] * 16
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value[:16]):
            if _is_int(v):
                out[i] = max(v, 0)
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            try:
                mb = int(k)
            except (TypeError, ValueError):
                raise SnapshotError(f"{where}: roundup_power2_divisions key {k!r:.40} is not a number of MiB")
            if mb <= 0 or not _is_int(v):
                raise SnapshotError(f"{where}: roundup_power2_divisions entry {k!r:.40}: {v!r:.40} is not valid")
            out[min(mb.bit_length() - 1, 15)] = max(v, 0)
        return out
    raise SnapshotError(f"{where}: roundup_power2_divisions is {type(value).__name__}, expected a dict")


def alloc_conf_from(settings, where):
    """The PYTORCH_CUDA_ALLOC_CONF text of allocator_settings (None when the snapshot has none)."""
    if settings is None:
        return None, [0] * 16
    if not isinstance(settings, dict):
        raise SnapshotError(f"{where}: allocator_settings is {type(settings).__name__}, expected a dict")
    raw = settings.get("PYTORCH_CUDA_ALLOC_CONF", settings.get("PYTORCH_ALLOC_CONF"))
    structured = any(k in settings for k in ("max_split_size", "expandable_segments", "roundup_power2_divisions",
                                             "garbage_collection_threshold"))
    divisions = _divisions_from(settings.get("roundup_power2_divisions"), where)
    if not structured:
        return (raw if isinstance(raw, str) else None), divisions
    parts = []
    if settings.get("expandable_segments") is True:
        parts.append("expandable_segments:True")
    mss = settings.get("max_split_size")
    if _is_int(mss) and 0 < mss < INT64_MAX and mss != (1 << 64) - 1:
        parts.append(f"max_split_size_mb:{mss // MIB}")
    if any(divisions):
        parts.append("roundup_power2_divisions:[" +
                     ",".join(f"{1 << i}:{d}" for i, d in enumerate(divisions)) + "]")
    gc = settings.get("garbage_collection_threshold")
    if isinstance(gc, (int, float)) and not isinstance(gc, bool) and gc > 0:
        parts.append(f"garbage_collection_threshold:{float(gc)!r}")
    return ",".join(parts), divisions


def _block_requested(b):
    if _is_int(b.get("requested_size")):
        return b["requested_size"]
    hist = b.get("history")  # the 1.13/2.0 block format (_memory_viz._block_extra_legacy)
    if isinstance(hist, list) and hist and isinstance(hist[0], dict) and _is_int(hist[0].get("real_size")):
        return hist[0]["real_size"]
    return b.get("size")


def convert(snapshot, path, device=None, device_total_bytes=None, warn=None):
    """Returns (trace dict, summary dict). Raises SnapshotError for anything that is not a snapshot."""
    warn = warn or (lambda msg: None)
    expected = ("expected a dict with 'segments' and 'device_traces', as torch.cuda.memory._snapshot() returns "
                "with _record_memory_history enabled")
    if isinstance(snapshot, list):
        raise SnapshotError(f"{path}: holds a list (segments only: torch 1.13's memory_snapshot() or a snapshot "
                            f"without history) and no device_traces; {expected}")
    if not isinstance(snapshot, dict):
        raise SnapshotError(f"{path}: holds a {type(snapshot).__name__}; {expected}")
    missing = [k for k in ("segments", "device_traces") if k not in snapshot]
    if missing:
        raise SnapshotError(f"{path}: has no {' and no '.join(repr(k) for k in missing)} "
                            f"(keys: {', '.join(repr(k) for k in list(snapshot)[:8])}); {expected}")
    segments, traces = snapshot["segments"], snapshot["device_traces"]
    if not isinstance(segments, list):
        raise SnapshotError(f"{path}: 'segments' is a {type(segments).__name__}, expected a list")
    if not isinstance(traces, list) or not all(isinstance(t, list) for t in traces):
        raise SnapshotError(f"{path}: 'device_traces' must be a list (one per device) of lists of entries")
    for i, s in enumerate(segments):
        if not isinstance(s, dict):
            raise SnapshotError(f"{path}: segments[{i}] is a {type(s).__name__}, expected a dict")
        if "device" in s and not _is_int(s["device"]):
            raise SnapshotError(f"{path}: segments[{i}]: 'device' is not an integer")

    active = [d for d, t in enumerate(traces) if t]
    if device is None:
        if len(active) == 1:
            device = active[0]
        elif not active:
            raise SnapshotError(f"{path}: every device trace is empty: record with "
                                "torch.cuda.memory._record_memory_history(max_entries=...) before the step")
        else:
            device = active[0]
            warn(f"devices {', '.join(map(str, active))} have trace entries; converting device {device} "
                 "(choose one with --device)")
    if device < 0 or device >= len(traces) or not traces[device]:
        have = ", ".join(map(str, active)) or "none"
        raise SnapshotError(f"{path}: device {device} has no trace entries (devices with entries: {have})")
    entries = traces[device]
    dev_segments = [s for s in segments if s.get("device", 0) == device]

    alloc_conf, divisions = alloc_conf_from(snapshot.get("allocator_settings"), path)

    # Validate the entries and normalise their actions.
    norm = []
    for i, e in enumerate(entries):
        where = f"{path}: device_traces[{device}][{i}]"
        if not isinstance(e, dict) or not isinstance(e.get("action"), str):
            raise SnapshotError(f"{where}: expected a dict with a string 'action'")
        action = FREE_ALIASES.get(e["action"], e["action"])
        if action in ("alloc", "free_requested", "free_completed") + SEGMENT_ADD + SEGMENT_SUB:
            addr = _need_int(e, "addr", where)
            size = _need_int(e, "size", where, minimum=0)
            stream = _need_int(e, "stream", where, default=0)
            norm.append((action, addr, size, stream))
        else:
            stream = e.get("stream")
            norm.append((action, None, None, stream if _is_int(stream) else None))

    streams = {}

    def stream_id(raw):
        if raw not in streams:
            streams[raw] = len(streams)
        return streams[raw]

    for action, addr, _, stream in norm:
        if addr is not None:  # memory actions only ("snapshot" entries carry stream 0)
            stream_id(stream)
    for s in dev_segments:
        stream_id(_need_int(s, "stream", f"{path}: a segment of device {device}", default=0))

    actions = {a for a, _, _, _ in norm}
    free_action = "free_completed" if "free_completed" in actions else "free_requested"
    stat_free_action = "free_requested" if "free_requested" in actions else "free_completed"

    # Pass 1: the events, keyed by provisional allocation keys.
    live = {}  # addr -> key
    seen_addrs = set()
    allocs = {}  # key -> (size, stream)
    pre = []  # keys allocated before recording, in the order found
    events = []  # ("alloc", key) | ("free", key) | ("empty_cache",)
    n_keys = 0
    warned_realloc = 0
    for i, (action, addr, size, stream) in enumerate(norm):
        if action == "alloc":
            if addr in live:
                warned_realloc += 1
                events.append(("free", live.pop(addr)))
            n_keys += 1
            allocs[n_keys] = (size, stream_id(stream))
            live[addr] = n_keys
            seen_addrs.add(addr)
            events.append(("alloc", n_keys))
        elif action == free_action:
            if addr in live:
                events.append(("free", live.pop(addr)))
            elif addr not in seen_addrs:
                n_keys += 1
                allocs[n_keys] = (size, stream_id(stream))
                pre.append(n_keys)
                seen_addrs.add(addr)
                events.append(("free", n_keys))
            else:
                warn(f"device_traces[{device}][{i}]: a second {free_action} of address {addr:#x} "
                     "(ignored)")
        elif action in SEGMENT_SUB:
            if i + 1 < len(norm) and norm[i + 1][0] in SEGMENT_SUB:
                continue  # the run goes on
            nxt = norm[i + 1][0] if i + 1 < len(norm) else None
            if nxt not in SEGMENT_ADD + ("oom",):
                events.append(("empty_cache",))
    if warned_realloc:
        warn(f"{warned_realloc} alloc(s) of an address that was still allocated (the free is missing from the "
             "trace): the earlier allocation is freed first")

    # Blocks allocated at the end that the trace does not leave allocated: allocated before recording.
    live_at_end_pre = []
    for si, s in enumerate(dev_segments):
        where = f"{path}: a segment of device {device}"
        blocks = s.get("blocks", [])
        if not isinstance(blocks, list):
            raise SnapshotError(f"{where}: 'blocks' is not a list")
        addr = s.get("address")
        for b in blocks:
            if not isinstance(b, dict):
                raise SnapshotError(f"{where}: a block is not a dict")
            bsize = _need_int(b, "size", where + ", a block", minimum=0)
            baddr = b.get("address", addr)
            if b.get("state") == "active_allocated" and _is_int(baddr) and baddr not in live:
                req = _block_requested(b)
                req = req if _is_int(req) and req > 0 else bsize
                n_keys += 1
                allocs[n_keys] = (req, stream_id(s.get("stream", 0)))
                pre.append(n_keys)
                live_at_end_pre.append((n_keys, bsize))
            if _is_int(addr):
                addr += bsize
    final_live_addrs = set()
    for s in dev_segments:
        addr = s.get("address")
        for b in s.get("blocks", []):
            baddr = b.get("address", addr)
            if b.get("state") in ("active_allocated", "active_pending_free") and _is_int(baddr):
                final_live_addrs.add(baddr)
            if _is_int(addr):
                addr += b["size"]
    stale = [a for a in live if a not in final_live_addrs]
    if dev_segments and stale:
        warn(f"{len(stale)} allocation(s) the trace leaves live are not allocated in the final segments "
             "(their frees may be missing from the trace)")

    # Ids in the order of the written events: the pre-existing allocations first.
    ids = {}
    out_events = []

    def new_id(key):
        ids[key] = len(ids) + 1
        return ids[key]

    for key in pre:
        size, stream = allocs[key]
        out_events.append({"op": "alloc", "id": new_id(key), "size": size, "stream": stream})
    for ev in events:
        if ev[0] == "alloc":
            size, stream = allocs[ev[1]]
            out_events.append({"op": "alloc", "id": new_id(ev[1]), "size": size, "stream": stream})
        elif ev[0] == "free":
            out_events.append({"op": "free", "id": ids[ev[1]]})
        else:
            out_events.append({"op": "empty_cache"})

    # Recorded figures.
    def walk(size_of):
        current, peak, baseline = 0, 0, 0
        stat_live = {}
        for action, addr, size, _ in norm:
            if action == "alloc":
                if addr in stat_live:
                    current -= stat_live.pop(addr)
                stat_live[addr] = size_of(size)
                current += stat_live[addr]
            elif action == stat_free_action:
                if addr in stat_live:
                    current -= stat_live.pop(addr)
                else:
                    baseline += size_of(size)
                    current -= size_of(size)
            peak = max(peak, current)
        return baseline, peak

    base_a, rel_a = walk(lambda n: round_size(n, divisions))
    base_r, rel_r = walk(lambda n: n)
    base_a += sum(bsize for _, bsize in live_at_end_pre)
    base_r += sum(allocs[k][0] for k, _ in live_at_end_pre)

    reserved, peak_reserved = 0, 0
    seg_allocs = seg_frees = plain_allocs = plain_frees = 0
    for action, _, size, _ in norm:
        if action in SEGMENT_ADD:
            reserved += size
            seg_allocs += 1
            plain_allocs += action == "segment_alloc"
        elif action in SEGMENT_SUB:
            reserved -= size
            seg_frees += 1
            plain_frees += action == "segment_free"
        peak_reserved = max(peak_reserved, reserved)
    final_reserved = sum(_need_int(s, "total_size", f"{path}: a segment of device {device}", minimum=0)
                         for s in dev_segments)
    reserved_at_start = final_reserved - reserved
    if reserved_at_start < 0:
        warn(f"the trace reserves {reserved - final_reserved} bytes more than the final segments hold "
             "(recorded figures assume nothing was reserved at the start)")
        reserved_at_start = 0
    non_expandable = sum(1 for s in dev_segments if not s.get("is_expandable", False))
    segments_at_start = max(non_expandable - (plain_allocs - plain_frees), 0)

    recorded = {
        "peak_allocated_bytes": base_a + rel_a,
        "peak_reserved_bytes": reserved_at_start + peak_reserved,
        "segment_allocs": seg_allocs + segments_at_start,
        "segment_frees": seg_frees,
        "segments": [{"size": s["total_size"], "stream": stream_id(s.get("stream", 0))} for s in dev_segments],
        "peak_requested_bytes": base_r + rel_r,
        "preexisting_allocations": len(pre),
        "segments_at_start": segments_at_start,
        "reserved_at_start_bytes": reserved_at_start,
    }
    trace = {"format": FORMAT, "version": VERSION}
    if device_total_bytes is not None:
        trace["device_total_bytes"] = device_total_bytes
    if alloc_conf is not None:
        trace["alloc_conf"] = alloc_conf
    trace["events"] = out_events
    trace["recorded"] = recorded
    summary = {
        "device": device,
        "entries": len(norm),
        "allocs": sum(1 for e in out_events if e["op"] == "alloc"),
        "frees": sum(1 for e in out_events if e["op"] == "free"),
        "empty_caches": sum(1 for e in out_events if e["op"] == "empty_cache"),
        "free_action": free_action,
        "streams": len(streams),
        "ooms": sum(1 for a, _, _, _ in norm if a == "oom"),
    }
    return trace, summary


def dumps_trace(trace):
    """The trace as JSON text, one event per line."""
    head = {k: v for k, v in trace.items() if k not in ("events", "recorded")}
    lines = ["{"]
    for k, v in head.items():
        lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
    lines.append('  "events": [')
    ev = trace["events"]
    for i, e in enumerate(ev):
        lines.append("    " + json.dumps(e) + ("," if i + 1 < len(ev) else ""))
    lines.append("  ],")
    lines.append('  "recorded": {')
    rec = list(trace["recorded"].items())
    for i, (k, v) in enumerate(rec):
        comma = "," if i + 1 < len(rec) else ""
        if k == "segments" and v:
            lines.append(f"    {json.dumps(k)}: [")
            lines.extend("      " + json.dumps(s) + ("," if j + 1 < len(v) else "") for j, s in enumerate(v))
            lines.append("    ]" + comma)
        else:
            lines.append(f"    {json.dumps(k)}: {json.dumps(v)}{comma}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?\s*$", re.IGNORECASE)


def parse_bytes(text):
    m = _SIZE_RE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size (bytes, or e.g. 24GiB, 80GB)")
    number, unit = m.group(1), (m.group(2) or "B").upper()
    if unit != "B" and not unit.endswith("B"):
        unit += "B"
    powers = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
              "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}
    value = float(number) * powers[unit]
    if value <= 0 or value != value:
        raise argparse.ArgumentTypeError(f"'{text}' must be positive")
    return int(value)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="snapshot_to_trace.py",
        description="Convert the pickle of torch.cuda.memory._dump_snapshot() (PyTorch 2.x, recorded with "
                    "torch.cuda.memory._record_memory_history) into a BatchFit allocator trace "
                    "(docs/allocator-trace.md) for `batchfit-cli allocator-replay`.",
        epilog="SECURITY: " + HELP_SECURITY + " Exit codes: 0 written, 2 unreadable input or bad arguments.")
    ap.add_argument("snapshot", help="the snapshot pickle (torch.cuda.memory._dump_snapshot)")
    ap.add_argument("-o", "--output", required=True, help="the trace JSON to write ('-': standard output)")
    ap.add_argument("--device", type=int, default=None,
                    help="the CUDA device whose trace to convert (default: the only device with entries)")
    ap.add_argument("--device-total-bytes", type=parse_bytes, default=None, metavar="SIZE",
                    help="the GPU's total memory (e.g. 25757220864 or 24GiB), written as device_total_bytes "
                         "(the snapshot does not record it)")
    args = ap.parse_args(argv)

    warnings = []

    def warn(msg):
        warnings.append(msg)
        print(f"snapshot_to_trace: warning: {msg}", file=sys.stderr)

    try:
        snapshot = load_snapshot(args.snapshot)
        trace, summary = convert(snapshot, args.snapshot, args.device, args.device_total_bytes, warn)
    except SnapshotError as e:
        print(f"snapshot_to_trace: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # content of a shape this script did not foresee: a message, not a traceback
        print(f"snapshot_to_trace: error: {args.snapshot}: unexpected snapshot content "
              f"({type(e).__name__}: {e}); expected the dict of torch.cuda.memory._snapshot()", file=sys.stderr)
        return 2
    text = dumps_trace(trace)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        tmp = args.output + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, args.output)
        except OSError as e:
            print(f"snapshot_to_trace: error: {args.output}: cannot write it ({e.strerror or e})", file=sys.stderr)
            return 2
    rec = trace["recorded"]
    print(f"snapshot_to_trace: {args.output}: device {summary['device']}, {summary['entries']} trace entries -> "
          f"{summary['allocs']} allocs ({rec['preexisting_allocations']} from before recording), "
          f"{summary['frees']} frees (from {summary['free_action']}), {summary['empty_caches']} empty_cache, "
          f"{summary['streams']} stream(s); recorded peak reserved {rec['peak_reserved_bytes']} B, "
          f"peak allocated {rec['peak_allocated_bytes']} B, {rec['segment_allocs']} segment allocs, "
          f"{len(rec['segments'])} segments at the end"
          + (f"; {summary['ooms']} OOM entries" if summary["ooms"] else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
