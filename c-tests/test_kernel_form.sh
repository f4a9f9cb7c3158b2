#!/usr/bin/env bash
# test_kernel_form.c in the other languages and modes the header promises: C11 (the generic
# names by _Generic), C++11 (BIREN_KERNEL's static-initializer registration, overloads), and C99
# with BIREN_NO_INLINE_BUILTINS (the exported atomics and built-ins); each built with the strict
# flags and run. (`make test-c` runs the C99 build itself.)
set -eu
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-cc}
CXX=${CXX:-c++}
WARN=(-Wall -Wextra -Wpedantic -Werror -O2 -Iinclude -pthread)
LIBS=(-Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -lm -pthread)
"$CC" -std=c11 "${WARN[@]}" -o "$TMP/c11" c-tests/test_kernel_form.c "${LIBS[@]}"
"$CXX" -std=c++11 "${WARN[@]}" -x c++ -o "$TMP/cxx" c-tests/test_kernel_form.c -x none "${LIBS[@]}"
"$CC" -std=c99 "${WARN[@]}" -DBIREN_NO_INLINE_BUILTINS -o "$TMP/exported" c-tests/test_kernel_form.c "${LIBS[@]}"
for t in c11 cxx exported; do
  echo "-- test_kernel_form ($t)"
  timeout 300 "$TMP/$t"
done
