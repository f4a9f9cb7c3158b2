"""The type hints (PEP 484, py.typed) are complete and say what the code does: mypy --strict
passes on the package and on a program using it, and catches a program that misuses it."""

import os
import subprocess
import sys

import pytest

from conftest import PYTHON_DIR, REPO

pytest.importorskip("mypy")

GOOD = """
import ctypes
from typing import Optional, Tuple
import numpy as np
import biren

def run(x: "np.ndarray[Tuple[int], np.dtype[np.float32]]") -> float:
    with biren.Stream(priority=-1) as s, biren.Event() as a, biren.Event() as b:
        buf = biren.DeviceBuffer.from_numpy(x, stream=s)
        shape: Optional[Tuple[int, ...]] = buf.shape
        n: int = buf.nbytes
        a.record(s)
        k = biren.Kernel(lambda args: None, argtypes=(ctypes.c_void_p,))
        k.launch((1, 1), biren.Dim3(32), buf, stream=s)
        b.record(s)
        s.synchronize()
        ms: float = a.elapsed_time(b)
        free, total = biren.mem_get_info()
        code = biren.ErrorCode.OUT_OF_BOUNDS
        print(shape, n, free + total, code, buf.to_numpy(), biren.get_include())
        return ms
"""

BAD = """
import biren
s = biren.Stream()
ms: str = biren.Event().elapsed_time(s)
biren.DeviceBuffer("16")
"""


def mypy(tmp_path, *targets):
    cache = REPO / "build" / "mypy-cache"
    cmd = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), *targets]
    env = dict(os.environ, MYPYPATH=str(PYTHON_DIR))
    return subprocess.run(cmd, capture_output=True, text=True, cwd=str(tmp_path), env=env)


def test_the_package_is_fully_typed(tmp_path):
    r = mypy(tmp_path, "-p", "biren")
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_program_using_the_package_type_checks(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    r = mypy(tmp_path, "good.py")
    assert r.returncode == 0, r.stdout + r.stderr


def test_misuse_is_caught(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    r = mypy(tmp_path, "bad.py")
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    assert 'Argument 1 to "elapsed_time" of "Event" has incompatible type "Stream"' in out, out
    assert 'expression has type "float", variable has type "str"' in out, out
    assert 'Argument 1 to "DeviceBuffer" has incompatible type "str"' in out, out


def test_py_typed_marks_the_package():
    assert (PYTHON_DIR / "biren" / "py.typed").is_file()
