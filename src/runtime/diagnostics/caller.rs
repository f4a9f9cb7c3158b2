//! Who called the API: the first return address outside this library, and its symbol. Used for
//! leak reports (only while the validator is on: a stack walk costs microseconds).

use std::ffi::{c_int, c_void, CStr};

extern "C" {
    // glibc's <execinfo.h>
    fn backtrace(buffer: *mut *mut c_void, size: c_int) -> c_int;
}

fn object_of(addr: usize) -> Option<usize> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 {
        return None;
    }
    Some(info.dli_fbase as usize)
}

/// The return address of the user code that called into the library, or 0.
pub fn user_caller() -> usize {
    if !crate::runtime::diagnostics::validator_on() {
        return 0;
    }
    user_caller_always()
}

/// The return address of the user code that called into the library, or 0, whatever the
/// validator (race detection names call sites).
pub fn user_caller_always() -> usize {
    let mut frames = [std::ptr::null_mut::<c_void>(); 48];
    let n = unsafe { backtrace(frames.as_mut_ptr(), frames.len() as c_int) };
    let me = object_of(user_caller as *const () as usize);
    frames[..n.max(0) as usize]
        .iter()
        .map(|f| *f as usize)
        .find(|&a| object_of(a) != me)
        .unwrap_or(0)
}

/// The exported symbol at exactly `addr` (e.g. a kernel's name), if `dladdr` knows one.
pub fn symbol_at(addr: usize) -> Option<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if addr == 0
        || unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0
        || info.dli_sname.is_null()
    {
        return None;
    }
    (info.dli_saddr as usize == addr).then(|| {
        unsafe { CStr::from_ptr(info.dli_sname) }
            .to_string_lossy()
            .into_owned()
    })
}

/// A function's symbol name, or its address in hex.
pub fn symbol_or_address(addr: usize) -> String {
    symbol_at(addr).unwrap_or_else(|| format!("{addr:#x}"))
}

/// "symbol+0xoff (object)" for an address, as far as `dladdr` can tell.
pub fn describe(addr: usize) -> String {
    if addr == 0 {
        return "unknown caller".to_string();
    }
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 {
        return format!("{addr:#x}");
    }
    let file = if info.dli_fname.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned()
    };
    if info.dli_sname.is_null() {
        format!("{addr:#x} in {file}")
    } else {
        let name = unsafe { CStr::from_ptr(info.dli_sname) }.to_string_lossy();
        format!("{name}+{:#x} in {file}", addr - info.dli_saddr as usize)
    }
}

/// A call site as "symbol+0xoff in file", or "file+0xoff" (an offset `addr2line -e file` takes)
/// when the symbol is not exported.
pub fn site(addr: usize) -> String {
    if addr == 0 {
        return "an unknown place".to_string();
    }
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
        return format!("{addr:#x}");
    }
    let file = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    if info.dli_sname.is_null() {
        // The return address is one past the call: addr2line wants the call itself.
        format!("{file}+{:#x}", (addr - 1) - info.dli_fbase as usize)
    } else {
        let name = unsafe { CStr::from_ptr(info.dli_sname) }.to_string_lossy();
        format!("{name}+{:#x} in {file}", addr - info.dli_saddr as usize)
    }
}
