#!/usr/bin/env bash
# Checks for the system tools the build and the tests use beyond the Rust toolchain: a C
# compiler ($CC, default cc; cargo links with it too), pkg-config, and binutils' readelf, nm
# and strip; and libclang with its headers, which biren-cc (tools/biren-cc) loads to read C and
# C++. When some are missing and this runs as root on a system with apt-get, installs them
# (build-essential, pkg-config, binutils, libclang-dev); otherwise says what to install and fails.
set -euo pipefail

CC="${CC:-cc}"
missing=()
for tool in "$CC" pkg-config readelf nm strip; do
  command -v "$tool" > /dev/null || missing+=("$tool")
done
# libclang: the versioned library clang-sys finds, and clang's own headers (stddef.h, ...).
has_libclang() {
  local lib=0 inc=0 f
  for f in /usr/lib/llvm-*/lib/libclang.so* /usr/lib/*/libclang-*.so* /usr/lib/libclang.so*; do [ -e "$f" ] && lib=1; done
  for f in /usr/lib/llvm-*/lib/clang/*/include; do [ -d "$f" ] && inc=1; done
  [ $lib = 1 ] && [ $inc = 1 ]
}
[ -n "${LIBCLANG_PATH:-}" ] || has_libclang || missing+=(libclang)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get > /dev/null; then
  echo "system-tools: ${missing[*]} missing: installing build-essential pkg-config binutils libclang-dev" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential pkg-config binutils libclang-dev > /dev/null
  for tool in "${missing[@]}"; do
    [ "$tool" = libclang ] && { has_libclang || { echo "system-tools: libclang still missing" >&2; exit 1; }; continue; }
    command -v "$tool" > /dev/null || { echo "system-tools: $tool still missing" >&2; exit 1; }
  done
else
  echo "system-tools: missing ${missing[*]}: install a C compiler, pkg-config, binutils and libclang" >&2
  echo "  (Debian, Ubuntu: sudo apt-get install build-essential pkg-config binutils libclang-dev)" >&2
  exit 1
fi
