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
    /// A kernel ran longer than BIREN_KERNEL_TIMEOUT_MS and was stopped by the watchdog.
    BIREN_ERROR_LAUNCH_TIMEOUT = 16,
    /// An unknown internal error occurred.
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
            16 => BIREN_ERROR_LAUNCH_TIMEOUT,
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

/// Properties of a device (birenGetDeviceProperties).
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
/// A host function run in stream order by birenLaunchHostFunc.
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
