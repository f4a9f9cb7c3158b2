//! What a kernel uses while it runs: its arguments, its position in the grid, shared memory
//! and barriers. Outside a kernel the indices are zero and the barrier does nothing.
//!
//! A kernel is an `extern "C" fn`, so a panic inside it cannot unwind into the runtime: Rust
//! aborts the process. To fail a launch, call [`trap`] (the launch then fails with
//! `LaunchFailure`).
//!
//! ```
//! use std::ffi::c_void;
//! use biren::{kernel, DeviceBuffer, DevicePtr, Launch};
//!
//! /// out[blockIdx.x] = sum of the block's slice of `input` (blockDim.x a power of two).
//! extern "C" fn block_sum(args: *mut *mut c_void) {
//!     // SAFETY: launched with (DevicePtr<i32>, DevicePtr<i32>) and blockDim.x * 4 bytes of
//!     // shared memory.
//!     unsafe {
//!         let input: DevicePtr<i32> = kernel::arg(args, 0);
//!         let out: DevicePtr<i32> = kernel::arg(args, 1);
//!         let sh = kernel::shared_memory().cast::<i32>();
//!         let t = kernel::thread_idx().x as usize;
//!         let b = kernel::block_idx().x as usize;
//!         let n = kernel::block_dim().x as usize;
//!         *sh.add(t) = *input.as_raw().add(b * n + t);
//!         kernel::sync_threads();
//!         let mut s = n / 2;
//!         while s > 0 {
//!             if t < s {
//!                 *sh.add(t) += *sh.add(t + s);
//!             }
//!             kernel::sync_threads();
//!             s /= 2;
//!         }
//!         if t == 0 {
//!             *out.as_raw().add(b) = *sh;
//!         }
//!     }
//! }
//!
//! # fn main() -> Result<(), biren::BirenError> {
//! biren::init()?;
//! let input: Vec<i32> = (0..4 * 64).collect();
//! let d_in = DeviceBuffer::from_slice(&input)?;
//! let d_out = DeviceBuffer::<i32>::zeroed(4)?;
//! // SAFETY: block_sum's arguments, and 64 * 4 bytes of shared memory for 64 threads.
//! unsafe { Launch::new(block_sum, 4, 64).shared_mem(64 * 4).launch(&[&d_in, &d_out])? };
//! biren::synchronize()?;
//! let expected: Vec<i32> = input.chunks(64).map(|c| c.iter().sum()).collect();
//! assert_eq!(d_out.to_vec()?, expected);
//! # Ok(()) }
//! ```

use crate::memory::DeviceCopy;
use crate::sys::{self, Dim3};
use std::ffi::c_void;

/// Argument `i` of a kernel's `args`, as a `T`.
///
/// # Safety
/// `args` must be the array the kernel received, with more than `i` entries, entry `i`
/// pointing to a value of type `T` (the launch passed a `T` there).
pub unsafe fn arg<T: DeviceCopy>(args: *mut *mut c_void, i: usize) -> T {
    // SAFETY: the caller's promise; copied values need not be aligned for T.
    unsafe { (*args.add(i)).cast::<T>().read_unaligned() }
}

fn builtin(f: impl FnOnce(&sys::Api) -> Dim3) -> Dim3 {
    sys::api().map_or(Dim3::default(), f)
}

/// Index of the calling thread in its block (`birenThreadIdx`).
pub fn thread_idx() -> Dim3 {
    // SAFETY: the built-ins take no arguments and read the calling thread's context.
    builtin(|a| unsafe { (a.birenThreadIdx)() })
}

/// Index of the calling thread's block in the grid (`birenBlockIdx`).
pub fn block_idx() -> Dim3 {
    // SAFETY: as thread_idx.
    builtin(|a| unsafe { (a.birenBlockIdx)() })
}

/// Dimensions of the calling thread's block (`birenBlockDim`).
pub fn block_dim() -> Dim3 {
    // SAFETY: as thread_idx.
    builtin(|a| unsafe { (a.birenBlockDim)() })
}

/// Dimensions of the grid (`birenGridDim`).
pub fn grid_dim() -> Dim3 {
    // SAFETY: as thread_idx.
    builtin(|a| unsafe { (a.birenGridDim)() })
}

/// `blockIdx.x * blockDim.x + threadIdx.x`: the usual one-dimensional element index.
pub fn global_index_x() -> usize {
    block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize
}

/// The block's dynamic shared memory (the launch's `shared_mem` bytes), NULL if none.
pub fn shared_memory() -> *mut c_void {
    // SAFETY: no arguments; reads the calling thread's context.
    sys::api().map_or(std::ptr::null_mut(), |a| unsafe { (a.birenSharedMemory)() })
}

/// Barrier of the block: every thread of the block arrives before any passes. A barrier some
/// threads never reach fails the launch with `LaunchFailure` instead of hanging.
pub fn sync_threads() {
    if let Some(a) = sys::api() {
        // SAFETY: no arguments; outside a kernel it does nothing.
        unsafe { (a.birenSyncThreads)() }
    }
}

/// Aborts the launch: the calling thread stops and the launch fails with `LaunchFailure`
/// (sticky until [`crate::device_reset`]). Outside a kernel it does nothing and returns.
///
/// # Safety
/// Inside a kernel it does not return: the runtime abandons the thread's frames without
/// unwinding, as `longjmp` would. No frame between the kernel's entry and this call may own a
/// value whose destructor must run (a lock guard, a scope guard); plain values are fine.
pub unsafe fn trap() {
    if let Some(a) = sys::api() {
        // SAFETY: no arguments; the caller's promise covers the abandoned frames.
        unsafe { (a.birenTrap)() }
    }
}
