#!/usr/bin/env bash
# The barrier-kernel suite of `make bench` / `make bench-pocl` (bench/barriers.c) computes the
# right results: built with $CC against the header (the fiber form) and, when it is built, with
# target/release/biren-cc (the region form), each program checks every kernel bit for bit against
# its plain C reference and exits non-zero on a difference; every kernel must report. Small sizes
# (BENCH_QUICK), one repetition; no time is checked.
set -eu
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-cc}
BIREN_CC=${BIREN_CC:-target/release/biren-cc}
KERNELS="vadd reduce reduce_warp matmul scan hist transpose bitonic"
failed=0

run() { # form, program
  if ! BENCH_QUICK=1 BENCH_REPS=1 timeout 120 "$2" --figures >"$TMP/$1.txt" 2>"$TMP/$1.err"; then
    cat "$TMP/$1.err"; echo "FAIL  bench/barriers.c ($1 form): a wrong result or an error"; failed=1; return
  fi
  for k in $KERNELS; do
    grep -q "^FIG ${k}_ms " "$TMP/$1.txt" || { echo "FAIL  bench/barriers.c ($1 form): no figure for $k"; failed=1; }
  done
  echo "ok    bench/barriers.c ($1 form): every kernel's result equals its C reference"
}

"$CC" -std=gnu11 -O2 -Wall -Wextra -Iinclude -pthread -o "$TMP/fiber" bench/barriers.c \
  -Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -lm -pthread
run fiber "$TMP/fiber"
if [ -x "$BIREN_CC" ]; then
  "$BIREN_CC" -std=gnu11 -O2 -Wall -Wextra -pthread -o "$TMP/region" bench/barriers.c -lm
  run region "$TMP/region"
else
  echo "note  $BIREN_CC not built: the region form is not checked"
fi
[ $failed = 0 ] && echo "barrier bench: passed" || { echo "barrier bench: FAILED"; exit 1; }
