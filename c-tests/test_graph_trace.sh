#!/usr/bin/env bash
# BIREN_TRACE with graphs: a graph launch is a span on its stream's track; each node is a span on
# its own row ("graph exec #E node N"), named with its node id and what it does; kernels run on
# the compute units under the graph's and node's names; every edge is an arrow from one node's
# span to the next's.
# Also: the validator's exit report names a stream capture left open.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude c-tests/progs/trace_graph.c \
   -Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -o "$tmp/prog"
BIREN_TRACE="$tmp/trace.json" "$tmp/prog" > /dev/null
python3 - "$tmp/trace.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ev = doc["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
def track(e): return names.get((e["pid"], e["tid"]), "?")
spans = [e for e in ev if e.get("ph") == "X"]
failures = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond: failures.append(what)
launches = [e for e in spans if e["name"].startswith("graph exec #") and track(e).startswith("stream #")]
check(len(launches) == 2, "two graph launch spans on the stream track (%d)" % len(launches))
check(all(e.get("args", {}).get("nodes") == 4 for e in launches), "launch spans carry the node count")
rows = {n for n in names.values() if n.startswith("graph exec #") and " node " in n}
check(len(rows) == 4, "a row per node: %s" % sorted(rows))
node_spans = [e for e in spans if track(e) in rows]
check(len(node_spans) == 8, "every node of both launches is a span on its row (%d)" % len(node_spans))
check(any(e["name"].startswith("node 0: kernel work") for e in node_spans), "node spans named with id and kernel")
check(any(e["name"].startswith("node 3: memcpy") for e in node_spans), "the copy node's span")
check(any(e["name"].startswith("graph exec #") and "node 1: work" in e["name"] and track(e).startswith("compute unit") for e in spans),
      "kernels on compute units under the graph's and node's names")
edge_s = {e["id"]: e for e in ev if e.get("ph") == "s" and e["name"] == "edge"}
edge_f = {e["id"]: e for e in ev if e.get("ph") == "f" and e["name"] == "edge"}
both = set(edge_s) & set(edge_f)
check(len(both) == 8, "every edge of both launches is an arrow (%d of 8)" % len(both))
check(all(track(edge_s[i]) != track(edge_f[i]) for i in both), "arrows go from one node's row to another's")
check(all(edge_s[i]["ts"] <= edge_f[i]["ts"] for i in both), "arrows go forward in time")
sys.exit(1 if failures else 0)
PY

# The validator's exit report names a capture that was never ended.
cc -std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude c-tests/progs/capture_left_open.c \
   -Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -o "$tmp/open"
BIREN_VALIDATOR=1 "$tmp/open" 2> "$tmp/stderr"
if grep -q "stream capture begun in stream #[0-9]* was never ended (1 node(s) captured" "$tmp/stderr"; then
  echo "ok   a capture left open at exit is reported"
else
  echo "FAIL a capture left open at exit is reported"; cat "$tmp/stderr"; exit 1
fi
