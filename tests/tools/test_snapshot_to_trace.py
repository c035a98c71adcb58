#!/usr/bin/env python3
"""tools/snapshot_to_trace.py on synthetic torch 2.x memory snapshots, and (with a CLI) the round trip through
`batchfit-cli allocator-replay`.

    python3 tests/tools/test_snapshot_to_trace.py [BATCHFIT_CLI]

No torch needed: the snapshots are written by hand in the format of torch.cuda.memory._dump_snapshot() (see the
docstring of tools/snapshot_to_trace.py for the sources). Every expected number is worked out in the comments from
the caching allocator's rules (PyTorch 2.5: 512-byte blocks; small requests <= 1 MiB in 2 MiB segments; 1-10 MiB in
20 MiB segments; >= 10 MiB in segments rounded up to 2 MiB; a large block is split when the remainder is > 1 MiB).

Case A (the round trip) is what torch would record for this program on one GPU, recording started after a 6 MiB
tensor P had been allocated on a side stream S1 (so P's 20 MiB segment existed before recording):

    a = torch.empty(1, dtype=torch.uint8)            # small pool: new 2 MiB segment, a 512 B block
    b = torch.empty(8 << 20, dtype=torch.uint8)      # large pool: new 20 MiB segment, split 8 + 12 MiB
    with torch.cuda.stream(S1):
        c = torch.empty(3 << 20, dtype=torch.uint8)  # S1's pool: the 14 MiB free block after P, split 3 + 11
    del P                                            # free of an address with no alloc in the trace
    del b                                            # b's segment is whole again
    torch.cuda.empty_cache()                         # frees b's segment (P's and a's are still in use)
    del a
    d = torch.empty(12 << 20, dtype=torch.uint8)     # >= 10 MiB: a 12 MiB segment (at b's old address)

Cases B-D check the converter alone (expandable segments, allocator settings, free_requested-only traces,
pre-existing blocks still allocated at the end, the retry-path heuristic, device selection, the old action name
"free", protocol 0 pickles); case H feeds it hostile files. Prints what it checked; exit 0 if all passed, 1 if not.
"""
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONVERTER = os.path.join(ROOT, "tools", "snapshot_to_trace.py")
MIB = 1 << 20

failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if cond:
        print(f"  ok   {what}")
    else:
        print(f"  FAIL {what}")
        failures.append(what)


def equal(got, want, what):
    check(got == want, f"{what}: {got!r}" + ("" if got == want else f" (expected {want!r})"))


def run_converter(snapshot_path, out_path, *extra):
    p = subprocess.run([sys.executable, CONVERTER, snapshot_path, "-o", out_path, *extra],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write_pickle(path, obj, protocol=None):
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)  # what torch.cuda.memory._dump_snapshot() does


def entry(action, addr, size, stream, t):
    return {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": 1_700_000_000_000_000 + t,
            "frames": []}


def segment(device, address, total, stream, small, blocks, expandable=False):
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    active = sum(b["size"] for b in blocks if b["state"] != "inactive")
    requested = sum(b.get("requested_size", 0) for b in blocks if b["state"] != "inactive")
    return {"device": device, "address": address, "total_size": total, "allocated_size": allocated,
            "active_size": active, "requested_size": requested, "stream": stream,
            "segment_type": "small" if small else "large", "segment_pool_id": (0, 0),
            "is_expandable": expandable, "frames": [], "blocks": blocks}


def block(address, size, requested, state):
    b = {"size": size, "requested_size": requested, "state": state, "frames": []}
    if address is not None:
        b["address"] = address
    return b


DEFAULT_SETTINGS = {  # what a run with no PYTORCH_CUDA_ALLOC_CONF writes (memory_snapshot.cpp)
    "PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,  # int64_t(SIZE_MAX)
    "garbage_collection_threshold": 0.0, "expandable_segments": False, "pinned_num_register_threads": 1,
    "release_lock_on_cudamalloc": False, "pinned_use_cuda_host_register": False,
    "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)},
}

# ---- case A ---------------------------------------------------------------------------------------------------
S0 = 0                    # the default stream: cudaStream_t 0
S1 = 0x55D0C0FFEE00       # a side stream (a pointer)
SEG_P = 0x7F0000000000    # P's 20 MiB segment on S1 (allocated before recording)
SEG_SMALL = SEG_P + 20 * MIB
SEG_L = SEG_SMALL + 2 * MIB  # b's 20 MiB segment; after cudaFree the driver hands the address out again for d

A_TRACE = [
    entry("segment_alloc", SEG_SMALL, 2 * MIB, S0, 0),     # 0  a: small pool, get_allocation_size -> 2 MiB
    entry("alloc", SEG_SMALL, 1, S0, 1),                   # 1  a (the trace has the size asked for: 1)
    entry("segment_alloc", SEG_L, 20 * MIB, S0, 2),        # 2  b: 1 MiB < 8 MiB < 10 MiB -> 20 MiB
    entry("alloc", SEG_L, 8 * MIB, S0, 3),                 # 3  b
    entry("alloc", SEG_P + 6 * MIB, 3 * MIB, S1, 4),       # 4  c, right after P (the front of the free block)
    entry("free_requested", SEG_P, 6 * MIB, S1, 5),        # 5  del P: no alloc of SEG_P in the trace
    entry("free_completed", SEG_P, 6 * MIB, S1, 6),        # 6
    entry("free_requested", SEG_L, 8 * MIB, S0, 7),        # 7  del b
    entry("free_completed", SEG_L, 8 * MIB, S0, 8),        # 8  merges with the 12 MiB rest: a whole segment
    entry("segment_free", SEG_L, 20 * MIB, S0, 9),         # 9  empty_cache(): followed by a free, not a malloc
    entry("free_requested", SEG_SMALL, 1, S0, 10),         # 10 del a
    entry("free_completed", SEG_SMALL, 1, S0, 11),         # 11
    entry("segment_alloc", SEG_L, 12 * MIB, S0, 12),       # 12 d: >= 10 MiB -> round up to 2 MiB = 12 MiB
    entry("alloc", SEG_L, 12 * MIB, S0, 13),               # 13 d: 12 MiB block, nothing left to split
    {"action": "snapshot", "addr": 0, "size": 15 * MIB, "stream": 0, "time_us": 14, "frames": []},  # 14
]
A_SEGMENTS = [  # snapshot(): sorted by address
    segment(0, SEG_P, 20 * MIB, S1, False, [block(SEG_P, 6 * MIB, 6 * MIB, "inactive"),
                                              block(SEG_P + 6 * MIB, 3 * MIB, 3 * MIB, "active_allocated"),
                                              block(SEG_P + 9 * MIB, 11 * MIB, 0, "inactive")]),
    segment(0, SEG_SMALL, 2 * MIB, S0, True, [block(SEG_SMALL, 2 * MIB, 0, "inactive")]),
    segment(0, SEG_L, 12 * MIB, S0, False, [block(SEG_L, 12 * MIB, 12 * MIB, "active_allocated")]),
]
A_SNAPSHOT = {"segments": A_SEGMENTS, "device_traces": [A_TRACE, []], "allocator_settings": DEFAULT_SETTINGS}

# Streams in order of appearance: S0 (entry 0) -> 0, S1 (entry 4) -> 1. Ids in the order of the events; P first.
A_EVENTS = [
    {"op": "alloc", "id": 1, "size": 6 * MIB, "stream": 1},   # P, from the free entry (size = requested_size)
    {"op": "alloc", "id": 2, "size": 1, "stream": 0},         # a
    {"op": "alloc", "id": 3, "size": 8 * MIB, "stream": 0},   # b
    {"op": "alloc", "id": 4, "size": 3 * MIB, "stream": 1},   # c
    {"op": "free", "id": 1},                                  # P (at free_completed: the trace has them)
    {"op": "free", "id": 3},                                  # b
    {"op": "empty_cache"},                                    # entry 9
    {"op": "free", "id": 2},                                  # a
    {"op": "alloc", "id": 5, "size": 12 * MIB, "stream": 0},  # d
]
A_RECORDED = {
    # allocated (block sizes): P 6 MiB is there from the start; + a 512 + b 8 MiB + c 3 MiB = 17826304 at the
    # peak (after c); then - P - b - a + d 12 MiB = 15 MiB at the end.
    "peak_allocated_bytes": 6 * MIB + 512 + 8 * MIB + 3 * MIB,            # 17826304
    # reserved: at the end 20 + 2 + 12 = 34 MiB; the trace adds 2 + 20 - 20 + 12 = 14 MiB, so 20 MiB (P's
    # segment) was reserved at the start; peak after b's segment: 20 + 2 + 20 = 42 MiB.
    "peak_reserved_bytes": 42 * MIB,                                      # 44040192
    # 3 segment_alloc entries + 1 segment from before recording (3 at the end - (3 - 1) from the trace)
    "segment_allocs": 4,
    "segment_frees": 1,
    "segments": [{"size": 20 * MIB, "stream": 1}, {"size": 2 * MIB, "stream": 0}, {"size": 12 * MIB, "stream": 0}],
    "peak_requested_bytes": 6 * MIB + 1 + 8 * MIB + 3 * MIB,              # 17825793
    "preexisting_allocations": 1,
    "segments_at_start": 1,
    "reserved_at_start_bytes": 20 * MIB,
}

# What the replay of A_EVENTS must give (the same rules, from an empty cache):
#   P: 20 MiB segment on stream 1 (split 6 + 14); a: 2 MiB small segment; b: 20 MiB segment (42 MiB reserved,
#   3 segments); c: into P's 14 MiB free block; free P, free b (b's segment whole); empty_cache frees it (22 MiB,
#   2 segments, 1 device free); free a; d: new 12 MiB segment (34 MiB, 3 segments, 4 device allocs).
A_SIMULATED = {
    "peak_allocated_bytes": A_RECORDED["peak_allocated_bytes"],
    "peak_reserved_bytes": 42 * MIB,
    "peak_requested_bytes": A_RECORDED["peak_requested_bytes"],
    "final_allocated_bytes": 3 * MIB + 12 * MIB,   # c + d
    "final_reserved_bytes": 34 * MIB,
    # inactive split (free pieces of split segments): P's 14 MiB rest + a's 2 MiB - 512 rest + b's 12 MiB rest,
    # c takes 3 MiB of P's rest, then free P adds 6 MiB: 14 + (2 MiB - 512) + 12 - 3 + 6 = 32505344 at the peak
    # (free b merges its segment whole, so its 12 MiB rest stops counting).
    "peak_inactive_split_bytes": 14 * MIB + (2 * MIB - 512) + 12 * MIB - 3 * MIB + 6 * MIB,
    "peak_segments": 3,
    "final_segments": 3,
    "device_allocs": 4,
    "device_frees": 1,
    "alloc_retries": 0,
    "allocations": 5,
}

# ---- case B: expandable segments, settings, free_requested only, device 1 -------------------------------------
SA = 0x7000               # B's compute stream
SB = 0x9000               # another stream, seen only in a free and in the segments
E = 0x7E0000000000        # an expandable segment (large pool, 20 MiB pages)
X = 0x7D0000000000        # a small block allocated before recording, freed in the trace
Y = 0x7C0000000000        # a small segment whose first block is still allocated, never seen in the trace
B_TRACE = [
    entry("segment_map", E, 20 * MIB, SA, 0),                  # 0  reserved 20 MiB
    entry("alloc", E, 3_000_000, SA, 1),                       # 1  id3; block 3145728 (divisions 4, see below)
    entry("alloc", E + 3 * MIB, 2_000_000, SA, 2),             # 2  id4; block 2097152
    entry("alloc", E + 3 * MIB, 2_000_000, SA, 3),             # 3  same address, no free: id4 freed, id5
    entry("free_requested", X, 4096, SB, 4),                   # 4  X: allocated before recording (id1)
    entry("free_requested", E, 3_000_000, SA, 5),              # 5  id3
    {"action": "annotate", "addr": E + 3 * MIB, "size": 0, "stream": SA, "user_metadata": "x"},  # 6 ignored
    entry("segment_map", E + 20 * MIB, 20 * MIB, SA, 7),       # 7  reserved 40 MiB
    entry("alloc", E + 5 * MIB, 25_000_000, SA, 8),            # 8  id6; block 25165824
    entry("free_requested", E + 5 * MIB, 25_000_000, SA, 9),   # 9  id6
    entry("free_requested", E + 3 * MIB, 2_000_000, SA, 10),   # 10 id5
    entry("segment_unmap", E + 20 * MIB, 20 * MIB, SA, 11),    # 11 a malloc's retry (an oom follows): no op
    {"action": "oom", "device_free": 0, "size": 60 * MIB, "stream": SA, "time_us": 12, "frames": []},  # 12
    entry("segment_unmap", E, 20 * MIB, SA, 13),               # 13 empty_cache(): followed by a snapshot
    {"action": "snapshot", "addr": 0, "size": 1024, "stream": 0, "time_us": 14, "frames": []},  # 14
]
B_SEGMENTS = [
    segment(0, 0x7A0000000000, 2 * MIB, 0, True, [block(None, 2 * MIB, 0, "inactive")]),  # device 0: left out
    # Y: blocks without "address" (older snapshots): the converter adds up the sizes from the segment's address
    segment(1, Y, 2 * MIB, SB, True, [block(None, 1024, 1000, "active_allocated"),
                                      block(None, 2 * MIB - 1024, 0, "inactive")]),
    segment(1, X, 2 * MIB, SB, True, [block(X, 2 * MIB, 0, "inactive")]),
    # E is all unmapped at the end: snapshot() lists mapped ranges only
]
# PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True,max_split_size_mb:128,roundup_power2_divisions:[256:4,>:2],
# garbage_collection_threshold:0.6": [256:4] fills intervals 0..8 with 4, ">" (2.1-2.8) fills from 8 on with 2.
B_DIVISIONS = [4] * 8 + [2] * 8
B_SETTINGS = dict(DEFAULT_SETTINGS)
B_SETTINGS.update({
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True,max_split_size_mb:128,"
                               "roundup_power2_divisions:[256:4,>:2],garbage_collection_threshold:0.6",
    "max_split_size": 128 * MIB, "garbage_collection_threshold": 0.6, "expandable_segments": True,
    "roundup_power2_divisions": {str(1 << i): d for i, d in enumerate(B_DIVISIONS)},
})
B_SNAPSHOT = {"segments": B_SEGMENTS, "device_traces": [[], B_TRACE], "allocator_settings": B_SETTINGS}
B_ALLOC_CONF = ("expandable_segments:True,max_split_size_mb:128,roundup_power2_divisions:["
                + ",".join(f"{1 << i}:{d}" for i, d in enumerate(B_DIVISIONS))
                + "],garbage_collection_threshold:0.6")
# Streams: SA (entry 0) -> 0, SB (entry 4) -> 1.
B_EVENTS = [
    {"op": "alloc", "id": 1, "size": 4096, "stream": 1},        # X (free without alloc)
    {"op": "alloc", "id": 2, "size": 1000, "stream": 1},        # Y's live block (requested_size)
    {"op": "alloc", "id": 3, "size": 3_000_000, "stream": 0},
    {"op": "alloc", "id": 4, "size": 2_000_000, "stream": 0},
    {"op": "free", "id": 4},                                    # the missing free, before entry 3's alloc
    {"op": "alloc", "id": 5, "size": 2_000_000, "stream": 0},
    {"op": "free", "id": 1},
    {"op": "free", "id": 3},
    {"op": "alloc", "id": 6, "size": 25_000_000, "stream": 0},
    {"op": "free", "id": 6},
    {"op": "free", "id": 5},
    {"op": "empty_cache"},                                      # entry 13 only
]
# round_size with 4 divisions below 256 MiB: 3000000 (in [2, 4) MiB): step 2 MiB / 4 = 512 KiB -> 3145728;
# 2000000 (< 2 MiB, interval 0): step 1 MiB / 4 -> 2097152; 25000000 (in [16, 32) MiB): step 4 MiB -> 25165824;
# 4096 -> 4096 (not above 512 * 4). At the start: X 4096 + Y's block 1024 (its exact size).
# Walk: +3145728 +2097152 (-2097152 +2097152) -4096 -3145728 +25165824 -> peak 27258880 over the start.
B_RECORDED = {
    "peak_allocated_bytes": 4096 + 1024 + 3145728 + 2097152 - 4096 - 3145728 + 25165824,     # 27264000
    # start: the final segments hold 4 MiB and the trace nets 20 + 20 - 20 - 20 = 0; peak 4 + 40 MiB
    "peak_reserved_bytes": 4 * MIB + 40 * MIB,                                               # 46137344
    "segment_allocs": 2 + 2,   # two segment_map entries + X's and Y's segments from before recording
    "segment_frees": 2,        # two segment_unmap entries
    "segments": [{"size": 2 * MIB, "stream": 1}, {"size": 2 * MIB, "stream": 1}],
    "peak_requested_bytes": 4096 + 1000 + 3_000_000 + 2_000_000 - 4096 - 3_000_000 + 25_000_000,  # 27001000
    "preexisting_allocations": 2,
    "segments_at_start": 2,
    "reserved_at_start_bytes": 4 * MIB,
}

# ---- case C: an old snapshot (no allocator_settings, action "free", protocol 0) ----------------------------------
C_SNAPSHOT = {"segments": [], "device_traces": [[
    {"action": "alloc", "addr": 0x1000, "size": 100, "stream": 0},
    {"action": "free", "addr": 0x1000, "size": 100, "stream": 0},
    {"action": "alloc", "addr": 0x1000, "size": 5000, "stream": 0},
]]}
C_EVENTS = [{"op": "alloc", "id": 1, "size": 100, "stream": 0}, {"op": "free", "id": 1},
            {"op": "alloc", "id": 2, "size": 5000, "stream": 0}]


def converter_case(tmp, name, snapshot, want_events, want_recorded, want_conf, extra=(), protocol=None,
                   want_total=None, want_warning=None):
    print(f"case {name}:")
    snap = os.path.join(tmp, f"{name}.pickle")
    out = os.path.join(tmp, f"{name}.json")
    write_pickle(snap, snapshot, protocol)
    rc, _, err = run_converter(snap, out, *extra)
    equal(rc, 0, f"{name}: exit code")
    if rc != 0:
        print(err)
        return None
    with open(out, encoding="utf-8") as f:
        trace = json.load(f)
    equal(trace.get("format"), "batchfit-allocator-trace", f"{name}: format")
    equal(trace.get("version"), 1, f"{name}: version")
    if want_conf is None:
        check("alloc_conf" not in trace, f"{name}: no alloc_conf (the snapshot has no allocator_settings)")
    else:
        equal(trace.get("alloc_conf"), want_conf, f"{name}: alloc_conf")
    if want_total is None:
        check("device_total_bytes" not in trace, f"{name}: no device_total_bytes")
    else:
        equal(trace.get("device_total_bytes"), want_total, f"{name}: device_total_bytes")
    events = trace.get("events", [])
    equal(len(events), len(want_events), f"{name}: number of events")
    for i, (got, want) in enumerate(zip(events, want_events)):
        equal(got, want, f"{name}: events[{i}]")
    rec = trace.get("recorded", {})
    for key, want in want_recorded.items():
        equal(rec.get(key), want, f"{name}: recorded.{key}")
    if want_warning:
        check(want_warning in err, f"{name}: warns '{want_warning}'")
    check("Traceback" not in err, f"{name}: no traceback")
    return out


def hostile_cases(tmp):
    print("case H (hostile and malformed input):")

    def expect_refused(name, path, *needles, extra=(), out=None):
        rc, _, err = run_converter(path, out or os.path.join(tmp, f"{name}.json"), *extra)
        equal(rc, 2, f"{name}: exit code")
        check("Traceback" not in err, f"{name}: no traceback")
        for n in needles:
            check(n in err, f"{name}: the message names {n!r}")
        if rc != 2 or "Traceback" in err:
            print(err)

    p = os.path.join(tmp, "text.pickle")
    with open(p, "w") as f:
        f.write("this is not a pickle\n")
    expect_refused("not a pickle", p, p, "expected")

    # fuzz/fuzz_snapshot.py's finding: 4 KB whose LONG_BINPUT names memo index 174,940,517; the C unpickler grew
    # its memo array to it (2.4 GB) before failing
    p = os.path.join(ROOT, "tests", "data", "fuzz", "snapshot", "oom-long-binput-memo-index")
    expect_refused("a memo index of 175 million", p, p, "not a pickle")
    # and 16 bytes whose BYTEARRAY8 asks for 1.97 GB, which the unpickler allocates and zeroes before reading
    p = os.path.join(ROOT, "tests", "data", "fuzz", "snapshot", "oom-bytearray8-length")
    expect_refused("a bytearray of 1.97 GB in 16 bytes", p, p, "BYTEARRAY8")
    rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024  # KiB on Linux
    check(rss_mib < 512, f"hostile lengths: the reader stays under 512 MiB ({rss_mib} MiB at most)")

    marker = os.path.join(tmp, "MARKER")

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    p = os.path.join(tmp, "evil.pickle")
    write_pickle(p, {"segments": [], "device_traces": [[]], "x": Evil()})
    expect_refused("a global (os.system)", p, p, "system", "refused")
    check(not os.path.exists(marker), "a global (os.system): nothing was run")

    import collections
    p = os.path.join(tmp, "ordered.pickle")
    write_pickle(p, collections.OrderedDict(A_SNAPSHOT))
    expect_refused("a harmless global (OrderedDict)", p, p, "OrderedDict", "refused")

    p = os.path.join(tmp, "nokeys.pickle")
    write_pickle(p, {"segments": []})
    expect_refused("no device_traces", p, p, "device_traces")

    p = os.path.join(tmp, "list.pickle")
    write_pickle(p, A_SEGMENTS)
    expect_refused("a list of segments (old format)", p, p, "device_traces")

    p = os.path.join(tmp, "int.pickle")
    write_pickle(p, 42)
    expect_refused("a pickled int", p, p, "expected a dict")

    p = os.path.join(tmp, "empty.pickle")
    open(p, "wb").close()
    expect_refused("an empty file", p, p, "empty")

    p = os.path.join(tmp, "truncated.pickle")
    data = pickle.dumps(A_SNAPSHOT)
    with open(p, "wb") as f:
        f.write(data[: len(data) // 2])
    expect_refused("a truncated pickle", p, p)

    expect_refused("a missing file", os.path.join(tmp, "nope.pickle"), "nope.pickle", "cannot read")

    bad = {"segments": [], "device_traces": [[entry("segment_alloc", 0x10, 2 * MIB, 0, 0),
                                             {"action": "alloc", "size": 512, "stream": 0}]]}
    p = os.path.join(tmp, "noaddr.pickle")
    write_pickle(p, bad)
    expect_refused("an alloc without addr", p, p, "device_traces[0][1]", "'addr'")

    p = os.path.join(tmp, "notrace.pickle")
    write_pickle(p, {"segments": [], "device_traces": [[], []], "allocator_settings": DEFAULT_SETTINGS})
    expect_refused("empty device traces", p, p, "_record_memory_history")

    p = os.path.join(tmp, "b.pickle")
    write_pickle(p, B_SNAPSHOT)
    expect_refused("--device 0 without entries", p, p, "device 0 has no trace entries", "1", extra=("--device", "0"))
    expect_refused("an unwritable output", p, "cannot write",
                   out=os.path.join(tmp, "no", "such", "dir", "t.json"))
    rc, _, err = run_converter(p, os.path.join(tmp, "x.json"), "--device-total-bytes", "lots")
    equal(rc, 2, "a bad --device-total-bytes: exit code (argparse)")

    p2 = subprocess.run([sys.executable, CONVERTER, "--help"], capture_output=True, text=True)
    check(p2.returncode == 0 and "refuses every global" in " ".join(p2.stdout.split()), "--help states the restricted unpickler")


def cli_round_trip(cli, trace_path):
    print("case A through allocator-replay:")
    p = subprocess.run([cli, "allocator-replay", trace_path, "--json"], capture_output=True, text=True)
    equal(p.returncode, 0, "allocator-replay exit code")
    if p.returncode != 0:
        print(p.stdout[-2000:], p.stderr[-2000:])
        if "allocator-replay" not in subprocess.run([cli, "--help"], capture_output=True, text=True).stdout:
            print(f"  ({cli} has no allocator-replay command: build the CLI of issue 16 first)")
        return
    try:
        out = json.loads(p.stdout)
    except ValueError as e:
        check(False, f"allocator-replay --json prints JSON ({e})")
        return
    equal(out.get("trace"), trace_path, "trace")
    equal(out.get("alloc_conf"), "", "alloc_conf (the trace's: defaults)")
    equal(out.get("capacity_bytes"), None, "capacity_bytes (none given, none in the trace)")
    equal(out.get("oom"), None, "oom")
    sim = out.get("simulated") or {}
    for key, want in A_SIMULATED.items():
        equal(sim.get(key), want, f"simulated.{key}")
    rec = out.get("recorded") or {}
    for key in ("peak_allocated_bytes", "peak_reserved_bytes", "segment_allocs", "segment_frees"):
        equal(rec.get(key), A_RECORDED[key], f"recorded.{key} (passed through)")
    segs = rec.get("segments")
    equal([s.get("size") for s in segs] if isinstance(segs, list) else segs,
          [s["size"] for s in A_RECORDED["segments"]], "recorded.segments sizes (passed through)")
    # The simulated figures equal the recorded ones: the synthetic trace is what torch would record.
    equal(sim.get("peak_reserved_bytes"), A_RECORDED["peak_reserved_bytes"], "simulated = recorded peak reserved")
    equal(sim.get("peak_allocated_bytes"), A_RECORDED["peak_allocated_bytes"],
          "simulated = recorded peak allocated")
    equal(sim.get("device_allocs"), A_RECORDED["segment_allocs"], "simulated device_allocs = recorded segment_allocs")
    equal(sim.get("device_frees"), A_RECORDED["segment_frees"], "simulated device_frees = recorded segment_frees")
    equal(sim.get("final_segments"), len(A_RECORDED["segments"]), "simulated = recorded final segments")
    cmp = out.get("comparison") or {}
    equal(cmp.get("peak_reserved_bytes"),
          {"simulated": 42 * MIB, "recorded": 42 * MIB, "difference_fraction": 0},
          "comparison.peak_reserved_bytes")
    equal(cmp.get("segment_allocs"), {"simulated": 4, "recorded": 4}, "comparison.segment_allocs")
    equal(cmp.get("final_segments"), {"simulated": 3, "recorded": 3}, "comparison.final_segments")
    equal(cmp.get("final_segment_sizes_match"), True, "comparison.final_segment_sizes_match")


def main():
    cli = sys.argv[1] if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory(prefix="snapshot_to_trace.") as tmp:
        a_out = converter_case(tmp, "A", A_SNAPSHOT, A_EVENTS, A_RECORDED, "")
        converter_case(tmp, "B", B_SNAPSHOT, B_EVENTS, B_RECORDED, B_ALLOC_CONF,
                       extra=("--device-total-bytes", "80GB"), protocol=pickle.HIGHEST_PROTOCOL,
                       want_total=80_000_000_000, want_warning="still allocated")
        converter_case(tmp, "C", C_SNAPSHOT, C_EVENTS,
                       {"peak_allocated_bytes": 5120, "peak_requested_bytes": 5000, "peak_reserved_bytes": 0,
                        "segment_allocs": 0, "segment_frees": 0, "segments": [], "preexisting_allocations": 0},
                       None, extra=("--device-total-bytes", "24GiB"), protocol=0, want_total=24 << 30)

        print("case D (two devices with entries):")
        d = {"segments": [], "device_traces": [C_SNAPSHOT["device_traces"][0], A_TRACE[:2]]}
        snap = os.path.join(tmp, "D.pickle")
        write_pickle(snap, d)
        rc, out, err = run_converter(snap, "-")
        equal(rc, 0, "D: exit code (no --device, trace to standard output)")
        check("--device" in err, "D: warns that several devices have entries")
        if rc == 0:
            equal(len(json.loads(out)["events"]), 3, "D: device 0 converted by default")
        rc, out, err = run_converter(snap, "-", "--device", "1")
        equal(rc, 0, "D: --device 1 exit code")
        if rc == 0:
            t = json.loads(out)
            equal(t["events"], [{"op": "alloc", "id": 1, "size": 1, "stream": 0}], "D: --device 1 events")
            # the small segment's 2 MiB from the trace; no segments listed at the end, so nothing before it
            equal(t["recorded"]["peak_reserved_bytes"], 2 * MIB, "D: --device 1 peak reserved")

        hostile_cases(tmp)

        if cli and a_out:
            cli_round_trip(cli, a_out)
        elif not cli:
            print("(no batchfit-cli given: the allocator-replay round trip was not run)")

    print(f"{checks - len(failures)}/{checks} checks passed")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
