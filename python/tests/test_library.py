"""Loading the library: where it is looked for, and that every export is declared."""

import os
import re
import shutil
import subprocess
import sys

import biren
from biren import _library
from conftest import PYTHON_DIR, REPO


def header_functions():
    """Names of the functions include/biren_runtime.h declares (not its static inline helpers)."""
    text = (REPO / "include" / "biren_runtime.h").read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    names = set()
    for line in text.splitlines():
        line = line.strip()
        # Statements inside the header's inline helpers are not declarations.
        if re.match(r"#|(static|return|else|if|for|while|do|case|switch)\b", line):
            continue
        m = re.match(
            r"^(?:const\s+)?(?:(?:enum|struct|unsigned|signed|long|short)\s+)*\w+[\s\*]+(biren[A-Z]\w*)\s*\(",
            line,
        )
        if m:
            names.add(m.group(1))
    return names


def test_every_header_function_is_declared_with_a_prototype():
    declared = set(_library.PROTOTYPES)
    in_header = header_functions()
    assert len(in_header) > 40
    assert in_header - declared == set(), "declared in the header, missing in biren._library"
    assert declared - in_header == set(), "declared in biren._library, not in the header"


def test_every_declared_function_resolves_with_its_prototype():
    lib = biren.lib()
    for name, (restype, argtypes) in _library.PROTOTYPES.items():
        fn = getattr(lib, name)
        assert fn.restype is restype
        assert fn.argtypes == argtypes


def test_library_is_the_one_named_by_BIREN_LIBRARY():
    expected = os.environ.get("BIREN_LIBRARY")
    if expected:
        assert biren.lib().path == expected


def test_runtime_version_works_before_and_after_init():
    assert biren.runtime_version() == 1000
    biren.init()
    biren.init()  # idempotent
    assert biren.runtime_version() == 1000


def run_python(code, env):
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


def test_a_missing_BIREN_LIBRARY_says_where_it_looked(tmp_path):
    missing = str(tmp_path / "nowhere" / "libbiren_runtime.so")
    env = dict(os.environ, BIREN_LIBRARY=missing, PYTHONPATH=str(PYTHON_DIR))
    r = run_python("import biren; biren.device_count()", env)
    assert r.returncode != 0
    assert "LibraryNotFoundError" in r.stderr
    assert "BIREN_LIBRARY" in r.stderr and missing in r.stderr and "no such file" in r.stderr


def test_without_BIREN_LIBRARY_the_message_lists_every_place(tmp_path):
    # A copy of the package outside the tree: no build tree next to it.
    shutil.copytree(PYTHON_DIR / "biren", tmp_path / "pkg" / "biren")
    env = {k: v for k, v in os.environ.items() if k not in ("BIREN_LIBRARY", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(tmp_path / "pkg")
    r = run_python("import biren; print(biren.lib().path)", env)
    if r.returncode == 0:  # an installed copy exists on this machine: it was found
        assert "libbiren_runtime" in r.stdout
        return
    packaged = str(tmp_path / "pkg" / "biren" / "libbiren_runtime.so")
    build_tree = str(tmp_path / "target" / "release" / "libbiren_runtime.so")
    assert r.stderr.index(packaged) < r.stderr.index(build_tree) < r.stderr.index("loader's")
    for place in (
        "packaged",
        "loader's search",
        "/usr/local/lib/libbiren_runtime.so.1",
        "/usr/lib",
        "build tree",
        str(tmp_path / "target" / "release" / "libbiren_runtime.so"),
        "make install",
        "BIREN_LIBRARY",
    ):
        assert place in r.stderr, place


def test_importing_works_without_the_library(tmp_path):
    env = dict(os.environ, BIREN_LIBRARY=str(tmp_path / "missing.so"), PYTHONPATH=str(PYTHON_DIR))
    r = run_python("import biren; print(biren.ErrorCode.DEADLOCK.value)", env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "11"


def test_kernels_loaded_with_plain_ctypes_after_import_find_the_builtins(kernels_path):
    code = (
        "import ctypes, biren\n"
        "mod = ctypes.CDLL(%r)\n"
        "ids = biren.Kernel(mod.thread_ids, argtypes=(ctypes.c_void_p,))\n"
        "out = (ctypes.c_uint * 4)()\n"
        "with biren.DeviceBuffer(16) as d:\n"
        "    ids.launch(1, 4, d)\n"
        "    d.copy_to(out)\n"
        "print(list(out))\n" % str(kernels_path)
    )
    r = run_python(code, dict(os.environ, PYTHONPATH=str(PYTHON_DIR)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[0, 1, 2, 3]"


def test_calls_before_init_are_not_initialized():
    code = (
        "import ctypes, biren\n"
        "lib = biren.lib()\n"
        "p = ctypes.c_void_p()\n"
        "e = lib.birenMalloc(ctypes.byref(p), 16)\n"
        "print(biren.error_name(e))\n"
    )
    r = run_python(code, dict(os.environ, PYTHONPATH=str(PYTHON_DIR)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "BIREN_ERROR_NOT_INITIALIZED"


def _package_copy(tmp_path, with_library):
    """A copy of the package outside the tree, with a copy of the built library packaged in
    it (as the wheel has it) if `with_library`; returns the package's directory."""
    package = tmp_path / "pkg" / "biren"
    shutil.copytree(PYTHON_DIR / "biren", package)
    if with_library:
        shutil.copyfile(biren.lib().path, package / "libbiren_runtime.so")
    return package


def test_the_packaged_library_is_found_without_BIREN_LIBRARY(tmp_path):
    package = _package_copy(tmp_path, with_library=True)
    env = {k: v for k, v in os.environ.items() if k != "BIREN_LIBRARY"}
    env["PYTHONPATH"] = str(package.parent)
    code = "import biren; print(biren.lib().path); print(biren.device_count())"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    path, count = r.stdout.split()
    assert path == str(package / "libbiren_runtime.so") and int(count) >= 1


def test_BIREN_LIBRARY_overrides_the_packaged_library(tmp_path):
    package = _package_copy(tmp_path, with_library=True)
    other = tmp_path / "elsewhere" / "libbiren_runtime.so"
    other.parent.mkdir()
    shutil.copyfile(biren.lib().path, other)
    env = dict(os.environ, BIREN_LIBRARY=str(other), PYTHONPATH=str(package.parent))
    r = run_python("import biren; print(biren.lib().path)", env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(other)


def test_a_packaged_file_that_is_not_the_library_is_reported(tmp_path):
    package = _package_copy(tmp_path, with_library=False)
    (package / "libbiren_runtime.so").write_bytes(b"not an ELF file")
    env = {k: v for k, v in os.environ.items() if k not in ("BIREN_LIBRARY", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(package.parent)
    r = run_python("import biren; print(biren.lib().path)", env)
    if r.returncode == 0:  # an installed copy exists on this machine: it was found after
        assert r.stdout.strip() != str(package / "libbiren_runtime.so")
        return
    assert "packaged: %s" % (package / "libbiren_runtime.so") in r.stderr
    assert "invalid ELF header" in r.stderr or "file too short" in r.stderr


def test_get_include_gives_the_header_of_this_checkout():
    include = biren.get_include()
    assert include == str(REPO / "include")
    assert os.path.isfile(os.path.join(include, "biren_runtime.h"))
def test_exported_atomics_and_warp_calls_work_from_python():
    import ctypes

    lib = biren.lib()
    x = ctypes.c_int(5)
    assert lib.birenAtomicAddInt(ctypes.byref(x), 3) == 5 and x.value == 8
    assert lib.birenAtomicCASInt(ctypes.byref(x), 8, 1) == 8 and x.value == 1
    assert lib.birenAtomicIncUint(None, 1) == 0  # NULL: nothing, 0
    d = ctypes.c_double(1.5)
    assert lib.birenAtomicAddDouble(ctypes.byref(d), 0.25) == 1.5 and d.value == 1.75
    u = ctypes.c_ulonglong(10)
    assert lib.birenAtomicDecUll(ctypes.byref(u), 20) == 10 and u.value == 9
    # Outside a kernel the caller is a warp of one lane.
    assert lib.birenWarpExchange(None, 1, 1, 42, 0, 32) == 42
    assert lib.birenBallotSync(1, 1) == 1
    assert lib.birenLaneId() == 0
