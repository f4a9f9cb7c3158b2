//! Stream-ordered allocation and memory pools (CUDA's cudaMallocAsync, cudaFreeAsync,
//! cudaMemPool*). See runtime/memory/pool.rs for the model: memory is allocated at the call and
//! freed to its pool when the stream reaches the free; a pool keeps what is freed to it up to its
//! release threshold, given back at synchronizes and by birenMemPoolTrimTo.

use super::boundary::{ffi_call, handle, out};
use super::device_of;
use super::memory::GUARD;
use super::types::*;
use crate::runtime::diagnostics::{self, caller};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::graph::capture;
use crate::runtime::exec::stream::StreamCore;
use crate::runtime::memory::pool::PoolCore;
use crate::runtime::{self, Runtime};
use std::ffi::{c_int, c_uchar, c_ushort, c_void};
use std::sync::Arc;

/// Opaque memory pool object; only ever handled through birenMemPool_t.
pub struct birenMemPool_st {
    _private: [u8; 0],
}
/// A memory pool handle (birenDeviceGetDefaultMemPool, birenMemPoolCreate).
pub type birenMemPool_t = *mut birenMemPool_st;

/// Pool attributes (CUDA's cudaMemPoolAttr values).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenMemPoolAttr {
    /// int, 0 or 1: recorded (a pool reuses its reserve only for allocations made after the
    /// free was reached).
    birenMemPoolReuseFollowEventDependencies = 1,
    /// int, 0 or 1: recorded.
    birenMemPoolReuseAllowOpportunistic = 2,
    /// int, 0 or 1: recorded.
    birenMemPoolReuseAllowInternalDependencies = 3,
    /// uint64_t: bytes the pool keeps reserved at a synchronize (stream, event or device); what
    /// is freed to it beyond is given back then. Default 0.
    birenMemPoolAttrReleaseThreshold = 4,
    /// uint64_t, read-only: bytes reserved: in use, plus freed to the pool and kept.
    birenMemPoolAttrReservedMemCurrent = 5,
    /// uint64_t: high-water mark of the reserved bytes; only 0 may be set (resets it).
    birenMemPoolAttrReservedMemHigh = 6,
    /// uint64_t, read-only: bytes of the pool's live allocations.
    birenMemPoolAttrUsedMemCurrent = 7,
    /// uint64_t: high-water mark of the used bytes; only 0 may be set (resets it).
    birenMemPoolAttrUsedMemHigh = 8,
}
/// A pool attribute received from C: read as an integer and checked.
pub type birenMemPoolAttr_int = c_int;

/// Where a pool's memory is (CUDA's cudaMemLocation).
/// cbindgen:field-names=[type, id]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenMemLocation {
    /// birenMemLocationTypeDevice (1).
    pub type_: c_int,
    /// The device.
    pub id: c_int,
}

/// birenMemLocation.type: no location.
pub const birenMemLocationTypeInvalid: c_int = 0;
/// birenMemLocation.type: device memory of device `id`.
pub const birenMemLocationTypeDevice: c_int = 1;
/// birenMemPoolProps.allocType: page-locked (non-migratable) device memory.
pub const birenMemAllocationTypePinned: c_int = 1;
/// birenMemPoolProps.handleTypes: no export handles (the only kind supported).
pub const birenMemHandleTypeNone: c_int = 0;

/// Properties of a new pool (CUDA's cudaMemPoolProps).
#[repr(C)]
pub struct birenMemPoolProps {
    /// birenMemAllocationTypePinned.
    pub allocType: c_int,
    /// birenMemHandleTypeNone (exporting pools is not supported).
    pub handleTypes: c_int,
    /// The device whose memory the pool hands out.
    pub location: birenMemLocation,
    /// Ignored (Windows only).
    pub win32SecurityAttributes: *mut c_void,
    /// Largest total of the pool's live allocations in bytes; 0: the device's capacity.
    pub maxSize: usize,
    /// Ignored.
    pub usage: c_ushort,
    /// Reserved: must be zero.
    pub reserved: [c_uchar; 54],
}

fn pool_of(rt: &Runtime, pool: birenMemPool_t, call: &str) -> Result<Arc<PoolCore>> {
    rt.pools.registry.get(handle(pool)).ok_or_else(|| {
        diagnostics::finding(call, &format!("memPool={pool:p} is not a live memory pool"));
        ErrorCode::InvalidValue
    })
}

fn device_index(rt: &Runtime, device: c_int) -> Result<usize> {
    let i = usize::try_from(device).map_err(|_| ErrorCode::InvalidDevice)?;
    rt.device(i)?;
    Ok(i)
}

fn malloc_from(
    rt: &'static Runtime,
    o: &mut *mut c_void,
    size: usize,
    pool: Arc<PoolCore>,
    stream: birenStream_t,
) -> Result<()> {
    let s = rt.stream(handle(stream))?;
    device_of(rt, s.device)?;
    capture::check_sync(&s, "birenMallocAsync")?;
    let d = device_of(rt, pool.device)?;
    if size == 0 {
        *o = std::ptr::null_mut();
        return Ok(());
    }
    let bytes = (size as u64)
        .checked_next_multiple_of(256)
        .ok_or(ErrorCode::OutOfMemory)?;
    let mem = &d.exec.memory;
    let taken = rt.pools.charge(&pool, bytes, mem).inspect_err(|_| {
        diagnostics::finding(
            "birenMallocAsync",
            &format!("size={size}: the pool's maxSize would be exceeded"),
        );
    })?;
    let guard = if diagnostics::validator_on() {
        GUARD
    } else {
        0
    };
    match d.malloc(size, guard, caller::user_caller()) {
        Ok(p) => {
            rt.pools.record(p, pool, bytes);
            *o = p as *mut c_void;
            Ok(())
        }
        Err(e) => {
            rt.pools.refund(&pool, bytes, taken, mem);
            Err(e)
        }
    }
}

/// Allocates `size` bytes of device memory from the current pool (birenDeviceGetMemPool) of
/// `hStream`'s device and writes the address to *devPtr. The memory exists from this call on;
/// in stream order it may be used by work ordered after the call, and it is given back by
/// birenFreeAsync (or birenFree). Size 0 gives *devPtr = NULL.
/// Returns BIREN_ERROR_INVALID_VALUE if devPtr is NULL, BIREN_ERROR_INVALID_HANDLE for a
/// destroyed or unknown stream, BIREN_ERROR_OUT_OF_MEMORY past the device's capacity or the
/// pool's maxSize. Into a capturing stream: BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the
/// capture is invalidated (difference from CUDA, which records a memory allocation node: BIREN
/// does not capture stream-ordered allocation; allocate before the capture instead); on the
/// default stream while a blocking stream of its device captures:
/// BIREN_ERROR_STREAM_CAPTURE_IMPLICIT. Nothing is written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMallocAsync(
    devPtr: *mut *mut c_void,
    size: usize,
    hStream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMallocAsync"(devPtr, size, hStream) {
        let rt = runtime::get()?;
        let o = out(devPtr)?;
        let s = rt.stream(handle(hStream))?;
        let h = rt.pools.current_pool(s.device)?;
        let pool = rt.pools.registry.get(h).ok_or(ErrorCode::InvalidValue)?;
        malloc_from(rt, o, size, pool, hStream)
    })
}

/// As birenMallocAsync, from `memPool` (whose device's memory it is).
/// BIREN_ERROR_INVALID_VALUE also for an unknown or destroyed pool. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMallocFromPoolAsync(
    ptr: *mut *mut c_void,
    size: usize,
    memPool: birenMemPool_t,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMallocFromPoolAsync"(ptr, size, memPool, stream) {
        let rt = runtime::get()?;
        let o = out(ptr)?;
        let pool = pool_of(rt, memPool, "birenMallocFromPoolAsync")?;
        malloc_from(rt, o, size, pool, stream)
    })
}

/// The points a free enqueued now in `s` comes after: everything enqueued in `s` so far, and
/// (legacy default-stream rules) in the blocking streams it is ordered with.
fn free_points(
    d: &crate::runtime::exec::context::DeviceContext,
    s: &Arc<StreamCore>,
) -> Vec<crate::runtime::exec::work::Point> {
    let mut v: Vec<_> = s.pending_tail().map(|p| p.point()).into_iter().collect();
    if s.is_default || s.is_blocking() {
        for o in d.all_streams() {
            if !Arc::ptr_eq(&o, s) && (o.is_default || o.is_blocking()) {
                v.extend(o.pending_tail().map(|p| p.point()));
            }
        }
    }
    v
}

/// Race detection: the (stream, op) points a free enqueued now in `s` follows by CUDA's rules,
/// complete or not: the stream's work so far, and the legacy default stream's implicit edges
/// (default stream <-> blocking streams). The memory itself waits for more (`free_points`
/// also waits for the other blocking streams), which orders nothing for the program.
fn race_points(
    d: &crate::runtime::exec::context::DeviceContext,
    s: &Arc<StreamCore>,
) -> Vec<(u64, u64)> {
    let mut v = vec![(s.id, s.enqueued())];
    for o in d.all_streams() {
        if (s.is_default && o.is_blocking()) || (o.is_default && s.is_blocking()) {
            v.push((o.id, o.enqueued()));
        }
    }
    v
}

/// Frees `devPtr` in stream order: the allocation is gone for every call made from now on (a
/// later copy or fill naming it fails with BIREN_ERROR_INVALID_DEVICE_POINTER, and with the
/// validator on its message names the free), and its memory goes back when `hStream` reaches
/// this point (the work enqueued before it in the stream — and, for a blocking stream, in the
/// default stream — still uses it safely). Work of other streams that is not ordered before the
/// free must not use it; with the validator on, a kernel writing it after it went back is
/// reported as a use after free. Any device allocation may be freed this way. NULL succeeds.
/// Returns BIREN_ERROR_INVALID_HANDLE for a destroyed or unknown stream,
/// BIREN_ERROR_INVALID_DEVICE_POINTER if devPtr is not the start of a live device allocation.
/// Into a capturing stream: BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED and the capture is
/// invalidated (CUDA records a memory free node; BIREN does not capture stream-ordered frees:
/// free after the graph's launches instead); on the default stream while a blocking stream of
/// its device captures: BIREN_ERROR_STREAM_CAPTURE_IMPLICIT. Nothing changes on error.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenFreeAsync(devPtr: *mut c_void, hStream: birenStream_t) -> birenError_t {
    ffi_call!("birenFreeAsync"(devPtr, hStream) {
        let rt = runtime::get()?;
        let s = rt.stream(handle(hStream))?;
        let sd = device_of(rt, s.device)?;
        capture::check_sync(&s, "birenFreeAsync")?;
        if devPtr.is_null() {
            return Ok(());
        }
        let p = devPtr as usize;
        let Some((dev, r)) = rt.device_region(p).filter(|(_, r)| r.base == p) else {
            diagnostics::finding("birenFreeAsync", &format!("devPtr={p:#x} is not the start of a live device allocation (double free, or not from birenMalloc/birenMallocAsync)"));
            return Err(ErrorCode::InvalidDevicePointer);
        };
        let d = device_of(rt, dev)?;
        if diagnostics::validator_on() {
            crate::runtime::diagnostics::validator::check_on_free(&d.exec.memory, p);
        }
        let a = d.exec.memory.unregister(p)?;
        if diagnostics::racecheck::on() {
            diagnostics::racecheck::free_async(p, s.id, race_points(sd, &s));
        }
        let until = free_points(sd, &s);
        rt.pools.freed(p, r.size, s.id, &d.exec.memory);
        rt.managed.remove(p);
        d.exec.free_after(a, until);
        Ok(())
    })
}

/// Writes the default memory pool of `device` to *memPool. Returns BIREN_ERROR_INVALID_VALUE if
/// memPool is NULL, BIREN_ERROR_INVALID_DEVICE if there is no such device. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDeviceGetDefaultMemPool(
    memPool: *mut birenMemPool_t,
    device: c_int,
) -> birenError_t {
    ffi_call!("birenDeviceGetDefaultMemPool"(memPool, device) {
        let rt = runtime::get()?;
        let o = out(memPool)?;
        let i = device_index(rt, device)?;
        *o = rt.pools.default_pool(i)? as usize as birenMemPool_t;
        Ok(())
    })
}

/// Writes the pool birenMallocAsync uses on `device` (its default pool unless
/// birenDeviceSetMemPool chose another) to *memPool. Errors as birenDeviceGetDefaultMemPool.
#[no_mangle]
pub extern "C" fn birenDeviceGetMemPool(
    memPool: *mut birenMemPool_t,
    device: c_int,
) -> birenError_t {
    ffi_call!("birenDeviceGetMemPool"(memPool, device) {
        let rt = runtime::get()?;
        let o = out(memPool)?;
        let i = device_index(rt, device)?;
        *o = rt.pools.current_pool(i)? as usize as birenMemPool_t;
        Ok(())
    })
}

/// Makes `memPool` the pool birenMallocAsync uses on `device`. Returns
/// BIREN_ERROR_INVALID_DEVICE if there is no such device, BIREN_ERROR_INVALID_VALUE if memPool
/// is not a live pool of that device. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDeviceSetMemPool(device: c_int, memPool: birenMemPool_t) -> birenError_t {
    ffi_call!("birenDeviceSetMemPool"(device, memPool) {
        let rt = runtime::get()?;
        let i = device_index(rt, device)?;
        let pool = pool_of(rt, memPool, "birenDeviceSetMemPool")?;
        if pool.device != i {
            diagnostics::finding("birenDeviceSetMemPool", &format!("the pool belongs to device {}, not {i}", pool.device));
            return Err(ErrorCode::InvalidValue);
        }
        rt.pools.set_current(i, handle(memPool))
    })
}

/// Creates a pool of device memory described by *poolProps (allocType
/// birenMemAllocationTypePinned, location {birenMemLocationTypeDevice, device}, handleTypes
/// birenMemHandleTypeNone, maxSize 0 or a byte limit) and writes it to *memPool. Destroy it with
/// birenMemPoolDestroy. Returns BIREN_ERROR_INVALID_VALUE for NULL arguments, another allocType
/// or location type; BIREN_ERROR_INVALID_DEVICE for a location id that is no device;
/// BIREN_ERROR_NOT_SUPPORTED for export handle types. Nothing is created on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemPoolCreate(
    memPool: *mut birenMemPool_t,
    poolProps: *const birenMemPoolProps,
) -> birenError_t {
    ffi_call!("birenMemPoolCreate"(memPool, poolProps) {
        let rt = runtime::get()?;
        let o = out(memPool)?;
        // SAFETY: the caller promises a non-NULL poolProps points to the struct.
        let props = unsafe { poolProps.as_ref() }.ok_or(ErrorCode::InvalidValue)?;
        if props.allocType != birenMemAllocationTypePinned || props.location.type_ != birenMemLocationTypeDevice {
            diagnostics::finding("birenMemPoolCreate", &format!("allocType={} location.type={}: only birenMemAllocationTypePinned on birenMemLocationTypeDevice", props.allocType, props.location.type_));
            return Err(ErrorCode::InvalidValue);
        }
        let i = device_index(rt, props.location.id)?;
        if props.handleTypes != birenMemHandleTypeNone {
            diagnostics::finding("birenMemPoolCreate", "handleTypes: pools cannot be exported here");
            return Err(ErrorCode::NotSupported);
        }
        let h = rt.pools.registry.insert(Arc::new(PoolCore::new(i, false, props.maxSize as u64))).ok_or(ErrorCode::OutOfMemory)?;
        *o = h as usize as birenMemPool_t;
        Ok(())
    })
}

/// Destroys a pool made by birenMemPoolCreate, giving back its reserve. Its live allocations stay
/// valid until freed (their memory then goes straight back to the device). A
/// device whose current pool it was goes back to its default pool. Returns
/// BIREN_ERROR_INVALID_VALUE for an unknown or destroyed pool or a default pool. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemPoolDestroy(memPool: birenMemPool_t) -> birenError_t {
    ffi_call!("birenMemPoolDestroy"(memPool) {
        let rt = runtime::get()?;
        let pool = pool_of(rt, memPool, "birenMemPoolDestroy")?;
        if pool.is_default {
            diagnostics::finding("birenMemPoolDestroy", "a device's default pool cannot be destroyed");
            return Err(ErrorCode::InvalidValue);
        }
        rt.pools.registry.remove(handle(memPool));
        pool.retire(&device_of(rt, pool.device)?.exec.memory);
        Ok(())
    })
}

/// Sets a pool attribute from *value (an int for the reuse flags, a uint64_t otherwise).
/// Returns BIREN_ERROR_INVALID_VALUE for an unknown pool, a NULL value, an unknown or read-only
/// attribute, a reuse flag other than 0 or 1, or a high-water mark other than 0. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemPoolSetAttribute(
    memPool: birenMemPool_t,
    attr: birenMemPoolAttr_int,
    value: *mut c_void,
) -> birenError_t {
    ffi_call!("birenMemPoolSetAttribute"(memPool, attr, value) {
        let rt = runtime::get()?;
        let pool = pool_of(rt, memPool, "birenMemPoolSetAttribute")?;
        if value.is_null() {
            return Err(ErrorCode::InvalidValue);
        }
        let bad = |why: String| {
            diagnostics::finding("birenMemPoolSetAttribute", &why);
            Err(ErrorCode::InvalidValue)
        };
        use std::sync::atomic::Ordering::SeqCst;
        match attr {
            1..=3 => {
                let v = unsafe { *(value as *const c_int) };
                if !(0..=1).contains(&v) {
                    return bad(format!("attr={attr}: value {v} must be 0 or 1"));
                }
                pool.reuse[(attr - 1) as usize].store(v, SeqCst);
            }
            4 => pool.release_threshold.store(unsafe { *(value as *const u64) }, SeqCst),
            6 | 8 => {
                let v = unsafe { *(value as *const u64) };
                if v != 0 {
                    return bad(format!("attr={attr}: a high-water mark can only be reset to 0, not {v}"));
                }
                if attr == 6 {
                    pool.reset_reserved_high(&device_of(rt, pool.device)?.exec.memory);
                } else {
                    pool.reset_high();
                }
            }
            5 | 7 => return bad(format!("attr={attr} is read-only")),
            _ => return bad(format!("attr={attr} is not a birenMemPoolAttr value")),
        }
        Ok(())
    })
}

/// Writes a pool attribute to *value (an int for the reuse flags, a uint64_t otherwise).
/// Reserved bytes are the used bytes plus those freed to the pool and kept (up to the release
/// threshold at each synchronize; an allocation the device has no room for takes them back
/// first). Returns
/// BIREN_ERROR_INVALID_VALUE for an unknown pool, a NULL value or an unknown attribute; nothing
/// is written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemPoolGetAttribute(
    memPool: birenMemPool_t,
    attr: birenMemPoolAttr_int,
    value: *mut c_void,
) -> birenError_t {
    ffi_call!("birenMemPoolGetAttribute"(memPool, attr, value) {
        let rt = runtime::get()?;
        let pool = pool_of(rt, memPool, "birenMemPoolGetAttribute")?;
        if value.is_null() {
            return Err(ErrorCode::InvalidValue);
        }
        use std::sync::atomic::Ordering::SeqCst;
        let v64 = match attr {
            1..=3 => {
                unsafe { *(value as *mut c_int) = pool.reuse[(attr - 1) as usize].load(SeqCst) };
                return Ok(());
            }
            4 => pool.release_threshold.load(SeqCst),
            5 => pool.reserved(&device_of(rt, pool.device)?.exec.memory),
            6 => pool.reserved_high(),
            7 => pool.used(),
            8 => pool.used_high(),
            _ => {
                diagnostics::finding("birenMemPoolGetAttribute", &format!("attr={attr} is not a birenMemPoolAttr value"));
                return Err(ErrorCode::InvalidValue);
            }
        };
        unsafe { *(value as *mut u64) = v64 };
        Ok(())
    })
}

/// Releases the pool's reserve (memory freed to it and kept) until at most `minBytesToKeep`
/// bytes are reserved, or the reserve is empty (memory in use stays). Returns
/// BIREN_ERROR_INVALID_VALUE for an unknown pool. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemPoolTrimTo(
    memPool: birenMemPool_t,
    minBytesToKeep: usize,
) -> birenError_t {
    ffi_call!("birenMemPoolTrimTo"(memPool, minBytesToKeep) {
        let rt = runtime::get()?;
        let pool = pool_of(rt, memPool, "birenMemPoolTrimTo")?;
        pool.release_to(minBytesToKeep as u64, &device_of(rt, pool.device)?.exec.memory);
        Ok(())
    })
}

/// birenMemAccessDesc.flags: no access.
pub const birenMemAccessFlagsProtNone: c_int = 0;
/// birenMemAccessDesc.flags: read access.
pub const birenMemAccessFlagsProtRead: c_int = 1;
/// birenMemAccessDesc.flags: read and write access.
pub const birenMemAccessFlagsProtReadWrite: c_int = 3;

/// Access of one location to a pool (CUDA's cudaMemAccessDesc).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenMemAccessDesc {
    /// A device (birenMemLocationTypeDevice).
    pub location: birenMemLocation,
    /// birenMemAccessFlagsProtNone, ...ProtRead or ...ProtReadWrite.
    pub flags: c_int,
}

/// Grants devices access to the memory of `memPool` (`count` descriptors). The pool's own
/// device always has read-write access. Every device here can reach every pool's memory (one
/// address space), so the access is recorded and reported by birenMemPoolGetAccess, not
/// enforced. Returns BIREN_ERROR_INVALID_VALUE for an unknown pool, NULL descList with count > 0,
/// a location that is not a device, unknown flags, or less than read-write for the pool's own
/// device; BIREN_ERROR_INVALID_DEVICE for a device that does not exist. All descriptors are
/// checked before any is applied. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemPoolSetAccess(
    memPool: birenMemPool_t,
    descList: *const birenMemAccessDesc,
    count: usize,
) -> birenError_t {
    ffi_call!("birenMemPoolSetAccess"(memPool, descList, count) {
        let rt = runtime::get()?;
        let pool = pool_of(rt, memPool, "birenMemPoolSetAccess")?;
        if count == 0 {
            return Ok(());
        }
        if descList.is_null() || count > 1 << 20 {
            return Err(ErrorCode::InvalidValue);
        }
        // SAFETY: the caller promises `count` descriptors at descList.
        let descs = unsafe { std::slice::from_raw_parts(descList, count) };
        let mut plan = Vec::with_capacity(count);
        for d in descs {
            if d.location.type_ != birenMemLocationTypeDevice || ![0, 1, 3].contains(&d.flags) {
                diagnostics::finding("birenMemPoolSetAccess", &format!("location.type={} flags={}: needs a device location and flags None (0), Read (1) or ReadWrite (3)", d.location.type_, d.flags));
                return Err(ErrorCode::InvalidValue);
            }
            let dev = device_index(rt, d.location.id)?;
            if dev == pool.device && d.flags != birenMemAccessFlagsProtReadWrite {
                diagnostics::finding("birenMemPoolSetAccess", "the pool's own device keeps read-write access");
                return Err(ErrorCode::InvalidValue);
            }
            plan.push((dev, d.flags));
        }
        let mut a = pool.access.lock();
        for (dev, f) in plan {
            a.insert(dev, f);
        }
        Ok(())
    })
}

/// Writes the access *location has to `memPool`'s memory to *flags: read-write for the pool's
/// own device, what birenMemPoolSetAccess granted (none by default) for others.
/// Returns BIREN_ERROR_INVALID_VALUE for an unknown pool, NULL arguments or a location that is
/// not a device; BIREN_ERROR_INVALID_DEVICE for a device that does not exist. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemPoolGetAccess(
    flags: *mut c_int,
    memPool: birenMemPool_t,
    location: *mut birenMemLocation,
) -> birenError_t {
    ffi_call!("birenMemPoolGetAccess"(flags, memPool, location) {
        let rt = runtime::get()?;
        let o = out(flags)?;
        let pool = pool_of(rt, memPool, "birenMemPoolGetAccess")?;
        let loc = *out(location)?;
        if loc.type_ != birenMemLocationTypeDevice {
            return Err(ErrorCode::InvalidValue);
        }
        let dev = device_index(rt, loc.id)?;
        *o = if dev == pool.device {
            birenMemAccessFlagsProtReadWrite
        } else {
            pool.access.lock().get(&dev).copied().unwrap_or(birenMemAccessFlagsProtNone)
        };
        Ok(())
    })
}
