"""The examples in python/examples run and succeed."""

import os
import subprocess
import sys

from conftest import PYTHON_DIR


def test_vector_add_example():
    script = PYTHON_DIR / "examples" / "vector_add.py"
    r = subprocess.run(
        [sys.executable, str(script), "5000"],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5000 elements" in r.stdout and "all correct" in r.stdout
    assert "BIREN_ERROR_OUT_OF_BOUNDS" in r.stdout
