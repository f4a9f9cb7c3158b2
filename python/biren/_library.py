"""Finding and loading libbiren_runtime, and the C types and prototypes of every export.

The library is looked for, in order:
  1. the path in the environment variable BIREN_LIBRARY (if set, nowhere else);
  2. the packaged copy: libbiren_runtime.so in this package's directory, where the wheel puts
     it (pip install ./python);
  3. the build tree: target/release (then target/debug) of the repository this package sits
     in (python/biren -> ../../target), for a checkout used with PYTHONPATH=python;
  4. the installed copy (make install): the dynamic loader's search
     (ctypes.util.find_library), then lib/ under common prefixes (/usr/local, /usr,
     sys.prefix, ~/.local, /opt/biren).
It is loaded with RTLD_GLOBAL, so that kernels compiled from C with the header's inline
built-ins (which call birenKernelContext) resolve against it without being linked to it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import sysconfig
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_double,
    c_float,
    c_int,
    c_size_t,
    c_uint,
    c_ulonglong,
    c_void_p,
)
from typing import Any, Dict, Iterator, List, Optional, Tuple

SONAME = "libbiren_runtime.so.1"
DEV_NAME = "libbiren_runtime.so"
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The repository, when the package is used from a checkout (python/biren).
REPOSITORY = os.path.dirname(os.path.dirname(PACKAGE_DIR))


class LibraryNotFoundError(OSError):
    """libbiren_runtime could not be loaded; the message lists every place that was tried."""


# ---- C types --------------------------------------------------------------------------------


class Dim3(Structure):
    """`dim3`: three unsigned extents. Compares equal to a tuple (x, y, z)."""

    _fields_ = [("x", c_uint), ("y", c_uint), ("z", c_uint)]

    x: int
    y: int
    z: int

    def __init__(self, x: int = 1, y: int = 1, z: int = 1) -> None:
        super().__init__(x, y, z)

    def __iter__(self) -> Iterator[int]:
        return iter((self.x, self.y, self.z))

    def __eq__(self, other: object) -> bool:
        try:
            return tuple(self) == tuple(other)  # type: ignore[arg-type]
        except TypeError:
            return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return "Dim3(%d, %d, %d)" % (self.x, self.y, self.z)


class DeviceProp(Structure):
    """`birenDeviceProp`."""

    _fields_ = [
        ("name", c_char * 256),
        ("totalGlobalMem", c_size_t),
        ("sharedMemPerBlock", c_size_t),
        ("maxThreadsPerBlock", c_int),
        ("maxThreadsDim", c_int * 3),
        ("maxGridSize", c_int * 3),
        ("multiProcessorCount", c_int),
        ("asyncEngineCount", c_int),
        ("concurrentKernels", c_int),
        ("streamPrioritiesSupported", c_int),
    ]


class PointerAttributes(Structure):
    """`birenPointerAttributes`."""

    _fields_ = [
        ("type", c_int),
        ("device", c_int),
        ("devicePointer", c_void_p),
        ("hostPointer", c_void_p),
        ("basePointer", c_void_p),
        ("size", c_size_t),
    ]


class KernelCtx(Structure):
    """`birenKernelCtx`: what the calling kernel thread sees."""

    _fields_ = [
        ("threadIdx", Dim3),
        ("blockIdx", Dim3),
        ("blockDim", Dim3),
        ("gridDim", Dim3),
        ("shared", c_void_p),
    ]


class PitchedPtr(Structure):
    """`birenPitchedPtr` (passed by value to birenMemset3D)."""

    _fields_ = [("ptr", c_void_p), ("pitch", c_size_t), ("xsize", c_size_t), ("ysize", c_size_t)]


class Extent(Structure):
    """`birenExtent` (passed by value to birenMalloc3D, birenMemset3D)."""

    _fields_ = [("width", c_size_t), ("height", c_size_t), ("depth", c_size_t)]

    width: int
    height: int
    depth: int


class ChannelFormatDesc(Structure):
    """`birenChannelFormatDesc`: bits of channels x, y, z, w and their kind (returned by value)."""

    _fields_ = [("x", c_int), ("y", c_int), ("z", c_int), ("w", c_int), ("f", c_int)]

    x: int
    y: int
    z: int
    w: int
    f: int


class ResourceDesc(Structure):
    """`birenResourceDesc`: resType, then the union res (its largest member, res.pitch2D, as
    raw words: devPtr/array, the format's five ints, width/sizeInBytes, height, pitchInBytes)."""

    _fields_ = [
        ("resType", c_int),
        ("ptr", c_void_p),
        ("desc", ChannelFormatDesc),
        ("width", c_size_t),
        ("height", c_size_t),
        ("pitchInBytes", c_size_t),
    ]

    resType: int
    ptr: Optional[int]
    desc: ChannelFormatDesc
    width: int
    height: int
    pitchInBytes: int


class TextureDesc(Structure):
    """`birenTextureDesc`: address modes, filter and read mode, sRGB, border colour, ..."""

    _fields_ = [
        ("addressMode", c_int * 3),
        ("filterMode", c_int),
        ("readMode", c_int),
        ("sRGB", c_int),
        ("borderColor", c_float * 4),
        ("normalizedCoords", c_int),
        ("maxAnisotropy", c_uint),
        ("mipmapFilterMode", c_int),
        ("mipmapLevelBias", c_float),
        ("minMipmapLevelClamp", c_float),
        ("maxMipmapLevelClamp", c_float),
        ("disableTrilinearOptimization", c_int),
        ("seamlessCubemap", c_int),
    ]

    addressMode: Any
    filterMode: int
    readMode: int
    sRGB: int
    borderColor: Any
    normalizedCoords: int


class IpcMemHandle(Structure):
    """`birenIpcMemHandle_t` (passed by value to birenIpcOpenMemHandle)."""

    _fields_ = [("reserved", c_char * 64)]


KERNEL_T = CFUNCTYPE(None, POINTER(c_void_p))  # birenKernel_t: void (*)(void **args)
HOST_FN_T = CFUNCTYPE(None, c_void_p)  # birenHostFn_t: void (*)(void *userData)
VALIDATOR_CALLBACK_T = CFUNCTYPE(None, c_char_p, c_void_p)  # birenValidatorCallback_t

_err = c_int  # birenError_t, and every enum, crosses as an int
STREAM_CALLBACK_T = CFUNCTYPE(None, c_void_p, c_int, c_void_p)  # birenStreamCallback_t
BLOCK_SIZE_TO_SMEM_T = CFUNCTYPE(c_size_t, c_int)  # birenBlockSizeToDynamicSMemSize_t
_stream = c_void_p  # birenStream_t
_event = c_void_p  # birenEvent_t

# name: (restype, argtypes). Every export of include/biren_runtime.h.
PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    # control
    "birenInit": (_err, []),
    "birenDeviceReset": (_err, []),
    "birenDeviceSynchronize": (_err, []),
    "birenGetDeviceCount": (_err, [POINTER(c_int)]),
    "birenSetDevice": (_err, [c_int]),
    "birenGetDevice": (_err, [POINTER(c_int)]),
    "birenGetDeviceProperties": (_err, [POINTER(DeviceProp), c_int]),
    "birenDeviceGetStreamPriorityRange": (_err, [POINTER(c_int), POINTER(c_int)]),
    "birenDeviceSetSchedulingPolicy": (_err, [c_int]),
    "birenDeviceGetSchedulingPolicy": (_err, [POINTER(c_int)]),
    "birenRuntimeGetVersion": (_err, [POINTER(c_int)]),
    "birenGetErrorString": (c_char_p, [c_int]),
    "birenGetErrorName": (c_char_p, [c_int]),
    "birenGetLastError": (_err, []),
    "birenPeekAtLastError": (_err, []),
    "birenSetDeviceValidator": (_err, [c_int]),
    "birenSetRaceCheck": (_err, [c_int]),
    "birenSetValidatorCallback": (_err, [VALIDATOR_CALLBACK_T, c_void_p]),
    # events
    "birenEventCreate": (_err, [POINTER(_event)]),
    "birenEventCreateWithFlags": (_err, [POINTER(_event), c_uint]),
    "birenEventRecord": (_err, [_event, _stream]),
    "birenEventQuery": (_err, [_event]),
    "birenEventSynchronize": (_err, [_event]),
    "birenEventElapsedTime": (_err, [POINTER(c_float), _event, _event]),
    "birenEventDestroy": (_err, [_event]),
    # kernels
    "birenLaunchKernel": (_err, [KERNEL_T, Dim3, Dim3, POINTER(c_void_p), c_size_t, _stream]),
    "birenLaunchKernelArgs": (
        _err,
        [KERNEL_T, Dim3, Dim3, POINTER(c_void_p), POINTER(c_size_t), c_uint, c_size_t, _stream],
    ),
    "birenKernelRegister": (_err, [KERNEL_T, c_char_p, c_uint, POINTER(c_size_t)]),
    "birenKernelContext": (POINTER(KernelCtx), []),
    "birenThreadIdx": (Dim3, []),
    "birenBlockIdx": (Dim3, []),
    "birenBlockDim": (Dim3, []),
    "birenGridDim": (Dim3, []),
    "birenSharedMemory": (c_void_p, []),
    "birenSyncThreads": (None, []),
    "birenTrap": (None, []),
    # memory
    "birenMalloc": (_err, [POINTER(c_void_p), c_size_t]),
    "birenFree": (_err, [c_void_p]),
    "birenMallocHost": (_err, [POINTER(c_void_p), c_size_t]),
    "birenFreeHost": (_err, [c_void_p]),
    "birenMemcpy": (_err, [c_void_p, c_void_p, c_size_t, c_int]),
    "birenMemcpyAsync": (_err, [c_void_p, c_void_p, c_size_t, c_int, _stream]),
    "birenMemset": (_err, [c_void_p, c_int, c_size_t]),
    "birenMemsetAsync": (_err, [c_void_p, c_int, c_size_t, _stream]),
    "birenMemGetInfo": (_err, [POINTER(c_size_t), POINTER(c_size_t)]),
    "birenPointerGetAttributes": (_err, [POINTER(PointerAttributes), c_void_p]),
    # streams
    "birenStreamCreate": (_err, [POINTER(_stream)]),
    "birenStreamCreateWithFlags": (_err, [POINTER(_stream), c_uint]),
    "birenStreamCreateWithPriority": (_err, [POINTER(_stream), c_uint, c_int]),
    "birenStreamDestroy": (_err, [_stream]),
    "birenStreamSynchronize": (_err, [_stream]),
    "birenStreamQuery": (_err, [_stream]),
    "birenStreamGetPriority": (_err, [_stream, POINTER(c_int)]),
    "birenStreamGetFlags": (_err, [_stream, POINTER(c_uint)]),
    "birenStreamWaitEvent": (_err, [_stream, _event]),
    "birenStreamWaitEventWithFlags": (_err, [_stream, _event, c_uint]),
    "birenLaunchHostFunc": (_err, [_stream, HOST_FN_T, c_void_p]),
    # CUDA-compatible families (issue 13); struct pointers cross as void *.
    "birenGetDeviceProperties_v2": (_err, [c_void_p, c_int]),
    "birenDeviceGetAttribute": (_err, [POINTER(c_int), c_int, c_int]),
    "birenDriverGetVersion": (_err, [POINTER(c_int)]),
    "birenSetDeviceFlags": (_err, [c_uint]),
    "birenGetDeviceFlags": (_err, [POINTER(c_uint)]),
    "birenDeviceSetLimit": (_err, [c_int, c_size_t]),
    "birenDeviceGetLimit": (_err, [POINTER(c_size_t), c_int]),
    "birenFuncGetAttributes": (_err, [c_void_p, KERNEL_T]),
    "birenFuncSetAttribute": (_err, [KERNEL_T, c_int, c_int]),
    "birenFuncSetCacheConfig": (_err, [KERNEL_T, c_int]),
    "birenOccupancyMaxActiveBlocksPerMultiprocessor": (_err, [POINTER(c_int), KERNEL_T, c_int, c_size_t]),
    "birenOccupancyMaxActiveBlocksPerMultiprocessorWithFlags": (_err, [POINTER(c_int), KERNEL_T, c_int, c_size_t, c_uint]),
    "birenOccupancyMaxPotentialBlockSize": (_err, [POINTER(c_int), POINTER(c_int), KERNEL_T, c_size_t, c_int]),
    "birenOccupancyMaxPotentialBlockSizeVariableSMem": (_err, [POINTER(c_int), POINTER(c_int), KERNEL_T, BLOCK_SIZE_TO_SMEM_T, c_int]),
    "birenHostAlloc": (_err, [POINTER(c_void_p), c_size_t, c_uint]),
    "birenHostGetDevicePointer": (_err, [POINTER(c_void_p), c_void_p, c_uint]),
    "birenHostGetFlags": (_err, [POINTER(c_uint), c_void_p]),
    "birenHostRegister": (_err, [c_void_p, c_size_t, c_uint]),
    "birenHostUnregister": (_err, [c_void_p]),
    "birenMallocPitch": (_err, [POINTER(c_void_p), POINTER(c_size_t), c_size_t, c_size_t]),
    "birenMalloc3D": (_err, [POINTER(PitchedPtr), Extent]),
    "birenMemcpy2D": (_err, [c_void_p, c_size_t, c_void_p, c_size_t, c_size_t, c_size_t, c_int]),
    "birenMemcpy2DAsync": (_err, [c_void_p, c_size_t, c_void_p, c_size_t, c_size_t, c_size_t, c_int, _stream]),
    "birenMemset2D": (_err, [c_void_p, c_size_t, c_int, c_size_t, c_size_t]),
    "birenMemset2DAsync": (_err, [c_void_p, c_size_t, c_int, c_size_t, c_size_t, _stream]),
    "birenMemset3D": (_err, [PitchedPtr, c_int, Extent]),
    "birenMemset3DAsync": (_err, [PitchedPtr, c_int, Extent, _stream]),
    "birenMemcpy3D": (_err, [c_void_p]),
    # arrays, textures, surfaces
    "birenCreateChannelDesc": (ChannelFormatDesc, [c_int, c_int, c_int, c_int, c_int]),
    "birenMallocArray": (_err, [POINTER(c_void_p), POINTER(ChannelFormatDesc), c_size_t, c_size_t, c_uint]),
    "birenMalloc3DArray": (_err, [POINTER(c_void_p), POINTER(ChannelFormatDesc), Extent, c_uint]),
    "birenFreeArray": (_err, [c_void_p]),
    "birenArrayGetInfo": (_err, [POINTER(ChannelFormatDesc), POINTER(Extent), POINTER(c_uint), c_void_p]),
    "birenMemcpy2DToArray": (_err, [c_void_p, c_size_t, c_size_t, c_void_p, c_size_t, c_size_t, c_size_t, c_int]),
    "birenMemcpy2DToArrayAsync": (
        _err,
        [c_void_p, c_size_t, c_size_t, c_void_p, c_size_t, c_size_t, c_size_t, c_int, _stream],
    ),
    "birenMemcpy2DFromArray": (_err, [c_void_p, c_size_t, c_void_p, c_size_t, c_size_t, c_size_t, c_size_t, c_int]),
    "birenMemcpy2DFromArrayAsync": (
        _err,
        [c_void_p, c_size_t, c_void_p, c_size_t, c_size_t, c_size_t, c_size_t, c_int, _stream],
    ),
    "birenMemcpy2DArrayToArray": (
        _err,
        [c_void_p, c_size_t, c_size_t, c_void_p, c_size_t, c_size_t, c_size_t, c_size_t, c_int],
    ),
    "birenMemcpyToArray": (_err, [c_void_p, c_size_t, c_size_t, c_void_p, c_size_t, c_int]),
    "birenMemcpyToArrayAsync": (_err, [c_void_p, c_size_t, c_size_t, c_void_p, c_size_t, c_int, _stream]),
    "birenMemcpyFromArray": (_err, [c_void_p, c_void_p, c_size_t, c_size_t, c_size_t, c_int]),
    "birenMemcpyFromArrayAsync": (_err, [c_void_p, c_void_p, c_size_t, c_size_t, c_size_t, c_int, _stream]),
    "birenCreateTextureObject": (
        _err,
        [POINTER(c_ulonglong), POINTER(ResourceDesc), POINTER(TextureDesc), c_void_p],
    ),
    "birenDestroyTextureObject": (_err, [c_ulonglong]),
    "birenGetTextureObjectResourceDesc": (_err, [POINTER(ResourceDesc), c_ulonglong]),
    "birenGetTextureObjectTextureDesc": (_err, [POINTER(TextureDesc), c_ulonglong]),
    "birenCreateSurfaceObject": (_err, [POINTER(c_ulonglong), POINTER(ResourceDesc)]),
    "birenDestroySurfaceObject": (_err, [c_ulonglong]),
    "birenGetSurfaceObjectResourceDesc": (_err, [POINTER(ResourceDesc), c_ulonglong]),
    "birenTexInvalid": (None, [c_ulonglong]),
    "birenSurfInvalid": (None, [c_void_p, c_ulonglong, c_int, c_int, c_int, c_int]),
    "birenMemcpy3DAsync": (_err, [c_void_p, _stream]),
    "birenRegisterSymbol": (_err, [c_void_p, c_size_t, c_char_p]),
    "birenRegisterSharedSection": (_err, [c_void_p]),
    "birenUnregisterSharedSection": (_err, [c_void_p]),
    "birenGetSymbolAddress": (_err, [POINTER(c_void_p), c_void_p]),
    "birenGetSymbolSize": (_err, [POINTER(c_size_t), c_void_p]),
    "birenMemcpyToSymbol": (_err, [c_void_p, c_void_p, c_size_t, c_size_t, c_int]),
    "birenMemcpyFromSymbol": (_err, [c_void_p, c_void_p, c_size_t, c_size_t, c_int]),
    "birenMemcpyToSymbolAsync": (_err, [c_void_p, c_void_p, c_size_t, c_size_t, c_int, _stream]),
    "birenMemcpyFromSymbolAsync": (_err, [c_void_p, c_void_p, c_size_t, c_size_t, c_int, _stream]),
    "birenMallocAsync": (_err, [POINTER(c_void_p), c_size_t, _stream]),
    "birenMallocFromPoolAsync": (_err, [POINTER(c_void_p), c_size_t, c_void_p, _stream]),
    "birenFreeAsync": (_err, [c_void_p, _stream]),
    "birenDeviceGetDefaultMemPool": (_err, [POINTER(c_void_p), c_int]),
    "birenDeviceGetMemPool": (_err, [POINTER(c_void_p), c_int]),
    "birenDeviceSetMemPool": (_err, [c_int, c_void_p]),
    "birenMemPoolCreate": (_err, [POINTER(c_void_p), c_void_p]),
    "birenMemPoolDestroy": (_err, [c_void_p]),
    "birenMemPoolSetAttribute": (_err, [c_void_p, c_int, c_void_p]),
    "birenMemPoolGetAttribute": (_err, [c_void_p, c_int, c_void_p]),
    "birenMemPoolTrimTo": (_err, [c_void_p, c_size_t]),
    "birenMemPoolSetAccess": (_err, [c_void_p, c_void_p, c_size_t]),
    "birenMemPoolGetAccess": (_err, [POINTER(c_int), c_void_p, c_void_p]),
    "birenMallocManaged": (_err, [POINTER(c_void_p), c_size_t, c_uint]),
    "birenMemPrefetchAsync": (_err, [c_void_p, c_size_t, c_int, _stream]),
    "birenMemAdvise": (_err, [c_void_p, c_size_t, c_int, c_int]),
    "birenStreamAttachMemAsync": (_err, [_stream, c_void_p, c_size_t, c_uint]),
    "birenDeviceCanAccessPeer": (_err, [POINTER(c_int), c_int, c_int]),
    "birenDeviceEnablePeerAccess": (_err, [c_int, c_uint]),
    "birenDeviceDisablePeerAccess": (_err, [c_int]),
    "birenDeviceGetP2PAttribute": (_err, [POINTER(c_int), c_int, c_int, c_int]),
    "birenMemcpyPeer": (_err, [c_void_p, c_int, c_void_p, c_int, c_size_t]),
    "birenMemcpyPeerAsync": (_err, [c_void_p, c_int, c_void_p, c_int, c_size_t, _stream]),
    "birenStreamAddCallback": (_err, [_stream, STREAM_CALLBACK_T, c_void_p, c_uint]),
    "birenStreamGetDevice": (_err, [_stream, POINTER(c_int)]),
    "birenEventRecordWithFlags": (_err, [_event, _stream, c_uint]),
    "birenProfilerStart": (_err, []),
    "birenProfilerStop": (_err, []),
    "birenRangePush": (_err, [c_char_p]),
    "birenRangePop": (_err, []),
    "birenIpcGetMemHandle": (_err, [POINTER(IpcMemHandle), c_void_p]),
    "birenIpcOpenMemHandle": (_err, [POINTER(c_void_p), IpcMemHandle, c_uint]),
    "birenIpcCloseMemHandle": (_err, [c_void_p]),
    # graphs (handles and parameter structs passed as opaque pointers)
    "birenGraphCreate": (_err, [POINTER(c_void_p), c_uint]),
    "birenGraphAddKernelNode": (_err, [POINTER(c_void_p), c_void_p, POINTER(c_void_p), c_size_t, c_void_p]),
    "birenGraphAddMemcpyNode": (_err, [POINTER(c_void_p), c_void_p, POINTER(c_void_p), c_size_t, c_void_p]),
    "birenGraphAddMemcpyNode1D": (
        _err,
        [POINTER(c_void_p), c_void_p, POINTER(c_void_p), c_size_t, c_void_p, c_void_p, c_size_t, c_int],
    ),
    "birenGraphAddMemsetNode": (_err, [POINTER(c_void_p), c_void_p, POINTER(c_void_p), c_size_t, c_void_p]),
    "birenGraphAddHostNode": (_err, [POINTER(c_void_p), c_void_p, POINTER(c_void_p), c_size_t, c_void_p]),
    "birenGraphAddEventRecordNode": (_err, [POINTER(c_void_p), c_void_p, POINTER(c_void_p), c_size_t, _event]),
    "birenGraphAddEventWaitNode": (_err, [POINTER(c_void_p), c_void_p, POINTER(c_void_p), c_size_t, _event]),
    "birenGraphAddChildGraphNode": (_err, [POINTER(c_void_p), c_void_p, POINTER(c_void_p), c_size_t, c_void_p]),
    "birenGraphAddEmptyNode": (_err, [POINTER(c_void_p), c_void_p, POINTER(c_void_p), c_size_t]),
    "birenGraphAddDependencies": (_err, [c_void_p, POINTER(c_void_p), POINTER(c_void_p), c_size_t]),
    "birenGraphRemoveDependencies": (_err, [c_void_p, POINTER(c_void_p), POINTER(c_void_p), c_size_t]),
    "birenGraphGetNodes": (_err, [c_void_p, POINTER(c_void_p), POINTER(c_size_t)]),
    "birenGraphGetRootNodes": (_err, [c_void_p, POINTER(c_void_p), POINTER(c_size_t)]),
    "birenGraphGetEdges": (_err, [c_void_p, POINTER(c_void_p), POINTER(c_void_p), POINTER(c_size_t)]),
    "birenGraphNodeGetType": (_err, [c_void_p, POINTER(c_int)]),
    "birenGraphClone": (_err, [POINTER(c_void_p), c_void_p]),
    "birenGraphInstantiate": (_err, [POINTER(c_void_p), c_void_p, ctypes.c_ulonglong]),
    "birenGraphInstantiateWithFlags": (_err, [POINTER(c_void_p), c_void_p, ctypes.c_ulonglong]),
    "birenGraphLaunch": (_err, [c_void_p, _stream]),
    "birenGraphExecKernelNodeSetParams": (_err, [c_void_p, c_void_p, c_void_p]),
    "birenGraphExecMemcpyNodeSetParams": (_err, [c_void_p, c_void_p, c_void_p]),
    "birenGraphMemcpyNodeSetParams": (_err, [c_void_p, c_void_p]),
    "birenGraphExecUpdate": (_err, [c_void_p, c_void_p, c_void_p]),
    "birenGraphDestroy": (_err, [c_void_p]),
    "birenGraphExecDestroy": (_err, [c_void_p]),
    "birenGraphDebugDotPrint": (_err, [c_void_p, c_char_p, c_uint]),
    # stream capture
    "birenStreamBeginCapture": (_err, [_stream, c_int]),
    "birenStreamEndCapture": (_err, [_stream, POINTER(c_void_p)]),
    "birenStreamIsCapturing": (_err, [_stream, POINTER(c_int)]),
    "birenStreamGetCaptureInfo": (
        _err,
        [_stream, POINTER(c_int), POINTER(ctypes.c_ulonglong), POINTER(c_void_p), POINTER(c_void_p), POINTER(c_size_t)],
    ),
    "birenThreadExchangeStreamCaptureMode": (_err, [POINTER(c_int)]),
    # kernel form, cooperative launch, warps, atomics (issue 12)
    "birenLaunchCooperativeKernel": (_err, [KERNEL_T, Dim3, Dim3, POINTER(c_void_p), c_size_t, _stream]),
    "birenKernelRegisterBlock": (_err, [KERNEL_T, c_char_p, c_uint, POINTER(c_size_t), c_void_p]),
    "birenKernelRegisterBlocks": (_err, [KERNEL_T, c_char_p, c_uint, POINTER(c_size_t), c_void_p, c_void_p]),
    # region form (biren-cc)
    "birenKernelRegisterRegions": (_err, [KERNEL_T, c_void_p]),
    "birenKernelRegisterStub": (_err, [c_void_p, KERNEL_T, c_char_p, c_uint, POINTER(c_size_t), c_void_p, c_void_p]),
    "birenRegionScratch": (c_void_p, [c_size_t]),
    "birenRegionDivergence": (None, [c_char_p, c_char_p, c_uint, c_uint, Dim3]),
    "birenSyncThreadsLoop": (None, [c_void_p]),
    "birenTrapLoop": (None, [c_void_p]),
    "birenAssertFail": (None, [c_char_p, c_char_p, c_uint, c_char_p]),
    "birenGridSync": (None, []),
    "birenGridSyncLoop": (None, [c_void_p]),
    "birenWarpExchange": (c_ulonglong, [c_void_p, c_uint, c_int, c_ulonglong, c_int, c_int]),
    "birenSyncWarp": (None, [c_uint]),
    "birenBallotSync": (c_uint, [c_uint, c_int]),
    "birenAnySync": (c_int, [c_uint, c_int]),
    "birenAllSync": (c_int, [c_uint, c_int]),
    "birenActiveMask": (c_uint, []),
    "birenActiveMaskLoop": (c_uint, [c_void_p]),
    "birenLaneId": (c_uint, []),
    "birenThreadFence": (None, []),
    "birenThreadFenceBlock": (None, []),
    "birenAtomicAddInt": (c_int, [POINTER(c_int), c_int]),
    "birenAtomicAddUint": (c_uint, [POINTER(c_uint), c_uint]),
    "birenAtomicAddUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong]),
    "birenAtomicSubInt": (c_int, [POINTER(c_int), c_int]),
    "birenAtomicSubUint": (c_uint, [POINTER(c_uint), c_uint]),
    "birenAtomicSubUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong]),
    "birenAtomicExchInt": (c_int, [POINTER(c_int), c_int]),
    "birenAtomicExchUint": (c_uint, [POINTER(c_uint), c_uint]),
    "birenAtomicExchUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong]),
    "birenAtomicMinInt": (c_int, [POINTER(c_int), c_int]),
    "birenAtomicMinUint": (c_uint, [POINTER(c_uint), c_uint]),
    "birenAtomicMinUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong]),
    "birenAtomicMaxInt": (c_int, [POINTER(c_int), c_int]),
    "birenAtomicMaxUint": (c_uint, [POINTER(c_uint), c_uint]),
    "birenAtomicMaxUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong]),
    "birenAtomicIncInt": (c_int, [POINTER(c_int), c_int]),
    "birenAtomicIncUint": (c_uint, [POINTER(c_uint), c_uint]),
    "birenAtomicIncUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong]),
    "birenAtomicDecInt": (c_int, [POINTER(c_int), c_int]),
    "birenAtomicDecUint": (c_uint, [POINTER(c_uint), c_uint]),
    "birenAtomicDecUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong]),
    "birenAtomicAndInt": (c_int, [POINTER(c_int), c_int]),
    "birenAtomicAndUint": (c_uint, [POINTER(c_uint), c_uint]),
    "birenAtomicAndUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong]),
    "birenAtomicOrInt": (c_int, [POINTER(c_int), c_int]),
    "birenAtomicOrUint": (c_uint, [POINTER(c_uint), c_uint]),
    "birenAtomicOrUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong]),
    "birenAtomicXorInt": (c_int, [POINTER(c_int), c_int]),
    "birenAtomicXorUint": (c_uint, [POINTER(c_uint), c_uint]),
    "birenAtomicXorUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong]),
    "birenAtomicCASInt": (c_int, [POINTER(c_int), c_int, c_int]),
    "birenAtomicCASUint": (c_uint, [POINTER(c_uint), c_uint, c_uint]),
    "birenAtomicCASUll": (c_ulonglong, [POINTER(c_ulonglong), c_ulonglong, c_ulonglong]),
    "birenAtomicAddFloat": (c_float, [POINTER(c_float), c_float]),
    "birenAtomicExchFloat": (c_float, [POINTER(c_float), c_float]),
    "birenAtomicAddDouble": (c_double, [POINTER(c_double), c_double]),
    "birenAtomicExchDouble": (c_double, [POINTER(c_double), c_double]),
}

# Calls that never block and never call back into Python: bound through a PyDLL handle so that
# they keep the GIL (a Python kernel calls the built-ins once per thread; releasing and taking
# the GIL around each would make the compute units fight over it).
NO_GIL_RELEASE = (
    "birenThreadIdx",
    "birenBlockIdx",
    "birenBlockDim",
    "birenGridDim",
    "birenSharedMemory",
    "birenKernelContext",
    "birenGetErrorName",
    "birenGetErrorString",
    "birenGetLastError",
    "birenPeekAtLastError",
    "birenRuntimeGetVersion",
)


class Library:
    """The loaded library: `lib.birenMalloc(...)` etc. with prototypes declared; `path`."""

    path: str

    def __init__(self, path: str) -> None:
        mode = getattr(os, "RTLD_GLOBAL", ctypes.RTLD_GLOBAL) | getattr(os, "RTLD_NOW", 2)
        self.path = path
        self.cdll = ctypes.CDLL(path, mode=mode)
        self.pydll = ctypes.PyDLL(path, mode=mode)
        for name, (restype, argtypes) in PROTOTYPES.items():
            handle = self.pydll if name in NO_GIL_RELEASE else self.cdll
            try:
                fn = getattr(handle, name)
            except AttributeError:
                raise LibraryNotFoundError(
                    "%s is not a usable BIREN runtime library: it does not export %s" % (path, name)
                ) from None
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)

    # The exports are attributes set above; this tells type checkers they exist (Any).
    def __getattr__(self, name: str) -> Any:
        raise AttributeError("%s is not an export of the BIREN runtime" % name)

    def __repr__(self) -> str:
        return "<biren.Library %s>" % self.path


def _common_prefixes() -> List[str]:
    prefixes = ["/usr/local", "/usr", sys.prefix, os.path.expanduser("~/.local"), "/opt/biren"]
    seen = []
    for p in prefixes:
        if p and p not in seen:
            seen.append(p)
    return seen


def _lib_dirs(prefix: str) -> List[str]:
    dirs = [os.path.join(prefix, "lib"), os.path.join(prefix, "lib64")]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        dirs.append(os.path.join(prefix, "lib", multiarch))
    return dirs


def candidates() -> List[Tuple[str, Optional[str]]]:
    """The places to look, in order: (description, path or file name; None: not found)."""
    env = os.environ.get("BIREN_LIBRARY")
    if env:
        return [("BIREN_LIBRARY", env)]
    found: List[Tuple[str, Optional[str]]] = [("packaged", os.path.join(PACKAGE_DIR, DEV_NAME))]
    for profile in ("release", "debug"):
        found.append(("build tree", os.path.join(REPOSITORY, "target", profile, DEV_NAME)))
    # None when the loader's cache does not know the library.
    found.append(("installed (loader's search)", ctypes.util.find_library("biren_runtime")))
    for prefix in _common_prefixes():
        for d in _lib_dirs(prefix):
            for f in (SONAME, DEV_NAME):
                found.append(("installed under " + prefix, os.path.join(d, f)))
    return found


def get_include() -> str:
    """The directory holding biren_runtime.h, to compile kernels (`cc -I...`): the header
    packaged with the wheel, else the repository's include/ for a checkout."""
    for d in (os.path.join(PACKAGE_DIR, "include"), os.path.join(REPOSITORY, "include")):
        if os.path.isfile(os.path.join(d, "biren_runtime.h")):
            return d
    raise FileNotFoundError(
        "biren_runtime.h is neither packaged in %s nor in a repository at %s"
        % (PACKAGE_DIR, REPOSITORY)
    )


_lock = threading.Lock()
_library: Optional[Library] = None


def load() -> Library:
    """Loads the library once (see the module docstring for where it looks) and returns it."""
    global _library
    if _library is not None:
        return _library
    with _lock:
        if _library is not None:
            return _library
        tried = []
        for what, path in candidates():
            if path is None:
                tried.append("  %s: not found" % what)
                continue
            if os.sep in path and not os.path.exists(path):
                tried.append("  %s: %s (no such file)" % (what, path))
                continue
            try:
                _library = Library(path)
                return _library
            except OSError as e:
                tried.append("  %s: %s (%s)" % (what, path, e))
        raise LibraryNotFoundError(
            "cannot load the BIREN runtime library %s. Looked in:\n%s\n"
            "Set BIREN_LIBRARY to the library's path, install it (make install PREFIX=...), "
            "or build it (make lib)." % (DEV_NAME, "\n".join(tried))
        )
