//! Faults and runaway kernels on compute units.
//!
//! A kernel is plain C: a NULL or wild pointer raises SIGSEGV (or SIGBUS) on the compute unit
//! that runs it, a division by zero SIGFPE, `__builtin_trap` SIGILL. On hardware the launch fails
//! with an illegal address and the host program lives; so it does here. The runtime's handler
//! checks that the signal struck a compute unit while it ran a kernel thread on a fiber, notes
//! the signal and address, and suspends the fiber; the block runner then abandons the block's
//! fibers (as for `birenTrap`: no unwinding through C frames) and the launch fails. A signal
//! anywhere else goes to the handler that was installed before (or the default action).
//!
//! The kernel watchdog (`BIREN_KERNEL_TIMEOUT_MS`) is one thread per device that looks at what
//! each compute unit runs; a unit that has been on the same launch for longer than the timeout
//! is sent `WATCHDOG_SIGNAL`, whose handler suspends the kernel thread the same way.
//!
//! Each compute unit thread gets an alternate signal stack, so that a kernel that overflows its
//! fiber stack is caught too.

use super::kernel_ctx;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// What struck a kernel thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub signal: i32,
    /// The faulting address (SIGSEGV, SIGBUS), the instruction (SIGFPE, SIGILL).
    pub addr: usize,
}

const SIGNALS: [libc::c_int; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL];
const ALT_STACK_SIZE: usize = 64 * 1024;
const MAX_UNIT_THREADS: usize = 4096;

/// The signal the watchdog sends to a compute unit running a kernel past the timeout.
pub fn watchdog_signal() -> libc::c_int {
    libc::SIGRTMAX() - 1
}

/// pthread_self() of every compute unit thread (0: free slot). The handler looks itself up
/// here before it touches any thread-local (a thread-local access may allocate on a thread that
/// never made one, which a signal handler must not do).
static UNIT_THREADS: [AtomicUsize; MAX_UNIT_THREADS] =
    [const { AtomicUsize::new(0) }; MAX_UNIT_THREADS];

static mut OLD_ACTIONS: [std::mem::MaybeUninit<libc::sigaction>; 4] =
    [const { std::mem::MaybeUninit::uninit() }; 4];
static INSTALLED: AtomicBool = AtomicBool::new(false);

fn is_unit_thread() -> bool {
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() } as usize;
    UNIT_THREADS.iter().any(|t| t.load(Ordering::Relaxed) == me)
}

/// Installs the fault handlers (once per process; later calls do nothing).
pub fn install_handlers() {
    if INSTALLED.swap(true, Ordering::AcqRel) {
        return;
    }
    for (i, &sig) in SIGNALS.iter().enumerate() {
        // SAFETY: a valid sigaction with a handler of the SA_SIGINFO shape; OLD_ACTIONS is
        // written once, here, before the handler can run (it is read only by the handler).
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            set_handler(sig, on_signal as *const () as usize, &mut old);
            (*std::ptr::addr_of_mut!(OLD_ACTIONS))[i].write(old);
        }
    }
    // SAFETY: as above; the watchdog's signal is ignored outside kernels.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        set_handler(watchdog_signal(), on_signal as *const () as usize, &mut old);
    }
}

unsafe fn set_handler(sig: libc::c_int, handler: usize, old: *mut libc::sigaction) {
    let mut sa: libc::sigaction = std::mem::zeroed();
    sa.sa_sigaction = handler;
    // SA_NODEFER: the handler does not return when it catches a kernel's fault, so the signal
    // must not stay blocked on the unit. SA_ONSTACK: a stack overflow is caught too.
    sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
    libc::sigemptyset(&mut sa.sa_mask);
    libc::sigaction(sig, &sa, old);
}

/// Prepares the calling compute unit thread: its alternate signal stack, and its entry in the
/// table the handler checks.
pub fn prepare_unit_thread() {
    // SAFETY: a fresh anonymous mapping, kept for the thread's life (units live as long as the
    // process in practice; a few KiB per unit).
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            ALT_STACK_SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p != libc::MAP_FAILED {
            let ss = libc::stack_t {
                ss_sp: p,
                ss_flags: 0,
                ss_size: ALT_STACK_SIZE,
            };
            libc::sigaltstack(&ss, std::ptr::null_mut());
        }
    }
    let me = unsafe { libc::pthread_self() } as usize;
    for slot in UNIT_THREADS.iter() {
        if slot
            .compare_exchange(0, me, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

/// Removes the calling thread from the table (a compute unit that stops).
pub fn forget_unit_thread() {
    let me = unsafe { libc::pthread_self() } as usize;
    for slot in UNIT_THREADS.iter() {
        let _ = slot.compare_exchange(me, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
}

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, uctx: *mut libc::c_void) {
    let errno = unsafe { *libc::__errno_location() };
    if is_unit_thread() {
        let u = kernel_ctx::unit();
        // SAFETY: `u` is this unit thread's state (its TLS was touched when the unit started).
        unsafe {
            if std::ptr::read_volatile(&(*u).on_fiber) && !(*u).run.is_null() {
                let addr = if info.is_null() {
                    0
                } else {
                    (*info).si_addr() as usize
                };
                (*u).fault = Fault { signal: sig, addr };
                // Does not return: the run ends and the driver abandons its fibers.
                super::block::end_for_fault();
            }
        }
    }
    if sig == watchdog_signal() {
        // A late watchdog signal (the kernel thread ended meanwhile): nothing to do.
        unsafe { *libc::__errno_location() = errno };
        return;
    }
    // Not a kernel's: what was there before us.
    let Some(i) = SIGNALS.iter().position(|&s| s == sig) else {
        return;
    };
    // SAFETY: written by install_handlers before this handler was installed.
    unsafe {
        let old = (*std::ptr::addr_of!(OLD_ACTIONS))[i].assume_init_ref();
        match old.sa_sigaction {
            libc::SIG_DFL | libc::SIG_IGN => {
                // Back to the default action; the faulting instruction runs again and the
                // process ends as it would have without us.
                libc::sigaction(sig, old, std::ptr::null_mut());
            }
            h if old.sa_flags & libc::SA_SIGINFO != 0 => {
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    std::mem::transmute(h);
                f(sig, info, uctx);
            }
            h => {
                let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
                f(sig);
            }
        }
        *libc::__errno_location() = errno;
    }
}

// ---- the watchdog ------------------------------------------------------------------------------

/// The kernel timeout for devices started from now on (0: no watchdog).
static TIMEOUT_MS: AtomicU64 = AtomicU64::new(0);

pub fn set_kernel_timeout_ms(ms: u64) {
    TIMEOUT_MS.store(ms, Ordering::Relaxed);
}

fn clock_ns() -> u64 {
    static BASE: OnceLock<Instant> = OnceLock::new();
    BASE.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1
}

/// What one compute unit runs, as the watchdog sees it.
pub struct UnitWatch {
    thread: AtomicUsize,
    /// The launch whose block the unit runs (0: none).
    launch: AtomicU64,
    /// When the unit started on that launch (its first block of it).
    since_ns: AtomicU64,
    busy: AtomicBool,
}

impl UnitWatch {
    fn new() -> UnitWatch {
        UnitWatch {
            thread: AtomicUsize::new(0),
            launch: AtomicU64::new(0),
            since_ns: AtomicU64::new(0),
            busy: AtomicBool::new(false),
        }
    }

    /// The unit starts a block of launch `id` (unique on the device, never 0).
    #[inline]
    pub fn begin_block(&self, id: u64) {
        if self.launch.load(Ordering::Relaxed) != id {
            self.since_ns.store(clock_ns(), Ordering::Relaxed);
            self.launch.store(id, Ordering::Relaxed);
        }
        self.busy.store(true, Ordering::Release);
    }

    #[inline]
    pub fn end_block(&self) {
        self.busy.store(false, Ordering::Release);
    }
}

/// One device's watchdog: the units it looks after.
pub struct Watchdog {
    pub units: Vec<Arc<UnitWatch>>,
}

impl Watchdog {
    /// A watchdog for `count` units, if a timeout is set; its thread runs while the units do.
    pub fn start(device: usize, count: usize) -> Option<Arc<Watchdog>> {
        let ms = TIMEOUT_MS.load(Ordering::Relaxed);
        if ms == 0 {
            return None;
        }
        let w = Arc::new(Watchdog {
            units: (0..count).map(|_| Arc::new(UnitWatch::new())).collect(),
        });
        let weak = Arc::downgrade(&w);
        let timeout_ns = ms.saturating_mul(1_000_000);
        let tick = Duration::from_millis((ms / 4).clamp(1, 50));
        std::thread::Builder::new()
            .name(format!("biren-d{device}-watchdog"))
            .spawn(move || {
                super::engine::mark_device_thread();
                while let Some(w) = weak.upgrade() {
                    let now = clock_ns();
                    for u in &w.units {
                        // `busy` first (acquire): the `since` read after it is at least the one
                        // stored before the unit set `busy` (release) for this block.
                        if !u.busy.load(Ordering::Acquire) {
                            continue;
                        }
                        let since = u.since_ns.load(Ordering::Relaxed);
                        if now.saturating_sub(since) > timeout_ns {
                            let t = u.thread.load(Ordering::Relaxed);
                            if t != 0 {
                                // SAFETY: a live compute unit thread (units never exit while
                                // their device exists, and we hold the device's watchdog).
                                unsafe {
                                    libc::pthread_kill(t as libc::pthread_t, watchdog_signal())
                                };
                            }
                        }
                    }
                    drop(w);
                    std::thread::sleep(tick);
                }
            })
            .expect("biren: cannot start the kernel watchdog");
        Some(w)
    }

    /// Called by unit `cu` on its own thread before it runs blocks.
    pub fn register_unit(&self, cu: usize) {
        let me = unsafe { libc::pthread_self() } as usize;
        self.units[cu].thread.store(me, Ordering::Relaxed);
    }
}
