"""The installed wheel, as a user gets it. Run by `make test-wheel`:

    <fresh venv>/bin/python installed_wheel.py <fresh venv>

from an empty temporary directory, with no BIREN_LIBRARY and no PYTHONPATH, in a virtual
environment where nothing but the biren wheel is installed (not even numpy). Checks that biren
is imported from that venv and loads the library packaged in it, then runs the runtime: a copy
round trip, a C kernel compiled against the packaged header, and a Python kernel. Not a pytest
file (the venv has no pytest): each check prints a line, and the first failure exits 1.
"""

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

PASSED = []


def check(what, condition, detail=""):
    if not condition:
        print("  FAIL %s %s" % (what, detail), file=sys.stderr)
        sys.exit(1)
    PASSED.append(what)
    print("  ok   %s" % what)


def main():
    venv = os.path.realpath(sys.argv[1])
    check("no BIREN_LIBRARY", "BIREN_LIBRARY" not in os.environ)
    check("run outside the source tree", not os.path.exists(os.path.join(os.getcwd(), "biren")))
    check("nothing else installed (no numpy)", importlib.util.find_spec("numpy") is None)

    import biren

    package = os.path.realpath(os.path.dirname(biren.__file__))
    check("biren imported from the venv", package.startswith(venv + os.sep), package)
    library = os.path.realpath(biren.lib().path)
    check(
        "the packaged library is loaded",
        library == os.path.join(package, "libbiren_runtime.so"),
        library,
    )
    check("py.typed is installed", os.path.isfile(os.path.join(package, "py.typed")))
    include = os.path.realpath(biren.get_include())
    check(
        "get_include() is the packaged header's directory",
        include == os.path.join(package, "include")
        and os.path.isfile(os.path.join(include, "biren_runtime.h")),
        include,
    )
    check("runtime version", biren.runtime_version() == 1000, str(biren.runtime_version()))

    data = bytes(range(256)) * 256
    with biren.DeviceBuffer.from_host(data) as buf:
        check("a 64 KiB host->device->host round trip", buf.to_bytes() == data)

    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        check("a C compiler for the C kernel", False, cc)
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "scale.c")
        with open(source, "w") as f:
            f.write(
                "#include <biren_runtime.h>\n"
                "void scale(void **args) {\n"
                "  int *x = *(int **)args[0];\n"
                "  int n = *(int *)args[1], k = *(int *)args[2];\n"
                "  int i = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);\n"
                "  if (i < n) x[i] *= k;\n"
                "}\n"
            )
        so = os.path.join(tmp, "scale.so")
        subprocess.run([cc, "-shared", "-fPIC", "-O2", "-I", include, "-o", so, source], check=True)
        module = biren.load_module(so)
    scale = biren.Kernel(module.scale, argtypes=(ctypes.c_void_p, ctypes.c_int, ctypes.c_int))
    n = 1000
    host = (ctypes.c_int * n)(*range(n))
    with biren.Stream() as s, biren.DeviceBuffer(ctypes.sizeof(host)) as d:
        d.copy_from(host, stream=s)
        scale.launch((n + 127) // 128, 128, d, n, 3, stream=s)
        d.copy_to(host, stream=s)
        s.synchronize()
    check("a C kernel (packaged header) on a stream", list(host) == [3 * i for i in range(n)])

    @biren.kernel(ctypes.POINTER(ctypes.c_int), ctypes.c_int)
    def increment(x, count):
        i = biren.block_idx().x * biren.block_dim().x + biren.thread_idx().x
        if i < count:
            x[i] += 1

    with biren.DeviceBuffer(ctypes.sizeof(host)) as d:
        d.copy_from(host)
        increment.launch(4, 256, d, n)
        biren.synchronize()
        d.copy_to(host)
    check("a Python kernel", list(host) == [3 * i + 1 for i in range(n)])

    try:
        biren.DeviceBuffer(16).copy_from(bytes(32))
        raised = None
    except biren.BirenError as e:
        raised = e
    check(
        "errors raise BirenError",
        raised is not None and raised.name == "BIREN_ERROR_OUT_OF_BOUNDS",
        repr(raised),
    )
    print("installed wheel: %d passed, 0 failed" % len(PASSED))


if __name__ == "__main__":
    main()
