#!/usr/bin/env bash
# BIREN_TRACE: the trace of a two-stream program with an event edge parses as JSON and holds both
# streams' kernels, the copies, the record->wait arrow and a host synchronize.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude c-tests/progs/trace_two_streams.c \
   -Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -o "$tmp/prog"
BIREN_TRACE="$tmp/trace.json" "$tmp/prog" > /dev/null
# Tracing off writes nothing.
(cd "$tmp" && ./prog > /dev/null && test ! -e biren_trace.json)
python3 - "$tmp/trace.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
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
check(any(e["name"].startswith("memcpy") and track(e).startswith("copy engine") for e in spans), "copies on a copy engine")
starts = {e["id"] for e in ev if e.get("ph") == "s"}
ends = {e["id"] for e in ev if e.get("ph") == "f"}
check(bool(starts & ends), "an arrow from the record to the wait")
check(any(e["name"].startswith("birenStreamSynchronize") for e in spans), "host synchronize span")
check(any(e["name"].startswith("record event") for e in ev), "event record instant")
print("%d passed, %d failed" % (len(checks) - len(failures), len(failures)))
sys.exit(1 if failures else 0)
PY
