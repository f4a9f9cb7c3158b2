//! Managed memory (CUDA's cudaMallocManaged family). Host and device share one address space
//! here, so managed memory is device memory the host may use directly, at any time: nothing
//! migrates, and prefetches and advice only describe where it already is.

use super::boundary::{ffi_call, handle, out};
use super::memory::GUARD;
use super::types::*;
use super::{current_device, device_of};
use crate::runtime::diagnostics::{self, caller};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::memory::managed::Managed;
use crate::runtime::{self, Runtime};
use std::ffi::{c_int, c_uint, c_void};

/// birenMallocManaged / birenStreamAttachMemAsync flag: any stream of any device may use it.
pub const birenMemAttachGlobal: c_uint = 1;
/// Flag: only the host (and streams it is attached to) may use it (recorded; not enforced).
pub const birenMemAttachHost: c_uint = 2;
/// birenStreamAttachMemAsync flag: only the given stream may use it (recorded; not enforced).
pub const birenMemAttachSingle: c_uint = 4;
/// The host as a device number (birenMemPrefetchAsync, birenMemAdvise).
pub const birenCpuDeviceId: c_int = -1;

/// Advice for birenMemAdvise (CUDA's cudaMemoryAdvise values).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenMemoryAdvise {
    birenMemAdviseSetReadMostly = 1,
    birenMemAdviseUnsetReadMostly = 2,
    birenMemAdviseSetPreferredLocation = 3,
    birenMemAdviseUnsetPreferredLocation = 4,
    birenMemAdviseSetAccessedBy = 5,
    birenMemAdviseUnsetAccessedBy = 6,
}
/// An advice value received from C: read as an integer and checked.
pub type birenMemoryAdvise_int = c_int;

/// Allocates `size` bytes of managed memory on the current device and writes its address to
/// *devPtr: usable by kernels of every device and by the host, at that address, at any time
/// (concurrent access is coherent, as on devices with concurrentManagedAccess). birenPointerGetAttributes
/// reports it as birenMemoryTypeManaged. Free it with birenFree (or birenFreeAsync). It counts
/// against the device's memory. `flags`: birenMemAttachGlobal or birenMemAttachHost.
/// Returns BIREN_ERROR_INVALID_VALUE if devPtr is NULL, size is 0 or flags is another value;
/// BIREN_ERROR_OUT_OF_MEMORY past the capacity. Nothing is written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMallocManaged(
    devPtr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenMallocManaged"(devPtr, size, flags) {
        let (rt, d) = current_device()?;
        let o = out(devPtr)?;
        if size == 0 || (flags != birenMemAttachGlobal && flags != birenMemAttachHost) {
            diagnostics::finding("birenMallocManaged", &format!("size={size} flags={flags:#x}: needs size > 0 and birenMemAttachGlobal (1) or birenMemAttachHost (2)"));
            return Err(ErrorCode::InvalidValue);
        }
        let guard = if diagnostics::validator_on() { GUARD } else { 0 };
        let p = d.malloc(size, guard, caller::user_caller())?;
        rt.managed.insert(p, Managed { device: d.index, flags, read_mostly: false, preferred: None });
        *o = p as *mut c_void;
        Ok(())
    })
}

/// The managed allocation holding `[p, p + count)`: its base.
fn managed_range(rt: &Runtime, p: usize, count: usize, call: &str) -> Result<usize> {
    let Some((_, r)) = rt
        .device_region(p)
        .filter(|(_, r)| rt.managed.get(r.base).is_some())
    else {
        diagnostics::finding(
            call,
            &format!("devPtr={p:#x} is not in managed memory (birenMallocManaged)"),
        );
        return Err(ErrorCode::InvalidValue);
    };
    if p.checked_add(count).is_none_or(|end| end > r.base + r.size) {
        diagnostics::finding(
            call,
            &format!(
                "devPtr={p:#x} count={count}: runs past the end of the {}-byte managed allocation",
                r.size
            ),
        );
        return Err(ErrorCode::InvalidValue);
    }
    Ok(r.base)
}

fn location(rt: &Runtime, device: c_int, call: &str) -> Result<()> {
    if device == birenCpuDeviceId || usize::try_from(device).is_ok_and(|i| i < rt.device_count()) {
        return Ok(());
    }
    diagnostics::finding(
        call,
        &format!("device={device} is neither a device nor birenCpuDeviceId (-1)"),
    );
    Err(ErrorCode::InvalidDevice)
}

/// Prefetches `count` bytes of managed memory at devPtr to `dstDevice` (or birenCpuDeviceId) in
/// stream order. Managed memory is already usable everywhere here, so there is nothing to move:
/// the call checks its arguments and enqueues nothing.
/// Returns BIREN_ERROR_INVALID_VALUE if the range is not inside one managed allocation,
/// BIREN_ERROR_INVALID_DEVICE for another dstDevice, BIREN_ERROR_INVALID_HANDLE for a destroyed
/// or unknown stream. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemPrefetchAsync(
    devPtr: *const c_void,
    count: usize,
    dstDevice: c_int,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemPrefetchAsync"(devPtr, count, dstDevice, stream) {
        let rt = runtime::get()?;
        let s = rt.stream(handle(stream))?;
        device_of(rt, s.device)?;
        managed_range(rt, devPtr as usize, count, "birenMemPrefetchAsync")?;
        location(rt, dstDevice, "birenMemPrefetchAsync")
    })
}

/// Advises how `count` bytes of managed memory at devPtr will be used (`advice`, with `device`
/// for the location advice). Recorded for the allocation; it changes nothing here (no
/// migration). Returns BIREN_ERROR_INVALID_VALUE if the range is not inside one managed
/// allocation or advice is not a birenMemoryAdvise value, BIREN_ERROR_INVALID_DEVICE for a device
/// that is neither a device nor birenCpuDeviceId (the read-mostly advice ignores it).
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemAdvise(
    devPtr: *const c_void,
    count: usize,
    advice: birenMemoryAdvise_int,
    device: c_int,
) -> birenError_t {
    ffi_call!("birenMemAdvise"(devPtr, count, advice, device) {
        let rt = runtime::get()?;
        let base = managed_range(rt, devPtr as usize, count, "birenMemAdvise")?;
        if !(1..=6).contains(&advice) {
            diagnostics::finding("birenMemAdvise", &format!("advice={advice} is not a birenMemoryAdvise value (1..6)"));
            return Err(ErrorCode::InvalidValue);
        }
        if advice >= 3 {
            location(rt, device, "birenMemAdvise")?;
        }
        rt.managed.update(base, |m| match advice {
            1 => m.read_mostly = true,
            2 => m.read_mostly = false,
            3 => m.preferred = Some(device),
            4 => m.preferred = None,
            _ => {}
        });
        Ok(())
    })
}

/// Attaches managed memory at devPtr to `stream` with `flags` (birenMemAttachGlobal,
/// birenMemAttachHost or birenMemAttachSingle). Host and kernels may always use managed memory
/// here, so the attachment is recorded and restricts nothing. `length` must be 0 or the whole
/// allocation. Returns BIREN_ERROR_INVALID_VALUE if devPtr is not the start of a managed
/// allocation, for another length or flags; BIREN_ERROR_INVALID_HANDLE for a destroyed or
/// unknown stream. Thread-safe.
#[no_mangle]
pub extern "C" fn birenStreamAttachMemAsync(
    stream: birenStream_t,
    devPtr: *mut c_void,
    length: usize,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenStreamAttachMemAsync"(stream, devPtr, length, flags) {
        let rt = runtime::get()?;
        let s = rt.stream(handle(stream))?;
        device_of(rt, s.device)?;
        let p = devPtr as usize;
        let region = rt.device_region(p).filter(|(_, r)| r.base == p && rt.managed.get(p).is_some());
        let Some((_, r)) = region else {
            diagnostics::finding("birenStreamAttachMemAsync", &format!("devPtr={p:#x} is not the start of a managed allocation"));
            return Err(ErrorCode::InvalidValue);
        };
        if (length != 0 && length != r.size) || ![birenMemAttachGlobal, birenMemAttachHost, birenMemAttachSingle].contains(&flags) {
            diagnostics::finding("birenStreamAttachMemAsync", &format!("length={length} flags={flags:#x}: length must be 0 or {}, flags one of Global (1), Host (2), Single (4)", r.size));
            return Err(ErrorCode::InvalidValue);
        }
        rt.managed.update(p, |m| m.flags = flags);
        Ok(())
    })
}
