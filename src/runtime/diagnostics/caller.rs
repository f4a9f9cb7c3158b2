//! Who called the API: the first return address outside this library, and its symbol. Used for
//! leak reports (only while the validator is on: a stack walk costs microseconds) and for the
//! call sites of host synchronizations in the trace (only while tracing).

use crate::runtime::lock_order::{Rank, RankedMutex};
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
    user_caller_within(48)
}

/// The first return address outside this library among the innermost `depth` frames, or 0.
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
    static SEEN: RankedMutex<Option<std::collections::HashMap<usize, String>>> =
        RankedMutex::new(Rank::Leaf, None);
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
        if let Some(slot) = return_slot_of(r).filter(|&a| a > here && a - here < 4096) {
            // SAFETY: the return-address slot of a live frame of this thread's stack.
            if unsafe { *(slot as *const usize) } == r {
                DISTANCE.with(|m| {
                    let mut m = m.borrow_mut();
                    m.retain(|e| e.0 != key);
                    m.push((key, slot - here));
                });
                CODE.with(|c| c.borrow_mut().push(r));
            }
        }
    }
    r
}

/// The address of the stack slot that holds return address `r`, found by unwinding this
/// thread's stack: the call that made the frame below the one at `r` pushed `r` just below that
/// frame's canonical frame address. (The slot used
/// to be found by scanning the stack words above this frame for `r`, which read the unwritten
/// words of frames in between: memcheck reported every first call of an export with race
/// detection on.)
#[cfg(target_arch = "x86_64")]
fn return_slot_of(r: usize) -> Option<usize> {
    #[repr(C)]
    struct UnwindContext {
        _private: [u8; 0],
    }
    extern "C" {
        fn _Unwind_Backtrace(
            trace: extern "C" fn(*mut UnwindContext, *mut c_void) -> c_int,
            arg: *mut c_void,
        ) -> c_int;
        fn _Unwind_GetIP(ctx: *mut UnwindContext) -> usize;
        fn _Unwind_GetCFA(ctx: *mut UnwindContext) -> usize;
    }
    struct Search {
        want: usize,
        frames: usize,
        slot: Option<usize>,
    }
    const URC_NO_REASON: c_int = 0;
    const URC_END_OF_STACK: c_int = 5;
    extern "C" fn step(ctx: *mut UnwindContext, arg: *mut c_void) -> c_int {
        // SAFETY: `arg` is the `Search` below, alive for the whole unwind; `ctx` the unwinder's.
        let s = unsafe { &mut *(arg as *mut Search) };
        let ip = unsafe { _Unwind_GetIP(ctx) };
        if ip == s.want {
            // At a frame's turn the context's CFA is still its callee's (the unwinder moved
            // the instruction pointer up, not yet the CFA): the call pushed `ip` just below it.
            let cfa = unsafe { _Unwind_GetCFA(ctx) };
            s.slot = (cfa != 0).then(|| cfa - std::mem::size_of::<usize>());
            return URC_END_OF_STACK;
        }
        s.frames += 1;
        if s.frames > 32 {
            URC_END_OF_STACK
        } else {
            URC_NO_REASON
        }
    }
    let mut s = Search {
        want: r,
        frames: 0,
        slot: None,
    };
    // SAFETY: the callback only reads the unwinder's context and writes `s`.
    unsafe { _Unwind_Backtrace(step, &mut s as *mut Search as *mut c_void) };
    s.slot
}

/// Elsewhere the slot is not looked for: every call walks the stack (`user_caller_within`).
#[cfg(not(target_arch = "x86_64"))]
fn return_slot_of(_r: usize) -> Option<usize> {
    None
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
