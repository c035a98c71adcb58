#!/usr/bin/env python3
"""Fuzzes tools/snapshot_to_trace.py, the reader of PyTorch memory snapshots (pickles), with atheris (issue 30).

    pip install atheris==3.0.0            # a libFuzzer build for CPython, from PyPI
    python3 fuzz/fuzz_snapshot.py -atheris_runs=10000000 [CORPUS_DIR] [libFuzzer options...]

Each input is used twice:

* as the bytes of a snapshot file: `loads_snapshot` (the restricted unpickler, which refuses every global) and, when
  it gives an object, `convert`;
* as the choices of a FuzzedDataProvider that builds a snapshot dict (segments, blocks, device traces, allocator
  settings) of plausible and hostile values, passed to `convert` directly: the converter's checks get the
  executions a pickle rarely reaches.

Properties: the only exception is SnapshotError (a message for the user); a converted trace is JSON that reads back
with the same events; every event is an alloc (with a non-negative size), a free of an earlier alloc, or an
empty_cache. A failure raises, and atheris
saves the input as crash-<sha1> in the working folder.
"""
import json
import os
import pickle
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
s2t = None  # tools/snapshot_to_trace.py, imported with atheris's coverage instrumentation in main()

ACTIONS = ["alloc", "free_requested", "free_completed", "free", "segment_alloc", "segment_free",
           "segment_map", "segment_unmap", "snapshot", "oom", "bogus"]
STATES = ["active_allocated", "active_pending_free", "inactive", "bogus"]


def value(fdp):
    """An int most of the time, sometimes something that is not."""
    k = fdp.ConsumeIntInRange(0, 9)
    if k < 7:
        return fdp.ConsumeIntInRange(0, 1 << 40) if k < 6 else fdp.ConsumeInt(8)
    return [None, "x", 1.5][k - 7]


def built_snapshot(fdp):
    segments = []
    for _ in range(fdp.ConsumeIntInRange(0, 4)):
        blocks = [{"size": value(fdp), "requested_size": value(fdp), "address": value(fdp),
                   "state": STATES[fdp.ConsumeIntInRange(0, len(STATES) - 1)]}
                  for _ in range(fdp.ConsumeIntInRange(0, 4))]
        segments.append({"device": fdp.ConsumeIntInRange(0, 2), "address": value(fdp), "total_size": value(fdp),
                         "stream": value(fdp), "segment_type": "small" if fdp.ConsumeBool() else "large",
                         "is_expandable": fdp.ConsumeBool(), "blocks": blocks})
    traces = []
    for _ in range(fdp.ConsumeIntInRange(0, 2)):
        traces.append([{"action": ACTIONS[fdp.ConsumeIntInRange(0, len(ACTIONS) - 1)], "addr": value(fdp),
                        "size": value(fdp), "stream": value(fdp), "time_us": value(fdp)}
                       for _ in range(fdp.ConsumeIntInRange(0, 12))])
    snap = {"segments": segments, "device_traces": traces}
    if fdp.ConsumeBool():
        snap["allocator_settings"] = {
            "PYTORCH_CUDA_ALLOC_CONF": fdp.ConsumeUnicodeNoSurrogates(24),
            "max_split_size": value(fdp), "expandable_segments": fdp.ConsumeBool(),
            "garbage_collection_threshold": fdp.ConsumeFloat(),
            "roundup_power2_divisions": {str(1 << fdp.ConsumeIntInRange(0, 20)): value(fdp)
                                         for _ in range(fdp.ConsumeIntInRange(0, 3))}}
    return snap


def check_converted(snapshot):
    try:
        trace, _summary = s2t.convert(snapshot, "fuzz.pickle")
    except s2t.SnapshotError as e:
        if not str(e):
            raise AssertionError("SnapshotError without a message") from None
        return
    text = s2t.dumps_trace(trace)
    back = json.loads(text)
    if back["events"] != json.loads(json.dumps(trace["events"])):
        raise AssertionError("the trace's events do not read back")
    allocated = set()
    for e in back["events"]:
        op = e.get("op")
        if op == "alloc" and isinstance(e.get("size"), int) and e["size"] >= 0 and e.get("id") not in allocated:
            allocated.add(e["id"])
        elif op == "free" and e.get("id") in allocated:
            allocated.discard(e["id"])
        elif op != "empty_cache":
            raise AssertionError(f"bad event {e!r:.120}")


def test_one_input(data):
    import atheris
    try:
        snapshot = s2t.loads_snapshot(data, "fuzz.pickle")
    except s2t.SnapshotError as e:
        if not str(e):
            raise AssertionError("SnapshotError without a message") from None
        snapshot = None
    if snapshot is not None:
        check_converted(snapshot)
    check_converted(built_snapshot(atheris.FuzzedDataProvider(data)))


def seeds(folder):
    """Pickles of small snapshots in each protocol, as torch writes them (pickle.dump)."""
    os.makedirs(folder, exist_ok=True)
    snap = {"segments": [{"device": 0, "address": 1 << 30, "total_size": 2 << 20, "stream": 0,
                          "segment_type": "small", "is_expandable": False,
                          "blocks": [{"size": 512, "requested_size": 1, "address": 1 << 30,
                                      "state": "active_allocated"}]}],
            "device_traces": [[{"action": "alloc", "addr": 1 << 30, "size": 512, "stream": 0, "time_us": 1},
                               {"action": "free_completed", "addr": 1 << 30, "size": 512, "stream": 0,
                                "time_us": 2}]]}
    for p in range(pickle.HIGHEST_PROTOCOL + 1):
        with open(os.path.join(folder, f"seed-protocol-{p}"), "wb") as f:
            pickle.dump(snap, f, protocol=p)


def main():
    global s2t
    import atheris
    with atheris.instrument_imports():
        import snapshot_to_trace
    s2t = snapshot_to_trace
    corpus = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    if corpus:
        seeds(corpus)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
