//! Warp-level operations inside kernels (CUDA's __syncwarp, __shfl*_sync, __ballot_sync,
//! __any_sync, __all_sync, __activemask, %laneid). A warp is 32 consecutive threads of a block
//! (linear index, x fastest); a rendezvous of the lanes a mask names completes when all of them
//! have arrived, except (CUDA's partial-warp rule) lanes that do not exist (beyond the block's
//! last thread) or have returned, which are not waited for: a shuffle from such a lane gives the
//! caller's own value (CUDA leaves it undefined), and votes leave them out. A mask naming a lane
//! that exists, has not returned and never arrives (it waits elsewhere), or not naming the
//! caller, fails the launch with BIREN_ERROR_LAUNCH_FAILURE.
//! The header's typed shuffles (int, unsigned, long long, unsigned long long, float, double)
//! call birenWarpExchange with the value's bits.

use super::boundary::ffi_value;
use super::types::birenKernelLoop;
use crate::device::block::{self, WarpOp};
use crate::device::KernelLoop;
use std::ffi::{c_int, c_uint, c_ulonglong};

/// The rendezvous every warp operation is made of. `op`: 0 sync, 1 shfl (param = source lane),
/// 2 shfl up (param = delta), 3 shfl down (delta), 4 shfl xor (lane mask), 5 ballot, 6 any,
/// 7 all (value = predicate). Each lane named by `mask` gives `value` (a shuffle's 64 bits;
/// a predicate: nonzero is true) and gets its result: the source lane's value (its own when the
/// source is outside its `width` segment, not in `mask`, beyond the block's last thread or
/// returned), the ballot of the predicates, or whether any / all are true. Lanes of `mask` that
/// do not exist or have returned are not waited for (CUDA's partial-warp rule). `width` is a power of two from 1 to 32 (CUDA's). `loop` is the
/// calling BIREN_KERNEL thread's loop (what the header passes), NULL in per-thread kernels.
/// An unknown op, a bad width or mask fails the launch (BIREN_ERROR_LAUNCH_FAILURE). Outside a
/// kernel: the caller is a warp of one lane (a shuffle returns `value`).
#[no_mangle]
pub extern "C" fn birenWarpExchange(
    loop_: *mut birenKernelLoop,
    mask: c_uint,
    op: c_int,
    value: c_ulonglong,
    param: c_int,
    width: c_int,
) -> c_ulonglong {
    // A jump: the warp ring's operations in assembly, the rest below.
    warp_exchange_entry(loop_ as *mut KernelLoop, mask, op, value, param, width)
}

block::warp_entry! {
    /// birenWarpExchange: a rendezvous of the warp in ring mode (the usual one once a warp's
    /// lanes go from one full-mask operation to the next) calls nothing and cannot panic; it
    /// stands outside the panic boundary. The rest is `warp_exchange_rust`.
    fn warp_exchange_entry,
    slow = warp_exchange_rust
}

/// birenWarpExchange's every case, inside the panic boundary.
extern "C" fn warp_exchange_rust(
    loop_: *mut KernelLoop,
    mask: c_uint,
    op: c_int,
    value: c_ulonglong,
    param: c_int,
    width: c_int,
) -> c_ulonglong {
    ffi_value!("birenWarpExchange", value, {
        let lp = loop_;
        match WarpOp::from_int(op) {
            // SAFETY: the loop is the header's (the calling thread's) or NULL.
            Some(op) => unsafe { block::warp_exchange(lp, mask, op, value, param, width) },
            None => {
                unsafe { block::misuse(lp, "unknown warp operation (birenWarpExchange op)") };
                value
            }
        }
    })
}

/// Waits until every lane of the caller's warp named by `mask` (which names the caller) has
/// reached a birenSyncWarp with that mask. CUDA: __syncwarp.
#[no_mangle]
pub extern "C" fn birenSyncWarp(mask: c_uint) {
    ffi_value!("birenSyncWarp", (), {
        unsafe { block::warp_exchange(std::ptr::null_mut(), mask, WarpOp::Sync, 0, 0, 32) };
    })
}

/// The lanes of `mask` whose `predicate` is nonzero, as a bit mask. CUDA: __ballot_sync.
#[no_mangle]
pub extern "C" fn birenBallotSync(mask: c_uint, predicate: c_int) -> c_uint {
    ffi_value!("birenBallotSync", 0, {
        unsafe {
            block::warp_exchange(
                std::ptr::null_mut(),
                mask,
                WarpOp::Ballot,
                (predicate != 0) as u64,
                0,
                32,
            ) as c_uint
        }
    })
}

/// Nonzero if the predicate of any lane of `mask` is nonzero. CUDA: __any_sync.
#[no_mangle]
pub extern "C" fn birenAnySync(mask: c_uint, predicate: c_int) -> c_int {
    ffi_value!("birenAnySync", 0, {
        unsafe {
            block::warp_exchange(
                std::ptr::null_mut(),
                mask,
                WarpOp::Any,
                (predicate != 0) as u64,
                0,
                32,
            ) as c_int
        }
    })
}

/// Nonzero if the predicates of all lanes of `mask` are nonzero. CUDA: __all_sync.
#[no_mangle]
pub extern "C" fn birenAllSync(mask: c_uint, predicate: c_int) -> c_int {
    ffi_value!("birenAllSync", 0, {
        unsafe {
            block::warp_exchange(
                std::ptr::null_mut(),
                mask,
                WarpOp::All,
                (predicate != 0) as u64,
                0,
                32,
            ) as c_int
        }
    })
}

/// The lanes of the caller's warp that exist in its block (a partial last warp has fewer): the
/// simulated warp runs converged between sync points, so a lane that returned early is still
/// named (pass the mask to a warp operation: it does not wait for such lanes). Outside a
/// kernel: 1. CUDA: __activemask.
#[no_mangle]
pub extern "C" fn birenActiveMask() -> c_uint {
    ffi_value!("birenActiveMask", 1, {
        unsafe { block::active_mask(std::ptr::null_mut()) }
    })
}

/// birenActiveMask for a thread of a BIREN_KERNEL block entry (`loop`; NULL: as birenActiveMask).
#[no_mangle]
pub extern "C" fn birenActiveMaskLoop(loop_: *mut birenKernelLoop) -> c_uint {
    ffi_value!("birenActiveMaskLoop", 1, {
        unsafe { block::active_mask(loop_ as *mut KernelLoop) }
    })
}

/// The caller's lane in its warp: its linear index in the block modulo 32. Outside a kernel: 0.
#[no_mangle]
pub extern "C" fn birenLaneId() -> c_uint {
    ffi_value!("birenLaneId", 0, {
        unsafe { block::lane_id(std::ptr::null_mut()) }
    })
}
