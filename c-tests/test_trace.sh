#!/usr/bin/env bash
# BIREN_TRACE: the trace of a two-stream program with an event edge parses as JSON and holds both
# streams' kernels, the copies, the record->wait arrow and a host synchronize. Every span and
# instant has a category, copies their kind, host synchronizations their call site (which
# addr2line resolves to the line of the call), and the device its number of compute units.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c99 -g -Wall -Wextra -Wpedantic -Werror -Iinclude c-tests/progs/trace_two_streams.c \
   -Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -o "$tmp/prog"
BIREN_COMPUTE_UNITS=3 BIREN_TRACE="$tmp/trace.json" "$tmp/prog" > /dev/null
# Tracing off writes nothing.
(cd "$tmp" && ./prog > /dev/null && test ! -e biren_trace.json)
python3 - "$tmp/trace.json" "$tmp/prog" c-tests/progs/trace_two_streams.c <<'PY'
import json, os, subprocess, sys
doc = json.load(open(sys.argv[1]))
prog, source = sys.argv[2], sys.argv[3]
ev = doc["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
def track(e): return names.get((e["pid"], e["tid"]), "?")
spans = [e for e in ev if e.get("ph") == "X"]
failures, checks = [], []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    checks.append(what)
    if not cond: failures.append(what)
stream_tracks = {n for n in names.values() if n.startswith("stream #")}
check(len(stream_tracks) >= 2, "a track per stream: %s" % sorted(stream_tracks))
check(any(n.startswith("compute unit") for n in names.values()), "compute unit tracks")
check(any(n.startswith("copy engine") for n in names.values()), "copy engine tracks")
ka = [e for e in spans if e["name"] == "kernel_a" and track(e).startswith("stream #")]
kb = [e for e in spans if e["name"] == "kernel_b" and track(e).startswith("stream #")]
check(len(ka) >= 1 and len(kb) >= 1, "both kernels on stream tracks")
check(ka and kb and track(ka[0]) != track(kb[0]), "kernels on different stream tracks")
check(ka and "grid" in ka[0].get("args", {}), "kernel spans carry grid/block")
check(any(e["name"] == "kernel_a" and track(e).startswith("compute unit") for e in spans), "kernel on a compute unit track")
# The last kernel before the program's final synchronizations and exit is on a unit track too
# (a unit ends its span when no block is left for it, before the kernel completes).
check(any(e["name"] == "kernel_b" and track(e).startswith("compute unit") for e in spans), "the last kernel that ran is on a compute unit track")
check(any(e["name"].startswith("memcpy") and track(e).startswith("copy engine") for e in spans), "copies on a copy engine")
starts = {e["id"] for e in ev if e.get("ph") == "s"}
ends = {e["id"] for e in ev if e.get("ph") == "f"}
check(bool(starts & ends), "an arrow from the record to the wait")
check(any(e["name"].startswith("birenStreamSynchronize") for e in spans), "host synchronize span")
check(any(e["name"].startswith("record event") for e in ev), "event record instant")
cats = {"kernel", "memcpy", "memset", "host_function", "wait", "sync", "error", "event"}
check(all(e.get("cat") in cats for e in ev if e.get("ph") in ("X", "i")), "every span and instant has a known category")
check(all(e["cat"] == "kernel" for e in spans if e["name"] in ("kernel_a", "kernel_b")), "kernel spans: cat kernel")
stream_copies = [e for e in spans if e["cat"] == "memcpy" and track(e).startswith(("stream #", "default stream"))]
engine_copies = [e for e in spans if e["cat"] == "memcpy" and track(e).startswith("copy engine")]
check(sorted(e["args"]["kind"] for e in stream_copies) == ["DtoH", "DtoH", "HtoD"],
      "copies on streams carry their kind, the synchronous birenMemcpy included: %s" % [e["args"] for e in stream_copies])
check(sorted((e["args"]["kind"], e["args"]["bytes"]) for e in engine_copies) == [("DtoH", 256), ("DtoH", 256), ("HtoD", 256)],
      "copies on copy engines carry kind and bytes")
check(any(e["cat"] == "memset" and e["args"]["bytes"] == 256 for e in spans), "the synchronous birenMemset is traced")
syncs = [e for e in spans if e["cat"] == "sync"]
check(sorted(e["name"].split("(")[0] for e in syncs) == ["birenDeviceSynchronize", "birenMemcpy", "birenMemset", "birenStreamSynchronize"],
      "host synchronizations: %s" % [e["name"] for e in syncs])
check(all(track(e).startswith("host thread") for e in syncs), "host synchronizations on the host thread's track")
check(all(os.path.samefile(e["args"]["caller_object"], prog) for e in syncs), "call sites name the program's file")
line = next(i for i, l in enumerate(open(source), 1) if "SYNC_MEMCPY_LINE" in l)
memcpy_sync = next(e for e in syncs if e["name"] == "birenMemcpy")
where = subprocess.run(["addr2line", "-e", prog, memcpy_sync["args"]["caller_offset"]], capture_output=True, text=True).stdout
check(where.strip().split(" ")[0].endswith("trace_two_streams.c:%d" % line), "addr2line puts the birenMemcpy call site on line %d: %s" % (line, where.strip()))
devs = [e for e in ev if e.get("ph") == "M" and e["name"] == "process_name" and e["pid"] != 0]
check(devs and all(e["args"].get("compute_units") == 3 for e in devs), "device metadata gives its compute units")
segs = doc.get("metadata", {}).get("biren_code_segments", [])
main_fn = int(subprocess.run(["nm", prog], capture_output=True, text=True).stdout.split(" T main")[0].split("\n")[-1], 16)
mine = [s for s in segs if os.path.exists(s["file"]) and os.path.samefile(s["file"], prog)]
check(any(int(s["start"], 16) <= int(s["bias"], 16) + main_fn < int(s["end"], 16) for s in mine),
      "metadata lists the program's code segment, main inside it: %s" % mine)
check(any("libbiren_runtime" in s["file"] for s in segs), "and the library's")
print("%d passed, %d failed" % (len(checks) - len(failures), len(failures)))
sys.exit(1 if failures else 0)
PY
