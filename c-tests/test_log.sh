#!/usr/bin/env bash
# BIREN_LOG: `api` logs every call with its arguments and result, `errors` only failing calls,
# one whole line per call even with four threads calling at once; unset logs nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
check() { # name, condition command...
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); echo "  ok    $name"; else failed=$((failed + 1)); echo "  FAIL  $name"; fi
}
echo "api log"
cc -std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude c-tests/progs/log_threads.c -pthread \
   -Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -o "$tmp/prog" || exit 1
BIREN_LOG=api "$tmp/prog" 2> "$tmp/api"
BIREN_LOG=errors "$tmp/prog" 2> "$tmp/errors"
"$tmp/prog" 2> "$tmp/none"
line='^biren api: biren[A-Za-z]+\([^()]*\) -> BIREN_[A-Z_]+$'
check "api: every line is one whole call" bash -c "! grep -Evq '$line' '$tmp/api'"
check "api: init, 800 gets and 800 failing sets" bash -c "
  grep -cx 'biren api: birenInit() -> BIREN_SUCCESS' '$tmp/api' | grep -qx 1 &&
  grep -c '^biren api: birenGetDevice(device=0x[0-9a-f]*) -> BIREN_SUCCESS$' '$tmp/api' | grep -qx 800 &&
  grep -c '^biren api: birenSetDevice(device=99) -> BIREN_ERROR_INVALID_DEVICE$' '$tmp/api' | grep -qx 800"
check "errors: only the 800 failing calls" bash -c "
  grep -c . '$tmp/errors' | grep -qx 800 && ! grep -v 'BIREN_ERROR_INVALID_DEVICE$' '$tmp/errors' | grep -q ."
check "unset: nothing logged" test ! -s "$tmp/none"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
