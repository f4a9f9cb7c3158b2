"""Finding and loading libbiren_runtime, and the C types and prototypes of every export.

The library is looked for, in order:
  1. the path in the environment variable BIREN_LIBRARY (if set, nowhere else);
  2. the packaged copy: libbiren_runtime.so in this package's directory, where the wheel puts
     it (pip install ./python);
  3. the build tree: target/release (then target/debug) of the repository this package sits
     in (python/biren -> ../../target), for a checkout used with PYTHONPATH=python;
  4. the installed copy (make install): the dynamic loader's search
     (ctypes.util.find_library), then lib/ under common prefixes (/usr/local, /usr,
     sys.prefix, ~/.local, /opt/biren).
It is loaded with RTLD_GLOBAL, so that kernels compiled from C with the header's inline
built-ins (which call birenKernelContext) resolve against it without being linked to it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import sysconfig
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_float,
    c_int,
    c_size_t,
    c_uint,
    c_void_p,
)
from typing import Any, Dict, Iterator, List, Optional, Tuple

SONAME = "libbiren_runtime.so.1"
DEV_NAME = "libbiren_runtime.so"
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The repository, when the package is used from a checkout (python/biren).
REPOSITORY = os.path.dirname(os.path.dirname(PACKAGE_DIR))


class LibraryNotFoundError(OSError):
    """libbiren_runtime could not be loaded; the message lists every place that was tried."""


# ---- C types --------------------------------------------------------------------------------


class Dim3(Structure):
    """`dim3`: three unsigned extents. Compares equal to a tuple (x, y, z)."""

    _fields_ = [("x", c_uint), ("y", c_uint), ("z", c_uint)]

    x: int
    y: int
    z: int

    def __init__(self, x: int = 1, y: int = 1, z: int = 1) -> None:
        super().__init__(x, y, z)

    def __iter__(self) -> Iterator[int]:
        return iter((self.x, self.y, self.z))

    def __eq__(self, other: object) -> bool:
        try:
            return tuple(self) == tuple(other)  # type: ignore[arg-type]
        except TypeError:
            return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return "Dim3(%d, %d, %d)" % (self.x, self.y, self.z)


class DeviceProp(Structure):
    """`birenDeviceProp`."""

    _fields_ = [
        ("name", c_char * 256),
        ("totalGlobalMem", c_size_t),
        ("sharedMemPerBlock", c_size_t),
        ("maxThreadsPerBlock", c_int),
        ("maxThreadsDim", c_int * 3),
        ("maxGridSize", c_int * 3),
        ("multiProcessorCount", c_int),
        ("asyncEngineCount", c_int),
        ("concurrentKernels", c_int),
        ("streamPrioritiesSupported", c_int),
    ]


class PointerAttributes(Structure):
    """`birenPointerAttributes`."""

    _fields_ = [
        ("type", c_int),
        ("device", c_int),
        ("devicePointer", c_void_p),
        ("hostPointer", c_void_p),
        ("basePointer", c_void_p),
        ("size", c_size_t),
    ]


class KernelCtx(Structure):
    """`birenKernelCtx`: what the calling kernel thread sees."""

    _fields_ = [
        ("threadIdx", Dim3),
        ("blockIdx", Dim3),
        ("blockDim", Dim3),
        ("gridDim", Dim3),
        ("shared", c_void_p),
    ]


KERNEL_T = CFUNCTYPE(None, POINTER(c_void_p))  # birenKernel_t: void (*)(void **args)
HOST_FN_T = CFUNCTYPE(None, c_void_p)  # birenHostFn_t: void (*)(void *userData)
VALIDATOR_CALLBACK_T = CFUNCTYPE(None, c_char_p, c_void_p)  # birenValidatorCallback_t

_err = c_int  # birenError_t, and every enum, crosses as an int
_stream = c_void_p  # birenStream_t
_event = c_void_p  # birenEvent_t

# name: (restype, argtypes). Every export of include/biren_runtime.h.
PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    # control
    "birenInit": (_err, []),
    "birenDeviceReset": (_err, []),
    "birenDeviceSynchronize": (_err, []),
    "birenGetDeviceCount": (_err, [POINTER(c_int)]),
    "birenSetDevice": (_err, [c_int]),
    "birenGetDevice": (_err, [POINTER(c_int)]),
    "birenGetDeviceProperties": (_err, [POINTER(DeviceProp), c_int]),
    "birenDeviceGetStreamPriorityRange": (_err, [POINTER(c_int), POINTER(c_int)]),
    "birenDeviceSetSchedulingPolicy": (_err, [c_int]),
    "birenDeviceGetSchedulingPolicy": (_err, [POINTER(c_int)]),
    "birenRuntimeGetVersion": (_err, [POINTER(c_int)]),
    "birenGetErrorString": (c_char_p, [c_int]),
    "birenGetErrorName": (c_char_p, [c_int]),
    "birenGetLastError": (_err, []),
    "birenPeekAtLastError": (_err, []),
    "birenSetDeviceValidator": (_err, [c_int]),
    "birenSetValidatorCallback": (_err, [VALIDATOR_CALLBACK_T, c_void_p]),
    # events
    "birenEventCreate": (_err, [POINTER(_event)]),
    "birenEventCreateWithFlags": (_err, [POINTER(_event), c_uint]),
    "birenEventRecord": (_err, [_event, _stream]),
    "birenEventQuery": (_err, [_event]),
    "birenEventSynchronize": (_err, [_event]),
    "birenEventElapsedTime": (_err, [POINTER(c_float), _event, _event]),
    "birenEventDestroy": (_err, [_event]),
    # kernels
    "birenLaunchKernel": (_err, [KERNEL_T, Dim3, Dim3, POINTER(c_void_p), c_size_t, _stream]),
    "birenLaunchKernelArgs": (
        _err,
        [KERNEL_T, Dim3, Dim3, POINTER(c_void_p), POINTER(c_size_t), c_uint, c_size_t, _stream],
    ),
    "birenKernelRegister": (_err, [KERNEL_T, c_char_p, c_uint, POINTER(c_size_t)]),
    "birenKernelContext": (POINTER(KernelCtx), []),
    "birenThreadIdx": (Dim3, []),
    "birenBlockIdx": (Dim3, []),
    "birenBlockDim": (Dim3, []),
    "birenGridDim": (Dim3, []),
    "birenSharedMemory": (c_void_p, []),
    "birenSyncThreads": (None, []),
    "birenTrap": (None, []),
    # memory
    "birenMalloc": (_err, [POINTER(c_void_p), c_size_t]),
    "birenFree": (_err, [c_void_p]),
    "birenMallocHost": (_err, [POINTER(c_void_p), c_size_t]),
    "birenFreeHost": (_err, [c_void_p]),
    "birenMemcpy": (_err, [c_void_p, c_void_p, c_size_t, c_int]),
    "birenMemcpyAsync": (_err, [c_void_p, c_void_p, c_size_t, c_int, _stream]),
    "birenMemset": (_err, [c_void_p, c_int, c_size_t]),
    "birenMemsetAsync": (_err, [c_void_p, c_int, c_size_t, _stream]),
    "birenMemGetInfo": (_err, [POINTER(c_size_t), POINTER(c_size_t)]),
    "birenPointerGetAttributes": (_err, [POINTER(PointerAttributes), c_void_p]),
    # streams
    "birenStreamCreate": (_err, [POINTER(_stream)]),
    "birenStreamCreateWithFlags": (_err, [POINTER(_stream), c_uint]),
    "birenStreamCreateWithPriority": (_err, [POINTER(_stream), c_uint, c_int]),
    "birenStreamDestroy": (_err, [_stream]),
    "birenStreamSynchronize": (_err, [_stream]),
    "birenStreamQuery": (_err, [_stream]),
    "birenStreamGetPriority": (_err, [_stream, POINTER(c_int)]),
    "birenStreamGetFlags": (_err, [_stream, POINTER(c_uint)]),
    "birenStreamWaitEvent": (_err, [_stream, _event]),
    "birenLaunchHostFunc": (_err, [_stream, HOST_FN_T, c_void_p]),
}

# Calls that never block and never call back into Python: bound through a PyDLL handle so that
# they keep the GIL (a Python kernel calls the built-ins once per thread; releasing and taking
# the GIL around each would make the compute units fight over it).
NO_GIL_RELEASE = (
    "birenThreadIdx",
    "birenBlockIdx",
    "birenBlockDim",
    "birenGridDim",
    "birenSharedMemory",
    "birenKernelContext",
    "birenGetErrorName",
    "birenGetErrorString",
    "birenGetLastError",
    "birenPeekAtLastError",
    "birenRuntimeGetVersion",
)


class Library:
    """The loaded library: `lib.birenMalloc(...)` etc. with prototypes declared; `path`."""

    path: str

    def __init__(self, path: str) -> None:
        mode = getattr(os, "RTLD_GLOBAL", ctypes.RTLD_GLOBAL) | getattr(os, "RTLD_NOW", 2)
        self.path = path
        self.cdll = ctypes.CDLL(path, mode=mode)
        self.pydll = ctypes.PyDLL(path, mode=mode)
        for name, (restype, argtypes) in PROTOTYPES.items():
            handle = self.pydll if name in NO_GIL_RELEASE else self.cdll
            try:
                fn = getattr(handle, name)
            except AttributeError:
                raise LibraryNotFoundError(
                    "%s is not a usable BIREN runtime library: it does not export %s" % (path, name)
                ) from None
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)

    # The exports are attributes set above; this tells type checkers they exist (Any).
    def __getattr__(self, name: str) -> Any:
        raise AttributeError("%s is not an export of the BIREN runtime" % name)

    def __repr__(self) -> str:
        return "<biren.Library %s>" % self.path


def _common_prefixes() -> List[str]:
    prefixes = ["/usr/local", "/usr", sys.prefix, os.path.expanduser("~/.local"), "/opt/biren"]
    seen = []
    for p in prefixes:
        if p and p not in seen:
            seen.append(p)
    return seen


def _lib_dirs(prefix: str) -> List[str]:
    dirs = [os.path.join(prefix, "lib"), os.path.join(prefix, "lib64")]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        dirs.append(os.path.join(prefix, "lib", multiarch))
    return dirs


def candidates() -> List[Tuple[str, Optional[str]]]:
    """The places to look, in order: (description, path or file name; None: not found)."""
    env = os.environ.get("BIREN_LIBRARY")
    if env:
        return [("BIREN_LIBRARY", env)]
    found: List[Tuple[str, Optional[str]]] = [("packaged", os.path.join(PACKAGE_DIR, DEV_NAME))]
    for profile in ("release", "debug"):
        found.append(("build tree", os.path.join(REPOSITORY, "target", profile, DEV_NAME)))
    # None when the loader's cache does not know the library.
    found.append(("installed (loader's search)", ctypes.util.find_library("biren_runtime")))
    for prefix in _common_prefixes():
        for d in _lib_dirs(prefix):
            for f in (SONAME, DEV_NAME):
                found.append(("installed under " + prefix, os.path.join(d, f)))
    return found


def get_include() -> str:
    """The directory holding biren_runtime.h, to compile kernels (`cc -I...`): the header
    packaged with the wheel, else the repository's include/ for a checkout."""
    for d in (os.path.join(PACKAGE_DIR, "include"), os.path.join(REPOSITORY, "include")):
        if os.path.isfile(os.path.join(d, "biren_runtime.h")):
            return d
    raise FileNotFoundError(
        "biren_runtime.h is neither packaged in %s nor in a repository at %s"
        % (PACKAGE_DIR, REPOSITORY)
    )


_lock = threading.Lock()
_library: Optional[Library] = None


def load() -> Library:
    """Loads the library once (see the module docstring for where it looks) and returns it."""
    global _library
    if _library is not None:
        return _library
    with _lock:
        if _library is not None:
            return _library
        tried = []
        for what, path in candidates():
            if path is None:
                tried.append("  %s: not found" % what)
                continue
            if os.sep in path and not os.path.exists(path):
                tried.append("  %s: %s (no such file)" % (what, path))
                continue
            try:
                _library = Library(path)
                return _library
            except OSError as e:
                tried.append("  %s: %s (%s)" % (what, path, e))
        raise LibraryNotFoundError(
            "cannot load the BIREN runtime library %s. Looked in:\n%s\n"
            "Set BIREN_LIBRARY to the library's path, install it (make install PREFIX=...), "
            "or build it (make lib)." % (DEV_NAME, "\n".join(tried))
        )
