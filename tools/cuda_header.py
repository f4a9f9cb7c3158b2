#!/usr/bin/env python3
"""Writes include/cuda/cuda_runtime_api.h: CUDA's runtime API under CUDA's names over BIREN's C API.

The mechanical part comes from include/biren_runtime.h: every type, enumerator, flag, error code
and runtime call BIREN has gets CUDA's name (biren -> cuda, BIREN_ERROR_FOO_BAR ->
cudaErrorFooBar, with CUDA's few irregular names); calls become inline wrappers that start the
runtime on first use (CUDA has no init call). The hand-written part is what CUDA spells
differently: cudaDeviceProp (CUDA's layout), cudaKernelNodeParams (func is a void *), the
3-parameter cudaStreamWaitEvent, versions, error names and strings, and the calls BIREN does not
have, declared so that a program calling one fails to compile naming it.

`python3 tools/cuda_header.py` rewrites the header (`make header` runs it after rendering
biren_runtime.h); `--check` exits 1 when the committed header differs from what this script makes
(run by `make test-cuda`)."""
import re
import sys

HEADER = "include/biren_runtime.h"
OUT = "include/cuda/cuda_runtime_api.h"
CUDART_VERSION = 12040

# BIREN calls with no CUDA name (BIREN's own, kernel-side, registration) or wrapped by hand below.
NOT_WRAPPED = {
    "birenInit", "birenSetDeviceValidator", "birenSetRaceCheck", "birenSetValidatorCallback",
    "birenDeviceSetSchedulingPolicy", "birenDeviceGetSchedulingPolicy", "birenLaunchKernelArgs",
    "birenKernelRegisterBlock", "birenKernelRegisterBlocks", "birenKernelRegister",
    "birenKernelRegisterRegions", "birenSyncThreads", "birenSyncThreadsLoop", "birenGridSync",
    "birenGridSyncLoop", "birenTrap", "birenTrapLoop", "birenAssertFail", "birenRegionScratch",
    "birenRegionDivergence", "birenRegisterSymbol", "birenRegisterSharedSection",
    "birenUnregisterSharedSection", "birenWarpExchange", "birenSyncWarp", "birenBallotSync",
    "birenAnySync", "birenAllSync", "birenActiveMask", "birenActiveMaskLoop", "birenLaneId",
    "birenKernelContext", "birenThreadIdx", "birenBlockIdx", "birenBlockDim", "birenGridDim",
    "birenSharedMemory", "birenRangePush", "birenRangePop", "birenStreamWaitEventWithFlags",
    # by hand:
    "birenGetDeviceProperties", "birenGetDeviceProperties_v2", "birenStreamWaitEvent",
    "birenGetErrorString", "birenGetErrorName", "birenRuntimeGetVersion",
    "birenDriverGetVersion", "birenGraphAddKernelNode", "birenGraphExecKernelNodeSetParams",
}
# Calls that work before birenInit (CUDA's never start the runtime either).
NO_INIT = {"birenGetLastError", "birenPeekAtLastError", "birenCreateChannelDesc"}
# Types that are BIREN's own (kernel ABI, callbacks of BIREN-only calls) or defined by hand.
TYPES_NOT_ALIASED = {
    "birenKernelCtx", "birenKernelLoop", "birenKernelBlock_t", "birenKernelBlocks_t",
    "birenSharedSectionBounds_t", "birenValidatorCallback_t", "birenKernel_t", "birenDeviceProp",
    "birenKernelNodeParams", "birenStreamCaptureMode_int", "birenSchedulingPolicy",
    "birenError_t",
}
# C++ default arguments CUDA's header gives (its __dv).
DEFAULTS = {
    "birenEventRecord": {"stream": "0"},
    "birenEventRecordWithFlags": {"stream": "0", "flags": "0"},
    "birenMemcpyAsync": {"stream": "0"},
    "birenMemsetAsync": {"stream": "0"},
    "birenMemcpy2DAsync": {"stream": "0"},
    "birenMemset2DAsync": {"stream": "0"},
    "birenMemset3DAsync": {"stream": "0"},
    "birenMemcpy3DAsync": {"stream": "0"},
    "birenMemcpyPeerAsync": {"stream": "0"},
    "birenMemcpyToSymbol": {"offset": "0", "kind": "cudaMemcpyHostToDevice"},
    "birenMemcpyFromSymbol": {"offset": "0", "kind": "cudaMemcpyDeviceToHost"},
    "birenMemcpyToSymbolAsync": {"offset": "0", "kind": "cudaMemcpyHostToDevice", "stream": "0"},
    "birenMemcpyFromSymbolAsync": {"offset": "0", "kind": "cudaMemcpyDeviceToHost", "stream": "0"},
    "birenMallocManaged": {"flags": "cudaMemAttachGlobal"},
    "birenStreamAttachMemAsync": {"length": "0", "flags": "cudaMemAttachSingle"},
    "birenMemPrefetchAsync": {"stream": "0"},
    "birenMallocArray": {"height": "0", "flags": "0"},
    "birenMalloc3DArray": {"flags": "0"},
    "birenMemcpyToArrayAsync": {"stream": "0"},
    "birenMemcpyFromArrayAsync": {"stream": "0"},
    "birenMemcpy2DToArrayAsync": {"stream": "0"},
    "birenMemcpy2DFromArrayAsync": {"stream": "0"},
    "birenGraphInstantiate": {"flags": "0"},
    "birenGraphInstantiateWithFlags": {"flags": "0"},
    "birenStreamGetCaptureInfo": {"id_out": "0", "graph_out": "0", "dependencies_out": "0",
                                  "numDependencies_out": "0"},
}
# BIREN error names whose CUDA name is not the mechanical one.
ERROR_NAMES = {
    "OUT_OF_MEMORY": "cudaErrorMemoryAllocation",
    "NOT_INITIALIZED": "cudaErrorInitializationError",
    "INVALID_HANDLE": "cudaErrorInvalidResourceHandle",
}
# CUDA 12's error codes (driver_types.h), name: CUDA's value. Those BIREN has take BIREN's value;
# the others get CUDA's value when BIREN does not use it, else a free one (see errors()).
CUDA_ERRORS = """Success 0 InvalidValue 1 MemoryAllocation 2 InitializationError 3 CudartUnloading 4
ProfilerDisabled 5 ProfilerNotInitialized 6 ProfilerAlreadyStarted 7 ProfilerAlreadyStopped 8
InvalidConfiguration 9 InvalidPitchValue 12 InvalidSymbol 13 InvalidHostPointer 16
InvalidDevicePointer 17 InvalidTexture 18 InvalidTextureBinding 19 InvalidChannelDescriptor 20
InvalidMemcpyDirection 21 AddressOfConstant 22 TextureFetchFailed 23 TextureNotBound 24
SynchronizationError 25 InvalidFilterSetting 26 InvalidNormSetting 27 MixedDeviceExecution 28
NotYetImplemented 31 MemoryValueTooLarge 32 StubLibrary 34 InsufficientDriver 35
CallRequiresNewerDriver 36 InvalidSurface 37 DuplicateVariableName 43 DuplicateTextureName 44
DuplicateSurfaceName 45 DevicesUnavailable 46 IncompatibleDriverContext 49 MissingConfiguration 52
PriorLaunchFailure 53 LaunchMaxDepthExceeded 65 LaunchFileScopedTex 66 LaunchFileScopedSurf 67
SyncDepthExceeded 68 LaunchPendingCountExceeded 69 InvalidDeviceFunction 98 NoDevice 100
InvalidDevice 101 DeviceNotLicensed 102 SoftwareValidityNotEstablished 103 StartupFailure 127
InvalidKernelImage 200 DeviceUninitialized 201 MapBufferObjectFailed 205
UnmapBufferObjectFailed 206 ArrayIsMapped 207 AlreadyMapped 208 NoKernelImageForDevice 209
AlreadyAcquired 210 NotMapped 211 NotMappedAsArray 212 NotMappedAsPointer 213 ECCUncorrectable 214
UnsupportedLimit 215 DeviceAlreadyInUse 216 PeerAccessUnsupported 217 InvalidPtx 218
InvalidGraphicsContext 219 NvlinkUncorrectable 220 JitCompilerNotFound 221
UnsupportedPtxVersion 222 JitCompilationDisabled 223 UnsupportedExecAffinity 224
UnsupportedDevSideSync 225 InvalidSource 300 FileNotFound 301 SharedObjectSymbolNotFound 302
SharedObjectInitFailed 303 OperatingSystem 304 InvalidResourceHandle 400 IllegalState 401
LossyQuery 402 SymbolNotFound 500 NotReady 600 IllegalAddress 700 LaunchOutOfResources 701
LaunchTimeout 702 LaunchIncompatibleTexturing 703 PeerAccessAlreadyEnabled 704
PeerAccessNotEnabled 705 SetOnActiveProcess 708 ContextIsDestroyed 709 Assert 710 TooManyPeers 711
HostMemoryAlreadyRegistered 712 HostMemoryNotRegistered 713 HardwareStackError 714
IllegalInstruction 715 MisalignedAddress 716 InvalidAddressSpace 717 InvalidPc 718
LaunchFailure 719 CooperativeLaunchTooLarge 720 NotPermitted 800 NotSupported 801
SystemNotReady 802 SystemDriverMismatch 803 CompatNotSupportedOnDevice 804 MpsConnectionFailed 805
MpsRpcFailure 806 MpsServerNotReady 807 MpsMaxClientsReached 808 MpsMaxConnectionsReached 809
MpsClientTerminated 810 CdpNotSupported 811 CdpVersionMismatch 812 StreamCaptureUnsupported 900
StreamCaptureInvalidated 901 StreamCaptureMerge 902 StreamCaptureUnmatched 903
StreamCaptureUnjoined 904 StreamCaptureIsolation 905 StreamCaptureImplicit 906 CapturedEvent 907
StreamCaptureWrongThread 908 Timeout 909 GraphExecUpdateFailure 910 ExternalDevice 911
InvalidClusterSize 912 Unknown 999"""

# CUDA runtime calls BIREN does not have: declared with an error attribute naming them. First
# those the 81 cuda-samples counted in CUDA-COVERAGE.md use, then other common ones.
UNSUPPORTED = """
cudaIpcGetEventHandle cudaIpcOpenEventHandle cudaMemPoolExportPointer cudaMemPoolImportPointer
cudaMemPoolExportToShareableHandle cudaMemPoolImportFromShareableHandle cudaStreamSetAttribute
cudaStreamGetAttribute cudaCtxResetPersistingL2Cache cudaGraphicsGLRegisterBuffer
cudaGraphicsGLRegisterImage cudaGraphicsMapResources cudaGraphicsUnmapResources
cudaGraphicsResourceGetMappedPointer cudaGraphicsSubResourceGetMappedArray
cudaGraphicsUnregisterResource cudaGraphicsResourceSetMapFlags cudaGLSetGLDevice
cudaGLRegisterBufferObject cudaGLUnregisterBufferObject cudaGLMapBufferObject
cudaGLUnmapBufferObject cudaGLGetDevices
cudaDeviceGetByPCIBusId cudaDeviceGetPCIBusId cudaDeviceGetCacheConfig cudaDeviceSetCacheConfig
cudaDeviceGetSharedMemConfig cudaDeviceSetSharedMemConfig cudaFuncSetSharedMemConfig
cudaDeviceFlushGPUDirectRDMAWrites cudaDeviceGetTexture1DLinearMaxWidth cudaSetValidDevices
cudaChooseDevice cudaInitDevice cudaSetDoubleForDevice cudaSetDoubleForHost
cudaThreadExit cudaThreadSynchronize cudaThreadSetLimit cudaThreadGetLimit
cudaThreadGetCacheConfig cudaThreadSetCacheConfig
cudaStreamGetId cudaStreamCopyAttributes cudaStreamBeginCaptureToGraph cudaStreamGetCaptureInfo_v3 cudaStreamUpdateCaptureDependencies cudaStreamUpdateCaptureDependencies_v2
cudaEventElapsedTime_v2
cudaLaunchKernelExC cudaLaunchCooperativeKernelMultiDevice cudaFuncGetName cudaFuncGetParamInfo
cudaGetFuncBySymbol cudaGetDriverEntryPoint cudaGetKernel cudaOccupancyAvailableDynamicSMemPerBlock
cudaOccupancyMaxPotentialClusterSize cudaOccupancyMaxActiveClusters
cudaMallocMipmappedArray cudaFreeMipmappedArray cudaGetMipmappedArrayLevel cudaArrayGetPlane
cudaArrayGetMemoryRequirements cudaArrayGetSparseProperties cudaMipmappedArrayGetSparseProperties
cudaMemcpy3DPeer cudaMemcpy3DPeerAsync cudaMemcpyArrayToArray cudaMemcpy2DArrayToArrayAsync
cudaMemRangeGetAttribute cudaMemRangeGetAttributes cudaMemPrefetchAsync_v2 cudaMemAdvise_v2
cudaMemcpyBatchAsync cudaMemcpy3DBatchAsync
cudaGetTextureObjectResourceViewDesc cudaGetChannelDesc cudaCreateChannelDescHalf
cudaImportExternalMemory cudaExternalMemoryGetMappedBuffer cudaExternalMemoryGetMappedMipmappedArray
cudaDestroyExternalMemory cudaImportExternalSemaphore cudaSignalExternalSemaphoresAsync
cudaWaitExternalSemaphoresAsync cudaDestroyExternalSemaphore
cudaGraphKernelNodeGetParams cudaGraphKernelNodeSetParams cudaGraphKernelNodeGetAttribute
cudaGraphKernelNodeSetAttribute cudaGraphKernelNodeCopyAttributes cudaGraphMemcpyNodeGetParams
cudaGraphMemcpyNodeSetParams1D cudaGraphMemsetNodeGetParams
cudaGraphMemsetNodeSetParams cudaGraphHostNodeGetParams cudaGraphHostNodeSetParams
cudaGraphChildGraphNodeGetGraph cudaGraphEventRecordNodeGetEvent cudaGraphEventRecordNodeSetEvent
cudaGraphEventWaitNodeGetEvent cudaGraphEventWaitNodeSetEvent cudaGraphNodeGetDependencies
cudaGraphNodeGetDependentNodes cudaGraphDestroyNode cudaGraphNodeFindInClone
cudaGraphAddMemcpyNodeToSymbol cudaGraphAddMemcpyNodeFromSymbol cudaGraphAddMemAllocNode
cudaGraphAddMemFreeNode cudaGraphMemAllocNodeGetParams cudaGraphMemFreeNodeGetParams
cudaGraphAddExternalSemaphoresSignalNode cudaGraphAddExternalSemaphoresWaitNode cudaGraphAddNode
cudaGraphNodeSetParams cudaGraphExecNodeSetParams
cudaGraphExecMemcpyNodeSetParams1D cudaGraphExecMemsetNodeSetParams cudaGraphExecHostNodeSetParams
cudaGraphExecChildGraphNodeSetParams cudaGraphExecEventRecordNodeSetEvent
cudaGraphExecEventWaitNodeSetEvent cudaGraphNodeSetEnabled cudaGraphNodeGetEnabled
cudaGraphUpload cudaGraphExecGetFlags cudaGraphInstantiateWithParams cudaGraphRetainUserObject
cudaGraphReleaseUserObject cudaUserObjectCreate cudaUserObjectRetain cudaUserObjectRelease
cudaDeviceGraphMemTrim cudaDeviceGetGraphMemAttribute cudaDeviceSetGraphMemAttribute
cudaMallocFromPoolAsync_v2 cudaMemPoolGetAllocationGranularity
cudaProfilerInitialize cudaGetExportTable cudaLaunch cudaConfigureCall cudaSetupArgument
cudaBindTexture cudaBindTexture2D cudaBindTextureToArray cudaUnbindTexture cudaGetTextureReference
cudaBindSurfaceToArray cudaGetSurfaceReference cudaGetTextureAlignmentOffset
cudaLogsRegisterCallback cudaLogsCurrent cudaLogsDumpToFile cudaLogsDumpToMemory
cudaDeviceRegisterAsyncNotification cudaDeviceUnregisterAsyncNotification
cudaGetDeviceFlags_v2 cudaLibraryLoadData cudaLibraryLoadFromFile cudaLibraryUnload
cudaLibraryGetKernel cudaKernelSetAttributeForDevice
"""


def die(msg):
    sys.exit("cuda_header.py: " + msg)


def cuda_name(name):
    """birenFooBar -> cudaFooBar (types, enumerators, flags and calls)."""
    if not name.startswith("biren"):
        die("not a biren name: " + name)
    return "cuda" + name[len("biren"):]


def error_cuda_name(tail):
    """FOO_BAR (of BIREN_ERROR_FOO_BAR) -> cudaErrorFooBar."""
    if tail in ERROR_NAMES:
        return ERROR_NAMES[tail]
    return "cudaError" + "".join(w.capitalize() for w in tail.split("_"))


def parse(text):
    api_end = text.index("#endif  /* BIREN_RUNTIME_H */")
    api = re.sub(r"/\*.*?\*/", "", text[:api_end], flags=re.S)
    api = re.sub(r"//[^\n]*", "", api)
    flags = re.findall(r"^#define (biren[A-Za-z0-9_]+) (-?\d+)$", api, re.M)
    enums = []
    for m in re.finditer(r"typedef enum (\w+) \{(.*?)\} (\w+);", api, re.S):
        items = re.findall(r"(\w+) = (-?\d+)", m.group(2))
        enums.append((m.group(1), items))
    structs = re.findall(r"typedef (?:struct|union) (\w+) \{.*?\} (\w+);", api, re.S)
    opaque = re.findall(r"typedef struct (\w+) \1;", api)
    handles = re.findall(r"typedef struct (\w+) \*(\w+);", api)
    scalars = re.findall(r"typedef (unsigned long long|int) (biren\w+);", api)
    fnptrs = re.findall(r"typedef [^;()]+\(\*(biren\w+)\)\(", api)
    start = api.index('extern "C" {')
    decls = re.findall(r"^([A-Za-z][\w\s\*]*?)\s*\b(biren\w+)\(([^;]*?)\)(?:\s*__attribute__\(\(\w+\)\))?;",
                       api[start:], re.M | re.S)
    funcs, seen = [], set()
    for ret, name, params in decls:
        if name in seen:
            continue
        seen.add(name)
        funcs.append((" ".join(ret.split()), name, " ".join(params.split())))
    return flags, enums, structs, opaque, handles, scalars, fnptrs, funcs


def map_type(t):
    """A parameter or return type of BIREN's header under CUDA's names."""
    t = t.replace("enum birenError_t", "cudaError_t").replace("birenError_t", "cudaError_t")
    t = t.replace("birenStreamCaptureMode_int", "enum cudaStreamCaptureMode")
    t = t.replace("struct dim3", "dim3")
    return re.sub(r"\bbiren(\w+)", r"cuda\1", t)


def split_param(p):
    m = re.match(r"^(.*?)(\w+)$", p.strip())
    return m.group(1).strip(), m.group(2)


def wrapper(ret, name, params):
    cname = cuda_name(name)
    ps = [] if params in ("", "void") else [split_param(p) for p in params.split(",")]
    defaults = DEFAULTS.get(name, {})
    for d in defaults:
        if d not in [n for _, n in ps]:
            die(f"{name}: no parameter {d} for its default")
    decl, args = [], []
    for ty, pname in ps:
        if ty == "birenKernel_t":
            decl.append(f"const void *{pname}")
            args.append(f"birenCudaKernel_({pname})")
            continue
        cty = map_type(ty)
        sep = "" if cty.endswith("*") else " "
        d = f" BIREN_CUDA_DV_({defaults[pname]})" if pname in defaults else ""
        decl.append(f"{cty}{sep}{pname}{d}")
        args.append(pname)
    cret = map_type(ret)
    init = "" if (name in NO_INIT or cret != "cudaError_t") else "birenCudaAutoInit_(); "
    body = f"{init}return {name}({', '.join(args)});"
    return f"BIREN_CUDA_API_ {cret} {cname}({', '.join(decl) or 'void'}) {{ {body} }}"


def errors(enums):
    biren = dict(next(items for n, items in enums if n == "birenError_t"))
    used = {int(v) for v in biren.values()}
    by_cuda = {}
    for bname, v in biren.items():
        if bname == "BIREN_SUCCESS":
            by_cuda["cudaSuccess"] = (bname, int(v))
        else:
            by_cuda[error_cuda_name(bname[len("BIREN_ERROR_"):])] = (bname, int(v))
    cuda = re.findall(r"(\w+) (\d+)", CUDA_ERRORS)
    only = []
    free = (v for v in range(1000, 1024) if v not in used)
    for n, v in cuda:
        cname = "cudaSuccess" if n == "Success" else "cudaError" + n
        if cname in by_cuda:
            continue
        v = int(v)
        if v in used:
            v = next(free, None)
            if v is None:
                die("no free error value left below 1024")
        used.add(v)
        only.append((cname, v))
    return by_cuda, only


def generate(text):
    flags, enums, structs, opaque, handles, scalars, fnptrs, funcs = parse(text)
    out = []
    w = out.append
    w(f"""/*
 * cuda_runtime_api.h -- CUDA's runtime API (CUDA {CUDART_VERSION // 1000}.{CUDART_VERSION % 1000 // 10}) under CUDA's names, over BIREN's C API.
 * GENERATED by tools/cuda_header.py from include/biren_runtime.h: do not edit; edit the script.
 *
 * C (C99) and C++. Every type, enumerator, flag, error code and runtime call that BIREN has is
 * here under CUDA's name: types and enums as aliases of BIREN's (macros for the struct and enum
 * tags, so `struct cudaFuncAttributes` and `enum cudaMemcpyKind` work too), enumerators as
 * macros, calls as inline functions with CUDA's parameters (CUDA's default arguments in C++).
 * Semantics and codes are BIREN's, which follow CUDA's (SPEC section 10); the documentation of
 * each call is at its biren counterpart in biren_runtime.h.
 *
 * Differences from CUDA:
 * - The runtime starts by itself at the first call that needs it (birenInit, once per process;
 *   the error-string, last-error and version calls do not start it).
 * - cudaError_t is BIREN's enum: the codes BIREN returns have BIREN's values (programs compare
 *   names, not numbers); CUDA's other codes exist, with CUDA's value where BIREN does not use it,
 *   so a program may test for them, and BIREN never returns them. cudaErrorDeadlock and
 *   cudaErrorOutOfBounds are BIREN's own.
 * - cudaDeviceProp has CUDA's fields; those BIREN has no value for hold a Tesla P100's
 *   (compute capability 6.0, the device BIREN models), see cudaGetDeviceProperties.
 * - cudaStreamWaitEvent on an event never recorded waits for its next record (BIREN's rule).
 * - A call BIREN does not have is declared with an error attribute: calling it fails to compile
 *   with "cudaXxx: not supported by BIREN (see docs/CUDA-COMPATIBILITY.md)"; not calling it costs
 *   nothing.
 */
#ifndef BIREN_CUDA_RUNTIME_API_H
#define BIREN_CUDA_RUNTIME_API_H
#ifndef __CUDA_RUNTIME_API_H__
#define __CUDA_RUNTIME_API_H__
#endif
#ifndef __DRIVER_TYPES_H__
#define __DRIVER_TYPES_H__
#endif
#include <stddef.h>
#include <string.h>
/* CUDA mode of BIREN's header (dim3's constructors in C++), as cuda_runtime.h sets it. */
#ifndef BIREN_CUDA
#define BIREN_CUDA 1
#endif
#include "biren_runtime.h"

#define CUDART_VERSION {CUDART_VERSION}
#ifndef CUDA_VERSION
#define CUDA_VERSION {CUDART_VERSION}
#endif
#ifndef __CUDART_API_VERSION
#define __CUDART_API_VERSION {CUDART_VERSION}
#endif
#define CUDART_CB
#define CUDARTAPI
#ifndef __host__
#define __host__
#endif
#ifndef __cudart_builtin__
#define __cudart_builtin__
#endif
#ifndef CUDART_DEVICE
#define CUDART_DEVICE
#endif

/* Wrappers: static inline in C; inline in C++ (one per program, so one auto-init flag). */
#ifdef __cplusplus
#define BIREN_CUDA_API_ inline
#define BIREN_CUDA_DV_(v) = v
#define BIREN_CUDA_ANYARGS_ ...
#else
#define BIREN_CUDA_API_ static inline
#define BIREN_CUDA_DV_(v)
#define BIREN_CUDA_ANYARGS_
#endif
#if defined(__GNUC__) || defined(__clang__)
#define BIREN_CUDA_UNSUPPORTED_(name) __attribute__((error(name ": not supported by BIREN (see docs/CUDA-COMPATIBILITY.md)")))
#define BIREN_CUDA_LIKELY_(c) __builtin_expect(!!(c), 1)
#else
#define BIREN_CUDA_UNSUPPORTED_(name)
#define BIREN_CUDA_LIKELY_(c) (c)
#endif

/* ---- Types -------------------------------------------------------------------------------- */
typedef birenError_t cudaError_t;
#define cudaError birenError_t
""")
    for tag, name in structs:
        if name in TYPES_NOT_ALIASED or not name.startswith("biren"):
            continue
        if tag != name:
            die(f"struct tag {tag} differs from its name {name}")
        w(f"#define {cuda_name(name)} {name}")
    for tag, ptr in handles:
        if ptr in TYPES_NOT_ALIASED:
            continue
        w(f"typedef {ptr} {cuda_name(ptr)};")
    w("typedef birenArray_st cudaArray;  /* CUDA: cudaArray_t is a struct cudaArray * */")
    w("typedef const birenArray_st *cudaArray_const_t;")
    for ty, name in scalars:
        if name in TYPES_NOT_ALIASED:
            continue
        w(f"typedef {name} {cuda_name(name)};")
    for name in fnptrs:
        if name in TYPES_NOT_ALIASED:
            continue
        w(f"typedef {name} {cuda_name(name)};")

    w("\n/* ---- Enums and their values ------------------------------------------------------------ */")
    for name, items in enums:
        if name in TYPES_NOT_ALIASED:
            continue
        w(f"#define {cuda_name(name)} {name}")
        for item, _ in items:
            w(f"#define {cuda_name(item)} {item}")

    w("\n/* ---- Flags and constants ----------------------------------------------------------------- */")
    for name, _ in flags:
        w(f"#define {cuda_name(name)} {name}")

    by_cuda, only = errors(enums)
    w("\n/* ---- Error codes: BIREN's, under CUDA's names --------------------------------------------- */")
    for cname, (bname, _) in by_cuda.items():
        w(f"#define {cname} {bname}")
    w("/* CUDA's codes that BIREN never returns (values free in BIREN's enum). */")
    for cname, v in only:
        w(f"#define {cname} ((cudaError_t){v})")
    w("#define cudaErrorApiFailureBase ((cudaError_t)10000)")

    w(HAND_TYPES)
    w("\n/* ---- Auto-init and kernel pointers ------------------------------------------------------ */")
    w("""/* Starts the runtime before the first call that needs it: a relaxed check of a flag (one load
 * and a predicted branch), birenInit (idempotent and thread-safe) the first time. The flag is
 * per program in C++ and per translation unit in C (then birenInit runs once per unit, a no-op
 * after the first). */
BIREN_CUDA_API_ void birenCudaAutoInit_(void) {
  static int biren_cuda_ready_;
  if (BIREN_CUDA_LIKELY_(__atomic_load_n(&biren_cuda_ready_, __ATOMIC_ACQUIRE))) return;
  (void)birenInit();
  __atomic_store_n(&biren_cuda_ready_, 1, __ATOMIC_RELEASE);
}
/* A kernel passed as CUDA passes it (const void *) as the birenKernel_t BIREN's calls take. */
BIREN_CUDA_API_ birenKernel_t birenCudaKernel_(const void *func) {
  birenKernel_t k;
  memcpy(&k, &func, sizeof k);
  return k;
}
""")
    w("/* ---- Calls: every BIREN runtime call under CUDA's name ---------------------------------- */")
    w("#ifdef __cplusplus\nextern \"C++\" {\n#endif")
    wrapped = []
    for ret, name, params in funcs:
        if name in NOT_WRAPPED or name.startswith("birenKernelRegister"):
            continue
        w(wrapper(ret, name, params))
        wrapped.append(cuda_name(name))
    w(hand_calls(by_cuda, only))
    w("\n/* ---- Calls BIREN does not have: calling one is a compile error naming it ---------------- */")
    unsupported = UNSUPPORTED.split()
    have = set(wrapped) | set(HAND_CALLED)
    for n in unsupported:
        if n in have:
            die(f"{n} is listed as unsupported but BIREN has it: remove it from UNSUPPORTED")
        w(f'BIREN_CUDA_UNSUPPORTED_("{n}") cudaError_t {n}(BIREN_CUDA_ANYARGS_);')
    w("#ifdef __cplusplus\n}  /* extern \"C++\" */\n#endif")
    w("\n#endif /* BIREN_CUDA_RUNTIME_API_H */")
    return "\n".join(out) + "\n"


HAND_CALLED = ["cudaGetDeviceProperties", "cudaGetDeviceProperties_v2", "cudaStreamGetCaptureInfo_v2",
               "cudaStreamWaitEvent", "cudaGetErrorName",
               "cudaGetErrorString", "cudaRuntimeGetVersion", "cudaDriverGetVersion",
               "cudaGraphAddKernelNode", "cudaGraphExecKernelNodeSetParams"]

HAND_TYPES = r"""
/* ---- Types CUDA defines differently from BIREN -------------------------------------------- */
typedef struct CUuuid_st { char bytes[16]; } cudaUUID_t;

/** CUDA 12's cudaDeviceProp, field for field; filled by cudaGetDeviceProperties. */
struct cudaDeviceProp {
  char name[256];
  cudaUUID_t uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int computeMode;
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture1DLinear;
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int sparseCudaArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int reserved[63];
};
typedef struct cudaDeviceProp cudaDeviceProp;

/** CUDA's cudaKernelNodeParams: func is the kernel as a const void * (CUDA's void *). */
struct cudaKernelNodeParams {
  void *func;
  dim3 gridDim;
  dim3 blockDim;
  unsigned int sharedMemBytes;
  void **kernelParams;
  void **extra;
};
typedef struct cudaKernelNodeParams cudaKernelNodeParams;

/* CUDA's enums BIREN has as plain integers (the values BIREN reads or reports). */
enum cudaComputeMode {
  cudaComputeModeDefault = 0,
  cudaComputeModeExclusive = 1,
  cudaComputeModeProhibited = 2,
  cudaComputeModeExclusiveProcess = 3
};
#define cudaDeviceBlockingSync birenDeviceScheduleBlockingSync
#define cudaDevAttrMaxSharedMemoryPerBlockOptin birenDevAttrMaxSharedMemoryPerBlockOptin
#define cudaStreamLegacy ((cudaStream_t)0)
#define cudaInvalidDeviceId -2
#define cudaArraySparse 0x40
#define cudaArrayDeferredMapping 0x80
#define cudaOccupancyDefault birenOccupancyDefault

/* CUDA's types and values for features BIREN lacks, so that a program using them compiles as far
 * as the call that needs them (which is then the error, naming itself). Passing one of these
 * values to a BIREN call gives cudaErrorInvalidValue. */
#define cudaEventInterprocess 4
#define cudaEventRecordExternal birenEventRecordExternal
#define cudaMemHandleTypePosixFileDescriptor 1
#define cudaMemHandleTypeWin32 2
#define cudaMemHandleTypeWin32Kmt 4
#define cudaMemHandleTypeFabric 8
#define cudaDevAttrMemoryPoolSupportedHandleTypes ((cudaDeviceAttr)119)
#define cudaGraphicsMapFlagsNone 0
#define cudaGraphicsMapFlagsReadOnly 1
#define cudaGraphicsMapFlagsWriteDiscard 2
#define cudaGraphicsRegisterFlagsNone 0
#define cudaGraphicsRegisterFlagsReadOnly 1
#define cudaGraphicsRegisterFlagsWriteDiscard 2
#define cudaGraphicsRegisterFlagsSurfaceLoadStore 4
#define cudaGraphicsRegisterFlagsTextureGather 8
struct cudaGraphicsResource;
typedef struct cudaGraphicsResource *cudaGraphicsResource_t;
typedef struct cudaIpcEventHandle_st { char reserved[64]; } cudaIpcEventHandle_t;
typedef struct cudaMemPoolPtrExportData { unsigned char reserved[64]; } cudaMemPoolPtrExportData;
typedef int cudaMemAllocationHandleType;
typedef int cudaMemAccessFlags;
typedef int cudaMemLocationType;
typedef int cudaMemAllocationType;
enum cudaAccessProperty {
  cudaAccessPropertyNormal = 0,
  cudaAccessPropertyStreaming = 1,
  cudaAccessPropertyPersisting = 2
};
struct cudaAccessPolicyWindow {
  void *base_ptr;
  size_t num_bytes;
  float hitRatio;
  enum cudaAccessProperty hitProp;
  enum cudaAccessProperty missProp;
};
typedef enum cudaLaunchAttributeID {
  cudaLaunchAttributeIgnore = 0,
  cudaLaunchAttributeAccessPolicyWindow = 1,
  cudaLaunchAttributeCooperative = 2,
  cudaLaunchAttributeSynchronizationPolicy = 3,
  cudaLaunchAttributePriority = 8
} cudaLaunchAttributeID;
typedef union cudaLaunchAttributeValue {
  char pad[64];
  struct cudaAccessPolicyWindow accessPolicyWindow;
  int cooperative;
  int priority;
} cudaLaunchAttributeValue;
#define cudaStreamAttrID cudaLaunchAttributeID
#define cudaStreamAttrValue cudaLaunchAttributeValue
#define cudaKernelNodeAttrID cudaLaunchAttributeID
#define cudaKernelNodeAttrValue cudaLaunchAttributeValue
#define cudaStreamAttributeAccessPolicyWindow cudaLaunchAttributeAccessPolicyWindow
#define cudaStreamAttributePriority cudaLaunchAttributePriority
#define cudaKernelNodeAttributeAccessPolicyWindow cudaLaunchAttributeAccessPolicyWindow
#define cudaKernelNodeAttributeCooperative cudaLaunchAttributeCooperative
typedef struct cudaMipmappedArray *cudaMipmappedArray_t;
typedef const struct cudaMipmappedArray *cudaMipmappedArray_const_t;

/* ---- CUDA's make_ helpers (driver_functions.h) ------------------------------------------- */
BIREN_CUDA_API_ cudaPitchedPtr make_cudaPitchedPtr(void *d, size_t p, size_t xsz, size_t ysz) { return make_birenPitchedPtr(d, p, xsz, ysz); }
BIREN_CUDA_API_ cudaExtent make_cudaExtent(size_t w, size_t h, size_t d) { return make_birenExtent(w, h, d); }
BIREN_CUDA_API_ cudaPos make_cudaPos(size_t x, size_t y, size_t z) { return make_birenPos(x, y, z); }
"""


def hand_calls(by_cuda, only):
    names = [(c, c) for c in by_cuda] + [(c, c) for c, _ in only]
    cases = "\n".join(f'    case {c}: return "{n}";' for c, n in names)
    text_cases = "\n".join(f'    case {c}: return "{c[len("cudaError"):]} (a CUDA error BIREN never returns)";'
                           for c, _ in only)
    return f"""
/* ---- Calls CUDA spells differently -------------------------------------------------------- */
/** CUDA's name of an error code ("cudaErrorInvalidValue"); "unrecognized error code" otherwise. */
BIREN_CUDA_API_ const char *cudaGetErrorName(cudaError_t error) {{
  switch ((int)error) {{
{cases}
    default: return "unrecognized error code";
  }}
}}
/** A description of an error code (BIREN's text for the codes BIREN returns). */
BIREN_CUDA_API_ const char *cudaGetErrorString(cudaError_t error) {{
  switch ((int)error) {{
{text_cases}
    default: return birenGetErrorString(error);
  }}
}}
/** CUDART_VERSION: the CUDA runtime version whose API this header offers. Works before init. */
BIREN_CUDA_API_ cudaError_t cudaRuntimeGetVersion(int *runtimeVersion) {{
  if (!runtimeVersion) return cudaErrorInvalidValue;
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}}
/** The driver is the runtime itself: CUDART_VERSION. Works before init. */
BIREN_CUDA_API_ cudaError_t cudaDriverGetVersion(int *driverVersion) {{
  if (!driverVersion) return cudaErrorInvalidValue;
  *driverVersion = CUDART_VERSION;
  return cudaSuccess;
}}
/** CUDA's three parameters: birenStreamWaitEventWithFlags (flags 0 or cudaEventWaitExternal). */
BIREN_CUDA_API_ cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags BIREN_CUDA_DV_(0)) {{
  birenCudaAutoInit_();
  return birenStreamWaitEventWithFlags(stream, event, flags);
}}
BIREN_CUDA_API_ birenKernelNodeParams birenCudaNodeParams_(const struct cudaKernelNodeParams *p) {{
  birenKernelNodeParams b;
  b.func = birenCudaKernel_(p->func);
  b.gridDim = p->gridDim;
  b.blockDim = p->blockDim;
  b.sharedMemBytes = p->sharedMemBytes;
  b.kernelParams = p->kernelParams;
  b.extra = p->extra;
  return b;
}}
BIREN_CUDA_API_ cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies, size_t numDependencies, const struct cudaKernelNodeParams *pNodeParams) {{
  birenKernelNodeParams b;
  birenCudaAutoInit_();
  if (!pNodeParams) return birenGraphAddKernelNode(pGraphNode, graph, pDependencies, numDependencies, NULL);
  b = birenCudaNodeParams_(pNodeParams);
  return birenGraphAddKernelNode(pGraphNode, graph, pDependencies, numDependencies, &b);
}}
BIREN_CUDA_API_ cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const struct cudaKernelNodeParams *pNodeParams) {{
  birenKernelNodeParams b;
  birenCudaAutoInit_();
  if (!pNodeParams) return birenGraphExecKernelNodeSetParams(hGraphExec, node, NULL);
  b = birenCudaNodeParams_(pNodeParams);
  return birenGraphExecKernelNodeSetParams(hGraphExec, node, &b);
}}
/**
 * CUDA's cudaDeviceProp from birenGetDeviceProperties and birenDeviceGetAttribute. Fields BIREN
 * has no value for hold a Tesla P100's (compute capability 6.0, BIREN's model): the texture and
 * surface limits (which are also BIREN's array limits), textureAlignment 512,
 * texturePitchAlignment 32, surfaceAlignment 512; uuid and luid are zero, tccDriver 0, and the
 * features BIREN does not offer (sparse and deferred-mapping arrays, external semaphores, RDMA,
 * IPC events, clusters) 0. Nothing is written on error.
 */
BIREN_CUDA_API_ cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {{
  birenDeviceProp b;
  struct cudaDeviceProp p;
  int v;
  cudaError_t e;
  birenCudaAutoInit_();
  if (!prop) return cudaErrorInvalidValue;
  e = birenGetDeviceProperties_v2(&b, device);
  if (e != cudaSuccess) return e;
  memset(&p, 0, sizeof p);
  memcpy(p.name, b.name, sizeof p.name);
  p.totalGlobalMem = b.totalGlobalMem;
  p.sharedMemPerBlock = b.sharedMemPerBlock;
  p.regsPerBlock = b.regsPerBlock;
  p.warpSize = b.warpSize;
  p.memPitch = b.memPitch;
  p.maxThreadsPerBlock = b.maxThreadsPerBlock;
  for (v = 0; v < 3; v++) {{
    p.maxThreadsDim[v] = b.maxThreadsDim[v];
    p.maxGridSize[v] = b.maxGridSize[v];
  }}
  p.clockRate = b.clockRate;
  p.totalConstMem = b.totalConstMem;
  p.major = b.major;
  p.minor = b.minor;
  p.textureAlignment = 512;
  p.texturePitchAlignment = 32;
  p.deviceOverlap = b.deviceOverlap;
  p.multiProcessorCount = b.multiProcessorCount;
  p.kernelExecTimeoutEnabled = b.kernelExecTimeoutEnabled;
  p.integrated = b.integrated;
  p.canMapHostMemory = b.canMapHostMemory;
  p.computeMode = b.computeMode;
  p.maxTexture1D = 131072;
  p.maxTexture1DMipmap = 16384;
  p.maxTexture1DLinear = 134217728;
  p.maxTexture2D[0] = 131072; p.maxTexture2D[1] = 65536;
  p.maxTexture2DMipmap[0] = 32768; p.maxTexture2DMipmap[1] = 32768;
  p.maxTexture2DLinear[0] = 131072; p.maxTexture2DLinear[1] = 65000; p.maxTexture2DLinear[2] = 2097120;
  p.maxTexture2DGather[0] = 32768; p.maxTexture2DGather[1] = 32768;
  p.maxTexture3D[0] = 16384; p.maxTexture3D[1] = 16384; p.maxTexture3D[2] = 16384;
  p.maxTexture3DAlt[0] = 8192; p.maxTexture3DAlt[1] = 8192; p.maxTexture3DAlt[2] = 32768;
  p.maxTextureCubemap = 32768;
  p.maxTexture1DLayered[0] = 32768; p.maxTexture1DLayered[1] = 2048;
  p.maxTexture2DLayered[0] = 32768; p.maxTexture2DLayered[1] = 32768; p.maxTexture2DLayered[2] = 2048;
  p.maxTextureCubemapLayered[0] = 32768; p.maxTextureCubemapLayered[1] = 2046;
  p.maxSurface1D = 32768;
  p.maxSurface2D[0] = 131072; p.maxSurface2D[1] = 65536;
  p.maxSurface3D[0] = 16384; p.maxSurface3D[1] = 16384; p.maxSurface3D[2] = 16384;
  p.maxSurface1DLayered[0] = 32768; p.maxSurface1DLayered[1] = 2048;
  p.maxSurface2DLayered[0] = 32768; p.maxSurface2DLayered[1] = 32768; p.maxSurface2DLayered[2] = 2048;
  p.maxSurfaceCubemap = 32768;
  p.maxSurfaceCubemapLayered[0] = 32768; p.maxSurfaceCubemapLayered[1] = 2046;
  p.surfaceAlignment = 512;
  p.concurrentKernels = b.concurrentKernels;
  p.ECCEnabled = b.ECCEnabled;
  p.pciBusID = b.pciBusID;
  p.pciDeviceID = b.pciDeviceID;
  p.pciDomainID = b.pciDomainID;
  p.asyncEngineCount = b.asyncEngineCount;
  p.unifiedAddressing = b.unifiedAddressing;
  p.memoryClockRate = b.memoryClockRate;
  p.memoryBusWidth = b.memoryBusWidth;
  p.l2CacheSize = b.l2CacheSize;
  p.persistingL2CacheMaxSize = birenDeviceGetAttribute(&v, birenDevAttrMaxPersistingL2CacheSize, device) == cudaSuccess ? v : 0;
  p.maxThreadsPerMultiProcessor = b.maxThreadsPerMultiProcessor;
  p.streamPrioritiesSupported = b.streamPrioritiesSupported;
  p.globalL1CacheSupported = b.globalL1CacheSupported;
  p.localL1CacheSupported = b.localL1CacheSupported;
  p.sharedMemPerMultiprocessor = b.sharedMemPerMultiprocessor;
  p.regsPerMultiprocessor = b.regsPerMultiprocessor;
  p.managedMemory = b.managedMemory;
  p.isMultiGpuBoard = b.isMultiGpuBoard;
  p.multiGpuBoardGroupID = birenDeviceGetAttribute(&v, birenDevAttrMultiGpuBoardGroupID, device) == cudaSuccess ? v : 0;
  p.hostNativeAtomicSupported = b.hostNativeAtomicSupported;
  p.singleToDoublePrecisionPerfRatio = birenDeviceGetAttribute(&v, birenDevAttrSingleToDoublePrecisionPerfRatio, device) == cudaSuccess ? v : 2;
  p.pageableMemoryAccess = b.pageableMemoryAccess;
  p.concurrentManagedAccess = b.concurrentManagedAccess;
  p.computePreemptionSupported = birenDeviceGetAttribute(&v, birenDevAttrComputePreemptionSupported, device) == cudaSuccess ? v : 1;
  p.canUseHostPointerForRegisteredMem = b.canUseHostPointerForRegisteredMem;
  p.cooperativeLaunch = b.cooperativeLaunch;
  p.cooperativeMultiDeviceLaunch = birenDeviceGetAttribute(&v, birenDevAttrCooperativeMultiDeviceLaunch, device) == cudaSuccess ? v : 0;
  p.sharedMemPerBlockOptin = b.sharedMemPerBlockOptin;
  p.pageableMemoryAccessUsesHostPageTables = b.pageableMemoryAccessUsesHostPageTables;
  p.directManagedMemAccessFromHost = birenDeviceGetAttribute(&v, birenDevAttrDirectManagedMemAccessFromHost, device) == cudaSuccess ? v : 0;
  p.maxBlocksPerMultiProcessor = b.maxBlocksPerMultiProcessor;
  p.accessPolicyMaxWindowSize = birenDeviceGetAttribute(&v, birenDevAttrMaxAccessPolicyWindowSize, device) == cudaSuccess ? v : 0;
  p.reservedSharedMemPerBlock = birenDeviceGetAttribute(&v, birenDevAttrReservedSharedMemoryPerBlock, device) == cudaSuccess ? (size_t)v : 0;
  p.hostRegisterSupported = b.hostRegisterSupported;
  p.memoryPoolsSupported = b.memoryPoolsSupported;
  *prop = p;
  return cudaSuccess;
}}
/** CUDA 12's versioned names of the calls above. */
BIREN_CUDA_API_ cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device) {{
  return cudaGetDeviceProperties(prop, device);
}}
BIREN_CUDA_API_ cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out, unsigned long long *id_out BIREN_CUDA_DV_(0), cudaGraph_t *graph_out BIREN_CUDA_DV_(0), const cudaGraphNode_t **dependencies_out BIREN_CUDA_DV_(0), size_t *numDependencies_out BIREN_CUDA_DV_(0)) {{
  return cudaStreamGetCaptureInfo(stream, captureStatus_out, id_out, graph_out, dependencies_out, numDependencies_out);
}}"""


def main():
    text = open(HEADER).read()
    rendered = generate(text)
    if "--check" in sys.argv[1:]:
        try:
            committed = open(OUT).read()
        except FileNotFoundError:
            committed = ""
        if committed != rendered:
            print(f"{OUT} is stale: run `python3 tools/cuda_header.py` and commit it", file=sys.stderr)
            sys.exit(1)
        return
    open(OUT, "w").write(rendered)
    print(f"{OUT} written", file=sys.stderr)


if __name__ == "__main__":
    main()
