#!/usr/bin/env bash
# Checks for the system tools the build and the tests use beyond the Rust toolchain: a C
# compiler ($CC, default cc; cargo links with it too), pkg-config, and binutils' readelf, nm
# and strip. When some are missing and this runs as root on a system with apt-get, installs
# them (build-essential, pkg-config, binutils); otherwise says what to install and fails.
set -euo pipefail

CC="${CC:-cc}"
missing=()
for tool in "$CC" pkg-config readelf nm strip; do
  command -v "$tool" > /dev/null || missing+=("$tool")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get > /dev/null; then
  echo "system-tools: ${missing[*]} missing: installing build-essential pkg-config binutils" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential pkg-config binutils > /dev/null
  for tool in "${missing[@]}"; do
    command -v "$tool" > /dev/null || { echo "system-tools: $tool still missing" >&2; exit 1; }
  done
else
  echo "system-tools: missing ${missing[*]}: install a C compiler, pkg-config and binutils" >&2
  echo "  (Debian, Ubuntu: sudo apt-get install build-essential pkg-config binutils)" >&2
  exit 1
fi
