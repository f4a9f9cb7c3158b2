#!/usr/bin/env bash
# The header promises that a barrier-free BIREN_KERNEL body compiles to a loop the compiler
# vectorises. c-tests/progs/vectorise.c holds bodies with CUDA's usual index (each marked
# "VEC:"); built with -O3 and GCC's -fopt-info-vec-optimized, in C and in C++, every marked
# kernel's loop must be reported vectorised, and the program must compute every element right.
# With a compiler that is not GCC, only the results are checked.
set -eu
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-cc}
CXX=${CXX:-c++}
SRC=c-tests/progs/vectorise.c
LIBS=(-Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -lm -pthread)
failed=0
for lang in c c++; do
  if [ $lang = c ]; then comp=$CC; std=-std=c99; else comp=$CXX; std=-std=c++11; fi
  gcc_like=0
  "$comp" -v 2>&1 | grep -q '^gcc version' && gcc_like=1
  flags=("$std" -Wall -Wextra -Werror -O3 -Iinclude -pthread)
  [ $gcc_like = 1 ] && flags+=(-fopt-info-vec-optimized)
  if ! "$comp" "${flags[@]}" -x $lang -o "$TMP/v-$lang" $SRC -x none "${LIBS[@]}" 2>"$TMP/vec-$lang.txt"; then
    cat "$TMP/vec-$lang.txt"; echo "FAIL  $SRC does not build as $lang"; exit 1
  fi
  if [ $gcc_like = 1 ]; then
    # The kernel is defined on the line after its "VEC:" comment; GCC reports its loop there.
    for line in $(grep -n '/\* VEC:' $SRC | cut -d: -f1); do
      k=$((line + 1))
      name=$(sed -n "${k}p" $SRC | sed -E 's/BIREN_KERNEL\(([a-z_]+),.*/\1/')
      if grep -qE "vectorise\.c:$k:[0-9]+: optimized: loop vectorized" "$TMP/vec-$lang.txt"; then
        echo "ok    $name ($lang): the thread loop is vectorised"
      else
        echo "FAIL  $name ($lang): the thread loop is not vectorised"; failed=1
      fi
    done
  else
    echo "note  $comp is not GCC: vectorisation not checked"
  fi
  timeout 120 "$TMP/v-$lang" || failed=1
done
exit $failed
