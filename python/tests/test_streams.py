"""Streams and events: context managers, ordering, timing, host functions, deadlock."""

import ctypes
import threading

import pytest

import biren
from biren import BirenError, ErrorCode


def test_a_stream_is_destroyed_when_its_block_exits():
    with biren.Stream() as s:
        handle = s.handle
        assert s.query() is True
    assert biren.lib().birenStreamQuery(handle) == ErrorCode.INVALID_HANDLE
    with pytest.raises(BirenError) as info:
        s.synchronize()
    assert info.value.code == ErrorCode.INVALID_HANDLE


def test_a_stream_is_destroyed_when_its_block_raises():
    with pytest.raises(KeyError):
        with biren.Stream() as s:
            handle = s.handle
            raise KeyError("boom")
    assert biren.lib().birenStreamQuery(handle) == ErrorCode.INVALID_HANDLE


def test_an_event_is_destroyed_when_its_block_exits():
    with biren.Event() as e:
        handle = e.handle
        assert e.query() is True  # never recorded
        e.record()
        e.synchronize()
    assert biren.lib().birenEventQuery(handle) == ErrorCode.INVALID_HANDLE


def test_stream_priority_and_flags():
    least, greatest = biren.stream_priority_range()
    assert (least, greatest) == (0, -5)
    with biren.Stream(priority=-3, non_blocking=True) as s:
        assert s.priority == -3
        assert s.flags == 1
    with biren.Stream(priority=-99) as s:
        assert s.priority == -5  # clamped


def test_wait_event_orders_two_streams(kernels):
    slow_fill = biren.Kernel(
        kernels.slow_fill, argtypes=(ctypes.c_void_p, ctypes.c_int, ctypes.c_int)
    )
    n = 256
    with biren.Stream() as a, biren.Stream() as b, biren.Event() as done, biren.DeviceBuffer(
        n * 4
    ) as buf:
        buf.memset(0)
        slow_fill.launch(1, n, buf, 42, 100, stream=a)  # 100 ms before it writes
        done.record(a)
        b.wait_event(done)
        out = (ctypes.c_int * n)()
        buf.copy_to(out, stream=b)
        b.synchronize()
        assert list(out) == [42] * n


def test_events_time_the_work_between_them(kernels):
    slow_fill = biren.Kernel(
        kernels.slow_fill, argtypes=(ctypes.c_void_p, ctypes.c_int, ctypes.c_int)
    )
    with biren.Stream() as s, biren.Event() as start, biren.Event() as end, biren.DeviceBuffer(
        4
    ) as buf:
        start.record(s)
        slow_fill.launch(1, 1, buf, 1, 30, stream=s)
        end.record(s)
        end.synchronize()
        ms = start.elapsed_time(end)
        assert 25.0 <= ms < 10_000.0


def test_an_event_without_timing_refuses_elapsed_time():
    with biren.Event(timing=False) as a, biren.Event(timing=False) as b:
        a.record()
        b.record()
        b.synchronize()
        with pytest.raises(BirenError) as info:
            a.elapsed_time(b)
        assert info.value.code == ErrorCode.INVALID_HANDLE


def test_host_functions_run_in_stream_order(kernels):
    slow_fill = biren.Kernel(
        kernels.slow_fill, argtypes=(ctypes.c_void_p, ctypes.c_int, ctypes.c_int)
    )
    seen = []
    with biren.Stream() as s, biren.DeviceBuffer(4) as buf:
        slow_fill.launch(1, 1, buf, 5, 20, stream=s)
        s.launch_host_func(
            lambda: seen.append(("host", threading.current_thread() is threading.main_thread()))
        )
        s.synchronize()
        assert seen == [("host", False)]


def test_a_wait_no_record_can_satisfy_is_a_deadlock_not_a_hang():
    with biren.Stream() as s, biren.Event() as never:
        s.wait_event(never)  # BIREN extension: waits for the next record, which never comes
        with pytest.raises(BirenError) as info:
            s.synchronize()
        assert info.value.code == ErrorCode.DEADLOCK
        # Recording on the default stream would close a cycle: it waits for s (a blocking
        # stream), which waits for this record. Refused at once, nothing enqueued.
        with pytest.raises(BirenError) as info:
            never.record()
        assert info.value.code == ErrorCode.DEADLOCK
        # A record on a non-blocking stream releases it.
        with biren.Stream(non_blocking=True) as other:
            never.record(other)
        s.synchronize()


def _slow_fill(kernels):
    return biren.Kernel(kernels.slow_fill, argtypes=(ctypes.c_void_p, ctypes.c_int, ctypes.c_int))


def test_elapsed_time_is_negative_when_end_was_recorded_first(kernels):
    with biren.Stream() as s, biren.Event() as first, biren.Event() as second, biren.DeviceBuffer(
        4
    ) as buf:
        first.record(s)
        _slow_fill(kernels).launch(1, 1, buf, 1, 30, stream=s)
        second.record(s)
        second.synchronize()
        forward, backward = first.elapsed_time(second), second.elapsed_time(first)
        assert forward >= 25.0 and backward == -forward
        assert first.elapsed_time(first) == 0.0


def test_elapsed_time_before_the_record_is_reached_is_not_ready(kernels):
    with biren.Stream() as s, biren.Event() as start, biren.Event() as end, biren.DeviceBuffer(
        4
    ) as buf:
        start.record(s)
        _slow_fill(kernels).launch(1, 1, buf, 1, 300, stream=s)
        end.record(s)
        with pytest.raises(BirenError) as info:
            start.elapsed_time(end)
        assert info.value.code == ErrorCode.NOT_READY
        end.synchronize()
        assert start.elapsed_time(end) >= 250.0


def test_elapsed_time_errors():
    with biren.Event() as recorded, biren.Event() as never:
        recorded.record()
        recorded.synchronize()
        with pytest.raises(BirenError) as info:  # never recorded
            recorded.elapsed_time(never)
        assert info.value.code == ErrorCode.INVALID_HANDLE
        with pytest.raises(TypeError):
            recorded.elapsed_time(1.5)
        gone = biren.Event()
        gone.record()
        gone.synchronize()
        gone.destroy()
        with pytest.raises(BirenError) as info:  # destroyed
            recorded.elapsed_time(gone)
        assert info.value.code == ErrorCode.INVALID_HANDLE
