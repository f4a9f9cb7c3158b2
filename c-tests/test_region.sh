#!/usr/bin/env bash
# biren-cc (SPEC §12): the kernels of c-tests/region/kernels.c, one per rule of region form,
# built with the plain compiler (fiber form) and with biren-cc in C11 and C++11 (region form,
# every kernel reported in loops): all three builds pass the same checks. Then each fallback
# reason's report line, the translated unit's shape (-save-temps), a program that asks for
# _GNU_SOURCE, diagnostics at the user's line, and -c then link as a Makefile would.
set -eu
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-cc}
BCC="$PWD/target/release/biren-cc"
[ -x "$BCC" ] || cargo build --release -q -p biren-cc
WARN=(-Wall -Wextra -Wpedantic -Werror -O2)
LIBS=(-Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -lm -pthread)
fail() { echo "FAILED: $*" >&2; exit 1; }

echo "-- fiber form (plain $CC, C99)"
"$CC" -std=c99 "${WARN[@]}" -Iinclude -pthread -o "$TMP/fibers" c-tests/region/kernels.c "${LIBS[@]}"
timeout 300 "$TMP/fibers"

for lang in c11 cxx; do
  echo "-- region form (biren-cc, $lang)"
  if [ $lang = c11 ]; then
    "$BCC" --kernel-report -std=c11 "${WARN[@]}" -o "$TMP/$lang" c-tests/region/kernels.c 2> "$TMP/$lang.report"
  else
    "$BCC" --kernel-report -std=c++11 "${WARN[@]}" -x c++ c-tests/region/kernels.c -x none -o "$TMP/$lang" 2> "$TMP/$lang.report"
  fi
  cat "$TMP/$lang.report"
  grep -q "fibers" "$TMP/$lang.report" && fail "a kernel of kernels.c kept its fiber form ($lang)"
  [ "$(grep -c ': loops (' "$TMP/$lang.report")" = 18 ] || fail "expected 18 kernels in loops ($lang)"
  timeout 300 "$TMP/$lang"
done

echo "-- diagnostics on region-form kernels (c-tests/region/diagnostics.c), both builds"
"$CC" -std=c11 "${WARN[@]}" -Iinclude -pthread -o "$TMP/diag_fibers" c-tests/region/diagnostics.c "${LIBS[@]}"
timeout 300 "$TMP/diag_fibers"
"$BCC" --kernel-report -std=c11 "${WARN[@]}" -o "$TMP/diag" c-tests/region/diagnostics.c 2> "$TMP/diag.report"
cat "$TMP/diag.report"
[ "$(grep -c ': loops (' "$TMP/diag.report")" = 3 ] || fail "diagnostics.c: expected 3 kernels in loops"
grep -q "kernel grid_sum: fibers (grid sync (cooperative launch) at " "$TMP/diag.report" || fail "grid_sum not in fibers"
timeout 300 "$TMP/diag"
echo "-- trace and record/replay name and replay region-form launches"
BIREN_TRACE="$TMP/diag.json" timeout 120 "$TMP/diag" --quiet > /dev/null
grep -q '"fill_shared"' "$TMP/diag.json" || grep -q 'fill_shared' "$TMP/diag.json" || fail "the trace does not name fill_shared"
BIREN_RECORD="$TMP/diag.rec" timeout 120 "$TMP/diag" --quiet > "$TMP/rec.out" 2>&1 || fail "the recorded run failed"
BIREN_REPLAY="$TMP/diag.rec" timeout 120 "$TMP/diag" --quiet > "$TMP/rep.out" 2>&1 || fail "the replayed run failed"
grep -qi "diverged" "$TMP/rep.out" && fail "the replay diverged"
grep -q "2 passed, 0 failed" "$TMP/rep.out" || fail "the replayed run did not pass"

echo "-- every fallback reason, with its report line"
"$BCC" --kernel-report -std=c11 -c c-tests/region/fallbacks.c -o "$TMP/fallbacks.o" 2> "$TMP/fallbacks.report"
diff -u c-tests/region/fallbacks.expected "$TMP/fallbacks.report" || fail "kernel report differs"

echo "-- -save-temps keeps the translated unit: the user's text first, under #line"
(cd "$TMP" && "$BCC" -std=c11 -save-temps -c "$OLDPWD/c-tests/region/kernels.c" -o k.o)
[ -f "$TMP/kernels.biren.c" ] || fail "no kernels.biren.c kept"
head -n 1 "$TMP/kernels.biren.c" | grep -q '^#line 1 ' || fail "the translated unit does not start with #line 1"
[ "$(sed -n 2p "$TMP/kernels.biren.c")" = "$(sed -n 1p c-tests/region/kernels.c)" ] || fail "the user's first line moved"
# shared_atomics: the atomics on shared memory are plain in region form, those on global memory
# stay atomic (each once as the user wrote it, once in the region entry).
ra=$(sed -n '/shared_atomics_biren_region_(/,/^}/p' "$TMP/kernels.biren.c")
[ "$(grep -c 'birenRegionAtomic[A-Za-z]*_(' <<<"$ra")" = 12 ] || fail "shared atomics not plain in region form"
[ "$(grep -c "birenAtomicAddUint(&global" <<<"$ra")" = 3 ] || fail "a global atomic made plain"
# transpose_tile: the regions after each assignment of x and y recompute them (2 regions x 2).
tt=$(sed -n '/transpose_tile_biren_region_(/,/^}/p' "$TMP/kernels.biren.c")
[ "$(grep -c '= (__typeof__(int))($' <<<"$tt")" = 4 ] || fail "transpose_tile: x and y loaded, not recomputed"
# scan_rows: from is kept once for the block (no per-thread store); the ifs on x >= off and
# x < valid are constants in the two thread loops of their regions.
rs=$(sed -n '/scan_rows_biren_region_(/,/^}/p' "$TMP/kernels.biren.c")
grep -q '/\* from \*/' <<<"$rs" && fail "scan_rows: from kept per thread"
[ "$(grep -c 'if (0)' <<<"$rs")" = 2 ] && [ "$(grep -c 'if (1)' <<<"$rs")" = 2 ] || fail "scan_rows: a region not split at its if"

echo "-- a program that defines _GNU_SOURCE before its includes still gets it"
cat > "$TMP/gnu.c" <<'C'
#define _GNU_SOURCE
#include <string.h>
#include <biren_runtime.h>
BIREN_KERNEL(k, (int *) out) {
  BIREN_SHARED int s[32];
  s[threadIdx.x] = (int)threadIdx.x;
  birenSyncThreads();
  out[threadIdx.x] = s[31 - threadIdx.x];
}
int main(void) { return strchrnul("ab", 'b')[0] == 'b' ? 0 : 1; }
C
"$BCC" --kernel-report -std=c11 "${WARN[@]}" -o "$TMP/gnu" "$TMP/gnu.c" 2> "$TMP/gnu.report"
grep -q "kernel k: loops (2 regions)" "$TMP/gnu.report" || fail "gnu.c's kernel not in loops"
"$TMP/gnu"

echo "-- diagnostics point at the user's file and line"
cat > "$TMP/diag.c" <<'C'
#include <biren_runtime.h>
BIREN_KERNEL(k, (int *) out) {
  BIREN_SHARED int s[32];
  s[threadIdx.x] = 1;
  birenSyncThreads();
  int unused_here = 3;
  out[threadIdx.x] = s[0];
}
int main(void) { return 0; }
C
"$BCC" -std=c11 -Wall -c -o "$TMP/diag.o" "$TMP/diag.c" 2> "$TMP/diag.err" || true
grep -q "diag.c:6:.*unused_here" "$TMP/diag.err" || { cat "$TMP/diag.err"; fail "the warning does not name diag.c:6"; }

echo "-- CC=biren-cc in a Makefile: -c, then link (CC in the environment names biren-cc itself)"
cat > "$TMP/Makefile" <<MK
linked: kernels.o
	\$(CC) -o \$@ kernels.o
kernels.o: $PWD/c-tests/region/kernels.c
	\$(CC) -std=c11 -O2 -c -o \$@ $PWD/c-tests/region/kernels.c
MK
CC="$BCC" make -s -C "$TMP" CC="$BCC" linked
timeout 300 "$TMP/linked" > /dev/null

echo "-- examples-c/ builds with biren-cc (strict C99)"
for f in examples-c/*.c; do
  "$BCC" -std=c99 "${WARN[@]}" -pthread -o "$TMP/example" "$f"
done

if command -v cmake > /dev/null; then
  echo "-- CMAKE_C_COMPILER=biren-cc"
  mkdir -p "$TMP/cm"
  printf 'cmake_minimum_required(VERSION 3.13)\nproject(regions C)\nadd_executable(kernels %s)\n' \
    "$PWD/c-tests/region/kernels.c" > "$TMP/cm/CMakeLists.txt"
  CC="$BCC" cmake -S "$TMP/cm" -B "$TMP/cm/build" > "$TMP/cm.log" < /dev/null || { cat "$TMP/cm.log"; fail "cmake configure"; }
  cmake --build "$TMP/cm/build" > "$TMP/cm-build.log" || { cat "$TMP/cm-build.log"; fail "cmake build"; }
  timeout 300 "$TMP/cm/build/kernels" > /dev/null
fi
echo "test_region: all passed"
