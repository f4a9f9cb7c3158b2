"""BIREN error codes as Python exceptions."""

import enum
import threading

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
    COOPERATIVE_LAUNCH_TOO_LARGE = 30
    UNKNOWN = 999


def error_name(code):
    """The library's name for `code`, e.g. "BIREN_ERROR_OUT_OF_BOUNDS" (birenGetErrorName)."""
    return _library.load().birenGetErrorName(int(code)).decode()


def error_string(code):
    """The library's description of `code` (birenGetErrorString)."""
    return _library.load().birenGetErrorString(int(code)).decode()


class BirenError(Exception):
    """A BIREN call failed.

    `code` is the birenError_t (an ErrorCode when the value is known, else the int), `name` its
    C name ("BIREN_ERROR_..."), `text` the library's description, `call` the C function.
    """

    def __init__(self, code, call=None, detail=None):
        try:
            code = ErrorCode(code)
        except ValueError:
            code = int(code)
        self.code = code
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


class KernelError(BirenError):
    """A Python kernel raised: the launch counts as failed (code LAUNCH_FAILURE). The Python
    exception is the `__cause__`; `kernel` names the kernel. Reported at the next synchronizing
    call made through this package (a synchronize or a synchronous copy)."""

    def __init__(self, kernel, exc):
        self.kernel = kernel
        super().__init__(
            ErrorCode.LAUNCH_FAILURE,
            call="Python kernel %s" % kernel,
            detail="%s: %s" % (type(exc).__name__, exc),
        )


def check(code, call=None):
    """Raises BirenError unless `code` is BIREN_SUCCESS."""
    if code != 0:
        raise BirenError(code, call)


# A Python kernel cannot fail its launch through birenTrap (that would abandon the Python frames
# of the callback), so its first exception is kept here and raised at the next sync point.
_failure_lock = threading.Lock()
_failure = None


def _record_kernel_failure(kernel, exc):
    global _failure
    with _failure_lock:
        if _failure is None:
            _failure = (kernel, exc)


def _kernel_failed():
    return _failure is not None


def _raise_kernel_failure():
    """Raises (and clears) the failure of a Python kernel, if one failed since the last call."""
    global _failure
    if _failure is None:
        return
    with _failure_lock:
        failure, _failure = _failure, None
    if failure is not None:
        kernel, exc = failure
        raise KernelError(kernel, exc) from exc
