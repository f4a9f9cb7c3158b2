//! Who called the API: the first return address outside this library, and its symbol. Used for
//! leak reports (only while the validator is on: a stack walk costs microseconds) and for the
//! call sites of host synchronizations in the trace (only while tracing).

use std::ffi::{c_char, c_int, c_void, CStr};

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
    walk()
}

/// The first return address on the stack outside this library (0 if none).
fn walk() -> usize {
    let mut frames = [std::ptr::null_mut::<c_void>(); 48];
    let n = unsafe { backtrace(frames.as_mut_ptr(), frames.len() as c_int) };
    let me = object_of(user_caller as *const () as usize);
    frames[..n.max(0) as usize]
        .iter()
        .map(|f| *f as usize)
        .find(|&a| object_of(a) != me)
        .unwrap_or(0)
}

extern "C" {
    // glibc's <dlfcn.h>: with RTLD_DL_LINKMAP, `extra` receives the object's `struct link_map *`.
    fn dladdr1(
        addr: *const c_void,
        info: *mut libc::Dl_info,
        extra: *mut *mut c_void,
        flags: c_int,
    ) -> c_int;
}
const RTLD_DL_LINKMAP: c_int = 2;

/// The user code that called into the library, as trace arguments (a JSON object body):
/// `"caller":"symbol+0xoff in file"` as `describe` gives it, and where `dladdr` knows the file,
/// `"caller_object":"file","caller_offset":"0x..."`: the call instruction's address in that file
/// (the return address less one, less the object's load bias), which `addr2line -e file` turns
/// into a source line. Empty if no frame outside this library was found.
pub fn trace_site() -> String {
    // Call sites repeat (a loop's synchronize): describe each once.
    static SEEN: parking_lot::Mutex<Option<std::collections::HashMap<usize, String>>> =
        parking_lot::Mutex::new(None);
    let addr = walk();
    if addr == 0 {
        return String::new();
    }
    if let Some(args) = SEEN.lock().as_ref().and_then(|m| m.get(&addr)) {
        return args.clone();
    }
    let args = site_args(addr);
    SEEN.lock()
        .get_or_insert_with(Default::default)
        .insert(addr, args.clone());
    args
}

fn site_args(addr: usize) -> String {
    let mut args = format!("\"caller\":{}", super::trace::json_str(&describe(addr)));
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let mut map: *mut c_void = std::ptr::null_mut();
    let found = unsafe { dladdr1(addr as *const c_void, &mut info, &mut map, RTLD_DL_LINKMAP) };
    if found != 0 && !map.is_null() {
        // SAFETY: <link.h>'s `struct link_map` starts with `ElfW(Addr) l_addr` (the load bias)
        // and `char *l_name` (the object's path; "" for the main program).
        let (bias, name) = unsafe {
            (
                *(map as *const usize),
                *(map as *const *const c_char).add(1),
            )
        };
        let file = if name.is_null() || unsafe { *name } == 0 {
            std::fs::read_link("/proc/self/exe")
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        };
        if !file.is_empty() {
            args.push_str(&format!(
                ",\"caller_object\":{},\"caller_offset\":\"{:#x}\"",
                super::trace::json_str(&file),
                (addr - 1).wrapping_sub(bias)
            ));
        }
    }
    args
}

/// The code loaded in the process: (file, load bias, start, end) of every executable segment,
/// the main program's file as /proc/self/exe. With it, a tool reading the trace after the
/// process is gone turns an address (`kernel@0x...`) into a file address for `addr2line`.
pub fn code_segments() -> Vec<(String, usize, usize, usize)> {
    unsafe extern "C" fn one(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> c_int {
        let out = &mut *(data as *mut Vec<(String, usize, usize, usize)>);
        let info = &*info;
        let name = if info.dlpi_name.is_null() || *info.dlpi_name == 0 {
            std::fs::read_link("/proc/self/exe")
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            CStr::from_ptr(info.dlpi_name)
                .to_string_lossy()
                .into_owned()
        };
        let bias = info.dlpi_addr as usize;
        for i in 0..info.dlpi_phnum as usize {
            let ph = &*info.dlpi_phdr.add(i);
            const PF_X: u32 = 1;
            if ph.p_type == libc::PT_LOAD && ph.p_flags & PF_X != 0 && !name.is_empty() {
                let start = bias.wrapping_add(ph.p_vaddr as usize);
                out.push((name.clone(), bias, start, start + ph.p_memsz as usize));
            }
        }
        0
    }
    let mut out: Vec<(String, usize, usize, usize)> = Vec::new();
    unsafe { libc::dl_iterate_phdr(Some(one), &mut out as *mut _ as *mut c_void) };
    out
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
