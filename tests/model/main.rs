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

pub(crate) type Code = birenError_t;

/// Device memory of the simulated device (BIREN_DEVICE_MEMORY=64M).
pub(crate) const CAP: usize = 64 << 20;
/// Device allocations up to this size have their contents tracked (every byte, including the
/// >= 1 MiB `SizeSel::Large` ones); larger ones are opaque.
pub(crate) const TRACK_LIMIT: usize = 4 << 20;
/// 1 MiB: freed device ranges at least this large are handed back to the kernel (issue 16).
pub(crate) const MIB: usize = 1 << 20;
pub(crate) const POOL_BUFFERS: usize = 3;
pub(crate) const POOL_SIZE: usize = 4096;
pub(crate) const SENTINEL: usize = 0x5e47_1000;
pub(crate) const BOGUS: [usize; 4] = [0x10, 0x1000, 0xdead_beef_0000, usize::MAX - 7];
pub(crate) const FORGED: [usize; 5] = [1, 0xdead_beef, (3 << 32) | 2, usize::MAX, (1 << 32) | 7];

// ---------------------------------------------------------------------------------------------
// The runtime singleton
// ---------------------------------------------------------------------------------------------

pub(crate) static LOCK: Mutex<()> = Mutex::new(());
pub(crate) static INIT: Once = Once::new();
pub(crate) static TOTAL_CALLS: AtomicU64 = AtomicU64::new(0);
/// Lines the runtime reported about traps (through birenSetValidatorCallback).
pub(crate) static TRAP_LINES: AtomicU64 = AtomicU64::new(0);

/// BIREN_MODEL_VALIDATOR=1 runs the whole binary with the validator on (its lines are counted,
/// not printed); the model must hold all the same.
pub(crate) fn validator_run() -> bool {
    std::env::var("BIREN_MODEL_VALIDATOR").is_ok_and(|v| v == "1")
}

pub(crate) unsafe extern "C" fn on_runtime_line(msg: *const c_char, _user: *mut c_void) {
    let line = CStr::from_ptr(msg).to_string_lossy();
    if line.contains("birenTrap") {
        TRAP_LINES.fetch_add(1, SeqCst);
    } else {
        // Validator findings, advice and leak reports (validator runs, and the validator
        // regression test).
        stat("validator lines".into(), 1);
    }
}
pub(crate) static STATS: Mutex<std::collections::BTreeMap<String, u64>> =
    Mutex::new(std::collections::BTreeMap::new());

/// Counts what the run exercised (printed with BIREN_MODEL_STATS=1).
pub(crate) fn stat(key: String, n: u64) {
    *STATS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default() += n;
}

/// Initializes the runtime once for this test binary and serializes the tests.
pub(crate) fn runtime() -> MutexGuard<'static, ()> {
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
pub(crate) fn global_thread() -> (usize, usize) {
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

pub(crate) unsafe fn arg(args: *mut *mut c_void, i: usize) -> u64 {
    *(*args.add(i) as *const u64)
}

/// args (u64 each): dst, len, val. dst[i] = val + i.
pub(crate) unsafe extern "C" fn fill_kernel(args: *mut *mut c_void) {
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
pub(crate) unsafe extern "C" fn copy_kernel(args: *mut *mut c_void) {
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
pub(crate) unsafe extern "C" fn probe_kernel(args: *mut *mut c_void) {
    if global_thread().0 == 0 {
        let d = arg(args, 0) as *mut u8;
        *d = birenStreamSynchronize(null_mut()) as i32 as u8;
        *d.add(1) = birenDeviceSynchronize() as i32 as u8;
    }
}

/// Aborts the launch: the device gets the sticky LAUNCH_FAILURE.
pub(crate) unsafe extern "C" fn trap_kernel(_args: *mut *mut c_void) {
    birenTrap();
}

/// Does nothing (distinct code from `dummy_kernel`, so that the linker cannot fold the two into
/// one address: registering one would then register the other).
pub(crate) unsafe extern "C" fn nop_kernel(_args: *mut *mut c_void) {
    std::hint::black_box(0x4e4f50u32);
}

/// Only ever registered (with bad and good argument lists), never launched.
pub(crate) unsafe extern "C" fn dummy_kernel(_args: *mut *mut c_void) {
    std::hint::black_box(0xd0_4d_4du32);
}

pub(crate) struct HostJob {
    pub(crate) dst: usize,
    pub(crate) len: usize,
    pub(crate) val: u8,
    pub(crate) ran: AtomicBool,
    pub(crate) probe: AtomicI32,
}

/// Fills its host range, then records what a synchronize inside a host function returns.
pub(crate) unsafe extern "C" fn host_job(p: *mut c_void) {
    let j = &*(p as *const HostJob);
    std::ptr::write_bytes(j.dst as *mut u8, j.val, j.len);
    j.probe
        .store(birenStreamSynchronize(null_mut()) as i32, SeqCst);
    j.ran.store(true, SeqCst);
}

/// Arguments of a launch by reference (unregistered kernel): kept alive until the case ends.
pub(crate) struct ByRefArgs {
    pub(crate) vals: [u64; 3],
    pub(crate) ptrs: [*mut c_void; 3],
}

mod actions;
mod regressions;
mod world;

use actions::*;
use world::*;

/// Runs one generated program against the library and the model.
pub(crate) fn run_case(program: &[Vec<Action>]) -> Result<u64, String> {
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

pub(crate) fn run(actions: &[Action]) {
    if let Err(e) = run_case(&[actions.to_vec()]) {
        panic!("{e}");
    }
}

#[test]
pub(crate) fn random_call_sequences_match_the_model() {
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
