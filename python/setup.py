"""How the wheel is built (the metadata is in pyproject.toml).

setuptools-rust compiles the runtime library from the repository's Cargo.toml as a plain
cdylib (Binding.NoBinding: no Python module in it, the package loads it with ctypes) and copies
it into the package as biren/libbiren_runtime.so; the C header goes to biren/include/ for
compiling kernels. The wheel is tagged py3-none-<platform>: it holds no extension module, so any
Python 3 on the platform can use it.

Build it from this directory or with pip (`pip install ./python`, `pip wheel ./python`): the
Rust sources are outside it (../), so an sdist cannot build it. Cargo's output goes to
CARGO_TARGET_DIR if set (make test sets it, to rebuild incrementally), else ../target.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools_rust import Binding, RustExtension, Strip

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LIBRARY = "biren.libbiren_runtime"  # -> biren/libbiren_runtime.so
HEADER = os.path.join(REPO, "include", "biren_runtime.h")


class BuildExt(build_ext):
    """Names the library libbiren_runtime.so, not with the interpreter's extension-module
    suffix (.cpython-311-x86_64-linux-gnu.so): it is not a Python module."""

    def get_ext_filename(self, fullname):
        # get_ext_fullpath asks with the last component of the name, others with all of it.
        if fullname in (LIBRARY, LIBRARY.rsplit(".", 1)[1]):
            return os.path.join(*fullname.split(".")) + ".so"
        return super().get_ext_filename(fullname)


class BuildPy(build_py):
    """Adds the header, biren/include/biren_runtime.h (biren.get_include())."""

    def run(self):
        super().run()
        if not os.path.exists(HEADER):
            raise FileNotFoundError("%s: build the package from the repository" % HEADER)
        dest = os.path.join(self.build_lib, "biren", "include")
        os.makedirs(dest, exist_ok=True)
        shutil.copyfile(HEADER, os.path.join(dest, "biren_runtime.h"))


class BdistWheel(bdist_wheel):
    def get_tag(self):
        _python, _abi, platform = super().get_tag()
        return "py3", "none", platform


setup(
    rust_extensions=[
        RustExtension(
            LIBRARY,
            path=os.path.relpath(os.path.join(REPO, "Cargo.toml")),
            binding=Binding.NoBinding,
            strip=Strip.Debug,
        )
    ],
    cmdclass={"build_ext": BuildExt, "build_py": BuildPy, "bdist_wheel": BdistWheel},
    zip_safe=False,
)
