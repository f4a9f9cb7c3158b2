//! Deterministic record and replay (`BIREN_RECORD=file`, `BIREN_REPLAY=file`).
//!
//! **Host side (here).** Every API call that crosses the boundary macro takes a *turn*: the calls
//! of all host threads are serialized, each holding the turn from its entry until it returns or
//! until it starts to wait on the host (`wait_point`: a synchronize, a synchronous copy), so that
//! a waiting call never holds up the others. Recording writes `C turn thread name` as each call
//! takes its turn; host threads get ordinals in the order of their first call. Replaying holds
//! each call until its turn comes: a thread is given the ordinal of a recorded thread whose
//! first call has the same name (several: matched by kernel thread id order, `assign_ordinal`);
//! then every call of that thread must be the next one recorded for it. A call that does not
//! match, or a turn that does not come within `BIREN_REPLAY_TIMEOUT_MS`, is a divergence: one
//! line on stderr (`biren replay: diverged at turn N: expected X from thread T, got Y; running
//! free`) and the program runs free from there on, never hangs. Calls the recording does not
//! have (it was cut short by a crash) wait for its end, then run free.
//!
//! **Device side (`schedule.rs`).** One operation at a time; recording logs each start, replay
//! starts an operation only when it is ready and the next one recorded.
//!
//! **Answers.** Calls whose result depends on timing (birenStreamQuery, birenEventQuery,
//! birenEventElapsedTime) log their answer; replay gives the recorded one (a recorded
//! `NOT_READY` is `NOT_READY` again; a recorded `SUCCESS` waits for the work first).
//!
//! Off, the only cost is one relaxed load per API call (`on`) and per op start (`schedule`).

pub mod log;

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::lock_order::{Rank, RankedGuard, RankedMutex};
use log::{Call, Header, Recording};
use parking_lot::Condvar;
use std::cell::Cell;
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const OFF: u8 = 0;
const RECORD: u8 = 1;
const REPLAY: u8 = 2;

/// The host side's mode: `OFF` also after a replay diverged or ran past its end.
static MODE: AtomicU8 = AtomicU8::new(OFF);
/// Turns taken plus device starts made: the watchdog's measure of progress.
static PROGRESS: AtomicU64 = AtomicU64::new(0);
/// Device operations ready but held for their recorded turn (kept by `schedule.rs`).
static DEVICE_HELD: AtomicUsize = AtomicUsize::new(0);
/// The device side's hooks: start every held operation (a replay running free), and say which
/// start it waits for.
static DEVICE_HOOKS: RankedMutex<Option<DeviceHooks>> = RankedMutex::new(Rank::Leaf, None);
type DeviceHooks = (fn(), fn() -> String);
static FILE: RankedMutex<Option<std::fs::File>> = RankedMutex::new(Rank::Leaf, None);

thread_local! {
    static ORDINAL: Cell<u32> = const { Cell::new(u32::MAX) };
    static HOLDING: Cell<bool> = const { Cell::new(false) };
    static TURN: Cell<Option<u64>> = const { Cell::new(None) };
}

struct Replay {
    calls: Vec<Call>,
    /// Per recorded thread: its turns, in order, and how many it has taken.
    turns: Vec<Vec<u64>>,
    cursor: Vec<usize>,
    assigned: Vec<bool>,
    answers: HashMap<u64, i32>,
    elapsed: HashMap<u64, u32>,
    tids: HashMap<u32, u64>,
}

#[derive(Default)]
struct HostState {
    /// A call holds the turn.
    busy: bool,
    /// The next turn.
    next: u64,
    /// Recording: ordinals given so far.
    threads: u32,
    /// Threads waiting for their turn (replay).
    waiting: usize,
    /// Replay: threads making their first call, not yet matched (kernel thread id, call).
    arrivals: Vec<(u64, String)>,
    /// Replay: ordinals given to arrivals, by kernel thread id.
    decided: HashMap<u64, u32>,
    /// Replay: a call not in the recording waits for its end (what came, for messages).
    unrecorded: Option<String>,
    replay: Option<Replay>,
}

static HOST: RankedMutex<Option<HostState>> = RankedMutex::new(Rank::ReplayTurn, None);
static TURN_FREED: Condvar = Condvar::new();

/// True while recording or replaying (one relaxed load).
#[inline]
pub fn on() -> bool {
    MODE.load(Ordering::Relaxed) != OFF
}

/// What `configure` sets up for the device side.
pub enum DeviceLog {
    None,
    Record,
    /// The recorded starts, in order.
    Replay(Vec<(u64, u64)>),
}

/// The header line's settings for this run.
pub fn header(devices: usize, units: usize, schedule: crate::runtime::config::Schedule) -> Header {
    use crate::runtime::config::Schedule;
    Header {
        devices,
        units,
        schedule: match schedule {
            Schedule::Normal => "normal".into(),
            Schedule::Serial => "serial".into(),
            Schedule::Fuzz(s) => format!("fuzz:{s}"),
        },
    }
}

/// At `birenInit`: opens the recording or reads the replay (refusing a damaged or mismatching
/// file with one line on stderr and `InvalidValue`).
pub fn configure(
    cfg: &crate::runtime::config::Config,
    rc: &crate::runtime::config::ReplayConfig,
) -> Result<DeviceLog> {
    let here = header(cfg.device_count, cfg.compute_units, cfg.schedule);
    let refuse = |var: &str, path: &str, why: &str| {
        eprintln!("biren: {var}={path}: {why}");
        ErrorCode::InvalidValue
    };
    if let Some(path) = &rc.record {
        let mut f = std::fs::File::create(path).map_err(|e| {
            refuse(
                "BIREN_RECORD",
                path,
                &format!("cannot create the file: {e}"),
            )
        })?;
        f.write_all(here.line().as_bytes())
            .map_err(|e| refuse("BIREN_RECORD", path, &format!("cannot write: {e}")))?;
        *FILE.lock() = Some(f);
        *HOST.lock() = Some(HostState::default());
        MODE.store(RECORD, Ordering::Relaxed);
        return Ok(DeviceLog::Record);
    }
    let Some(path) = &rc.replay else {
        return Ok(DeviceLog::None);
    };
    let text = std::fs::read(path)
        .map_err(|e| refuse("BIREN_REPLAY", path, &format!("cannot read the file: {e}")))?;
    let text = String::from_utf8(text)
        .map_err(|_| refuse("BIREN_REPLAY", path, "not a BIREN_RECORD file (not text)"))?;
    let rec = log::parse(&text).map_err(|e| refuse("BIREN_REPLAY", path, &e.to_string()))?;
    let h = rec.header.clone().expect("parse checks the header");
    let schedule_matches =
        cfg.schedule == crate::runtime::config::Schedule::Normal || h.schedule == here.schedule;
    if h.devices != here.devices || h.units != here.units || !schedule_matches {
        return Err(refuse(
            "BIREN_REPLAY",
            path,
            &format!(
                "recorded with {}, this run has {}: set the same values",
                settings(&h),
                settings(&here)
            ),
        ));
    }
    Ok(DeviceLog::Replay(replay_from(rec, rc.timeout_ms)))
}

fn settings(h: &Header) -> String {
    format!(
        "BIREN_DEVICE_COUNT={} BIREN_COMPUTE_UNITS={} BIREN_SCHEDULE={}",
        h.devices, h.units, h.schedule
    )
}

fn replay_from(rec: Recording, timeout_ms: u64) -> Vec<(u64, u64)> {
    let n = rec.threads();
    let mut turns = vec![Vec::new(); n];
    for (t, c) in rec.calls.iter().enumerate() {
        turns[c.thread as usize].push(t as u64);
    }
    *HOST.lock() = Some(HostState {
        replay: Some(Replay {
            calls: rec.calls,
            turns,
            cursor: vec![0; n],
            assigned: vec![false; n],
            answers: rec.answers,
            elapsed: rec.elapsed,
            tids: rec.tids,
        }),
        ..HostState::default()
    });
    // Before the watchdog starts: it runs while the mode is REPLAY.
    MODE.store(REPLAY, Ordering::Relaxed);
    std::thread::Builder::new()
        .name("biren-replay".into())
        .spawn(move || watchdog(Duration::from_millis(timeout_ms)))
        .expect("biren: cannot start the replay watchdog");
    rec.starts
}

/// Registers the device side's hooks: what it does when a replay runs free, and what it waits
/// for (for the watchdog's message).
pub fn set_device_hooks(run_free: fn(), waiting_for: fn() -> String) {
    *DEVICE_HOOKS.lock() = Some((run_free, waiting_for));
}

fn write_line(line: &str) {
    if let Some(f) = FILE.lock().as_mut() {
        // One write per line, unbuffered: what a crashing run recorded is on disk.
        let _ = f.write_all(line.as_bytes());
    }
}

/// The call that took a turn returns (the boundary macro): the turn goes to the next call.
#[cold]
pub fn leave() {
    release();
    TURN.with(|t| t.set(None));
}

/// An API call enters (the boundary macro, when `on`): waits for its turn. True if it took
/// one (then it calls `leave` when it returns); false when the call takes no turn (a nested
/// call, a device thread, a replay running free).
#[cold]
#[inline(never)]
pub fn enter(name: &str) -> bool {
    if HOLDING.with(|h| h.get()) || crate::device::engine::on_device_thread() {
        return false;
    }
    match MODE.load(Ordering::Relaxed) {
        RECORD => enter_recording(name),
        REPLAY => enter_replaying(name),
        _ => None,
    }
    .is_some()
}

fn enter_recording(name: &str) -> Option<()> {
    let mut g = HOST.lock();
    while g.as_ref()?.busy {
        g.wait(&TURN_FREED);
    }
    let st = g.as_mut()?;
    let ord = ORDINAL.with(|o| {
        if o.get() == u32::MAX {
            o.set(st.threads);
            st.threads += 1;
            write_line(&format!("T {} {}\n", st.threads - 1, thread_id()));
        }
        o.get()
    });
    let turn = st.next;
    st.next += 1;
    st.busy = true;
    write_line(&format!("C {turn} {ord} {name}\n"));
    hold(turn)
}

/// The turn recorded for this thread's next call, assigning the thread an ordinal first if it
/// has none; Err(what to say) when the call is not the recorded one.
fn recorded_turn(st: &mut HostState, name: &str) -> std::result::Result<Entry, String> {
    let rp = st.replay.as_mut().ok_or_else(String::new)?;
    let ord = ORDINAL.with(|o| o.get()) as usize;
    let unrecorded = if ord >= rp.turns.len() {
        Some(format!("{name} from a thread not in the recording"))
    } else if rp.cursor[ord] >= rp.turns[ord].len() {
        Some(format!(
            "{name} from thread {ord}, which made no more calls in the recording"
        ))
    } else {
        None
    };
    if let Some(what) = unrecorded {
        return Ok(Entry::AfterEnd(what));
    }
    let turn = rp.turns[ord][rp.cursor[ord]];
    let want = &rp.calls[turn as usize].name;
    if want != name {
        return Err(format!(
            "diverged at turn {turn}: expected {want} from thread {ord}, got {name}"
        ));
    }
    Ok(Entry::Turn(ord, turn))
}

/// What a call is in the recording.
enum Entry {
    /// Recorded thread `.0`'s call at turn `.1`.
    Turn(usize, u64),
    /// Not recorded (what came): it may follow the recorded calls (a recording cut short).
    AfterEnd(String),
}

/// A call the recording does not have: it waits until every recorded call has been made (the
/// recording was cut short: a crashed run), then the replay runs free. If the recorded calls
/// stop coming meanwhile, the watchdog calls it a divergence.
fn after_end(mut g: RankedGuard<'_, Option<HostState>>, what: String) {
    loop {
        if MODE.load(Ordering::Relaxed) != REPLAY {
            return;
        }
        let Some(st) = g.as_mut() else { return };
        let total = st.replay.as_ref().map_or(0, |r| r.calls.len() as u64);
        if st.next >= total && !st.busy {
            let next = st.next;
            run_free(g, format!("end of the recording at turn {next}"));
            return;
        }
        st.waiting += 1;
        st.unrecorded = Some(what.clone());
        g.wait(&TURN_FREED);
        if let Some(st) = g.as_mut() {
            st.waiting -= 1;
            st.unrecorded = None;
        }
    }
}

/// Kernel thread id of the calling thread.
fn thread_id() -> u64 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u64 }
}

/// How long a new thread waits for the other new threads that begin with the same call.
const ARRIVAL_GRACE: Duration = Duration::from_millis(200);

/// Replay: gives a thread making its first call the ordinal of a recorded thread that began
/// with the same call. When several did, the threads that arrive within `ARRIVAL_GRACE` of each
/// other are matched to them in the order of their kernel thread ids (creation order).
fn assign_ordinal(g: &mut RankedGuard<'_, Option<HostState>>, name: &str) {
    let me = thread_id();
    let since = Instant::now();
    let Some(st) = g.as_mut() else { return };
    st.arrivals.push((me, name.to_string()));
    loop {
        let Some(st) = g.as_mut() else { return };
        if let Some(ord) = st.decided.remove(&me) {
            ORDINAL.with(|o| o.set(ord));
            return;
        }
        let Some(rp) = st.replay.as_mut() else { return };
        let mut cands: Vec<usize> = (0..rp.turns.len())
            .filter(|&t| !rp.assigned[t])
            .filter(|&t| rp.calls[rp.turns[t][0] as usize].name == name)
            .collect();
        let mut arrived: Vec<u64> = st
            .arrivals
            .iter()
            .filter(|a| a.1 == name)
            .map(|a| a.0)
            .collect();
        let grace_over = since.elapsed() >= ARRIVAL_GRACE;
        if cands.len() <= 1
            || arrived.len() >= cands.len()
            || grace_over
            || MODE.load(Ordering::Relaxed) != REPLAY
        {
            // Decide for every thread that has arrived with this call.
            cands.sort_by_key(|&t| {
                (
                    rp.tids.get(&(t as u32)).copied().unwrap_or(u64::MAX),
                    rp.turns[t][0],
                )
            });
            arrived.sort_unstable();
            for (i, tid) in arrived.iter().enumerate() {
                let ord = match cands.get(i) {
                    Some(&t) => {
                        rp.assigned[t] = true;
                        t as u32
                    }
                    None => u32::MAX - 1, // no recorded thread left: a new thread
                };
                st.decided.insert(*tid, ord);
            }
            st.arrivals.retain(|a| a.1 != name);
            TURN_FREED.notify_all();
            continue;
        }
        let left = ARRIVAL_GRACE.saturating_sub(since.elapsed());
        g.wait_for(&TURN_FREED, left);
    }
}

fn enter_replaying(name: &str) -> Option<()> {
    let mut g = HOST.lock();
    if ORDINAL.with(|o| o.get()) == u32::MAX {
        assign_ordinal(&mut g, name);
    }
    let (ord, turn) = match recorded_turn(g.as_mut()?, name) {
        Ok(Entry::Turn(ord, turn)) => (ord, turn),
        Ok(Entry::AfterEnd(what)) => {
            after_end(g, what);
            return None;
        }
        Err(what) => {
            run_free(g, what);
            return None;
        }
    };
    loop {
        if MODE.load(Ordering::Relaxed) != REPLAY {
            return None;
        }
        let st = g.as_mut()?;
        if st.next == turn && !st.busy {
            break;
        }
        st.waiting += 1;
        g.wait(&TURN_FREED);
        g.as_mut()?.waiting -= 1;
    }
    let st = g.as_mut()?;
    st.busy = true;
    st.next += 1;
    if let Some(rp) = st.replay.as_mut() {
        rp.cursor[ord] += 1;
    }
    PROGRESS.fetch_add(1, Ordering::Relaxed);
    hold(turn)
}

fn hold(turn: u64) -> Option<()> {
    HOLDING.with(|h| h.set(true));
    TURN.with(|t| t.set(Some(turn)));
    Some(())
}

/// What the replay waits for next, for messages: "at turn N: expected X from thread T".
fn expected(st: &HostState) -> String {
    let Some(rp) = &st.replay else {
        return String::new();
    };
    match rp.calls.get(st.next as usize) {
        Some(c) => format!(
            "at turn {}: expected {} from thread {}",
            st.next, c.name, c.thread
        ),
        None => format!("at turn {}: expected the end of the recording", st.next),
    }
}

/// Stops replaying: every waiting call and held operation goes, and nothing waits again. Says
/// why in one line: `biren replay: <what>; running free`.
fn run_free(g: RankedGuard<'_, Option<HostState>>, what: String) {
    if MODE.swap(OFF, Ordering::Relaxed) == REPLAY {
        let _ = std::io::stderr()
            .lock()
            .write_all(format!("biren replay: {what}; running free\n").as_bytes());
    }
    drop(g);
    TURN_FREED.notify_all();
    let hooks = *DEVICE_HOOKS.lock();
    if let Some((run_free, _)) = hooks {
        run_free();
    }
}

/// The current call stops holding the turn (it is about to wait on the host, or returns).
#[inline]
pub fn release() {
    if !HOLDING.with(|h| h.replace(false)) {
        return;
    }
    if let Some(st) = HOST.lock().as_mut() {
        st.busy = false;
    }
    TURN_FREED.notify_all();
}

/// The answer of a timing-dependent call. `ask` asks the runtime; `settle` waits until the
/// answer would be `SUCCESS` (replay of a recorded `SUCCESS`).
pub fn answer(ask: impl FnOnce() -> Result<()>, settle: impl FnOnce() -> Result<()>) -> Result<()> {
    let Some(turn) = TURN.with(|t| t.get()) else {
        return ask();
    };
    match MODE.load(Ordering::Relaxed) {
        RECORD => {
            let r = ask();
            write_line(&format!("Q {turn} {}\n", crate::runtime::error::code_of(r)));
            r
        }
        REPLAY => {
            let recorded = HOST
                .lock()
                .as_ref()
                .and_then(|s| s.replay.as_ref())
                .and_then(|r| r.answers.get(&turn).copied());
            match recorded {
                Some(c) if c == ErrorCode::NotReady.code() => Err(ErrorCode::NotReady),
                Some(0) => settle(),
                _ => ask(),
            }
        }
        _ => ask(),
    }
}

/// birenEventElapsedTime's result: logged when recording, the recorded one when replaying.
pub fn elapsed(ms: f32) -> f32 {
    let Some(turn) = TURN.with(|t| t.get()) else {
        return ms;
    };
    match MODE.load(Ordering::Relaxed) {
        RECORD => {
            write_line(&format!("E {turn} {}\n", ms.to_bits()));
            ms
        }
        REPLAY => HOST
            .lock()
            .as_ref()
            .and_then(|s| s.replay.as_ref())
            .and_then(|r| r.elapsed.get(&turn).copied())
            .map_or(ms, f32::from_bits),
        _ => ms,
    }
}

/// Recording: the device started op `seq` of stream `stream`.
pub fn log_start(stream: u64, seq: u64) {
    write_line(&format!("S {stream} {seq}\n"));
}

/// Replay: the device made a recorded start.
pub fn device_progress() {
    PROGRESS.fetch_add(1, Ordering::Relaxed);
}

/// Replay: how many ready operations are held for their turn.
pub fn set_device_held(n: usize) {
    DEVICE_HELD.store(n, Ordering::Relaxed);
}

/// A turn that does not come: when calls or operations wait and nothing has moved for
/// `timeout`, the replay has diverged (the program no longer makes the recorded call).
fn watchdog(timeout: Duration) {
    let mut seen = (PROGRESS.load(Ordering::Relaxed), Instant::now());
    let tick = Duration::from_millis(20).min(timeout.max(Duration::from_millis(1)));
    while MODE.load(Ordering::Relaxed) == REPLAY {
        std::thread::sleep(tick);
        let p = PROGRESS.load(Ordering::Relaxed);
        if p != seen.0 {
            seen = (p, Instant::now());
            continue;
        }
        let g = HOST.lock();
        let Some(st) = g.as_ref() else { return };
        let held = DEVICE_HELD.load(Ordering::Relaxed);
        if (st.waiting > 0 || held > 0) && seen.1.elapsed() >= timeout {
            let ms = timeout.as_millis();
            let what = if let Some(u) = &st.unrecorded {
                format!(
                    "{}, got {u}, and the recorded call did not come in {ms} ms",
                    expected(st)
                )
            } else if st.waiting > 0 {
                format!("{}, which did not come in {ms} ms", expected(st))
            } else {
                let hooks = *DEVICE_HOOKS.lock();
                let device = hooks.map_or_else(String::new, |(_, waiting_for)| waiting_for());
                format!("{device}, which did not come in {ms} ms")
            };
            run_free(g, format!("diverged {what}"));
            return;
        }
    }
}
