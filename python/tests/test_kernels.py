"""Kernels from a C shared object compiled at test time, and Python callables."""

import ctypes
from ctypes import POINTER, c_float, c_int, c_uint, c_void_p

import pytest

import biren
from biren import BirenError, ErrorCode, KernelError

VECTOR_ADD_ARGS = (c_void_p, c_void_p, c_void_p, c_int)


def run_vector_add(kernel_fn, n=1000, **launch):
    np = pytest.importorskip("numpy")
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.5, dtype=np.float32)
    with biren.DeviceBuffer.from_host(x) as a, biren.DeviceBuffer.from_host(
        y
    ) as b, biren.DeviceBuffer(x.nbytes) as c:
        kernel_fn(a, b, c, n, grid=(n + 127) // 128, block=128, **launch)
        biren.synchronize()
        return np.array_equal(c.to_numpy(np.float32), x + y)


def test_a_c_kernel_with_argtypes(kernels):
    add = biren.Kernel(kernels.vector_add, argtypes=VECTOR_ADD_ARGS)
    assert add.name == "vector_add" and not add.python
    assert run_vector_add(lambda *a, grid, block: add.launch(grid, block, *a))


def test_a_c_kernel_without_argtypes_passes_ints_as_64_bit(kernels):
    # Registered (argtypes above), its signature is known: n as an int64_t (8 bytes) for its int
    # parameter is refused before anything runs, as BIREN_LAUNCH with a long long would be.
    biren.Kernel(kernels.vector_add, argtypes=VECTOR_ADD_ARGS)
    with pytest.raises(BirenError) as info:
        run_vector_add(lambda *a, grid, block: biren.launch(kernels.vector_add, grid, block, *a))
    assert info.value.code == ErrorCode.INVALID_VALUE
    # A ctypes value of the parameter's size passes.
    assert run_vector_add(
        lambda a, b, c, n, grid, block: biren.launch(kernels.vector_add, grid, block, a, b, c, c_int(n))
    )


def test_a_c_kernel_on_a_stream_with_launch_brackets(kernels):
    add = biren.Kernel(kernels.vector_add, argtypes=VECTOR_ADD_ARGS)
    with biren.Stream() as s:
        assert run_vector_add(lambda *a, grid, block: add[grid, block, 0, s](*a))


def test_a_c_kernel_using_the_exported_builtins(kernels_exported):
    add = biren.Kernel(kernels_exported.vector_add, argtypes=VECTOR_ADD_ARGS)
    assert run_vector_add(lambda *a, grid, block: add.launch(grid, block, *a))


def test_a_c_kernel_with_shared_memory_and_barriers(kernels):
    np = pytest.importorskip("numpy")
    block_sum = biren.Kernel(kernels.block_sum, argtypes=(c_void_p, c_void_p))
    blocks, threads = 8, 256
    x = np.arange(blocks * threads, dtype=np.int32)
    with biren.DeviceBuffer.from_host(x) as d_in, biren.DeviceBuffer(blocks * 4) as d_out:
        block_sum.launch(blocks, threads, d_in, d_out, shared_mem=threads * 4)
        sums = d_out.to_numpy(np.int32)
    assert sums.tolist() == x.reshape(blocks, threads).sum(axis=1).tolist()


def test_three_dimensional_thread_indices(kernels):
    ids = biren.Kernel(kernels.thread_ids, argtypes=(c_void_p,))
    dims = (4, 3, 2)
    out = (c_uint * 24)()
    with biren.DeviceBuffer(ctypes.sizeof(out)) as buf:
        ids.launch(1, dims, buf)
        buf.copy_to(out)
    expected = [x | y << 8 | z << 16 for z in range(2) for y in range(3) for x in range(4)]
    assert list(out) == expected


def test_a_trap_fails_the_launch_and_sticks_until_device_reset(kernels):
    trap = biren.Kernel(kernels.trap_kernel, argtypes=())
    try:
        trap.launch(4, 32)
        with pytest.raises(BirenError) as info:
            biren.synchronize()
        assert info.value.code == ErrorCode.LAUNCH_FAILURE
        assert info.value.name == "BIREN_ERROR_LAUNCH_FAILURE"
        with pytest.raises(BirenError) as info:  # sticky
            biren.DeviceBuffer(16)
        assert info.value.code == ErrorCode.LAUNCH_FAILURE
    finally:
        biren.device_reset()
    with biren.DeviceBuffer(16) as buf:  # usable again
        buf.memset(1)


def test_a_python_kernel_with_decoded_arguments():
    np = pytest.importorskip("numpy")

    @biren.kernel(POINTER(c_float), POINTER(c_float), c_int, c_float)
    def saxpy(x, y, n, a):
        i = biren.block_idx().x * biren.block_dim().x + biren.thread_idx().x
        if i < n:
            y[i] = a * x[i] + y[i]

    assert saxpy.python and saxpy.name.endswith("saxpy")
    n = 300
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    with biren.DeviceBuffer.from_host(x) as dx, biren.DeviceBuffer.from_host(y) as dy:
        saxpy[(n + 63) // 64, 64](dx, dy, n, 2.0)
        biren.synchronize()
        assert np.array_equal(dy.to_numpy(), 2 * x + 1)


def test_a_python_kernel_with_raw_args_on_a_stream():
    seen = []

    def probe(args):
        value = ctypes.cast(args[0], POINTER(c_int))[0]
        t, b, bd, g = biren.thread_idx(), biren.block_idx(), biren.block_dim(), biren.grid_dim()
        seen.append((value, tuple(b), tuple(t), tuple(bd), tuple(g)))

    with biren.Stream() as s:
        biren.launch(probe, (2, 1, 1), (3, 2), ctypes.c_int(7), stream=s)
    assert len(seen) == 12
    assert {v for v, *_ in seen} == {7}
    assert {b for _, b, *_ in seen} == {(0, 0, 0), (1, 0, 0)}
    assert {t for _, _, t, *_ in seen} == {(x, y, 0) for x in range(3) for y in range(2)}
    assert {(bd, g) for *_, bd, g in seen} == {((3, 2, 1), (2, 1, 1))}


def test_a_python_kernel_that_raises_fails_its_launch():
    @biren.kernel(c_int)
    def bad(n):
        if biren.thread_idx().x == 5:
            raise ZeroDivisionError("thread 5")

    bad.launch(1, 16, 3)
    with pytest.raises(KernelError) as info:
        biren.synchronize()
    assert info.value.code == ErrorCode.LAUNCH_FAILURE
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert "bad" in str(info.value) and "thread 5" in str(info.value)
    biren.synchronize()  # reported once


def test_sync_threads_is_refused_inside_a_python_kernel():
    @biren.kernel
    def barrier(args):
        biren.sync_threads()

    with biren.Stream() as s:
        barrier.launch(1, 4, stream=s)
        with pytest.raises(KernelError) as info:
            s.synchronize()
    cause = info.value.__cause__
    assert isinstance(cause, BirenError) and cause.code == ErrorCode.NOT_SUPPORTED


def test_launch_arguments_are_checked_against_argtypes(kernels):
    add = biren.Kernel(kernels.vector_add, argtypes=VECTOR_ADD_ARGS)
    with pytest.raises(TypeError):
        add.launch(1, 1, None, None)
    with pytest.raises(TypeError):
        biren.launch(kernels.vector_add, 1, 1, object())
