//! What the simulated device is: the fixed numbers of compute capability 6.0 that the device
//! queries report, and the occupancy model built on them. One place, so that
//! `birenDeviceGetAttribute`, `birenGetDeviceProperties_v2`, the occupancy calculator and the
//! launch checks can never disagree.

use crate::runtime::exec::launch::{MAX_THREADS_PER_BLOCK, SHARED_MEM_PER_BLOCK};

/// Compute capability of every simulated device: 6.0. It fixes the resource limits below (those
/// of compute capability 6.0 in CUDA's tables: 48 KiB of shared memory per block with no opt-in
/// beyond, 64 KiB per multiprocessor, 2048 resident threads and 32 resident blocks per
/// multiprocessor, 64 K registers). Device-side facilities are those the header offers, not
/// every intrinsic of a 6.0 device.
pub const COMPUTE_CAPABILITY: (i32, i32) = (6, 0);
/// Threads of a warp.
pub const WARP_SIZE: u32 = 32;
/// Resident threads per compute unit (multiprocessor) in the occupancy model.
pub const MAX_THREADS_PER_MP: u32 = 2048;
/// Resident blocks per compute unit in the occupancy model.
pub const MAX_BLOCKS_PER_MP: u32 = 32;
/// Shared memory per compute unit in the occupancy model.
pub const SHARED_MEM_PER_MP: usize = 64 * 1024;
/// Largest dynamic shared memory a kernel may opt in to (birenFuncSetAttribute).
pub const SHARED_MEM_PER_BLOCK_OPTIN: usize = SHARED_MEM_PER_BLOCK;
/// Registers per block and per multiprocessor (reported; kernels are C functions whose register
/// use is unknown, so the occupancy model counts none).
pub const REGS_PER_BLOCK: i32 = 65536;
pub const REGS_PER_MP: i32 = 65536;
/// Constant memory (reported; symbols declared with BIREN_DEVICE_SYMBOL have no such limit).
pub const TOTAL_CONST_MEM: usize = 64 * 1024;
/// Largest pitch birenMallocPitch returns, and the largest a 2D copy accepts.
pub const MAX_PITCH: usize = i32::MAX as usize;
/// Pitch alignment of birenMallocPitch and birenMalloc3D (CUDA's texture pitch alignment).
pub const PITCH_ALIGNMENT: usize = 512;
/// Nominal clocks (kHz) and bus: a simulated device has none; these are fixed, plausible values.
pub const CLOCK_RATE_KHZ: i32 = 1_000_000;
pub const MEMORY_CLOCK_RATE_KHZ: i32 = 1_000_000;
pub const MEMORY_BUS_WIDTH: i32 = 256;
pub const L2_CACHE_SIZE: i32 = 4 << 20;

/// Resident blocks per compute unit for blocks of `block_size` threads using `shared` bytes of
/// shared memory each: the least of the thread, block and shared-memory limits. 0 when one
/// block does not fit (block_size over 1024 or shared over the per-block limit).
pub fn active_blocks_per_mp(block_size: u32, shared: usize) -> u32 {
    if block_size == 0
        || block_size as u64 > MAX_THREADS_PER_BLOCK
        || shared > SHARED_MEM_PER_BLOCK_OPTIN
    {
        return 0;
    }
    // Threads are allocated in whole warps.
    let warps = block_size.div_ceil(WARP_SIZE) * WARP_SIZE;
    let by_threads = MAX_THREADS_PER_MP / warps;
    let by_shared = SHARED_MEM_PER_MP
        .checked_div(shared)
        .map_or(MAX_BLOCKS_PER_MP, |n| n as u32);
    by_threads.min(by_shared).min(MAX_BLOCKS_PER_MP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_limits() {
        assert_eq!(active_blocks_per_mp(1024, 0), 2);
        assert_eq!(active_blocks_per_mp(256, 0), 8);
        assert_eq!(active_blocks_per_mp(32, 0), 32);
        assert_eq!(active_blocks_per_mp(1, 0), 32);
        assert_eq!(active_blocks_per_mp(33, 0), 32, "33 threads take two warps");
        assert_eq!(active_blocks_per_mp(128, 48 * 1024), 1);
        assert_eq!(active_blocks_per_mp(128, 16 * 1024), 4);
        assert_eq!(active_blocks_per_mp(1025, 0), 0);
        assert_eq!(active_blocks_per_mp(64, 48 * 1024 + 1), 0);
        assert_eq!(active_blocks_per_mp(0, 0), 0);
    }
}
