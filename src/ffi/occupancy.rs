//! Function attributes and the occupancy calculator (CUDA's cudaFuncGetAttributes,
//! cudaFuncSetAttribute, cudaFuncSetCacheConfig, cudaOccupancy*). Answers follow the compute
//! capability 6.0 model of runtime/caps.rs and agree with what birenLaunchKernel accepts.

use super::boundary::{ffi_call, out};
use super::types::*;
use crate::runtime::caps::{self, SHARED_MEM_PER_BLOCK_OPTIN, WARP_SIZE};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::launch::MAX_THREADS_PER_BLOCK;
use crate::runtime::{self, diagnostics};
use std::ffi::{c_int, c_uint};

/// What birenFuncGetAttributes reports about a kernel (CUDA's cudaFuncAttributes).
#[repr(C)]
pub struct birenFuncAttributes {
    /// Static shared memory: 0 (arrays declared with BIREN_SHARED are not counted).
    pub sharedSizeBytes: usize,
    /// Constant memory: 0.
    pub constSizeBytes: usize,
    /// Local memory per thread: 0 (a C kernel's stack use is not known; see birenLimitStackSize).
    pub localSizeBytes: usize,
    /// Largest block the kernel can be launched with: 1024.
    pub maxThreadsPerBlock: c_int,
    /// Registers per thread: 0 (not known for a C function).
    pub numRegs: c_int,
    /// The compute capability the kernel is "compiled" for, 10*major + minor: 60.
    pub ptxVersion: c_int,
    pub binaryVersion: c_int,
    /// 0: no -dlcm=ca.
    pub cacheModeCA: c_int,
    /// Largest dynamic shared memory a launch of the kernel may ask for (birenFuncSetAttribute).
    pub maxDynamicSharedSizeBytes: c_int,
    /// Preferred shared-memory carveout in percent, -1 for no preference (birenFuncSetAttribute).
    pub preferredShmemCarveout: c_int,
}

/// Attributes settable with birenFuncSetAttribute (CUDA's values).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenFuncAttribute {
    /// Largest dynamic shared memory of a launch, 0 .. sharedMemPerBlockOptin (49152).
    birenFuncAttributeMaxDynamicSharedMemorySize = 8,
    /// Preferred carveout, -1 (none) or 0 .. 100 percent: recorded and reported only (the
    /// simulated device has no L1 to split).
    birenFuncAttributePreferredSharedMemoryCarveout = 9,
}

/// A function attribute received from C: read as an integer and checked.
pub type birenFuncAttribute_int = c_int;

/// Cache preference of a kernel (CUDA's cudaFuncCache): recorded, no effect (no L1 to split).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenFuncCache {
    birenFuncCachePreferNone = 0,
    birenFuncCachePreferShared = 1,
    birenFuncCachePreferL1 = 2,
    birenFuncCachePreferEqual = 3,
}

/// A cache preference received from C: read as an integer and checked.
pub type birenFuncCache_int = c_int;

/// Occupancy flag: default behaviour.
pub const birenOccupancyDefault: c_uint = 0;
/// Occupancy flag: ignore the global caching override (no effect here).
pub const birenOccupancyDisableCachingOverride: c_uint = 1;

/// Dynamic shared memory a launch of `blockSize` threads needs (for
/// birenOccupancyMaxPotentialBlockSizeVariableSMem).
pub type birenBlockSizeToDynamicSMemSize_t =
    Option<unsafe extern "C" fn(blockSize: c_int) -> usize>;

fn kernel(func: birenKernel_t, call: &str) -> Result<usize> {
    match func {
        Some(f) => Ok(f as usize),
        None => {
            diagnostics::finding(call, "func is NULL");
            Err(ErrorCode::InvalidDeviceFunction)
        }
    }
}

/// Writes the attributes of kernel `func` to *attr.
/// Returns BIREN_ERROR_INVALID_VALUE if attr is NULL, BIREN_ERROR_INVALID_DEVICE_FUNCTION if func
/// is NULL; nothing is written on error. Any non-NULL C function is a kernel. Thread-safe.
#[no_mangle]
pub extern "C" fn birenFuncGetAttributes(
    attr: *mut birenFuncAttributes,
    func: birenKernel_t,
) -> birenError_t {
    ffi_call!("birenFuncGetAttributes"(attr, func) {
        let rt = runtime::get()?;
        let o = out(attr)?;
        let k = kernel(func, "birenFuncGetAttributes")?;
        let a = rt.func_attrs.get(k);
        let cc = caps::COMPUTE_CAPABILITY.0 * 10 + caps::COMPUTE_CAPABILITY.1;
        *o = birenFuncAttributes {
            sharedSizeBytes: 0,
            constSizeBytes: 0,
            localSizeBytes: 0,
            maxThreadsPerBlock: MAX_THREADS_PER_BLOCK as c_int,
            numRegs: 0,
            ptxVersion: cc,
            binaryVersion: cc,
            cacheModeCA: 0,
            maxDynamicSharedSizeBytes: a.max_dynamic_shared as c_int,
            preferredShmemCarveout: a.preferred_carveout,
        };
        Ok(())
    })
}

/// Sets an attribute of kernel `func` for its later launches.
/// birenFuncAttributeMaxDynamicSharedMemorySize (0 .. 49152) bounds the sharedMem of its
/// launches: a launch asking for more fails with BIREN_ERROR_INVALID_CONFIGURATION, and the
/// occupancy calls count 0 blocks for it. birenFuncAttributePreferredSharedMemoryCarveout (-1 or
/// 0 .. 100) is recorded and reported by birenFuncGetAttributes.
/// Returns BIREN_ERROR_INVALID_DEVICE_FUNCTION if func is NULL; BIREN_ERROR_INVALID_VALUE for an
/// unknown attribute or a value out of its range (nothing changes then). Thread-safe.
#[no_mangle]
pub extern "C" fn birenFuncSetAttribute(
    func: birenKernel_t,
    attr: birenFuncAttribute_int,
    value: c_int,
) -> birenError_t {
    ffi_call!("birenFuncSetAttribute"(func, attr, value) {
        let rt = runtime::get()?;
        let k = kernel(func, "birenFuncSetAttribute")?;
        let bad = |why: &str| {
            diagnostics::finding("birenFuncSetAttribute", why);
            Err(ErrorCode::InvalidValue)
        };
        match attr {
            8 => {
                if value < 0 || value as usize > SHARED_MEM_PER_BLOCK_OPTIN {
                    return bad(&format!("value={value}: the dynamic shared memory size must be 0 .. {SHARED_MEM_PER_BLOCK_OPTIN}"));
                }
                rt.func_attrs.update(k, |a| a.max_dynamic_shared = value as usize);
            }
            9 => {
                if !(-1..=100).contains(&value) {
                    return bad(&format!("value={value}: the carveout must be -1 or 0 .. 100"));
                }
                rt.func_attrs.update(k, |a| a.preferred_carveout = value);
            }
            _ => return bad(&format!("attr={attr} is not a birenFuncAttribute value")),
        }
        Ok(())
    })
}

/// Records the cache preference of kernel `func` (a hint without effect: the simulated device
/// has no L1 to split). Returns BIREN_ERROR_INVALID_DEVICE_FUNCTION if func is NULL,
/// BIREN_ERROR_INVALID_VALUE for a value that is not a birenFuncCache. Thread-safe.
#[no_mangle]
pub extern "C" fn birenFuncSetCacheConfig(
    func: birenKernel_t,
    cacheConfig: birenFuncCache_int,
) -> birenError_t {
    ffi_call!("birenFuncSetCacheConfig"(func, cacheConfig) {
        let rt = runtime::get()?;
        let k = kernel(func, "birenFuncSetCacheConfig")?;
        if !(0..=3).contains(&cacheConfig) {
            diagnostics::finding("birenFuncSetCacheConfig", &format!("cacheConfig={cacheConfig} is not a birenFuncCache value (0..3)"));
            return Err(ErrorCode::InvalidValue);
        }
        rt.func_attrs.update(k, |a| a.cache_config = cacheConfig);
        Ok(())
    })
}

/// Blocks of `block_size` threads with `shared` bytes that fit on one compute unit, for kernel `k`.
fn blocks_per_mp(rt: &runtime::Runtime, k: usize, block_size: c_int, shared: usize) -> u32 {
    if shared > rt.func_attrs.get(k).max_dynamic_shared {
        return 0;
    }
    caps::active_blocks_per_mp(block_size as u32, shared)
}

fn max_active(
    numBlocks: *mut c_int,
    func: birenKernel_t,
    blockSize: c_int,
    dynamicSMemSize: usize,
    flags: c_uint,
    call: &str,
) -> Result<()> {
    let rt = runtime::get()?;
    rt.current()?;
    let o = out(numBlocks)?;
    let k = kernel(func, call)?;
    if blockSize <= 0 || flags > birenOccupancyDisableCachingOverride {
        diagnostics::finding(
            call,
            &format!("blockSize={blockSize} flags={flags}: the block size must be positive and flags 0 or 1"),
        );
        return Err(ErrorCode::InvalidValue);
    }
    *o = blocks_per_mp(rt, k, blockSize, dynamicSMemSize) as c_int;
    Ok(())
}

/// Writes to *numBlocks how many blocks of `blockSize` threads, each with `dynamicSMemSize` bytes
/// of dynamic shared memory, are resident at once on one compute unit in the compute capability
/// 6.0 model: the least of 2048 / (blockSize rounded up to whole warps of 32), 32, and
/// 65536 / dynamicSMemSize. 0 when such a block cannot be launched at all (over 1024 threads,
/// or more shared memory than the kernel's birenFuncAttributeMaxDynamicSharedMemorySize): the
/// launch would fail with BIREN_ERROR_INVALID_CONFIGURATION. (The simulator's compute units run
/// one block at a time; the number is the one a CUDA program sizes its grids with.)
/// Returns BIREN_ERROR_INVALID_VALUE if numBlocks is NULL or blockSize <= 0,
/// BIREN_ERROR_INVALID_DEVICE_FUNCTION if func is NULL; nothing is written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenOccupancyMaxActiveBlocksPerMultiprocessor(
    numBlocks: *mut c_int,
    func: birenKernel_t,
    blockSize: c_int,
    dynamicSMemSize: usize,
) -> birenError_t {
    ffi_call!("birenOccupancyMaxActiveBlocksPerMultiprocessor"(numBlocks, func, blockSize, dynamicSMemSize) {
        max_active(numBlocks, func, blockSize, dynamicSMemSize, 0, "birenOccupancyMaxActiveBlocksPerMultiprocessor")
    })
}

/// As birenOccupancyMaxActiveBlocksPerMultiprocessor, with `flags` birenOccupancyDefault or
/// birenOccupancyDisableCachingOverride (no effect); other flags give BIREN_ERROR_INVALID_VALUE.
#[no_mangle]
pub extern "C" fn birenOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    numBlocks: *mut c_int,
    func: birenKernel_t,
    blockSize: c_int,
    dynamicSMemSize: usize,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenOccupancyMaxActiveBlocksPerMultiprocessorWithFlags"(numBlocks, func, blockSize, dynamicSMemSize, flags) {
        max_active(numBlocks, func, blockSize, dynamicSMemSize, flags, "birenOccupancyMaxActiveBlocksPerMultiprocessorWithFlags")
    })
}

fn potential(
    minGridSize: *mut c_int,
    blockSize: *mut c_int,
    func: birenKernel_t,
    smem: &dyn Fn(c_int) -> usize,
    blockSizeLimit: c_int,
    call: &str,
) -> Result<()> {
    let rt = runtime::get()?;
    let d = rt.current()?;
    let k = kernel(func, call)?;
    if minGridSize.is_null() || blockSize.is_null() || blockSizeLimit < 0 {
        diagnostics::finding(
            call,
            "minGridSize or blockSize is NULL, or blockSizeLimit is negative",
        );
        return Err(ErrorCode::InvalidValue);
    }
    let max = MAX_THREADS_PER_BLOCK as c_int;
    let limit = if blockSizeLimit == 0 {
        max
    } else {
        blockSizeLimit.min(max)
    };
    // From the largest candidate down, in whole warps (and the limit itself); the first with the
    // highest occupancy (threads resident per compute unit) wins, so ties go to larger blocks.
    let mut best = (0u32, 0 as c_int, 0u32);
    let mut candidate = limit;
    while candidate > 0 {
        let blocks = blocks_per_mp(rt, k, candidate, smem(candidate));
        let occupancy = blocks * candidate as u32;
        if occupancy > best.0 {
            best = (occupancy, candidate, blocks);
        }
        candidate = if candidate % WARP_SIZE as c_int != 0 {
            candidate / WARP_SIZE as c_int * WARP_SIZE as c_int
        } else {
            candidate - WARP_SIZE as c_int
        };
    }
    let (min_grid, block) = (best.2 as c_int * d.exec.compute_units() as c_int, best.1);
    *out(minGridSize)? = min_grid;
    *out(blockSize)? = block;
    Ok(())
}

/// Writes the block size that maximizes occupancy for kernel `func` with `dynamicSMemSize` bytes
/// of dynamic shared memory per block (at most `blockSizeLimit` threads; 0 = no limit) to
/// *blockSize, and the smallest grid that fills the current device at that occupancy
/// (resident blocks per compute unit times compute units) to *minGridSize. Both 0 when no
/// block size fits (the shared memory is over the kernel's limit). Ties go to the larger block.
/// A C function here; in CUDA a C++ template of the same name and parameters.
/// Returns BIREN_ERROR_INVALID_VALUE if minGridSize or blockSize is NULL or blockSizeLimit < 0,
/// BIREN_ERROR_INVALID_DEVICE_FUNCTION if func is NULL; nothing is written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenOccupancyMaxPotentialBlockSize(
    minGridSize: *mut c_int,
    blockSize: *mut c_int,
    func: birenKernel_t,
    dynamicSMemSize: usize,
    blockSizeLimit: c_int,
) -> birenError_t {
    ffi_call!("birenOccupancyMaxPotentialBlockSize"(minGridSize, blockSize, func, dynamicSMemSize, blockSizeLimit) {
        potential(minGridSize, blockSize, func, &|_| dynamicSMemSize, blockSizeLimit, "birenOccupancyMaxPotentialBlockSize")
    })
}

/// As birenOccupancyMaxPotentialBlockSize, with the dynamic shared memory of each candidate block
/// size given by `blockSizeToDynamicSMemSize(blockSize)` (called on the calling thread).
/// BIREN_ERROR_INVALID_VALUE also if that function is NULL.
#[no_mangle]
pub extern "C" fn birenOccupancyMaxPotentialBlockSizeVariableSMem(
    minGridSize: *mut c_int,
    blockSize: *mut c_int,
    func: birenKernel_t,
    blockSizeToDynamicSMemSize: birenBlockSizeToDynamicSMemSize_t,
    blockSizeLimit: c_int,
) -> birenError_t {
    ffi_call!("birenOccupancyMaxPotentialBlockSizeVariableSMem"(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, blockSizeLimit) {
        let Some(f) = blockSizeToDynamicSMemSize else {
            runtime::get()?;
            diagnostics::finding("birenOccupancyMaxPotentialBlockSizeVariableSMem", "blockSizeToDynamicSMemSize is NULL");
            return Err(ErrorCode::InvalidValue);
        };
        potential(minGridSize, blockSize, func, &|b| unsafe { f(b) }, blockSizeLimit, "birenOccupancyMaxPotentialBlockSizeVariableSMem")
    })
}
