"""The README's Python first program works as written: its shell lines (compiling the kernel
against biren.get_include()) and first.py, run in a temporary directory against this tree."""

import os
import re
import subprocess
import sys

import pytest

from conftest import PYTHON_DIR, REPO

pytest.importorskip("numpy")


def section():
    text = (REPO / "README.md").read_text()
    start = text.index("**A first program.**")
    return text[start : text.index("\n## ", start)]


def test_the_readme_first_program_runs(tmp_path):
    blocks = re.findall(r"```(sh|python)\n(.*?)```", section(), flags=re.S)
    assert [kind for kind, _ in blocks] == ["sh", "python"]
    compile_kernel, program = blocks[0][1], blocks[1][1]
    (tmp_path / "python").symlink_to(PYTHON_DIR)  # the README runs from the checkout's root
    (tmp_path / "first.py").write_text(program)
    bin_dir = os.path.dirname(sys.executable)  # `python` is this interpreter
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])
    env["PYTHONPATH"] = str(PYTHON_DIR)
    r = subprocess.run(["bash", "-euc", compile_kernel], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "vector_add.so").is_file()
    r = subprocess.run([sys.executable, "first.py"], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    expected = (
        r"<biren\.DeviceBuffer shape=\(1000000,\) dtype=float32 nbytes=4000000 at 0x[0-9a-f]+>"
        r" in [0-9.]+ ms\n"
    )
    assert re.fullmatch(expected, r.stdout), r.stdout
