#!/usr/bin/env bash
# make bench-peer HIP_CPU_DIR=/path/to/HIP-CPU: the kernel figures of bench/kernels.c beside the
# same figures of HIP-CPU (bench/peer/hip_kernels.cpp), in one run. The two programs run
# alternately ROUNDS times (default 3, each taking medians of its own repetitions); the table
# shows the median of the rounds and BIREN's advantage (>1: BIREN is better).
# Needs: a checkout of ROCm/HIP-CPU (header-only; commit e112c93 used in BENCHMARKS.md) and
# TBB (Debian/Ubuntu: apt-get install libtbb-dev).
set -eu
cd "$(dirname "$0")/.."
: "${HIP_CPU_DIR:?set HIP_CPU_DIR to a checkout of https://github.com/ROCm/HIP-CPU}"
ROUNDS=${ROUNDS:-3}
OURS=build/bench/kernels
PEER=build/bench/peer_hip
[ -x "$OURS" ] && [ -x "$PEER" ] || { echo "build first: make bench-peer" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rev=$(git -C "$HIP_CPU_DIR" rev-parse --short HEAD 2>/dev/null || echo "unknown commit")
echo "BIREN vs HIP-CPU ($rev), $ROUNDS alternating rounds, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
LIB=target/release/libbiren_runtime.so
for r in $(seq "$ROUNDS"); do
  # Fresh copies of both programs' code each round: where a file's pages sit in the page cache
  # moves barrier kernels by up to ~15% for as long as it stays cached (BENCHMARKS.md, round
  # ten); with a copy per round that is noise the median takes, not one bias for the whole run.
  d="$TMP/r$r"
  mkdir -p "$d"
  cp "$LIB" "$d/libbiren_runtime.so"
  ln -s libbiren_runtime.so "$d/libbiren_runtime.so.1"
  cp "$OURS" "$d/kernels"
  cp "$PEER" "$d/peer_hip"
  LD_LIBRARY_PATH="$d" "$d/kernels" --figures >>"$TMP/ours" || echo "round $r: bench/kernels reported a wrong result" >&2
  "$d/peer_hip" >>"$TMP/peer" || echo "round $r: the peer reported a wrong result" >&2
done
grep '^NOTE' "$TMP/peer" | sort -u || true
python3 - "$TMP/ours" "$TMP/peer" <<'PY'
import statistics, sys
def load(p):
    d = {}
    for line in open(p):
        if line.startswith("FIG "):
            _, k, v = line.split()
            d.setdefault(k, []).append(float(v))
    return {k: statistics.median(v) for k, v in d.items()}
ours, peer = load(sys.argv[1]), load(sys.argv[2])
rows = [
    ("vadd_form_ratio", "vector add 16M / best C loop (BIREN_KERNEL form)", "x", False, "<= 1.1"),
    ("vadd_form_int_ratio", "the same, int index (BIREN: vectorised)", "x", False, None),
    ("vadd_plain_ratio", "vector add 16M / best C loop (per-thread form)", "x", False, "<= 3"),
    ("reduce_form_ratio", "barrier reduction 16M / 1-thread C (BIREN_KERNEL form)", "x", False, "<= 40"),
    ("reduce_plain_ratio", "barrier reduction 16M / 1-thread C (per-thread form)", "x", False, "<= 40"),
    ("barrier_ns", "per thread-barrier", "ns", False, None),
    ("matmul_gflops", "tiled matmul 1024^2, shared memory + barriers", "GFLOP/s", True, ">= peer"),
    ("shfl_ns", "warp shuffle, per thread-shuffle", "ns", False, None),
    ("atomic_ns", "atomic add on one contended counter, per op", "ns", False, None),
    ("enqueue_ns", "launch enqueue, empty 1x1 kernel", "ns", False, "<= 90"),
    ("launches_per_s", "empty launches end to end", "M/s", True, ">= 3"),
]
print("| figure | BIREN | HIP-CPU | BIREN advantage | target | met |")
print("|:--|--:|--:|--:|--|--|")
for key, text, unit, higher, target in rows:
    o = ours.get(key); p = peer.get(key)
    if key == "reduce_plain_ratio": p = peer.get("reduce_form_ratio")
    if key == "vadd_plain_ratio": p = peer.get("vadd_form_ratio")
    adv = "-" if o is None or p is None or o == 0 or p == 0 else "%.2fx" % ((o / p) if higher else (p / o))
    met = "-"
    if target and o is not None:
        if target == ">= peer": met = "yes" if p is not None and o >= p else "no"
        else:
            lim = float(target.split()[1])
            met = "yes" if (o <= lim if target.startswith("<=") else o >= lim) else "no"
    f = lambda v: "-" if v is None else "%.3g %s" % (v, unit)
    print(f"| {text} | {f(o)} | {f(p)} | {adv} | {target or '-'} | {met} |")
PY
