"""Control and device calls: init, devices, properties, synchronize, reset, validator."""

from __future__ import annotations

import ctypes
import threading
from ctypes import byref, c_int, c_size_t
from typing import Any, Callable, Optional, Tuple, Union

from . import _library
from .errors import ErrorCode, _raise_kernel_failure, check

PREEMPTIVE = 0  # birenSchedulePreemptive
COOPERATIVE = 1  # birenScheduleCooperative

_init_lock = threading.Lock()
_initialized = False
# Bumped by device_reset(): device memory allocated before a reset is gone, and its address may
# be handed out again, so DeviceBuffer objects from before must not free it.
_reset_epoch = [0]


def lib() -> _library.Library:
    """The loaded library with every export declared (`lib().birenMalloc(...)`)."""
    return _library.load()


def init() -> None:
    """birenInit: starts the runtime (idempotent). Called for you by everything that needs it."""
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if not _initialized:
            check(lib().birenInit(), "birenInit")
            _initialized = True


def runtime_version() -> int:
    """birenRuntimeGetVersion: 1000*major + 10*minor (works before init)."""
    v = c_int()
    check(lib().birenRuntimeGetVersion(byref(v)), "birenRuntimeGetVersion")
    return v.value


def device_count() -> int:
    init()
    n = c_int()
    check(lib().birenGetDeviceCount(byref(n)), "birenGetDeviceCount")
    return n.value


def set_device(device: int) -> None:
    """Makes `device` the calling thread's current device."""
    init()
    check(lib().birenSetDevice(device), "birenSetDevice")


def get_device() -> int:
    init()
    d = c_int()
    check(lib().birenGetDevice(byref(d)), "birenGetDevice")
    return d.value


class DeviceProperties:
    """birenGetDeviceProperties as plain attributes (name is a str, the arrays tuples)."""

    name: str
    totalGlobalMem: int
    sharedMemPerBlock: int
    maxThreadsPerBlock: int
    maxThreadsDim: Tuple[int, int, int]
    maxGridSize: Tuple[int, int, int]
    multiProcessorCount: int
    asyncEngineCount: int
    concurrentKernels: int
    streamPrioritiesSupported: int

    def __init__(self, prop: _library.DeviceProp) -> None:
        for field, *_ in _library.DeviceProp._fields_:
            value = getattr(prop, field)
            if field == "name":
                value = value.decode(errors="replace")
            elif isinstance(value, ctypes.Array):
                value = tuple(value)
            setattr(self, field, value)

    def __repr__(self) -> str:
        names = [f for f, *_ in _library.DeviceProp._fields_]
        fields = ", ".join("%s=%r" % (f, getattr(self, f)) for f in names)
        return "DeviceProperties(%s)" % fields


def device_properties(device: Optional[int] = None) -> DeviceProperties:
    init()
    if device is None:
        device = get_device()
    prop = _library.DeviceProp()
    check(lib().birenGetDeviceProperties(byref(prop), device), "birenGetDeviceProperties")
    return DeviceProperties(prop)


def synchronize() -> None:
    """birenDeviceSynchronize: waits for all work on the current device; raises its first
    asynchronous error, or the failure of a Python kernel."""
    from .stream import _release_all

    init()
    code = lib().birenDeviceSynchronize()
    if code != ErrorCode.NOT_PERMITTED:
        _release_all()
    _raise_kernel_failure()
    check(code, "birenDeviceSynchronize")


def device_reset() -> None:
    """birenDeviceReset: drops pending work, destroys the current device's streams and events
    and frees its memory (DeviceBuffer objects from before become unusable)."""
    from .stream import _release_all

    init()
    check(lib().birenDeviceReset(), "birenDeviceReset")
    _reset_epoch[0] += 1
    _release_all()
    _raise_kernel_failure()


def mem_get_info() -> Tuple[int, int]:
    """(free, total) bytes of the current device."""
    init()
    free, total = c_size_t(), c_size_t()
    check(lib().birenMemGetInfo(byref(free), byref(total)), "birenMemGetInfo")
    return free.value, total.value


def stream_priority_range() -> Tuple[int, int]:
    """(least, greatest) stream priority: (0, -5)."""
    init()
    least, greatest = c_int(), c_int()
    check(
        lib().birenDeviceGetStreamPriorityRange(byref(least), byref(greatest)),
        "birenDeviceGetStreamPriorityRange",
    )
    return least.value, greatest.value


def set_scheduling_policy(policy: int) -> None:
    """PREEMPTIVE (0) or COOPERATIVE (1), for the current device."""
    init()
    check(lib().birenDeviceSetSchedulingPolicy(int(policy)), "birenDeviceSetSchedulingPolicy")


def get_scheduling_policy() -> int:
    init()
    p = c_int()
    check(lib().birenDeviceGetSchedulingPolicy(byref(p)), "birenDeviceGetSchedulingPolicy")
    return p.value


def set_validator(enable: bool = True) -> None:
    """birenSetDeviceValidator: costly checks of every call, for debugging."""
    init()
    check(lib().birenSetDeviceValidator(1 if enable else 0), "birenSetDeviceValidator")


_validator_callback: Any = None  # the ctypes thunk must outlive its registration


def set_validator_callback(callback: Optional[Callable[[str], Any]]) -> None:
    """Sends validator lines to `callback(message: str)` instead of stderr; None restores
    stderr. The callback runs on any thread and must not call the runtime."""
    global _validator_callback
    init()
    if callback is None:
        thunk = _library.VALIDATOR_CALLBACK_T()
    else:

        def thunk_fn(message: bytes, _user_data: Optional[int]) -> None:
            try:
                callback(message.decode(errors="replace"))
            except Exception:  # an exception cannot cross into C
                pass

        thunk = _library.VALIDATOR_CALLBACK_T(thunk_fn)
    check(lib().birenSetValidatorCallback(thunk, None), "birenSetValidatorCallback")
    _validator_callback = thunk


def get_last_error() -> Union[ErrorCode, int]:
    """birenGetLastError: the calling thread's last error (an ErrorCode), reset to SUCCESS."""
    return _as_code(lib().birenGetLastError())


def peek_at_last_error() -> Union[ErrorCode, int]:
    return _as_code(lib().birenPeekAtLastError())


def _as_code(code: int) -> Union[ErrorCode, int]:
    try:
        return ErrorCode(code)
    except ValueError:
        return code


class PointerInfo:
    """birenPointerGetAttributes: type ("device", "host", "unregistered"), device, base, size."""

    TYPES = {0: "unregistered", 1: "host", 2: "device"}

    type: Union[str, int]
    device: int
    device_pointer: Optional[int]
    host_pointer: Optional[int]
    base: Optional[int]
    size: int

    def __init__(self, attrs: _library.PointerAttributes) -> None:
        self.type = self.TYPES.get(attrs.type, attrs.type)
        self.device = attrs.device
        self.device_pointer = attrs.devicePointer
        self.host_pointer = attrs.hostPointer
        self.base = attrs.basePointer
        self.size = attrs.size

    def __repr__(self) -> str:
        return "PointerInfo(type=%r, device=%d, base=%s, size=%d)" % (
            self.type,
            self.device,
            hex(self.base) if self.base else None,
            self.size,
        )


def pointer_attributes(ptr: Any) -> PointerInfo:
    init()
    attrs = _library.PointerAttributes()
    address = getattr(ptr, "ptr", ptr)
    check(lib().birenPointerGetAttributes(byref(attrs), address), "birenPointerGetAttributes")
    return PointerInfo(attrs)
