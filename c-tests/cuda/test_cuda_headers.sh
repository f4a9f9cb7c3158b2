#!/usr/bin/env bash
# BIREN's CUDA headers (include/cuda) as programs meet them:
#  - include/cuda/cuda_runtime_api.h is what tools/cuda_header.py makes from biren_runtime.h;
#  - a C99 program (-Wall -Wextra -Wpedantic -Werror) using cuda_runtime_api.h and the small
#    headers, linked with a C++ translation unit using them too, builds and runs (each unit
#    starts the runtime by itself; C++ wrappers are one per program);
#  - calling a CUDA call BIREN lacks fails to compile with a message naming it (C and C++), and
#    the same file without the call compiles;
#  - NVIDIA's helper_cuda.h / helper_functions.h compile unchanged as C++11 and C++17 with -Wall
#    (c-tests/cuda/test_cuda_api.cpp includes them).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

CC=${CC:-cc}
CXX=${CXX:-c++}
INC=(-Iinclude/cuda -Iinclude -Ithird_party/cuda-samples/Common)
CFLAGS=(-std=c99 -Wall -Wextra -Wpedantic -Werror -O2 "${INC[@]}" -pthread)
CXXFLAGS=(-std=c++11 -Wall -Wextra -Wpedantic -Werror -O2 "${INC[@]}" -pthread)
LDLIBS=(-L"$ROOT/target/release" -Wl,-rpath,"$ROOT/target/release" -lbiren_runtime -lm -pthread)
P=c-tests/cuda/progs

passed=0
failed=0
current=""
problems=""
note() { problems+="    $current: $*"$'\n'; }
start() { current=$1; problems=""; }
finish() {
  if [ -z "$problems" ]; then
    passed=$((passed + 1)); echo "  ok    $current"
  else
    failed=$((failed + 1)); echo "  FAIL  $current"; printf '%s' "$problems" >&2
  fi
}

echo "cuda headers"

start "generated_header_is_fresh"
python3 tools/cuda_header.py --check 2>"$TMP/check.err" || note "$(cat "$TMP/check.err")"
finish

start "c99_program_with_a_cxx_unit_runs"
if ! $CC "${CFLAGS[@]}" -c -o "$TMP/c_program.o" $P/c_program.c 2>"$TMP/c.err" || [ -s "$TMP/c.err" ]; then
  note "C compile: $(cat "$TMP/c.err")"
elif ! $CXX "${CXXFLAGS[@]}" -c -o "$TMP/other_unit.o" $P/other_unit.cpp 2>"$TMP/cxx.err" || [ -s "$TMP/cxx.err" ]; then
  note "C++ compile: $(cat "$TMP/cxx.err")"
elif ! $CXX -o "$TMP/c_program" "$TMP/c_program.o" "$TMP/other_unit.o" "${LDLIBS[@]}" 2>"$TMP/ld.err"; then
  note "link: $(cat "$TMP/ld.err")"
else
  out=$("$TMP/c_program" 2>&1); rc=$?
  [ $rc -eq 0 ] && [ "$out" = "c program: ok" ] || note "ran with $rc: $out"
fi
finish

# unsupported LANG COMPILER FLAGS... : the file compiles without CALL_IT, fails naming the call with it.
unsupported() {
  local src=$1 name=$2; shift 2
  if ! "$@" -c -o "$TMP/u.o" "$src" 2>"$TMP/ok.err" || [ -s "$TMP/ok.err" ]; then
    note "$src without the call does not compile cleanly: $(cat "$TMP/ok.err")"
  fi
  if "$@" -DCALL_IT -c -o "$TMP/u.o" "$src" 2>"$TMP/fail.err"; then
    note "$src calling $name compiled"
  elif ! grep -q "$name: not supported by BIREN (see docs/CUDA-COMPATIBILITY.md)" "$TMP/fail.err"; then
    note "$src: the error does not name $name: $(cat "$TMP/fail.err")"
  fi
}
start "an_unsupported_call_is_a_compile_error_naming_it"
unsupported $P/unsupported_call.cpp cudaIpcGetEventHandle $CXX "${CXXFLAGS[@]}"
unsupported $P/unsupported_call.c cudaStreamSetAttribute $CC "${CFLAGS[@]}"
finish

start "helper_headers_compile_as_cxx17"
$CXX -std=c++17 -Wall -Wextra -Werror "${INC[@]}" -fsyntax-only c-tests/cuda/test_cuda_api.cpp 2>"$TMP/17.err" \
  || note "$(head -20 "$TMP/17.err")"
finish

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
