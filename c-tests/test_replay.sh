#!/usr/bin/env bash
# Deterministic replay (BIREN_RECORD / BIREN_REPLAY) on c-tests/replay/threads.c, a program with
# three host threads whose outcome depends on the interleaving:
#  1. recordings (under fuzz seeds) until two give different outcomes;
#  2. each of them replayed 5 times gives its own outcome every time, silently;
#  3. replayed against a program that behaves differently: one "diverged" line, then it finishes
#     (a call that does not match; a turn that never comes, BIREN_REPLAY_TIMEOUT_MS);
#  4. a recording cut after a whole line (a crashed run) replays up to its end, then runs free;
#  5. damaged or mismatching files, and bad settings, are refused at birenInit with one line.
set -u
# shellcheck source=c-tests/common.bash
source "$(dirname "$0")/common.bash"

P=$TMP/threads
if ! "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -Iinclude -pthread -o "$P" c-tests/replay/threads.c \
  -L"$ROOT/target/release" -Wl,-rpath,"$ROOT/target/release" -lbiren_runtime -pthread; then
  echo "FAIL  c-tests/replay/threads.c does not build"
  exit 1
fi

outcome() { grep '^outcome:' "$1"; }

# 1. Record until two recordings differ.
first=""
second=""
for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
  f=$TMP/rec$seed
  if ! BIREN_SCHEDULE=fuzz:$seed BIREN_RECORD=$f.txt timeout 60 "$P" > "$f.out" 2> "$f.err"; then
    fail "recording with seed $seed failed"; sed 's/^/      /' "$f.err"; continue
  fi
  if grep -q 'not implemented\|biren replay:' "$f.err"; then
    fail "recording with seed $seed says:"; sed 's/^/      /' "$f.err"
  fi
  if [ -z "$first" ]; then first=$f; continue; fi
  if [ "$(outcome "$f.out")" != "$(outcome "$first.out")" ]; then second=$f; break; fi
done
if [ -n "$first" ] && [ -n "$second" ]; then pass; else
  fail "12 recordings did not give two different outcomes"; fi

# 2. Each replays to its own outcome, 5 times out of 5, without a word.
for f in $first $second; do
  want=$(outcome "$f.out")
  for i in 1 2 3 4 5; do
    BIREN_REPLAY=$f.txt timeout 60 "$P" > "$TMP/replay.out" 2> "$TMP/replay.err"
    rc=$?
    got=$(outcome "$TMP/replay.out")
    if [ $rc = 0 ] && [ "$got" = "$want" ] && [ ! -s "$TMP/replay.err" ]; then pass; else
      fail "replay $i of $(basename "$f"): rc $rc, recorded \"$want\", replayed \"$got\""
      sed 's/^/      /' "$TMP/replay.err"
    fi
  done
done

# 3. Divergence: reported in one line, and the program finishes.
f=${first:-$TMP/none}
BIREN_REPLAY=$f.txt timeout 60 "$P" other > "$TMP/d.out" 2> "$TMP/d.err"
rc=$?
if [ $rc = 0 ] && grep -q '^biren replay: diverged at turn [0-9]*: expected birenStreamQuery from thread [0-9]*, got birenDeviceSynchronize; running free$' "$TMP/d.err" \
  && [ "$(grep -c 'biren replay:' "$TMP/d.err")" = 1 ]; then pass; else
  fail "a divergent call: rc $rc"; sed 's/^/      /' "$TMP/d.err"; fi
start=$(date +%s)
BIREN_REPLAY_TIMEOUT_MS=300 BIREN_REPLAY=$f.txt timeout 60 "$P" short > "$TMP/d.out" 2> "$TMP/d.err"
rc=$?
if [ $rc = 0 ] && grep -q '^biren replay: diverged at turn [0-9]*: expected .*, which did not come in 300 ms; running free$' "$TMP/d.err" \
  && [ $(( $(date +%s) - start )) -lt 30 ]; then pass; else
  fail "a turn that never comes: rc $rc"; sed 's/^/      /' "$TMP/d.err"; fi

# 4. A recording cut after a whole line: replayed up to its end, then free. The cut comes after
# every thread's first call (and at line 40 at the earliest): in a recording cut before a thread
# begins, another thread that begins with the same call may take its place (docs/REPLAY.md,
# Limits), and the replay then diverges instead, which is not what this checks.
if [ -f "$f.txt" ]; then
  cut=$(grep -n '^T ' "$f.txt" | tail -n 1 | cut -d: -f1)
  cut=$((cut + 1 > 40 ? cut + 1 : 40))
  head -n "$cut" "$f.txt" > "$TMP/prefix.txt"
  BIREN_REPLAY=$TMP/prefix.txt timeout 60 "$P" > "$TMP/p.out" 2> "$TMP/p.err"
  rc=$?
  if [ $rc = 0 ] && grep -q '^biren replay: end of the recording at turn [0-9]*; running free$' "$TMP/p.err"; then pass; else
    fail "a recording's prefix: rc $rc"; sed 's/^/      /' "$TMP/p.err"; fi
fi

# 5. Refused at birenInit: exit 2 (the program's birenInit check) and one line naming the file.
refused() { # name, pattern, env...
  local name=$1 pattern=$2
  shift 2
  env "$@" timeout 60 "$P" > /dev/null 2> "$TMP/r.err"
  local rc=$?
  if [ $rc = 2 ] && grep -q "$pattern" "$TMP/r.err" && grep -q 'birenInit() failed: BIREN_ERROR_INVALID_VALUE' "$TMP/r.err"; then pass; else
    fail "$name: rc $rc"; sed 's/^/      /' "$TMP/r.err"; fi
}
if [ -f "$f.txt" ]; then
  head -n 40 "$f.txt" | head -c -3 > "$TMP/cut.txt"
  printf 'hello\n' > "$TMP/junk.txt"
  : > "$TMP/empty.txt"
  sed '3s/^C [0-9]*/C 99999/' "$f.txt" > "$TMP/gap.txt"
  refused "a file cut in a line" "^biren: BIREN_REPLAY=$TMP/cut.txt: line [0-9]*: the file is cut short" BIREN_REPLAY="$TMP/cut.txt"
  refused "not a recording" "^biren: BIREN_REPLAY=$TMP/junk.txt: line 1: not a BIREN_RECORD file" BIREN_REPLAY="$TMP/junk.txt"
  refused "an empty file" "^biren: BIREN_REPLAY=$TMP/empty.txt: the file is empty" BIREN_REPLAY="$TMP/empty.txt"
  refused "a damaged entry" "^biren: BIREN_REPLAY=$TMP/gap.txt: line 3: turn 99999 where 0 was expected" BIREN_REPLAY="$TMP/gap.txt"
  refused "a missing file" "^biren: BIREN_REPLAY=$TMP/nothing.txt: cannot read the file" BIREN_REPLAY="$TMP/nothing.txt"
  refused "other settings" "recorded with BIREN_DEVICE_COUNT=1 BIREN_COMPUTE_UNITS=2 .*, this run has BIREN_DEVICE_COUNT=1 BIREN_COMPUTE_UNITS=3" \
    BIREN_COMPUTE_UNITS=3 BIREN_REPLAY="$f.txt"
  refused "another fuzz seed" "this run has .*BIREN_SCHEDULE=fuzz:999" BIREN_SCHEDULE=fuzz:999 BIREN_REPLAY="$f.txt"
fi
refused "both at once" "^biren: invalid BIREN_REPLAY=" BIREN_RECORD="$TMP/x.txt" BIREN_REPLAY="$TMP/y.txt"
refused "an unwritable recording" "^biren: BIREN_RECORD=$TMP/no/such/dir.txt: cannot create the file" BIREN_RECORD="$TMP/no/such/dir.txt"
refused "a bad timeout" "^biren: invalid BIREN_REPLAY_TIMEOUT_MS=" BIREN_REPLAY_TIMEOUT_MS=0

echo "test_replay: $passed passed, $failed failed"
[ $failed = 0 ]
