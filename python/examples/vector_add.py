#!/usr/bin/env python3
"""Runs a C kernel (vector_add.c, compiled here into a shared object) from Python.

    python3 python/examples/vector_add.py [n]

The runtime library is found through BIREN_LIBRARY, the package (pip install ./python), the
build tree, or the installed copy.
"""

import array
import ctypes
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the biren package of this tree, if not installed

import biren  # noqa: E402

try:
    import numpy as np
except ImportError:
    np = None


def build_kernels(out_dir):
    """cc -shared -fPIC vector_add.c, with the header of this tree (or pkg-config's)."""
    include = os.path.join(HERE, "..", "..", "include")
    if os.path.exists(os.path.join(include, "biren_runtime.h")):
        cflags = ["-I" + include]
    else:
        pkg = ["pkg-config", "--cflags", "biren_runtime"]
        cflags = subprocess.run(pkg, check=True, capture_output=True, text=True).stdout.split()
    so = os.path.join(out_dir, "vector_add.so")
    source = os.path.join(HERE, "vector_add.c")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", *cflags, "-o", so, source], check=True)
    return so


def host_arrays(n):
    """a = 0, 1, 2, ...; b = 2, 2, ...; c uninitialized: numpy arrays, else array.array."""
    if np is not None:
        return np.arange(n, dtype=np.float32), np.full(n, 2, np.float32), np.empty(n, np.float32)
    return array.array("f", range(n)), array.array("f", [2.0] * n), array.array("f", bytes(4 * n))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        module = biren.load_module(build_kernels(tmp))
    pointer = ctypes.c_void_p
    vector_add = biren.Kernel(module.vector_add, argtypes=(pointer, pointer, pointer, ctypes.c_int))
    print("device: %s, runtime %d" % (biren.device_properties().name, biren.runtime_version()))

    a, b, c = host_arrays(n)
    block = 256
    grid = (n + block - 1) // block
    with biren.Stream() as stream, biren.Event() as start, biren.Event() as stop:
        d_a = biren.DeviceBuffer.from_host(a, stream=stream)
        d_b = biren.DeviceBuffer.from_host(b, stream=stream)
        d_c = biren.DeviceBuffer(len(c) * 4)
        start.record(stream)
        vector_add.launch(grid, block, d_a, d_b, d_c, n, stream=stream)
        stop.record(stream)
        d_c.copy_to(c, stream=stream)
        stream.synchronize()
        print("kernel: %d blocks of %d threads, %.3f ms" % (grid, block, start.elapsed_time(stop)))
        for buf in (d_a, d_b, d_c):
            buf.free()

    wrong = sum(1 for x, y, z in zip(a, b, c) if x + y != z)
    print("vector_add: %d elements, %s" % (n, "all correct" if wrong == 0 else "%d wrong" % wrong))

    # Errors are exceptions carrying the BIREN code, name and text.
    try:
        with biren.DeviceBuffer(16) as small:
            small.copy_from(bytes(32))
    except biren.BirenError as e:
        print("as expected: %s (code %d): %s" % (e.name, e.code, e.text))
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
