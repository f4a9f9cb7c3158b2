//! Starting the runtime, choosing devices, device-wide synchronization and reset.

use crate::error::{api, check, BirenError, ErrorCode, Result};
use crate::sys;
use std::ffi::{c_int, CStr};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Loads the library (see [`sys::default_candidates`]: `$BIREN_LIBRARY`, else
/// `libbiren_runtime.so.1` through the dynamic loader) unless one is loaded, then calls
/// `birenInit`. Idempotent and thread-safe, like `birenInit`; call it before anything else.
///
/// A library that cannot be loaded is reported as `NotInitialized` with the loader's messages
/// in [`BirenError::detail`].
///
/// ```
/// # fn main() -> Result<(), biren::BirenError> {
/// biren::init()?;
/// assert!(biren::device_count()? >= 1);
/// # Ok(()) }
/// ```
pub fn init() -> Result<()> {
    let api = sys::load_default()
        .map_err(|e| BirenError::not_loaded("biren::init").with_detail(e.to_string()))?;
    // SAFETY: birenInit takes no arguments.
    check("birenInit", unsafe { (api.birenInit)() })
}

/// Like [`init`], loading the library from `path` (a file, or a name the dynamic loader
/// resolves). Fails with `NotInitialized` if it cannot be loaded, or if another library is
/// already loaded in this process.
pub fn init_with_library(path: impl AsRef<Path>) -> Result<()> {
    let api = sys::load(path).map_err(|e| {
        BirenError::new(ErrorCode::NotInitialized, "biren::init_with_library")
            .with_detail(e.to_string())
    })?;
    // SAFETY: birenInit takes no arguments.
    check("birenInit", unsafe { (api.birenInit)() })
}

/// Number of simulated devices (`BIREN_DEVICE_COUNT`).
pub fn device_count() -> Result<i32> {
    let api = api("birenGetDeviceCount")?;
    let mut n: c_int = 0;
    // SAFETY: the out-parameter points to a live c_int.
    check("birenGetDeviceCount", unsafe {
        (api.birenGetDeviceCount)(&mut n)
    })?;
    Ok(n)
}

/// Makes `device` the calling host thread's current device (where new streams, events and
/// buffers are created). `InvalidDevice` if there is no such device.
pub fn set_device(device: i32) -> Result<()> {
    let api = api("birenSetDevice")?;
    // SAFETY: plain integer argument, checked by the library.
    check("birenSetDevice", unsafe { (api.birenSetDevice)(device) })
}

/// The calling host thread's current device.
pub fn current_device() -> Result<i32> {
    let api = api("birenGetDevice")?;
    let mut d: c_int = 0;
    // SAFETY: the out-parameter points to a live c_int.
    check("birenGetDevice", unsafe { (api.birenGetDevice)(&mut d) })?;
    Ok(d)
}

/// Waits for all work on the current device, then reports its first asynchronous error
/// (e.g. `LaunchFailure` after a kernel trapped).
pub fn synchronize() -> Result<()> {
    let api = api("birenDeviceSynchronize")?;
    // SAFETY: no arguments.
    check("birenDeviceSynchronize", unsafe {
        (api.birenDeviceSynchronize)()
    })
}

/// Most devices a process can have (`BIREN_DEVICE_COUNT` is at most 16).
const MAX_DEVICES: usize = 16;
/// Per device, how many resets this crate has made; a [`crate::DeviceBuffer`] remembers the
/// count at its allocation and never frees (or uses) memory a later reset already freed.
static RESETS: [AtomicU64; MAX_DEVICES] = [const { AtomicU64::new(0) }; MAX_DEVICES];

/// The reset count of `device` (0 for an out-of-range index).
pub(crate) fn reset_epoch(device: i32) -> u64 {
    usize::try_from(device)
        .ok()
        .and_then(|d| RESETS.get(d))
        .map_or(0, |r| r.load(Ordering::Acquire))
}

/// Resets the current device (`birenDeviceReset`): drops queued work, destroys its streams and
/// events, frees its device memory and clears a sticky error.
///
/// [`crate::Stream`]s and [`crate::Event`]s created before then answer `InvalidHandle`, and
/// [`crate::DeviceBuffer`]s allocated before then answer `InvalidDevicePointer` (and free
/// nothing when dropped), so none of them can touch memory allocated after the reset. That
/// bookkeeping covers resets made through this function; a reset made behind the crate's back
/// (C code, or [`sys`]) is not seen. A reset while other threads still use the device races
/// with them, as in C.
pub fn device_reset() -> Result<()> {
    let api = api("birenDeviceReset")?;
    let device = current_device()?;
    // SAFETY: no arguments.
    let r = check("birenDeviceReset", unsafe { (api.birenDeviceReset)() });
    if r.is_ok() {
        if let Some(count) = usize::try_from(device).ok().and_then(|d| RESETS.get(d)) {
            count.fetch_add(1, Ordering::AcqRel);
        }
    }
    r
}

/// The runtime's version, `1000 * major + 10 * minor` (1000 for 1.0).
pub fn runtime_version() -> Result<i32> {
    let api = api("birenRuntimeGetVersion")?;
    let mut v: c_int = 0;
    // SAFETY: the out-parameter points to a live c_int.
    check("birenRuntimeGetVersion", unsafe {
        (api.birenRuntimeGetVersion)(&mut v)
    })?;
    Ok(v)
}

/// Free and total device memory of the current device, in bytes.
pub fn mem_info() -> Result<(usize, usize)> {
    let api = api("birenMemGetInfo")?;
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: both out-parameters point to live usizes.
    check("birenMemGetInfo", unsafe {
        (api.birenMemGetInfo)(&mut free, &mut total)
    })?;
    Ok((free, total))
}

/// Turns the validator on or off for the current device (`birenSetDeviceValidator`).
pub fn set_validator(enable: bool) -> Result<()> {
    let api = api("birenSetDeviceValidator")?;
    // SAFETY: plain integer argument.
    check("birenSetDeviceValidator", unsafe {
        (api.birenSetDeviceValidator)(c_int::from(enable))
    })
}

/// Returns and clears the calling thread's last error (`birenGetLastError`): `Ok(())` if the
/// last failing call's error was already taken, or none failed.
pub fn take_last_error() -> Result<()> {
    let api = api("birenGetLastError")?;
    // SAFETY: no arguments.
    check("birenGetLastError", unsafe { (api.birenGetLastError)() })
}

/// What `birenGetDeviceProperties` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProperties {
    /// Device name.
    pub name: String,
    /// Device memory capacity in bytes.
    pub total_global_mem: usize,
    /// Largest per-block shared memory a launch may ask for, in bytes.
    pub shared_mem_per_block: usize,
    /// Most threads in a block.
    pub max_threads_per_block: i32,
    /// Largest block extents.
    pub max_threads_dim: [i32; 3],
    /// Largest grid extents.
    pub max_grid_size: [i32; 3],
    /// Compute units (worker threads).
    pub multi_processor_count: i32,
    /// Copy engines.
    pub async_engine_count: i32,
    /// Kernels of different streams run concurrently.
    pub concurrent_kernels: bool,
    /// Stream priorities are honoured.
    pub stream_priorities_supported: bool,
}

/// The properties of `device`.
///
/// ```
/// # fn main() -> Result<(), biren::BirenError> {
/// biren::init()?;
/// let p = biren::device_properties(0)?;
/// assert!(p.multi_processor_count >= 1 && p.max_threads_per_block == 1024);
/// assert_eq!(biren::device_properties(99).unwrap_err().code, biren::ErrorCode::InvalidDevice);
/// # Ok(()) }
/// ```
pub fn device_properties(device: i32) -> Result<DeviceProperties> {
    let api = api("birenGetDeviceProperties")?;
    // SAFETY: birenDeviceProp is plain old data; all zeros is a valid value.
    let mut p: sys::birenDeviceProp = unsafe { std::mem::zeroed() };
    // SAFETY: the out-parameter points to a live birenDeviceProp.
    check("birenGetDeviceProperties", unsafe {
        (api.birenGetDeviceProperties)(&mut p, device)
    })?;
    let name = if p.name.contains(&0) {
        // SAFETY: the array holds a NUL (checked) and lives for the call.
        unsafe { CStr::from_ptr(p.name.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    } else {
        return Err(
            BirenError::new(ErrorCode::Unknown, "birenGetDeviceProperties")
                .with_detail("device name is not NUL-terminated"),
        );
    };
    Ok(DeviceProperties {
        name,
        total_global_mem: p.totalGlobalMem,
        shared_mem_per_block: p.sharedMemPerBlock,
        max_threads_per_block: p.maxThreadsPerBlock,
        max_threads_dim: p.maxThreadsDim,
        max_grid_size: p.maxGridSize,
        multi_processor_count: p.multiProcessorCount,
        async_engine_count: p.asyncEngineCount,
        concurrent_kernels: p.concurrentKernels != 0,
        stream_priorities_supported: p.streamPrioritiesSupported != 0,
    })
}
