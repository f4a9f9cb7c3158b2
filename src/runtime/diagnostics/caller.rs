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
    user_caller_within(48)
}

/// The first return address outside this library among the innermost `depth` frames, or 0.
/// Called at the C boundary, a depth of 8 finds the user's call site and unwinds only a few
/// frames (race detection does this for every call).
#[inline(never)]
pub fn user_caller_within(depth: usize) -> usize {
    use std::collections::HashSet;
    use std::sync::OnceLock;
    thread_local! {
        /// Return addresses already found to be inside this library (a `dladdr` each is costly).
        static OURS: std::cell::RefCell<HashSet<usize>> = std::cell::RefCell::new(HashSet::new());
    }
    static ME: OnceLock<Option<usize>> = OnceLock::new();
    let me = *ME.get_or_init(|| object_of(user_caller as *const () as usize));
    let mut frames = [std::ptr::null_mut::<c_void>(); 48];
    let depth = depth.min(frames.len());
    let n = unsafe { backtrace(frames.as_mut_ptr(), depth as c_int) };
    OURS.with(|ours| {
        let mut ours = ours.borrow_mut();
        for &f in &frames[..n.max(0) as usize] {
            let a = f as usize;
            if ours.contains(&a) {
                continue;
            }
            if object_of(a) != me {
                return a;
            }
            if ours.len() < 4096 {
                ours.insert(a);
            }
        }
        0
    })
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

/// The user's call site of the API call being made, cheaply: `key` identifies the export (its
/// name), and this is called directly from that export's body. The first time, a stack walk finds
/// the return address and the stack slot that holds it, whose distance from this function's frame
/// is fixed for a given export; later calls read that slot (and check that it holds an address
/// in code outside this library, else walk again). A stack walk costs thousands of instructions
/// per frame; race detection needs the call site of every call.
#[inline(never)]
pub fn user_caller_fast(key: usize) -> usize {
    use std::cell::RefCell;
    thread_local! {
        /// (export, distance of its return-address slot from `here`), one per export used.
        static DISTANCE: RefCell<Vec<(usize, usize)>> = const { RefCell::new(Vec::new()) };
        /// Return addresses known to be in code outside this library (call sites repeat).
        static CODE: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    }
    let marker = 0usize;
    let here = std::hint::black_box(&marker) as *const usize as usize;
    let foreign_code = |v: usize| -> bool {
        if v == 0 {
            return false;
        }
        if CODE.with(|c| c.borrow().contains(&v)) {
            return true;
        }
        let me = object_of(user_caller as *const () as usize);
        let f = object_of(v).is_some_and(|b| Some(b) != me) && is_text(v);
        if f {
            CODE.with(|c| {
                let mut c = c.borrow_mut();
                if c.len() >= 256 {
                    c.remove(0);
                }
                c.push(v);
            });
        }
        f
    };
    let known = DISTANCE.with(|m| m.borrow().iter().find(|e| e.0 == key).map(|e| e.1));
    if let Some(d) = known {
        // SAFETY: a slot of a live caller frame on this thread's stack, found by the walk below.
        let v = unsafe { *((here + d) as *const usize) };
        if foreign_code(v) {
            return v;
        }
    }
    let r = user_caller_within(16);
    if r != 0 {
        // The slot holding r lies within the few frames between here and the user's code.
        for d in (0..4096).step_by(8) {
            let v = unsafe { *((here + d) as *const usize) };
            if v == r {
                DISTANCE.with(|m| {
                    let mut m = m.borrow_mut();
                    m.retain(|e| e.0 != key);
                    m.push((key, d));
                });
                CODE.with(|c| c.borrow_mut().push(r));
                break;
            }
        }
    }
    r
}

/// True if `addr` lies in an executable mapping (checked once per address).
fn is_text(addr: usize) -> bool {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return false;
    };
    maps.lines().any(|l| {
        let mut it = l.split_whitespace();
        let (Some(range), Some(perms)) = (it.next(), it.next()) else {
            return false;
        };
        let Some((a, b)) = range.split_once('-') else {
            return false;
        };
        let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) else {
            return false;
        };
        perms.contains('x') && a <= addr && addr < b
    })
}
