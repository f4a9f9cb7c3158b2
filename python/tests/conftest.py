"""Fixtures: the package from this tree, and C kernels compiled at test time (cc -shared -fPIC):
the ones below plus vector_add from python/examples/vector_add.c."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
REPO = PYTHON_DIR.parent
sys.path.insert(0, str(PYTHON_DIR))

import biren  # noqa: E402

KERNELS_C = r"""
#define _DEFAULT_SOURCE
#include <biren_runtime.h>
#include <unistd.h>

/* out[blockIdx.x] = sum of the block's slice of in: shared memory and barriers */
void block_sum(void **args) {
  const int *in = *(const int **)args[0];
  int *out = *(int **)args[1];
  int *sh = (int *)birenSharedMemory();
  unsigned t = birenThreadIdx().x, n = birenBlockDim().x;
  sh[t] = in[birenBlockIdx().x * n + t];
  birenSyncThreads();
  for (unsigned s = n / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    birenSyncThreads();
  }
  if (t == 0) out[birenBlockIdx().x] = sh[0];
}

/* thread 3 of block 0 traps: the launch fails with BIREN_ERROR_LAUNCH_FAILURE */
void trap_kernel(void **args) {
  (void)args;
  if (birenBlockIdx().x == 0 && birenThreadIdx().x == 3) birenTrap();
}

/* thread 0 sleeps `ms` milliseconds, then every thread writes p[i] = value */
void slow_fill(void **args) {
  int *p = *(int **)args[0];
  int value = *(int *)args[1];
  int ms = *(int *)args[2];
  unsigned i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  if (i == 0) usleep((useconds_t)ms * 1000u);
  p[i] = value;
}

/* out[linear thread id] = x | y << 8 | z << 16 of the thread index, for a 3-D block of one block */
void thread_ids(void **args) {
  unsigned *out = *(unsigned **)args[0];
  dim3 t = birenThreadIdx(), d = birenBlockDim();
  out[(t.z * d.y + t.y) * d.x + t.x] = t.x | t.y << 8 | t.z << 16;
}
"""


def _compile(tmp_dir, name, extra):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip("no C compiler (%s) to build the test kernels" % cc)
    src = tmp_dir / "kernels.c"
    src.write_text(KERNELS_C)
    out = tmp_dir / name
    flags = ["-shared", "-fPIC", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror"]
    include = ["-I", str(REPO / "include")]
    sources = [str(src), str(PYTHON_DIR / "examples" / "vector_add.c")]
    cmd = [cc, *flags, *include, *extra, "-o", str(out), *sources]
    subprocess.run(cmd, check=True)
    return out


@pytest.fixture(scope="session")
def kernels_path(tmp_path_factory):
    """A kernel .so using the header's inline built-ins (they call birenKernelContext)."""
    return _compile(tmp_path_factory.mktemp("kernels"), "kernels.so", [])


@pytest.fixture(scope="session")
def kernels(kernels_path):
    return biren.load_module(str(kernels_path))


@pytest.fixture(scope="session")
def kernels_exported(tmp_path_factory):
    """The same kernels calling the library's exported built-ins (birenThreadIdx, ...)."""
    path = _compile(
        tmp_path_factory.mktemp("kernels_exported"),
        "kernels_exported.so",
        ["-DBIREN_NO_INLINE_BUILTINS"],
    )
    return biren.load_module(str(path))
