#!/usr/bin/env bash
# `make install` end to end: installs into temporary prefixes, then builds and runs a C program
# against the installed copy with nothing but the flags pkg-config gives (shared, fully static,
# and with only the archive), and with CMake's find_package (biren::runtime and
# biren::runtime_static, also from a moved copy of the prefix), and checks the soname, the links,
# the exported symbols, the pkg-config file, the CMake package and `make uninstall`. Run by
# `make test-install`. Installs cmake with apt-get when it is missing and this runs as root.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MAKE="${MAKE:-make}"
CC="${CC:-cc}"
VERSION="$(sed -n 's/^version = "\([^"]*\)"/\1/p' "$ROOT/Cargo.toml" | head -n 1)"
MAJOR="${VERSION%%.*}"
SONAME="libbiren_runtime.so.$MAJOR"

for tool in pkg-config readelf nm "$CC"; do
  command -v "$tool" > /dev/null || { echo "install_test: $tool is required" >&2; exit 1; }
done

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
PASSED=0
FAILED=0
pass() { echo "  ok   $1"; PASSED=$((PASSED + 1)); }
fail() { echo "  FAIL $1" >&2; FAILED=$((FAILED + 1)); }
check() { # check "what" command...
  local what="$1"; shift
  if "$@" > "$WORK/last.log" 2>&1; then pass "$what"; else fail "$what"; sed 's/^/       /' "$WORK/last.log" >&2; fi
}

# The program: a kernel that uses the header's built-ins, an error code that must come back.
cat > "$WORK/prog.c" <<'EOF'
#include <biren_runtime.h>
#include <stdio.h>
#include <string.h>

static void twice(void **args) {
  int *d = *(int **)args[0];
  unsigned n = *(unsigned *)args[1];
  unsigned i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  if (i < n) d[i] *= 2;
}

int main(void) {
  enum { N = 1000 };
  int h[N];
  unsigned n = N;
  int *d;
  int version = 0;
  for (int i = 0; i < N; i++) h[i] = i;
  BIREN_CHECK(birenInit());
  BIREN_CHECK(birenRuntimeGetVersion(&version));
  BIREN_CHECK(birenMalloc((void **)&d, sizeof h));
  BIREN_CHECK(birenMemcpy(d, h, sizeof h, birenMemcpyHostToDevice));
  BIREN_CHECK(BIREN_LAUNCH(twice, birenDim3((N + 127) / 128, 1, 1), birenDim3(128, 1, 1), 0, NULL, d, n));
  BIREN_CHECK(birenDeviceSynchronize());
  BIREN_CHECK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  BIREN_CHECK(birenFree(d));
  for (int i = 0; i < N; i++) {
    if (h[i] != 2 * i) {
      fprintf(stderr, "h[%d] = %d, expected %d\n", i, h[i], 2 * i);
      return 1;
    }
  }
  birenError_t e = birenFree(d); /* double free */
  if (e != BIREN_ERROR_INVALID_DEVICE_POINTER || strcmp(birenGetErrorName(e), "BIREN_ERROR_INVALID_DEVICE_POINTER") != 0) {
    fprintf(stderr, "double free gave %d (%s)\n", (int)e, birenGetErrorName(e));
    return 1;
  }
  printf("biren %d ok\n", version);
  return 0;
}
EOF

echo "== install into a temporary PREFIX"
P="$WORK/prefix"
check "make install PREFIX=$P" "$MAKE" -s -C "$ROOT" install PREFIX="$P"
L="$P/lib"
check "real file libbiren_runtime.so.$VERSION" test -f "$L/libbiren_runtime.so.$VERSION" -a ! -L "$L/libbiren_runtime.so.$VERSION"
check "$SONAME -> libbiren_runtime.so.$VERSION" test "$(readlink "$L/$SONAME")" = "libbiren_runtime.so.$VERSION"
check "libbiren_runtime.so -> $SONAME" test "$(readlink "$L/libbiren_runtime.so")" = "$SONAME"
check "static library" test -f "$L/libbiren_runtime.a"
check "header" cmp "$ROOT/include/biren_runtime.h" "$P/include/biren_runtime.h"
check "pkg-config file" test -f "$L/pkgconfig/biren_runtime.pc"

soname_is() { readelf -d "$L/libbiren_runtime.so.$VERSION" | grep -q "(SONAME).*\[$SONAME\]"; }
check "SONAME is $SONAME (readelf -d)" soname_is

# Exported symbols: the biren* API only (Rust's cdylib exports nothing else; no exception is
# needed). Anything else listed here is a leak of internals.
nm -D --defined-only "$L/libbiren_runtime.so.$VERSION" | awk '{print $NF}' | sort > "$WORK/exports"
only_biren() {
  if grep -v '^biren' "$WORK/exports"; then echo "symbols above are not biren*"; return 1; fi
  # Every function the header declares is exported.
  local missing=0
  # Helpers the header defines as static inline (birenDim3, birenKernelCtxFast, the texture
  # fetches, ...) or as function-like macros (birenShflSyncInt, the generic birenAtomicAdd, ...)
  # need no export. Names are read from code lines, not from the comments that describe them.
  local inline_only
  inline_only=$({ grep -oE 'static (inline|BIREN_INLINE_) [^(]*\bbiren[A-Za-z0-9]+\(' "$ROOT/include/biren_runtime.h"
    grep -oE '#define biren[A-Za-z0-9]+\(' "$ROOT/include/biren_runtime.h"; } | grep -oE 'biren[A-Za-z0-9]+' | sort -u)
  for f in $(grep -vE '^\s*(/\*|\*)' "$ROOT/include/biren_runtime.h" | grep -oE '\bbiren[A-Za-z0-9]+\(' | tr -d '(' | sort -u); do
    if grep -qx "$f" <<< "$inline_only" && ! grep -qx "$f" "$WORK/exports"; then continue; fi
    grep -qx "$f" "$WORK/exports" || { echo "not exported: $f"; missing=1; }
  done
  return $missing
}
check "nm -D --defined-only: only biren* symbols, all of the header's" only_biren

export PKG_CONFIG_PATH="$L/pkgconfig"
modversion() { test "$(pkg-config --modversion biren_runtime)" = "$VERSION"; }
check "pkg-config --modversion = $VERSION" modversion

echo "== shared: cc prog.c \$(pkg-config --cflags --libs biren_runtime)"
# shellcheck disable=SC2046
check "build" "$CC" -o "$WORK/prog-shared" "$WORK/prog.c" $(pkg-config --cflags --libs biren_runtime)
needs_soname() { readelf -d "$WORK/prog-shared" | grep -q "(NEEDED).*\[$SONAME\]"; }
check "program needs $SONAME" needs_soname
# A temporary prefix is not in the loader's path: LD_LIBRARY_PATH stands in for ldconfig.
uses_installed() { local out; out="$(LD_LIBRARY_PATH="$L" ldd "$WORK/prog-shared")"; grep -q "$SONAME => $L/$SONAME" <<< "$out"; }
check "loader resolves $SONAME to the installed copy" uses_installed
check "run" env LD_LIBRARY_PATH="$L" "$WORK/prog-shared"

echo "== biren-prof, installed beside the library"
check "$P/bin/biren-prof is executable" test -x "$P/bin/biren-prof"
prof_runs() {
  env LD_LIBRARY_PATH="$L" "$P/bin/biren-prof" --csv --output "$WORK/prof.csv" "$WORK/prog-shared" &&
    grep -q '^copies,HtoD,1,4000,' "$WORK/prof.csv" && grep -q '^copies,DtoH,1,4000,' "$WORK/prof.csv" &&
    grep -qE '^kernels,[^,]+,1,' "$WORK/prof.csv"
}
check "profiles the installed program: one kernel, 4000 bytes each way" prof_runs

echo "== biren-cc, installed beside the library: finds the installed header and library"
check "$P/bin/biren-cc is executable" test -x "$P/bin/biren-cc"
cc_builds() {
  env CC="$CC" "$P/bin/biren-cc" -O2 -o "$WORK/prog-cc" "$WORK/prog.c" && env LD_LIBRARY_PATH="$L" "$WORK/prog-cc"
}
check "biren-cc builds and links prog.c against the installed copy" cc_builds

echo "== static: cc -static prog.c \$(pkg-config --static --cflags --libs biren_runtime)"
# glibc's linker warns about getaddrinfo/getpwuid_r in Rust's std (never called by the runtime).
# shellcheck disable=SC2046
check "build" "$CC" -static -o "$WORK/prog-static" "$WORK/prog.c" $(pkg-config --static --cflags --libs biren_runtime)
fully_static() { ! readelf -d "$WORK/prog-static" 2>/dev/null | grep -q NEEDED; }
check "no shared library needed" fully_static
check "run (no LD_LIBRARY_PATH)" "$WORK/prog-static"

echo "== archive only, system libraries shared: cc prog.c <libdir>/libbiren_runtime.a + Libs.private"
private_libs="$(pkg-config --static --libs-only-l biren_runtime | sed 's/-lbiren_runtime//')"
# shellcheck disable=SC2046,SC2086
check "build" "$CC" -o "$WORK/prog-archive" "$WORK/prog.c" $(pkg-config --cflags biren_runtime) \
  "$(pkg-config --variable=libdir biren_runtime)/libbiren_runtime.a" $private_libs
no_biren_needed() { ! readelf -d "$WORK/prog-archive" | grep -q "(NEEDED).*biren"; }
check "does not need libbiren_runtime" no_biren_needed
check "run" "$WORK/prog-archive"

echo "== CMake: find_package(biren_runtime) in a consumer project, shared and static"
have_cmake() { command -v cmake > /dev/null; }
if ! have_cmake && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
  echo "  (installing cmake: apt-get install -y cmake)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends cmake; } \
    > "$WORK/apt.log" 2>&1 || sed 's/^/       /' "$WORK/apt.log" >&2
fi
if ! have_cmake; then
  echo "  SKIP the CMake package checks: cmake is not installed and cannot be installed here" \
       "(not root, or no apt-get). Install cmake and rerun." >&2
else
  check "CMake package files" test -f "$L/cmake/biren_runtime/biren_runtimeConfig.cmake" \
    -a -f "$L/cmake/biren_runtime/biren_runtimeConfigVersion.cmake"
  mkdir -p "$WORK/cmake-consumer"
  cp "$WORK/prog.c" "$WORK/cmake-consumer/prog.c"
  cat > "$WORK/cmake-consumer/CMakeLists.txt" <<'EOF_CMAKE'
cmake_minimum_required(VERSION 3.13)
project(biren_consumer C)
find_package(biren_runtime 1.0 REQUIRED)
add_executable(prog-shared prog.c)
target_link_libraries(prog-shared PRIVATE biren::runtime)
add_executable(prog-static prog.c)
target_link_libraries(prog-static PRIVATE biren::runtime_static)
EOF_CMAKE
  cmake_build() { # cmake_build <prefix> <build dir>
    cmake -S "$WORK/cmake-consumer" -B "$2" -DCMAKE_PREFIX_PATH="$1" -DCMAKE_C_COMPILER="$CC" &&
      cmake --build "$2"
  }
  B="$WORK/cmake-build"
  check "configure and build against $P" cmake_build "$P" "$B"
  cmake_needs_soname() { readelf -d "$B/prog-shared" | grep -q "(NEEDED).*\[$SONAME\]"; }
  check "biren::runtime: program needs $SONAME" cmake_needs_soname
  # CMake gives build-tree programs a run path to the imported library: no LD_LIBRARY_PATH.
  # (ldd's output is taken whole first: `ldd | grep -q` can fail on SIGPIPE under pipefail.)
  cmake_uses_installed() { local out; out="$(ldd "$B/prog-shared")"; grep -q "$SONAME => $L/$SONAME" <<< "$out"; }
  check "biren::runtime: resolves to the installed copy" cmake_uses_installed
  check "biren::runtime: run" "$B/prog-shared"
  cmake_static() { ! readelf -d "$B/prog-static" | grep -q "(NEEDED).*biren"; }
  check "biren::runtime_static: does not need libbiren_runtime" cmake_static
  check "biren::runtime_static: run" "$B/prog-static"

  # Relocatable: a copy of the prefix elsewhere finds its own files, not the original's.
  M="$WORK/moved/prefix"
  mkdir -p "$WORK/moved" && cp -a "$P" "$M"
  check "configure and build against a moved copy of the prefix" cmake_build "$M" "$WORK/cmake-moved"
  cmake_uses_moved() { local out; out="$(ldd "$WORK/cmake-moved/prog-shared")"; grep -q "$SONAME => $M/lib/$SONAME" <<< "$out"; }
  check "the moved copy's library is used" cmake_uses_moved
  check "run (moved)" "$WORK/cmake-moved/prog-shared"
  rm -rf "$WORK/moved"

  # Versions: 1.0 and 1.0...2.0 are accepted (above, and here); 2.0 and 0.9...0.99 are not.
  version_request() { # version_request <version spec> -> configure succeeds?
    local d="$WORK/cmake-version"
    rm -rf "$d" && mkdir -p "$d"
    printf 'cmake_minimum_required(VERSION 3.19)\nproject(v C)\nfind_package(biren_runtime %s REQUIRED)\n' "$1" > "$d/CMakeLists.txt"
    cmake -S "$d" -B "$d/build" -DCMAKE_PREFIX_PATH="$P" > "$d/log" 2>&1
  }
  check "find_package(biren_runtime 1.0...2.0) is accepted" version_request "1.0...2.0"
  version_refused() { ! version_request "$1" && grep -q "considered but not accepted" "$WORK/cmake-version/log"; }
  check "find_package(biren_runtime 2.0) is refused" version_refused 2.0
  check "find_package(biren_runtime 0.9...0.99) is refused" version_refused 0.9...0.99
fi

echo "== make uninstall PREFIX=$P"
check "make uninstall" "$MAKE" -s -C "$ROOT" uninstall PREFIX="$P"
nothing_left() { test -z "$(find "$P" -type f -o -type l)"; }
check "no file or link left" nothing_left

echo "== DESTDIR staging: make install DESTDIR=... PREFIX=/usr/local"
S="$WORK/stage"
check "make install" "$MAKE" -s -C "$ROOT" install DESTDIR="$S" PREFIX=/usr/local
staged() {
  local f
  for f in lib/libbiren_runtime.so.$VERSION lib/$SONAME lib/libbiren_runtime.so lib/libbiren_runtime.a \
           include/biren_runtime.h include/biren_vector_types.h lib/pkgconfig/biren_runtime.pc bin/biren-prof bin/biren-cc \
           lib/cmake/biren_runtime/biren_runtimeConfig.cmake lib/cmake/biren_runtime/biren_runtimeConfigVersion.cmake; do
    test -e "$S/usr/local/$f" || { echo "missing $S/usr/local/$f"; return 1; }
  done
  grep -qx 'prefix=/usr/local' "$S/usr/local/lib/pkgconfig/biren_runtime.pc"
}
check "files under DESTDIR, .pc names the final prefix" staged
sysroot_flags() { # pkgconf/pkg-config map the staged .pc's paths into the sysroot
  local flags
  flags="$(PKG_CONFIG_PATH="$S/usr/local/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$S" pkg-config --cflags --libs biren_runtime)"
  echo "$flags"
  [[ "$flags" == *"-I$S/usr/local/include"* && "$flags" == *"-L$S/usr/local/lib"* ]]
}
check "PKG_CONFIG_SYSROOT_DIR gives the staged paths" sysroot_flags
check "make uninstall" "$MAKE" -s -C "$ROOT" uninstall DESTDIR="$S" PREFIX=/usr/local
staged_gone() { test -z "$(find "$S" -type f -o -type l)"; }
check "no file or link left" staged_gone

echo "install_test: $PASSED passed, $FAILED failed"
test "$FAILED" -eq 0
