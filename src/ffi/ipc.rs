//! Device memory shared between processes (CUDA's cudaIpcGetMemHandle family). Each device's
//! memory is a shared memory file (runtime/memory/arena.rs); a handle names the exporting
//! process, its file and the allocation's place in it, and another process maps that range.

use super::boundary::{ffi_call, out};
use super::current_device;
use super::types::*;
use crate::runtime::diagnostics::{self, caller};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::{self, Runtime};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_char, c_uint, c_void};
use std::sync::OnceLock;

/// An exported device allocation (CUDA's cudaIpcMemHandle_t): 64 opaque bytes, copied by value
/// to the other process (through a pipe, a file, shared memory, ...).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct birenIpcMemHandle_t {
    /// The handle's bytes (opaque).
    pub reserved: [c_char; 64],
}

impl super::boundary::LogArg for birenIpcMemHandle_t {
    fn show(&self) -> String {
        "{handle}".into()
    }
}

/// birenIpcOpenMemHandle flag (the only one): peer access is enabled as needed.
pub const birenIpcMemLazyEnablePeerAccess: c_uint = 1;

const MAGIC: u32 = 0x4249_5043; // "BIPC"
const PAGE: u64 = 4096;

struct Wire {
    pid: i32,
    fd: i32,
    offset: u64,
    size: u64,
}

impl Wire {
    fn encode(&self) -> birenIpcMemHandle_t {
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&self.pid.to_le_bytes());
        b[8..12].copy_from_slice(&self.fd.to_le_bytes());
        b[16..24].copy_from_slice(&self.offset.to_le_bytes());
        b[24..32].copy_from_slice(&self.size.to_le_bytes());
        birenIpcMemHandle_t {
            reserved: b.map(|x| x as c_char),
        }
    }

    fn decode(h: &birenIpcMemHandle_t) -> Option<Wire> {
        let b = h.reserved.map(|x| x as u8);
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        (u32_at(0) == MAGIC).then(|| Wire {
            pid: u32_at(4) as i32,
            fd: u32_at(8) as i32,
            offset: u64_at(16),
            size: u64_at(24),
        })
    }
}

/// Ranges this process opened: user pointer -> (mapping start, mapping length, device).
type Opened = HashMap<usize, (usize, usize, usize)>;

fn opened() -> &'static Mutex<Opened> {
    static OPENED: OnceLock<Mutex<Opened>> = OnceLock::new();
    OPENED.get_or_init(Default::default)
}

/// Writes to *handle a handle another process can open with birenIpcOpenMemHandle to use the
/// device allocation that starts at devPtr. The handle stays usable while this process lives and
/// the allocation is not freed (freeing it while another process uses it leaves that process
/// with whatever the memory holds next, as in CUDA).
/// Returns BIREN_ERROR_INVALID_VALUE if handle is NULL; BIREN_ERROR_INVALID_DEVICE_POINTER if
/// devPtr is not the start of a live device allocation; BIREN_ERROR_NOT_SUPPORTED if the
/// device's memory could not be made shareable (no memfd on this system). Thread-safe.
#[no_mangle]
pub extern "C" fn birenIpcGetMemHandle(
    handle: *mut birenIpcMemHandle_t,
    devPtr: *mut c_void,
) -> birenError_t {
    ffi_call!("birenIpcGetMemHandle"(handle, devPtr) {
        let rt = runtime::get()?;
        let o = out(handle)?;
        let p = devPtr as usize;
        let Some((dev, r)) = rt.device_region(p).filter(|(_, r)| r.base == p) else {
            diagnostics::finding("birenIpcGetMemHandle", &format!("devPtr={p:#x} is not the start of a live device allocation"));
            return Err(ErrorCode::InvalidDevicePointer);
        };
        let Some((fd, offset)) = rt.device(dev)?.exec.memory.file_location(p) else {
            diagnostics::finding("birenIpcGetMemHandle", "the device's memory is not in a shared memory file on this system");
            return Err(ErrorCode::NotSupported);
        };
        *o = Wire { pid: std::process::id() as i32, fd, offset, size: r.size as u64 }.encode();
        Ok(())
    })
}

fn open_range(rt: &Runtime, w: &Wire, device: usize) -> Result<usize> {
    let path = std::ffi::CString::new(format!("/proc/{}/fd/{}", w.pid, w.fd))
        .map_err(|_| ErrorCode::InvalidValue)?;
    // SAFETY: plain system calls, results checked; the mapping is ours until munmap.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if fd < 0 {
        diagnostics::finding(
            "birenIpcOpenMemHandle",
            &format!(
                "cannot open the exporting process's memory ({}): has it exited?",
                path.to_string_lossy()
            ),
        );
        return Err(ErrorCode::InvalidValue);
    }
    let start = w.offset / PAGE * PAGE;
    let len = (w.offset + w.size - start).next_multiple_of(PAGE) as usize;
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            start as libc::off_t,
        )
    };
    unsafe { libc::close(fd) };
    if map == libc::MAP_FAILED {
        return Err(ErrorCode::OutOfMemory);
    }
    let ptr = map as usize + (w.offset - start) as usize;
    // Known to this process's copy checks as device memory of the current device.
    if let Err(e) =
        rt.device(device)?
            .exec
            .memory
            .register_foreign(ptr, w.size as usize, caller::user_caller())
    {
        unsafe { libc::munmap(map, len) };
        return Err(e);
    }
    opened().lock().insert(ptr, (map as usize, len, device));
    Ok(ptr)
}

/// Maps into this process the device allocation another process exported with
/// birenIpcGetMemHandle and writes its address here to *devPtr: kernels and copies of this
/// process use it as device memory of the current device (copies are bounded by its size).
/// Close it with birenIpcCloseMemHandle. `flags` must be birenIpcMemLazyEnablePeerAccess.
/// Returns BIREN_ERROR_INVALID_VALUE if devPtr is NULL, flags is another value, the handle is
/// not one (or comes from this very process, as CUDA refuses too), or the exporting process is
/// gone; BIREN_ERROR_OUT_OF_MEMORY if the range cannot be mapped. Nothing is written on error.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenIpcOpenMemHandle(
    devPtr: *mut *mut c_void,
    handle: birenIpcMemHandle_t,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenIpcOpenMemHandle"(devPtr, handle, flags) {
        let (rt, d) = current_device()?;
        let o = out(devPtr)?;
        if flags != birenIpcMemLazyEnablePeerAccess {
            diagnostics::finding("birenIpcOpenMemHandle", &format!("flags={flags:#x}: must be birenIpcMemLazyEnablePeerAccess (1)"));
            return Err(ErrorCode::InvalidValue);
        }
        let Some(w) = Wire::decode(&handle).filter(|w| w.size > 0 && w.offset.checked_add(w.size).is_some()) else {
            diagnostics::finding("birenIpcOpenMemHandle", "the handle was not made by birenIpcGetMemHandle");
            return Err(ErrorCode::InvalidValue);
        };
        if w.pid == std::process::id() as i32 {
            diagnostics::finding("birenIpcOpenMemHandle", "the handle comes from this process: use the pointer itself");
            return Err(ErrorCode::InvalidValue);
        }
        *o = open_range(rt, &w, d.index)? as *mut c_void;
        Ok(())
    })
}

/// Unmaps memory opened with birenIpcOpenMemHandle. Work of this process still using it must
/// have completed. Returns BIREN_ERROR_INVALID_VALUE if devPtr is not a pointer
/// birenIpcOpenMemHandle returned (or was closed already). Thread-safe.
#[no_mangle]
pub extern "C" fn birenIpcCloseMemHandle(devPtr: *mut c_void) -> birenError_t {
    ffi_call!("birenIpcCloseMemHandle"(devPtr) {
        let rt = runtime::get()?;
        let p = devPtr as usize;
        let Some((map, len, device)) = opened().lock().remove(&p) else {
            diagnostics::finding("birenIpcCloseMemHandle", &format!("devPtr={p:#x} was not opened with birenIpcOpenMemHandle"));
            return Err(ErrorCode::InvalidValue);
        };
        if let Ok(a) = rt.device(device)?.exec.memory.unregister_if(p, |a| a.is_foreign()) {
            rt.device(device)?.exec.memory.release(a);
        }
        // SAFETY: the mapping open_range made.
        unsafe { libc::munmap(map as *mut c_void, len) };
        Ok(())
    })
}
