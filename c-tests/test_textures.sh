#!/usr/bin/env bash
# test_textures.c built as C++ (-std=c++11, strict): CUDA's templates tex2D<T>, surf2Dwrite,
# surf2Dread<T>, birenCreateChannelDesc<T>() and the array calls' default arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=${CXX:-c++}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$CXX" -std=c++11 -Wall -Wextra -Wpedantic -Werror -O2 -Iinclude -pthread -x c++ -o "$TMP/textures_cxx" \
  c-tests/test_textures.c -x none -Ltarget/release -Wl,-rpath,"$PWD/target/release" -lbiren_runtime -lm -pthread
"$TMP/textures_cxx"
