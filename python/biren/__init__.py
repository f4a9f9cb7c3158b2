"""Python bindings (ctypes) for the BIREN Runtime, libbiren_runtime.

    import ctypes, numpy as np, biren
    mod = biren.load_module("./kernels.so")   # your C kernels: cc -shared -fPIC -I<get_include()>
    add = biren.Kernel(mod.vector_add, argtypes=(ctypes.c_void_p,) * 3 + (ctypes.c_int,))
    x = np.arange(n, dtype=np.float32)
    with biren.Stream() as s, biren.DeviceBuffer.from_numpy(x) as a, \
            biren.DeviceBuffer.empty(n, np.float32) as c:
        add.launch((n + 255) // 256, 256, a, a, c, n, stream=s)
        s.synchronize()
        result = c.to_numpy()                  # float32, shape (n,)

Failing calls raise BirenError (`.code`, `.name`, `.text`). The library is found through
BIREN_LIBRARY, the copy packaged in the wheel, the build tree of a checkout, or the installed
copy (see biren._library); `biren.lib()` gives the raw ctypes functions, every export of
include/biren_runtime.h declared; `biren.get_include()` the directory of the header.
"""

from ._library import Dim3, LibraryNotFoundError, get_include
from .device import (
    COOPERATIVE,
    PREEMPTIVE,
    DeviceProperties,
    PointerInfo,
    device_count,
    device_properties,
    device_reset,
    get_device,
    get_last_error,
    get_scheduling_policy,
    init,
    lib,
    mem_get_info,
    peek_at_last_error,
    pointer_attributes,
    runtime_version,
    set_device,
    set_scheduling_policy,
    set_validator,
    set_validator_callback,
    stream_priority_range,
    synchronize,
)
from .errors import BirenError, ErrorCode, KernelError, check, error_name, error_string
from .kernel import (
    Kernel,
    block_dim,
    block_idx,
    dim3,
    grid_dim,
    kernel,
    launch,
    load_module,
    shared_memory,
    sync_threads,
    thread_idx,
)
from .memory import DeviceBuffer, HostBuffer
from .stream import Event, Stream

__version__ = "1.0.0"

# Load the library now, so that kernels the user loads with plain ctypes.CDLL find the
# built-ins (birenKernelContext) it exports globally. If it cannot be found, the import still
# works and the first call raises LibraryNotFoundError, listing where it looked.
try:
    lib()
except LibraryNotFoundError:
    pass

__all__ = [
    "COOPERATIVE",
    "PREEMPTIVE",
    "BirenError",
    "DeviceBuffer",
    "DeviceProperties",
    "Dim3",
    "ErrorCode",
    "Event",
    "HostBuffer",
    "Kernel",
    "KernelError",
    "LibraryNotFoundError",
    "PointerInfo",
    "Stream",
    "block_dim",
    "block_idx",
    "check",
    "device_count",
    "device_properties",
    "device_reset",
    "dim3",
    "error_name",
    "error_string",
    "get_device",
    "get_include",
    "get_last_error",
    "get_scheduling_policy",
    "grid_dim",
    "init",
    "kernel",
    "launch",
    "lib",
    "load_module",
    "mem_get_info",
    "peek_at_last_error",
    "pointer_attributes",
    "runtime_version",
    "set_device",
    "set_scheduling_policy",
    "set_validator",
    "set_validator_callback",
    "shared_memory",
    "stream_priority_range",
    "sync_threads",
    "synchronize",
    "thread_idx",
]
