//! Fibers: stacks and a symmetric context switch, so that a kernel thread reaching a barrier
//! hands the compute unit straight to the next thread (one switch per thread and barrier) instead
//! of going through a scheduler fiber (two).
//!
//! A fiber's context is its saved stack pointer; what the switch saved sits on its stack.
//! Abandoning a fiber (a trapped or divergent block) is forgetting its stack pointer: its frames
//! are C kernel frames and plain-data Rust frames, nothing needs dropping.

use std::ffi::c_void;

/// The running context saved as every switch lays it out (from the saved pointer up: rbx, rbp,
/// the resume address, label 2 after the switch), its stack pointer stored in `[rdi]`.
#[cfg(target_arch = "x86_64")]
macro_rules! save_context {
    () => {
        concat!(
            "lea rax, [rip + 2f]\n",
            "push rax\n",
            "push rbp\n",
            "push rbx\n",
            "mov [rdi], rsp\n",
        )
    };
}

/// Switches from the running context to `to`, saving the running one's stack pointer in `*save`.
/// Returns when some context switches back to `*save`.
///
/// On x86_64 the switch is inline: it pushes its resume address, rbp and rbx, and tells the
/// compiler every other register is clobbered, so the enclosing function saves only what is live
/// (a called switch function saved all six callee-saved registers again, on top of the caller's
/// own saves). The resume jump is an indirect `jmp`, which the branch predictor gets right (the
/// target is the same switch site): a `ret` without its `call` would mispredict every time.
///
/// # Safety
/// `to` must be a stack pointer saved by this function or made by `Stack::prepare`, whose stack
/// is alive and not running.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub unsafe fn switch(save: *mut *mut c_void, to: *mut c_void) {
    std::arch::asm!(
        save_context!(),
        "mov rsp, rsi",
        "pop rbx",
        "pop rbp",
        "pop rax",
        "jmp rax",
        "2:",
        inout("rdi") save => _,
        inout("rsi") to => _,
        out("rax") _,
        out("r12") _, out("r13") _, out("r14") _, out("r15") _,
        clobber_abi("C"),
    );
}

/// `switch`, saving r12-r15 itself (above its resume address, restored at the resume point)
/// instead of clobbering them: for a caller whose fast path needs no callee-saved registers,
/// which then gets no prologue and epilogue saving all six on every call (the warp operation's
/// fast path, `Handoff::perform`).
/// Contexts saved by either variant resume through the same protocol.
///
/// # Safety
/// As for `switch`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub unsafe fn switch_keeping(save: *mut *mut c_void, to: *mut c_void) {
    std::arch::asm!(
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        "lea rax, [rip + 2f]",
        "push rax",
        "push rbp",
        "push rbx",
        "mov [rdi], rsp",
        "mov rsp, rsi",
        "pop rbx",
        "pop rbp",
        "pop rax",
        "jmp rax",
        "2:",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        inout("rdi") save => _,
        inout("rsi") to => _,
        out("rax") _,
        clobber_abi("C"),
    );
}

/// The one call site of kernel threads (x86_64): calls `f(a0, a1, a2, a3)` with `call r8`, then
/// goes back to its caller with a jump. A thread's end that hands the unit to a fiber parked in
/// a kernel switches from this same `call` (`switch_from_site`), so that the return stack's top
/// is the address the resumed thread's kernel returns to when it ends: without it, that `ret`
/// is predicted to wherever the switching fiber last called from, and mispredicts at every
/// thread's end. The jump back (instead of `ret`) keeps working when the entry on the return
/// stack was consumed by another fiber's kernel.
///
/// # Safety
/// `f` is a kernel function taking (at most) these four arguments.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
pub unsafe extern "C" fn call_at_site(
    a0: *mut c_void,
    a1: *mut c_void,
    a2: u32,
    a3: u32,
    f: *const c_void,
) {
    // The call site is a label of its own (`biren_thread_call_site`). The 40 bytes keep the
    // callee's stack aligned as the ABI wants, and put kernel frames 48 bytes below where a
    // direct call put them: where the frames of a block's fibers sit in their cache lines moves
    // a ring barrier's cost by ~1 ns (measured 16, 32, 48 and 64 bytes down: 48 was the only
    // offset not slower than the direct call's, in the barrier cost model, the reductions and
    // the matrix multiply). With CFI, so that debuggers unwind through it.
    core::arch::naked_asm!(
        ".cfi_startproc",
        "sub rsp, 40",
        ".cfi_adjust_cfa_offset 40",
        ".globl biren_thread_call_site",
        ".hidden biren_thread_call_site",
        "biren_thread_call_site:",
        "call r8",
        "add rsp, 40",
        ".cfi_adjust_cfa_offset -40",
        "pop rcx",
        ".cfi_adjust_cfa_offset -8",
        "jmp rcx",
        ".cfi_endproc",
    )
}

/// Where `switch_from_site` goes through `call_at_site`'s `call`: resumes the context in rsi.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
unsafe extern "C" fn resume_from_site() {
    core::arch::naked_asm!("mov rsp, rsi", "pop rbx", "pop rbp", "pop rax", "jmp rax")
}

/// `switch` for a thread's end that resumes a fiber parked in a kernel: the running context is
/// saved as `switch` saves it, then the switch goes through `call_at_site`'s `call`, which
/// leaves the address kernel threads return to on top of the return stack.
///
/// # Safety
/// As for `switch`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub unsafe fn switch_from_site(save: *mut *mut c_void, to: *mut c_void) {
    std::arch::asm!(
        save_context!(),
        "lea r8, [rip + {resume}]",
        "jmp biren_thread_call_site",
        "2:",
        resume = sym resume_from_site,
        inout("rdi") save => _,
        inout("rsi") to => _,
        out("rax") _,
        out("r12") _, out("r13") _, out("r14") _, out("r15") _,
        clobber_abi("C"),
    );
}

/// See the x86_64 version.
///
/// # Safety
/// As there.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub unsafe fn switch_from_site(save: *mut *mut c_void, to: *mut c_void) {
    switch(save, to)
}

/// What a fast path that may give the unit to another fiber decided: go on (`DONE`), run the
/// slow path instead (`SLOW`, nothing changed), or save the running context's stack pointer in
/// `save` and switch to `to` (the bookkeeping done). The barrier's C entries
/// (`block::barrier_entry!`) carry it out in assembly, with the same switch protocol.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handoff {
    pub save: *mut *mut c_void,
    pub to: *mut c_void,
}

impl Handoff {
    /// The caller goes on at once.
    pub const DONE: Handoff = Handoff {
        save: std::ptr::null_mut(),
        to: std::ptr::null_mut(),
    };
    /// The slow path must run; nothing was changed.
    pub const SLOW: Handoff = Handoff {
        // 1: what the barrier entries compare with.
        save: std::ptr::without_provenance_mut(1),
        to: std::ptr::null_mut(),
    };

    /// Switch: save the running context's stack pointer in `*save`, resume `to`.
    #[inline(always)]
    pub fn switch(save: *mut *mut c_void, to: *mut c_void) -> Handoff {
        Handoff { save, to }
    }

    /// Carries the decision out in Rust: true unless `SLOW`;
    /// a switch returns when this context is resumed.
    ///
    /// # Safety
    /// A switch's `to` as for `switch`.
    #[inline(always)]
    pub unsafe fn perform(self) -> bool {
        if self == Handoff::SLOW {
            return false;
        }
        if self != Handoff::DONE {
            unsafe { switch_keeping(self.save, self.to) };
        }
        true
    }
}

/// See the x86_64 version.
///
/// # Safety
/// As there.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub unsafe fn switch_keeping(save: *mut *mut c_void, to: *mut c_void) {
    switch(save, to)
}

/// Asks for the lines a context saved at `sp` resumes from (the switch's saved words and the
/// frames above them, up to `top` and at most 256 bytes) to be brought into the cache.
#[inline(always)]
pub fn prefetch(sp: *const c_void, top: usize) {
    prefetch_lines(sp as usize, top.min(sp as usize + 256));
}

/// Asks for the cache lines of the bytes `start..end` to be brought into the cache, without
/// waiting (also for other layers' cold data, e.g. a stream's next op).
#[inline(always)]
pub fn prefetch_lines(start: usize, end: usize) {
    let mut p = start & !63;
    while p < end {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching never faults, whatever the address.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch(p as *const i8, _MM_HINT_T0);
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above.
        unsafe {
            std::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p,
                options(nostack, readonly, preserves_flags));
        }
        p += 64;
    }
}

/// See the x86_64 version.
///
/// # Safety
/// As there.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub unsafe fn switch(save: *mut *mut c_void, to: *mut c_void) {
    biren_fiber_switch(save, to);
}

extern "C" {
    #[cfg(target_arch = "aarch64")]
    fn biren_fiber_switch(save: *mut *mut c_void, to: *mut c_void);
    fn biren_fiber_start();
}

// A new fiber's first context: rbx = argument, rbp = entry, resume address biren_fiber_start.
// (The x87 control word and MXCSR are callee-saved too, but kernels run with the compute
// unit's, which nothing changes: saving them would double the cost of a switch.)
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl biren_fiber_start",
    ".hidden biren_fiber_start",
    ".type biren_fiber_start,@function",
    "biren_fiber_start:",
    "mov rdi, rbx",
    "call rbp",
    "ud2",
    ".size biren_fiber_start, .-biren_fiber_start",
);

// AArch64 AAPCS64: x19-x30 (fp, lr) and d8-d15 are callee-saved.
#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl biren_fiber_switch",
    ".hidden biren_fiber_switch",
    ".type biren_fiber_switch,%function",
    "biren_fiber_switch:",
    "sub sp, sp, #160",
    "stp x19, x20, [sp, #0]",
    "stp x21, x22, [sp, #16]",
    "stp x23, x24, [sp, #32]",
    "stp x25, x26, [sp, #48]",
    "stp x27, x28, [sp, #64]",
    "stp x29, x30, [sp, #80]",
    "stp d8, d9, [sp, #96]",
    "stp d10, d11, [sp, #112]",
    "stp d12, d13, [sp, #128]",
    "stp d14, d15, [sp, #144]",
    "mov x9, sp",
    "str x9, [x0]",
    "mov sp, x1",
    "ldp x19, x20, [sp, #0]",
    "ldp x21, x22, [sp, #16]",
    "ldp x23, x24, [sp, #32]",
    "ldp x25, x26, [sp, #48]",
    "ldp x27, x28, [sp, #64]",
    "ldp x29, x30, [sp, #80]",
    "ldp d8, d9, [sp, #96]",
    "ldp d10, d11, [sp, #112]",
    "ldp d12, d13, [sp, #128]",
    "ldp d14, d15, [sp, #144]",
    "add sp, sp, #160",
    "ret",
    ".size biren_fiber_switch, .-biren_fiber_switch",
    ".p2align 4",
    ".globl biren_fiber_start",
    ".hidden biren_fiber_start",
    ".type biren_fiber_start,%function",
    "biren_fiber_start:",
    "mov x0, x19",
    "blr x20",
    "brk #1",
    ".size biren_fiber_start, .-biren_fiber_start",
);

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("biren: fibers are implemented for x86_64 and aarch64");

/// A Valgrind client request (a no-op instruction sequence when not running under Valgrind):
/// registering fiber stacks lets memcheck tell a fiber switch from a huge stack frame.
#[inline(never)]
fn valgrind_request(request: usize, a1: usize, a2: usize) -> usize {
    let args = [request, a1, a2, 0, 0, 0];
    #[allow(unused_mut)]
    let mut result = 0usize;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the rotations add up to 128 bits (rdi unchanged) and xchg rbx,rbx does nothing;
    // Valgrind recognises the sequence and answers in rdx.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51", "xchg rbx, rbx",
            in("rax") args.as_ptr(), inout("rdx") result, inout("rdi") 0usize => _,
            options(nostack, preserves_flags),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: the rotations add up to 128 bits (x12 unchanged) and orr x10,x10,x10 does nothing.
    unsafe {
        std::arch::asm!(
            "ror x12, x12, #3", "ror x12, x12, #13", "ror x12, x12, #51", "ror x12, x12, #61",
            "orr x10, x10, x10",
            in("x4") args.as_ptr(), inout("x3") result, inout("x12") 0usize => _,
            options(nostack, preserves_flags),
        );
    }
    result
}

const VG_STACK_REGISTER: usize = 0x1501;
const VG_STACK_DEREGISTER: usize = 0x1502;

/// An mmap'ed stack with a guard page below it. Pages are touched only as the fiber uses them.
pub struct Stack {
    base: *mut u8,
    len: usize,
    /// Valgrind's id of the stack (0 when not under Valgrind).
    vg_id: usize,
    /// Bytes below the top left unused, different per stack: the tops of a block's stacks would
    /// otherwise all fall into the same cache sets.
    stagger: usize,
}

unsafe impl Send for Stack {}

const PAGE: usize = 4096;

impl Stack {
    /// A stack of `size` usable bytes (rounded up to pages), staggered by `stagger` bytes.
    pub fn new(size: usize, stagger: usize) -> Stack {
        let usable = size.div_ceil(PAGE) * PAGE;
        let len = usable + PAGE;
        // SAFETY: an anonymous private mapping; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            panic!("biren: cannot map a fiber stack of {len} bytes");
        }
        // The lowest page is the guard: an overflow faults instead of corrupting memory.
        unsafe { libc::mprotect(base, PAGE, libc::PROT_NONE) };
        let lo = base as usize + PAGE;
        let vg_id = valgrind_request(VG_STACK_REGISTER, lo, base as usize + len);
        Stack {
            base: base as *mut u8,
            len,
            vg_id,
            stagger: stagger % (usable / 2),
        }
    }

    /// The highest address a context on this stack uses (exclusive).
    pub fn top(&self) -> usize {
        (self.base as usize + self.len - self.stagger) & !15
    }

    /// Lays out a first context on the stack: switching to the returned pointer calls
    /// `entry(arg)`, which must never return.
    pub fn prepare(
        &mut self,
        entry: unsafe extern "C" fn(*mut c_void),
        arg: *mut c_void,
    ) -> *mut c_void {
        let top = self.top();
        // SAFETY: the words written lie within the stack's usable part.
        unsafe {
            #[cfg(target_arch = "x86_64")]
            {
                // rbx rbp resume, then 16 bytes: after the three pops rsp is 16-aligned at
                // the `call` in biren_fiber_start.
                let sp = (top - 40) as *mut u64;
                *sp = arg as u64; // rbx
                *sp.add(1) = entry as *const () as usize as u64; // rbp
                *sp.add(2) = biren_fiber_start as *const () as usize as u64; // resume address
                *sp.add(3) = 0;
                *sp.add(4) = 0;
                sp as *mut c_void
            }
            #[cfg(target_arch = "aarch64")]
            {
                let sp = (top - 160) as *mut u64;
                std::ptr::write_bytes(sp, 0, 20);
                *sp = arg as u64; // x19
                *sp.add(1) = entry as *const () as usize as u64; // x20
                *sp.add(11) = biren_fiber_start as *const () as usize as u64; // x30 (lr)
                sp as *mut c_void
            }
        }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        valgrind_request(VG_STACK_DEREGISTER, self.vg_id, 0);
        unsafe { libc::munmap(self.base as *mut c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct PingPong {
        main: *mut c_void,
        fiber: *mut c_void,
        count: u32,
    }

    unsafe extern "C" fn body(arg: *mut c_void) {
        let p = arg as *mut PingPong;
        loop {
            (*p).count += 1;
            switch(&mut (*p).fiber, (*p).main);
        }
    }

    #[test]
    fn switches_back_and_forth() {
        let mut st = Stack::new(64 * 1024, 128);
        let mut p = PingPong {
            main: std::ptr::null_mut(),
            fiber: std::ptr::null_mut(),
            count: 0,
        };
        p.fiber = st.prepare(body, &mut p as *mut PingPong as *mut c_void);
        for i in 1..=1000 {
            let to = p.fiber;
            unsafe { switch(&mut p.main, to) };
            assert_eq!(p.count, i);
        }
    }
}
