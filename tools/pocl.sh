#!/usr/bin/env bash
# What `make bench-pocl` needs beyond the build: an OpenCL loader and headers to build
# bench/peer/pocl_host.c against, and PoCL's CPU device to run it on. When some is missing and
# this runs as root on a system with apt-get, installs them (Debian, Ubuntu: pocl-opencl-icd
# ocl-icd-opencl-dev clinfo, about 45 MB with clang); otherwise says what to install and fails.
# Only the bench targets call it, never `make test`.
set -euo pipefail

CC="${CC:-cc}"
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT

# Whether a program using OpenCL builds, and a PoCL ICD is registered.
have() {
  printf '#include <CL/cl.h>\nint main(void) { cl_uint n; return (int)clGetPlatformIDs(0, 0, &n); }\n' >"$probe/p.c"
  "$CC" -DCL_TARGET_OPENCL_VERSION=120 -o "$probe/p" "$probe/p.c" -lOpenCL >/dev/null 2>&1 || return 1
  ls /etc/OpenCL/vendors/*pocl*.icd >/dev/null 2>&1
}
have && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "pocl: PoCL or the OpenCL headers missing: installing pocl-opencl-icd ocl-icd-opencl-dev clinfo" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pocl-opencl-icd ocl-icd-opencl-dev clinfo >/dev/null
  have || { echo "pocl: still missing after the install" >&2; exit 1; }
else
  echo "pocl: make bench-pocl needs PoCL and the OpenCL headers and loader" >&2
  echo "  (Debian, Ubuntu: sudo apt-get install --no-install-recommends pocl-opencl-icd ocl-icd-opencl-dev clinfo)" >&2
  exit 1
fi
