"""Python bindings (ctypes) for the BIREN Runtime, libbiren_runtime.

    import ctypes, biren
    mod = biren.load_module("./kernels.so")               # your C kernels, cc -shared -fPIC
    add = biren.Kernel(mod.vector_add, argtypes=(ctypes.c_void_p,) * 3 + (ctypes.c_int,))
    a, b = biren.DeviceBuffer.from_host(x), biren.DeviceBuffer.from_host(y)
    with biren.Stream() as s, biren.DeviceBuffer(x.nbytes) as c:
        add.launch((n + 255) // 256, 256, a, b, c, n, stream=s)
        ...
    result = c.to_numpy(x.dtype)

Failing calls raise BirenError (`.code`, `.name`, `.text`). The library is found through
BIREN_LIBRARY, the installed copy, or the build tree (see biren._library); `biren.lib()` gives
the raw ctypes functions, every export of include/biren_runtime.h declared.
"""

from ._library import Dim3, LibraryNotFoundError
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
    set_race_check,
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
    "set_race_check",
    "set_validator",
    "set_validator_callback",
    "shared_memory",
    "stream_priority_range",
    "sync_threads",
    "synchronize",
    "thread_idx",
]
