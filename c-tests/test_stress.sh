#!/usr/bin/env bash
# Short run of stress/stress.c (the long one is `make stress`): 8 host threads creating and
# destroying streams, events and memory, launching, copying, recording and waiting with every
# value checked, 2 threads churning handles; then the variant where a thread resets the device at
# random moments. Each run must exit 0 (no lost update, no wrong value, no unexpected code) within
# its watchdog (no hang). Durations: STRESS_SECONDS (default 5) and STRESS_RESET_SECONDS
# (default 3).
set -uo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
check() { # name, command...
  local name=$1
  shift
  # A lost wake-up that the runtime's safety net rescued is a failure too (it would have hung).
  if "$@" > "$tmp/out" 2>&1 && ! grep -q '^biren: internal:' "$tmp/out"; then
    passed=$((passed + 1))
    echo "  ok    $name"
    grep -E '^stress: .*finished|rounds |late work|FAILURES' "$tmp/out" | sed 's/^/        /'
  else
    local rc=$?
    failed=$((failed + 1))
    echo "  FAIL  $name (exit $rc)"
    sed 's/^/        /' "$tmp/out" | tail -n 40
  fi
}
echo "stress (short)"
check "builds with the strict flags" \
  cc -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -g -Iinclude stress/stress.c -o "$tmp/stress" \
     -Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -pthread
if [ -x "$tmp/stress" ]; then
  check "8 workers + 2 churners, ${STRESS_SECONDS:-5} s" \
    timeout 120 "$tmp/stress" --seconds "${STRESS_SECONDS:-5}" --quiet
  check "same with random device resets, ${STRESS_RESET_SECONDS:-3} s" \
    timeout 120 "$tmp/stress" --seconds "${STRESS_RESET_SECONDS:-3}" --reset --quiet
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
