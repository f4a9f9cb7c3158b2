#!/usr/bin/env bash
# The barrier-kernel suite side by side (issue 29), one table:
#   bash bench/barriers.sh          BIREN's fiber form (bench/barriers.c built with cc) beside its
#                                   region form (the same source built with biren-cc), as `make
#                                   bench` runs it
#   bash bench/barriers.sh --pocl   and the same kernels on PoCL (bench/peer/pocl_host.c), with
#                                   both work-group methods, as `make bench-pocl` runs it
# Programs: FIBER (default build/bench/barriers), REGION (build/bench/barriers-region; empty or
# missing: no region column), POCL_HOST (build/bench/pocl_host). The programs run one after
# another ROUNDS times (default 1; each prints medians of BENCH_REPS launches, default 5), each
# round from fresh copies of the BIREN programs and library (page-cache placement moves barrier
# kernels by up to ~15%: BENCHMARKS.md, round ten); the table shows the median of the rounds.
# PoCL runs with POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=2 POCL_KERNEL_CACHE=0 (override
# them in the environment) and POCL_WORK_GROUP_METHOD=loopvec, then loops.
# Exit status 1 when a program reports a wrong result or fails (the table is printed first).
set -eu
cd "$(dirname "$0")/.."
POCL=0
[ "${1:-}" = --pocl ] && POCL=1
ROUNDS=${ROUNDS:-1}
FIBER=${FIBER:-build/bench/barriers}
REGION=${REGION-build/bench/barriers-region}
POCL_HOST=${POCL_HOST:-build/bench/pocl_host}
LIB=target/release/libbiren_runtime.so
[ -x "$FIBER" ] || { echo "build first: make bench (or bench-pocl)" >&2; exit 1; }
[ -n "$REGION" ] && [ ! -x "$REGION" ] && REGION=
[ "$POCL" = 0 ] || [ -x "$POCL_HOST" ] || { echo "build first: make bench-pocl" >&2; exit 1; }
export POCL_DEVICES=${POCL_DEVICES:-pthread} POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-2}
export POCL_KERNEL_CACHE=${POCL_KERNEL_CACHE:-0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failed=0
said() { # what, exit status
  if [ "$2" = 1 ]; then echo "$1 reported a wrong result" >&2; else echo "$1 failed (exit status $2)" >&2; fi
  failed=1
}

echo
echo "Barrier kernels side by side (bench/barriers.sh): $ROUNDS round(s), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "$REGION" ] || echo "Region form: not built (no biren-cc: make builds target/release/biren-cc); fiber form only."
for r in $(seq "$ROUNDS"); do
  d="$TMP/r$r"
  mkdir -p "$d"
  cp "$LIB" "$d/libbiren_runtime.so"
  ln -s libbiren_runtime.so "$d/libbiren_runtime.so.1"
  cp "$FIBER" "$d/fiber"
  LD_LIBRARY_PATH="$d" "$d/fiber" --figures >>"$TMP/fiber" || said "round $r: the fiber form" $?
  if [ -n "$REGION" ]; then
    cp "$REGION" "$d/region"
    LD_LIBRARY_PATH="$d" "$d/region" --figures >>"$TMP/region" || said "round $r: the region form" $?
  fi
  if [ "$POCL" = 1 ]; then
    for m in loopvec loops; do
      POCL_WORK_GROUP_METHOD=$m "$POCL_HOST" --figures --cl=bench/peer/pocl_kernels.cl >>"$TMP/pocl_$m" ||
        said "round $r: PoCL ($m)" $?
    done
  fi
done
grep -h '^NOTE sizes' "$TMP/fiber" | sed 's/^NOTE s/S/' | sort -u || true
[ "$POCL" = 0 ] || grep -h '^NOTE' "$TMP"/pocl_* | grep -v '^NOTE sizes' | sed 's/^NOTE /PoCL: /; s/, POCL_WORK_GROUP_METHOD=.*//' | sort -u || true
python3 - "$TMP" "$POCL" "${REGION:+1}" <<'PY'
import os, statistics, sys
tmp, pocl, region = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
def load(name):
    d = {}
    p = os.path.join(tmp, name)
    if os.path.exists(p):
        for line in open(p):
            if line.startswith("FIG "):
                _, k, v = line.split()
                d.setdefault(k, []).append(float(v))
    return {k: statistics.median(v) for k, v in d.items()}
cols = [("fiber", "BIREN fiber", load("fiber"))]
if region: cols.append(("region", "BIREN region", load("region")))
if pocl:
    cols.append(("loopvec", "PoCL loopvec", load("pocl_loopvec")))
    cols.append(("loops", "PoCL loops", load("pocl_loops")))
by = {c[0]: c[2] for c in cols}
kernels = [
    ("vadd", "vector add (no barrier)"),
    ("reduce", "tree reduction, block 256, 9 barriers"),
    ("reduce_warp", "  by warp shuffles, 1 barrier (BIREN only)"),
    ("matmul", "tiled matmul 16x16, 2 barriers per tile"),
    ("scan", "block scan (Hillis-Steele), 9 barriers"),
    ("hist", "histogram, shared atomics, 2 barriers"),
    ("transpose", "transpose, 32x33 tile, 1 barrier"),
    ("bitonic", "bitonic sort of 256, 37 barriers"),
]
def ms(col, k): return by.get(col, {}).get(k + "_ms")
def pocl_best(k):
    v = [x for x in (ms("loopvec", k), ms("loops", k)) if x]
    return min(v) if v else None
f = lambda v: "-" if v is None else ("%.1f" % v if v >= 10 else "%.2f" % v)
r = lambda a, b: "-" if a is None or b is None or b == 0 else "%.2f" % (a / b)
head = ["kernel (median ms)", "C ref"] + [c[1] for c in cols]
if pocl: head += ["fiber / PoCL"] + (["region / PoCL"] if region else [])
if region: head += ["fiber / region", "met"]
print("| " + " | ".join(head) + " |")
print("|:--|" + "--:|" * (len(head) - 1 - region) + "--|" * region)
# Issue 29's target for every barrier kernel: the region form >= 5x faster than the fiber form,
# and (with PoCL) ahead of PoCL's better method.
def met(k):
    if k == "vadd": return "-"
    fi, re, po = ms("fiber", k), ms("region", k), pocl_best(k)
    if fi is None or re is None: return "-"
    ok = fi / re >= 5 and (po is None or re < po)
    return "yes" if ok else "no"
for k, text in kernels:
    if all(ms(c[0], k) is None for c in cols): continue
    row = [text, f(by["fiber"].get(k + "_c_ms"))] + [f(ms(c[0], k)) for c in cols]
    if pocl: row += [r(ms("fiber", k), pocl_best(k))] + ([r(ms("region", k), pocl_best(k))] if region else [])
    if region: row += [r(ms("fiber", k), ms("region", k)), met(k)]
    print("| " + " | ".join(row) + " |")
print()
print("X / PoCL: time over PoCL's better method (< 1: BIREN faster); fiber / region: the region form's speed-up.")
if region: print("met: issue 29's target for a barrier kernel, the region form >= 5x faster than the fiber form" + (" and ahead of PoCL." if pocl else " (PoCL not run)."))
print("C ref: plain C, 1 thread (vector add: the better of 1 thread and all CPUs), from the fiber program's run.")
print()
head = ["figure (issue 29)"] + [c[1] for c in cols] + ["target (region form)"] + (["met"] if region else [])
print("| " + " | ".join(head) + " |")
print("|:--|" + "--:|" * len(cols) + "--|" * (1 + region))
def ratio(c, k):
    a, b = by[c].get(k + "_ms"), by[c].get(k + "_c_ms")
    return None if a is None or not b else a / b
def gflops(c): return by.get(c, {}).get("matmul_gflops")
def met_reduce():
    v = ratio("region", "reduce")
    return "-" if v is None else ("yes" if v <= 5 else "no")
def met_matmul():
    g, p = gflops("region"), [x for x in (gflops("loopvec"), gflops("loops")) if x]
    return "-" if g is None or not p else ("yes" if g >= 2 * max(p) else "no")
rows = [
    ("reduction / 1-thread C loop (same partial sums)", lambda c: ratio(c, "reduce"), "<= 5", met_reduce),
    ("tiled matmul, GFLOP/s", gflops, ">= 2x PoCL", met_matmul),
    ("vector add / best C loop", lambda c: ratio(c, "vadd"), "-", lambda: "-"),
]
for text, get, target, is_met in rows:
    vals = [get(c[0]) for c in cols]
    if all(v is None for v in vals): continue
    cells = [text] + ["-" if v is None else "%.3g" % v for v in vals] + [target] + ([is_met()] if region else [])
    print("| " + " | ".join(cells) + " |")
PY
exit $failed
