"""Kernels: C functions from a shared object the user compiled, or Python callables.

A C kernel is `void k(void **args)` as in the header; load its shared object with
load_module() (or ctypes.CDLL after `import biren`) and wrap `lib.k`:

    mod = biren.load_module("./kernels.so")
    add = biren.Kernel(mod.vector_add, argtypes=(c_void_p, c_void_p, c_void_p, c_int))
    add.launch(grid, block, a, b, c, n)          # or add[grid, block](a, b, c, n)

A Python callable becomes a kernel through a ctypes callback; every simulated thread calls
it, so it is slow, but it works. With `argtypes` it receives the decoded arguments (pointer
types as indexable ctypes pointers), without them the raw `void **args`. Inside, thread_idx(),
block_idx(), block_dim() and grid_dim() give the thread's position. sync_threads() and
trap() are not available to Python kernels (their block's threads share one interpreter
thread state); an exception raised by a Python kernel fails its launch: the next synchronize
raises KernelError (code LAUNCH_FAILURE) with the exception as its cause.
"""

from __future__ import annotations

import atexit
import ctypes
import threading
from ctypes import POINTER, addressof, c_bool, c_double, c_int64, c_size_t, c_void_p, sizeof
from typing import Any, Callable, Dict, Optional, Sequence, Set, Tuple, Union

from . import _library
from .device import init, lib
from .errors import BirenError, ErrorCode, _kernel_failed, _record_kernel_failure, check
from .memory import DeviceBuffer, HostBuffer, _numpy
from .stream import Stream, _handle, _keep

Dim3 = _library.Dim3
_CFuncPtr: Any = getattr(ctypes, "_CFuncPtr")  # the base of ctypes' function pointers
#: A grid or block size: an int, a tuple of 1 to 3 ints, or a Dim3.
DimLike = Union[int, Tuple[int], Tuple[int, int], Tuple[int, int, int], Sequence[int], Dim3]
_state = threading.local()

# A ctypes callback on a thread Python did not create makes a Python thread state and deletes it
# on return: ~40 us per call. A Python kernel is called once per simulated thread, always on the
# runtime's compute-unit threads, and never suspends inside the call (no barriers), so each such
# thread keeps one thread state for good: an extra PyGILState_Ensure, never released (~3 us).
_pinned_threads: Set[int] = set()


def _pin_thread_state() -> None:
    ident = threading.get_ident()
    if ident not in _pinned_threads:
        _pinned_threads.add(ident)
        ctypes.pythonapi.PyGILState_Ensure()


_python_kernel_launched = False


@atexit.register
def _drain() -> None:
    """At exit, let launched Python kernels finish before the interpreter is finalized (a
    callback into a finalizing interpreter would end the runtime's thread)."""
    if _python_kernel_launched:
        try:
            lib().birenDeviceSynchronize()
        except Exception:
            pass


def dim3(value: DimLike) -> Dim3:
    """A Dim3 from an int, a tuple of 1 to 3 ints, or a Dim3."""
    if isinstance(value, Dim3):
        return value
    if isinstance(value, int):
        return Dim3(value, 1, 1)
    t = tuple(value)
    if not 1 <= len(t) <= 3:
        raise ValueError("a dimension has 1 to 3 extents, got %r" % (value,))
    return Dim3(*(t + (1, 1))[:3])


def load_module(path: str) -> ctypes.CDLL:
    """Loads a shared object of kernels (ctypes.CDLL) after the runtime, so that kernels
    compiled with the header's inline built-ins find birenKernelContext."""
    _library.load()
    return ctypes.CDLL(path)


def _is_pointer_type(t: Any) -> bool:
    return t is c_void_p or issubclass(t, ctypes._Pointer)


def _to_ctype(value: Any, argtype: Any = None) -> Any:
    """The ctypes value passed for one kernel argument."""
    if isinstance(value, (DeviceBuffer, HostBuffer)):
        address = c_void_p(value.ptr)
        if argtype is None or argtype is c_void_p:
            return address
        if not _is_pointer_type(argtype):
            raise TypeError(
                "a %s is passed as a pointer, but the argtype is %s"
                % (type(value).__name__, argtype.__name__)
            )
        return ctypes.cast(address, argtype)
    if argtype is not None:
        if isinstance(value, argtype):
            return value
        np = _numpy()
        if np is not None and isinstance(value, np.generic):
            value = value.item()
        return argtype(value)
    if isinstance(
        value, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array, ctypes._Pointer)
    ):
        return value
    if value is None:
        return c_void_p(None)
    if isinstance(value, bool):
        return c_bool(value)
    if isinstance(value, int):
        return c_int64(value)
    if isinstance(value, float):
        return c_double(value)
    np = _numpy()
    if np is not None and isinstance(value, np.generic):
        return np.ctypeslib.as_ctypes_type(value.dtype)(value.item())
    raise TypeError("cannot pass %r to a kernel: give argtypes or a ctypes value" % (value,))


def _decoder(argtype: Any) -> Callable[[int], Any]:
    """Reads one argument of a Python kernel from the address of its value."""
    if issubclass(argtype, ctypes._SimpleCData):
        return lambda address: argtype.from_address(address).value
    decode: Callable[[int], Any] = argtype.from_address  # pointers, structures, arrays
    return decode


class Kernel:
    """A launchable kernel: a C function pointer (a ctypes function from a CDLL, or an address)
    or a Python callable. `argtypes` (ctypes types, one per argument) converts the launch
    arguments, registers the kernel (birenKernelRegister: its `name` shows in traces) and, for
    a Python kernel, decodes the arguments it receives."""

    argtypes: Optional[Tuple[Any, ...]]
    name: str
    python: bool

    def __init__(
        self, fn: Any, argtypes: Optional[Sequence[Any]] = None, name: Optional[str] = None
    ) -> None:
        init()
        self.argtypes = tuple(argtypes) if argtypes is not None else None
        self.func = fn
        if isinstance(fn, _CFuncPtr):
            self._fn = ctypes.cast(fn, _library.KERNEL_T)
            self.python = False
            default_name = getattr(fn, "__name__", None)
        elif isinstance(fn, int):
            self._fn = _library.KERNEL_T(fn)
            self.python = False
            default_name = None
        elif callable(fn):
            self._fn = _library.KERNEL_T(self._run_python)
            self.python = True
            default_name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
            self._decoders = None if self.argtypes is None else [_decoder(t) for t in self.argtypes]
        else:
            raise TypeError(
                "a kernel is a ctypes function, an address or a Python callable, got %r" % (fn,)
            )
        self.name = name or default_name or "kernel@%#x" % self.address
        if self.argtypes is not None:
            n = len(self.argtypes)
            sizes = (c_size_t * max(n, 1))(*[sizeof(t) for t in self.argtypes])
            check(
                lib().birenKernelRegister(self._fn, self.name.encode(), n, sizes),
                "birenKernelRegister",
            )

    @property
    def address(self) -> int:
        """The kernel's C function pointer (an int)."""
        return ctypes.cast(self._fn, c_void_p).value or 0

    def _run_python(self, args: Any) -> None:
        _pin_thread_state()
        if _kernel_failed():
            return  # an earlier thread failed: the launch is abandoned
        _state.in_python_kernel = True
        try:
            if self._decoders is None:
                self.func(args)
            else:
                self.func(*[d(args[i]) for i, d in enumerate(self._decoders)])
        except BaseException as e:  # nothing may cross back into the runtime
            _record_kernel_failure(self.name, e)
        finally:
            _state.in_python_kernel = False

    def launch(
        self,
        grid: DimLike,
        block: DimLike,
        *args: Any,
        shared_mem: int = 0,
        stream: Optional[Stream] = None,
    ) -> None:
        """birenLaunchKernelArgs: enqueues the kernel on `stream` (None: the default stream)
        with the argument values copied at launch."""
        if self.argtypes is not None:
            if len(args) != len(self.argtypes):
                raise TypeError(
                    "%s takes %d arguments, %d given" % (self.name, len(self.argtypes), len(args))
                )
            values = [_to_ctype(a, t) for a, t in zip(args, self.argtypes)]
        else:
            values = [_to_ctype(a) for a in args]
        n = len(values)
        pointers = (c_void_p * max(n, 1))(*[addressof(v) for v in values])
        sizes = (c_size_t * max(n, 1))(*[sizeof(v) for v in values])
        code = lib().birenLaunchKernelArgs(
            self._fn,
            dim3(grid),
            dim3(block),
            ctypes.cast(pointers, POINTER(c_void_p)),
            sizes,
            n,
            shared_mem,
            _handle(stream),
        )
        check(code, "birenLaunchKernelArgs")
        if self.python:
            global _python_kernel_launched
            _python_kernel_launched = True
            _keep(stream, self)  # the callback must outlive the launch

    def __getitem__(self, config: Tuple[Any, ...]) -> Callable[..., None]:
        """kernel[grid, block] or kernel[grid, block, shared_mem, stream], then call with args."""
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise TypeError("use kernel[grid, block] or kernel[grid, block, shared_mem, stream]")
        grid, block = config[0], config[1]
        shared_mem = config[2] if len(config) > 2 else 0
        stream = config[3] if len(config) > 3 else None
        return lambda *args: self.launch(grid, block, *args, shared_mem=shared_mem, stream=stream)

    def __repr__(self) -> str:
        return "<biren.Kernel %s (%s)>" % (self.name, "Python" if self.python else "C")


def kernel(*argtypes: Any, name: Optional[str] = None) -> Any:
    """Decorator: makes a Python function a Kernel. `@biren.kernel(POINTER(c_float), c_int)`
    decodes two arguments; `@biren.kernel` or `@biren.kernel()` passes the raw `void **args`."""
    if len(argtypes) == 1 and callable(argtypes[0]) and not isinstance(argtypes[0], type):
        return Kernel(argtypes[0], name=name)
    return lambda fn: Kernel(fn, argtypes=argtypes, name=name)


_python_kernels: Dict[Any, Kernel] = {}


def launch(
    fn: Any,
    grid: DimLike,
    block: DimLike,
    *args: Any,
    shared_mem: int = 0,
    stream: Optional[Stream] = None,
) -> None:
    """Launches a Kernel, a ctypes function from a CDLL, or a Python callable (wrapped once)."""
    if not isinstance(fn, Kernel):
        k = (
            _python_kernels.get(fn)
            if callable(fn) and not isinstance(fn, _CFuncPtr)
            else None
        )
        if k is None:
            k = Kernel(fn)
            if k.python:
                _python_kernels[fn] = k
        fn = k
    fn.launch(grid, block, *args, shared_mem=shared_mem, stream=stream)


# ---- built-ins, for Python kernels ----------------------------------------------------------


def thread_idx() -> Dim3:
    """birenThreadIdx(): the calling thread's index in its block (a Dim3: .x .y .z)."""
    d: Dim3 = lib().birenThreadIdx()
    return d


def block_idx() -> Dim3:
    """birenBlockIdx(): the calling thread's block index in the grid."""
    d: Dim3 = lib().birenBlockIdx()
    return d


def block_dim() -> Dim3:
    """birenBlockDim(): the block's dimensions."""
    d: Dim3 = lib().birenBlockDim()
    return d


def grid_dim() -> Dim3:
    """birenGridDim(): the grid's dimensions."""
    d: Dim3 = lib().birenGridDim()
    return d


def shared_memory() -> Optional[int]:
    """birenSharedMemory(): the address of the block's dynamic shared memory (None if none)."""
    p: Optional[int] = lib().birenSharedMemory()
    return p


def sync_threads() -> None:
    """Not available to Python kernels: raises BirenError(NOT_SUPPORTED) inside one (which
    fails the launch). Outside a kernel it does nothing, as birenSyncThreads."""
    if getattr(_state, "in_python_kernel", False):
        raise BirenError(
            ErrorCode.NOT_SUPPORTED,
            "sync_threads",
            "Python kernels cannot wait at a block barrier; write the kernel in C",
        )
    lib().birenSyncThreads()
