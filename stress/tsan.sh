#!/usr/bin/env bash
# ThreadSanitizer run of the stress test: the race check that sees inside the runtime (helgrind
# and DRD cannot: the runtime's locks are parking_lot/std futex locks and atomics, see
# valgrind/helgrind.supp).
#
# Builds the library with the nightly toolchain and -Zsanitizer=thread into its own target
# directory (TSAN_TARGET, default /tmp/biren-tsan-target: the normal build is not touched),
# links stress/stress.c against it and the toolchain's TSan runtime, runs the normal variant
# (TSAN_SECONDS, default 10) and the reset variant (TSAN_RESET_SECONDS, default 5), and fails if
# TSan reports anything not covered by stress/tsan.supp (documented false positives from the
# uninstrumented standard library), or if the stress test itself fails.
#   usage: bash stress/tsan.sh            (needs: rustup toolchain nightly, offline is fine)
set -uo pipefail
cd "$(dirname "$0")/.."
target=${TSAN_TARGET:-/tmp/biren-tsan-target}
triple=$(rustc -vV | sed -n 's/^host: //p')
sysroot=$(rustc +nightly --print sysroot) || { echo "tsan: needs the nightly toolchain"; exit 2; }
rt="$sysroot/lib/rustlib/$triple/lib/librustc-nightly_rt.tsan.a"
[ -f "$rt" ] || { echo "tsan: no TSan runtime at $rt"; exit 2; }
RUSTFLAGS="-Zsanitizer=thread -Cunsafe-allow-abi-mismatch=sanitizer" CARGO_TARGET_DIR="$target" \
  cargo +nightly build --release --lib --offline --target "$triple" || exit 2
lib="$target/$triple/release"
ln -sf libbiren_runtime.so "$lib/libbiren_runtime.so.1"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -std=c99 -O1 -g -Iinclude stress/stress.c -o "$out/stress" -L"$lib" -Wl,-rpath,"$lib" -lbiren_runtime \
   -Wl,--whole-archive "$rt" -Wl,--no-whole-archive -pthread -ldl -lrt -lm -lstdc++ || exit 2
export TSAN_OPTIONS="halt_on_error=0 report_signal_unsafe=0 suppressions=$PWD/stress/tsan.supp ${TSAN_OPTIONS:-}"
failed=0
run() { # name, args...
  local name=$1
  shift
  BIREN_COMPUTE_UNITS=${BIREN_COMPUTE_UNITS:-2} timeout 900 "$out/stress" --quiet --watchdog 120 "$@" > "$out/log" 2>&1
  local rc=$? n
  n=$(grep -c 'WARNING: ThreadSanitizer' "$out/log")
  echo "tsan: $name: exit $rc, $n TSan report(s)"
  grep -E '^SUMMARY: ThreadSanitizer' "$out/log" | sort | uniq -c | sed 's/^/    /'
  grep -E '^stress: (FAIL|WATCHDOG)|late work|FAILURES' "$out/log" | sed 's/^/    /'
  if [ "$rc" -ne 0 ] || [ "$n" -ne 0 ]; then
    failed=1
    cp "$out/log" "/tmp/biren-tsan-$name.log" && echo "    full log: /tmp/biren-tsan-$name.log"
  fi
}
run normal --seconds "${TSAN_SECONDS:-10}" --threads 4 --churners 1
run reset --seconds "${TSAN_RESET_SECONDS:-5}" --threads 4 --churners 1 --reset
exit $failed
