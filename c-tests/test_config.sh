#!/usr/bin/env bash
# Configuration by environment, read at birenInit (SPEC §2): BIREN_DEVICE_COUNT,
# BIREN_COMPUTE_UNITS, BIREN_DEVICE_MEMORY (K/M/G suffixes), BIREN_SCHEDULING, BIREN_VALIDATOR
# (and, for malformed values, BIREN_DEADLOCK_TIMEOUT_MS and BIREN_LOG, which birenInit also reads).
# Runs c-tests/progs/config_probe.c (built here with the strict flags) under different
# environments. A malformed value makes birenInit fail with BIREN_ERROR_INVALID_VALUE, print
# exactly one stderr line naming the variable, and leave the runtime uninitialized (retryable).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

CC=${CC:-cc}
PROBE=$TMP/config_probe
if ! "$CC" -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -Iinclude -pthread -o "$PROBE" c-tests/progs/config_probe.c \
  -L"$ROOT/target/release" -Wl,-rpath,"$ROOT/target/release" -lbiren_runtime -pthread; then
  echo "FAIL  config_probe does not build"
  exit 1
fi

# Start from an environment without any BIREN_* variable.
for v in $(compgen -e); do
  case $v in BIREN_*) unset "$v" ;; esac
done

passed=0
failed=0
current=""
problems=""

# probe [VAR=value ...] [-- action]: runs the probe; its stdout in $OUT, stderr in $ERR.
probe() {
  local vars=() action=""
  while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then action=${2:-}; break; fi
    vars+=("$1")
    shift
  done
  env ${vars[@]+"${vars[@]}"} "$PROBE" $action >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  OUT=$(cat "$TMP/out")
  ERR=$(cat "$TMP/err")
  [ $rc -eq 0 ] || note "probe exited $rc"
}

note() { problems+="    $current: $*"$'\n'; }
# has key=value: the probe printed exactly that line.
has() { grep -qxF -- "$1" <<<"$OUT" || note "expected '$1' in output: $(tr '\n' ' ' <<<"$OUT")"; }
value() { sed -n "s/^$1=//p" <<<"$OUT" | head -n1; }
stderr_empty() { [ -z "$ERR" ] || note "expected no stderr, got: $ERR"; }

# start NAME begins a test; finish counts it as passed when no check noted a problem.
start() { current=$1; problems=""; }
finish() {
  if [ -z "$problems" ]; then
    passed=$((passed + 1)); echo "  ok    $current"
  else
    failed=$((failed + 1)); echo "  FAIL  $current"; printf '%s' "$problems" >&2
  fi
}

echo "config"

start defaults
probe
has init=BIREN_SUCCESS
has last_error=BIREN_SUCCESS
has device_count=1
has dev0.policy=preemptive
has set_device_past_count=BIREN_ERROR_INVALID_DEVICE
units=$(value dev0.units)
cpus=$(nproc 2>/dev/null || echo 1)
{ [ -n "$units" ] && [ "$units" -ge 1 ] && [ "$units" -le "$cpus" ]; } || note "default compute units '$units' not in 1..$cpus (host CPUs)"
mem=$(value dev0.mem)
{ [ -n "$mem" ] && [ "$mem" -gt 0 ]; } || note "default device memory '$mem'"
has "dev0.total=$mem"
has "dev0.free=$mem"
stderr_empty
finish

start device_count
probe BIREN_DEVICE_COUNT=3
has init=BIREN_SUCCESS
has device_count=3
has dev2.policy=preemptive
has set_device_past_count=BIREN_ERROR_INVALID_DEVICE
stderr_empty
probe BIREN_DEVICE_COUNT=1
has device_count=1
finish

start compute_units
probe BIREN_COMPUTE_UNITS=3 BIREN_DEVICE_COUNT=2
has init=BIREN_SUCCESS
has dev0.units=3
has dev1.units=3
probe BIREN_COMPUTE_UNITS=1
has dev0.units=1
stderr_empty
finish

start device_memory_with_suffixes
for pair in 4096:4096 64K:65536 3M:3145728 2G:2147483648 1G:1073741824; do
  probe "BIREN_DEVICE_MEMORY=${pair%%:*}"
  has init=BIREN_SUCCESS
  has "dev0.mem=${pair#*:}"
  has "dev0.total=${pair#*:}"
  has "dev0.free=${pair#*:}"
  stderr_empty
done
finish

start device_memory_out_of_memory
probe BIREN_DEVICE_MEMORY=1M -- oom
has dev0.total=1048576
has oom_full=BIREN_SUCCESS
has oom_more=BIREN_ERROR_OUT_OF_MEMORY
has oom_free_after=BIREN_SUCCESS
has oom_more_after_free=BIREN_SUCCESS
probe BIREN_DEVICE_MEMORY=1M BIREN_DEVICE_COUNT=2 -- oom
has oom_other_device_full=BIREN_SUCCESS
finish

start scheduling
probe BIREN_SCHEDULING=cooperative BIREN_DEVICE_COUNT=2
has init=BIREN_SUCCESS
has dev0.policy=cooperative
has dev1.policy=cooperative
probe BIREN_SCHEDULING=preemptive
has dev0.policy=preemptive
stderr_empty
finish

start validator
probe BIREN_VALIDATOR=1 -- badfree
has init=BIREN_SUCCESS
has badfree=BIREN_ERROR_INVALID_DEVICE_POINTER
grep -q birenFree <<<"$ERR" || note "BIREN_VALIDATOR=1: no stderr line names birenFree; stderr: $ERR"
probe BIREN_VALIDATOR=0 -- badfree
has badfree=BIREN_ERROR_INVALID_DEVICE_POINTER
stderr_empty
probe -- badfree
has badfree=BIREN_ERROR_INVALID_DEVICE_POINTER
stderr_empty
finish

start read_at_init_not_at_load
probe -- late
has init=BIREN_SUCCESS
has dev0.units=2
finish

start malformed_values_fail_init_with_one_line
malformed=(
  BIREN_DEVICE_COUNT=abc BIREN_DEVICE_COUNT=-1 BIREN_DEVICE_COUNT=2x BIREN_DEVICE_COUNT=1.5
  BIREN_DEVICE_COUNT=99999999999999999999999
  BIREN_COMPUTE_UNITS=many BIREN_COMPUTE_UNITS=0 BIREN_COMPUTE_UNITS=-4
  BIREN_DEVICE_MEMORY=12X BIREN_DEVICE_MEMORY=abc BIREN_DEVICE_MEMORY=-1M BIREN_DEVICE_MEMORY=M
  BIREN_DEVICE_MEMORY=1.5G BIREN_DEVICE_MEMORY=1MB BIREN_DEVICE_MEMORY=99999999999999999999G
  BIREN_SCHEDULING=fifo BIREN_SCHEDULING=round-robin
  BIREN_VALIDATOR=yes BIREN_VALIDATOR=2 BIREN_VALIDATOR=on
  BIREN_DEADLOCK_TIMEOUT_MS=soon BIREN_LOG=verbose
  "BIREN_DEVICE_COUNT= 2" BIREN_DEVICE_COUNT=+2 "BIREN_COMPUTE_UNITS=2 " "BIREN_VALIDATOR= 1"
  BIREN_DEVICE_MEMORY=9223372036854775808 BIREN_DEVICE_MEMORY=1025G
  BIREN_DEADLOCK_TIMEOUT_MS=99999999999999999 BIREN_KERNEL_TIMEOUT_MS=-5 BIREN_KERNEL_TIMEOUT_MS=1s
)
for kv in "${malformed[@]}"; do
  var=${kv%%=*}
  probe "$kv"
  has init=BIREN_ERROR_INVALID_VALUE
  has last_error=BIREN_ERROR_INVALID_VALUE
  has malloc_after_failed_init=BIREN_ERROR_NOT_INITIALIZED
  lines=$(grep -c '' <<<"$ERR")
  [ -n "$ERR" ] && [ "$lines" -eq 1 ] || note "$kv: expected one stderr line, got $([ -n "$ERR" ] && echo "$lines" || echo 0): $ERR"
  grep -qF "$var" <<<"$ERR" || note "$kv: the stderr line does not name $var: $ERR"
done
finish

# One rule for every variable: an empty value counts as unset.
start empty_values_count_as_unset
probe BIREN_DEVICE_COUNT= BIREN_COMPUTE_UNITS= BIREN_DEVICE_MEMORY= BIREN_SCHEDULING= BIREN_VALIDATOR= \
  BIREN_DEADLOCK_TIMEOUT_MS= BIREN_KERNEL_TIMEOUT_MS= BIREN_TRACE= BIREN_LOG=
has init=BIREN_SUCCESS
has device_count=1
has dev0.policy=preemptive
[ -z "$ERR" ] || note "empty values: unexpected stderr: $ERR"
finish

start failed_init_can_be_retried
probe BIREN_SCHEDULING=fifo BIREN_DEVICE_COUNT=2 -- retry
has init=BIREN_ERROR_INVALID_VALUE
has retry=BIREN_SUCCESS
has device_count=1
has dev0.policy=preemptive
finish

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
