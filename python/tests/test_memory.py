"""DeviceBuffer copies from and to bytes, buffer-protocol objects and numpy arrays."""

import array
import ctypes
import gc

import pytest

import biren
from biren import BirenError, ErrorCode


def test_bytes_round_trip():
    data = bytes(range(256)) * 4
    with biren.DeviceBuffer.from_host(data) as buf:
        assert len(buf) == 1024
        assert buf.to_bytes() == data
        assert buf.to_bytes(nbytes=10, offset=5) == data[5:15]


def test_buffer_protocol_objects_round_trip():
    src = array.array("i", range(100))
    with biren.DeviceBuffer(len(src) * src.itemsize) as buf:
        buf.copy_from(src)
        back = array.array("i", bytes(len(src) * src.itemsize))
        buf.copy_to(back)
        assert back == src
        ba = bytearray(buf.nbytes)
        buf.copy_to(memoryview(ba))
        assert bytes(ba) == src.tobytes()
        c = (ctypes.c_int * 100)()
        buf.copy_to(c)
        assert list(c) == list(range(100))
        buf.copy_from(memoryview(bytearray(b"\xff" * 8)), offset=4)
        assert buf.to_bytes(nbytes=16) == src.tobytes()[:4] + b"\xff" * 8 + src.tobytes()[12:16]


def test_a_read_only_destination_is_refused():
    with biren.DeviceBuffer(4) as buf:
        with pytest.raises(TypeError):
            buf.copy_to(b"abcd")


def test_a_count_beyond_the_host_buffer_is_refused_before_the_call():
    with biren.DeviceBuffer(64) as buf:
        with pytest.raises(ValueError):
            buf.copy_from(b"abc", nbytes=4)


def test_copy_to_a_larger_host_buffer_is_out_of_bounds():
    with biren.DeviceBuffer(8) as buf:
        with pytest.raises(BirenError) as info:
            buf.copy_to(bytearray(9))
        assert info.value.code == ErrorCode.OUT_OF_BOUNDS


def test_memset_view_and_device_to_device():
    with biren.DeviceBuffer(32) as a, biren.DeviceBuffer(32) as b:
        a.memset(0xAB)
        a.view(8, 8).memset(0x01)
        assert a.to_bytes() == b"\xab" * 8 + b"\x01" * 8 + b"\xab" * 16
        b.copy_from(a)
        assert b.to_bytes() == a.to_bytes()
        a.copy_to(b.view(16), nbytes=16)
        assert b.to_bytes()[16:] == a.to_bytes()[:16]


def test_numpy_round_trip_keeps_dtype_and_shape():
    np = pytest.importorskip("numpy")
    x = np.arange(24, dtype=np.float64).reshape(4, 6)
    with biren.DeviceBuffer.from_host(x) as buf:
        assert buf.nbytes == x.nbytes
        y = buf.to_numpy()
        assert y.dtype == x.dtype and y.shape == x.shape
        assert np.array_equal(x, y)
        out = np.zeros_like(x)
        buf.copy_to(out)
        assert np.array_equal(out, x)
        assert buf.to_numpy(np.uint8).shape == (x.nbytes,)


def test_numpy_non_contiguous_sources_are_copied_in_c_order():
    np = pytest.importorskip("numpy")
    x = np.arange(20, dtype=np.int32).reshape(4, 5)[:, ::2]  # strided view
    with biren.DeviceBuffer.from_host(x) as buf:
        assert np.array_equal(buf.to_numpy(np.int32, x.shape), np.ascontiguousarray(x))
        with pytest.raises(ValueError):
            buf.copy_to(np.zeros((4, 6), np.int32)[:, ::2])


def test_async_copies_keep_the_host_object_alive_until_synchronize():
    np = pytest.importorskip("numpy")
    n = 1 << 20
    with biren.Stream() as s, biren.DeviceBuffer(n * 4) as buf:
        buf.copy_from(np.full(n, 7, dtype=np.int32), stream=s)  # the only reference
        gc.collect()
        out = np.zeros(n, dtype=np.int32)
        buf.copy_to(out, stream=s)
        s.synchronize()
        assert (out == 7).all()


def test_memory_is_accounted_and_released():
    gc.collect()
    free0, total = biren.mem_get_info()
    buf = biren.DeviceBuffer(1 << 20)
    free1, _ = biren.mem_get_info()
    assert free1 <= free0 - (1 << 20) and total >= 1 << 20
    info = biren.pointer_attributes(buf.view(100))
    assert info.type == "device" and info.base == buf.ptr and info.size == 1 << 20
    del buf
    gc.collect()
    assert biren.mem_get_info()[0] == free0


def test_zero_byte_buffers():
    with biren.DeviceBuffer(0) as buf:
        assert buf.ptr is None
        buf.copy_from(b"")
        assert buf.to_bytes() == b""


def test_page_locked_host_memory():
    np = pytest.importorskip("numpy")
    with biren.HostBuffer(64) as h, biren.DeviceBuffer(64) as d:
        h.numpy()[:] = np.arange(64, dtype=np.uint8)
        assert biren.pointer_attributes(h.ptr).type == "host"
        d.copy_from(h)
        assert d.to_bytes() == bytes(range(64))
        h.numpy()[:] = 0
        d.copy_to(h)
        assert bytes(h.array) == bytes(range(64))
