//! Host memory (CUDA's cudaHostAlloc family): page-locked allocations with flags, mapped device
//! pointers, and registration of memory the program allocated itself.

use super::boundary::{ffi_call, out};
use super::types::*;
use crate::runtime::diagnostics::{self, caller};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::{self, Runtime};
use std::ffi::{c_uint, c_void};

/// birenHostAlloc flag: default page-locked memory.
pub const birenHostAllocDefault: c_uint = 0;
/// birenHostAlloc flag: usable from every device (always true here).
pub const birenHostAllocPortable: c_uint = 1;
/// birenHostAlloc flag: mapped for kernels (birenHostGetDevicePointer); always true here.
pub const birenHostAllocMapped: c_uint = 2;
/// birenHostAlloc flag: write-combined (recorded; ordinary cached memory here).
pub const birenHostAllocWriteCombined: c_uint = 4;
/// birenHostRegister flag: default.
pub const birenHostRegisterDefault: c_uint = 0;
/// birenHostRegister flag: usable from every device (always true here).
pub const birenHostRegisterPortable: c_uint = 1;
/// birenHostRegister flag: mapped for kernels (always true here).
pub const birenHostRegisterMapped: c_uint = 2;
/// birenHostRegister flag: the range is I/O memory: BIREN_ERROR_NOT_SUPPORTED.
pub const birenHostRegisterIoMemory: c_uint = 4;
/// birenHostRegister flag: kernels only read the range (recorded, not enforced).
pub const birenHostRegisterReadOnly: c_uint = 8;

/// Allocates `size` bytes of page-locked host memory with `flags` (birenHostAllocDefault, or an
/// OR of birenHostAllocPortable, birenHostAllocMapped, birenHostAllocWriteCombined) and writes it
/// to *pHost. As birenMallocHost otherwise: known to the runtime (copies running past its end are
/// refused, birenMemcpyDefault and birenPointerGetAttributes recognize it), freed with
/// birenFreeHost, size 0 gives *pHost = NULL. Every page-locked buffer is usable by kernels at
/// its host address (unified addressing), whatever the flags; birenHostGetFlags reports them.
/// Returns BIREN_ERROR_INVALID_VALUE if pHost is NULL or flags has other bits,
/// BIREN_ERROR_OUT_OF_MEMORY if the host refuses; *pHost is written only on success. Thread-safe.
#[no_mangle]
pub extern "C" fn birenHostAlloc(
    pHost: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenHostAlloc"(pHost, size, flags) {
        let rt = runtime::get()?;
        let o = out(pHost)?;
        if flags & !(birenHostAllocPortable | birenHostAllocMapped | birenHostAllocWriteCombined) != 0 {
            diagnostics::finding("birenHostAlloc", &format!("flags={flags:#x}: only birenHostAllocPortable (1), Mapped (2) and WriteCombined (4) are defined"));
            return Err(ErrorCode::InvalidValue);
        }
        if size == 0 {
            *o = std::ptr::null_mut();
            return Ok(());
        }
        let p = rt.host_memory.allocate(size, 0, caller::user_caller())?;
        if diagnostics::racecheck::on() {
            diagnostics::racecheck::alloc(p, size, None);
        }
        rt.host_flags.set(p, flags);
        *o = p as *mut c_void;
        Ok(())
    })
}

/// The page-locked allocation or registered range `p` lies in, or `InvalidValue`.
fn known_host(
    rt: &Runtime,
    p: usize,
    call: &str,
    arg: &str,
) -> Result<crate::runtime::memory::Region> {
    rt.host_memory.find(p).ok_or_else(|| {
        diagnostics::finding(call, &format!("{arg}={p:#x} is not in page-locked host memory (birenHostAlloc, birenMallocHost) or a birenHostRegister range"));
        ErrorCode::InvalidValue
    })
}

/// Writes to *pDevice the device address of mapped host memory `pHost` (anywhere inside a
/// page-locked allocation or a registered range). With unified addressing that is `pHost`
/// itself: kernels read and write the host memory through it. Copies naming it should use the
/// host kinds or birenMemcpyDefault (it is not device memory).
/// Returns BIREN_ERROR_INVALID_VALUE if pDevice is NULL, flags is not 0, or pHost is not in
/// page-locked or registered host memory; nothing is written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenHostGetDevicePointer(
    pDevice: *mut *mut c_void,
    pHost: *mut c_void,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenHostGetDevicePointer"(pDevice, pHost, flags) {
        let rt = runtime::get()?;
        let o = out(pDevice)?;
        if flags != 0 {
            diagnostics::finding("birenHostGetDevicePointer", &format!("flags={flags:#x}: must be 0"));
            return Err(ErrorCode::InvalidValue);
        }
        known_host(rt, pHost as usize, "birenHostGetDevicePointer", "pHost")?;
        *o = pHost;
        Ok(())
    })
}

/// Writes to *pFlags the flags `pHost`'s allocation was made with (birenHostAlloc's flags, 0 for
/// birenMallocHost, birenHostRegister's flags for a registered range). `pHost` may point anywhere
/// inside it. Returns BIREN_ERROR_INVALID_VALUE if pFlags is NULL or pHost is not in page-locked
/// or registered host memory; nothing is written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenHostGetFlags(pFlags: *mut c_uint, pHost: *mut c_void) -> birenError_t {
    ffi_call!("birenHostGetFlags"(pFlags, pHost) {
        let rt = runtime::get()?;
        let o = out(pFlags)?;
        let r = known_host(rt, pHost as usize, "birenHostGetFlags", "pHost")?;
        *o = rt.host_flags.get(r.base);
        Ok(())
    })
}

/// Registers `size` bytes at `ptr`, host memory the program allocated itself, as page-locked:
/// from now on the runtime knows the range like a birenHostAlloc buffer — a copy that starts in
/// it and runs past its end is refused with BIREN_ERROR_OUT_OF_BOUNDS, birenPointerGetAttributes
/// reports it as host memory, birenHostGetDevicePointer and birenHostGetFlags accept it. The
/// memory is not copied, moved or locked into RAM, and stays the program's: unregister it with
/// birenHostUnregister before freeing it. `flags`: birenHostRegisterDefault or an OR of
/// birenHostRegisterPortable, birenHostRegisterMapped, birenHostRegisterReadOnly (recorded, not
/// enforced).
/// Returns BIREN_ERROR_INVALID_VALUE for NULL ptr, size 0, a range that wraps around, or unknown
/// flags; BIREN_ERROR_NOT_SUPPORTED for birenHostRegisterIoMemory;
/// BIREN_ERROR_HOST_MEMORY_ALREADY_REGISTERED if the range overlaps a registered range or a
/// page-locked allocation. Nothing is registered on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenHostRegister(ptr: *mut c_void, size: usize, flags: c_uint) -> birenError_t {
    ffi_call!("birenHostRegister"(ptr, size, flags) {
        let rt = runtime::get()?;
        let p = ptr as usize;
        let known = birenHostRegisterPortable | birenHostRegisterMapped | birenHostRegisterIoMemory | birenHostRegisterReadOnly;
        if p == 0 || size == 0 || p.checked_add(size).is_none() || flags & !known != 0 {
            diagnostics::finding("birenHostRegister", &format!("ptr={p:#x} size={size} flags={flags:#x}: needs a non-NULL pointer, a size > 0 that does not wrap, and flags among Portable (1), Mapped (2), IoMemory (4), ReadOnly (8)"));
            return Err(ErrorCode::InvalidValue);
        }
        if flags & birenHostRegisterIoMemory != 0 {
            diagnostics::finding("birenHostRegister", "birenHostRegisterIoMemory: there is no I/O memory to map");
            return Err(ErrorCode::NotSupported);
        }
        let r = rt.host_memory.register_foreign(p, size, caller::user_caller());
        if r.is_err() {
            diagnostics::finding("birenHostRegister", &format!("[{p:#x}, +{size}) overlaps a registered range or a page-locked allocation"));
        }
        r?;
        rt.host_flags.set(p, flags);
        Ok(())
    })
}

/// Forgets a range registered with birenHostRegister; `ptr` must be its start. The memory is
/// untouched. Copies already enqueued that use it still run (it is the program's memory: keep it
/// valid until they complete). Returns BIREN_ERROR_HOST_MEMORY_NOT_REGISTERED if ptr is not the
/// start of a registered range (a birenHostAlloc buffer included: free those with
/// birenFreeHost), BIREN_ERROR_INVALID_VALUE if ptr is NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn birenHostUnregister(ptr: *mut c_void) -> birenError_t {
    ffi_call!("birenHostUnregister"(ptr) {
        let rt = runtime::get()?;
        if ptr.is_null() {
            return Err(ErrorCode::InvalidValue);
        }
        let a = rt.host_memory.unregister_if(ptr as usize, |a| a.is_foreign()).map_err(|_| {
            diagnostics::finding("birenHostUnregister", &format!("ptr={ptr:p} is not the start of a birenHostRegister range"));
            ErrorCode::HostMemoryNotRegistered
        })?;
        rt.host_flags.remove(a.base);
        rt.host_memory.release(a);
        Ok(())
    })
}
