#!/usr/bin/env bash
# The race corpus (c-tests/race/*.c, each labelled "verdict: racy" or "verdict: race-free" and,
# if racy, "fuzz: yes|no" in its header comment) against BIREN_RACECHECK and BIREN_SCHEDULE:
#  1. BIREN_RACECHECK=1: every racy program gets a "biren racecheck:" line, no race-free one does,
#     and race-free programs compute the right result (exit 0).
#  2. BIREN_SCHEDULE=fuzz:SEED: every racy program whose result can differ ("fuzz: yes") computes
#     a wrong result (exit 1) for some seed in 1..20; race-free programs stay right under fuzzing
#     (seeds 1..3) and under BIREN_SCHEDULE=serial.
#  3. A race in a loop is reported once, with its count at exit; findings name what they should
#     (both operations, graph nodes, a stream-ordered free, 2D rows, array copies, surface writes).
set -u
# shellcheck source=c-tests/common.bash
source "$(dirname "$0")/common.bash"

progs=()
for src in c-tests/race/*.c; do
  name=$(basename "$src" .c)
  if ! "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -Iinclude -pthread -o "$TMP/$name" "$src" \
    -L"$ROOT/target/release" -Wl,-rpath,"$ROOT/target/release" -lbiren_runtime -pthread; then
    fail "$name does not build"
    continue
  fi
  progs+=("$name")
done

verdict_of() { sed -n 's/^ \* verdict: *\([a-z-]*\).*/\1/p' "c-tests/race/$1.c" | head -1; }
fuzz_of() { sed -n 's/^ \* fuzz: *\([a-z]*\).*/\1/p' "c-tests/race/$1.c" | head -1; }

nracy=0
nfree=0
for name in "${progs[@]}"; do
  v=$(verdict_of "$name")
  case "$name:$v" in
    racy_*:racy) nracy=$((nracy + 1)) ;;
    safe_*:race-free) nfree=$((nfree + 1)) ;;
    *) fail "$name: file name and verdict ($v) disagree"; continue ;;
  esac
  # 1. racecheck
  BIREN_RACECHECK=1 timeout 60 "$TMP/$name" > /dev/null 2> "$TMP/$name.err"
  rc=$?
  if [ "$v" = racy ]; then
    if [ $rc = 3 ]; then
      echo "note  $name: the program says this run had no race (rc 3); run again"
      BIREN_RACECHECK=1 timeout 60 "$TMP/$name" > /dev/null 2> "$TMP/$name.err"
    fi
    if grep -q '^biren racecheck: ' "$TMP/$name.err"; then pass; else
      fail "$name: racy, but BIREN_RACECHECK=1 reported nothing"; sed 's/^/      /' "$TMP/$name.err"; fi
  else
    if grep -q 'racecheck' "$TMP/$name.err"; then
      fail "$name: race-free, but BIREN_RACECHECK=1 reported:"; sed 's/^/      /' "$TMP/$name.err"
    elif [ $rc != 0 ]; then
      fail "$name: race-free, exit $rc under BIREN_RACECHECK=1"; sed 's/^/      /' "$TMP/$name.err"
    else pass; fi
  fi
  # 2. fuzzing
  if [ "$v" = racy ] && [ "$(fuzz_of "$name")" = yes ]; then
    seen=""
    for seed in $(seq 1 20); do
      BIREN_SCHEDULE=fuzz:$seed timeout 60 "$TMP/$name" > /dev/null 2> "$TMP/$name.fuzz"
      if [ $? = 1 ]; then seen=$seed; break; fi
    done
    if [ -n "$seen" ]; then
      pass
      grep -q "BIREN_SCHEDULE=fuzz:$seen" "$TMP/$name.fuzz" && pass || fail "$name: the seed is not printed"
    else fail "$name: no seed in 1..20 made the race show"; fi
  elif [ "$v" = race-free ]; then
    for mode in fuzz:1 fuzz:2 fuzz:3 serial; do
      BIREN_SCHEDULE=$mode timeout 60 "$TMP/$name" > /dev/null 2> "$TMP/$name.fuzz"
      rc=$?
      if [ $rc = 0 ]; then pass; else
        fail "$name: race-free, exit $rc under BIREN_SCHEDULE=$mode"; sed 's/^/      /' "$TMP/$name.fuzz"; fi
    done
  fi
done

# 3. one report per race, with its count at exit
if [ -x "$TMP/racy_in_a_loop" ]; then
  BIREN_RACECHECK=1 "$TMP/racy_in_a_loop" > /dev/null 2> "$TMP/loop.err"
  n=$(grep -c '^biren racecheck: kernel' "$TMP/loop.err")
  if [ "$n" = 1 ] && grep -q '1 distinct race(s) found, 10 occurrence(s)' "$TMP/loop.err"; then pass; else
    fail "racy_in_a_loop: expected one report and a count of 10 at exit:"; sed 's/^/      /' "$TMP/loop.err"; fi
fi
# The report names both operations, the allocation, the bytes and the fix.
if [ -x "$TMP/racy_missing_event" ]; then
  BIREN_RACECHECK=1 "$TMP/racy_missing_event" > /dev/null 2> "$TMP/one.err"
  line=$(grep '^biren racecheck: kernel' "$TMP/one.err")
  ok=1
  for want in "kernel 'fill' (stream #" "op 1 in that stream" "kernel 'sum' (stream #" "writes bytes 0..1024" \
    "reads bytes 0..1024" "1024-byte device allocation" "racy_missing_event+0x" \
    "Fix: record an event after the kernel 'fill' in stream #"; do
    case "$line" in *"$want"*) ;; *) ok=0; echo "      missing: $want" ;; esac
  done
  if [ $ok = 1 ]; then pass; else fail "racy_missing_event: the report lacks something:"; echo "      $line"; fi
fi

# Findings inside a graph name the executable graph and both nodes; a stream-ordered free is named.
expect_in_report() {
  local name=$1
  shift
  [ -x "$TMP/$name" ] || return 0
  BIREN_RACECHECK=1 "$TMP/$name" > /dev/null 2> "$TMP/$name.one"
  local line ok=1
  line=$(grep '^biren racecheck: ' "$TMP/$name.one" | grep -v ' distinct race(s) found' | head -1)
  for want in "$@"; do
    case "$line" in *"$want"*) ;; *) ok=0; echo "      missing: $want" ;; esac
  done
  if [ $ok = 1 ]; then pass; else fail "$name: the report lacks something:"; echo "      $line"; fi
}
expect_in_report racy_graph_nodes_unordered "graph node 'graph exec #" "node 0: kernel fill'" "node 1: kernel fill'" \
  "birenGraphLaunch called from" "Fix: add an edge"
expect_in_report racy_graph_vs_other_stream "graph node 'graph exec #" "kernel 'sum' (stream #" \
  "record an event after the launch of graph exec #"
expect_in_report racy_free_async_wrong_stream "kernel 'fill' (stream #" "birenFreeAsync in stream #" \
  "wait for it before birenFreeAsync"
expect_in_report racy_2d_copy_vs_kernel "2D/3D memcpy (stream #" "reads 16 rows of 32 bytes 64 apart"
# Array copies and surface writes: the copy's rows in the array, the kernel through its surface.
expect_in_report racy_array_copies_unordered "birenMemcpy2DToArrayAsync called from" "writes 4 rows of 32 bytes 64 apart" \
  "birenMemcpy2DFromArrayAsync called from" "reads 4 rows of 32 bytes 64 apart"
expect_in_report racy_surface_write_vs_array_copy "kernel 'paint' (stream #" "writes bytes 0..512" \
  "birenMemcpy2DFromArrayAsync called from"

if [ "$nracy" -lt 15 ] || [ $((nracy + nfree)) -lt 30 ]; then fail "the corpus is too small ($nracy racy, $nfree race-free)"; fi
echo "racecheck corpus: $nracy racy, $nfree race-free programs"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
