//! Device queries and settings (CUDA's device management): attributes, the full properties
//! struct, driver version, device flags and limits.

use super::boundary::{ffi_call, out};
use super::types::*;
use crate::runtime::caps::{self, COMPUTE_CAPABILITY};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::launch::{
    MAX_BLOCK, MAX_GRID, MAX_THREADS_PER_BLOCK, SHARED_MEM_PER_BLOCK,
};
use crate::runtime::{self, diagnostics};
use std::ffi::{c_char, c_int, c_uint};

/// Device attributes for birenDeviceGetAttribute, with CUDA's values (cudaDevAttr*). Values not
/// listed (textures, surfaces, and the like) give BIREN_ERROR_INVALID_VALUE.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenDeviceAttr {
    birenDevAttrMaxThreadsPerBlock = 1,
    birenDevAttrMaxBlockDimX = 2,
    birenDevAttrMaxBlockDimY = 3,
    birenDevAttrMaxBlockDimZ = 4,
    birenDevAttrMaxGridDimX = 5,
    birenDevAttrMaxGridDimY = 6,
    birenDevAttrMaxGridDimZ = 7,
    birenDevAttrMaxSharedMemoryPerBlock = 8,
    birenDevAttrTotalConstantMemory = 9,
    birenDevAttrWarpSize = 10,
    birenDevAttrMaxPitch = 11,
    birenDevAttrMaxRegistersPerBlock = 12,
    birenDevAttrClockRate = 13,
    birenDevAttrGpuOverlap = 15,
    birenDevAttrMultiProcessorCount = 16,
    birenDevAttrKernelExecTimeout = 17,
    birenDevAttrIntegrated = 18,
    birenDevAttrCanMapHostMemory = 19,
    birenDevAttrComputeMode = 20,
    birenDevAttrConcurrentKernels = 31,
    birenDevAttrEccEnabled = 32,
    birenDevAttrPciBusId = 33,
    birenDevAttrPciDeviceId = 34,
    birenDevAttrMemoryClockRate = 36,
    birenDevAttrGlobalMemoryBusWidth = 37,
    birenDevAttrL2CacheSize = 38,
    birenDevAttrMaxThreadsPerMultiProcessor = 39,
    birenDevAttrAsyncEngineCount = 40,
    birenDevAttrUnifiedAddressing = 41,
    birenDevAttrPciDomainId = 50,
    birenDevAttrComputeCapabilityMajor = 75,
    birenDevAttrComputeCapabilityMinor = 76,
    birenDevAttrStreamPrioritiesSupported = 78,
    birenDevAttrGlobalL1CacheSupported = 79,
    birenDevAttrLocalL1CacheSupported = 80,
    birenDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    birenDevAttrMaxRegistersPerMultiprocessor = 82,
    birenDevAttrManagedMemory = 83,
    birenDevAttrIsMultiGpuBoard = 84,
    birenDevAttrMultiGpuBoardGroupID = 85,
    birenDevAttrHostNativeAtomicSupported = 86,
    birenDevAttrSingleToDoublePrecisionPerfRatio = 87,
    birenDevAttrPageableMemoryAccess = 88,
    birenDevAttrConcurrentManagedAccess = 89,
    birenDevAttrComputePreemptionSupported = 90,
    birenDevAttrCanUseHostPointerForRegisteredMem = 91,
    birenDevAttrCooperativeLaunch = 95,
    birenDevAttrCooperativeMultiDeviceLaunch = 96,
    birenDevAttrMaxSharedMemoryPerBlockOptin = 97,
    birenDevAttrCanFlushRemoteWrites = 98,
    birenDevAttrHostRegisterSupported = 99,
    birenDevAttrPageableMemoryAccessUsesHostPageTables = 100,
    birenDevAttrDirectManagedMemAccessFromHost = 101,
    birenDevAttrMaxBlocksPerMultiprocessor = 106,
    birenDevAttrMaxPersistingL2CacheSize = 108,
    birenDevAttrMaxAccessPolicyWindowSize = 109,
    birenDevAttrReservedSharedMemoryPerBlock = 111,
    birenDevAttrMemoryPoolsSupported = 115,
}

/// A device attribute received from C: read as an integer and checked.
pub type birenDeviceAttr_int = c_int;

/// Resource limits for birenDeviceSetLimit / birenDeviceGetLimit, with CUDA's values.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenLimit {
    /// Stack of each simulated thread, in bytes (default 256 KiB): really the size of the fiber
    /// stacks the threads of later launches run on.
    birenLimitStackSize = 0,
    /// Accepted and reported; device printf here is the C library's, with no FIFO to size.
    birenLimitPrintfFifoSize = 1,
    /// Accepted and reported; kernels calling malloc use the C library's heap, which has no
    /// fixed size.
    birenLimitMallocHeapSize = 2,
    /// No device-side launches: BIREN_ERROR_UNSUPPORTED_LIMIT.
    birenLimitDevRuntimeSyncDepth = 3,
    /// No device-side launches: BIREN_ERROR_UNSUPPORTED_LIMIT.
    birenLimitDevRuntimePendingLaunchCount = 4,
    /// A hint, 0 to 128 bytes; accepted and reported.
    birenLimitMaxL2FetchGranularity = 5,
    /// Compute capability 6.0 has no persisting L2: BIREN_ERROR_UNSUPPORTED_LIMIT.
    birenLimitPersistingL2CacheSize = 6,
}

/// A limit received from C: read as an integer and checked.
pub type birenLimit_int = c_int;

/// Device flag: host synchronization chooses how to wait (here: a short spin, then sleep).
pub const birenDeviceScheduleAuto: c_uint = 0x00;
/// Device flag: spin while waiting (accepted; waits here always spin briefly, then sleep).
pub const birenDeviceScheduleSpin: c_uint = 0x01;
/// Device flag: yield while waiting (accepted; as birenDeviceScheduleSpin).
pub const birenDeviceScheduleYield: c_uint = 0x02;
/// Device flag: block on a synchronization primitive while waiting (what waits here do after
/// a short spin).
pub const birenDeviceScheduleBlockingSync: c_uint = 0x04;
/// Mask of the scheduling flags (at most one of them may be set).
pub const birenDeviceScheduleMask: c_uint = 0x07;
/// Device flag: page-locked host memory may be mapped for kernels (always true here).
pub const birenDeviceMapHost: c_uint = 0x08;
/// Device flag: keep local memory after a launch (accepted; fiber stacks are always kept).
pub const birenDeviceLmemResizeToMax: c_uint = 0x10;
/// Mask of every device flag.
pub const birenDeviceMask: c_uint = 0x1f;

/// The value of attribute `attr` on device `index`, or None for an unknown attribute.
pub(crate) fn attribute(index: usize, attr: i64) -> Result<Option<i64>> {
    let rt = runtime::get()?;
    let d = rt.device(index)?;
    let units = d.exec.compute_units() as i64;
    let v: i64 = match attr {
        1 => MAX_THREADS_PER_BLOCK as i64,
        2 => MAX_BLOCK.x as i64,
        3 => MAX_BLOCK.y as i64,
        4 => MAX_BLOCK.z as i64,
        5 => MAX_GRID.x as i64,
        6 => MAX_GRID.y as i64,
        7 => MAX_GRID.z as i64,
        8 => SHARED_MEM_PER_BLOCK as i64,
        9 => caps::TOTAL_CONST_MEM as i64,
        10 => caps::WARP_SIZE as i64,
        11 => caps::MAX_PITCH as i64,
        12 => caps::REGS_PER_BLOCK as i64,
        13 => caps::CLOCK_RATE_KHZ as i64,
        15 => 1,
        16 => units,
        17 => 0,
        18 => 0,
        19 => 1,
        20 => 0,
        31 => 1,
        32 => 0,
        33 => index as i64,
        34 => 0,
        36 => caps::MEMORY_CLOCK_RATE_KHZ as i64,
        37 => caps::MEMORY_BUS_WIDTH as i64,
        38 => caps::L2_CACHE_SIZE as i64,
        39 => caps::MAX_THREADS_PER_MP as i64,
        40 => 2,
        41 => 1,
        50 => 0,
        75 => COMPUTE_CAPABILITY.0 as i64,
        76 => COMPUTE_CAPABILITY.1 as i64,
        78 => 1,
        79 | 80 => 1,
        81 => caps::SHARED_MEM_PER_MP as i64,
        82 => caps::REGS_PER_MP as i64,
        83 => 1,
        84 | 85 => 0,
        86 => 1,
        87 => 2,
        88 => 1,
        89 => 1,
        90 => 0,
        91 => 1,
        // birenLaunchCooperativeKernel; no multi-device form (CUDA's is deprecated).
        95 => 1,
        96 => 0,
        97 => caps::SHARED_MEM_PER_BLOCK_OPTIN as i64,
        98 => 0,
        99 => 1,
        100 => 1,
        101 => 1,
        106 => caps::MAX_BLOCKS_PER_MP as i64,
        108 | 109 | 111 => 0,
        115 => 1,
        _ => return Ok(None),
    };
    Ok(Some(v))
}

fn attr(index: usize, a: birenDeviceAttr) -> Result<c_int> {
    Ok(attribute(index, a as i64)?.unwrap_or(0) as c_int)
}

/// The full properties of device `index`.
pub(crate) fn properties(index: usize) -> Result<birenDeviceProp> {
    use birenDeviceAttr::*;
    let rt = runtime::get()?;
    let d = rt.device(index)?;
    let mut name = [0 as c_char; 256];
    let text = format!(
        "BIREN simulated accelerator {index} ({} compute units)",
        d.exec.compute_units()
    );
    for (dst, b) in name.iter_mut().zip(text.bytes().take(255)) {
        *dst = b as c_char;
    }
    let a = |x| attr(index, x);
    Ok(birenDeviceProp {
        name,
        totalGlobalMem: d.exec.memory.capacity() as usize,
        sharedMemPerBlock: SHARED_MEM_PER_BLOCK,
        maxThreadsPerBlock: a(birenDevAttrMaxThreadsPerBlock)?,
        maxThreadsDim: [
            a(birenDevAttrMaxBlockDimX)?,
            a(birenDevAttrMaxBlockDimY)?,
            a(birenDevAttrMaxBlockDimZ)?,
        ],
        maxGridSize: [
            a(birenDevAttrMaxGridDimX)?,
            a(birenDevAttrMaxGridDimY)?,
            a(birenDevAttrMaxGridDimZ)?,
        ],
        multiProcessorCount: a(birenDevAttrMultiProcessorCount)?,
        asyncEngineCount: a(birenDevAttrAsyncEngineCount)?,
        concurrentKernels: a(birenDevAttrConcurrentKernels)?,
        streamPrioritiesSupported: a(birenDevAttrStreamPrioritiesSupported)?,
        warpSize: a(birenDevAttrWarpSize)?,
        major: a(birenDevAttrComputeCapabilityMajor)?,
        minor: a(birenDevAttrComputeCapabilityMinor)?,
        regsPerBlock: a(birenDevAttrMaxRegistersPerBlock)?,
        memPitch: caps::MAX_PITCH,
        totalConstMem: caps::TOTAL_CONST_MEM,
        clockRate: a(birenDevAttrClockRate)?,
        deviceOverlap: a(birenDevAttrGpuOverlap)?,
        kernelExecTimeoutEnabled: a(birenDevAttrKernelExecTimeout)?,
        integrated: a(birenDevAttrIntegrated)?,
        canMapHostMemory: a(birenDevAttrCanMapHostMemory)?,
        computeMode: a(birenDevAttrComputeMode)?,
        memoryClockRate: a(birenDevAttrMemoryClockRate)?,
        memoryBusWidth: a(birenDevAttrGlobalMemoryBusWidth)?,
        l2CacheSize: a(birenDevAttrL2CacheSize)?,
        maxThreadsPerMultiProcessor: a(birenDevAttrMaxThreadsPerMultiProcessor)?,
        unifiedAddressing: a(birenDevAttrUnifiedAddressing)?,
        managedMemory: a(birenDevAttrManagedMemory)?,
        concurrentManagedAccess: a(birenDevAttrConcurrentManagedAccess)?,
        cooperativeLaunch: a(birenDevAttrCooperativeLaunch)?,
        sharedMemPerMultiprocessor: caps::SHARED_MEM_PER_MP,
        sharedMemPerBlockOptin: caps::SHARED_MEM_PER_BLOCK_OPTIN,
        regsPerMultiprocessor: a(birenDevAttrMaxRegistersPerMultiprocessor)?,
        maxBlocksPerMultiProcessor: a(birenDevAttrMaxBlocksPerMultiprocessor)?,
        pciBusID: a(birenDevAttrPciBusId)?,
        pciDeviceID: a(birenDevAttrPciDeviceId)?,
        pciDomainID: a(birenDevAttrPciDomainId)?,
        ECCEnabled: a(birenDevAttrEccEnabled)?,
        isMultiGpuBoard: a(birenDevAttrIsMultiGpuBoard)?,
        hostNativeAtomicSupported: a(birenDevAttrHostNativeAtomicSupported)?,
        pageableMemoryAccess: a(birenDevAttrPageableMemoryAccess)?,
        pageableMemoryAccessUsesHostPageTables: a(
            birenDevAttrPageableMemoryAccessUsesHostPageTables,
        )?,
        hostRegisterSupported: a(birenDevAttrHostRegisterSupported)?,
        canUseHostPointerForRegisteredMem: a(birenDevAttrCanUseHostPointerForRegisteredMem)?,
        globalL1CacheSupported: a(birenDevAttrGlobalL1CacheSupported)?,
        localL1CacheSupported: a(birenDevAttrLocalL1CacheSupported)?,
        memoryPoolsSupported: a(birenDevAttrMemoryPoolsSupported)?,
        reserved: [0; 32],
    })
}

/// The bytes of birenDeviceProp that version 1.0 of the header had (up to
/// streamPrioritiesSupported): what the old entry point birenGetDeviceProperties writes.
pub(crate) const PROP_V1_BYTES: usize = std::mem::offset_of!(birenDeviceProp, warpSize);

fn device_index(device: c_int) -> Result<usize> {
    let rt = runtime::get()?;
    let i = usize::try_from(device).map_err(|_| ErrorCode::InvalidDevice)?;
    rt.device(i)?;
    Ok(i)
}

/// Fills the whole *prop (every field of birenDeviceProp) with the properties of `device`.
/// The header maps birenGetDeviceProperties to this call, so a program compiled against this
/// header calls it under either name. Returns BIREN_ERROR_INVALID_VALUE if prop is NULL,
/// BIREN_ERROR_INVALID_DEVICE if there is no such device; nothing is written on error.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGetDeviceProperties_v2(
    prop: *mut birenDeviceProp,
    device: c_int,
) -> birenError_t {
    ffi_call!("birenGetDeviceProperties_v2"(prop, device) {
        let i = device_index(device)?;
        let p = properties(i)?;
        *out(prop)? = p;
        Ok(())
    })
}

/// Writes the value of attribute `attr` of `device` to *value (CUDA's cudaDeviceGetAttribute).
///
/// The simulated device has compute capability 6.0: programs may rely on its limits — warp size
/// 32, 1024 threads per block, block (1024,1024,64), grid (2^31-1,65535,65535), 48 KiB of shared
/// memory per block (no opt-in beyond), 64 KiB per compute unit, 2048 resident threads and 32
/// resident blocks per compute unit (the occupancy model of birenOccupancy*), concurrent kernels,
/// two copy engines, unified addressing, mapped and registered host memory usable by kernels at
/// its host address. Device-side facilities are those this header declares (not every intrinsic
/// of a real 6.0 device). Clocks, bus width and L2 size are nominal values. Attributes that
/// describe missing features (multi-device cooperative launch) report 0; cooperative launch
/// (birenLaunchCooperativeKernel), managed memory (coherent, host and device at once) and memory
/// pools are supported.
///
/// Returns BIREN_ERROR_INVALID_VALUE if value is NULL or `attr` is not a birenDeviceAttr value
/// listed in this header; BIREN_ERROR_INVALID_DEVICE if there is no such device. Nothing is
/// written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDeviceGetAttribute(
    value: *mut c_int,
    attr: birenDeviceAttr_int,
    device: c_int,
) -> birenError_t {
    ffi_call!("birenDeviceGetAttribute"(value, attr, device) {
        let i = device_index(device)?;
        let o = out(value)?;
        let Some(v) = attribute(i, attr as i64)? else {
            diagnostics::finding("birenDeviceGetAttribute", &format!("attr={attr} is not a birenDeviceAttr value this runtime knows"));
            return Err(ErrorCode::InvalidValue);
        };
        *o = v as c_int;
        Ok(())
    })
}

/// Writes the driver version to *driverVersion: the runtime is its own driver, so this is the
/// runtime version (1000*major + 10*minor). Works before birenInit.
/// BIREN_ERROR_INVALID_VALUE if NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDriverGetVersion(driverVersion: *mut c_int) -> birenError_t {
    ffi_call!("birenDriverGetVersion"(driverVersion) {
        *out(driverVersion)? = 1000 * runtime::VERSION_MAJOR + 10 * runtime::VERSION_MINOR;
        Ok(())
    })
}

/// Sets the current device's flags: at most one of birenDeviceScheduleSpin, ...Yield,
/// ...BlockingSync (or birenDeviceScheduleAuto, 0), optionally with birenDeviceMapHost and
/// birenDeviceLmemResizeToMax. They are recorded and reported by birenGetDeviceFlags; host waits
/// here always spin for about 20 µs and then sleep whatever the scheduling flag, page-locked host
/// memory is always mappable and fiber stacks are always kept. The flags survive
/// birenDeviceReset (as the flags of CUDA's primary context do). Unlike old CUDA versions,
/// setting them on a device already in use is allowed.
/// Returns BIREN_ERROR_INVALID_VALUE for bits outside birenDeviceMask or two scheduling flags.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenSetDeviceFlags(flags: c_uint) -> birenError_t {
    ffi_call!("birenSetDeviceFlags"(flags) {
        let rt = runtime::get()?;
        let r = rt.settings[rt.current_index()].set_flags(flags);
        if r.is_err() {
            diagnostics::finding("birenSetDeviceFlags", &format!("flags={flags:#x}: bits outside birenDeviceMask (0x1f) or more than one scheduling flag"));
        }
        r
    })
}

/// Writes the current device's flags (as set by birenSetDeviceFlags, 0 by default) to *flags.
/// BIREN_ERROR_INVALID_VALUE if NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGetDeviceFlags(flags: *mut c_uint) -> birenError_t {
    ffi_call!("birenGetDeviceFlags"(flags) {
        let rt = runtime::get()?;
        *out(flags)? = rt.settings[rt.current_index()].flags();
        Ok(())
    })
}

/// Sets a limit of the current device (see birenLimit). birenLimitStackSize is rounded up to a
/// multiple of 4 KiB, at least 16 KiB; it applies to kernels launched after the call (a launch
/// keeps the stack size it was made with), and a kernel whose threads need more stack than that
/// crashes the process as a stack overflow would. Limits go back to their defaults at
/// birenDeviceReset. birenDeviceGetLimit reports the value kept.
/// Returns BIREN_ERROR_UNSUPPORTED_LIMIT for the device-runtime and persisting-L2 limits and for
/// values that are not birenLimit values; BIREN_ERROR_INVALID_VALUE for a stack size over
/// 16 MiB or an L2 fetch granularity over 128. Nothing changes on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDeviceSetLimit(limit: birenLimit_int, value: usize) -> birenError_t {
    ffi_call!("birenDeviceSetLimit"(limit, value) {
        let rt = runtime::get()?;
        let r = rt.settings[rt.current_index()].set_limit(limit as i64, value);
        match r {
            Err(ErrorCode::UnsupportedLimit) => diagnostics::finding("birenDeviceSetLimit", &format!("limit={limit} is not supported by the simulated device")),
            Err(_) => diagnostics::finding("birenDeviceSetLimit", &format!("value={value} is out of range for limit {limit}")),
            Ok(()) => {}
        }
        r
    })
}

/// Writes the current value of `limit` on the current device to *pValue.
/// Returns BIREN_ERROR_INVALID_VALUE if pValue is NULL; BIREN_ERROR_UNSUPPORTED_LIMIT for a limit
/// the device does not support or an unknown value. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDeviceGetLimit(pValue: *mut usize, limit: birenLimit_int) -> birenError_t {
    ffi_call!("birenDeviceGetLimit"(pValue, limit) {
        let rt = runtime::get()?;
        let o = out(pValue)?;
        *o = rt.settings[rt.current_index()].limit(limit as i64)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_one_prefix_is_unchanged() {
        // name[256], 2 size_t, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], 4 ints.
        assert_eq!(PROP_V1_BYTES, 256 + 8 + 8 + 4 + 12 + 12 + 16);
        assert_eq!(
            std::mem::offset_of!(birenDeviceProp, streamPrioritiesSupported),
            PROP_V1_BYTES - 4
        );
    }
}
