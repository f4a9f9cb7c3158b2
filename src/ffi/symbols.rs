//! Device symbols (CUDA's __device__/__constant__ variables and cudaMemcpyToSymbol family).
//! A symbol is a global of the program declared with BIREN_DEVICE_SYMBOL, which records its
//! address and size; kernels use it by name (one address space), the host copies to and from it
//! in stream order with bounds checks.

use super::boundary::{ffi_call, ffi_value, out};
use super::current_device;
use super::memory::copy_or_fill;
use super::types::*;
use crate::runtime::diagnostics;
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::copy::{DEFAULT, DEVICE_TO_DEVICE, DEVICE_TO_HOST, HOST_TO_DEVICE};
use crate::runtime::exec::executor::{ENGINE_FROM_DEVICE, ENGINE_TO_DEVICE};
use crate::runtime::exec::work::Work;
use crate::runtime::{self, symbols};
use std::ffi::{c_char, c_void, CStr};

/// Records a device symbol: `size` bytes at `symbol`, shown as `name` (may be NULL) in messages.
/// BIREN_DEVICE_SYMBOL and BIREN_DEVICE_ARRAY call it from a constructor, before main; call it
/// yourself only for globals declared otherwise. Works before birenInit. Registering the same
/// address again replaces the record. Returns BIREN_ERROR_INVALID_VALUE for a NULL symbol, size
/// 0, or a range overlapping another symbol. Thread-safe.
#[no_mangle]
pub extern "C" fn birenRegisterSymbol(
    symbol: *const c_void,
    size: usize,
    name: *const c_char,
) -> birenError_t {
    ffi_call!("birenRegisterSymbol"(symbol, size, name) {
        let name = if name.is_null() {
            format!("symbol@{symbol:p}")
        } else {
            unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
        };
        symbols::register(symbol as usize, size, name)
    })
}

/// Writes the bounds of a program's or library's `biren_shared` section (its BIREN_SHARED
/// arrays) on the calling thread: `*begin` its first byte, `*end` one past its last.
pub type birenSharedSectionBounds_t =
    Option<unsafe extern "C" fn(begin: *mut *mut c_void, end: *mut *mut c_void)>;

/// Records the BIREN_SHARED arrays of a program or library: `bounds` gives their section on the
/// calling thread. The header calls it from a constructor in every file that includes it (and
/// birenUnregisterSharedSection from a destructor), so that each block of a cooperative launch
/// has its own copy of those arrays; call it yourself only with another compiler. Registering
/// the same function again changes nothing. Works before birenInit; not logged. Returns
/// BIREN_ERROR_INVALID_VALUE if `bounds` is NULL (not the calling thread's last error).
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenRegisterSharedSection(bounds: birenSharedSectionBounds_t) -> birenError_t {
    // Not logged nor recorded (ffi_call!): the header calls it from every file's constructor.
    ffi_value!(
        "birenRegisterSharedSection",
        birenError_t::BIREN_ERROR_UNKNOWN,
        {
            match bounds {
                Some(f) => {
                    crate::device::block::register_shared_section(f);
                    birenError_t::BIREN_SUCCESS
                }
                None => birenError_t::BIREN_ERROR_INVALID_VALUE,
            }
        }
    )
}

/// Forgets a function recorded with birenRegisterSharedSection (its module is being unloaded);
/// one never recorded changes nothing; not logged. Returns BIREN_ERROR_INVALID_VALUE if `bounds`
/// is NULL (not the calling thread's last error). Thread-safe.
#[no_mangle]
pub extern "C" fn birenUnregisterSharedSection(bounds: birenSharedSectionBounds_t) -> birenError_t {
    // Not logged nor recorded (ffi_call!): the header calls it from every file's constructor.
    ffi_value!(
        "birenUnregisterSharedSection",
        birenError_t::BIREN_ERROR_UNKNOWN,
        {
            match bounds {
                Some(f) => {
                    crate::device::block::unregister_shared_section(f);
                    birenError_t::BIREN_SUCCESS
                }
                None => birenError_t::BIREN_ERROR_INVALID_VALUE,
            }
        }
    )
}

/// The symbol that starts at `symbol`: (address, size).
fn symbol_of(symbol: *const c_void, call: &str) -> Result<(usize, usize)> {
    let p = symbol as usize;
    match symbols::lookup(p) {
        Some((size, _)) => Ok((p, size)),
        None => {
            diagnostics::finding(call, &format!("symbol={symbol:p} is not a symbol declared with BIREN_DEVICE_SYMBOL / BIREN_DEVICE_ARRAY (or birenRegisterSymbol); pass the variable's address"));
            Err(ErrorCode::InvalidSymbol)
        }
    }
}

/// Writes the address of device symbol `symbol` to *devPtr: the variable itself (kernels and
/// the host share one address space). The address is accepted by copies as device memory,
/// bounded by the symbol's size. Symbols are shared by all devices (one copy per process).
/// Returns BIREN_ERROR_INVALID_VALUE if devPtr is NULL, BIREN_ERROR_INVALID_SYMBOL if `symbol`
/// is not the start of a declared symbol. Nothing is written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGetSymbolAddress(
    devPtr: *mut *mut c_void,
    symbol: *const c_void,
) -> birenError_t {
    ffi_call!("birenGetSymbolAddress"(devPtr, symbol) {
        runtime::get()?;
        let o = out(devPtr)?;
        let (p, _) = symbol_of(symbol, "birenGetSymbolAddress")?;
        *o = p as *mut c_void;
        Ok(())
    })
}

/// Writes the size in bytes of device symbol `symbol` to *size.
/// Returns BIREN_ERROR_INVALID_VALUE if size is NULL, BIREN_ERROR_INVALID_SYMBOL if `symbol` is
/// not the start of a declared symbol. Nothing is written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGetSymbolSize(size: *mut usize, symbol: *const c_void) -> birenError_t {
    ffi_call!("birenGetSymbolSize"(size, symbol) {
        runtime::get()?;
        let o = out(size)?;
        let (_, n) = symbol_of(symbol, "birenGetSymbolSize")?;
        *o = n;
        Ok(())
    })
}

/// Checks and plans a copy between symbol bytes `[offset, offset + count)` and `other`.
fn plan_symbol_copy(
    rt: &runtime::Runtime,
    symbol: *const c_void,
    other: usize,
    count: usize,
    offset: usize,
    kind: i64,
    to_symbol: bool,
    call: &str,
) -> Result<Option<Work>> {
    let allowed: &[i64] = if to_symbol {
        &[HOST_TO_DEVICE, DEVICE_TO_DEVICE, DEFAULT]
    } else {
        &[DEVICE_TO_HOST, DEVICE_TO_DEVICE, DEFAULT]
    };
    if !allowed.contains(&kind) {
        diagnostics::finding(call, &format!("kind={kind}: a copy {} a symbol must be {}, birenMemcpyDeviceToDevice or birenMemcpyDefault", if to_symbol { "to" } else { "from" }, if to_symbol { "birenMemcpyHostToDevice" } else { "birenMemcpyDeviceToHost" }));
        return Err(ErrorCode::InvalidMemcpyDirection);
    }
    let (base, size) = symbol_of(symbol, call)?;
    if offset.checked_add(count).is_none_or(|end| end > size) {
        diagnostics::finding(
            call,
            &format!("offset={offset} count={count}: runs past the end of the {size}-byte symbol"),
        );
        return Err(ErrorCode::InvalidValue);
    }
    if count == 0 {
        return Ok(None);
    }
    let arg = if to_symbol { "src" } else { "dst" };
    if other == 0 {
        diagnostics::finding(call, &format!("{arg} is NULL with count={count}"));
        return Err(ErrorCode::InvalidValue);
    }
    let other_device = match kind {
        DEVICE_TO_DEVICE => true,
        DEFAULT => rt.device_region(other).is_some(),
        _ => false,
    };
    if other_device {
        rt.check_device_span(other, count, call, arg)?;
    } else {
        rt.check_host_span(other, count, call, arg)?;
    }
    let at = base + offset;
    let (dst, src) = if to_symbol { (at, other) } else { (other, at) };
    // A symbol reads like device memory: copies out of it go to the device-to-host engine.
    let engine = if to_symbol && !other_device {
        ENGINE_TO_DEVICE
    } else {
        ENGINE_FROM_DEVICE
    };
    use crate::runtime::exec::copy::CopyDir;
    let dir = match (to_symbol, other_device) {
        (_, true) => CopyDir::DeviceToDevice,
        (true, false) => CopyDir::HostToDevice,
        (false, false) => CopyDir::DeviceToHost,
    };
    Ok(Some(Work::Copy {
        dst,
        src,
        len: count,
        engine,
        dir,
    }))
}

#[allow(clippy::too_many_arguments)]
fn symbol_copy(
    symbol: *const c_void,
    other: usize,
    count: usize,
    offset: usize,
    kind: i64,
    to_symbol: bool,
    stream: birenStream_t,
    sync: bool,
    call: &str,
) -> Result<()> {
    copy_or_fill(
        stream,
        sync,
        call,
        |rt| plan_symbol_copy(rt, symbol, other, count, offset, kind, to_symbol, call),
        Some(super::memory::copy_now),
    )
}

/// Copies `count` bytes from src to device symbol `symbol` at byte `offset`, and returns when
/// done; ordered like work on the default stream (a kernel launched after it sees the bytes).
/// `symbol` is the variable's address (`&name`, or `name` for an array). `kind`:
/// birenMemcpyHostToDevice, birenMemcpyDeviceToDevice or birenMemcpyDefault.
/// Returns BIREN_ERROR_INVALID_SYMBOL if symbol is not a declared symbol;
/// BIREN_ERROR_INVALID_VALUE if offset + count runs past its size or src is NULL (count > 0);
/// BIREN_ERROR_INVALID_MEMCPY_DIRECTION for another kind; src range errors as birenMemcpy
/// (BIREN_ERROR_INVALID_DEVICE_POINTER, BIREN_ERROR_OUT_OF_BOUNDS). Nothing is written on
/// error. BIREN_ERROR_NOT_PERMITTED inside a kernel or a host function. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: birenMemcpyKind_int,
) -> birenError_t {
    ffi_call!("birenMemcpyToSymbol"(symbol, src, count, offset, kind) {
        current_device()?;
        symbol_copy(symbol, src as usize, count, offset, kind as i64, true, std::ptr::null_mut(), true, "birenMemcpyToSymbol")
    })
}

/// Copies `count` bytes from device symbol `symbol` at byte `offset` to dst, and returns when
/// done; ordered like work on the default stream. `kind`: birenMemcpyDeviceToHost,
/// birenMemcpyDeviceToDevice or birenMemcpyDefault. Errors as birenMemcpyToSymbol (with dst).
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: birenMemcpyKind_int,
) -> birenError_t {
    ffi_call!("birenMemcpyFromSymbol"(dst, symbol, count, offset, kind) {
        current_device()?;
        symbol_copy(symbol, dst as usize, count, offset, kind as i64, false, std::ptr::null_mut(), true, "birenMemcpyFromSymbol")
    })
}

/// Enqueues birenMemcpyToSymbol's copy on `stream`; checked at enqueue, nothing enqueued on
/// error. BIREN_ERROR_INVALID_HANDLE for a destroyed or unknown stream. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: birenMemcpyKind_int,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemcpyToSymbolAsync"(symbol, src, count, offset, kind, stream) {
        symbol_copy(symbol, src as usize, count, offset, kind as i64, true, stream, false, "birenMemcpyToSymbolAsync")
    })
}

/// Enqueues birenMemcpyFromSymbol's copy on `stream`; checked at enqueue, nothing enqueued on
/// error. BIREN_ERROR_INVALID_HANDLE for a destroyed or unknown stream. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpyFromSymbolAsync(
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: birenMemcpyKind_int,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemcpyFromSymbolAsync"(dst, symbol, count, offset, kind, stream) {
        symbol_copy(symbol, dst as usize, count, offset, kind as i64, false, stream, false, "birenMemcpyFromSymbolAsync")
    })
}
