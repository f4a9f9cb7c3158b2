"""Error codes cross from C to Python exceptions with their code, name and text."""

import ctypes

import pytest

import biren
from biren import BirenError, ErrorCode


def test_every_error_code_has_the_library_name():
    for code in ErrorCode:
        expected = "BIREN_SUCCESS" if code == ErrorCode.SUCCESS else "BIREN_ERROR_" + code.name
        assert biren.error_name(code) == expected
        assert biren.error_string(code)


def test_unknown_codes_still_have_a_name_and_text():
    assert biren.error_name(12345) == "BIREN_ERROR_UNRECOGNIZED"
    assert biren.error_string(-1)
    e = BirenError(12345, "someCall")
    assert e.code == 12345 and e.name == "BIREN_ERROR_UNRECOGNIZED"


def test_an_out_of_bounds_copy_raises_with_code_name_and_text_and_writes_nothing():
    biren.get_last_error()
    with biren.DeviceBuffer(16) as buf:
        buf.copy_from(b"\x07" * 16)
        with pytest.raises(BirenError) as info:
            buf.copy_from(b"\x01" * 17)
        e = info.value
        assert e.code == ErrorCode.OUT_OF_BOUNDS
        assert e.name == "BIREN_ERROR_OUT_OF_BOUNDS"
        assert e.text == biren.error_string(ErrorCode.OUT_OF_BOUNDS)
        assert e.call == "birenMemcpy"
        assert "BIREN_ERROR_OUT_OF_BOUNDS" in str(e) and "birenMemcpy" in str(e)
        assert buf.to_bytes() == b"\x07" * 16
    # The failing call set this thread's last error; get returns and clears it.
    assert biren.peek_at_last_error() == ErrorCode.OUT_OF_BOUNDS
    assert biren.get_last_error() == ErrorCode.OUT_OF_BOUNDS
    assert biren.get_last_error() == ErrorCode.SUCCESS


def test_a_double_free_is_an_invalid_device_pointer():
    buf = biren.DeviceBuffer(64)
    ptr = buf.ptr
    buf.free()
    buf.free()  # the wrapper frees once
    assert biren.lib().birenFree(ptr) == ErrorCode.INVALID_DEVICE_POINTER
    with pytest.raises(BirenError) as info:
        biren.check(biren.lib().birenFree(ptr), "birenFree")
    assert info.value.code == ErrorCode.INVALID_DEVICE_POINTER


def test_a_bad_launch_configuration_is_reported(kernels):
    k = biren.Kernel(kernels.vector_add)
    with pytest.raises(BirenError) as info:
        k.launch(1, 2048)
    assert info.value.code == ErrorCode.INVALID_CONFIGURATION
    with pytest.raises(BirenError) as info:
        k.launch(0, 1)
    assert info.value.code == ErrorCode.INVALID_CONFIGURATION


def test_an_invalid_device_is_reported():
    with pytest.raises(BirenError) as info:
        biren.set_device(biren.device_count() + 7)
    assert info.value.code == ErrorCode.INVALID_DEVICE


def test_the_raw_functions_return_codes():
    lib = biren.lib()
    assert lib.birenGetDeviceCount(None) == ErrorCode.INVALID_VALUE
    n = ctypes.c_int()
    assert lib.birenGetDeviceCount(ctypes.byref(n)) == ErrorCode.SUCCESS and n.value >= 1
