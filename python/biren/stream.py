"""Streams and events, as context managers.

Asynchronous work keeps Python objects alive that the device reads later (the host side of an
asynchronous copy, a Python kernel's callback, a host function). They are held here, per
stream, until a synchronize proves the work done: Stream.synchronize releases the stream's,
biren.synchronize() and device_reset() release all.
"""

from __future__ import annotations

import threading
from ctypes import byref, c_float, c_int, c_uint, c_void_p
from typing import Any, Callable, Dict, List, Optional

from . import _library
from .device import init, lib
from .errors import BirenError, ErrorCode, _raise_kernel_failure, check

NON_BLOCKING = 1  # birenStreamNonBlocking
EVENT_BLOCKING_SYNC = 1  # birenEventBlockingSync
EVENT_DISABLE_TIMING = 2  # birenEventDisableTiming

_keep_lock = threading.Lock()
_kept: Dict[Optional[int], List[Any]] = {}  # stream handle (None: the default stream) -> [objects]


def _keep(stream: Optional["Stream"], *objects: Any) -> None:
    handle = _handle(stream)
    with _keep_lock:
        _kept.setdefault(handle, []).extend(objects)


def _release(handle: Optional[int]) -> None:
    with _keep_lock:
        _kept.pop(handle, None)


def _release_all() -> None:
    with _keep_lock:
        _kept.clear()


def _handle(stream: Optional["Stream"]) -> Optional[int]:
    """The birenStream_t of a Stream or None (the default stream)."""
    if stream is None:
        return None
    if isinstance(stream, Stream):
        return stream.handle
    raise TypeError("expected a biren.Stream or None, got %r" % (stream,))


class Stream:
    """An in-order queue of work (birenStreamCreateWithPriority).

    `with Stream() as s:` synchronizes and destroys the stream on exit. Priorities run from 0
    (least urgent, the default) to -5 (most urgent); `non_blocking=True` exempts the stream from
    the default stream's ordering.
    """

    _handle: Optional[int]

    def __init__(
        self, priority: int = 0, non_blocking: bool = False, flags: Optional[int] = None
    ) -> None:
        init()
        if flags is None:
            flags = NON_BLOCKING if non_blocking else 0
        self._flags = flags
        h = c_void_p()
        check(
            lib().birenStreamCreateWithPriority(byref(h), flags, priority),
            "birenStreamCreateWithPriority",
        )
        self._handle = h.value

    @property
    def handle(self) -> int:
        """The birenStream_t (an int). Raises BirenError(INVALID_HANDLE) once destroyed."""
        if self._handle is None:
            raise BirenError(ErrorCode.INVALID_HANDLE, "Stream", "the stream was destroyed")
        return self._handle

    @property
    def _as_parameter_(self) -> c_void_p:  # lets the object be passed to the raw ctypes functions
        return c_void_p(self.handle)

    def synchronize(self) -> None:
        """Waits for all work in the stream; raises its device's asynchronous error."""
        h = self.handle
        code = lib().birenStreamSynchronize(h)
        if code != ErrorCode.NOT_PERMITTED:
            _release(h)
        _raise_kernel_failure()
        check(code, "birenStreamSynchronize")

    def query(self) -> bool:
        """True if all work enqueued so far has completed (birenStreamQuery)."""
        code = lib().birenStreamQuery(self.handle)
        if code == ErrorCode.NOT_READY:
            return False
        check(code, "birenStreamQuery")
        return True

    @property
    def priority(self) -> int:
        """The stream's priority (as clamped by the runtime: 0 to -5)."""
        p = c_int()
        check(lib().birenStreamGetPriority(self.handle, byref(p)), "birenStreamGetPriority")
        return p.value

    @property
    def flags(self) -> int:
        """birenStreamNonBlocking (1) or 0."""
        f = c_uint()
        check(lib().birenStreamGetFlags(self.handle, byref(f)), "birenStreamGetFlags")
        return f.value

    def wait_event(self, event: "Event") -> None:
        """Later work in this stream waits for the event's latest record (birenStreamWaitEvent)."""
        check(lib().birenStreamWaitEvent(self.handle, event.handle), "birenStreamWaitEvent")

    def record(self, event: Optional["Event"] = None) -> "Event":
        """Records `event` (a new Event if None) in this stream and returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def launch_host_func(self, fn: Callable[[], Any]) -> None:
        """Runs `fn()` on a runtime thread after all earlier work in the stream
        (birenLaunchHostFunc). Exceptions in fn are printed, not raised."""

        def thunk_fn(_user_data: Optional[int]) -> None:
            fn()

        thunk = _library.HOST_FN_T(thunk_fn)
        check(lib().birenLaunchHostFunc(self.handle, thunk, None), "birenLaunchHostFunc")
        _keep(self, thunk)

    def destroy(self) -> None:
        """birenStreamDestroy: returns at once; pending work still completes. Idempotent."""
        h, self._handle = self._handle, None
        if h is not None:
            check(lib().birenStreamDestroy(h), "birenStreamDestroy")

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        """Synchronizes (raising the stream's error unless an exception is already on its way),
        then destroys the stream."""
        h, self._handle = self._handle, None
        if h is None:
            return
        code = lib().birenStreamSynchronize(h)
        if code != ErrorCode.NOT_PERMITTED:
            _release(h)
        destroyed = lib().birenStreamDestroy(h)
        if exc_type is not None:
            return
        _raise_kernel_failure()
        # INVALID_HANDLE: a device reset destroyed the stream already.
        if code != ErrorCode.INVALID_HANDLE:
            check(code, "birenStreamSynchronize")
            check(destroyed, "birenStreamDestroy")

    def __del__(self) -> None:
        h = getattr(self, "_handle", None)
        if h is not None:
            try:
                lib().birenStreamDestroy(h)  # pending work completes; its objects stay kept
            except Exception:
                pass

    def __repr__(self) -> str:
        if self._handle is None:
            return "<biren.Stream destroyed>"
        kind = " non_blocking" if self._flags & NON_BLOCKING else ""
        return "<biren.Stream %#x%s>" % (self._handle, kind)


class Event:
    """A marker in a stream (birenEventCreateWithFlags). `with Event() as e:` destroys it on exit.

    `timing=False` gives birenEventDisableTiming, `blocking_sync=True` birenEventBlockingSync.
    """

    _handle: Optional[int]

    def __init__(
        self, timing: bool = True, blocking_sync: bool = False, flags: Optional[int] = None
    ) -> None:
        init()
        if flags is None:
            flags = (0 if timing else EVENT_DISABLE_TIMING) | (
                EVENT_BLOCKING_SYNC if blocking_sync else 0
            )
        self._flags = flags
        h = c_void_p()
        check(lib().birenEventCreateWithFlags(byref(h), flags), "birenEventCreateWithFlags")
        self._handle = h.value

    @property
    def handle(self) -> int:
        """The birenEvent_t (an int). Raises BirenError(INVALID_HANDLE) once destroyed."""
        if self._handle is None:
            raise BirenError(ErrorCode.INVALID_HANDLE, "Event", "the event was destroyed")
        return self._handle

    @property
    def _as_parameter_(self) -> c_void_p:
        return c_void_p(self.handle)

    def record(self, stream: Optional[Stream] = None) -> "Event":
        """Captures the work enqueued in `stream` (None: the default stream) so far."""
        check(lib().birenEventRecord(self.handle, _handle(stream)), "birenEventRecord")
        return self

    def query(self) -> bool:
        """True if the latest record has been reached (or the event was never recorded)."""
        code = lib().birenEventQuery(self.handle)
        if code == ErrorCode.NOT_READY:
            return False
        check(code, "birenEventQuery")
        return True

    def synchronize(self) -> None:
        """Waits until the latest record has been reached (birenEventSynchronize)."""
        code = lib().birenEventSynchronize(self.handle)
        _raise_kernel_failure()
        check(code, "birenEventSynchronize")

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds from this event's record to `end`'s (birenEventElapsedTime), as
        CUDA's `cudaEventElapsedTime(&ms, start, end)`. Both must have been created with
        timing (the default) and recorded, and their records reached: else BirenError with
        INVALID_HANDLE (timing disabled, or never recorded) or NOT_READY (not reached yet)."""
        if not isinstance(end, Event):
            raise TypeError("elapsed_time takes a biren.Event, got %s" % type(end).__name__)
        ms = c_float()
        check(
            lib().birenEventElapsedTime(byref(ms), self.handle, end.handle), "birenEventElapsedTime"
        )
        return ms.value

    def destroy(self) -> None:
        """birenEventDestroy (safe while a record is pending). Idempotent."""
        h, self._handle = self._handle, None
        if h is not None:
            check(lib().birenEventDestroy(h), "birenEventDestroy")

    def __enter__(self) -> "Event":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        h, self._handle = self._handle, None
        if h is not None:
            code = lib().birenEventDestroy(h)
            if exc_type is None and code not in (0, ErrorCode.INVALID_HANDLE):
                check(code, "birenEventDestroy")

    def __del__(self) -> None:
        h = getattr(self, "_handle", None)
        if h is not None:
            try:
                lib().birenEventDestroy(h)
            except Exception:
                pass

    def __repr__(self) -> str:
        if self._handle is None:
            return "<biren.Event destroyed>"
        kind = "" if self._flags & EVENT_DISABLE_TIMING else " timing"
        return "<biren.Event %#x%s>" % (self._handle, kind)
