#!/usr/bin/env bash
# Typed launches (the header's "Typed launches"), as a compiler sees them:
#  - test_launch_args.c and test_warp_partial.c built as C11 and C++11 (strict flags) and run;
#  - the validator names the kernel, the argument's position, its size and the parameter's when a
#    launch's arguments differ from a known signature;
#  - BIREN_LAUNCH of a BIREN_KERNEL kernel with a wrong number of arguments does not compile, in
#    C99, C11 and C++11, and the compiler's message names the kernel;
#  - each argument converts as a call would: for pairs of parameter and argument types, the launch
#    compiles with -Wconversion -Wsign-conversion -Werror exactly when the same call of a host
#    function does, with the same warning options in both diagnostics (pointer to integer too).
set -u
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-cc}
CXX=${CXX:-c++}
WARN=(-Wall -Wextra -Wpedantic -Werror -O2 -Iinclude -Ic-tests -pthread)
LIBS=(-Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -lm -pthread)
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "  ok    $1"; }
fail() { failed=$((failed + 1)); echo "  FAIL  $1"; shift; printf '    %s\n' "$@" >&2; }

echo "typed launches"

# 1. The C tests in C11 and C++11.
for t in test_launch_args test_warp_partial; do
  if "$CC" -std=c11 "${WARN[@]}" -o "$TMP/${t}_c11" c-tests/$t.c "${LIBS[@]}" 2>"$TMP/diag" &&
    timeout 300 "$TMP/${t}_c11" >"$TMP/out" 2>&1; then ok "${t}_c11"; else fail "${t}_c11" "$(cat "$TMP/diag" "$TMP/out")"; fi
  if "$CXX" -std=c++11 "${WARN[@]}" -x c++ -o "$TMP/${t}_cxx" c-tests/$t.c -x none "${LIBS[@]}" 2>"$TMP/diag" &&
    timeout 300 "$TMP/${t}_cxx" >"$TMP/out" 2>&1; then ok "${t}_cxx"; else fail "${t}_cxx" "$(cat "$TMP/diag" "$TMP/out")"; fi
done

# 2. The validator's messages.
"$CC" -std=c99 "${WARN[@]}" -o "$TMP/args" c-tests/test_launch_args.c "${LIBS[@]}"
BIREN_VALIDATOR=1 "$TMP/args" >/dev/null 2>"$TMP/validator"
for want in \
  "birenLaunchKernelArgs: kernel 'later': argument 1 of 2 (args[0]) is 8 bytes, its parameter 4 bytes" \
  "birenLaunchKernelArgs: kernel 'later' takes 2 arguments (4, 4 bytes), 1 given" \
  "birenLaunchKernelArgs: kernel 'plain_add': argument 2 of 2 (args[1]) is 8 bytes, its parameter 4 bytes" \
  "birenLaunchKernel: kernel 'plain_add': args[1] (argument 2 of 2, a parameter of 4 bytes) is NULL" \
  "birenLaunchCooperativeKernel: kernel 'plain_add' takes 2 arguments (8, 4 bytes) and the argument array is NULL" \
  "birenGraphAddKernelNode: kernel 'plain_add': args[1] (argument 2 of 2, a parameter of 4 bytes) is NULL" \
  "birenGraphAddKernelNode: kernel 'plain_add': extra: the buffer is 24 bytes" \
  "birenGraphExecKernelNodeSetParams: kernel 'plain_add' takes 2 arguments (8, 4 bytes) and the argument array is NULL"; do
  if grep -qF "biren validator: $want" "$TMP/validator"; then ok "validator: ${want:0:60}..."; else
    fail "validator: $want" "not in:" "$(cat "$TMP/validator")"; fi
done

# 3. A wrong number of arguments does not compile; the message names the kernel.
prog() { # prog ARGS: a launch of vecscale (float *, float, int) with ARGS
  cat <<C
#include "biren_runtime.h"
BIREN_KERNEL(vecscale, (float *) x, (float) a, (int) n) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) x[i] *= a;
}
int launch(float *d, int n);
int launch(float *d, int n) { return (int)BIREN_LAUNCH(vecscale, birenDim3(1, 1, 1), birenDim3(32, 1, 1), 0, NULL, $1); }
C
}
prog "d, 2.0f, n" >"$TMP/count_ok.c"
prog "d, 2.0f" >"$TMP/count_few.c"
prog "d, 2.0f, n, n" >"$TMP/count_many.c"
for lang in "$CC -std=c99" "$CC -std=c11" "$CXX -std=c++11 -x c++"; do
  name="${lang##*-std=}"; name="${name%% *}"
  if $lang "${WARN[@]}" -fsyntax-only "$TMP/count_ok.c" 2>"$TMP/diag"; then ok "right count compiles ($name)"; else
    fail "right count compiles ($name)" "$(cat "$TMP/diag")"; fi
  for c in few many; do
    if $lang "${WARN[@]}" -fsyntax-only "$TMP/count_$c.c" 2>"$TMP/diag"; then
      fail "too $c arguments do not compile ($name)" "it compiled"
    elif grep -q "vecscale" "$TMP/diag" && grep -Eqi "too (few|many) arguments|no matching function|has no member" "$TMP/diag"; then
      ok "too $c arguments do not compile, the message names the kernel ($name): $(grep -m1 -Eio "(too (few|many) arguments to function|no matching function for call to)[^(]*" "$TMP/diag")"
    else
      fail "too $c arguments: the message names the kernel ($name)" "$(cat "$TMP/diag")"
    fi
  done
done

# 4. Conversions as a call makes them: PARAM|ARG-DECL pairs.
pairs=(
  "unsigned|size_t v = 5"
  "unsigned|int v = 5"
  "float|double v = 3.0"
  "float|long v = 3"
  "int|double v = 2.9"
  "short|int v = 70000"
  "unsigned char|int v = 300"
  "long long|int v = -5"
  "double|float v = 1.5f"
  "int|int *v = 0"
  "int *|long v = 0"
  "float *|int *v = 0"
  "const float *|float *v = 0"
)
flags() { grep -o '\[-[A-Za-z=-]*\]' "$1" | sort -u | tr '\n' ' '; }
for pair in "${pairs[@]}"; do
  ptype=${pair%%|*}
  decl=${pair#*|}
  atype=$(sed -E 's/ \*v = .*/ */; s/ v = .*//' <<<"$decl")
  for lang in "$CC -std=c99" "$CXX -std=c++11 -x c++"; do
    name="${lang##*-std=}"; name="${name%% *}"
    for how in call launch; do
      {
        echo '#include "biren_runtime.h"'
        echo "BIREN_KERNEL(k, ($ptype) p) { (void)p; }"
        echo "void f($ptype p);"
        echo "void f($ptype p) { (void)p; }"
        echo "int use(void);"
        if [ $how = call ]; then echo "int use(void) { $decl; f(v); return 0; }"; else
          echo "int use(void) { $decl; return (int)BIREN_LAUNCH(k, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, v); }"; fi
      } >"$TMP/conv_$how.c"
      $lang "${WARN[@]}" -Wconversion -Wsign-conversion -fsyntax-only "$TMP/conv_$how.c" >"$TMP/diag_$how" 2>&1
      echo $? >"$TMP/rc_$how"
    done
    if [ "$(cat "$TMP/rc_call")" = "$(cat "$TMP/rc_launch")" ] && [ "$(flags "$TMP/diag_call")" = "$(flags "$TMP/diag_launch")" ]; then
      ok "$ptype <- $atype ($name): as a call ($( [ "$(cat "$TMP/rc_call")" = 0 ] && echo clean || flags "$TMP/diag_call"))"
    else
      fail "$ptype <- $atype ($name): the launch does not convert as a call" \
        "call (rc $(cat "$TMP/rc_call")):" "$(cat "$TMP/diag_call")" "launch (rc $(cat "$TMP/rc_launch")):" "$(cat "$TMP/diag_launch")"
    fi
  done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
