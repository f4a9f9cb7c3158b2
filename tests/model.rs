//! Model-based test of the C API (issue 8).
//!
//! proptest generates random sequences of API calls — valid ones, and invalid handles, destroyed
//! handles, out-of-range copies (past the end, interior pointers, one past the end), bogus enum
//! values, NULLs, huge sizes, waits that form cycles, double frees, ... — and runs each sequence
//! twice: against the library, through its C ABI exactly as a C program would (raw pointers, the
//! `extern "C"` exports of the rlib), and against a small reference model of the contract
//! (`include/biren_runtime.h` + `SPEC.md`) written below. Every return code, every out-parameter
//! and, at every quiescent point, the contents of device memory (read back with birenMemcpy) and of
//! host buffers are compared with the model.
//!
//! # The model
//! - Device allocations, registered (pinned) host allocations and a pool of plain host buffers are
//!   *objects* with their contents as `Vec<Option<u8>>` (`None`: not known, e.g. uninitialized).
//!   Device allocations up to 4 MiB are tracked byte by byte, including the large ones (1 MiB to
//!   3 MiB, mostly not a whole number of pages) generated so that frees of large blocks between
//!   live neighbours are compared byte for byte (issue 16: a freed large range handed back to
//!   the kernel must not zero its neighbour); a scenario places a large block at a page
//!   boundary (right after a reset) with a neighbour in its last page. BIREN_MODEL_STATS=1
//!   counts such frees.
//! - Every enqueued operation is a node of a dependency graph: the previous op of its stream, the
//!   legacy default-stream rules (an op on the NULL stream waits for the tails of all blocking
//!   streams, destroyed ones with pending work included; an op on a blocking stream waits for the
//!   tail of the NULL stream; `birenStreamNonBlocking` streams are exempt), event waits (the
//!   event's latest record, or — BIREN extension — a *future*: the next record of a never-recorded
//!   event). Blocking and non-blocking streams are both generated: the legacy rules are modelled
//!   in full, not avoided.
//! - A record that resolves a future is refused with DEADLOCK when one of the waits holding the
//!   future is an ancestor of the record (it would close a cycle). A host synchronize whose target
//!   depends on an unresolved future returns DEADLOCK (the test runs with
//!   BIREN_DEADLOCK_TIMEOUT_MS=0, so it does so at once). A synchronous birenMemcpy/birenMemset
//!   that would wait for such work returns DEADLOCK too, and (header: "a failed call writes
//!   nothing and enqueues nothing") enqueues nothing. Destroying an event releases the waits
//!   on its future (as if resolved by a record that is already reached).
//! - Contents are computed when the device is quiescent (a successful birenDeviceSynchronize, and
//!   at the end of every case): the graph is evaluated in a topological order; two ops that are
//!   not ordered by the graph and touch the same bytes (write/write or read/write) make those
//!   bytes unknown (a race: either order is allowed). The model then learns the real contents
//!   and drops the graph. At birenDeviceReset, host buffers are checked too: ops known complete
//!   (an ancestor of a successful synchronize or query) count as run, blocked ones as never run,
//!   the others as maybe run.
//! - Kernels are small Rust `extern "C"` functions that write deterministic bytes (a fill with
//!   `value + index`, a copy, and a probe that stores what birenStreamSynchronize and
//!   birenDeviceSynchronize return inside a kernel: NOT_PERMITTED). They are launched with copied
//!   arguments (birenLaunchKernelArgs, or birenLaunchKernel of a registered kernel) or by
//!   reference (arguments kept alive until the case ends). Host functions fill a host buffer and
//!   check that a synchronize inside them is NOT_PERMITTED.
//! - A trapping kernel followed by birenDeviceSynchronize (LAUNCH_FAILURE) makes the error sticky:
//!   until birenDeviceReset, calls that work on the device must fail with it.
//! - Answers that depend on timing are accepted either way: a query of work that may or may not
//!   have finished (SUCCESS or NOT_READY), birenMemGetInfo while freed memory may still be in use
//!   (a range). When a call has several faults, any of their codes is accepted (the contract does
//!   not order the checks), but it must be one of them.
//!
//! # Choices where the contract is silent
//! - A destroyed blocking stream whose work is still pending keeps taking part in the
//!   default-stream rules (its work "still completes", so the NULL stream waits for it).
//! - `count == 0` succeeds "at once" only when the stream handle and the copy kind are valid.
//! - birenMalloc while freed memory may still be in use by pending work: SUCCESS or OUT_OF_MEMORY
//!   ("counts as used until that work completes"), never DEADLOCK; memory whose work a
//!   synchronize has seen complete is free. Whether the 256-byte rounding counts against the
//!   capacity is left open (both accepted at the boundary).
//! - The scheduling policy after birenDeviceReset is not assumed (learnt from the next Get).
//! - With a sticky error, calls loosely tied to the device (pointer attributes, stream priority
//!   and flags, device properties, birenFree(NULL), pinned host memory, kernel registration) may
//!   answer normally; see `sticky_codes`.
//!
//! # Running it
//! `cargo test --release --test model`. BIREN_MODEL_CASES (default 200), BIREN_MODEL_SEED (to
//! replay a run; printed on failure), BIREN_MODEL_STATS=1 (what was exercised). A failure is
//! shrunk, printed as a list of actions, and its seed saved in proptest-regressions/model.txt
//! (replayed first next time; a seed depends on the strategies, so the durable record of a bug
//! is a named `regression_*` test at the end of this file).
//!
//! The runtime is a process-wide singleton: it is initialized once (64 MiB of device memory,
//! deadlock timeout 0) and every case starts with birenDeviceReset. The tests of this binary take
//! a lock, so they never overlap.

#![allow(non_snake_case)]

use biren_runtime::ffi::control::*;
use biren_runtime::ffi::event::*;
use biren_runtime::ffi::launch::*;
use biren_runtime::ffi::memory::*;
use biren_runtime::ffi::stream::*;
use biren_runtime::ffi::types::birenError_t::*;
use biren_runtime::ffi::types::*;
use proptest::prelude::*;
use proptest::test_runner::{
    Config, FileFailurePersistence, RngSeed, TestCaseError, TestError, TestRunner,
};
use std::collections::VecDeque;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering::SeqCst};
use std::sync::{Mutex, MutexGuard, Once};

type Code = birenError_t;

/// Device memory of the simulated device (BIREN_DEVICE_MEMORY=64M).
const CAP: usize = 64 << 20;
/// Device allocations up to this size have their contents tracked (every byte, including the
/// >= 1 MiB `SizeSel::Large` ones); larger ones are opaque.
const TRACK_LIMIT: usize = 4 << 20;
/// 1 MiB: freed device ranges at least this large are handed back to the kernel (issue 16).
const MIB: usize = 1 << 20;
const POOL_BUFFERS: usize = 3;
const POOL_SIZE: usize = 4096;
const SENTINEL: usize = 0x5e47_1000;
const BOGUS: [usize; 4] = [0x10, 0x1000, 0xdead_beef_0000, usize::MAX - 7];
const FORGED: [usize; 5] = [1, 0xdead_beef, (3 << 32) | 2, usize::MAX, (1 << 32) | 7];

// ---------------------------------------------------------------------------------------------
// The runtime singleton
// ---------------------------------------------------------------------------------------------

static LOCK: Mutex<()> = Mutex::new(());
static INIT: Once = Once::new();
static TOTAL_CALLS: AtomicU64 = AtomicU64::new(0);
/// Lines the runtime reported about traps (through birenSetValidatorCallback).
static TRAP_LINES: AtomicU64 = AtomicU64::new(0);

/// BIREN_MODEL_VALIDATOR=1 runs the whole binary with the validator on (its lines are counted,
/// not printed); the model must hold all the same.
fn validator_run() -> bool {
    std::env::var("BIREN_MODEL_VALIDATOR").is_ok_and(|v| v == "1")
}

unsafe extern "C" fn on_runtime_line(msg: *const c_char, _user: *mut c_void) {
    let line = CStr::from_ptr(msg).to_string_lossy();
    if line.contains("birenTrap") {
        TRAP_LINES.fetch_add(1, SeqCst);
    } else {
        // Validator findings, advice and leak reports (validator runs, and the validator
        // regression test).
        stat("validator lines".into(), 1);
    }
}
static STATS: Mutex<std::collections::BTreeMap<String, u64>> =
    Mutex::new(std::collections::BTreeMap::new());

/// Counts what the run exercised (printed with BIREN_MODEL_STATS=1).
fn stat(key: String, n: u64) {
    *STATS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default() += n;
}

/// Initializes the runtime once for this test binary and serializes the tests.
fn runtime() -> MutexGuard<'static, ()> {
    let g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    INIT.call_once(|| {
        std::env::set_var("BIREN_DEVICE_MEMORY", "64M");
        std::env::set_var("BIREN_DEADLOCK_TIMEOUT_MS", "0");
        std::env::set_var("BIREN_DEVICE_COUNT", "1");
        std::env::set_var("BIREN_COMPUTE_UNITS", "3");
        std::env::set_var("BIREN_VALIDATOR", "0");
        std::env::set_var("BIREN_SCHEDULING", "preemptive");
        std::env::remove_var("BIREN_TRACE");
        std::env::remove_var("BIREN_LOG");
        assert_eq!(birenInit(), BIREN_SUCCESS);
        // Asynchronous error lines (a trapped kernel) come here instead of stderr.
        assert_eq!(
            birenSetValidatorCallback(Some(on_runtime_line), null_mut()),
            BIREN_SUCCESS
        );
        if validator_run() {
            assert_eq!(birenSetDeviceValidator(1), BIREN_SUCCESS);
        }
        let sizes = [8usize; 3];
        assert_eq!(
            birenKernelRegister(Some(fill_kernel), c"model_fill".as_ptr(), 3, sizes.as_ptr()),
            BIREN_SUCCESS
        );
    });
    g
}

// ---------------------------------------------------------------------------------------------
// Kernels and host functions (deterministic writers)
// ---------------------------------------------------------------------------------------------

/// (global thread index, number of threads of the launch)
fn global_thread() -> (usize, usize) {
    let (t, b, bd, gd) = (
        birenThreadIdx(),
        birenBlockIdx(),
        birenBlockDim(),
        birenGridDim(),
    );
    let per_block = (bd.x * bd.y * bd.z) as usize;
    let in_block = (t.x + bd.x * (t.y + bd.y * t.z)) as usize;
    let block = (b.x + gd.x * (b.y + gd.y * b.z)) as usize;
    (
        block * per_block + in_block,
        per_block * (gd.x * gd.y * gd.z) as usize,
    )
}

unsafe fn arg(args: *mut *mut c_void, i: usize) -> u64 {
    *(*args.add(i) as *const u64)
}

/// args (u64 each): dst, len, val. dst[i] = val + i.
unsafe extern "C" fn fill_kernel(args: *mut *mut c_void) {
    let (dst, len, val) = (
        arg(args, 0) as *mut u8,
        arg(args, 1) as usize,
        arg(args, 2) as u8,
    );
    let (mut i, n) = global_thread();
    while i < len {
        *dst.add(i) = val.wrapping_add(i as u8);
        i += n;
    }
}

/// args (u64 each): dst, src, len. dst[i] = src[i] (ranges never overlap).
unsafe extern "C" fn copy_kernel(args: *mut *mut c_void) {
    let (dst, src, len) = (
        arg(args, 0) as *mut u8,
        arg(args, 1) as *const u8,
        arg(args, 2) as usize,
    );
    let (mut i, n) = global_thread();
    while i < len {
        *dst.add(i) = *src.add(i);
        i += n;
    }
}

/// args: dst. Thread 0 writes the codes of two synchronizing calls made inside the kernel
/// (both must be NOT_PERMITTED).
unsafe extern "C" fn probe_kernel(args: *mut *mut c_void) {
    if global_thread().0 == 0 {
        let d = arg(args, 0) as *mut u8;
        *d = birenStreamSynchronize(null_mut()) as i32 as u8;
        *d.add(1) = birenDeviceSynchronize() as i32 as u8;
    }
}

/// Aborts the launch: the device gets the sticky LAUNCH_FAILURE.
unsafe extern "C" fn trap_kernel(_args: *mut *mut c_void) {
    birenTrap();
}

/// Does nothing (distinct code from `dummy_kernel`, so that the linker cannot fold the two into
/// one address: registering one would then register the other).
unsafe extern "C" fn nop_kernel(_args: *mut *mut c_void) {
    std::hint::black_box(0x4e4f50u32);
}

/// Only ever registered (with bad and good argument lists), never launched.
unsafe extern "C" fn dummy_kernel(_args: *mut *mut c_void) {
    std::hint::black_box(0xd0_4d_4du32);
}

struct HostJob {
    dst: usize,
    len: usize,
    val: u8,
    ran: AtomicBool,
    probe: AtomicI32,
}

/// Fills its host range, then records what a synchronize inside a host function returns.
unsafe extern "C" fn host_job(p: *mut c_void) {
    let j = &*(p as *const HostJob);
    std::ptr::write_bytes(j.dst as *mut u8, j.val, j.len);
    j.probe
        .store(birenStreamSynchronize(null_mut()) as i32, SeqCst);
    j.ran.store(true, SeqCst);
}

/// Arguments of a launch by reference (unregistered kernel): kept alive until the case ends.
struct ByRefArgs {
    vals: [u64; 3],
    ptrs: [*mut c_void; 3],
}

// ---------------------------------------------------------------------------------------------
// Generated actions: abstract references, resolved against the state when they run, so that
// shrinking always yields runnable sequences.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum SRef {
    /// The default stream (NULL).
    Null,
    /// The i-th live stream (NULL if none).
    Live(u8),
    /// The i-th most recently created live stream.
    Recent(u8),
    /// The i-th destroyed stream (by birenStreamDestroy or birenDeviceReset).
    Stale(u8),
    /// A forged handle value.
    Forged(u8),
}

#[derive(Clone, Copy, Debug)]
enum ERef {
    Live(u8),
    Recent(u8),
    Stale(u8),
    /// A forged handle value (0 = NULL).
    Forged(u8),
}

#[derive(Clone, Copy, Debug)]
enum Off {
    Start,
    Mid(u16),
    Last,
    /// One past the end.
    End,
    /// Further past the end.
    Past(u16),
}

#[derive(Clone, Copy, Debug)]
enum PtrRef {
    Null,
    /// Into the i-th live device allocation.
    Dev(u8, Off),
    /// Into the i-th host buffer (the pool, then live pinned allocations).
    Host(u8, Off),
    /// Into the i-th freed allocation (device or pinned): dangling.
    Stale(u8, Off),
    Bogus(u8),
}

#[derive(Clone, Copy, Debug)]
enum CountSel {
    Zero,
    Small(u16),
    /// Exactly what fits from the pointers.
    Fit,
    FitMinus(u16),
    /// Past the end by 1 + k.
    Over(u16),
    Huge(u8),
}

#[derive(Clone, Copy, Debug)]
enum SizeSel {
    Zero,
    Small(u16),
    Medium(u16),
    /// A device allocation of 1 MiB to 3 MiB, mostly not a whole number of pages, tracked
    /// byte by byte (freeing one hands its range back to the kernel).
    Large(u16),
    Big(u8),
    Huge(u8),
}

#[derive(Clone, Copy, Debug)]
enum KSel {
    Fill,
    Copy,
    Probe,
    Nop,
    Null,
}

#[derive(Clone, Copy, Debug)]
enum How {
    /// birenLaunchKernelArgs with sizes (BIREN_LAUNCH).
    Sized,
    /// birenLaunchKernel of the registered fill kernel (values copied by registration).
    Registered,
    /// birenLaunchKernel, args by reference, kept alive until the case ends.
    ByRef,
    /// birenLaunchKernelArgs with faulty arguments.
    BadArgs(u8),
}

#[derive(Clone, Copy, Debug)]
enum CfgSel {
    Ok {
        gx: u8,
        gy: u8,
        bx: u8,
        by: u8,
        bz: u8,
        shared: bool,
    },
    Bad(u8),
}

#[derive(Clone, Copy, Debug)]
struct Region {
    obj: u8,
    off: u16,
    len: u16,
}

#[derive(Clone, Copy, Debug)]
struct LaunchSpec {
    kernel: KSel,
    dst: Region,
    src: Region,
    val: u8,
    cfg: CfgSel,
    stream: SRef,
    how: How,
}

#[derive(Clone, Copy, Debug)]
enum StreamHow {
    Plain,
    Flags(u32),
    Prio(u32, i32),
    NullOut,
}

#[derive(Clone, Copy, Debug)]
enum Action {
    Malloc {
        size: SizeSel,
        null_out: bool,
    },
    Free {
        ptr: PtrRef,
    },
    MallocHost {
        size: SizeSel,
        null_out: bool,
    },
    FreeHost {
        ptr: PtrRef,
    },
    Memcpy {
        dst: PtrRef,
        src: PtrRef,
        count: CountSel,
        kind: i32,
        stream: Option<SRef>,
    },
    Memset {
        ptr: PtrRef,
        value: i32,
        count: CountSel,
        stream: Option<SRef>,
    },
    Launch(LaunchSpec),
    HostFunc {
        stream: SRef,
        dst: Region,
        val: u8,
        null_fn: bool,
    },
    StreamCreate(StreamHow),
    StreamDestroy(SRef),
    StreamSync(SRef),
    StreamQuery(SRef),
    StreamGetInfo {
        s: SRef,
        null_out: bool,
    },
    EventCreate {
        flags: Option<u32>,
        null_out: bool,
    },
    EventDestroy(ERef),
    EventRecord {
        e: ERef,
        s: SRef,
    },
    EventQuery(ERef),
    EventSync(ERef),
    EventElapsed {
        a: ERef,
        b: ERef,
        null_out: bool,
    },
    WaitEvent {
        s: SRef,
        e: ERef,
    },
    DeviceSync,
    DeviceReset,
    Policy {
        set: Option<i32>,
        null_out: bool,
    },
    Device {
        which: u8,
        arg: i32,
        null_out: bool,
    },
    PointerAttr {
        ptr: PtrRef,
        null_out: bool,
    },
    MemGetInfo {
        null_out: u8,
    },
    LastError {
        peek: bool,
    },
    Register(u8),
    Misc(u8),
    /// A trapping kernel, then birenDeviceSynchronize: the device's error becomes sticky.
    Trap(SRef),
}

fn sref() -> impl Strategy<Value = SRef> {
    prop_oneof![
        4 => Just(SRef::Null),
        6 => any::<u8>().prop_map(SRef::Live),
        3 => (0u8..3).prop_map(SRef::Recent),
        1 => any::<u8>().prop_map(SRef::Stale),
        1 => (0u8..5).prop_map(SRef::Forged),
    ]
}

fn eref() -> impl Strategy<Value = ERef> {
    prop_oneof![
        6 => any::<u8>().prop_map(ERef::Live),
        3 => (0u8..3).prop_map(ERef::Recent),
        1 => any::<u8>().prop_map(ERef::Stale),
        1 => (0u8..6).prop_map(ERef::Forged),
    ]
}

fn off() -> impl Strategy<Value = Off> {
    prop_oneof![
        6 => Just(Off::Start),
        5 => any::<u16>().prop_map(Off::Mid),
        1 => Just(Off::Last),
        1 => Just(Off::End),
        1 => (0u16..600).prop_map(Off::Past),
    ]
}

fn ptr() -> impl Strategy<Value = PtrRef> {
    prop_oneof![
        1 => Just(PtrRef::Null),
        9 => (any::<u8>(), off()).prop_map(|(i, o)| PtrRef::Dev(i, o)),
        4 => (any::<u8>(), off()).prop_map(|(i, o)| PtrRef::Host(i, o)),
        1 => (any::<u8>(), off()).prop_map(|(i, o)| PtrRef::Stale(i, o)),
        1 => (0u8..4).prop_map(PtrRef::Bogus),
    ]
}

fn count() -> impl Strategy<Value = CountSel> {
    prop_oneof![
        1 => Just(CountSel::Zero),
        4 => (0u16..512).prop_map(CountSel::Small),
        6 => Just(CountSel::Fit),
        4 => any::<u16>().prop_map(CountSel::FitMinus),
        2 => (0u16..300).prop_map(CountSel::Over),
        1 => (0u8..5).prop_map(CountSel::Huge),
    ]
}

fn size() -> impl Strategy<Value = SizeSel> {
    prop_oneof![
        1 => Just(SizeSel::Zero),
        12 => any::<u16>().prop_map(SizeSel::Small),
        2 => any::<u16>().prop_map(SizeSel::Medium),
        2 => any::<u16>().prop_map(SizeSel::Large),
        1 => (0u8..5).prop_map(SizeSel::Big),
        1 => (0u8..5).prop_map(SizeSel::Huge),
    ]
}

fn kind() -> impl Strategy<Value = i32> {
    prop_oneof![
        2 => Just(0),
        4 => Just(1),
        4 => Just(2),
        4 => Just(3),
        3 => Just(4),
        1 => prop::sample::select(vec![5, -1, 100, i32::MIN, i32::MAX]),
    ]
}

fn region() -> impl Strategy<Value = Region> {
    (any::<u8>(), any::<u16>(), any::<u16>()).prop_map(|(obj, off, len)| Region { obj, off, len })
}

fn launch() -> impl Strategy<Value = LaunchSpec> {
    let kernel = prop_oneof![
        5 => Just(KSel::Fill),
        3 => Just(KSel::Copy),
        1 => Just(KSel::Probe),
        1 => Just(KSel::Nop),
        1 => Just(KSel::Null),
    ];
    let cfg = prop_oneof![
        8 => (1u8..=4, 1u8..=2, 1u8..=64, 1u8..=2, 1u8..=2, any::<bool>())
            .prop_map(|(gx, gy, bx, by, bz, shared)| CfgSel::Ok { gx, gy, bx, by, bz, shared }),
        1 => (0u8..9).prop_map(CfgSel::Bad),
    ];
    let how = prop_oneof![
        5 => Just(How::Sized),
        3 => Just(How::Registered),
        2 => Just(How::ByRef),
        1 => (0u8..4).prop_map(How::BadArgs),
    ];
    (kernel, region(), region(), any::<u8>(), cfg, sref(), how).prop_map(
        |(kernel, dst, src, val, cfg, stream, how)| LaunchSpec {
            kernel,
            dst,
            src,
            val,
            cfg,
            stream,
            how,
        },
    )
}

fn stream_how() -> impl Strategy<Value = StreamHow> {
    prop_oneof![
        3 => Just(StreamHow::Plain),
        4 => prop::sample::select(vec![0u32, 1, 1, 2, 3, 0x8000_0000]).prop_map(StreamHow::Flags),
        2 => (prop::sample::select(vec![0u32, 1, 7]), prop::sample::select(vec![-100, -6, -5, -3, 0, 1, 99]))
            .prop_map(|(f, p)| StreamHow::Prio(f, p)),
        1 => Just(StreamHow::NullOut),
    ]
}

fn opt_stream() -> impl Strategy<Value = Option<SRef>> {
    prop_oneof![1 => Just(None), 3 => sref().prop_map(Some)]
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        10 => (size(), prop::bool::weighted(0.05)).prop_map(|(size, null_out)| Action::Malloc { size, null_out }),
        4 => ptr().prop_map(|ptr| Action::Free { ptr }),
        2 => (size(), prop::bool::weighted(0.1)).prop_map(|(size, null_out)| Action::MallocHost { size, null_out }),
        2 => ptr().prop_map(|ptr| Action::FreeHost { ptr }),
        16 => (ptr(), ptr(), count(), kind(), opt_stream())
            .prop_map(|(dst, src, count, kind, stream)| Action::Memcpy { dst, src, count, kind, stream }),
        6 => (ptr(), prop::sample::select(vec![0, 7, 0xab, 0x1cd, -1, -256]), count(), opt_stream())
            .prop_map(|(ptr, value, count, stream)| Action::Memset { ptr, value, count, stream }),
        10 => launch().prop_map(Action::Launch),
        2 => (sref(), region(), any::<u8>(), prop::bool::weighted(0.1))
            .prop_map(|(stream, dst, val, null_fn)| Action::HostFunc { stream, dst, val, null_fn }),
        5 => stream_how().prop_map(Action::StreamCreate),
        2 => sref().prop_map(Action::StreamDestroy),
        3 => sref().prop_map(Action::StreamSync),
        2 => sref().prop_map(Action::StreamQuery),
        1 => (sref(), prop::bool::weighted(0.2)).prop_map(|(s, null_out)| Action::StreamGetInfo { s, null_out }),
        4 => (prop::option::of(prop::sample::select(vec![0u32, 1, 2, 3, 4, 0x10, u32::MAX])), prop::bool::weighted(0.05))
            .prop_map(|(flags, null_out)| Action::EventCreate { flags, null_out }),
        2 => eref().prop_map(Action::EventDestroy),
        6 => (eref(), sref()).prop_map(|(e, s)| Action::EventRecord { e, s }),
        2 => eref().prop_map(Action::EventQuery),
        2 => eref().prop_map(Action::EventSync),
        1 => (eref(), eref(), prop::bool::weighted(0.1)).prop_map(|(a, b, null_out)| Action::EventElapsed { a, b, null_out }),
        6 => (sref(), eref()).prop_map(|(s, e)| Action::WaitEvent { s, e }),
        3 => Just(Action::DeviceSync),
        1 => Just(Action::DeviceReset),
        1 => (prop::option::of(prop::sample::select(vec![0, 1, 2, -1, 100])), prop::bool::weighted(0.2))
            .prop_map(|(set, null_out)| Action::Policy { set, null_out }),
        1 => (0u8..5, prop::sample::select(vec![0, 1, -1, 7]), prop::bool::weighted(0.2))
            .prop_map(|(which, arg, null_out)| Action::Device { which, arg, null_out }),
        2 => (ptr(), prop::bool::weighted(0.1)).prop_map(|(ptr, null_out)| Action::PointerAttr { ptr, null_out }),
        1 => (0u8..4).prop_map(|null_out| Action::MemGetInfo { null_out }),
        2 => any::<bool>().prop_map(|peek| Action::LastError { peek }),
        1 => (0u8..7).prop_map(Action::Register),
        1 => (0u8..4).prop_map(Action::Misc),
    ]
}

/// Small scenarios that random generation rarely assembles: cycles of waits and pipelines.
fn scenario() -> impl Strategy<Value = Vec<Action>> {
    let after_trap = prop::collection::vec(action(), 4);
    (
        0u8..7,
        any::<bool>(),
        any::<bool>(),
        region(),
        any::<u8>(),
        after_trap,
        sref(),
    )
        .prop_map(|(which, fa, fb, r, val, after, ts)| {
            use Action::*;
            let flags = |b: bool| StreamCreate(StreamHow::Flags(b as u32));
            let ev = EventCreate {
                flags: None,
                null_out: false,
            };
            let (s0, s1, e0, e1) = (
                SRef::Recent(0),
                SRef::Recent(1),
                ERef::Recent(0),
                ERef::Recent(1),
            );
            match which {
                // The seed's case: A waits for B's event while B waits for A's.
                0 => vec![
                    flags(fa),
                    flags(fb),
                    ev,
                    ev,
                    WaitEvent { s: s1, e: e1 },
                    WaitEvent { s: s0, e: e0 },
                    EventRecord { e: e0, s: s1 },
                    EventRecord { e: e1, s: s0 },
                    DeviceSync,
                ],
                // A stream waits for a record it would make later itself.
                1 => vec![
                    flags(fa),
                    ev,
                    WaitEvent { s: s0, e: e0 },
                    EventRecord { e: e0, s: s0 },
                    StreamSync(s0),
                ],
                // A record on the NULL stream of an event a (blocking?) stream waits for.
                2 => vec![
                    flags(fa),
                    ev,
                    WaitEvent { s: s0, e: e0 },
                    EventRecord {
                        e: e0,
                        s: SRef::Null,
                    },
                    DeviceSync,
                ],
                // A stall, then the record that releases it.
                3 => vec![
                    flags(fa),
                    ev,
                    WaitEvent { s: s0, e: e0 },
                    Memset {
                        ptr: PtrRef::Dev(r.obj, Off::Start),
                        value: val as i32,
                        count: CountSel::Fit,
                        stream: Some(s0),
                    },
                    StreamSync(s0),
                    Memset {
                        ptr: PtrRef::Dev(r.obj, Off::Start),
                        value: 1,
                        count: CountSel::Fit,
                        stream: None,
                    },
                    flags(fb),
                    EventRecord { e: e0, s: s0 },
                    StreamSync(s1),
                    DeviceSync,
                ],
                // Large blocks freed between live neighbours (issue 16, bug 1). After a reset
                // the arena starts afresh, so the first block starts on a page boundary: its
                // free hands [start, start + size) to the kernel, which must not zero the
                // small neighbour that starts in the block's last page. Every byte of every
                // block is compared at both synchronizes.
                6 => {
                    let fill = |i: u8, v: u8| Memset {
                        ptr: PtrRef::Dev(i, Off::Start),
                        value: (v | 1) as i32,
                        count: CountSel::Fit,
                        stream: None,
                    };
                    let dev = |i: u8| PtrRef::Dev(i, Off::Start);
                    vec![
                        DeviceReset,
                        Malloc {
                            size: SizeSel::Large(r.len),
                            null_out: false,
                        },
                        Malloc {
                            size: SizeSel::Small(r.off),
                            null_out: false,
                        },
                        Malloc {
                            size: SizeSel::Large(r.off),
                            null_out: false,
                        },
                        Malloc {
                            size: SizeSel::Small(r.len),
                            null_out: false,
                        },
                        fill(0, val),
                        fill(1, val.wrapping_add(1)),
                        fill(2, val.wrapping_add(2)),
                        fill(3, val.wrapping_add(3)),
                        Free { ptr: dev(0) },
                        DeviceSync,
                        Free { ptr: dev(1) },
                        DeviceSync,
                    ]
                }
                // A trap: the device's error is sticky until birenDeviceReset.
                5 => {
                    let mut v = vec![Trap(ts)];
                    v.extend(after);
                    v.push(DeviceReset);
                    v
                }
                // A pipeline across two streams: copy in, kernel, record, wait, copy out.
                _ => vec![
                    flags(fa),
                    flags(fb),
                    ev,
                    Memcpy {
                        dst: PtrRef::Dev(r.obj, Off::Start),
                        src: PtrRef::Host(r.obj, Off::Mid(r.off)),
                        count: CountSel::Fit,
                        kind: 1,
                        stream: Some(s1),
                    },
                    Launch(LaunchSpec {
                        kernel: KSel::Fill,
                        dst: r,
                        src: r,
                        val,
                        cfg: CfgSel::Ok {
                            gx: 2,
                            gy: 1,
                            bx: 32,
                            by: 1,
                            bz: 1,
                            shared: false,
                        },
                        stream: s1,
                        how: How::Registered,
                    }),
                    EventRecord { e: e0, s: s1 },
                    WaitEvent { s: s0, e: e0 },
                    Memcpy {
                        dst: PtrRef::Host(r.obj.wrapping_add(1), Off::Start),
                        src: PtrRef::Dev(r.obj, Off::Start),
                        count: CountSel::Fit,
                        kind: 2,
                        stream: Some(s0),
                    },
                    Memcpy {
                        dst: PtrRef::Dev(r.obj.wrapping_add(1), Off::Start),
                        src: PtrRef::Dev(r.obj, Off::Start),
                        count: CountSel::Fit,
                        kind: 4,
                        stream: Some(s0),
                    },
                    EventSync(e0),
                ],
            }
        })
}

fn program() -> impl Strategy<Value = Vec<Vec<Action>>> {
    let chunk = prop_oneof![
        14 => action().prop_map(|a| vec![a]),
        1 => scenario(),
    ];
    prop::collection::vec(chunk, 0..110)
}

// ---------------------------------------------------------------------------------------------
// The reference model
// ---------------------------------------------------------------------------------------------

type NodeId = usize;
type ObjId = usize;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ObjKind {
    Device,
    Pool,
    Pinned,
}

struct Obj {
    kind: ObjKind,
    base: usize,
    size: usize,
    /// Contents; `None` for an opaque (large) allocation, or after it was freed.
    data: Option<Vec<Option<u8>>>,
    live: bool,
}

impl Obj {
    fn end(&self) -> usize {
        self.base + self.size
    }
    fn contains(&self, p: usize) -> bool {
        self.base <= p && p < self.end()
    }
}

#[derive(Clone, Debug)]
enum Src {
    Const(u8),
    /// byte i = v + i (the fill kernel)
    Pattern(u8),
    Bytes(Vec<u8>),
    /// copied from (object, offset)
    Copy(ObjId, usize),
}

#[derive(Clone, Debug)]
struct Write {
    dst: ObjId,
    off: usize,
    len: usize,
    src: Src,
}

struct Node {
    deps: Vec<NodeId>,
    /// A wait on the next record of a never-recorded event.
    future: Option<usize>,
    write: Option<Write>,
    host_job: Option<usize>,
    complete: bool,
}

struct MStream {
    handle: usize,
    flags: u32,
    prio: i32,
    live: bool,
    tail: Option<NodeId>,
}

#[derive(Clone, Copy)]
enum Rec {
    Node(NodeId),
    /// Recorded, and reached before the last quiescent point.
    Done,
}

struct MEvent {
    handle: usize,
    flags: u32,
    live: bool,
    latest: Option<Rec>,
    future: Option<usize>,
}

struct Fut {
    resolved: Option<NodeId>,
    waits: Vec<NodeId>,
}

struct Deferred {
    bytes: usize,
    obj: ObjId,
    until: Vec<NodeId>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ran {
    Yes,
    Maybe,
    No,
}

fn round256(x: usize) -> Option<usize> {
    x.checked_add(255).map(|v| v / 256 * 256)
}

fn overlap(a: (usize, usize), b: (usize, usize)) -> Option<(usize, usize)> {
    let (s, e) = (a.0.max(b.0), a.1.min(b.1));
    (s < e).then_some((s, e))
}

struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn get(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    fn union(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
}

/// The library side and the model side of one generated case.
struct World {
    objs: Vec<Obj>,
    nodes: Vec<Node>,
    futs: Vec<Fut>,
    /// [0] is the default stream.
    streams: Vec<MStream>,
    events: Vec<MEvent>,
    deferred: Vec<Deferred>,
    // Boxed: the runtime holds pointers to them until the work that uses them is gone.
    #[allow(clippy::vec_box)]
    jobs: Vec<Box<HostJob>>,
    #[allow(clippy::vec_box)]
    byref: Vec<Box<ByRefArgs>>,
    pool: Vec<*mut u8>,
    last_error: Code,
    /// The device has a sticky error (a kernel trapped): calls on it fail until a reset.
    sticky: bool,
    policy: Option<i32>,
    calls: u64,
    trace: VecDeque<String>,
}

fn pool_layout() -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(POOL_SIZE, 64).unwrap()
}

impl Drop for World {
    fn drop(&mut self) {
        // Nothing may still write into the buffers below once they are freed.
        birenDeviceReset();
        birenDeviceSynchronize();
        for o in &self.objs {
            if o.kind == ObjKind::Pinned && o.live {
                birenFreeHost(o.base as *mut c_void);
            }
        }
        for &p in &self.pool {
            unsafe { std::alloc::dealloc(p, pool_layout()) };
        }
    }
}

type Res = Result<(), String>;

impl World {
    fn new() -> World {
        let mut w = World {
            objs: Vec::new(),
            nodes: Vec::new(),
            futs: Vec::new(),
            streams: vec![MStream {
                handle: 0,
                flags: 0,
                prio: 0,
                live: true,
                tail: None,
            }],
            events: Vec::new(),
            deferred: Vec::new(),
            jobs: Vec::new(),
            byref: Vec::new(),
            pool: Vec::new(),
            last_error: BIREN_SUCCESS,
            sticky: false,
            policy: None,
            calls: 0,
            trace: VecDeque::new(),
        };
        for b in 0..POOL_BUFFERS {
            let p = unsafe { std::alloc::alloc(pool_layout()) };
            assert!(!p.is_null());
            let init: Vec<u8> = (0..POOL_SIZE).map(|i| (i * 7 + b * 31 + 1) as u8).collect();
            unsafe { std::ptr::copy_nonoverlapping(init.as_ptr(), p, POOL_SIZE) };
            w.pool.push(p);
            w.objs.push(Obj {
                kind: ObjKind::Pool,
                base: p as usize,
                size: POOL_SIZE,
                data: Some(init.into_iter().map(Some).collect()),
                live: true,
            });
        }
        w
    }

    // ---- reporting ----

    fn note(&mut self, s: String) {
        if self.trace.len() == 80 {
            self.trace.pop_front();
        }
        self.trace.push_back(s);
    }

    fn fail(&self, msg: String) -> String {
        let mut s = format!("{msg}\n  last calls (oldest first):\n");
        for t in &self.trace {
            s.push_str("    ");
            s.push_str(t);
            s.push('\n');
        }
        s
    }

    /// Checks a return code against the accepted ones and keeps the model's last error.
    fn check(&mut self, what: String, got: Code, ok: &[Code]) -> Res {
        self.calls += 1;
        let name = what.split(['(', ' ']).next().unwrap_or("").to_string();
        stat(format!("{name} -> {got:?}"), 1);
        let sticky_ok;
        let ok = if self.sticky && name != "birenDeviceReset" {
            sticky_ok = sticky_codes(&name, ok);
            &sticky_ok[..]
        } else {
            ok
        };
        self.note(format!("{what} -> {got:?}"));
        if !ok.contains(&got) {
            return Err(self.fail(format!("{what}: expected {ok:?}, got {got:?}")));
        }
        if got != BIREN_SUCCESS && got != BIREN_ERROR_NOT_READY {
            self.last_error = got;
        }
        if self.sticky && got == BIREN_ERROR_LAUNCH_FAILURE {
            // Refused because of the sticky error: nothing happened.
            return Err(STICKY.into());
        }
        Ok(())
    }

    fn ensure(&self, cond: bool, msg: impl FnOnce() -> String) -> Res {
        if cond {
            Ok(())
        } else {
            Err(self.fail(msg()))
        }
    }

    // ---- resolving references ----

    fn live_streams(&self) -> Vec<usize> {
        (1..self.streams.len())
            .filter(|&k| self.streams[k].live)
            .collect()
    }

    fn stream_handle(&self, r: SRef) -> usize {
        let live = self.live_streams();
        match r {
            SRef::Null => 0,
            SRef::Live(i) if !live.is_empty() => self.streams[live[i as usize % live.len()]].handle,
            SRef::Recent(i) if !live.is_empty() => {
                self.streams[live[live.len() - 1 - i as usize % live.len()]].handle
            }
            SRef::Live(_) | SRef::Recent(_) => 0,
            SRef::Stale(i) => {
                let dead: Vec<usize> = (1..self.streams.len())
                    .filter(|&k| !self.streams[k].live)
                    .collect();
                if dead.is_empty() {
                    FORGED[i as usize % FORGED.len()]
                } else {
                    self.streams[dead[i as usize % dead.len()]].handle
                }
            }
            SRef::Forged(i) => FORGED[i as usize % FORGED.len()],
        }
    }

    /// The model stream a handle value names, if it is valid.
    fn stream_of(&self, h: usize) -> Option<usize> {
        if h == 0 {
            return Some(0);
        }
        (1..self.streams.len()).find(|&k| self.streams[k].live && self.streams[k].handle == h)
    }

    fn event_handle(&self, r: ERef) -> usize {
        let live: Vec<usize> = (0..self.events.len())
            .filter(|&k| self.events[k].live)
            .collect();
        match r {
            ERef::Live(i) if !live.is_empty() => self.events[live[i as usize % live.len()]].handle,
            ERef::Recent(i) if !live.is_empty() => {
                self.events[live[live.len() - 1 - i as usize % live.len()]].handle
            }
            ERef::Live(i) | ERef::Recent(i) => FORGED[i as usize % FORGED.len()],
            ERef::Stale(i) => {
                let dead: Vec<usize> = (0..self.events.len())
                    .filter(|&k| !self.events[k].live)
                    .collect();
                if dead.is_empty() {
                    FORGED[i as usize % FORGED.len()]
                } else {
                    self.events[dead[i as usize % dead.len()]].handle
                }
            }
            ERef::Forged(0) => 0,
            ERef::Forged(i) => FORGED[i as usize % FORGED.len()],
        }
    }

    fn event_of(&self, h: usize) -> Option<usize> {
        (0..self.events.len())
            .find(|&k| self.events[k].live && self.events[k].handle == h && h != 0)
    }

    fn objs_where(&self, f: impl Fn(&Obj) -> bool) -> Vec<ObjId> {
        (0..self.objs.len()).filter(|&o| f(&self.objs[o])).collect()
    }

    fn live_dev(&self) -> Vec<ObjId> {
        self.objs_where(|o| o.kind == ObjKind::Device && o.live)
    }

    fn host_objs(&self) -> Vec<ObjId> {
        self.objs_where(|o| o.kind != ObjKind::Device && o.live)
    }

    fn at(&self, o: ObjId, off: Off) -> usize {
        let ob = &self.objs[o];
        let d = match off {
            Off::Start => 0,
            Off::Mid(m) => m as usize % ob.size,
            Off::Last => ob.size - 1,
            Off::End => ob.size,
            Off::Past(k) => ob.size + 1 + k as usize,
        };
        ob.base.wrapping_add(d)
    }

    fn pick(list: &[ObjId], i: u8) -> Option<ObjId> {
        (!list.is_empty()).then(|| list[i as usize % list.len()])
    }

    /// A pointer as given, for a side that the library only looks up.
    fn ptr_any(&self, p: PtrRef) -> usize {
        match p {
            PtrRef::Null => 0,
            PtrRef::Dev(i, off) => Self::pick(&self.live_dev(), i).map_or(0, |o| self.at(o, off)),
            PtrRef::Host(i, off) => Self::pick(&self.host_objs(), i).map_or(0, |o| self.at(o, off)),
            PtrRef::Stale(i, off) => {
                match Self::pick(&self.objs_where(|o| !o.live && o.kind != ObjKind::Pool), i) {
                    Some(o) => self.at(o, off),
                    None => BOGUS[i as usize % BOGUS.len()],
                }
            }
            PtrRef::Bogus(i) => BOGUS[i as usize % BOGUS.len()],
        }
    }

    /// A pointer for a side the library treats as host memory: always a real host buffer (or NULL).
    fn ptr_host(&self, p: PtrRef) -> usize {
        let hosts = self.host_objs();
        match p {
            PtrRef::Null => 0,
            PtrRef::Dev(i, off) | PtrRef::Host(i, off) | PtrRef::Stale(i, off) => {
                self.at(Self::pick(&hosts, i).unwrap(), off)
            }
            PtrRef::Bogus(i) => self.at(Self::pick(&hosts, i).unwrap(), Off::Start),
        }
    }

    fn find_dev(&self, p: usize) -> Option<ObjId> {
        (0..self.objs.len()).find(|&o| {
            self.objs[o].kind == ObjKind::Device && self.objs[o].live && self.objs[o].contains(p)
        })
    }

    fn find_host(&self, p: usize) -> Option<ObjId> {
        (0..self.objs.len()).find(|&o| {
            self.objs[o].kind != ObjKind::Device && self.objs[o].live && self.objs[o].contains(p)
        })
    }

    fn find_any(&self, p: usize) -> Option<ObjId> {
        self.find_dev(p).or_else(|| self.find_host(p))
    }

    fn room(&self, p: usize) -> Option<usize> {
        self.find_any(p).map(|o| self.objs[o].end() - p)
    }

    fn count(&self, c: CountSel, sides: &[usize]) -> usize {
        let fit = sides
            .iter()
            .filter_map(|&p| self.room(p))
            .min()
            .unwrap_or(64);
        match c {
            CountSel::Zero => 0,
            CountSel::Small(n) => 1 + n as usize % 512,
            CountSel::Fit => fit,
            CountSel::FitMinus(k) => fit - k as usize % fit.max(1),
            CountSel::Over(k) => fit + 1 + k as usize,
            CountSel::Huge(h) => [
                usize::MAX,
                usize::MAX / 2,
                CAP + 1,
                1 << 40,
                usize::MAX - 255,
            ][h as usize % 5],
        }
    }

    fn size(s: SizeSel, host: bool) -> usize {
        match s {
            SizeSel::Zero => 0,
            SizeSel::Small(n) => 1 + n as usize % 4096,
            SizeSel::Medium(n) if !host => 4097 + n as usize % 60_000,
            // n = 0 is exactly 1 MiB; others run from 1 MiB + 1 to 3 MiB, odd sizes included.
            SizeSel::Large(n) if !host => MIB + (n as usize * 37) % (2 * MIB),
            SizeSel::Big(k) if !host => {
                [CAP / 4, CAP / 3, CAP / 2, CAP - 4096, CAP][k as usize % 5]
            }
            SizeSel::Huge(k) if !host => [
                usize::MAX,
                CAP + 1,
                usize::MAX - 100,
                1 << 62,
                isize::MAX as usize,
            ][k as usize % 5],
            SizeSel::Huge(k) => [usize::MAX, usize::MAX - 100, 1 << 62][k as usize % 3],
            SizeSel::Medium(n) | SizeSel::Large(n) => 1 + n as usize % 4096,
            SizeSel::Big(n) => 1 + n as usize * 16,
        }
    }

    /// A valid region of a live, tracked device allocation: (object, offset, length).
    fn dev_region(&self, r: Region) -> Option<(ObjId, usize, usize)> {
        let list = self.objs_where(|o| o.kind == ObjKind::Device && o.live && o.data.is_some());
        let o = Self::pick(&list, r.obj)?;
        let size = self.objs[o].size;
        let off = r.off as usize % size;
        let len = 1 + r.len as usize % (size - off);
        Some((o, off, len))
    }

    // ---- the graph ----

    fn preds(&self, v: NodeId) -> Vec<NodeId> {
        let n = &self.nodes[v];
        let mut p = n.deps.clone();
        if let Some(r) = n.future.and_then(|f| self.futs[f].resolved) {
            p.push(r);
        }
        p
    }

    fn is_blocking(&self, k: usize) -> bool {
        k != 0 && self.streams[k].flags & birenStreamNonBlocking == 0
    }

    /// The dependencies of a new op in stream k: its stream's tail and the default-stream rules.
    fn new_deps(&self, k: usize) -> Vec<NodeId> {
        let mut d: Vec<NodeId> = self.streams[k].tail.into_iter().collect();
        if k == 0 {
            for j in 1..self.streams.len() {
                if self.is_blocking(j) {
                    d.extend(self.streams[j].tail);
                }
            }
        } else if self.is_blocking(k) {
            d.extend(self.streams[0].tail);
        }
        d
    }

    fn push_node(
        &mut self,
        k: usize,
        write: Option<Write>,
        extra: &[NodeId],
        future: Option<usize>,
    ) -> NodeId {
        let mut deps = self.new_deps(k);
        deps.extend_from_slice(extra);
        let id = self.nodes.len();
        self.nodes.push(Node {
            deps,
            future,
            write,
            host_job: None,
            complete: false,
        });
        self.streams[k].tail = Some(id);
        id
    }

    /// Some op in the ancestry of `starts` (inclusive) waits for a future that is unresolved.
    fn blocked(&self, starts: &[NodeId]) -> bool {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = starts.to_vec();
        while let Some(v) = stack.pop() {
            if seen[v] || self.nodes[v].complete {
                continue;
            }
            seen[v] = true;
            if let Some(f) = self.nodes[v].future {
                if self.futs[f].resolved.is_none() {
                    return true;
                }
            }
            stack.extend(self.preds(v));
        }
        false
    }

    /// One of `targets` is in the ancestry of `starts` (inclusive).
    fn reaches(&self, starts: &[NodeId], targets: &[NodeId]) -> bool {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = starts.to_vec();
        while let Some(v) = stack.pop() {
            if seen[v] {
                continue;
            }
            seen[v] = true;
            if targets.contains(&v) {
                return true;
            }
            stack.extend(self.preds(v));
        }
        false
    }

    fn mark_complete(&mut self, starts: &[NodeId]) {
        let mut stack = starts.to_vec();
        while let Some(v) = stack.pop() {
            if self.nodes[v].complete {
                continue;
            }
            self.nodes[v].complete = true;
            stack.extend(self.preds(v));
        }
    }

    fn tail_pending(&self, k: usize) -> Option<NodeId> {
        self.streams[k].tail.filter(|&t| !self.nodes[t].complete)
    }

    /// Evaluates the graph into the objects' contents (see the module doc).
    fn settle(&mut self, quiescent: bool) -> Res {
        let n = self.nodes.len();
        let preds: Vec<Vec<NodeId>> = (0..n).map(|v| self.preds(v)).collect();
        // Topological order (the model never lets a cycle in).
        let mut order = Vec::with_capacity(n);
        let mut mark = vec![0u8; n];
        for s in 0..n {
            let mut stack = vec![(s, false)];
            while let Some((v, done)) = stack.pop() {
                if done {
                    mark[v] = 2;
                    order.push(v);
                    continue;
                }
                if mark[v] != 0 {
                    self.ensure(mark[v] == 2, || "model: the graph has a cycle".into())?;
                    continue;
                }
                mark[v] = 1;
                stack.push((v, true));
                for &p in &preds[v] {
                    if mark[p] == 0 {
                        stack.push((p, false));
                    } else {
                        self.ensure(mark[p] == 2, || "model: the graph has a cycle".into())?;
                    }
                }
            }
        }
        let mut anc: Vec<Bits> = (0..n).map(|_| Bits::new(n)).collect();
        for &v in &order {
            for &p in &preds[v] {
                let (a, b) = if p < v {
                    let (l, r) = anc.split_at_mut(v);
                    (&mut r[0], &l[p])
                } else {
                    let (l, r) = anc.split_at_mut(p);
                    (&mut l[v], &r[0])
                };
                a.union(b);
                a.set(p);
            }
        }
        let ran: Vec<Ran> = (0..n)
            .map(|v| {
                if quiescent || self.nodes[v].complete {
                    Ran::Yes
                } else if self.blocked(&[v]) {
                    Ran::No
                } else {
                    Ran::Maybe
                }
            })
            .collect();
        if quiescent {
            self.ensure((0..n).all(|v| !self.blocked(&[v])), || {
                "model: blocked work at a quiescent point".into()
            })?;
        }
        // Races: pairs of unordered ops with conflicting footprints.
        let writers: Vec<NodeId> = (0..n)
            .filter(|&v| self.nodes[v].write.is_some() && ran[v] != Ran::No)
            .collect();
        let mut taint: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        for (i, &a) in writers.iter().enumerate() {
            for &b in &writers[i + 1..] {
                if anc[a].get(b) || anc[b].get(a) {
                    continue;
                }
                let (wa, wb) = (
                    self.nodes[a].write.as_ref().unwrap(),
                    self.nodes[b].write.as_ref().unwrap(),
                );
                if wa.dst == wb.dst {
                    if let Some(r) = overlap((wa.off, wa.off + wa.len), (wb.off, wb.off + wb.len)) {
                        taint[a].push(r);
                        taint[b].push(r);
                    }
                }
                for (x, wx, wy) in [(a, wa, wb), (b, wb, wa)] {
                    if let Src::Copy(so, soff) = wx.src {
                        if so == wy.dst {
                            if let Some((s, e)) =
                                overlap((soff, soff + wx.len), (wy.off, wy.off + wy.len))
                            {
                                taint[x].push((wx.off + s - soff, wx.off + e - soff));
                            }
                        }
                    }
                }
            }
        }
        for &v in &order {
            if ran[v] == Ran::No {
                continue;
            }
            let Some(w) = self.nodes[v].write.clone() else {
                continue;
            };
            let mut bytes: Vec<Option<u8>> = match &w.src {
                Src::Const(c) => vec![Some(*c); w.len],
                Src::Pattern(b) => (0..w.len).map(|i| Some(b.wrapping_add(i as u8))).collect(),
                Src::Bytes(bs) => bs.iter().map(|&b| Some(b)).collect(),
                Src::Copy(so, soff) => match &self.objs[*so].data {
                    Some(d) => d[*soff..*soff + w.len].to_vec(),
                    None => vec![None; w.len],
                },
            };
            if ran[v] == Ran::Maybe {
                bytes.iter_mut().for_each(|b| *b = None);
            }
            for &(s, e) in &taint[v] {
                bytes[s - w.off..e - w.off]
                    .iter_mut()
                    .for_each(|b| *b = None);
            }
            if let Some(d) = &mut self.objs[w.dst].data {
                d[w.off..w.off + w.len].copy_from_slice(&bytes);
            }
        }
        // Host functions that ran must have found synchronizing calls refused.
        for (node, &r) in self.nodes.iter().zip(&ran) {
            if let (Some(j), Ran::Yes) = (node.host_job, r) {
                let job = &self.jobs[j];
                let (r, p) = (job.ran.load(SeqCst), job.probe.load(SeqCst));
                self.ensure(r && p == BIREN_ERROR_NOT_PERMITTED as i32, || {
                    format!("host function #{j}: ran={r}, birenStreamSynchronize inside it returned {p} (expected NOT_PERMITTED = 14)")
                })?;
            }
        }
        Ok(())
    }

    /// Compares an object's known bytes with `actual`, then learns `actual`.
    fn compare(&mut self, o: ObjId, actual: &[u8], when: &str) -> Res {
        let ob = &self.objs[o];
        if let Some(d) = &ob.data {
            stat(
                format!("bytes compared ({when})"),
                d.iter().filter(|b| b.is_some()).count() as u64,
            );
            stat(
                format!("bytes not known ({when})"),
                d.iter().filter(|b| b.is_none()).count() as u64,
            );
            let bad: Vec<usize> = (0..ob.size)
                .filter(|&i| d[i].is_some_and(|b| b != actual[i]))
                .collect();
            if !bad.is_empty() {
                let show: Vec<String> = bad
                    .iter()
                    .take(8)
                    .map(|&i| {
                        format!(
                            "[{i}] expected {:#04x} got {:#04x}",
                            d[i].unwrap(),
                            actual[i]
                        )
                    })
                    .collect();
                return Err(self.fail(format!(
                    "{when}: contents of the {:?} object #{o} ({} bytes at {:#x}) differ from the model in {} bytes: {}",
                    ob.kind,
                    ob.size,
                    ob.base,
                    bad.len(),
                    show.join(", ")
                )));
            }
        }
        if let Some(d) = &mut self.objs[o].data {
            d.iter_mut().zip(actual).for_each(|(m, &a)| *m = Some(a));
        }
        Ok(())
    }

    fn host_bytes(&self, o: ObjId) -> Vec<u8> {
        let ob = &self.objs[o];
        unsafe { std::slice::from_raw_parts(ob.base as *const u8, ob.size) }.to_vec()
    }

    /// After a successful birenDeviceSynchronize: everything ran. Check all contents, then start
    /// a fresh graph from the real contents.
    fn quiescent_check(&mut self, when: &str) -> Res {
        self.settle(true)?;
        for o in self.objs_where(|o| o.kind == ObjKind::Device && o.live && o.data.is_some()) {
            let size = self.objs[o].size;
            let mut buf = vec![0u8; size];
            let r = birenMemcpy(
                buf.as_mut_ptr() as *mut c_void,
                self.objs[o].base as *const c_void,
                size,
                2,
            );
            self.check(
                format!("readback birenMemcpy(D2H, #{o}, {size})"),
                r,
                &[BIREN_SUCCESS],
            )?;
            self.compare(o, &buf, when)?;
        }
        for o in self.host_objs() {
            let actual = self.host_bytes(o);
            self.compare(o, &actual, when)?;
        }
        for o in &mut self.objs {
            if !o.live {
                o.data = None;
            }
        }
        self.ensure(self.futs.iter().all(|f| f.resolved.is_some()), || {
            "model: unresolved future at a quiescent point".into()
        })?;
        self.nodes.clear();
        self.futs.clear();
        self.deferred.clear();
        for s in &mut self.streams {
            s.tail = None;
        }
        for e in &mut self.events {
            e.future = None;
            if e.latest.is_some() {
                e.latest = Some(Rec::Done);
            }
        }
        Ok(())
    }

    /// After birenDeviceReset: host buffers hold what the ops that surely ran wrote.
    fn reset_model(&mut self) -> Res {
        self.settle(false)?;
        for o in self.host_objs() {
            let actual = self.host_bytes(o);
            self.compare(o, &actual, "after birenDeviceReset")?;
        }
        for o in &mut self.objs {
            if o.kind == ObjKind::Device {
                o.live = false;
                o.data = None;
            }
        }
        for s in &mut self.streams[1..] {
            s.live = false;
        }
        for s in &mut self.streams {
            s.tail = None;
        }
        for e in &mut self.events {
            e.live = false;
            e.future = None;
        }
        self.nodes.clear();
        self.futs.clear();
        self.deferred.clear();
        self.policy = None;
        self.sticky = false;
        Ok(())
    }

    // ---- memory accounting ----

    fn live_exact(&self) -> usize {
        self.live_dev().iter().map(|&o| self.objs[o].size).sum()
    }

    fn live_rounded(&self) -> usize {
        self.live_dev()
            .iter()
            .map(|&o| round256(self.objs[o].size).unwrap())
            .sum()
    }

    /// Bytes freed while work that may use them was pending and perhaps not released yet.
    /// Memory whose work is known complete (a synchronize covered it) is free.
    fn deferred_bytes(&self) -> usize {
        self.deferred
            .iter()
            .filter(|d| d.until.iter().any(|&t| !self.nodes[t].complete))
            .map(|d| d.bytes)
            .sum()
    }

    // ---- copies and fills ----

    /// The faults of one side of a copy (device side: by lookup; host side: NULL, wrap-around, and
    /// overrunning a known allocation it touches).
    fn side_faults(&self, p: usize, count: usize, device: bool, errs: &mut Vec<Code>) {
        if p == 0 {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        } else if device {
            match self.find_dev(p) {
                None => errs.push(BIREN_ERROR_INVALID_DEVICE_POINTER),
                Some(o) => {
                    if p.checked_add(count).is_none_or(|e| e > self.objs[o].end()) {
                        errs.push(BIREN_ERROR_OUT_OF_BOUNDS);
                    }
                }
            }
        } else if p.checked_add(count).is_none() {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        } else {
            // A host side that touches a known allocation (device or page-locked) must lie in it.
            let end = p + count;
            let overruns = self.objs.iter().any(|o| {
                o.live
                    && o.kind != ObjKind::Pool
                    && p < o.end()
                    && o.base < end
                    && !(o.base <= p && end <= o.end())
            });
            if overruns {
                errs.push(BIREN_ERROR_OUT_OF_BOUNDS);
            }
        }
    }

    /// Runs the model's side of an enqueue of `write` (None: nothing to write) on stream `k`,
    /// synchronous or not, and returns the accepted codes.
    fn enqueue_expect(&self, k: usize, sync: bool) -> Vec<Code> {
        if sync && self.blocked(&self.new_deps(k)) {
            vec![BIREN_ERROR_DEADLOCK]
        } else {
            vec![BIREN_SUCCESS]
        }
    }

    fn enqueue_apply(&mut self, k: usize, write: Option<Write>, sync: bool) -> NodeId {
        let id = self.push_node(k, write, &[], None);
        if sync {
            self.mark_complete(&[id]);
        }
        id
    }

    // ---- the steps ----

    fn step(&mut self, a: &Action) -> Res {
        match self.step_inner(a) {
            Err(e) if e == STICKY => Ok(()),
            r => r,
        }
    }

    fn trap(&mut self, s: SRef) -> Res {
        if self.sticky || (0..self.nodes.len()).any(|v| self.blocked(&[v])) {
            self.note("trap skipped: the device is stalled or already failed".into());
            return Ok(());
        }
        let h = self.stream_handle(s);
        let k = self.stream_of(h);
        let one = Dim3::new(1, 1, 1);
        let lines = TRAP_LINES.load(SeqCst);
        let r = birenLaunchKernelArgs(
            Some(trap_kernel),
            one,
            one,
            null_mut(),
            std::ptr::null(),
            0,
            0,
            h as birenStream_t,
        );
        let ok = if k.is_some() {
            BIREN_SUCCESS
        } else {
            BIREN_ERROR_INVALID_HANDLE
        };
        self.check(
            format!("birenLaunchKernelArgs(trap, stream {h:#x})"),
            r,
            &[ok],
        )?;
        if r != BIREN_SUCCESS {
            return Ok(());
        }
        self.enqueue_apply(k.unwrap(), None, false);
        let r = birenDeviceSynchronize();
        self.check(
            "birenDeviceSynchronize() [after trap]".into(),
            r,
            &[BIREN_ERROR_LAUNCH_FAILURE],
        )?;
        self.sticky = true;
        self.ensure(TRAP_LINES.load(SeqCst) > lines, || {
            "the trap was not reported to the validator callback".into()
        })
    }

    fn step_inner(&mut self, a: &Action) -> Res {
        match *a {
            Action::Trap(s) => self.trap(s),
            Action::Malloc { size, null_out } => self.malloc(Self::size(size, false), null_out),
            Action::Free { ptr } => self.free(self.ptr_any(ptr)),
            Action::MallocHost { size, null_out } => {
                self.malloc_host(Self::size(size, true), null_out)
            }
            Action::FreeHost { ptr } => self.free_host(self.ptr_any(ptr)),
            Action::Memcpy {
                dst,
                src,
                count,
                kind,
                stream,
            } => self.memcpy(dst, src, count, kind, stream),
            Action::Memset {
                ptr,
                value,
                count,
                stream,
            } => self.memset(ptr, value, count, stream),
            Action::Launch(spec) => self.launch(spec),
            Action::HostFunc {
                stream,
                dst,
                val,
                null_fn,
            } => self.host_func(stream, dst, val, null_fn),
            Action::StreamCreate(how) => self.stream_create(how),
            Action::StreamDestroy(s) => {
                let h = self.stream_handle(s);
                let r = birenStreamDestroy(h as birenStream_t);
                match self.stream_of(h).filter(|&k| k != 0) {
                    Some(k) => {
                        self.check(format!("birenStreamDestroy({h:#x})"), r, &[BIREN_SUCCESS])?;
                        self.streams[k].live = false;
                        Ok(())
                    }
                    None => self.check(
                        format!("birenStreamDestroy({h:#x})"),
                        r,
                        &[BIREN_ERROR_INVALID_HANDLE],
                    ),
                }
            }
            Action::StreamSync(s) => {
                let h = self.stream_handle(s);
                let r = birenStreamSynchronize(h as birenStream_t);
                let what = format!("birenStreamSynchronize({h:#x})");
                match self.stream_of(h) {
                    None => self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]),
                    Some(k) => match self.tail_pending(k) {
                        None => self.check(what, r, &[BIREN_SUCCESS]),
                        Some(t) if self.blocked(&[t]) => {
                            self.check(what, r, &[BIREN_ERROR_DEADLOCK])
                        }
                        Some(t) => {
                            self.check(what, r, &[BIREN_SUCCESS])?;
                            self.mark_complete(&[t]);
                            Ok(())
                        }
                    },
                }
            }
            Action::StreamQuery(s) => {
                let h = self.stream_handle(s);
                let r = birenStreamQuery(h as birenStream_t);
                let what = format!("birenStreamQuery({h:#x})");
                match self.stream_of(h) {
                    None => self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]),
                    Some(k) => match self.tail_pending(k) {
                        None => self.check(what, r, &[BIREN_SUCCESS]),
                        Some(t) if self.blocked(&[t]) => {
                            self.check(what, r, &[BIREN_ERROR_NOT_READY])
                        }
                        Some(t) => {
                            self.check(what, r, &[BIREN_SUCCESS, BIREN_ERROR_NOT_READY])?;
                            if r == BIREN_SUCCESS {
                                self.mark_complete(&[t]);
                            }
                            Ok(())
                        }
                    },
                }
            }
            Action::StreamGetInfo { s, null_out } => {
                let h = self.stream_handle(s);
                let mut prio: c_int = 77;
                let mut flags: c_uint = 77;
                let (pp, pf) = if null_out {
                    (null_mut(), null_mut())
                } else {
                    (&mut prio as *mut c_int, &mut flags as *mut c_uint)
                };
                let r1 = birenStreamGetPriority(h as birenStream_t, pp);
                let r2 = birenStreamGetFlags(h as birenStream_t, pf);
                let mut errs = Vec::new();
                let k = self.stream_of(h);
                if k.is_none() {
                    errs.push(BIREN_ERROR_INVALID_HANDLE);
                }
                if null_out {
                    errs.push(BIREN_ERROR_INVALID_VALUE);
                }
                let ok = if errs.is_empty() {
                    vec![BIREN_SUCCESS]
                } else {
                    errs
                };
                self.check(format!("birenStreamGetPriority({h:#x})"), r1, &ok)?;
                self.check(format!("birenStreamGetFlags({h:#x})"), r2, &ok)?;
                if let (Some(k), false) = (k, null_out) {
                    let (ep, ef) = (self.streams[k].prio, self.streams[k].flags);
                    self.ensure(prio == ep && flags == ef, || {
                        format!("stream {h:#x}: priority {prio} flags {flags}, expected {ep} {ef}")
                    })?;
                } else {
                    self.ensure(prio == 77 && flags == 77, || {
                        "out-parameter written on failure".into()
                    })?;
                }
                Ok(())
            }
            Action::EventCreate { flags, null_out } => self.event_create(flags, null_out),
            Action::EventDestroy(e) => {
                let h = self.event_handle(e);
                let r = birenEventDestroy(h as birenEvent_t);
                match self.event_of(h) {
                    Some(k) => {
                        self.check(format!("birenEventDestroy({h:#x})"), r, &[BIREN_SUCCESS])?;
                        self.events[k].live = false;
                        // Streams waiting for its first record stop waiting.
                        if let Some(f) = self.events[k].future.take() {
                            let id = self.nodes.len();
                            self.nodes.push(Node {
                                deps: Vec::new(),
                                future: None,
                                write: None,
                                host_job: None,
                                complete: true,
                            });
                            self.futs[f].resolved = Some(id);
                        }
                        Ok(())
                    }
                    None => self.check(
                        format!("birenEventDestroy({h:#x})"),
                        r,
                        &[BIREN_ERROR_INVALID_HANDLE],
                    ),
                }
            }
            Action::EventRecord { e, s } => self.record(e, s),
            Action::EventQuery(e) => {
                let h = self.event_handle(e);
                let r = birenEventQuery(h as birenEvent_t);
                let what = format!("birenEventQuery({h:#x})");
                match self.event_of(h) {
                    None => self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]),
                    Some(k) => match self.events[k].latest {
                        Some(Rec::Node(t)) if !self.nodes[t].complete => {
                            if self.blocked(&[t]) {
                                self.check(what, r, &[BIREN_ERROR_NOT_READY])
                            } else {
                                self.check(what, r, &[BIREN_SUCCESS, BIREN_ERROR_NOT_READY])?;
                                if r == BIREN_SUCCESS {
                                    self.mark_complete(&[t]);
                                }
                                Ok(())
                            }
                        }
                        _ => self.check(what, r, &[BIREN_SUCCESS]),
                    },
                }
            }
            Action::EventSync(e) => {
                let h = self.event_handle(e);
                let r = birenEventSynchronize(h as birenEvent_t);
                let what = format!("birenEventSynchronize({h:#x})");
                match self.event_of(h) {
                    None => self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]),
                    Some(k) => match self.events[k].latest {
                        Some(Rec::Node(t)) if !self.nodes[t].complete => {
                            if self.blocked(&[t]) {
                                self.check(what, r, &[BIREN_ERROR_DEADLOCK])
                            } else {
                                self.check(what, r, &[BIREN_SUCCESS])?;
                                self.mark_complete(&[t]);
                                Ok(())
                            }
                        }
                        _ => self.check(what, r, &[BIREN_SUCCESS]),
                    },
                }
            }
            Action::EventElapsed { a, b, null_out } => self.elapsed(a, b, null_out),
            Action::WaitEvent { s, e } => self.wait_event(s, e),
            Action::DeviceSync => self.device_sync(),
            Action::DeviceReset => {
                let r = birenDeviceReset();
                self.check("birenDeviceReset()".into(), r, &[BIREN_SUCCESS])?;
                self.reset_model()
            }
            Action::Policy { set, null_out } => self.policy(set, null_out),
            Action::Device {
                which,
                arg,
                null_out,
            } => self.device(which, arg, null_out),
            Action::PointerAttr { ptr, null_out } => self.pointer_attr(self.ptr_any(ptr), null_out),
            Action::MemGetInfo { null_out } => {
                let (mut free, mut total) = (SENTINEL, SENTINEL);
                let pf = if null_out == 1 {
                    null_mut()
                } else {
                    &mut free as *mut usize
                };
                let pt = if null_out == 2 {
                    null_mut()
                } else {
                    &mut total as *mut usize
                };
                let r = birenMemGetInfo(pf, pt);
                if null_out == 1 || null_out == 2 {
                    self.check(
                        "birenMemGetInfo(NULL)".into(),
                        r,
                        &[BIREN_ERROR_INVALID_VALUE],
                    )?;
                    return self.ensure(free == SENTINEL && total == SENTINEL, || {
                        "birenMemGetInfo wrote on failure".into()
                    });
                }
                self.check("birenMemGetInfo".into(), r, &[BIREN_SUCCESS])?;
                let hi = CAP - self.live_exact();
                // With the validator on, freed memory sits in quarantine (up to 8 MiB) and still
                // counts as used (not in the header: see the report).
                let quarantine = if validator_run() { 8 << 20 } else { 0 };
                let lo =
                    CAP.saturating_sub(self.live_rounded() + self.deferred_bytes() + quarantine);
                self.ensure(total == CAP && lo <= free && free <= hi, || {
                    format!("birenMemGetInfo: free {free} total {total}, expected total {CAP} and free in [{lo}, {hi}]")
                })
            }
            Action::LastError { peek } => {
                let r = if peek {
                    birenPeekAtLastError()
                } else {
                    birenGetLastError()
                };
                let expected = self.last_error;
                self.calls += 1;
                self.note(format!("birenGet/PeekLastError(peek={peek}) -> {r:?}"));
                self.ensure(r == expected, || {
                    format!("last error: expected {expected:?}, got {r:?}")
                })?;
                if !peek {
                    self.last_error = BIREN_SUCCESS;
                }
                Ok(())
            }
            Action::Register(which) => self.register(which),
            Action::Misc(which) => self.misc(which),
        }
    }

    fn malloc(&mut self, size: usize, null_out: bool) -> Res {
        let mut p = SENTINEL as *mut c_void;
        let out = if null_out {
            null_mut()
        } else {
            &mut p as *mut *mut c_void
        };
        let ok: Vec<Code> = if null_out {
            vec![BIREN_ERROR_INVALID_VALUE]
        } else if size == 0 {
            vec![BIREN_SUCCESS]
        } else {
            let (exact, rounded) = (self.live_exact(), self.live_rounded());
            let all_def = self.deferred_bytes();
            // The header lists SUCCESS and OUT_OF_MEMORY only. Freed memory that pending work may
            // still use "counts as used until that work completes" (birenMemGetInfo), so while
            // it may be pending either answer is right (the library may wait for it). Never
            // DEADLOCK: memory held by stalled work is simply not free.
            match round256(size) {
                _ if size > CAP || exact + size > CAP => vec![BIREN_ERROR_OUT_OF_MEMORY],
                Some(r) if rounded + r + all_def <= CAP => vec![BIREN_SUCCESS],
                _ => vec![BIREN_SUCCESS, BIREN_ERROR_OUT_OF_MEMORY],
            }
        };
        let r = birenMalloc(out, size);
        self.check(
            format!(
                "birenMalloc({}, {size})",
                if null_out { "NULL" } else { "&p" }
            ),
            r,
            &ok,
        )?;
        if r != BIREN_SUCCESS {
            return self.ensure(p as usize == SENTINEL, || {
                "birenMalloc wrote *devPtr on failure".into()
            });
        }
        if size == 0 {
            return self.ensure(p.is_null(), || {
                format!("birenMalloc(0) gave {p:?}, expected NULL")
            });
        }
        let p = p as usize;
        self.ensure(p != 0 && p.is_multiple_of(256), || {
            format!("birenMalloc({size}) gave {p:#x}: not 256-byte aligned")
        })?;
        let clash = self.objs.iter().enumerate().find(|(i, o)| {
            let pending = self
                .deferred
                .iter()
                .any(|d| d.obj == *i && self.blocked(&d.until));
            (o.live || pending) && overlap((o.base, o.end()), (p, p + size)).is_some()
        });
        self.ensure(clash.is_none(), || {
            let (i, o) = clash.unwrap();
            format!("birenMalloc({size}) gave {p:#x}, overlapping object #{i} ({:?}, {} bytes at {:#x}, live={})", o.kind, o.size, o.base, o.live)
        })?;
        self.objs.push(Obj {
            kind: ObjKind::Device,
            base: p,
            size,
            data: (size <= TRACK_LIMIT).then(|| vec![None; size]),
            live: true,
        });
        Ok(())
    }

    fn free(&mut self, p: usize) -> Res {
        let r = birenFree(p as *mut c_void);
        let what = format!("birenFree({p:#x})");
        if p == 0 {
            return self.check(what, r, &[BIREN_SUCCESS]);
        }
        match self.find_dev(p).filter(|&o| self.objs[o].base == p) {
            None => self.check(what, r, &[BIREN_ERROR_INVALID_DEVICE_POINTER]),
            Some(o) => {
                self.check(what, r, &[BIREN_SUCCESS])?;
                self.objs[o].live = false;
                let (base, end) = (self.objs[o].base, self.objs[o].end());
                if end - base >= MIB {
                    stat("large blocks (>= 1 MiB) freed".into(), 1);
                    let neighbour = self.objs.iter().any(|n| {
                        n.live
                            && n.kind == ObjKind::Device
                            && n.base >= end
                            && n.base <= (end | 4095)
                    });
                    if neighbour && base.is_multiple_of(4096) {
                        stat(
                            "  ... page-aligned, with a live neighbour in its last page".into(),
                            1,
                        );
                    }
                }
                let until: Vec<NodeId> = (0..self.streams.len())
                    .filter_map(|k| self.tail_pending(k))
                    .collect();
                if !until.is_empty() {
                    let bytes = round256(self.objs[o].size).unwrap();
                    self.deferred.push(Deferred {
                        bytes,
                        obj: o,
                        until,
                    });
                }
                Ok(())
            }
        }
    }

    fn malloc_host(&mut self, size: usize, null_out: bool) -> Res {
        let mut p = SENTINEL as *mut c_void;
        let out = if null_out {
            null_mut()
        } else {
            &mut p as *mut *mut c_void
        };
        let ok = if null_out {
            BIREN_ERROR_INVALID_VALUE
        } else if size > 1 << 40 {
            BIREN_ERROR_OUT_OF_MEMORY
        } else {
            BIREN_SUCCESS
        };
        let r = birenMallocHost(out, size);
        self.check(format!("birenMallocHost({size})"), r, &[ok])?;
        if r != BIREN_SUCCESS {
            return self.ensure(p as usize == SENTINEL, || {
                "birenMallocHost wrote *ptr on failure".into()
            });
        }
        if size == 0 {
            return self.ensure(p.is_null(), || {
                "birenMallocHost(0) did not give NULL".into()
            });
        }
        let p = p as usize;
        self.ensure(p != 0 && self.find_any(p).is_none(), || {
            format!("birenMallocHost gave {p:#x}, inside a live object")
        })?;
        self.objs.push(Obj {
            kind: ObjKind::Pinned,
            base: p,
            size,
            data: Some(vec![None; size]),
            live: true,
        });
        Ok(())
    }

    fn free_host(&mut self, p: usize) -> Res {
        let what = format!("birenFreeHost({p:#x})");
        let target = self
            .find_host(p)
            .filter(|&o| self.objs[o].kind == ObjKind::Pinned && self.objs[o].base == p);
        if let Some(o) = target {
            // Freeing a buffer that pending work still uses is the caller's bug: not generated.
            let used = self.nodes.iter().any(|n| {
                !n.complete
                    && n.write
                        .as_ref()
                        .is_some_and(|w| w.dst == o || matches!(w.src, Src::Copy(s, _) if s == o))
            });
            if used {
                self.note(format!("{what} skipped: pending work uses it"));
                return Ok(());
            }
        }
        let r = birenFreeHost(p as *mut c_void);
        if p == 0 {
            return self.check(what, r, &[BIREN_SUCCESS]);
        }
        match target {
            Some(o) => {
                self.check(what, r, &[BIREN_SUCCESS])?;
                self.objs[o].live = false;
                self.objs[o].data = None;
                Ok(())
            }
            None => self.check(what, r, &[BIREN_ERROR_INVALID_VALUE]),
        }
    }

    fn memcpy(
        &mut self,
        dst: PtrRef,
        src: PtrRef,
        count: CountSel,
        kind: i32,
        stream: Option<SRef>,
    ) -> Res {
        // Which sides the kind says are host memory: those must be real host buffers.
        let (d, s) = match kind {
            0 => (self.ptr_host(dst), self.ptr_host(src)),
            1 => (self.ptr_any(dst), self.ptr_host(src)),
            2 => (self.ptr_host(dst), self.ptr_any(src)),
            4 => {
                let known = |p: usize| if self.find_any(p).is_some() { p } else { 0 };
                (known(self.ptr_any(dst)), known(self.ptr_any(src)))
            }
            _ => (self.ptr_any(dst), self.ptr_any(src)),
        };
        let n = self.count(count, &[d, s]);
        let h = stream.map(|r| self.stream_handle(r));
        let sync = h.is_none();
        let k = match h {
            None => Some(0),
            Some(h) => self.stream_of(h),
        };
        let mut errs = Vec::new();
        if k.is_none() {
            errs.push(BIREN_ERROR_INVALID_HANDLE);
        }
        let (dd, sd) = match kind {
            0 => (false, false),
            1 => (true, false),
            2 => (false, true),
            3 => (true, true),
            4 => (self.find_dev(d).is_some(), self.find_dev(s).is_some()),
            _ => {
                errs.push(BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
                (false, false)
            }
        };
        if (0..=4).contains(&kind) && n > 0 {
            self.side_faults(d, n, dd, &mut errs);
            self.side_faults(s, n, sd, &mut errs);
        }
        let ok = if !errs.is_empty() {
            errs
        } else if n == 0 {
            vec![BIREN_SUCCESS]
        } else {
            // Both sides valid: host sides must lie in buffers of this test (else: not generated).
            let fits = |p: usize| self.room(p).is_some_and(|r| r >= n);
            if !fits(d) || !fits(s) {
                self.note(format!(
                    "birenMemcpy{}({d:#x}, {s:#x}, {n}, {kind}) skipped: host range not ours",
                    if sync { "" } else { "Async" }
                ));
                return Ok(());
            }
            self.enqueue_expect(k.unwrap(), sync)
        };
        let r = match h {
            None => birenMemcpy(d as *mut c_void, s as *const c_void, n, kind),
            Some(h) => birenMemcpyAsync(
                d as *mut c_void,
                s as *const c_void,
                n,
                kind,
                h as birenStream_t,
            ),
        };
        let what = match h {
            None => format!("birenMemcpy({d:#x}, {s:#x}, {n}, {kind})"),
            Some(h) => format!("birenMemcpyAsync({d:#x}, {s:#x}, {n}, {kind}, {h:#x})"),
        };
        self.check(what, r, &ok)?;
        if n > 0 && r == BIREN_SUCCESS {
            let (dobj, sobj) = (self.find_any(d).unwrap(), self.find_any(s).unwrap());
            let w = Write {
                dst: dobj,
                off: d - self.objs[dobj].base,
                len: n,
                src: Src::Copy(sobj, s - self.objs[sobj].base),
            };
            self.enqueue_apply(k.unwrap(), Some(w), sync);
        }
        Ok(())
    }

    fn memset(&mut self, ptr: PtrRef, value: i32, count: CountSel, stream: Option<SRef>) -> Res {
        let p = self.ptr_any(ptr);
        let n = self.count(count, &[p]);
        let h = stream.map(|r| self.stream_handle(r));
        let sync = h.is_none();
        let k = match h {
            None => Some(0),
            Some(h) => self.stream_of(h),
        };
        let mut errs = Vec::new();
        if k.is_none() {
            errs.push(BIREN_ERROR_INVALID_HANDLE);
        }
        if n > 0 {
            self.side_faults(p, n, true, &mut errs);
        }
        let ok = if !errs.is_empty() {
            errs
        } else if n == 0 {
            vec![BIREN_SUCCESS]
        } else {
            self.enqueue_expect(k.unwrap(), sync)
        };
        let (r, what) = match h {
            None => (
                birenMemset(p as *mut c_void, value, n),
                format!("birenMemset({p:#x}, {value}, {n})"),
            ),
            Some(h) => (
                birenMemsetAsync(p as *mut c_void, value, n, h as birenStream_t),
                format!("birenMemsetAsync({p:#x}, {value}, {n}, {h:#x})"),
            ),
        };
        self.check(what, r, &ok)?;
        if n > 0 && r == BIREN_SUCCESS {
            let o = self.find_dev(p).unwrap();
            let w = Write {
                dst: o,
                off: p - self.objs[o].base,
                len: n,
                src: Src::Const(value as u8),
            };
            self.enqueue_apply(k.unwrap(), Some(w), sync);
        }
        Ok(())
    }

    fn launch(&mut self, spec: LaunchSpec) -> Res {
        // What the kernel will do, from valid regions only (a kernel that writes out of bounds
        // corrupts the host heap: never generated).
        let dst = self.dev_region(spec.dst);
        let src = self.dev_region(spec.src);
        let mut kernel = spec.kernel;
        let mut write: Option<Write> = None;
        let mut vals = [0u64; 3];
        let mut nargs = 0usize;
        match (kernel, dst) {
            (KSel::Fill, Some((o, off, len))) => {
                vals = [
                    (self.objs[o].base + off) as u64,
                    len as u64,
                    spec.val as u64,
                ];
                nargs = 3;
                write = Some(Write {
                    dst: o,
                    off,
                    len,
                    src: Src::Pattern(spec.val),
                });
            }
            (KSel::Copy, Some((o, off, len))) => match src {
                Some((so, soff, slen))
                    if !(so == o
                        && overlap((off, off + len.min(slen)), (soff, soff + len.min(slen)))
                            .is_some()) =>
                {
                    let len = len.min(slen);
                    vals = [
                        (self.objs[o].base + off) as u64,
                        (self.objs[so].base + soff) as u64,
                        len as u64,
                    ];
                    nargs = 3;
                    write = Some(Write {
                        dst: o,
                        off,
                        len,
                        src: Src::Copy(so, soff),
                    });
                }
                _ => {
                    kernel = KSel::Fill;
                    vals = [
                        (self.objs[o].base + off) as u64,
                        len as u64,
                        spec.val as u64,
                    ];
                    nargs = 3;
                    write = Some(Write {
                        dst: o,
                        off,
                        len,
                        src: Src::Pattern(spec.val),
                    });
                }
            },
            (KSel::Probe, Some((o, off, len))) if len >= 2 => {
                vals[0] = (self.objs[o].base + off) as u64;
                nargs = 1;
                let b = BIREN_ERROR_NOT_PERMITTED as i32 as u8;
                write = Some(Write {
                    dst: o,
                    off,
                    len: 2,
                    src: Src::Bytes(vec![b, b]),
                });
            }
            (KSel::Null, _) => {}
            _ => kernel = KSel::Nop,
        }
        let mut how = spec.how;
        if let How::BadArgs(_) = how {
            if !matches!(kernel, KSel::Null) {
                kernel = KSel::Nop;
            }
            write = None;
        }
        if matches!(how, How::Registered) && !matches!(kernel, KSel::Fill) {
            how = How::Sized;
        }
        let kfn: birenKernel_t = match kernel {
            KSel::Fill => Some(fill_kernel),
            KSel::Copy => Some(copy_kernel),
            KSel::Probe => Some(probe_kernel),
            KSel::Nop => Some(nop_kernel),
            KSel::Null => None,
        };
        let (grid, block, shared) = match spec.cfg {
            CfgSel::Ok {
                gx,
                gy,
                bx,
                by,
                bz,
                shared,
            } => (
                Dim3::new(gx as u32, gy as u32, 1),
                Dim3::new(bx as u32, by as u32, bz as u32),
                if shared { 1024 } else { 0 },
            ),
            CfgSel::Bad(b) => {
                let one = Dim3::new(1, 1, 1);
                match b {
                    0 => (Dim3::new(0, 1, 1), one, 0),
                    1 => (one, Dim3::new(0, 1, 1), 0),
                    2 => (one, Dim3::new(1025, 1, 1), 0),
                    3 => (one, Dim3::new(32, 32, 2), 0),
                    4 => (one, Dim3::new(1, 1, 65), 0),
                    5 => (Dim3::new(1, 65536, 1), one, 0),
                    6 => (Dim3::new(1 << 31, 1, 1), one, 0),
                    7 => (one, one, 48 * 1024 + 1),
                    _ => (Dim3::new(1, 1, 0), one, 0),
                }
            }
        };
        let h = self.stream_handle(spec.stream);
        let k = self.stream_of(h);
        let mut errs = Vec::new();
        if kfn.is_none() {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        if matches!(spec.cfg, CfgSel::Bad(_)) {
            errs.push(BIREN_ERROR_INVALID_CONFIGURATION);
        }
        if k.is_none() {
            errs.push(BIREN_ERROR_INVALID_HANDLE);
        }
        if let How::BadArgs(_) = how {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        let ok = if errs.is_empty() {
            vec![BIREN_SUCCESS]
        } else {
            errs
        };
        let stream = h as birenStream_t;
        let sizes = [8usize; 3];
        let (r, what) = match how {
            How::Sized => {
                let mut v = vals;
                let mut ptrs: Vec<*mut c_void> =
                    v.iter_mut().map(|x| x as *mut u64 as *mut c_void).collect();
                let r = birenLaunchKernelArgs(
                    kfn,
                    grid,
                    block,
                    ptrs.as_mut_ptr(),
                    sizes.as_ptr(),
                    nargs as c_uint,
                    shared,
                    stream,
                );
                // The values are copied at launch: scribbling over them now must not matter.
                v = [0xdead; 3];
                let _ = v;
                (r, "birenLaunchKernelArgs")
            }
            How::Registered => {
                let mut v = vals;
                let mut ptrs: Vec<*mut c_void> =
                    v.iter_mut().map(|x| x as *mut u64 as *mut c_void).collect();
                let r = birenLaunchKernel(kfn, grid, block, ptrs.as_mut_ptr(), shared, stream);
                ptrs.iter_mut().for_each(|p| *p = null_mut());
                (r, "birenLaunchKernel(registered)")
            }
            How::ByRef => {
                let mut b = Box::new(ByRefArgs {
                    vals,
                    ptrs: [null_mut(); 3],
                });
                for i in 0..3 {
                    b.ptrs[i] = &mut b.vals[i] as *mut u64 as *mut c_void;
                }
                let args = if matches!(kernel, KSel::Nop) {
                    null_mut()
                } else {
                    b.ptrs.as_mut_ptr()
                };
                let r = birenLaunchKernel(kfn, grid, block, args, shared, stream);
                self.byref.push(b);
                (r, "birenLaunchKernel(by reference)")
            }
            How::BadArgs(w) => {
                let mut zeros = vec![0u64; 300];
                let mut ptrs: Vec<*mut c_void> = zeros
                    .iter_mut()
                    .map(|x| x as *mut u64 as *mut c_void)
                    .collect();
                let big_sizes = vec![8usize; 300];
                let r = match w {
                    0 => birenLaunchKernelArgs(
                        kfn,
                        grid,
                        block,
                        ptrs.as_mut_ptr(),
                        big_sizes.as_ptr(),
                        300,
                        shared,
                        stream,
                    ),
                    1 => birenLaunchKernelArgs(
                        kfn,
                        grid,
                        block,
                        null_mut(),
                        big_sizes.as_ptr(),
                        3,
                        shared,
                        stream,
                    ),
                    2 => birenLaunchKernelArgs(
                        kfn,
                        grid,
                        block,
                        ptrs.as_mut_ptr(),
                        std::ptr::null(),
                        3,
                        shared,
                        stream,
                    ),
                    _ => {
                        ptrs[1] = null_mut();
                        birenLaunchKernelArgs(
                            kfn,
                            grid,
                            block,
                            ptrs.as_mut_ptr(),
                            big_sizes.as_ptr(),
                            3,
                            shared,
                            stream,
                        )
                    }
                };
                (r, "birenLaunchKernelArgs(bad args)")
            }
        };
        self.check(
            format!("{what}({kernel:?}, grid {:?}, block {:?}, shared {shared}, stream {h:#x}) writing {write:?}", (grid.x, grid.y, grid.z), (block.x, block.y, block.z)),
            r,
            &ok,
        )?;
        if r == BIREN_SUCCESS {
            self.enqueue_apply(k.unwrap(), write, false);
        }
        Ok(())
    }

    fn host_func(&mut self, stream: SRef, dst: Region, val: u8, null_fn: bool) -> Res {
        let hosts = self.host_objs();
        let o = Self::pick(&hosts, dst.obj).unwrap();
        let size = self.objs[o].size;
        let off = dst.off as usize % size;
        let len = 1 + dst.len as usize % (size - off);
        let h = self.stream_handle(stream);
        let k = self.stream_of(h);
        let mut errs = Vec::new();
        if k.is_none() {
            errs.push(BIREN_ERROR_INVALID_HANDLE);
        }
        if null_fn {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        let ok = if errs.is_empty() {
            vec![BIREN_SUCCESS]
        } else {
            errs
        };
        let job = Box::new(HostJob {
            dst: self.objs[o].base + off,
            len,
            val,
            ran: AtomicBool::new(false),
            probe: AtomicI32::new(-1),
        });
        let f: birenHostFn_t = if null_fn { None } else { Some(host_job) };
        let r = birenLaunchHostFunc(
            h as birenStream_t,
            f,
            &*job as *const HostJob as *mut c_void,
        );
        self.jobs.push(job);
        self.check(
            format!("birenLaunchHostFunc({h:#x}, fill #{o}[{off}..+{len}] = {val})"),
            r,
            &ok,
        )?;
        if r == BIREN_SUCCESS {
            let id = self.enqueue_apply(
                k.unwrap(),
                Some(Write {
                    dst: o,
                    off,
                    len,
                    src: Src::Const(val),
                }),
                false,
            );
            self.nodes[id].host_job = Some(self.jobs.len() - 1);
        }
        Ok(())
    }

    fn stream_create(&mut self, how: StreamHow) -> Res {
        let mut s = SENTINEL as birenStream_t;
        let out = if matches!(how, StreamHow::NullOut) {
            null_mut()
        } else {
            &mut s as *mut birenStream_t
        };
        let (r, flags, prio, what) = match how {
            StreamHow::Plain => (
                birenStreamCreate(out),
                0,
                0,
                "birenStreamCreate(&s)".to_string(),
            ),
            StreamHow::NullOut => (
                birenStreamCreateWithFlags(out, 1),
                1,
                0,
                "birenStreamCreateWithFlags(NULL, 1)".to_string(),
            ),
            StreamHow::Flags(f) => (
                birenStreamCreateWithFlags(out, f),
                f,
                0,
                format!("birenStreamCreateWithFlags(&s, {f:#x})"),
            ),
            StreamHow::Prio(f, p) => (
                birenStreamCreateWithPriority(out, f, p),
                f,
                p,
                format!("birenStreamCreateWithPriority(&s, {f:#x}, {p})"),
            ),
        };
        let mut errs = Vec::new();
        if out.is_null() {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        if flags & !birenStreamNonBlocking != 0 {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        let ok = if errs.is_empty() {
            vec![BIREN_SUCCESS]
        } else {
            errs
        };
        self.check(what, r, &ok)?;
        let h = s as usize;
        if r != BIREN_SUCCESS {
            return self.ensure(h == SENTINEL, || {
                "stream create wrote *pStream on failure".into()
            });
        }
        self.ensure(
            h != 0 && h != SENTINEL && self.stream_of(h).is_none(),
            || format!("stream create gave handle {h:#x}"),
        )?;
        self.streams.push(MStream {
            handle: h,
            flags,
            prio: prio.clamp(-5, 0),
            live: true,
            tail: None,
        });
        Ok(())
    }

    fn event_create(&mut self, flags: Option<u32>, null_out: bool) -> Res {
        let mut e = SENTINEL as birenEvent_t;
        let out = if null_out {
            null_mut()
        } else {
            &mut e as *mut birenEvent_t
        };
        let r = match flags {
            None => birenEventCreate(out),
            Some(f) => birenEventCreateWithFlags(out, f),
        };
        let f = flags.unwrap_or(0);
        let mut errs = Vec::new();
        if null_out {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        if f & !(birenEventBlockingSync | birenEventDisableTiming) != 0 {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        let ok = if errs.is_empty() {
            vec![BIREN_SUCCESS]
        } else {
            errs
        };
        self.check(
            format!(
                "birenEventCreate{}",
                flags.map_or(String::new(), |f| format!("WithFlags({f:#x})"))
            ),
            r,
            &ok,
        )?;
        let h = e as usize;
        if r != BIREN_SUCCESS {
            return self.ensure(h == SENTINEL, || {
                "event create wrote *event on failure".into()
            });
        }
        self.ensure(
            h != 0 && h != SENTINEL && self.event_of(h).is_none(),
            || format!("event create gave handle {h:#x}"),
        )?;
        self.events.push(MEvent {
            handle: h,
            flags: f,
            live: true,
            latest: None,
            future: None,
        });
        Ok(())
    }

    fn record(&mut self, e: ERef, s: SRef) -> Res {
        let (he, hs) = (self.event_handle(e), self.stream_handle(s));
        let r = birenEventRecord(he as birenEvent_t, hs as birenStream_t);
        let what = format!("birenEventRecord({he:#x}, {hs:#x})");
        let (Some(ev), Some(k)) = (self.event_of(he), self.stream_of(hs)) else {
            return self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]);
        };
        match self.events[ev].future {
            Some(f) => {
                if self.reaches(&self.new_deps(k), &self.futs[f].waits) {
                    return self.check(what, r, &[BIREN_ERROR_DEADLOCK]);
                }
                self.check(what, r, &[BIREN_SUCCESS])?;
                let id = self.push_node(k, None, &[], None);
                self.futs[f].resolved = Some(id);
                self.events[ev].future = None;
                self.events[ev].latest = Some(Rec::Node(id));
            }
            None => {
                self.check(what, r, &[BIREN_SUCCESS])?;
                let id = self.push_node(k, None, &[], None);
                self.events[ev].latest = Some(Rec::Node(id));
            }
        }
        Ok(())
    }

    fn wait_event(&mut self, s: SRef, e: ERef) -> Res {
        let (hs, he) = (self.stream_handle(s), self.event_handle(e));
        let r = birenStreamWaitEvent(hs as birenStream_t, he as birenEvent_t);
        let what = format!("birenStreamWaitEvent({hs:#x}, {he:#x})");
        let (Some(k), Some(ev)) = (self.stream_of(hs), self.event_of(he)) else {
            return self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]);
        };
        self.check(what, r, &[BIREN_SUCCESS])?;
        match self.events[ev].latest {
            Some(Rec::Node(t)) => {
                self.push_node(k, None, &[t], None);
            }
            Some(Rec::Done) => {
                self.push_node(k, None, &[], None);
            }
            None => {
                let f = match self.events[ev].future {
                    Some(f) => f,
                    None => {
                        self.futs.push(Fut {
                            resolved: None,
                            waits: Vec::new(),
                        });
                        self.events[ev].future = Some(self.futs.len() - 1);
                        self.futs.len() - 1
                    }
                };
                let id = self.push_node(k, None, &[], Some(f));
                self.futs[f].waits.push(id);
            }
        }
        Ok(())
    }

    fn elapsed(&mut self, a: ERef, b: ERef, null_out: bool) -> Res {
        let (ha, hb) = (self.event_handle(a), self.event_handle(b));
        let mut ms: f32 = -12345.0;
        let out = if null_out {
            null_mut()
        } else {
            &mut ms as *mut f32
        };
        let r = birenEventElapsedTime(out, ha as birenEvent_t, hb as birenEvent_t);
        let what = format!("birenEventElapsedTime({ha:#x}, {hb:#x})");
        let (ea, eb) = (self.event_of(ha), self.event_of(hb));
        let mut errs = Vec::new();
        if ea.is_none() || eb.is_none() {
            errs.push(BIREN_ERROR_INVALID_HANDLE);
        }
        if null_out {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        let mut points = Vec::new();
        for ev in [ea, eb].into_iter().flatten() {
            let e = &self.events[ev];
            if e.flags & birenEventDisableTiming != 0 {
                errs.push(BIREN_ERROR_INVALID_HANDLE);
            }
            match e.latest {
                None => errs.push(BIREN_ERROR_INVALID_HANDLE),
                Some(Rec::Node(t)) if !self.nodes[t].complete => points.push(t),
                Some(_) => {}
            }
        }
        if !errs.is_empty() {
            self.check(what, r, &errs)?;
            return self.ensure(ms == -12345.0, || {
                "birenEventElapsedTime wrote *ms on failure".into()
            });
        }
        if points.is_empty() {
            self.check(what, r, &[BIREN_SUCCESS])?;
        } else if self.blocked(&points) {
            self.check(what, r, &[BIREN_ERROR_NOT_READY])?;
        } else {
            self.check(what, r, &[BIREN_SUCCESS, BIREN_ERROR_NOT_READY])?;
            if r == BIREN_SUCCESS {
                self.mark_complete(&points);
            }
        }
        if r == BIREN_SUCCESS {
            self.ensure(ms.is_finite() && (ha != hb || ms == 0.0), || {
                format!("elapsed time {ms}")
            })
        } else {
            self.ensure(ms == -12345.0, || {
                "birenEventElapsedTime wrote *ms on NOT_READY".into()
            })
        }
    }

    fn device_sync(&mut self) -> Res {
        let r = birenDeviceSynchronize();
        let stalled = (0..self.nodes.len()).any(|v| self.blocked(&[v]));
        if stalled {
            return self.check(
                "birenDeviceSynchronize()".into(),
                r,
                &[BIREN_ERROR_DEADLOCK],
            );
        }
        self.check("birenDeviceSynchronize()".into(), r, &[BIREN_SUCCESS])?;
        self.quiescent_check("after birenDeviceSynchronize")
    }

    fn policy(&mut self, set: Option<i32>, null_out: bool) -> Res {
        match set {
            Some(p) => {
                let r = birenDeviceSetSchedulingPolicy(p);
                let ok = if p == 0 || p == 1 {
                    BIREN_SUCCESS
                } else {
                    BIREN_ERROR_INVALID_VALUE
                };
                self.check(format!("birenDeviceSetSchedulingPolicy({p})"), r, &[ok])?;
                if r == BIREN_SUCCESS {
                    self.policy = Some(p);
                }
                Ok(())
            }
            None => {
                let mut v: c_int = 77;
                let out = if null_out {
                    null_mut()
                } else {
                    &mut v as *mut c_int as *mut birenSchedulingPolicy
                };
                let r = birenDeviceGetSchedulingPolicy(out);
                let ok = if null_out {
                    BIREN_ERROR_INVALID_VALUE
                } else {
                    BIREN_SUCCESS
                };
                self.check("birenDeviceGetSchedulingPolicy".into(), r, &[ok])?;
                if null_out {
                    return Ok(());
                }
                let expected = self.policy;
                self.ensure(
                    (v == 0 || v == 1) && expected.is_none_or(|p| p == v),
                    || format!("scheduling policy {v}, expected {expected:?}"),
                )?;
                self.policy = Some(v);
                Ok(())
            }
        }
    }

    fn device(&mut self, which: u8, arg: i32, null_out: bool) -> Res {
        match which {
            0 => {
                let mut n: c_int = 77;
                let r = birenGetDeviceCount(if null_out { null_mut() } else { &mut n });
                self.check(
                    "birenGetDeviceCount".into(),
                    r,
                    &[if null_out {
                        BIREN_ERROR_INVALID_VALUE
                    } else {
                        BIREN_SUCCESS
                    }],
                )?;
                self.ensure(null_out || n == 1, || format!("device count {n}"))
            }
            1 => {
                let r = birenSetDevice(arg);
                self.check(
                    format!("birenSetDevice({arg})"),
                    r,
                    &[if arg == 0 {
                        BIREN_SUCCESS
                    } else {
                        BIREN_ERROR_INVALID_DEVICE
                    }],
                )
            }
            2 => {
                let mut d: c_int = 77;
                let r = birenGetDevice(if null_out { null_mut() } else { &mut d });
                self.check(
                    "birenGetDevice".into(),
                    r,
                    &[if null_out {
                        BIREN_ERROR_INVALID_VALUE
                    } else {
                        BIREN_SUCCESS
                    }],
                )?;
                self.ensure(null_out || d == 0, || format!("current device {d}"))
            }
            3 => {
                let mut prop: birenDeviceProp = unsafe { std::mem::zeroed() };
                let r =
                    birenGetDeviceProperties(if null_out { null_mut() } else { &mut prop }, arg);
                let mut errs = Vec::new();
                if null_out {
                    errs.push(BIREN_ERROR_INVALID_VALUE);
                }
                if arg != 0 {
                    errs.push(BIREN_ERROR_INVALID_DEVICE);
                }
                let ok = if errs.is_empty() {
                    vec![BIREN_SUCCESS]
                } else {
                    errs
                };
                self.check(format!("birenGetDeviceProperties({arg})"), r, &ok)?;
                if r == BIREN_SUCCESS {
                    let name = unsafe { CStr::from_ptr(prop.name.as_ptr()) };
                    self.ensure(
                        prop.totalGlobalMem == CAP
                            && prop.maxThreadsPerBlock == 1024
                            && prop.maxThreadsDim == [1024, 1024, 64]
                            && prop.maxGridSize == [i32::MAX, 65535, 65535]
                            && prop.multiProcessorCount == 3
                            && prop.sharedMemPerBlock == 48 * 1024
                            && !name.to_bytes().is_empty(),
                        || "birenGetDeviceProperties: unexpected properties".into(),
                    )?;
                }
                Ok(())
            }
            _ => {
                let (mut lo, mut hi): (c_int, c_int) = (77, 77);
                let r = birenDeviceGetStreamPriorityRange(
                    &mut lo,
                    if null_out { null_mut() } else { &mut hi },
                );
                self.check(
                    "birenDeviceGetStreamPriorityRange".into(),
                    r,
                    &[BIREN_SUCCESS],
                )?;
                self.ensure(lo == 0 && hi == if null_out { 77 } else { -5 }, || {
                    format!("priority range {lo} {hi}")
                })
            }
        }
    }

    fn pointer_attr(&mut self, p: usize, null_out: bool) -> Res {
        let mut a = birenPointerAttributes {
            type_: birenMemoryType::birenMemoryTypeHost,
            device: 77,
            devicePointer: SENTINEL as *mut c_void,
            hostPointer: SENTINEL as *mut c_void,
            basePointer: SENTINEL as *mut c_void,
            size: 77,
        };
        let out = if null_out {
            null_mut()
        } else {
            &mut a as *mut birenPointerAttributes
        };
        let r = birenPointerGetAttributes(out, p as *const c_void);
        let what = format!("birenPointerGetAttributes({p:#x})");
        if null_out {
            return self.check(what, r, &[BIREN_ERROR_INVALID_VALUE]);
        }
        self.check(what, r, &[BIREN_SUCCESS])?;
        let t = a.type_ as i32;
        let got = (
            t,
            a.device,
            a.devicePointer as usize,
            a.hostPointer as usize,
            a.basePointer as usize,
            a.size,
        );
        let pinned = self
            .find_host(p)
            .filter(|&o| self.objs[o].kind == ObjKind::Pinned);
        let expected = if let Some(o) = self.find_dev(p) {
            (2, 0, p, 0, self.objs[o].base, self.objs[o].size)
        } else if let Some(o) = pinned {
            (1, -1, 0, p, self.objs[o].base, self.objs[o].size)
        } else {
            (0, -1, 0, 0, 0, 0)
        };
        self.ensure(got == expected, || format!("attributes of {p:#x}: (type, device, devicePointer, hostPointer, base, size) = {got:x?}, expected {expected:x?}"))
    }

    fn register(&mut self, which: u8) -> Res {
        let sizes = vec![8usize; 300];
        let bad = [8usize, 0];
        let big = [8usize, 5000];
        let (r, ok, what) = match which {
            0 => (
                birenKernelRegister(None, null(), 1, sizes.as_ptr()),
                BIREN_ERROR_INVALID_VALUE,
                "NULL kernel",
            ),
            1 => (
                birenKernelRegister(Some(dummy_kernel), null(), 2, bad.as_ptr()),
                BIREN_ERROR_INVALID_VALUE,
                "size 0",
            ),
            2 => (
                birenKernelRegister(Some(dummy_kernel), null(), 2, big.as_ptr()),
                BIREN_ERROR_INVALID_VALUE,
                "size 5000",
            ),
            3 => (
                birenKernelRegister(Some(dummy_kernel), null(), 300, sizes.as_ptr()),
                BIREN_ERROR_INVALID_VALUE,
                "300 args",
            ),
            4 => (
                birenKernelRegister(Some(dummy_kernel), null(), 1, std::ptr::null()),
                BIREN_ERROR_INVALID_VALUE,
                "NULL sizes",
            ),
            5 => (
                birenKernelRegister(Some(fill_kernel), null(), 3, sizes.as_ptr()),
                BIREN_SUCCESS,
                "fill again",
            ),
            _ => (
                birenKernelRegister(Some(dummy_kernel), c"dummy".as_ptr(), 1, sizes.as_ptr()),
                BIREN_SUCCESS,
                "dummy",
            ),
        };
        self.check(format!("birenKernelRegister({what})"), r, &[ok])
    }

    fn misc(&mut self, which: u8) -> Res {
        match which {
            0 => {
                let mut v: c_int = 77;
                let r = birenRuntimeGetVersion(&mut v);
                self.check("birenRuntimeGetVersion".into(), r, &[BIREN_SUCCESS])?;
                self.ensure(v == 1000, || format!("version {v}"))
            }
            1 => {
                let r = birenRuntimeGetVersion(null_mut());
                self.check(
                    "birenRuntimeGetVersion(NULL)".into(),
                    r,
                    &[BIREN_ERROR_INVALID_VALUE],
                )
            }
            _ => {
                self.calls += 1;
                let names = [
                    (0, "BIREN_SUCCESS"),
                    (7, "BIREN_ERROR_OUT_OF_BOUNDS"),
                    (11, "BIREN_ERROR_DEADLOCK"),
                    (999, "BIREN_ERROR_UNKNOWN"),
                    (12345, "BIREN_ERROR_UNRECOGNIZED"),
                    (-1, "BIREN_ERROR_UNRECOGNIZED"),
                ];
                for (c, n) in names {
                    let p = birenGetErrorName(c);
                    let s = birenGetErrorString(c);
                    self.ensure(!p.is_null() && !s.is_null(), || {
                        format!("error name/string of {c} is NULL")
                    })?;
                    let got = unsafe { CStr::from_ptr(p) }
                        .to_str()
                        .unwrap_or("?")
                        .to_string();
                    self.ensure(got == n, || {
                        format!("birenGetErrorName({c}) = {got}, expected {n}")
                    })?;
                }
                Ok(())
            }
        }
    }

    // ---- a case ----

    fn begin(&mut self) -> Res {
        let r = birenDeviceReset();
        self.check(
            "birenDeviceReset() [case start]".into(),
            r,
            &[BIREN_SUCCESS],
        )?;
        birenGetLastError();
        self.last_error = BIREN_SUCCESS;
        Ok(())
    }

    /// Releases every stall whose event still exists (a record on a new non-blocking stream
    /// depends on nothing, so it can never close a cycle), synchronizes, checks everything.
    fn finish(&mut self) -> Res {
        let pending: Vec<usize> = (0..self.events.len())
            .filter(|&e| !self.sticky && self.events[e].live && self.events[e].future.is_some())
            .collect();
        if !pending.is_empty() {
            self.stream_create(StreamHow::Flags(birenStreamNonBlocking))?;
            let k = self.streams.len() - 1;
            let hs = self.streams[k].handle;
            for e in pending {
                let he = self.events[e].handle;
                let r = birenEventRecord(he as birenEvent_t, hs as birenStream_t);
                self.check(
                    format!("birenEventRecord({he:#x}, {hs:#x}) [release]"),
                    r,
                    &[BIREN_SUCCESS],
                )?;
                let f = self.events[e].future.take().unwrap();
                let id = self.push_node(k, None, &[], None);
                self.futs[f].resolved = Some(id);
                self.events[e].latest = Some(Rec::Node(id));
            }
        }
        if !self.sticky {
            self.device_sync()?;
        }
        let r = birenDeviceReset();
        self.check("birenDeviceReset() [case end]".into(), r, &[BIREN_SUCCESS])?;
        self.reset_model()?;
        for o in 0..self.objs.len() {
            if self.objs[o].kind == ObjKind::Pinned && self.objs[o].live {
                let r = birenFreeHost(self.objs[o].base as *mut c_void);
                self.check("birenFreeHost [case end]".into(), r, &[BIREN_SUCCESS])?;
                self.objs[o].live = false;
                self.objs[o].data = None;
            }
        }
        Ok(())
    }
}

/// Marks a call refused because of the sticky error (the step then changes nothing).
const STICKY: &str = "\u{0}sticky";

/// The codes accepted while the device has a sticky error. SPEC §4: "every later call on that
/// device returns the error until birenDeviceReset". Calls that work on the device (enqueue,
/// synchronize, create or destroy its streams and events, allocate, copy, query its state) must
/// not succeed; they may report another fault of their own arguments first. For calls whose tie
/// to the device is looser (pointer attributes, stream priority/flags, device properties,
/// birenFree(NULL), pinned host memory, kernel registration, ...) the normal answer is accepted
/// too: the contract does not say.
fn sticky_codes(name: &str, normal: &[Code]) -> Vec<Code> {
    const STRICT: &[&str] = &[
        "birenMalloc",
        "birenMemcpy",
        "birenMemcpyAsync",
        "birenMemset",
        "birenMemsetAsync",
        "birenMemGetInfo",
        "birenStreamCreate",
        "birenStreamCreateWithFlags",
        "birenStreamCreateWithPriority",
        "birenStreamDestroy",
        "birenStreamSynchronize",
        "birenStreamQuery",
        "birenStreamWaitEvent",
        "birenLaunchHostFunc",
        "birenEventCreate",
        "birenEventCreateWithFlags",
        "birenEventRecord",
        "birenEventQuery",
        "birenEventSynchronize",
        "birenEventElapsedTime",
        "birenEventDestroy",
        "birenLaunchKernel",
        "birenLaunchKernelArgs",
        "birenDeviceSynchronize",
        "birenDeviceSetSchedulingPolicy",
        "birenDeviceGetSchedulingPolicy",
    ];
    let mut ok: Vec<Code> = if STRICT.contains(&name) {
        normal
            .iter()
            .copied()
            .filter(|&c| {
                c != BIREN_SUCCESS && c != BIREN_ERROR_NOT_READY && c != BIREN_ERROR_DEADLOCK
            })
            .collect()
    } else {
        normal.to_vec()
    };
    ok.push(BIREN_ERROR_LAUNCH_FAILURE);
    ok
}

fn null() -> *const c_char {
    std::ptr::null()
}

/// Runs one generated program against the library and the model.
fn run_case(program: &[Vec<Action>]) -> Result<u64, String> {
    let _g = runtime();
    let mut w = World::new();
    w.begin()?;
    for a in program.iter().flatten() {
        w.step(a)?;
    }
    w.finish()?;
    TOTAL_CALLS.fetch_add(w.calls, SeqCst);
    Ok(w.calls)
}

fn run(actions: &[Action]) {
    if let Err(e) = run_case(&[actions.to_vec()]) {
        panic!("{e}");
    }
}

#[test]
fn random_call_sequences_match_the_model() {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let cases = env("BIREN_MODEL_CASES").unwrap_or(200) as u32;
    let seed = env("BIREN_MODEL_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
    });
    let config = Config {
        cases,
        max_shrink_iters: 20_000,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/model.txt",
        ))),
        source_file: Some(file!()),
        ..Config::default()
    };
    let t0 = std::time::Instant::now();
    let mut runner = TestRunner::new(config);
    let result = runner.run(&program(), |p| {
        run_case(&p).map(|_| ()).map_err(TestCaseError::fail)
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, program)) => {
            let lines: Vec<String> = program
                .iter()
                .flatten()
                .map(|a| format!("    {a:?},"))
                .collect();
            panic!(
                "{why}\nminimal failing program ({} actions; it is saved in proptest-regressions/model.txt \
                 and replayed first by the next run):\n{}\n(BIREN_MODEL_SEED={seed} replays this run)",
                lines.len(),
                lines.join("\n")
            );
        }
        Err(e) => panic!("{e}\n(BIREN_MODEL_SEED={seed} replays this run)"),
    }
    let calls = TOTAL_CALLS.load(SeqCst);
    eprintln!(
        "model: {cases} cases, {calls} API calls checked in {:.2?} (BIREN_MODEL_SEED={seed})",
        t0.elapsed()
    );
    if std::env::var("BIREN_MODEL_STATS").is_ok_and(|v| v == "1") {
        for (k, v) in STATS.lock().unwrap().iter() {
            eprintln!("{v:>10}  {k}");
        }
    }
    if cases >= 200 {
        assert!(calls >= 10_000, "only {calls} calls were made");
    }
}

// ---------------------------------------------------------------------------------------------
// Fixed sequences: the canonical facts, and regressions found by the random test.
// ---------------------------------------------------------------------------------------------

use Action::*;

#[test]
fn cross_wait_cycle_is_refused() {
    let ev = EventCreate {
        flags: None,
        null_out: false,
    };
    let nb = StreamCreate(StreamHow::Flags(1));
    run(&[
        nb,
        nb,
        ev,
        ev,
        WaitEvent {
            s: SRef::Recent(1),
            e: ERef::Recent(1),
        },
        WaitEvent {
            s: SRef::Recent(0),
            e: ERef::Recent(0),
        },
        EventRecord {
            e: ERef::Recent(0),
            s: SRef::Recent(1),
        },
        EventRecord {
            e: ERef::Recent(1),
            s: SRef::Recent(0),
        },
        DeviceSync,
    ]);
}

#[test]
fn record_on_the_null_stream_of_an_event_a_blocking_stream_waits_for_is_a_cycle() {
    run(&[
        StreamCreate(StreamHow::Plain),
        EventCreate {
            flags: None,
            null_out: false,
        },
        WaitEvent {
            s: SRef::Recent(0),
            e: ERef::Recent(0),
        },
        EventRecord {
            e: ERef::Recent(0),
            s: SRef::Null,
        },
        StreamSync(SRef::Recent(0)),
        DeviceSync,
    ]);
}

#[test]
fn copies_out_of_range_fail_and_write_nothing() {
    run(&[
        Malloc {
            size: SizeSel::Small(99),
            null_out: false,
        },
        Memset {
            ptr: PtrRef::Dev(0, Off::Start),
            value: 3,
            count: CountSel::Fit,
            stream: None,
        },
        Memcpy {
            dst: PtrRef::Dev(0, Off::Mid(10)),
            src: PtrRef::Host(0, Off::Start),
            count: CountSel::Over(0),
            kind: 1,
            stream: None,
        },
        Memcpy {
            dst: PtrRef::Dev(0, Off::End),
            src: PtrRef::Host(0, Off::Start),
            count: CountSel::Small(0),
            kind: 1,
            stream: None,
        },
        Memcpy {
            dst: PtrRef::Host(0, Off::Start),
            src: PtrRef::Dev(0, Off::Start),
            count: CountSel::Huge(0),
            kind: 2,
            stream: None,
        },
        Memcpy {
            dst: PtrRef::Dev(0, Off::Start),
            src: PtrRef::Dev(0, Off::Start),
            count: CountSel::Fit,
            kind: 5,
            stream: None,
        },
        Memcpy {
            dst: PtrRef::Dev(0, Off::Start),
            src: PtrRef::Dev(0, Off::Start),
            count: CountSel::Fit,
            kind: -1,
            stream: None,
        },
        Free {
            ptr: PtrRef::Dev(0, Off::Mid(1)),
        },
        DeviceSync,
        Free {
            ptr: PtrRef::Dev(0, Off::Start),
        },
        Free {
            ptr: PtrRef::Stale(0, Off::Start),
        },
    ]);
}

/// Bug "malloc-deadlock": a birenMalloc that can never fit (SIZE_MAX) waits for memory freed
/// while work blocked on a never-recorded event may still use it, and returns
/// BIREN_ERROR_DEADLOCK — not a code the header lists for birenMalloc — instead of
/// BIREN_ERROR_OUT_OF_MEMORY.
/// (Fixed in 855b6f2.)
#[test]
fn regression_malloc_that_can_never_fit_is_out_of_memory_not_deadlock() {
    run(&[
        Malloc {
            size: SizeSel::Small(99),
            null_out: false,
        },
        StreamCreate(StreamHow::Flags(1)),
        EventCreate {
            flags: None,
            null_out: false,
        },
        WaitEvent {
            s: SRef::Recent(0),
            e: ERef::Recent(0),
        },
        Free {
            ptr: PtrRef::Dev(0, Off::Start),
        },
        Malloc {
            size: SizeSel::Huge(0),
            null_out: false,
        },
    ]);
}

/// Bug "sync-deadlock-enqueues": a synchronous birenMemset that returns DEADLOCK (it would wait
/// for a stream stalled on a never-recorded event) has nevertheless left its fill enqueued on the
/// default stream. The header: "A failed call writes nothing and enqueues nothing". Once the event
/// is recorded, the fill runs and overwrites memory the caller was told was not written
/// (expected 7 at the final check, got 1).
/// (Fixed in 855b6f2.)
#[test]
fn regression_failed_sync_memset_writes_nothing_later() {
    run(&[
        Malloc {
            size: SizeSel::Small(15),
            null_out: false,
        },
        Memset {
            ptr: PtrRef::Dev(0, Off::Start),
            value: 7,
            count: CountSel::Fit,
            stream: None,
        },
        StreamCreate(StreamHow::Plain),
        EventCreate {
            flags: None,
            null_out: false,
        },
        WaitEvent {
            s: SRef::Recent(0),
            e: ERef::Recent(0),
        },
        Memset {
            ptr: PtrRef::Dev(0, Off::Start),
            value: 1,
            count: CountSel::Fit,
            stream: None,
        },
        StreamCreate(StreamHow::Flags(1)),
        EventRecord {
            e: ERef::Recent(0),
            s: SRef::Recent(0),
        },
        DeviceSync,
    ]);
}

/// Same bug, seen from the stream rules: the fill left on the default stream by the failed
/// birenMemset waits for the stalled stream, so recording the awaited event in another blocking
/// stream (which waits for the default stream) is refused with DEADLOCK instead of succeeding.
#[test]
fn regression_failed_sync_memset_does_not_turn_a_later_record_into_a_cycle() {
    run(&[
        Malloc {
            size: SizeSel::Small(0),
            null_out: false,
        },
        StreamCreate(StreamHow::Plain),
        EventCreate {
            flags: None,
            null_out: false,
        },
        WaitEvent {
            s: SRef::Recent(0),
            e: ERef::Recent(0),
        },
        Memset {
            ptr: PtrRef::Dev(0, Off::Start),
            value: 1,
            count: CountSel::Fit,
            stream: None,
        },
        StreamCreate(StreamHow::Plain),
        EventRecord {
            e: ERef::Recent(0),
            s: SRef::Recent(0),
        },
        StreamSync(SRef::Recent(1)),
        DeviceSync,
    ]);
}

/// Same bug with birenMemcpy host-to-device: after it returned DEADLOCK, the copy still runs
/// when the event is recorded — reading the caller's host buffer, which a C caller may already
/// have freed (a use after free in the library), and writing device memory (expected 7, got the
/// host bytes).
#[test]
fn regression_failed_sync_memcpy_reads_and_writes_nothing_later() {
    run(&[
        Malloc {
            size: SizeSel::Small(63),
            null_out: false,
        },
        Memset {
            ptr: PtrRef::Dev(0, Off::Start),
            value: 7,
            count: CountSel::Fit,
            stream: None,
        },
        StreamCreate(StreamHow::Plain),
        EventCreate {
            flags: None,
            null_out: false,
        },
        WaitEvent {
            s: SRef::Recent(0),
            e: ERef::Recent(0),
        },
        Memcpy {
            dst: PtrRef::Dev(0, Off::Start),
            src: PtrRef::Host(0, Off::Start),
            count: CountSel::Fit,
            kind: 1,
            stream: None,
        },
        StreamCreate(StreamHow::Flags(1)),
        EventRecord {
            e: ERef::Recent(0),
            s: SRef::Recent(0),
        },
        DeviceSync,
    ]);
}

/// Bug "reset-runs-queued-work": birenDeviceReset must drop every command not yet started, but
/// it marks the killed streams' points as reached and wakes the streams waiting for them, so a
/// command queued behind a stalled stream starts during the reset: here the asynchronous
/// device-to-host copy on the NULL stream (which waits for the stalled blocking stream) writes
/// the host buffer although it never started before the reset (the buffer must keep its bytes).
/// (Fixed in 855b6f2.)
#[test]
fn regression_reset_drops_queued_commands_instead_of_running_them() {
    for _ in 0..20 {
        run(&[
            Malloc {
                size: SizeSel::Small(255),
                null_out: false,
            },
            Memset {
                ptr: PtrRef::Dev(0, Off::Start),
                value: 7,
                count: CountSel::Fit,
                stream: None,
            },
            StreamCreate(StreamHow::Plain),
            EventCreate {
                flags: None,
                null_out: false,
            },
            WaitEvent {
                s: SRef::Recent(0),
                e: ERef::Recent(0),
            },
            Memcpy {
                dst: PtrRef::Host(0, Off::Start),
                src: PtrRef::Dev(0, Off::Start),
                count: CountSel::Fit,
                kind: 2,
                stream: Some(SRef::Null),
            },
            DeviceReset,
        ]);
    }
}

/// Bug "malloc-release-race": memory freed while a kernel used it must be free once a
/// synchronize has seen the kernel complete ("counts as used until that work completes"), but
/// birenMalloc right after the synchronize sometimes fails with OUT_OF_MEMORY: the stream's
/// completion is published (the synchronize returns) before the worker thread's reclaim()
/// releases the memory, and reclaim() takes the deferred entry out of the list before releasing
/// it, so birenMalloc finds no deferred free to wait for and gives up. Timing-dependent: it
/// usually shows within a few hundred rounds.
/// (Fixed in 855b6f2.)
#[test]
fn regression_memory_freed_behind_finished_work_is_free_after_the_sync() {
    for _ in 0..2000 {
        run(&[
            Malloc {
                size: SizeSel::Big(3),
                null_out: false,
            },
            Malloc {
                size: SizeSel::Small(2559),
                null_out: false,
            },
            StreamCreate(StreamHow::Flags(1)),
            Launch(LaunchSpec {
                kernel: KSel::Fill,
                dst: Region {
                    obj: 0,
                    off: 0,
                    len: 2559,
                },
                src: Region {
                    obj: 0,
                    off: 0,
                    len: 0,
                },
                val: 9,
                cfg: CfgSel::Ok {
                    gx: 2,
                    gy: 1,
                    bx: 64,
                    by: 1,
                    bz: 1,
                    shared: false,
                },
                stream: SRef::Recent(0),
                how: How::Sized,
            }),
            Free {
                ptr: PtrRef::Dev(1, Off::Start),
            },
            StreamSync(SRef::Recent(0)),
            Malloc {
                size: SizeSel::Small(2047),
                null_out: false,
            },
            MemGetInfo { null_out: 0 },
        ]);
    }
}

/// Bug "malloc-rounding-overflow" (introduced with the fix above): birenMalloc(SIZE_MAX) rounds
/// the size up to 256 with `div_ceil(256) * 256` in u64, which overflows: a debug build panics
/// inside the call (BIREN_ERROR_UNKNOWN and "internal error" on stderr); a release build wraps
/// to 0 and goes on as if the request could fit once deferred frees are released (it then waits
/// for them before answering OUT_OF_MEMORY). Seen with `cargo test` (debug).
#[test]
fn regression_malloc_of_size_max_is_out_of_memory() {
    run(&[
        Malloc {
            size: SizeSel::Huge(0),
            null_out: false,
        },
        Malloc {
            size: SizeSel::Huge(2),
            null_out: false,
        },
        Malloc {
            size: SizeSel::Small(7),
            null_out: false,
        },
    ]);
}

/// Bug "sync-misses-trap": a synchronize that waited for a trapped kernel sometimes returns
/// BIREN_SUCCESS instead of BIREN_ERROR_LAUNCH_FAILURE (1 in 10 000 to 1 in 50 000 rounds here):
/// the stream publishes the op's completion (StreamCore::complete, mark_completed) before it sets
/// the device's sticky error, and the synchronizing thread, spinning on completion, reads the
/// sticky error in between. Random testing found it (a Trap action). A race: this loop runs for
/// 6 seconds (or 300 000 rounds) and stops at the first miss, so it fails most of the time while
/// the bug is there.
#[test]
fn regression_synchronize_reports_the_trap_of_the_kernel_it_waited_for() {
    let _g = runtime();
    let one = Dim3::new(1, 1, 1);
    let t0 = std::time::Instant::now();
    let mut i = 0;
    while i < 300_000 && t0.elapsed() < std::time::Duration::from_secs(6) {
        assert_eq!(birenDeviceReset(), BIREN_SUCCESS);
        let r = birenLaunchKernelArgs(
            Some(trap_kernel),
            one,
            one,
            null_mut(),
            std::ptr::null(),
            0,
            0,
            null_mut(),
        );
        assert_eq!(r, BIREN_SUCCESS);
        let r = birenDeviceSynchronize();
        if r != BIREN_ERROR_LAUNCH_FAILURE {
            birenDeviceReset();
            panic!("round {i}: birenDeviceSynchronize after a trapped kernel returned {r:?}, expected BIREN_ERROR_LAUNCH_FAILURE");
        }
        i += 1;
    }
    assert_eq!(birenDeviceReset(), BIREN_SUCCESS);
}

#[test]
fn regression_validator_does_not_blame_kernels_for_guards_being_filled() {
    let _g = runtime();
    assert_eq!(birenSetDeviceValidator(1), BIREN_SUCCESS);
    let mut failure = None;
    for round in 0..20 {
        assert_eq!(birenDeviceReset(), BIREN_SUCCESS);
        let (grid, block) = (Dim3::new(64, 1, 1), Dim3::new(64, 1, 1));
        for _ in 0..20 {
            let r = birenLaunchKernelArgs(
                Some(nop_kernel),
                grid,
                block,
                null_mut(),
                std::ptr::null(),
                0,
                0,
                null_mut(),
            );
            assert_eq!(r, BIREN_SUCCESS);
        }
        let mut p: *mut c_void = null_mut();
        assert_eq!(birenMalloc(&mut p, CAP / 2), BIREN_SUCCESS);
        let r = birenDeviceSynchronize();
        if r != BIREN_SUCCESS {
            failure = Some(format!("round {round}: birenDeviceSynchronize returned {r:?} after nop kernels ran while a {} MiB allocation was made", (CAP / 2) >> 20));
            break;
        }
        assert_eq!(birenFree(p), BIREN_SUCCESS);
    }
    birenSetDeviceValidator(0);
    assert_eq!(birenDeviceReset(), BIREN_SUCCESS);
    if let Some(f) = failure {
        panic!("{f}");
    }
}

/// Issue 16, bug 1: freeing a block of >= 1 MiB whose size is not a whole number of pages must
/// leave the allocation that starts in its last page intact (the range handed back to the
/// kernel was rounded up to whole pages and zeroed the neighbour's first bytes).
#[test]
fn regression_freeing_a_large_block_keeps_its_neighbour() {
    use Action::*;
    run(&[
        DeviceReset,
        Malloc {
            size: SizeSel::Large(1), // 1 MiB + 37 bytes, at the start of the arena (page-aligned)
            null_out: false,
        },
        Malloc {
            size: SizeSel::Small(99),
            null_out: false,
        },
        Memset {
            ptr: PtrRef::Dev(1, Off::Start),
            value: 0x5a,
            count: CountSel::Fit,
            stream: None,
        },
        Free {
            ptr: PtrRef::Dev(0, Off::Start),
        },
        DeviceSync,
    ]);
}
