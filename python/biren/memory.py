"""Device memory (DeviceBuffer) and page-locked host memory (HostBuffer).

Host data is anything with the buffer protocol and C-contiguous: bytes, bytearray,
memoryview, array.array, ctypes arrays and structures, numpy arrays (numpy is optional).
"""

from __future__ import annotations

import ctypes
import math
import weakref
from ctypes import addressof, byref, c_char, c_void_p
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Tuple, TypeVar, Union

from . import device
from .device import init, lib
from .errors import _raise_kernel_failure, check
from .stream import Stream, _handle, _keep

if TYPE_CHECKING:
    import numpy

    DType = numpy.dtype[Any]
else:
    DType = Any

#: A numpy dtype or anything numpy.dtype() accepts ("float32", numpy.int32, ...).
DTypeLike = Any
#: A shape: an int or a sequence of ints.
ShapeLike = Union[int, Sequence[int]]
_HostT = TypeVar("_HostT")

HOST_TO_HOST, HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE, DEFAULT = range(
    5
)  # birenMemcpyKind


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def host_buffer(obj: Any, writable: bool) -> Tuple[Optional[int], int, Any]:
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


def _copy(
    dst: Optional[int],
    src: Optional[int],
    count: int,
    kind: int,
    stream: Optional[Stream],
    keepalive: Any,
) -> None:
    """birenMemcpy, or birenMemcpyAsync on `stream` (keeping `keepalive` until it syncs)."""
    if stream is None:
        check(lib().birenMemcpy(dst, src, count, kind), "birenMemcpy")
    else:
        check(lib().birenMemcpyAsync(dst, src, count, kind, _handle(stream)), "birenMemcpyAsync")
        _keep(stream, keepalive)


def _shape_tuple(shape: ShapeLike) -> Tuple[int, ...]:
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool) or d < 0:
            raise ValueError("a shape is non-negative ints, got %r" % (shape,))
    return tuple(int(d) for d in dims)


def _need_numpy(what: str) -> Any:
    np = _numpy()
    if np is None:
        raise ImportError("%s needs numpy (pip install numpy)" % what)
    return np


class DeviceBuffer:
    """`nbytes` of device memory (birenMalloc) on the current device, freed by free(), by
    leaving a `with` block, or when the object is collected.

    A buffer made from a numpy array (from_numpy, from_host) or with a dtype (empty, or
    DeviceBuffer(nbytes, dtype, shape)) is *typed*: it has the `dtype` and `shape` of an array,
    to_numpy() gives them back, and copies from or to numpy arrays must match them (TypeError
    for another dtype, ValueError for another shape). An untyped buffer (DeviceBuffer(nbytes))
    is plain bytes: `dtype` and `shape` are None, and it takes any host data.

    Copies take an optional `stream` (a biren.Stream): without one they are synchronous
    (birenMemcpy), with one they are enqueued (birenMemcpyAsync) and the host object is kept
    alive until the stream is synchronized. Range errors come from the runtime
    (BirenError with code OUT_OF_BOUNDS), and then nothing is copied. Using a buffer after
    free() (or after device_reset(), which frees all device memory) raises ValueError.
    Passed to a kernel or a raw ctypes function, a DeviceBuffer is its device pointer.
    """

    nbytes: int
    _ptr: Optional[int]
    _owner: Optional["DeviceBuffer"]
    _freed: bool
    _epoch: int
    _dtype: Optional[DType]
    _shape: Optional[Tuple[int, ...]]

    def __init__(
        self, nbytes: int, dtype: Optional[DTypeLike] = None, shape: Optional[ShapeLike] = None
    ) -> None:
        nbytes = int(nbytes)
        dt, shp = self._typing(nbytes, dtype, shape)
        init()
        p = c_void_p()
        check(lib().birenMalloc(byref(p), nbytes), "birenMalloc")
        self._ptr = p.value
        self._owner = None
        self._freed = False
        self._epoch = device._reset_epoch[0]
        self.nbytes = nbytes
        self._dtype = dt
        self._shape = shp

    @staticmethod
    def _typing(
        nbytes: int, dtype: Optional[DTypeLike], shape: Optional[ShapeLike]
    ) -> Tuple[Optional[DType], Optional[Tuple[int, ...]]]:
        """The (dtype, shape) of a buffer of `nbytes`, checked: both None for plain bytes."""
        if nbytes < 0:
            raise ValueError("nbytes must be >= 0, got %d" % nbytes)
        if dtype is None:
            if shape is not None:
                raise ValueError("a shape needs a dtype")
            return None, None
        np = _need_numpy("a typed DeviceBuffer")
        dt = np.dtype(dtype)
        if dt.hasobject:
            raise TypeError("dtype %s holds Python objects, which cannot live on a device" % dt)
        if shape is None:
            if dt.itemsize == 0 or nbytes % dt.itemsize:
                raise ValueError("%d bytes are not a whole number of %s" % (nbytes, dt))
            return dt, (nbytes // dt.itemsize,)
        shp = _shape_tuple(shape)
        if math.prod(shp) * dt.itemsize != nbytes:
            raise ValueError(
                "shape %s of %s is %d bytes, not %d"
                % (shp, dt, math.prod(shp) * dt.itemsize, nbytes)
            )
        return dt, shp

    @classmethod
    def empty(
        cls, shape: ShapeLike, dtype: DTypeLike = "float64"
    ) -> "DeviceBuffer":
        """An uninitialized typed buffer, as numpy.empty(shape, dtype) on the device."""
        np = _need_numpy("DeviceBuffer.empty")
        shp = _shape_tuple(shape)
        dt = np.dtype(dtype)
        return cls(math.prod(shp) * dt.itemsize, dt, shp)

    @classmethod
    def from_numpy(cls, array: Any, stream: Optional[Stream] = None) -> "DeviceBuffer":
        """A typed buffer holding a copy of a numpy array (its dtype and shape; a
        non-contiguous array is copied in C order)."""
        np = _need_numpy("DeviceBuffer.from_numpy")
        if not isinstance(array, np.ndarray):
            raise TypeError("from_numpy takes a numpy.ndarray, got %s" % type(array).__name__)
        buf = cls(array.nbytes, dtype=array.dtype, shape=array.shape)
        try:
            buf.copy_from(array, stream=stream)
        except BaseException:
            buf.free()
            raise
        return buf

    @classmethod
    def from_host(cls, data: Any, stream: Optional[Stream] = None) -> "DeviceBuffer":
        """A new buffer holding a copy of `data`: typed for a numpy array (from_numpy), plain
        bytes for anything else with the buffer protocol."""
        np = _numpy()
        if np is not None and isinstance(data, np.ndarray):
            return cls.from_numpy(data, stream=stream)
        buf = cls(host_buffer(data, writable=False)[1])
        try:
            buf.copy_from(data, stream=stream)
        except BaseException:
            buf.free()
            raise
        return buf

    @property
    def dtype(self) -> Optional[DType]:
        """The numpy dtype of a typed buffer; None for plain bytes."""
        return self._dtype

    @property
    def shape(self) -> Optional[Tuple[int, ...]]:
        """The shape of a typed buffer; None for plain bytes."""
        return self._shape

    @property
    def freed(self) -> bool:
        """True once the memory is gone: free(), device_reset(), or, for a view, its buffer's."""
        if self._owner is not None:
            return self._freed or self._owner.freed
        return self._freed or self._epoch != device._reset_epoch[0]

    @property
    def ptr(self) -> Optional[int]:
        """The device address (an int; None for a 0-byte buffer). ValueError once freed."""
        if self.freed:
            if self._epoch != device._reset_epoch[0]:
                raise ValueError("the device buffer was freed by device_reset()")
            raise ValueError("the device buffer was freed")
        return self._ptr

    @property
    def _as_parameter_(self) -> c_void_p:
        return c_void_p(self.ptr)

    def __len__(self) -> int:
        return self.nbytes

    def view(self, offset: int, nbytes: Optional[int] = None) -> "DeviceBuffer":
        """An untyped DeviceBuffer for bytes [offset, offset + nbytes) of this one (not freed on
        its own; unusable once this one is freed)."""
        if offset < 0 or offset > self.nbytes:
            raise ValueError("offset %d is outside the %d-byte buffer" % (offset, self.nbytes))
        size = self.nbytes - offset if nbytes is None else int(nbytes)
        if size < 0 or offset + size > self.nbytes:
            raise ValueError(
                "bytes [%d, %d) are outside the %d-byte buffer"
                % (offset, offset + size, self.nbytes)
            )
        p = self.ptr
        v = DeviceBuffer.__new__(DeviceBuffer)
        v._ptr = p + offset if p is not None else None
        v._owner = self
        v._freed = False
        v._epoch = self._epoch
        v.nbytes = size
        v._dtype = v._shape = None
        return v

    def _check_array(self, array: Any, whole: bool, direction: str) -> None:
        """A typed buffer and a numpy array meet: same dtype, and for a whole-buffer copy
        (no nbytes, no offset) same shape."""
        if self._dtype is None:
            return
        np = _numpy()
        if np is None or not isinstance(array, np.ndarray):
            return
        if array.dtype != self._dtype:
            raise TypeError(
                "cannot copy %s a %s array %s a %s buffer (convert with .astype(), or "
                "reinterpret with to_numpy(dtype))"
                % (direction, array.dtype, "into" if direction == "from" else "from", self._dtype)
            )
        if whole and array.shape != self._shape:
            raise ValueError(
                "shape mismatch: the buffer is %s, the array %s (reshape the array, or pass "
                "nbytes= to copy part)" % (self._shape, array.shape)
            )

    def copy_from(
        self,
        src: Any,
        nbytes: Optional[int] = None,
        offset: int = 0,
        stream: Optional[Stream] = None,
    ) -> None:
        """Copies host data or another DeviceBuffer into this buffer at `offset`; all of `src`
        unless `nbytes` is given."""
        if isinstance(src, DeviceBuffer):
            count = src.nbytes if nbytes is None else int(nbytes)
            _copy(self._at(offset), src.ptr, count, DEVICE_TO_DEVICE, stream, src)
            return
        self._check_array(src, nbytes is None and offset == 0, "from")
        dst = self._at(offset)
        address, size, keep = host_buffer(src, writable=False)
        count = size if nbytes is None else int(nbytes)
        if count > size:
            raise ValueError("nbytes=%d but the source has %d bytes" % (count, size))
        _copy(dst, address, count, HOST_TO_DEVICE, stream, keep)

    def copy_to(
        self,
        dst: _HostT,
        nbytes: Optional[int] = None,
        offset: int = 0,
        stream: Optional[Stream] = None,
    ) -> _HostT:
        """Copies from this buffer at `offset` into a writable host buffer (or a DeviceBuffer);
        fills all of `dst` unless `nbytes` is given. Returns dst."""
        if isinstance(dst, DeviceBuffer):
            count = dst.nbytes if nbytes is None else int(nbytes)
            _copy(dst.ptr, self._at(offset), count, DEVICE_TO_DEVICE, stream, dst)
            return dst
        self._check_array(dst, nbytes is None and offset == 0, "to")
        src = self._at(offset)
        address, size, keep = host_buffer(dst, writable=True)
        count = size if nbytes is None else int(nbytes)
        if count > size:
            raise ValueError("nbytes=%d but the destination has %d bytes" % (count, size))
        if stream is None:
            _raise_kernel_failure()
        _copy(address, src, count, DEVICE_TO_HOST, stream, keep)
        return dst

    def to_bytes(self, nbytes: Optional[int] = None, offset: int = 0) -> bytes:
        """The buffer's contents (from `offset`, `nbytes` or all the rest) as bytes."""
        self._at(offset)  # freed: ValueError before anything else
        out = bytearray(self.nbytes - offset if nbytes is None else nbytes)
        self.copy_to(out, offset=offset)
        return bytes(out)

    def to_numpy(
        self,
        dtype: Optional[DTypeLike] = None,
        shape: Optional[ShapeLike] = None,
        stream: Optional[Stream] = None,
    ) -> Any:
        """A new numpy array with the buffer's contents. Without arguments, a typed buffer's
        dtype and shape (plain bytes: uint8). Another dtype reinterprets the bytes, as
        numpy's .view(dtype): the buffer must hold a whole number of them, and `shape`, if
        given, must cover exactly the buffer (ValueError otherwise). With `stream`, the copy is
        enqueued there: synchronize the stream before reading the array."""
        np = _need_numpy("to_numpy")
        self._at(0)  # freed: ValueError before anything else
        if dtype is None:
            dt = self._dtype if self._dtype is not None else np.dtype(np.uint8)
        else:
            dt = np.dtype(dtype)
        if shape is not None:
            shp = _shape_tuple(shape)
            if math.prod(shp) * dt.itemsize != self.nbytes:
                raise ValueError(
                    "shape %s of %s is %d bytes; the buffer has %d"
                    % (shp, dt, math.prod(shp) * dt.itemsize, self.nbytes)
                )
        elif dt == self._dtype and self._shape is not None:
            shp = self._shape
        else:
            if dt.itemsize == 0 or self.nbytes % dt.itemsize:
                raise ValueError(
                    "the buffer's %d bytes are not a whole number of %s (itemsize %d)"
                    % (self.nbytes, dt, dt.itemsize)
                )
            shp = (self.nbytes // dt.itemsize,)
        out = np.empty(shp, dtype=dt)
        # Reinterpreting: copy the bytes, not through the dtype check of copy_to.
        address, size, keep = host_buffer(out, writable=True)
        if stream is None:
            _raise_kernel_failure()
        _copy(address, self._at(0), size, DEVICE_TO_HOST, stream, keep)
        return out

    def memset(
        self,
        value: int,
        nbytes: Optional[int] = None,
        offset: int = 0,
        stream: Optional[Stream] = None,
    ) -> None:
        """Fills bytes with `value` (birenMemset / birenMemsetAsync)."""
        dst = self._at(offset)
        count = self.nbytes - offset if nbytes is None else int(nbytes)
        if stream is None:
            check(lib().birenMemset(dst, value, count), "birenMemset")
        else:
            check(lib().birenMemsetAsync(dst, value, count, _handle(stream)), "birenMemsetAsync")

    def _at(self, offset: int) -> Optional[int]:
        p = self.ptr
        if offset < 0:
            raise ValueError("negative offset")
        return None if p is None else p + offset

    def free(self) -> None:
        """birenFree (memory still used by enqueued work is released when that work is done).
        Idempotent; for a view it only makes the view unusable, and after a device reset it
        calls nothing (the memory is gone)."""
        if self._freed:
            return
        p, self._freed = self._ptr, True
        if p is not None and self._owner is None and self._epoch == device._reset_epoch[0]:
            check(lib().birenFree(p), "birenFree")

    def __enter__(self) -> "DeviceBuffer":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.free()

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:
            pass

    def __repr__(self) -> str:
        if self._dtype is not None:
            kind = "shape=%s dtype=%s nbytes=%d" % (self._shape, self._dtype, self.nbytes)
        else:
            kind = "nbytes=%d" % self.nbytes
        if self._owner is not None:
            kind += " view"
        if self.freed:
            where = "freed"
        elif self._ptr is None:
            where = "empty"
        else:
            where = "at %#x" % self._ptr
        return "<biren.DeviceBuffer %s %s>" % (kind, where)


def _free_host(ptr: int) -> None:
    try:
        lib().birenFreeHost(ptr)
    except Exception:  # interpreter shutdown
        pass


class HostBuffer:
    """`nbytes` of page-locked host memory (birenMallocHost), with the buffer protocol through
    `.array` (a ctypes char array) and `.numpy(dtype)` (a view). The memory is released by
    free() (views then dangle), or once the HostBuffer and every view of it are gone."""

    nbytes: int
    array: "ctypes.Array[c_char]"

    def __init__(self, nbytes: int) -> None:
        init()
        p = c_void_p()
        check(lib().birenMallocHost(byref(p), int(nbytes)), "birenMallocHost")
        self.nbytes = int(nbytes)
        self._freed = False
        self._release: Callable[[], Any]
        if p.value is None:  # 0 bytes
            self.array = (c_char * 0)()
            self._release = lambda: None
        else:
            self.array = (c_char * self.nbytes).from_address(p.value)
            self._release = weakref.finalize(self.array, _free_host, p.value)

    @property
    def ptr(self) -> Optional[int]:
        """The host address (an int; None for 0 bytes or once freed)."""
        return ctypes.addressof(self.array) if self.nbytes else None

    @property
    def _as_parameter_(self) -> c_void_p:
        return c_void_p(self.ptr)

    def __len__(self) -> int:
        return self.nbytes

    def numpy(self, dtype: DTypeLike = "uint8") -> Any:
        """A numpy view of the memory (it keeps the memory alive, up to free())."""
        return _need_numpy("HostBuffer.numpy").frombuffer(self.array, dtype=dtype)

    def free(self) -> None:
        """birenFreeHost now. Idempotent."""
        self.nbytes = 0
        self._freed = True
        self.array = (c_char * 0)()
        self._release()

    def __enter__(self) -> "HostBuffer":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.free()

    def __repr__(self) -> str:
        if self._freed:
            return "<biren.HostBuffer freed>"
        where = "at %#x" % self.ptr if self.ptr else "empty"
        return "<biren.HostBuffer nbytes=%d %s>" % (self.nbytes, where)
