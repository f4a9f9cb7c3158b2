#!/bin/bash
# NVIDIA's cuda-samples, unchanged (third_party/cuda-samples), built with biren-cc and run: each
# must exit 0 and print its own success line (c-tests/cuda/cu_samples.list). Two at a time.
# `make test` runs those marked quick; CU_SAMPLES=all runs every one (make test-cu-samples).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BCC=$ROOT/target/release/biren-cc
OUT=$ROOT/build/cu-samples
mkdir -p "$OUT"
[ -x "$BCC" ] || { echo "biren-cc not built (make cc)"; exit 1; }

one() {
  local dir=$1 want=$2 name src extra=""
  name=$(basename "$dir")
  src=$ROOT/third_party/cuda-samples/Samples/$dir
  [ "$name" = cudaOpenMP ] && extra="-fopenmp"
  # As the samples' own Makefiles: every .cu and .cpp of the directory, Common/ on the path.
  if ! "$BCC" -O2 $extra -I"$ROOT/third_party/cuda-samples/Common" $(ls "$src"/*.cu "$src"/*.cpp 2>/dev/null) \
      -o "$OUT/$name" > "$OUT/$name.build" 2>&1; then
    cat "$OUT/$name.build"; echo "FAIL $dir: does not build"; return 1
  fi
  # A sample with a data/ directory reads its inputs from there and writes its outputs beside
  # them: it runs in a copy, so the vendored tree stays as it was.
  local run=$src
  if [ -d "$src/data" ]; then
    run=$OUT/$name.run
    rm -rf "$run" && mkdir -p "$run" && cp -r "$src/data" "$run/"
  fi
  if ! (cd "$run" && BIREN_DEVICE_COUNT=2 timeout 240 "$OUT/$name" > "$OUT/$name.log" 2>&1); then
    tail -20 "$OUT/$name.log"; echo "FAIL $dir: exit status"; return 1
  fi
  if [ "$want" != "-" ] && ! grep -qF -- "$want" "$OUT/$name.log"; then
    tail -20 "$OUT/$name.log"; echo "FAIL $dir: no line '$want'"; return 1
  fi
  echo "ok   $dir"
}
export -f one
export ROOT BCC OUT
list() {
  grep -v '^#' c-tests/cuda/cu_samples.list | sed 's/ *| */|/g' | grep . |
    if [ "${CU_SAMPLES:-quick}" = all ]; then cat; else grep '|quick$'; fi
}
list | xargs -P 2 -I{} bash -c 'IFS="|" read -r d w q <<< "{}"; SECONDS=0; one "$d" "$w" && echo "     ($SECONDS s)"' > "$OUT/summary" 2>&1
status=0
cat "$OUT/summary"
n=$(grep -c '^ok ' "$OUT/summary")
total=$(list | grep -c .)
echo "cuda-samples: $n of $total built with biren-cc and passed their own checks"
[ "$n" = "$total" ] || status=1
exit $status
