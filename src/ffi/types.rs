//! The C types of the API: error codes, enums, structs and opaque handles.

pub use crate::device::Dim3;
use std::ffi::{c_char, c_int, c_uint, c_void};

/// Every call returns one of these. Values are stable and never reused.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum birenError_t {
    /// No error.
    BIREN_SUCCESS = 0,
    /// An argument is NULL, out of range or otherwise invalid.
    BIREN_ERROR_INVALID_VALUE = 1,
    /// The device (or host) memory is exhausted.
    BIREN_ERROR_OUT_OF_MEMORY = 2,
    /// The runtime is not initialized: call birenInit() first.
    BIREN_ERROR_NOT_INITIALIZED = 3,
    /// No such device.
    BIREN_ERROR_INVALID_DEVICE = 4,
    /// The stream or event handle is invalid or was destroyed.
    BIREN_ERROR_INVALID_HANDLE = 5,
    /// The pointer is not in any live device allocation.
    BIREN_ERROR_INVALID_DEVICE_POINTER = 6,
    /// The range runs past the end of its device allocation.
    BIREN_ERROR_OUT_OF_BOUNDS = 7,
    /// Unknown birenMemcpyKind value.
    BIREN_ERROR_INVALID_MEMCPY_DIRECTION = 8,
    /// Invalid launch configuration (grid, block or shared memory).
    BIREN_ERROR_INVALID_CONFIGURATION = 9,
    /// The work has not completed yet.
    BIREN_ERROR_NOT_READY = 10,
    /// The wait can never be satisfied: cyclic or unsatisfiable dependency.
    BIREN_ERROR_DEADLOCK = 11,
    /// A kernel launch failed (trap or divergent barrier).
    BIREN_ERROR_LAUNCH_FAILURE = 12,
    /// A kernel accessed an illegal address (outside its allocations, or a NULL or wild pointer).
    BIREN_ERROR_ILLEGAL_ADDRESS = 13,
    /// The operation is not permitted in this context.
    BIREN_ERROR_NOT_PERMITTED = 14,
    /// The operation is not supported.
    BIREN_ERROR_NOT_SUPPORTED = 15,
    /// The limit is not supported by the device.
    BIREN_ERROR_UNSUPPORTED_LIMIT = 16,
    /// A pitch, width or height of a 2D/3D copy or fill is invalid.
    BIREN_ERROR_INVALID_PITCH_VALUE = 17,
    /// The symbol is not a declared device symbol.
    BIREN_ERROR_INVALID_SYMBOL = 18,
    /// Part of the host range is already registered.
    BIREN_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 19,
    /// The host pointer is not the start of a registered range.
    BIREN_ERROR_HOST_MEMORY_NOT_REGISTERED = 20,
    /// The kernel function is NULL or invalid.
    BIREN_ERROR_INVALID_DEVICE_FUNCTION = 21,
    /// Peer access to that device is enabled already.
    BIREN_ERROR_PEER_ACCESS_ALREADY_ENABLED = 22,
    /// Peer access to that device is not enabled.
    BIREN_ERROR_PEER_ACCESS_NOT_ENABLED = 23,
    /// A kernel ran longer than BIREN_KERNEL_TIMEOUT_MS and was stopped by the watchdog.
    BIREN_ERROR_LAUNCH_TIMEOUT = 24,
    /// An unknown internal error occurred.
    BIREN_ERROR_ILLEGAL_STATE = 401,
    BIREN_ERROR_OPERATING_SYSTEM = 304,
    BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    BIREN_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    BIREN_ERROR_STREAM_CAPTURE_MERGE = 902,
    BIREN_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
    BIREN_ERROR_STREAM_CAPTURE_UNJOINED = 904,
    BIREN_ERROR_STREAM_CAPTURE_ISOLATION = 905,
    BIREN_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
    BIREN_ERROR_CAPTURED_EVENT = 907,
    BIREN_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
    BIREN_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
    BIREN_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 30,
    /// The channel format descriptor is invalid (CUDA's cudaErrorInvalidChannelDescriptor).
    BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR = 31,
    /// A device-side assert() failed in a kernel (CUDA's cudaErrorAssert); the launch failed.
    BIREN_ERROR_ASSERT = 32,
    BIREN_ERROR_UNKNOWN = 999,
}

impl birenError_t {
    /// The C value of a core result code (0 = success).
    pub fn from_code(code: i32) -> birenError_t {
        use birenError_t::*;
        match code {
            0 => BIREN_SUCCESS,
            1 => BIREN_ERROR_INVALID_VALUE,
            2 => BIREN_ERROR_OUT_OF_MEMORY,
            3 => BIREN_ERROR_NOT_INITIALIZED,
            4 => BIREN_ERROR_INVALID_DEVICE,
            5 => BIREN_ERROR_INVALID_HANDLE,
            6 => BIREN_ERROR_INVALID_DEVICE_POINTER,
            7 => BIREN_ERROR_OUT_OF_BOUNDS,
            8 => BIREN_ERROR_INVALID_MEMCPY_DIRECTION,
            9 => BIREN_ERROR_INVALID_CONFIGURATION,
            10 => BIREN_ERROR_NOT_READY,
            11 => BIREN_ERROR_DEADLOCK,
            12 => BIREN_ERROR_LAUNCH_FAILURE,
            13 => BIREN_ERROR_ILLEGAL_ADDRESS,
            14 => BIREN_ERROR_NOT_PERMITTED,
            15 => BIREN_ERROR_NOT_SUPPORTED,
            16 => BIREN_ERROR_UNSUPPORTED_LIMIT,
            17 => BIREN_ERROR_INVALID_PITCH_VALUE,
            18 => BIREN_ERROR_INVALID_SYMBOL,
            19 => BIREN_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
            20 => BIREN_ERROR_HOST_MEMORY_NOT_REGISTERED,
            21 => BIREN_ERROR_INVALID_DEVICE_FUNCTION,
            22 => BIREN_ERROR_PEER_ACCESS_ALREADY_ENABLED,
            23 => BIREN_ERROR_PEER_ACCESS_NOT_ENABLED,
            24 => BIREN_ERROR_LAUNCH_TIMEOUT,
            401 => BIREN_ERROR_ILLEGAL_STATE,
            304 => BIREN_ERROR_OPERATING_SYSTEM,
            900 => BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED,
            901 => BIREN_ERROR_STREAM_CAPTURE_INVALIDATED,
            902 => BIREN_ERROR_STREAM_CAPTURE_MERGE,
            903 => BIREN_ERROR_STREAM_CAPTURE_UNMATCHED,
            904 => BIREN_ERROR_STREAM_CAPTURE_UNJOINED,
            905 => BIREN_ERROR_STREAM_CAPTURE_ISOLATION,
            906 => BIREN_ERROR_STREAM_CAPTURE_IMPLICIT,
            907 => BIREN_ERROR_CAPTURED_EVENT,
            908 => BIREN_ERROR_STREAM_CAPTURE_WRONG_THREAD,
            910 => BIREN_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
            30 => BIREN_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            31 => BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR,
            32 => BIREN_ERROR_ASSERT,
            _ => BIREN_ERROR_UNKNOWN,
        }
    }
}

/// An error code received from C: read as an integer, so unknown values are safe.
pub type birenError_int = c_int;

/// Direction of a copy. `birenMemcpyDefault` infers it from the pointers.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenMemcpyKind {
    /// Host memory to host memory.
    birenMemcpyHostToHost = 0,
    /// Host memory to device memory.
    birenMemcpyHostToDevice = 1,
    /// Device memory to host memory.
    birenMemcpyDeviceToHost = 2,
    /// Device memory to device memory.
    birenMemcpyDeviceToDevice = 3,
    /// Inferred from the pointers: inside a live device allocation is device memory.
    birenMemcpyDefault = 4,
}

/// A copy kind received from C: read as an integer and checked.
pub type birenMemcpyKind_int = c_int;

/// How compute units are shared between kernels (see birenDeviceSetSchedulingPolicy).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenSchedulingPolicy {
    /// A free compute unit takes the next block of the highest-priority kernel.
    birenSchedulePreemptive = 0,
    /// A started kernel keeps the compute units until its last block is dispatched.
    birenScheduleCooperative = 1,
}

/// A scheduling policy received from C: read as an integer and checked.
pub type birenSchedulingPolicy_int = c_int;

/// What kind of memory a pointer refers to.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenMemoryType {
    /// Not known to the runtime (ordinary host memory, or garbage).
    birenMemoryTypeUnregistered = 0,
    /// Page-locked host memory from birenMallocHost.
    birenMemoryTypeHost = 1,
    /// Device memory from birenMalloc.
    birenMemoryTypeDevice = 2,
    /// Managed memory from birenMallocManaged: usable by host and device at one address.
    birenMemoryTypeManaged = 3,
}

/// Stream flag: the stream follows the default-stream rules (waits for and is waited by the default stream).
pub const birenStreamDefault: c_uint = 0;
/// Stream flag: the stream neither waits for nor blocks the default stream.
pub const birenStreamNonBlocking: c_uint = 1;
/// Event flag: default behaviour.
pub const birenEventDefault: c_uint = 0;
/// Event flag: birenEventSynchronize parks the host thread instead of spinning (it always parks after a short spin here).
pub const birenEventBlockingSync: c_uint = 1;
/// Event flag: the event records no time; birenEventElapsedTime refuses it. Recording is cheaper.
pub const birenEventDisableTiming: c_uint = 2;

/// Properties of a device (birenGetDeviceProperties, birenGetDeviceProperties_v2).
///
/// ABI: the fields up to streamPrioritiesSupported are the struct of version 1.0 of this header,
/// which the exported symbol birenGetDeviceProperties fills (and nothing past it), so programs
/// compiled against that header keep working. The fields from warpSize on were added later;
/// birenGetDeviceProperties_v2 fills the whole struct, and this header maps the name
/// birenGetDeviceProperties to it (as CUDA 12 maps cudaGetDeviceProperties to
/// cudaGetDeviceProperties_v2), so programs compiled now get every field. `reserved` is zero and
/// leaves room for fields to come.
#[repr(C)]
pub struct birenDeviceProp {
    /// NUL-terminated device name.
    pub name: [c_char; 256],
    /// Device memory capacity in bytes (BIREN_DEVICE_MEMORY).
    pub totalGlobalMem: usize,
    /// Largest sharedMem a launch may ask for, in bytes.
    pub sharedMemPerBlock: usize,
    /// Most threads in a block (x * y * z): 1024.
    pub maxThreadsPerBlock: c_int,
    /// Largest block extents along x, y and z: 1024, 1024, 64.
    pub maxThreadsDim: [c_int; 3],
    /// Largest grid extents along x, y and z: 2^31-1, 65535, 65535.
    pub maxGridSize: [c_int; 3],
    /// Compute units (worker threads) of the device (BIREN_COMPUTE_UNITS).
    pub multiProcessorCount: c_int,
    /// Copy engines that run copies concurrently with kernels.
    pub asyncEngineCount: c_int,
    /// 1: kernels of different streams run concurrently.
    pub concurrentKernels: c_int,
    /// 1: stream priorities are honoured by the scheduler.
    pub streamPrioritiesSupported: c_int,
    /// Threads per warp: 32. (Fields from here on: birenGetDeviceProperties_v2 only.)
    pub warpSize: c_int,
    /// Compute capability: 6.0 (see birenDeviceGetAttribute for what it promises).
    pub major: c_int,
    /// Compute capability, minor number.
    pub minor: c_int,
    /// Registers per block (nominal: C kernels' register use is not known).
    pub regsPerBlock: c_int,
    /// Largest pitch of birenMallocPitch / 2D copies, in bytes.
    pub memPitch: usize,
    /// Constant memory in bytes (nominal).
    pub totalConstMem: usize,
    /// Nominal clock in kHz.
    pub clockRate: c_int,
    /// 1: copies overlap kernels (asyncEngineCount > 0).
    pub deviceOverlap: c_int,
    /// 0: no run-time limit on kernels.
    pub kernelExecTimeoutEnabled: c_int,
    /// 0: device memory is separate from host memory (copies are needed).
    pub integrated: c_int,
    /// 1: kernels may use page-locked host memory (birenHostAlloc with birenHostAllocMapped).
    pub canMapHostMemory: c_int,
    /// 0: default compute mode (any number of host threads may use the device).
    pub computeMode: c_int,
    /// Nominal memory clock (kHz) and bus width (bits).
    pub memoryClockRate: c_int,
    /// Global memory bus width in bits (reported).
    pub memoryBusWidth: c_int,
    /// Nominal L2 size in bytes.
    pub l2CacheSize: c_int,
    /// Resident threads per compute unit in the occupancy model: 2048.
    pub maxThreadsPerMultiProcessor: c_int,
    /// 1: one address space for host and device memory (birenMemcpyDefault works).
    pub unifiedAddressing: c_int,
    /// 1: birenMallocManaged is available (and concurrently accessible by host and kernels).
    pub managedMemory: c_int,
    /// 1: the host and kernels may access managed memory at the same time.
    pub concurrentManagedAccess: c_int,
    /// 1 when birenLaunchCooperativeKernel is available.
    pub cooperativeLaunch: c_int,
    /// Shared memory per compute unit (occupancy model) and the largest per-block opt-in.
    pub sharedMemPerMultiprocessor: usize,
    /// Shared memory a block may opt in to (bytes).
    pub sharedMemPerBlockOptin: usize,
    /// Registers per multiprocessor (reported).
    pub regsPerMultiprocessor: c_int,
    /// Resident blocks per compute unit in the occupancy model: 32.
    pub maxBlocksPerMultiProcessor: c_int,
    /// PCI location: the device index as bus id, 0 elsewhere.
    pub pciBusID: c_int,
    /// PCI device id (0: simulated).
    pub pciDeviceID: c_int,
    /// PCI domain id (0: simulated).
    pub pciDomainID: c_int,
    /// 1 if ECC is on (0: simulated memory).
    pub ECCEnabled: c_int,
    /// 1 if the device is on a multi-device board (0).
    pub isMultiGpuBoard: c_int,
    /// 1: kernels run on host threads, so atomics on host memory are native.
    pub hostNativeAtomicSupported: c_int,
    /// 1: kernels can read and write any host memory at its own address.
    pub pageableMemoryAccess: c_int,
    /// 1 if kernels reach pageable host memory through the host's page tables (1: it is the same memory).
    pub pageableMemoryAccessUsesHostPageTables: c_int,
    /// 1: birenHostRegister is available.
    pub hostRegisterSupported: c_int,
    /// 1: registered host memory is usable by kernels at its host address.
    pub canUseHostPointerForRegisteredMem: c_int,
    /// 1 if global memory is cached in L1 (reported).
    pub globalL1CacheSupported: c_int,
    /// 1 if local memory is cached in L1 (reported).
    pub localL1CacheSupported: c_int,
    /// 1: stream-ordered allocation (birenMallocAsync) and memory pools are available.
    pub memoryPoolsSupported: c_int,
    /// Zero; room for fields to come.
    pub reserved: [c_int; 32],
}

/// What birenPointerGetAttributes reports about a pointer.
/// cbindgen:field-names=[type, device, devicePointer, hostPointer, basePointer, size]
#[repr(C)]
pub struct birenPointerAttributes {
    /// Device memory, registered (page-locked) host memory, or unregistered.
    pub type_: birenMemoryType,
    /// Device of a device pointer; -1 otherwise.
    pub device: c_int,
    /// The pointer itself if it is device memory, else NULL.
    pub devicePointer: *mut c_void,
    /// The pointer itself if it is registered host memory, else NULL.
    pub hostPointer: *mut c_void,
    /// Start of the allocation the pointer lies in (NULL if unregistered).
    pub basePointer: *mut c_void,
    /// Size in bytes of that allocation (0 if unregistered).
    pub size: usize,
}

/// Opaque stream object; only ever handled through birenStream_t.
pub struct birenStream_st {
    _private: [u8; 0],
}
/// A stream handle. NULL is the current device's default stream.
pub type birenStream_t = *mut birenStream_st;

/// Opaque event object; only ever handled through birenEvent_t.
pub struct birenEvent_st {
    _private: [u8; 0],
}
/// An event handle.
pub type birenEvent_t = *mut birenEvent_st;

/// A kernel: a plain C function receiving the array of pointers to its arguments.
pub type birenKernel_t = Option<unsafe extern "C" fn(args: *mut *mut c_void)>;
/// A BIREN_KERNEL block entry: runs threads first..end (linear, x fastest) of the block the
/// context describes, with the launch's argument-pointer array. Generated by BIREN_KERNEL.
pub type birenKernelBlock_t = Option<
    unsafe extern "C" fn(
        ctx: *mut birenKernelCtx,
        args: *mut *mut c_void,
        first: c_uint,
        end: c_uint,
    ),
>;

/// A BIREN_KERNEL range entry: runs every thread of `count` consecutive blocks (linear, x
/// fastest), the first the one the context describes, writing each block's index to
/// ctx->blockIdx before running it; returns the number of blocks it completed: `count`, or fewer
/// when a thread waited at a sync point (the runtime then goes on with that block, the one in
/// ctx->blockIdx). Generated by BIREN_KERNEL.
pub type birenKernelBlocks_t = Option<
    unsafe extern "C" fn(ctx: *mut birenKernelCtx, args: *mut *mut c_void, count: c_uint) -> c_uint,
>;

/// The thread loop of a BIREN_KERNEL block entry (the header's macros use it; layout shared with
/// the runtime): the entry runs threads up to `end` (linear), the current row up to `xe`; `tid`
/// is the running thread's index. Sync points lower `end` and `xe`.
#[repr(C)]
pub struct birenKernelLoop {
    /// The index of the thread running.
    pub tid: Dim3,
    /// The loop runs threads up to this one (linear index, exclusive).
    pub end: c_uint,
    /// The current row runs up to this x (exclusive).
    pub xe: c_uint,
}

/// A host function: birenLaunchHostFunc runs it with its userData in stream order.
pub type birenHostFn_t = Option<unsafe extern "C" fn(userData: *mut c_void)>;
/// Receives validator lines (NUL-terminated, no newline) instead of stderr.
pub type birenValidatorCallback_t =
    Option<unsafe extern "C" fn(message: *const c_char, userData: *mut c_void)>;

/// The context of the calling kernel thread (read by the inline built-ins in this header).
#[repr(C)]
pub struct birenKernelCtx {
    /// Index of the thread in its block (birenThreadIdx).
    pub threadIdx: Dim3,
    /// Index of the thread's block in the grid (birenBlockIdx).
    pub blockIdx: Dim3,
    /// Dimensions of the block (birenBlockDim).
    pub blockDim: Dim3,
    /// Dimensions of the grid (birenGridDim).
    pub gridDim: Dim3,
    /// The block's dynamic shared memory (NULL when the launch asked for none).
    pub shared: *mut c_void,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::error::{ErrorCode, ERROR_TABLE};

    #[test]
    fn c_enum_matches_the_table() {
        for (code, _, _) in ERROR_TABLE {
            assert_eq!(birenError_t::from_code(*code) as i32, *code);
        }
        for e in ErrorCode::ALL {
            assert_eq!(birenError_t::from_code(e.code()) as i32, e.code());
        }
        assert_eq!(
            birenError_t::from_code(4242),
            birenError_t::BIREN_ERROR_UNKNOWN
        );
    }

    #[test]
    fn kernel_ctx_layout_matches_the_device() {
        assert_eq!(
            std::mem::size_of::<birenKernelCtx>(),
            std::mem::size_of::<crate::device::KernelCtx>()
        );
    }
}
