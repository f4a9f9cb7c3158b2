"""Every public class has a repr that says what the object is and its state."""

import re

import pytest

import biren
from biren import BirenError, ErrorCode


def test_device_buffer_reprs():
    with biren.DeviceBuffer(64) as raw:
        assert re.fullmatch(r"<biren\.DeviceBuffer nbytes=64 at 0x[0-9a-f]+>", repr(raw))
        assert re.fullmatch(
            r"<biren\.DeviceBuffer nbytes=8 view at 0x[0-9a-f]+>", repr(raw.view(8, 8))
        )
    assert repr(raw) == "<biren.DeviceBuffer nbytes=64 freed>"
    with biren.DeviceBuffer(0) as empty:
        assert repr(empty) == "<biren.DeviceBuffer nbytes=0 empty>"


def test_typed_device_buffer_repr():
    np = pytest.importorskip("numpy")
    with biren.DeviceBuffer.empty((2, 3), np.float32) as buf:
        assert re.fullmatch(
            r"<biren\.DeviceBuffer shape=\(2, 3\) dtype=float32 nbytes=24 at 0x[0-9a-f]+>",
            repr(buf),
        )


def test_host_buffer_repr():
    h = biren.HostBuffer(32)
    assert re.fullmatch(r"<biren\.HostBuffer nbytes=32 at 0x[0-9a-f]+>", repr(h))
    h.free()
    assert repr(h) == "<biren.HostBuffer freed>"


def test_stream_and_event_reprs():
    with biren.Stream() as s, biren.Stream(non_blocking=True) as nb:
        assert re.fullmatch(r"<biren\.Stream 0x[0-9a-f]+>", repr(s))
        assert re.fullmatch(r"<biren\.Stream 0x[0-9a-f]+ non_blocking>", repr(nb))
    assert repr(s) == "<biren.Stream destroyed>"
    with biren.Event() as e, biren.Event(timing=False) as untimed:
        assert re.fullmatch(r"<biren\.Event 0x[0-9a-f]+ timing>", repr(e))
        assert re.fullmatch(r"<biren\.Event 0x[0-9a-f]+>", repr(untimed))
    assert repr(e) == "<biren.Event destroyed>"


def test_kernel_repr(kernels):
    assert repr(biren.Kernel(kernels.vector_add)) == "<biren.Kernel vector_add (C)>"

    def probe(args):
        pass

    assert repr(biren.Kernel(probe, name="probe")) == "<biren.Kernel probe (Python)>"


def test_error_reprs():
    e = BirenError(ErrorCode.OUT_OF_BOUNDS, "birenMemcpy")
    assert repr(e) == "BirenError(OUT_OF_BOUNDS, call='birenMemcpy')"
    assert repr(BirenError(4242)) == "BirenError(4242, call=None)"
    k = biren.KernelError("saxpy", ZeroDivisionError("x"))
    assert repr(k).startswith("KernelError(kernel='saxpy'")


def test_value_reprs():
    assert repr(biren.Dim3(4, 2)) == "Dim3(4, 2, 1)"
    assert repr(biren.lib()).startswith("<biren.Library /")
    props = repr(biren.device_properties())
    assert props.startswith("DeviceProperties(name=") and "multiProcessorCount=" in props
    with biren.DeviceBuffer(16) as buf:
        info = repr(biren.pointer_attributes(buf))
        assert info.startswith("PointerInfo(type='device'") and "size=16" in info
