"""Accelerator arrays and texture objects (birenMallocArray, birenCreateTextureObject): an
array of 32-bit float texels filled from host bytes, and a texture object reading it, whose
value a kernel passes to the header's fetch functions (birenTex2DFloat, ...)."""

from __future__ import annotations

from ctypes import byref, c_uint, c_ulonglong, c_void_p, create_string_buffer, sizeof
from typing import Optional, Tuple

from . import _library
from .device import init, lib
from .errors import check

FLOAT = 2  # birenChannelFormatKindFloat
HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2
ADDRESS_MODES = {"wrap": 0, "clamp": 1, "mirror": 2, "border": 3}


class Array:
    """A 2-D array (height 0: 1-D) of `width` x `height` float texels (birenMallocArray)."""

    def __init__(self, width: int, height: int = 0, surface: bool = False) -> None:
        init()
        self.width, self.height = width, height
        desc = lib().birenCreateChannelDesc(32, 0, 0, 0, FLOAT)
        h = c_void_p()
        check(lib().birenMallocArray(byref(h), byref(desc), width, height, 2 if surface else 0), "birenMallocArray")
        self.handle: Optional[int] = h.value

    def _rows(self) -> Tuple[int, int]:
        return self.width * 4, max(self.height, 1)

    def copy_from(self, data: bytes) -> None:
        """Fills the array from host bytes (rows of width float texels)."""
        row, rows = self._rows()
        buf = create_string_buffer(bytes(data), row * rows)
        check(lib().birenMemcpy2DToArray(self.handle, 0, 0, buf, row, row, rows, HOST_TO_DEVICE), "birenMemcpy2DToArray")

    def to_bytes(self) -> bytes:
        row, rows = self._rows()
        buf = create_string_buffer(row * rows)
        check(lib().birenMemcpy2DFromArray(buf, row, self.handle, 0, 0, row, rows, DEVICE_TO_HOST), "birenMemcpy2DFromArray")
        return buf.raw

    def info(self) -> Tuple[int, int, int]:
        """(width, height, depth) as birenArrayGetInfo reports them."""
        e = _library.Extent()
        flags = c_uint()
        check(lib().birenArrayGetInfo(None, byref(e), byref(flags), self.handle), "birenArrayGetInfo")
        return e.width, e.height, e.depth

    def free(self) -> None:
        if self.handle is not None:
            check(lib().birenFreeArray(self.handle), "birenFreeArray")
            self.handle = None


class TextureObject:
    """A texture object on an Array (birenCreateTextureObject): `value` is what kernels fetch
    through."""

    def __init__(self, array: Array, linear: bool = False, address: str = "clamp", normalized: bool = False) -> None:
        res = _library.ResourceDesc()
        res.resType = 0  # birenResourceTypeArray
        res.ptr = array.handle
        tex = _library.TextureDesc()
        for i in range(3):
            tex.addressMode[i] = ADDRESS_MODES[address]
        tex.filterMode = 1 if linear else 0
        tex.normalizedCoords = 1 if normalized else 0
        v = c_ulonglong()
        check(lib().birenCreateTextureObject(byref(v), byref(res), byref(tex), None), "birenCreateTextureObject")
        self.value: Optional[int] = v.value

    def resource_array(self) -> Optional[int]:
        """The array birenGetTextureObjectResourceDesc reports."""
        res = _library.ResourceDesc()
        check(lib().birenGetTextureObjectResourceDesc(byref(res), self.value), "birenGetTextureObjectResourceDesc")
        assert sizeof(res) == 64
        return res.ptr

    def destroy(self) -> None:
        if self.value is not None:
            check(lib().birenDestroyTextureObject(self.value), "birenDestroyTextureObject")
            self.value = None
