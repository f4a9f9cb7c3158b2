//! `BIREN_SCHEDULE`: the order in which ready operations start.
//!
//! - `fuzz[:SEED]`: before an operation starts, a delay is drawn from a generator seeded by SEED
//!   and the stream's id: half the operations start at once, the others are handed to a starter
//!   thread that starts them after 1 µs to 1 ms. Unordered work in other streams goes ahead
//!   meanwhile, so a missing dependency shows up as a different result for some seeds. The
//!   draws are the same for the same seed and the same sequence of API calls (stream ids and op
//!   numbers), but the device threads still run under the OS's timing: a seed makes an ordering
//!   likely again, it does not replay it exactly.
//! - `serial`: one operation at a time in the whole runtime, in the order they became ready;
//!   the next one starts when the running one has completed. Not held to it: a launch of a
//!   graph with event nodes (it may wait midway for other streams' work) and the hidden lanes
//!   of those nodes.
//! - `BIREN_RECORD` (with any of the above): one operation at a time as under `serial`; when
//!   several are ready, the next is the first (or, fuzzing, one drawn from the seed); each
//!   start is logged (`replay::log_start`).
//! - `BIREN_REPLAY`: one operation at a time, each when it is ready *and* the next recorded
//!   start; the others are held. When the recorded starts run out, or the replay diverges, the
//!   held operations start and later ones start at once.
//!
//! The only hooks are at an op's start (`StreamCore::advance`) and completion; both are one
//! relaxed load when the schedule is the normal one.

use crate::device::engine::mark_device_thread;
use crate::runtime::config::Schedule;
use crate::runtime::exec::replay;
use crate::runtime::lock_order::{Rank, RankedGuard, RankedMutex};
use parking_lot::Condvar;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use std::time::{Duration, Instant};

const NORMAL: u8 = 0;
const FUZZ: u8 = 1;
const SERIAL: u8 = 2;
const RECORD: u8 = 3;
const REPLAY: u8 = 4;

static MODE: AtomicU8 = AtomicU8::new(NORMAL);

/// True unless the schedule is the normal one (one relaxed load).
#[inline]
pub fn active() -> bool {
    MODE.load(Ordering::Relaxed) != NORMAL
}

/// How a deferred op starts later (on the schedule thread): handed over by its stream, which
/// then checks that no reset came in between (`StreamCore::start_deferred`). Dropped unrun when
/// a reset ends the op.
pub(crate) type Deferred = Box<dyn FnOnce() + Send>;

/// An op taken from its stream, not yet handed to whatever runs it.
struct Start {
    stream: u64,
    seq: u64,
    device: usize,
    go: Deferred,
}

struct Starter {
    queue: RankedMutex<Vec<(Instant, u64, Start)>>,
    ready: Condvar,
}

struct Fuzz {
    seed: u64,
    rngs: RankedMutex<HashMap<u64, u64>>,
}

#[derive(Default)]
struct Serial {
    busy: Option<(u64, u64, usize)>,
    waiting: VecDeque<Start>,
    /// Recording: log each start.
    log: bool,
    /// Recording while fuzzing: the generator that picks the next of several ready operations.
    rng: Option<u64>,
}

/// Replay's device side: the recorded starts and the ready operations held for their turn.
struct Replayed {
    starts: Vec<(u64, u64)>,
    next: usize,
    busy: Option<(u64, u64, usize)>,
    held: Vec<Start>,
    /// The recorded starts ran out or the replay diverged: everything starts at once.
    free: bool,
}

/// The schedule thread of the current runtime (a fresh one for each birenInit: a child made by
/// fork() starts a new runtime, and the parent's thread does not exist in it).
static STARTER: RankedMutex<Option<Arc<Starter>>> = RankedMutex::new(Rank::Leaf, None);
static FUZZ_STATE: OnceLock<Fuzz> = OnceLock::new();
static SERIAL_STATE: RankedMutex<Option<Serial>> = RankedMutex::new(Rank::ScheduleState, None);
static REPLAY_STATE: RankedMutex<Option<Replayed>> = RankedMutex::new(Rank::ScheduleState, None);
static SEQUENCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Sets the schedule (at birenInit); `log` says whether the run is recorded or replayed.
pub fn configure(s: Schedule, log: replay::DeviceLog) {
    match log {
        replay::DeviceLog::None => {}
        replay::DeviceLog::Record => {
            let rng = match s {
                Schedule::Fuzz(seed) => Some(seed),
                _ => None,
            };
            *SERIAL_STATE.lock() = Some(Serial {
                log: true,
                rng,
                ..Serial::default()
            });
            start_thread();
            MODE.store(RECORD, Ordering::Relaxed);
            return;
        }
        replay::DeviceLog::Replay(starts) => {
            *REPLAY_STATE.lock() = Some(Replayed {
                starts,
                next: 0,
                busy: None,
                held: Vec::new(),
                free: false,
            });
            replay::set_device_hooks(replay_run_free, replay_waiting_for);
            start_thread();
            MODE.store(REPLAY, Ordering::Relaxed);
            return;
        }
    }
    match s {
        Schedule::Normal => MODE.store(NORMAL, Ordering::Relaxed),
        Schedule::Fuzz(seed) => {
            let _ = FUZZ_STATE.set(Fuzz {
                seed,
                rngs: RankedMutex::new(Rank::Leaf, HashMap::new()),
            });
            start_thread();
            crate::runtime::diagnostics::set_schedule_note(format!(
                "schedule fuzzing seed {seed} (BIREN_SCHEDULE=fuzz:{seed} repeats its draws)"
            ));
            MODE.store(FUZZ, Ordering::Relaxed);
        }
        Schedule::Serial => {
            *SERIAL_STATE.lock() = Some(Serial::default());
            start_thread();
            MODE.store(SERIAL, Ordering::Relaxed);
        }
    }
}

/// Recording or replaying: operations start one at a time in a logged order (and synchronous
/// copies are never done inline on the calling thread: they are operations too).
#[inline]
pub fn exact() -> bool {
    matches!(MODE.load(Ordering::Relaxed), RECORD | REPLAY)
}

/// The fuzzing seed, if fuzzing.
pub fn fuzz_seed() -> Option<u64> {
    (MODE.load(Ordering::Relaxed) == FUZZ).then(|| FUZZ_STATE.get().map(|f| f.seed))?
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Starts a schedule thread for this runtime.
fn start_thread() {
    let st = Arc::new(Starter {
        queue: RankedMutex::new(Rank::Leaf, Vec::new()),
        ready: Condvar::new(),
    });
    let me = st.clone();
    std::thread::Builder::new()
        .name("biren-schedule".into())
        .spawn(move || run_starter(me))
        .expect("biren: cannot start the schedule thread");
    *STARTER.lock() = Some(st);
}

fn run_starter(st: Arc<Starter>) {
    mark_device_thread();
    let mut q = st.queue.lock();
    loop {
        let now = Instant::now();
        // The earliest due start (ties: the order they were handed over).
        let due = q
            .iter()
            .enumerate()
            .filter(|(_, e)| e.0 <= now)
            .min_by_key(|(_, e)| (e.0, e.1))
            .map(|(i, _)| i);
        if let Some(i) = due {
            let (_, _, s) = q.swap_remove(i);
            drop(q);
            start_now(s);
            q = st.queue.lock();
            continue;
        }
        match q.iter().map(|e| e.0).min() {
            Some(t) => {
                q.wait_until(&st.ready, t);
            }
            None => q.wait(&st.ready),
        }
    }
}

fn hand_over(s: Start, delay: Duration) {
    let Some(st) = STARTER.lock().clone() else {
        start_now(s); // no schedule thread (cannot happen once configured): start it here
        return;
    };
    let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    st.queue.lock().push((Instant::now() + delay, n, s));
    st.ready.notify_one();
}

/// Starts a deferred op.
fn start_now(s: Start) {
    (s.go)();
}

/// Called by `advance` when an op is about to start: returns the work back if it starts now,
/// or None if it was deferred (the stream stays `running`; the op starts later on the
/// schedule thread).
pub(crate) fn before_start<W>(
    stream: (u64, usize),
    seq: u64,
    work: W,
    later: impl FnOnce(W) -> Deferred,
) -> Option<W> {
    let (id, device) = stream;
    match MODE.load(Ordering::Relaxed) {
        FUZZ => {
            let f = FUZZ_STATE.get()?;
            let r = {
                let mut rngs = f.rngs.lock();
                let x = rngs
                    .entry(id)
                    .or_insert_with(|| f.seed ^ id.wrapping_mul(0xD1B5_4A32_D192_ED03));
                splitmix(x)
            };
            if r & 1 == 0 {
                return Some(work);
            }
            let us = 1 + (r >> 8) % 1000;
            hand_over(
                Start {
                    stream: id,
                    seq,
                    device,
                    go: later(work),
                },
                Duration::from_micros(us),
            );
            None
        }
        SERIAL | RECORD => {
            let mut g = SERIAL_STATE.lock();
            let s = g.as_mut()?;
            if s.busy.is_none() {
                s.busy = Some((id, seq, device));
                if s.log {
                    replay::log_start(id, seq);
                }
                return Some(work);
            }
            s.waiting.push_back(Start {
                stream: id,
                seq,
                device,
                go: later(work),
            });
            None
        }
        REPLAY => replay_before_start(id, device, seq, work, later),
        _ => Some(work),
    }
}

/// Op `seq` of stream `id` (on `device`) completed: one at a time, the next op may start.
pub(crate) fn completed(id: u64, device: usize, seq: u64) {
    if matches!(MODE.load(Ordering::Relaxed), SERIAL | RECORD | REPLAY) {
        release(id, device, seq);
    }
}

/// The running op `seq` of stream `id` is over (completed, or dropped by a reset).
pub(crate) fn release(id: u64, device: usize, seq: u64) {
    let me = Some((id, seq, device));
    if MODE.load(Ordering::Relaxed) == REPLAY {
        let mut g = REPLAY_STATE.lock();
        let Some(r) = g.as_mut() else { return };
        if r.busy == me {
            r.busy = None;
            replay_next(g);
        }
        return;
    }
    let mut g = SERIAL_STATE.lock();
    let Some(s) = g.as_mut() else { return };
    if s.busy != me {
        return;
    }
    s.busy = None;
    serial_next(g);
}

/// Nothing runs: the next waiting op starts (the first, or a drawn one when recording a fuzzed
/// run).
fn serial_next(mut g: RankedGuard<'_, Option<Serial>>) {
    let Some(s) = g.as_mut() else { return };
    let i = match (s.rng.as_mut(), s.waiting.len()) {
        (_, 0) => return,
        (Some(x), n) => (splitmix(x) % n as u64) as usize,
        (None, _) => 0,
    };
    let Some(next) = s.waiting.remove(i) else {
        return;
    };
    s.busy = Some((next.stream, next.seq, next.device));
    if s.log {
        replay::log_start(next.stream, next.seq);
    }
    drop(g);
    hand_over(next, Duration::ZERO);
}

/// A device reset dropped its work: one at a time, its running and waiting ops are gone.
pub(crate) fn reset_device(device: usize) {
    match MODE.load(Ordering::Relaxed) {
        SERIAL | RECORD => {
            let mut g = SERIAL_STATE.lock();
            let Some(s) = g.as_mut() else { return };
            s.waiting.retain(|w| w.device != device);
            if s.busy.is_some_and(|b| b.2 == device) {
                s.busy = None;
                serial_next(g);
            }
        }
        REPLAY => {
            let mut g = REPLAY_STATE.lock();
            let Some(r) = g.as_mut() else { return };
            r.held.retain(|w| w.device != device);
            replay::set_device_held(r.held.len());
            if r.busy.is_some_and(|b| b.2 == device) {
                r.busy = None;
                replay_next(g);
            }
        }
        _ => {}
    }
}

/// Replay: op `seq` of `stream` is ready. It starts now if it is the next recorded start and
/// nothing runs; otherwise it is held.
fn replay_before_start<W>(
    id: u64,
    device: usize,
    seq: u64,
    work: W,
    later: impl FnOnce(W) -> Deferred,
) -> Option<W> {
    let mut g = REPLAY_STATE.lock();
    let Some(r) = g.as_mut() else {
        return Some(work);
    };
    if r.free {
        return Some(work);
    }
    if r.busy.is_none() && r.next >= r.starts.len() {
        r.free = true;
        return Some(work);
    }
    if r.busy.is_none() && r.starts.get(r.next) == Some(&(id, seq)) {
        r.busy = Some((id, seq, device));
        r.next += 1;
        replay::device_progress();
        return Some(work);
    }
    r.held.push(Start {
        stream: id,
        seq,
        device,
        go: later(work),
    });
    replay::set_device_held(r.held.len());
    None
}

/// Replay, nothing running: starts the next recorded op if it is held; when the recorded
/// starts have run out, starts everything.
fn replay_next(mut g: RankedGuard<'_, Option<Replayed>>) {
    let Some(r) = g.as_mut() else { return };
    if r.busy.is_some() || r.free {
        return;
    }
    if r.next >= r.starts.len() {
        r.free = true;
        drop(g);
        replay_run_free();
        return;
    }
    let want = r.starts[r.next];
    let Some(i) = r.held.iter().position(|h| (h.stream, h.seq) == want) else {
        return;
    };
    let next = r.held.swap_remove(i);
    r.busy = Some((next.stream, next.seq, next.device));
    r.next += 1;
    replay::set_device_held(r.held.len());
    replay::device_progress();
    drop(g);
    hand_over(next, Duration::ZERO);
}

/// The replay runs free (diverged, or its recorded starts ran out): every held op starts, in
/// the order it became ready, and later ones start at once.
fn replay_run_free() {
    let held = {
        let mut g = REPLAY_STATE.lock();
        let Some(r) = g.as_mut() else { return };
        r.free = true;
        replay::set_device_held(0);
        std::mem::take(&mut r.held)
    };
    for h in held {
        hand_over(h, Duration::ZERO);
    }
}

/// Replay: the start it waits for, for the watchdog's message.
fn replay_waiting_for() -> String {
    let g = REPLAY_STATE.lock();
    let Some(r) = g.as_ref() else {
        return String::new();
    };
    match r.starts.get(r.next) {
        Some((stream, seq)) => format!(
            "at device start {}: expected op {seq} of stream #{stream} to be ready",
            r.next
        ),
        None => format!("at device start {}", r.next),
    }
}
