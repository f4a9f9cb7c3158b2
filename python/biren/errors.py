"""BIREN error codes as Python exceptions."""

from __future__ import annotations

import enum
import threading
from typing import Optional, Tuple, Union

from . import _library


class ErrorCode(enum.IntEnum):
    """`birenError_t`. Values are those of the C header (stable, never reused)."""

    SUCCESS = 0
    INVALID_VALUE = 1
    OUT_OF_MEMORY = 2
    NOT_INITIALIZED = 3
    INVALID_DEVICE = 4
    INVALID_HANDLE = 5
    INVALID_DEVICE_POINTER = 6
    OUT_OF_BOUNDS = 7
    INVALID_MEMCPY_DIRECTION = 8
    INVALID_CONFIGURATION = 9
    NOT_READY = 10
    DEADLOCK = 11
    LAUNCH_FAILURE = 12
    ILLEGAL_ADDRESS = 13
    NOT_PERMITTED = 14
    NOT_SUPPORTED = 15
    UNSUPPORTED_LIMIT = 16
    INVALID_PITCH_VALUE = 17
    INVALID_SYMBOL = 18
    HOST_MEMORY_ALREADY_REGISTERED = 19
    HOST_MEMORY_NOT_REGISTERED = 20
    INVALID_DEVICE_FUNCTION = 21
    PEER_ACCESS_ALREADY_ENABLED = 22
    PEER_ACCESS_NOT_ENABLED = 23
    LAUNCH_TIMEOUT = 24
    COOPERATIVE_LAUNCH_TOO_LARGE = 30
    INVALID_CHANNEL_DESCRIPTOR = 31
    ASSERT = 32
    UNKNOWN = 999


def error_name(code: int) -> str:
    """The library's name for `code`, e.g. "BIREN_ERROR_OUT_OF_BOUNDS" (birenGetErrorName)."""
    name: bytes = _library.load().birenGetErrorName(int(code))
    return name.decode()


def error_string(code: int) -> str:
    """The library's description of `code` (birenGetErrorString)."""
    text: bytes = _library.load().birenGetErrorString(int(code))
    return text.decode()


class BirenError(Exception):
    """A BIREN call failed.

    `code` is the birenError_t (an ErrorCode when the value is known, else the int), `name` its
    C name ("BIREN_ERROR_..."), `text` the library's description, `call` the C function.
    """

    code: Union[ErrorCode, int]
    call: Optional[str]
    name: str
    text: str

    def __init__(self, code: int, call: Optional[str] = None, detail: Optional[str] = None) -> None:
        value: Union[ErrorCode, int]
        try:
            value = ErrorCode(code)
        except ValueError:
            value = int(code)
        self.code = value
        code = value
        self.call = call
        try:
            self.name = error_name(code)
            self.text = error_string(code)
        except OSError:  # the library is not loadable: still a usable exception
            self.name = "BIREN_ERROR_%s" % getattr(code, "name", code)
            self.text = ""
        message = "%s (%d): %s" % (self.name, int(code), self.text)
        if call:
            message = "%s: %s" % (call, message)
        if detail:
            message = "%s (%s)" % (message, detail)
        super().__init__(message)

    def __repr__(self) -> str:
        code = self.code.name if isinstance(self.code, ErrorCode) else self.code
        return "%s(%s, call=%r)" % (type(self).__name__, code, self.call)


class KernelError(BirenError):
    """A Python kernel raised: the launch counts as failed (code LAUNCH_FAILURE). The Python
    exception is the `__cause__`; `kernel` names the kernel. Reported at the next synchronizing
    call made through this package (a synchronize or a synchronous copy)."""

    kernel: str

    def __init__(self, kernel: str, exc: BaseException) -> None:
        self.kernel = kernel
        super().__init__(
            ErrorCode.LAUNCH_FAILURE,
            call="Python kernel %s" % kernel,
            detail="%s: %s" % (type(exc).__name__, exc),
        )

    def __repr__(self) -> str:
        return "KernelError(kernel=%r, cause=%r)" % (self.kernel, self.__cause__)


def check(code: int, call: Optional[str] = None) -> None:
    """Raises BirenError unless `code` is BIREN_SUCCESS."""
    if code != 0:
        raise BirenError(code, call)


# A Python kernel cannot fail its launch through birenTrap (that would abandon the Python frames
# of the callback), so its first exception is kept here and raised at the next sync point.
_failure_lock = threading.Lock()
_failure: Optional[Tuple[str, BaseException]] = None


def _record_kernel_failure(kernel: str, exc: BaseException) -> None:
    global _failure
    with _failure_lock:
        if _failure is None:
            _failure = (kernel, exc)


def _kernel_failed() -> bool:
    return _failure is not None


def _raise_kernel_failure() -> None:
    """Raises (and clears) the failure of a Python kernel, if one failed since the last call."""
    global _failure
    if _failure is None:
        return
    with _failure_lock:
        failure, _failure = _failure, None
    if failure is not None:
        kernel, exc = failure
        raise KernelError(kernel, exc) from exc
