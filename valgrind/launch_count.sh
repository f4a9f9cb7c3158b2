#!/usr/bin/env bash
# Instructions per launch, per thread, from callgrind (BENCHMARKS.md, "Launches").
#   valgrind/launch_count.sh [N=20000] [STREAMS=1] [COMPUTE_UNITS=1]
# Runs valgrind/launch_count.c under callgrind with N launches and with 0, and prints, for the
# host thread and for the device threads, (Ir(N) - Ir(0)) / N. The host thread's figure is the
# enqueue path; the device threads' is the rest of a launch's life (their idle spin included).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20000}; streams=${2:-1}; cus=${3:-1}
mkdir -p build/valgrind
cc -std=c99 -O2 -g -Iinclude -pthread -o build/valgrind/launch_count valgrind/launch_count.c \
  -Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -lm -pthread
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
count() { # $1 launches -> "host device" instruction totals
  BIREN_COMPUTE_UNITS=$cus valgrind --tool=callgrind --separate-threads=yes \
    --callgrind-out-file="$tmp/cg.$1" build/valgrind/launch_count "$1" "$streams" >/dev/null 2>&1
  local host=0 dev=0
  for f in "$tmp"/cg."$1"-*; do
    local ir; ir=$(awk '/^summary:/ {print $2}' "$f")
    case "$f" in *-01) host=$((host + ir)) ;; *) dev=$((dev + ir)) ;; esac
  done
  echo "$host $dev"
}
read -r h1 d1 < <(count "$n")
read -r h0 d0 < <(count 0)
echo "launches=$n streams=$streams compute_units=$cus"
echo "host thread (enqueue) Ir/launch: $(( (h1 - h0) / n ))"
echo "device threads Ir/launch:        $(( (d1 - d0) / n ))"
echo "total Ir/launch:                 $(( (h1 + d1 - h0 - d0) / n ))"
