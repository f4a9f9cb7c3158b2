"""Device memory (DeviceBuffer) and page-locked host memory (HostBuffer).

Host data is anything with the buffer protocol and C-contiguous: bytes, bytearray,
memoryview, array.array, ctypes arrays and structures, numpy arrays (numpy is optional).
"""

import ctypes
import weakref
from ctypes import addressof, byref, c_char, c_void_p

from . import device
from .device import init, lib
from .errors import _raise_kernel_failure, check
from .stream import _keep

HOST_TO_HOST, HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE, DEFAULT = range(
    5
)  # birenMemcpyKind


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def host_buffer(obj, writable):
    """(address, nbytes, keepalive) of a C-contiguous host buffer; keepalive must outlive any
    use of the address. A read-only source that is not bytes is copied first."""
    if isinstance(obj, HostBuffer):
        obj = obj.array
    np = _numpy()
    if np is not None and isinstance(obj, np.ndarray):
        if writable and not (obj.flags.c_contiguous and obj.flags.writeable):
            raise ValueError("the destination array must be C-contiguous and writeable")
        if not obj.flags.c_contiguous:
            obj = np.ascontiguousarray(obj)
        return obj.ctypes.data, obj.nbytes, obj
    if isinstance(obj, (ctypes._SimpleCData, ctypes.Array, ctypes.Structure, ctypes.Union)):
        return addressof(obj), ctypes.sizeof(obj), obj
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(
            "expected bytes-like host data (buffer protocol), got %s" % type(obj).__name__
        ) from None
    if not view.c_contiguous:
        if writable:
            raise ValueError("the destination buffer must be C-contiguous")
        view = memoryview(view.tobytes())
    nbytes = view.nbytes
    if nbytes == 0:
        return None, 0, view
    if view.readonly:
        if writable:
            raise TypeError("the destination %s is read-only" % type(obj).__name__)
        if type(obj) is bytes:
            p = ctypes.c_char_p(obj)  # points into the bytes object itself
            return ctypes.cast(p, c_void_p).value, nbytes, (obj, p)
        copy = (c_char * nbytes).from_buffer_copy(view)
        return addressof(copy), nbytes, copy
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    arr = (c_char * nbytes).from_buffer(view)
    return addressof(arr), nbytes, (arr, view)


def _copy(dst, src, count, kind, stream, keepalive):
    """birenMemcpy, or birenMemcpyAsync on `stream` (keeping `keepalive` until it syncs)."""
    if stream is None:
        check(lib().birenMemcpy(dst, src, count, kind), "birenMemcpy")
    else:
        check(lib().birenMemcpyAsync(dst, src, count, kind, stream.handle), "birenMemcpyAsync")
        _keep(stream, keepalive)


class DeviceBuffer:
    """`nbytes` of device memory (birenMalloc) on the current device, freed by free(), by
    leaving a `with` block, or when the object is collected.

    Copies take an optional `stream` (a biren.Stream): without one they are synchronous
    (birenMemcpy), with one they are enqueued (birenMemcpyAsync) and the host object is kept
    alive until the stream is synchronized. Range errors come from the runtime
    (BirenError with code OUT_OF_BOUNDS), and then nothing is copied.
    Passed to a kernel or a raw ctypes function, a DeviceBuffer is its device pointer.
    """

    def __init__(self, nbytes, dtype=None, shape=None):
        init()
        p = c_void_p()
        check(lib().birenMalloc(byref(p), int(nbytes)), "birenMalloc")
        self._ptr = p.value
        self._owner = None
        self._epoch = device._reset_epoch[0]
        self.nbytes = int(nbytes)
        self.dtype = dtype
        self.shape = shape

    @classmethod
    def from_host(cls, data, stream=None):
        """A new buffer holding a copy of `data` (a numpy array's dtype and shape are kept
        for to_numpy())."""
        np = _numpy()
        if np is not None and isinstance(data, np.ndarray):
            buf = cls(data.nbytes, dtype=data.dtype, shape=data.shape)
        else:
            buf = cls(host_buffer(data, writable=False)[1])
        buf.copy_from(data, stream=stream)
        return buf

    @property
    def ptr(self):
        """The device address (an int; None for a 0-byte buffer)."""
        if self._ptr is None and self.nbytes:
            raise ValueError("the device buffer was freed")
        return self._ptr

    @property
    def _as_parameter_(self):
        return c_void_p(self.ptr)

    def __len__(self):
        return self.nbytes

    def view(self, offset, nbytes=None):
        """A DeviceBuffer for bytes [offset, offset + nbytes) of this one (not freed on its own)."""
        if offset < 0:
            raise ValueError("negative offset")
        v = DeviceBuffer.__new__(DeviceBuffer)
        v._ptr = self.ptr + offset if self.ptr is not None else None
        v._owner = self
        v._epoch = self._epoch
        v.nbytes = self.nbytes - offset if nbytes is None else int(nbytes)
        v.dtype = v.shape = None
        return v

    def copy_from(self, src, nbytes=None, offset=0, stream=None):
        """Copies host data or another DeviceBuffer into this buffer at `offset`; all of `src`
        unless `nbytes` is given."""
        if isinstance(src, DeviceBuffer):
            count = src.nbytes if nbytes is None else int(nbytes)
            _copy(self._at(offset), src.ptr, count, DEVICE_TO_DEVICE, stream, src)
            return
        address, size, keep = host_buffer(src, writable=False)
        count = size if nbytes is None else int(nbytes)
        if count > size:
            raise ValueError("nbytes=%d but the source has %d bytes" % (count, size))
        _copy(self._at(offset), address, count, HOST_TO_DEVICE, stream, keep)

    def copy_to(self, dst, nbytes=None, offset=0, stream=None):
        """Copies from this buffer at `offset` into a writable host buffer (or a DeviceBuffer);
        fills all of `dst` unless `nbytes` is given. Returns dst."""
        if isinstance(dst, DeviceBuffer):
            count = dst.nbytes if nbytes is None else int(nbytes)
            _copy(dst.ptr, self._at(offset), count, DEVICE_TO_DEVICE, stream, dst)
            return dst
        address, size, keep = host_buffer(dst, writable=True)
        count = size if nbytes is None else int(nbytes)
        if count > size:
            raise ValueError("nbytes=%d but the destination has %d bytes" % (count, size))
        if stream is None:
            _raise_kernel_failure()
        _copy(address, self._at(offset), count, DEVICE_TO_HOST, stream, keep)
        return dst

    def to_bytes(self, nbytes=None, offset=0):
        """The buffer's contents (from `offset`, `nbytes` or all the rest) as bytes."""
        out = bytearray(self.nbytes - offset if nbytes is None else nbytes)
        self.copy_to(out, offset=offset)
        return bytes(out)

    def to_numpy(self, dtype=None, shape=None):
        """A new numpy array with the buffer's contents; dtype and shape default to those of
        the array the buffer was made from (else uint8, as many as fit)."""
        np = _numpy()
        if np is None:
            raise ImportError("to_numpy needs numpy")
        dtype = np.dtype(
            dtype if dtype is not None else (self.dtype if self.dtype is not None else np.uint8)
        )
        if shape is None:
            shape = (
                self.shape
                if (self.shape is not None and dtype == self.dtype)
                else (self.nbytes // dtype.itemsize,)
            )
        out = np.empty(shape, dtype=dtype)
        return self.copy_to(out)

    def memset(self, value, nbytes=None, offset=0, stream=None):
        """Fills bytes with `value` (birenMemset / birenMemsetAsync)."""
        count = self.nbytes - offset if nbytes is None else int(nbytes)
        if stream is None:
            check(lib().birenMemset(self._at(offset), value, count), "birenMemset")
        else:
            check(
                lib().birenMemsetAsync(self._at(offset), value, count, stream.handle),
                "birenMemsetAsync",
            )

    def _at(self, offset):
        if offset < 0:
            raise ValueError("negative offset")
        p = self.ptr
        return None if p is None else p + offset

    def free(self):
        """birenFree (memory still used by enqueued work is released when that work is done).
        Idempotent; does nothing for a view or after a device reset (the memory is gone)."""
        p, self._ptr = self._ptr, None
        if p is not None and self._owner is None and self._epoch == device._reset_epoch[0]:
            check(lib().birenFree(p), "birenFree")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.free()

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass

    def __repr__(self):
        where = hex(self._ptr) if self._ptr else ("freed" if self.nbytes else "empty")
        return "<biren.DeviceBuffer %s, %d bytes>" % (where, self.nbytes)


def _free_host(ptr):
    try:
        lib().birenFreeHost(ptr)
    except Exception:  # interpreter shutdown
        pass


class HostBuffer:
    """`nbytes` of page-locked host memory (birenMallocHost), with the buffer protocol through
    `.array` (a ctypes char array) and `.numpy(dtype)` (a view). The memory is released by
    free() (views then dangle), or once the HostBuffer and every view of it are gone."""

    def __init__(self, nbytes):
        init()
        p = c_void_p()
        check(lib().birenMallocHost(byref(p), int(nbytes)), "birenMallocHost")
        self.nbytes = int(nbytes)
        if p.value is None:  # 0 bytes
            self.array = (c_char * 0)()
            self._release = lambda: None
        else:
            self.array = (c_char * self.nbytes).from_address(p.value)
            self._release = weakref.finalize(self.array, _free_host, p.value)

    @property
    def ptr(self):
        return ctypes.addressof(self.array) if self.nbytes else None

    @property
    def _as_parameter_(self):
        return c_void_p(self.ptr)

    def __len__(self):
        return self.nbytes

    def numpy(self, dtype="uint8"):
        """A numpy view of the memory (it keeps the memory alive, up to free())."""
        return _numpy().frombuffer(self.array, dtype=dtype)

    def free(self):
        """birenFreeHost now. Idempotent."""
        self.nbytes = 0
        self.array = (c_char * 0)()
        self._release()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.free()
