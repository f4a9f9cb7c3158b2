//! Atomics for kernels (CUDA's atomicAdd, ... , __threadfence), exported for other languages.
//! C and C++ programs get the header's static inline versions of the same names (GCC/Clang
//! __atomic built-ins; define BIREN_NO_INLINE_BUILTINS to call these instead).
//!
//! CUDA's semantics: each returns the value at `address` before the operation; the operations
//! are atomic with respect to every thread of every kernel and the host, and relaxed (they
//! order nothing else: use birenThreadFence). A NULL or misaligned `address` does nothing and
//! returns 0.

use super::boundary::ffi_value;
use std::ffi::{c_double, c_float, c_int, c_uint, c_ulonglong};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};

/// The atomic at `p`, if `p` is non-NULL and aligned.
#[inline]
fn at<'a, A, T>(p: *mut T, from: unsafe fn(*mut T) -> &'a A) -> Option<&'a A> {
    if p.is_null() || !(p as usize).is_multiple_of(std::mem::align_of::<A>()) {
        return None;
    }
    // SAFETY: non-NULL and aligned; the caller promises it points to a live value that is only
    // accessed atomically while the operation runs.
    Some(unsafe { from(p) })
}

/// Replaces *address by `new(old)` atomically and returns the old value; 0 for a NULL or
/// misaligned address (CUDA's atomicInc and atomicDec, whose new value depends on the old one).
macro_rules! update {
    ($address:expr, $atomic:ident, |$old:ident| $new:expr) => {
        match at($address, $atomic::from_ptr) {
            Some(a) => a
                .fetch_update(Relaxed, Relaxed, |$old| Some($new))
                .unwrap_or(0),
            None => 0,
        }
    };
}

/// Adds `val`: *address += val. Returns the old value. CUDA: atomicAdd.
#[no_mangle]
pub extern "C" fn birenAtomicAddInt(address: *mut c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicAddInt", 0, {
        match at(address, AtomicI32::from_ptr) {
            Some(a) => a.fetch_add(val, Relaxed),
            None => 0,
        }
    })
}

/// Adds `val`: *address += val. Returns the old value. CUDA: atomicAdd.
#[no_mangle]
pub extern "C" fn birenAtomicAddUint(address: *mut c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicAddUint", 0, {
        match at(address, AtomicU32::from_ptr) {
            Some(a) => a.fetch_add(val, Relaxed),
            None => 0,
        }
    })
}

/// Adds `val`: *address += val. Returns the old value. CUDA: atomicAdd.
#[no_mangle]
pub extern "C" fn birenAtomicAddUll(address: *mut c_ulonglong, val: c_ulonglong) -> c_ulonglong {
    ffi_value!("birenAtomicAddUll", 0, {
        match at(address, AtomicU64::from_ptr) {
            Some(a) => a.fetch_add(val, Relaxed),
            None => 0,
        }
    })
}

/// Subtracts `val`: *address -= val. Returns the old value. CUDA: atomicSub.
#[no_mangle]
pub extern "C" fn birenAtomicSubInt(address: *mut c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicSubInt", 0, {
        match at(address, AtomicI32::from_ptr) {
            Some(a) => a.fetch_sub(val, Relaxed),
            None => 0,
        }
    })
}

/// Subtracts `val`: *address -= val. Returns the old value. CUDA: atomicSub.
#[no_mangle]
pub extern "C" fn birenAtomicSubUint(address: *mut c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicSubUint", 0, {
        match at(address, AtomicU32::from_ptr) {
            Some(a) => a.fetch_sub(val, Relaxed),
            None => 0,
        }
    })
}

/// Subtracts `val`: *address -= val. Returns the old value. CUDA: atomicSub.
#[no_mangle]
pub extern "C" fn birenAtomicSubUll(address: *mut c_ulonglong, val: c_ulonglong) -> c_ulonglong {
    ffi_value!("birenAtomicSubUll", 0, {
        match at(address, AtomicU64::from_ptr) {
            Some(a) => a.fetch_sub(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores `val`. Returns the old value. CUDA: atomicExch.
#[no_mangle]
pub extern "C" fn birenAtomicExchInt(address: *mut c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicExchInt", 0, {
        match at(address, AtomicI32::from_ptr) {
            Some(a) => a.swap(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores `val`. Returns the old value. CUDA: atomicExch.
#[no_mangle]
pub extern "C" fn birenAtomicExchUint(address: *mut c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicExchUint", 0, {
        match at(address, AtomicU32::from_ptr) {
            Some(a) => a.swap(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores `val`. Returns the old value. CUDA: atomicExch.
#[no_mangle]
pub extern "C" fn birenAtomicExchUll(address: *mut c_ulonglong, val: c_ulonglong) -> c_ulonglong {
    ffi_value!("birenAtomicExchUll", 0, {
        match at(address, AtomicU64::from_ptr) {
            Some(a) => a.swap(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores the smaller of *address and `val`. Returns the old value. CUDA: atomicMin.
#[no_mangle]
pub extern "C" fn birenAtomicMinInt(address: *mut c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicMinInt", 0, {
        match at(address, AtomicI32::from_ptr) {
            Some(a) => a.fetch_min(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores the smaller of *address and `val`. Returns the old value. CUDA: atomicMin.
#[no_mangle]
pub extern "C" fn birenAtomicMinUint(address: *mut c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicMinUint", 0, {
        match at(address, AtomicU32::from_ptr) {
            Some(a) => a.fetch_min(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores the smaller of *address and `val`. Returns the old value. CUDA: atomicMin.
#[no_mangle]
pub extern "C" fn birenAtomicMinUll(address: *mut c_ulonglong, val: c_ulonglong) -> c_ulonglong {
    ffi_value!("birenAtomicMinUll", 0, {
        match at(address, AtomicU64::from_ptr) {
            Some(a) => a.fetch_min(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores the larger of *address and `val`. Returns the old value. CUDA: atomicMax.
#[no_mangle]
pub extern "C" fn birenAtomicMaxInt(address: *mut c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicMaxInt", 0, {
        match at(address, AtomicI32::from_ptr) {
            Some(a) => a.fetch_max(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores the larger of *address and `val`. Returns the old value. CUDA: atomicMax.
#[no_mangle]
pub extern "C" fn birenAtomicMaxUint(address: *mut c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicMaxUint", 0, {
        match at(address, AtomicU32::from_ptr) {
            Some(a) => a.fetch_max(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores the larger of *address and `val`. Returns the old value. CUDA: atomicMax.
#[no_mangle]
pub extern "C" fn birenAtomicMaxUll(address: *mut c_ulonglong, val: c_ulonglong) -> c_ulonglong {
    ffi_value!("birenAtomicMaxUll", 0, {
        match at(address, AtomicU64::from_ptr) {
            Some(a) => a.fetch_max(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores (old >= val) ? 0 : old + 1 (CUDA's atomicInc, BIREN extension: here compared as int). Returns the old value. CUDA: atomicInc.
#[no_mangle]
pub extern "C" fn birenAtomicIncInt(address: *mut c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicIncInt", 0, {
        update!(address, AtomicI32, |o| if o >= val { 0 } else { o + 1 })
    })
}

/// Stores (old >= val) ? 0 : old + 1 (CUDA's atomicInc, which has only the unsigned form). Returns the old value. CUDA: atomicInc.
#[no_mangle]
pub extern "C" fn birenAtomicIncUint(address: *mut c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicIncUint", 0, {
        update!(address, AtomicU32, |o| if o >= val { 0 } else { o + 1 })
    })
}

/// Stores (old >= val) ? 0 : old + 1 (CUDA's atomicInc, which has only the unsigned form). Returns the old value. CUDA: atomicInc.
#[no_mangle]
pub extern "C" fn birenAtomicIncUll(address: *mut c_ulonglong, val: c_ulonglong) -> c_ulonglong {
    ffi_value!("birenAtomicIncUll", 0, {
        update!(address, AtomicU64, |o| if o >= val { 0 } else { o + 1 })
    })
}

/// Stores (old == 0 || old > val) ? val : old - 1 (CUDA's atomicDec, BIREN extension: here compared as int). Returns the old value. CUDA: atomicDec.
#[no_mangle]
pub extern "C" fn birenAtomicDecInt(address: *mut c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicDecInt", 0, {
        update!(address, AtomicI32, |o| if o == 0 || o > val {
            val
        } else {
            o - 1
        })
    })
}

/// Stores (old == 0 || old > val) ? val : old - 1 (CUDA's atomicDec, which has only the unsigned form). Returns the old value. CUDA: atomicDec.
#[no_mangle]
pub extern "C" fn birenAtomicDecUint(address: *mut c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicDecUint", 0, {
        update!(address, AtomicU32, |o| if o == 0 || o > val {
            val
        } else {
            o - 1
        })
    })
}

/// Stores (old == 0 || old > val) ? val : old - 1 (CUDA's atomicDec, which has only the unsigned form). Returns the old value. CUDA: atomicDec.
#[no_mangle]
pub extern "C" fn birenAtomicDecUll(address: *mut c_ulonglong, val: c_ulonglong) -> c_ulonglong {
    ffi_value!("birenAtomicDecUll", 0, {
        update!(address, AtomicU64, |o| if o == 0 || o > val {
            val
        } else {
            o - 1
        })
    })
}

/// Stores `val` if *address equals `compare`; returns the old value either way (CUDA: atomicCAS).
#[no_mangle]
pub extern "C" fn birenAtomicCASInt(address: *mut c_int, compare: c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicCASInt", 0, {
        match at(address, AtomicI32::from_ptr) {
            Some(a) => match a.compare_exchange(compare, val, Relaxed, Relaxed) {
                Ok(v) | Err(v) => v,
            },
            None => 0,
        }
    })
}

/// Stores `val` if *address equals `compare`; returns the old value either way (CUDA: atomicCAS).
#[no_mangle]
pub extern "C" fn birenAtomicCASUint(address: *mut c_uint, compare: c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicCASUint", 0, {
        match at(address, AtomicU32::from_ptr) {
            Some(a) => match a.compare_exchange(compare, val, Relaxed, Relaxed) {
                Ok(v) | Err(v) => v,
            },
            None => 0,
        }
    })
}

/// Stores `val` if *address equals `compare`; returns the old value either way (CUDA: atomicCAS).
#[no_mangle]
pub extern "C" fn birenAtomicCASUll(
    address: *mut c_ulonglong,
    compare: c_ulonglong,
    val: c_ulonglong,
) -> c_ulonglong {
    ffi_value!("birenAtomicCASUll", 0, {
        match at(address, AtomicU64::from_ptr) {
            Some(a) => match a.compare_exchange(compare, val, Relaxed, Relaxed) {
                Ok(v) | Err(v) => v,
            },
            None => 0,
        }
    })
}

/// Stores *address & val. Returns the old value. CUDA: atomicAnd.
#[no_mangle]
pub extern "C" fn birenAtomicAndInt(address: *mut c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicAndInt", 0, {
        match at(address, AtomicI32::from_ptr) {
            Some(a) => a.fetch_and(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores *address & val. Returns the old value. CUDA: atomicAnd.
#[no_mangle]
pub extern "C" fn birenAtomicAndUint(address: *mut c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicAndUint", 0, {
        match at(address, AtomicU32::from_ptr) {
            Some(a) => a.fetch_and(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores *address & val. Returns the old value. CUDA: atomicAnd.
#[no_mangle]
pub extern "C" fn birenAtomicAndUll(address: *mut c_ulonglong, val: c_ulonglong) -> c_ulonglong {
    ffi_value!("birenAtomicAndUll", 0, {
        match at(address, AtomicU64::from_ptr) {
            Some(a) => a.fetch_and(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores *address | val. Returns the old value. CUDA: atomicOr.
#[no_mangle]
pub extern "C" fn birenAtomicOrInt(address: *mut c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicOrInt", 0, {
        match at(address, AtomicI32::from_ptr) {
            Some(a) => a.fetch_or(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores *address | val. Returns the old value. CUDA: atomicOr.
#[no_mangle]
pub extern "C" fn birenAtomicOrUint(address: *mut c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicOrUint", 0, {
        match at(address, AtomicU32::from_ptr) {
            Some(a) => a.fetch_or(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores *address | val. Returns the old value. CUDA: atomicOr.
#[no_mangle]
pub extern "C" fn birenAtomicOrUll(address: *mut c_ulonglong, val: c_ulonglong) -> c_ulonglong {
    ffi_value!("birenAtomicOrUll", 0, {
        match at(address, AtomicU64::from_ptr) {
            Some(a) => a.fetch_or(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores *address ^ val. Returns the old value. CUDA: atomicXor.
#[no_mangle]
pub extern "C" fn birenAtomicXorInt(address: *mut c_int, val: c_int) -> c_int {
    ffi_value!("birenAtomicXorInt", 0, {
        match at(address, AtomicI32::from_ptr) {
            Some(a) => a.fetch_xor(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores *address ^ val. Returns the old value. CUDA: atomicXor.
#[no_mangle]
pub extern "C" fn birenAtomicXorUint(address: *mut c_uint, val: c_uint) -> c_uint {
    ffi_value!("birenAtomicXorUint", 0, {
        match at(address, AtomicU32::from_ptr) {
            Some(a) => a.fetch_xor(val, Relaxed),
            None => 0,
        }
    })
}

/// Stores *address ^ val. Returns the old value. CUDA: atomicXor.
#[no_mangle]
pub extern "C" fn birenAtomicXorUll(address: *mut c_ulonglong, val: c_ulonglong) -> c_ulonglong {
    ffi_value!("birenAtomicXorUll", 0, {
        match at(address, AtomicU64::from_ptr) {
            Some(a) => a.fetch_xor(val, Relaxed),
            None => 0,
        }
    })
}

/// Adds `val` to the float at `address` (a compare-and-swap loop); returns the old value.
/// CUDA: atomicAdd.
#[no_mangle]
pub extern "C" fn birenAtomicAddFloat(address: *mut c_float, val: c_float) -> c_float {
    ffi_value!("birenAtomicAddFloat", 0.0, {
        match at(address as *mut u32, AtomicU32::from_ptr) {
            Some(a) => f32::from_bits(
                a.fetch_update(Relaxed, Relaxed, |o| {
                    Some((f32::from_bits(o) + val).to_bits())
                })
                .unwrap_or(0),
            ),
            None => 0.0,
        }
    })
}

/// Stores `val` in the float at `address`; returns the old value. CUDA: atomicExch.
#[no_mangle]
pub extern "C" fn birenAtomicExchFloat(address: *mut c_float, val: c_float) -> c_float {
    ffi_value!("birenAtomicExchFloat", 0.0, {
        match at(address as *mut u32, AtomicU32::from_ptr) {
            Some(a) => f32::from_bits(a.swap(val.to_bits(), Relaxed)),
            None => 0.0,
        }
    })
}

/// Adds `val` to the double at `address` (a compare-and-swap loop); returns the old value.
/// CUDA: atomicAdd.
#[no_mangle]
pub extern "C" fn birenAtomicAddDouble(address: *mut c_double, val: c_double) -> c_double {
    ffi_value!("birenAtomicAddDouble", 0.0, {
        match at(address as *mut u64, AtomicU64::from_ptr) {
            Some(a) => f64::from_bits(
                a.fetch_update(Relaxed, Relaxed, |o| {
                    Some((f64::from_bits(o) + val).to_bits())
                })
                .unwrap_or(0),
            ),
            None => 0.0,
        }
    })
}

/// Stores `val` in the double at `address`; returns the old value. CUDA: atomicExch.
#[no_mangle]
pub extern "C" fn birenAtomicExchDouble(address: *mut c_double, val: c_double) -> c_double {
    ffi_value!("birenAtomicExchDouble", 0.0, {
        match at(address as *mut u64, AtomicU64::from_ptr) {
            Some(a) => f64::from_bits(a.swap(val.to_bits(), Relaxed)),
            None => 0.0,
        }
    })
}

/// Orders the calling thread's memory accesses before and after it as seen by every thread of
/// every kernel and the host (a sequentially consistent fence). CUDA: __threadfence.
#[no_mangle]
pub extern "C" fn birenThreadFence() {
    ffi_value!("birenThreadFence", (), {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst)
    })
}

/// Orders the calling thread's memory accesses as seen by the threads of its block. The threads
/// of a block share one compute unit's OS thread, so a compiler fence is enough.
/// CUDA: __threadfence_block.
#[no_mangle]
pub extern "C" fn birenThreadFenceBlock() {
    ffi_value!("birenThreadFenceBlock", (), {
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst)
    })
}
