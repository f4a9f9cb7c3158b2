//! Memory (SPEC §3): device and page-locked host allocations, copies, fills, queries.

use super::boundary::{ffi_call, handle, out};
use super::types::*;
use super::{current_device, device_of};
use crate::runtime::diagnostics::{self, caller, racecheck};
use crate::runtime::error::ErrorCode;
use crate::runtime::exec::graph::capture;
use crate::runtime::exec::work::Work;
use crate::runtime::memory::ALIGN;
use crate::runtime::{self, exec::context::sync_forbidden_here};
use std::ffi::{c_int, c_void};

/// Guard bytes on each side of a device allocation while the validator is on.
pub(crate) const GUARD: usize = 4 * ALIGN;

/// Allocates `size` bytes of device memory on the current device, 256-byte aligned, and writes
/// its address to *devPtr. The memory is not initialized. Size 0 succeeds with *devPtr = NULL.
/// Returns BIREN_ERROR_INVALID_VALUE if devPtr is NULL, BIREN_ERROR_OUT_OF_MEMORY past the
/// device's capacity (BIREN_DEVICE_MEMORY); *devPtr is written only on success. When the device
/// is full it waits for memory freed behind pending work, except inside a host function, stream
/// callback or kernel (that work may be queued behind the caller): OUT_OF_MEMORY at once there.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenMalloc(devPtr: *mut *mut c_void, size: usize) -> birenError_t {
    ffi_call!("birenMalloc"(devPtr, size) {
        let (_, d) = current_device()?;
        let o = out(devPtr)?;
        capture::check_unsafe("birenMalloc")?;
        if size == 0 {
            *o = std::ptr::null_mut();
            return Ok(());
        }
        let guard = if diagnostics::validator_on() { GUARD } else { 0 };
        let p = d.malloc(size, guard, caller::user_caller())?;
        *o = p as *mut c_void;
        Ok(())
    })
}

/// Frees device memory from birenMalloc. NULL succeeds. Work already enqueued that uses the
/// memory still completes: the memory is released when it has. Returns
/// BIREN_ERROR_INVALID_DEVICE_POINTER if devPtr is not the start of a live device allocation
/// (a double free, a host pointer, an address inside an allocation). Thread-safe.
#[no_mangle]
pub extern "C" fn birenFree(devPtr: *mut c_void) -> birenError_t {
    ffi_call!("birenFree"(devPtr) {
        let rt = runtime::get()?;
        if devPtr.is_null() {
            return Ok(());
        }
        capture::check_unsafe("birenFree")?;
        let p = devPtr as usize;
        let Some((dev, _)) = rt.device_region(p) else {
            diagnostics::finding("birenFree", &format!("devPtr={p:#x} is not a live device allocation (double free, or not from birenMalloc)"));
            return Err(ErrorCode::InvalidDevicePointer);
        };
        let d = device_of(rt, dev)?;
        if diagnostics::validator_on() {
            crate::runtime::diagnostics::validator::check_on_free(&d.exec.memory, p);
        }
        rt.pools.forget(p, &d.exec.memory);
        rt.managed.remove(p);
        let r = d.free(p);
        if r.is_ok() && racecheck::on() {
            racecheck::freed(p);
        }
        r.inspect_err(|_| {
            diagnostics::finding("birenFree", &format!("devPtr={p:#x} points inside an allocation, not at its start"));
        })
    })
}

/// Allocates `size` bytes of page-locked host memory, known to the runtime (so
/// birenMemcpyDefault and birenPointerGetAttributes recognize it), and writes it to *ptr.
/// Size 0 succeeds with *ptr = NULL. BIREN_ERROR_INVALID_VALUE if ptr is NULL;
/// BIREN_ERROR_OUT_OF_MEMORY if the host refuses.
#[no_mangle]
pub extern "C" fn birenMallocHost(ptr: *mut *mut c_void, size: usize) -> birenError_t {
    ffi_call!("birenMallocHost"(ptr, size) {
        let rt = runtime::get()?;
        let o = out(ptr)?;
        if size == 0 {
            *o = std::ptr::null_mut();
            return Ok(());
        }
        let p = rt.host_memory.allocate(size, 0, caller::user_caller())?;
        if racecheck::on() {
            racecheck::alloc(p, size, None);
        }
        *o = p as *mut c_void;
        Ok(())
    })
}

/// Frees memory from birenMallocHost or birenHostAlloc. NULL succeeds. BIREN_ERROR_INVALID_VALUE
/// if ptr is not the start of a live birenMallocHost/birenHostAlloc allocation (a range from
/// birenHostRegister included: birenHostUnregister forgets those).
#[no_mangle]
pub extern "C" fn birenFreeHost(ptr: *mut c_void) -> birenError_t {
    ffi_call!("birenFreeHost"(ptr) {
        let rt = runtime::get()?;
        if ptr.is_null() {
            return Ok(());
        }
        if racecheck::on() && rt.host_memory.find(ptr as usize).is_some_and(|r| r.base == ptr as usize) {
            racecheck::host_buffer_freed(ptr as usize);
        }
        // Registered ranges are the caller's memory: birenHostUnregister, not this, forgets them.
        let a = rt.host_memory.unregister_if(ptr as usize, |a| !a.is_foreign()).map_err(|_| ErrorCode::InvalidValue)?;
        rt.host_flags.remove(a.base);
        rt.host_memory.release(a);
        Ok(())
    })
}

/// Resolves `stream`, refuses synchronous calls where they would wait for themselves, and lets
/// `plan` check the arguments (None: nothing to do). Then enqueues the work (or, synchronous on an
/// idle device, lets `inline` do it at once) and, if `sync`, waits for it.
pub(crate) fn copy_or_fill(
    stream: birenStream_t,
    sync: bool,
    call: &str,
    plan: impl FnOnce(&runtime::Runtime) -> crate::runtime::error::Result<Option<Work>>,
    inline: Option<fn(&Work)>,
) -> crate::runtime::error::Result<()> {
    let rt = runtime::get()?;
    let s = rt.stream(handle(stream))?;
    let d = device_of(rt, s.device)?;
    if sync && sync_forbidden_here() {
        return Err(ErrorCode::NotPermitted);
    }
    // The memory is checked now; a reset between the check and the enqueue frees it.
    let epoch = d.exec.epoch();
    let Some(work) = plan(rt)? else {
        return Ok(());
    };
    // Nothing is queued anywhere on the device: a synchronous call is next in line; do it here
    // (unless tracing: the trace shows copies where they run, on the stream and a copy engine;
    // not while capturing: the enqueue decides whether the call may touch the default stream;
    // nor with race detection on: it sees accesses as ops in streams; nor when recording or
    // replaying: the copy's place among the device's operations is logged).
    if let Some(f) = inline.filter(|_| {
        sync && !runtime::diagnostics::trace::on()
            && !capture::active()
            && !racecheck::on()
            && !runtime::exec::schedule::exact()
    }) {
        if d.run_inline_since(&s, epoch, || f(&work)) {
            return Ok(());
        }
    }
    let seq = d.enqueue_since(&s, work, Vec::new(), epoch)?;
    if sync {
        d.wait_own(&s, seq, call)?;
    }
    Ok(())
}

/// Runs a validated copy on the calling thread (a synchronous copy on an idle device).
pub(crate) fn copy_now(w: &Work) {
    if let Work::Copy { dst, src, len, .. } = *w {
        // SAFETY: both ranges were validated before the copy was planned, and no reset has run
        // since (copy_or_fill checks the epoch).
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
    }
}

fn memcpy_on(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
    stream: birenStream_t,
    sync: bool,
    call: &str,
) -> crate::runtime::error::Result<()> {
    let plan = |rt: &runtime::Runtime| {
        let p = rt.plan_copy(dst as usize, src as usize, count, kind as i64, call)?;
        Ok(p.map(|p| Work::Copy {
            dst: p.dst,
            src: p.src,
            len: p.len,
            engine: p.engine,
            dir: p.dir(),
        }))
    };
    copy_or_fill(stream, sync, call, plan, Some(copy_now))
}

/// Copies `count` bytes from src to dst and returns when the copy is done. Ordered like work on
/// the default stream: it runs after all earlier work in blocking streams.
///
/// Checked before anything is written (validator or not): an unknown kind gives
/// BIREN_ERROR_INVALID_MEMCPY_DIRECTION; count 0 succeeds at once; NULL dst or src gives
/// BIREN_ERROR_INVALID_VALUE; a side that `kind` says is device memory but lies in no live device
/// allocation gives BIREN_ERROR_INVALID_DEVICE_POINTER; a device range that runs past the end of
/// its allocation gives BIREN_ERROR_OUT_OF_BOUNDS; a host range that wraps around the address
/// space gives BIREN_ERROR_INVALID_VALUE. A side that `kind` says is host memory but that touches
/// a live device allocation, page-locked memory (birenMallocHost, birenHostAlloc) or a
/// birenHostRegister range is bounds-checked all the same: running past its end, or into it from
/// outside, gives BIREN_ERROR_OUT_OF_BOUNDS.
/// BIREN_ERROR_DEADLOCK if the copy can never run: it is ordered after a blocking stream that
/// waits for the first record of an event nobody records (reported once the stall has lasted
/// BIREN_DEADLOCK_TIMEOUT_MS; the copy is withdrawn). On any error nothing is written.
/// birenMemcpyDefault treats a pointer inside a live device allocation as device memory and any
/// other pointer as host memory. Overlapping ranges are copied as by memmove.
/// BIREN_ERROR_NOT_PERMITTED inside a kernel or a host function.
#[no_mangle]
pub extern "C" fn birenMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: birenMemcpyKind_int,
) -> birenError_t {
    ffi_call!("birenMemcpy"(dst, src, count, kind) {
        current_device()?;
        capture::check_unsafe("birenMemcpy")?;
        memcpy_on(dst, src, count, kind, std::ptr::null_mut(), true, "birenMemcpy")
    })
}

/// Enqueues a copy on `stream` (NULL: the default stream), run by a copy engine of the stream's
/// device, concurrently with kernels of other streams. Checked at enqueue exactly as birenMemcpy;
/// on error nothing is enqueued. Both ranges must stay valid until the copy completes.
/// BIREN_ERROR_INVALID_HANDLE for a destroyed or unknown stream.
#[no_mangle]
pub extern "C" fn birenMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: birenMemcpyKind_int,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemcpyAsync"(dst, src, count, kind, stream) {
        memcpy_on(dst, src, count, kind, stream, false, "birenMemcpyAsync")
    })
}

fn memset_on(
    devPtr: *mut c_void,
    value: c_int,
    count: usize,
    stream: birenStream_t,
    sync: bool,
    call: &str,
) -> crate::runtime::error::Result<()> {
    let plan = |rt: &runtime::Runtime| {
        let p = rt.plan_fill(devPtr as usize, count, call)?;
        Ok(p.map(|()| Work::Fill {
            dst: devPtr as usize,
            value: value as u8,
            len: count,
        }))
    };
    copy_or_fill(stream, sync, call, plan, None)
}

/// Fills `count` bytes of device memory with the byte `value` (its low 8 bits) and returns when
/// done; ordered like work on the default stream. Count 0 succeeds; NULL gives
/// BIREN_ERROR_INVALID_VALUE; memory outside any live device allocation
/// BIREN_ERROR_INVALID_DEVICE_POINTER; a range past the end BIREN_ERROR_OUT_OF_BOUNDS;
/// BIREN_ERROR_DEADLOCK if it can never run (as birenMemcpy). On error nothing is written.
#[no_mangle]
pub extern "C" fn birenMemset(devPtr: *mut c_void, value: c_int, count: usize) -> birenError_t {
    ffi_call!("birenMemset"(devPtr, value, count) {
        current_device()?;
        capture::check_unsafe("birenMemset")?;
        memset_on(devPtr, value, count, std::ptr::null_mut(), true, "birenMemset")
    })
}

/// Enqueues a byte fill of device memory on `stream`; checked at enqueue as birenMemset.
#[no_mangle]
pub extern "C" fn birenMemsetAsync(
    devPtr: *mut c_void,
    value: c_int,
    count: usize,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemsetAsync"(devPtr, value, count, stream) {
        memset_on(devPtr, value, count, stream, false, "birenMemsetAsync")
    })
}

/// Writes the current device's free and total memory in bytes. Memory freed while work that may
/// use it is still pending counts as used until that work completes. BIREN_ERROR_INVALID_VALUE if
/// either pointer is NULL (nothing is written then).
#[no_mangle]
pub extern "C" fn birenMemGetInfo(free: *mut usize, total: *mut usize) -> birenError_t {
    ffi_call!("birenMemGetInfo"(free, total) {
        let (_, d) = current_device()?;
        let (f, t) = (out(free)?, out(total)?);
        d.exec.reclaim();
        let cap = d.exec.memory.capacity();
        *f = cap.saturating_sub(d.exec.memory.used()) as usize;
        *t = cap as usize;
        Ok(())
    })
}

/// Describes the memory `ptr` points into: its type (device, managed — with both pointers set —,
/// registered host, or unregistered), its device, and the base and size of the allocation it lies in. An unknown
/// pointer (including NULL) is not an error: it is reported as birenMemoryTypeUnregistered.
/// BIREN_ERROR_INVALID_VALUE if attributes is NULL.
#[no_mangle]
pub extern "C" fn birenPointerGetAttributes(
    attributes: *mut birenPointerAttributes,
    ptr: *const c_void,
) -> birenError_t {
    ffi_call!("birenPointerGetAttributes"(attributes, ptr) {
        let rt = runtime::get()?;
        let o = out(attributes)?;
        let p = ptr as usize;
        let null = std::ptr::null_mut();
        *o = if let Some((dev, r)) = rt.device_region(p).filter(|(_, r)| rt.managed.get(r.base).is_some()) {
            birenPointerAttributes {
                type_: birenMemoryType::birenMemoryTypeManaged,
                device: dev as c_int,
                devicePointer: ptr as *mut c_void,
                hostPointer: ptr as *mut c_void,
                basePointer: r.base as *mut c_void,
                size: r.size,
            }
        } else if let Some((dev, r)) = rt.device_region(p) {
            birenPointerAttributes {
                type_: birenMemoryType::birenMemoryTypeDevice,
                device: dev as c_int,
                devicePointer: ptr as *mut c_void,
                hostPointer: null,
                basePointer: r.base as *mut c_void,
                size: r.size,
            }
        } else if let Some(r) = rt.host_memory.find(p) {
            birenPointerAttributes {
                type_: birenMemoryType::birenMemoryTypeHost,
                device: -1,
                devicePointer: null,
                hostPointer: ptr as *mut c_void,
                basePointer: r.base as *mut c_void,
                size: r.size,
            }
        } else {
            birenPointerAttributes {
                type_: birenMemoryType::birenMemoryTypeUnregistered,
                device: -1,
                devicePointer: null,
                hostPointer: null,
                basePointer: null,
                size: 0,
            }
        };
        Ok(())
    })
}
