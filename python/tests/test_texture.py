"""Arrays and texture objects from Python: create, fill, read back, query, destroy; errors."""

import struct

import pytest

import biren
from biren.texture import Array, TextureObject


def test_array_and_texture_object():
    a = Array(4, 3)
    assert a.info() == (4, 3, 0)
    data = struct.pack("12f", *[float(i) for i in range(12)])
    a.copy_from(data)
    assert a.to_bytes() == data
    t = TextureObject(a, linear=True)
    assert t.value and t.resource_array() == a.handle
    value = t.value
    t.destroy()
    with pytest.raises(biren.BirenError) as e:
        biren.check(biren.lib().birenDestroyTextureObject(value), "birenDestroyTextureObject")
    assert "INVALID_HANDLE" in str(e.value)
    a.free()
    with pytest.raises(biren.BirenError):
        a.handle = 12345
        a.info()
