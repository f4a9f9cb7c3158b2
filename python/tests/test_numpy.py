"""DeviceBuffer with numpy: dtypes and shapes kept, checked, and reinterpreted on request."""

import gc

import pytest

import biren

np = pytest.importorskip("numpy")


def test_from_numpy_keeps_dtype_shape_and_contents():
    x = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    with biren.DeviceBuffer.from_numpy(x) as buf:
        assert buf.dtype == np.int16 and buf.shape == (2, 3, 4) and buf.nbytes == 48
        y = buf.to_numpy()
        assert y.dtype == np.int16 and y.shape == (2, 3, 4)
        assert np.array_equal(x, y)
        assert y.ctypes.data != x.ctypes.data  # a new array


def test_from_numpy_takes_only_arrays():
    with pytest.raises(TypeError):
        biren.DeviceBuffer.from_numpy(b"bytes")
    with pytest.raises(TypeError):
        biren.DeviceBuffer.from_numpy([1.0, 2.0])


def test_empty_is_a_typed_buffer_of_the_shape():
    with biren.DeviceBuffer.empty((3, 5), np.float32) as buf:
        assert buf.dtype == np.float32 and buf.shape == (3, 5) and buf.nbytes == 60
        buf.copy_from(np.ones((3, 5), np.float32))
        assert (buf.to_numpy() == 1).all()
    with biren.DeviceBuffer.empty(7) as buf:  # numpy's default dtype
        assert buf.dtype == np.float64 and buf.shape == (7,)
    with biren.DeviceBuffer.empty((0, 4), "int32") as buf:
        assert buf.nbytes == 0 and buf.to_numpy().shape == (0, 4)


def test_a_dtype_without_a_shape_is_one_dimensional():
    with biren.DeviceBuffer(32, dtype="float64") as buf:
        assert buf.shape == (4,)


def test_constructor_checks_dtype_and_shape_against_nbytes():
    with pytest.raises(ValueError):
        biren.DeviceBuffer(30, dtype=np.float64)  # not a whole number of float64
    with pytest.raises(ValueError):
        biren.DeviceBuffer(32, dtype=np.float32, shape=(3, 3))
    with pytest.raises(ValueError):
        biren.DeviceBuffer(32, shape=(8,))  # a shape needs a dtype
    with pytest.raises(ValueError):
        biren.DeviceBuffer(-1)
    with pytest.raises(ValueError):
        biren.DeviceBuffer.empty((2, -1), np.float32)
    with pytest.raises(TypeError):
        biren.DeviceBuffer.empty(4, object)
    with pytest.raises(TypeError):
        biren.DeviceBuffer.empty(4, "not a dtype")


def test_untyped_buffers_are_plain_bytes():
    with biren.DeviceBuffer(16) as buf:
        assert buf.dtype is None and buf.shape is None and buf.nbytes == 16
        buf.copy_from(np.arange(4, dtype=np.int32))  # any host data
        assert buf.to_numpy().dtype == np.uint8 and buf.to_numpy().shape == (16,)
        assert buf.to_numpy(np.int32).tolist() == [0, 1, 2, 3]


def test_copying_an_array_of_another_dtype_is_a_type_error_and_copies_nothing():
    x = np.arange(6, dtype=np.float32)
    with biren.DeviceBuffer.from_numpy(x) as buf:
        with pytest.raises(TypeError, match="float64"):
            buf.copy_from(np.zeros(6, dtype=np.float64)[:6])
        with pytest.raises(TypeError):
            buf.copy_from(np.zeros(6, dtype=np.int32))
        with pytest.raises(TypeError):
            buf.copy_to(np.zeros(6, dtype=np.int32))
        assert np.array_equal(buf.to_numpy(), x)


def test_copying_an_array_of_another_shape_is_a_value_error_and_copies_nothing():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with biren.DeviceBuffer.from_numpy(x) as buf:
        with pytest.raises(ValueError, match="shape"):
            buf.copy_from(np.zeros((3, 2), np.float32))  # same size, other shape
        with pytest.raises(ValueError):
            buf.copy_from(np.zeros(5, np.float32))
        out = np.full(4, -1, np.float32)
        with pytest.raises(ValueError):
            buf.copy_to(out)
        assert (out == -1).all()
        assert np.array_equal(buf.to_numpy(), x)
        # Part of the buffer, asked for explicitly: byte counts, same dtype.
        buf.copy_from(np.array([7, 8], np.float32), offset=4)
        assert buf.to_numpy().ravel().tolist() == [0, 7, 8, 3, 4, 5]
        part = np.zeros(2, np.float32)
        buf.copy_to(part, nbytes=8, offset=12)
        assert part.tolist() == [3, 4]


def test_to_numpy_reinterprets_with_another_dtype_or_shape():
    x = np.arange(8, dtype=np.uint32)
    with biren.DeviceBuffer.from_numpy(x) as buf:
        assert np.array_equal(buf.to_numpy(np.uint8), x.view(np.uint8))
        assert np.array_equal(buf.to_numpy(np.uint64), x.view(np.uint64))
        assert buf.to_numpy(shape=(2, 4)).tolist() == x.reshape(2, 4).tolist()
        assert buf.to_numpy(np.uint16, (4, 4)).shape == (4, 4)


def test_to_numpy_refuses_sizes_that_do_not_cover_the_buffer():
    with biren.DeviceBuffer.from_numpy(np.zeros(3, np.float32)) as buf:  # 12 bytes
        with pytest.raises(ValueError, match="whole number"):
            buf.to_numpy(np.float64)
        with pytest.raises(ValueError):
            buf.to_numpy(shape=(2,))  # fewer elements than the buffer holds
        with pytest.raises(ValueError):
            buf.to_numpy(shape=(4,))  # more


def test_to_numpy_on_a_stream():
    x = np.arange(1000, dtype=np.float64)
    with biren.Stream() as s, biren.DeviceBuffer.from_numpy(x, stream=s) as buf:
        y = buf.to_numpy(stream=s)
        s.synchronize()
        assert np.array_equal(x, y)


def test_a_typed_buffer_is_a_kernel_argument(kernels):
    import ctypes

    add = biren.Kernel(kernels.vector_add, argtypes=(ctypes.c_void_p,) * 3 + (ctypes.c_int,))
    a = np.arange(300, dtype=np.float32)
    with biren.DeviceBuffer.from_numpy(a) as d_a, biren.DeviceBuffer.empty(300, np.float32) as d_c:
        add.launch(3, 128, d_a, d_a, d_c, a.size)
        biren.synchronize()
        assert np.array_equal(d_c.to_numpy(), 2 * a)


def test_every_use_after_free_is_a_value_error():
    buf = biren.DeviceBuffer.from_numpy(np.arange(4, dtype=np.int32))
    view = buf.view(4, 8)
    buf.free()
    assert buf.freed and view.freed
    for use in (
        lambda: buf.ptr,
        lambda: buf.to_numpy(),
        lambda: buf.to_bytes(),
        lambda: buf.copy_from(np.zeros(4, np.int32)),
        lambda: buf.copy_to(np.zeros(4, np.int32)),
        lambda: buf.memset(0),
        lambda: buf.view(0),
        lambda: view.to_bytes(),  # a view of freed memory is unusable too
        lambda: view.memset(1),
        lambda: biren.Kernel(lambda args: None).launch(1, 1, buf),
    ):
        with pytest.raises(ValueError, match="freed"):
            use()
    buf.free()  # idempotent
    assert "freed" in repr(buf) and "freed" in repr(view)


def test_buffers_from_before_a_device_reset_are_freed():
    buf = biren.DeviceBuffer.from_numpy(np.arange(4, dtype=np.int32))
    biren.device_reset()
    assert buf.freed
    with pytest.raises(ValueError, match="device_reset"):
        buf.to_numpy()
    buf.free()  # calls nothing: the memory is gone
    with biren.DeviceBuffer.from_numpy(np.arange(3, dtype=np.int8)) as fresh:
        assert fresh.to_numpy().tolist() == [0, 1, 2]


def test_views_are_checked_against_their_buffer():
    with biren.DeviceBuffer(16) as buf:
        with pytest.raises(ValueError):
            buf.view(17)
        with pytest.raises(ValueError):
            buf.view(8, 9)
        with pytest.raises(ValueError):
            buf.view(-1)
        assert buf.view(16).nbytes == 0


def test_from_numpy_frees_the_buffer_when_the_copy_fails():
    gc.collect()
    free0, _ = biren.mem_get_info()
    with pytest.raises(TypeError):
        biren.DeviceBuffer.from_numpy(np.zeros(4), stream="not a stream")
    gc.collect()
    assert biren.mem_get_info()[0] == free0
