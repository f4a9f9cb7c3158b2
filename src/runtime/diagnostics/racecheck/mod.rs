//! Race detection (`BIREN_RACECHECK=1`, `birenSetRaceCheck`): happens-before between
//! operations by vector clocks, and the bytes each operation touches; two accesses to the same
//! bytes, one a write, that nothing orders, are a race, reported once (with a count at exit).
//!
//! **Clocks.** One component per stream (its op numbers are its ticks) and one per host thread.
//! An op's clock is the join of: the previous op of its stream (program order), the clock of the
//! host thread that enqueued it (everything that thread had synchronized with, and the thread's
//! own earlier accesses), the legacy default stream's implicit edges (the latest op of every
//! blocking stream for work on the default stream, the default stream's latest op for work on a
//! blocking stream), and every dependency point it waited for (event waits, including future
//! waits once resolved; the implicit deps of pending work). A host synchronization (stream,
//! event, device, a synchronous copy, a query returning SUCCESS) joins the clock of what it
//! waited for into the host thread's clock. A host function's thread takes its op's clock.
//!
//! **Accesses.** Copies and fills: their exact byte ranges, on device memory and on page-locked
//! host memory (birenMallocHost); pageable host memory is not tracked. Kernels: every 8-byte word
//! of their copied argument values that points into a known allocation names that allocation;
//! the kernel is assumed to read all of it, and its writes are found by comparing a digest of
//! each 256-byte chunk before and after it ran. A host thread's birenFreeHost writes the whole
//! buffer. Plain loads and stores by host code are invisible.
//!
//! Off, every hook is one relaxed atomic load (`on()`).

use crate::runtime::diagnostics::{self, caller};
use parking_lot::Mutex;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};

mod clock;
mod snapshot;

pub use clock::Clock;
use clock::IntMap;
use snapshot::{digest, Snapshot, CHUNK};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

static ON: AtomicBool = AtomicBool::new(false);

/// True while race detection is on (one relaxed load: the cost of every hook when off).
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Turns race detection on or off. Turning it on forgets what was tracked before (work enqueued
/// while it was off is not known). Allocations must be declared again with `alloc`.
pub fn set(enable: bool) {
    let mut st = STATE.lock();
    if enable && !on() {
        *st = State::default();
    }
    ON.store(enable, Ordering::Relaxed);
}

/// Kernel allocations up to this many bytes in all are digested under the state's lock.
const SMALL: usize = 64 << 10;
/// Accesses kept per allocation (older ones are forgotten: races with them go unseen).
const HISTORY: usize = 64;
/// Op clocks kept per stream (a dependency on an older op uses the oldest one kept).
const CLOCKS: usize = 1024;
/// First host-thread component (stream ids are smaller; default streams are near u64::MAX).
const HOST_BASE: u64 = 1 << 62;

/// How a stream follows the legacy default-stream rules.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StreamKind {
    Default,
    Blocking,
    NonBlocking,
}

/// A stream as the hooks describe it.
#[derive(Clone, Copy, Debug)]
pub struct StreamTag {
    pub id: u64,
    pub device: usize,
    pub kind: StreamKind,
}

/// What an enqueued op is and what it touches, as the exec layer describes it.
pub struct OpDesc {
    /// "kernel", "memcpy", "memset", "host function", "event record", "event wait".
    pub kind: &'static str,
    /// The kernel's registered name, or empty.
    pub name: String,
    /// The kernel's address (its symbol names it when it is not registered), or 0.
    pub code: usize,
    /// Exact byte ranges: (address, length, write).
    pub ranges: Vec<(usize, usize, bool)>,
    /// Kernel argument words (pointer candidates).
    pub words: Vec<usize>,
}

/// An operation, for messages.
struct OpInfo {
    kind: &'static str,
    name: String,
    code: usize,
    /// The API call that enqueued it (or made the host access).
    call: &'static str,
    /// Stream id, or a host component.
    comp: u64,
    /// Op number in the stream, or the host thread's tick.
    tick: u64,
    caller: usize,
    /// Global enqueue order (which of two ops came first in the program).
    order: u64,
}

impl OpInfo {
    fn is_host(&self) -> bool {
        self.comp >= HOST_BASE && self.comp < HOST_BASE + (1 << 40)
    }
    /// The kernel's name: registered, or its symbol, or its address.
    fn name(&self) -> String {
        if !self.name.is_empty() || self.code == 0 {
            return self.name.clone();
        }
        caller::symbol_at(self.code).unwrap_or_else(|| format!("kernel@{:#x}", self.code))
    }
    fn what(&self) -> String {
        let name = self.name();
        let k = if name.is_empty() {
            self.kind.to_string()
        } else {
            format!("{} '{name}'", self.kind)
        };
        if self.is_host() {
            return format!(
                "{} by host thread #{} (called from {})",
                self.call,
                self.comp - HOST_BASE,
                caller::site(self.caller)
            );
        }
        format!(
            "{k} ({}, op {} in that stream; {} called from {})",
            stream_name(self.comp),
            self.tick,
            self.call,
            caller::site(self.caller)
        )
    }
    fn short(&self) -> String {
        let name = self.name();
        if name.is_empty() {
            format!("the {}", self.kind)
        } else {
            format!("the {} '{name}'", self.kind)
        }
    }
}

/// Same rule as exec::deadlock::stream_name (default streams have the top ids).
fn stream_name(id: u64) -> String {
    if id >= u64::MAX - 64 {
        "the default stream".to_string()
    } else {
        format!("stream #{id}")
    }
}

#[derive(Clone)]
struct Access {
    op: Arc<OpInfo>,
    clock: Arc<Clock>,
    start: usize,
    end: usize,
    write: bool,
}

impl Access {
    /// True if `self` happens before `o`.
    fn before(&self, o: &Access) -> bool {
        self.op.tick <= o.clock.get(self.op.comp)
    }
}

struct Alloc {
    size: usize,
    device: Option<usize>,
    history: Vec<Access>,
}

struct Pending {
    seq: u64,
    /// The enqueueing host thread's clock.
    host: Arc<Clock>,
    /// The default-stream rule's predecessors (their latest started ops at enqueue).
    implicit: Vec<Arc<Clock>>,
    deps: Vec<(u64, u64)>,
    op: Arc<OpInfo>,
    ranges: Vec<(usize, usize, bool)>,
    words: Vec<usize>,
}

struct Running {
    op: Arc<OpInfo>,
    clock: Arc<Clock>,
    /// Kernel allocations and what they held before the kernel ran.
    digests: Vec<(usize, usize, Snapshot)>,
}

struct StreamState {
    tag: StreamTag,
    last: Arc<Clock>,
    /// Clocks of its recent ops, by op number (increasing).
    clocks: VecDeque<(u64, Arc<Clock>)>,
    /// Ops enqueued, not started (they start in order).
    pending: VecDeque<Pending>,
    /// The op started last (a stream runs one op at a time).
    running: Option<(u64, Running)>,
}

struct Report {
    text: String,
    count: u64,
    last: (u64, u64, u64, u64),
}

#[derive(Default)]
struct State {
    streams: IntMap<u64, StreamState>,
    allocs: BTreeMap<usize, Alloc>,
    reports: HashMap<String, Report>,
    order: u64,
}

static STATE: std::sync::LazyLock<Mutex<State>> =
    std::sync::LazyLock::new(|| Mutex::new(State::default()));

static HOSTS: AtomicU64 = AtomicU64::new(1);

struct HostThread {
    comp: u64,
    tick: u64,
    clock: Arc<Clock>,
}

thread_local! {
    static HOST: RefCell<Option<HostThread>> = const { RefCell::new(None) };
    /// The API call being made on this thread (set by the C boundary while racecheck is on).
    static CALL: std::cell::Cell<&'static str> = const { std::cell::Cell::new("") };
    static SITE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn with_host<R>(f: impl FnOnce(&mut HostThread) -> R) -> R {
    HOST.with(|h| {
        let mut h = h.borrow_mut();
        let h = h.get_or_insert_with(|| {
            let comp = HOST_BASE + HOSTS.fetch_add(1, Ordering::Relaxed);
            let mut clock = Clock::default();
            clock.set(comp, 1);
            HostThread {
                comp,
                tick: 1,
                clock: Arc::new(clock),
            }
        });
        f(h)
    })
}

/// The C boundary names the call being made and where the user made it (for messages).
#[inline(never)]
pub fn set_call(name: &'static str) {
    CALL.with(|c| c.set(name));
    SITE.with(|c| c.set(caller::user_caller_fast(name.as_ptr() as usize)));
}

/// The call and call site the boundary recorded for the calling thread.
fn call_site() -> (&'static str, usize) {
    let call = CALL.with(|c| c.get());
    let site = SITE.with(|c| c.get());
    (if call.is_empty() { "(runtime)" } else { call }, site)
}

impl State {
    fn stream(&mut self, tag: StreamTag) -> &mut StreamState {
        self.streams.entry(tag.id).or_insert_with(|| StreamState {
            tag,
            last: Arc::new(Clock::default()),
            clocks: VecDeque::new(),
            pending: VecDeque::new(),
            running: None,
        })
    }

    /// The clock of point (stream, seq): its op `seq`, or the newest op before it.
    fn point_clock(&self, stream: u64, seq: u64) -> Option<Arc<Clock>> {
        let s = self.streams.get(&stream)?;
        let i = s.clocks.partition_point(|e| e.0 <= seq);
        s.clocks.get(i.saturating_sub(1)).map(|(_, c)| c.clone())
    }

    fn implicit(&self, tag: StreamTag) -> Vec<Arc<Clock>> {
        let wanted = match tag.kind {
            StreamKind::Default => StreamKind::Blocking,
            StreamKind::Blocking => StreamKind::Default,
            StreamKind::NonBlocking => return Vec::new(),
        };
        self.streams
            .values()
            .filter(|s| s.tag.device == tag.device && s.tag.kind == wanted && !s.last.0.is_empty())
            .map(|s| s.last.clone())
            .collect()
    }

    fn alloc_of(&self, p: usize) -> Option<usize> {
        let (&base, a) = self.allocs.range(..=p).next_back()?;
        (p < base + a.size.max(1)).then_some(base)
    }

    /// Checks `acc` against the history of allocation `base`, reports races, adds it.
    fn access(&mut self, base: usize, acc: Access) {
        let Some(a) = self.allocs.get_mut(&base) else {
            return;
        };
        let mut found = Vec::new();
        for p in &a.history {
            if Arc::ptr_eq(&p.op, &acc.op) || (p.op.comp == acc.op.comp && p.op.tick == acc.op.tick)
            {
                continue;
            }
            if p.start < acc.end
                && acc.start < p.end
                && (p.write || acc.write)
                && !p.before(&acc)
                && !acc.before(p)
            {
                found.push(p.clone());
            }
        }
        // Forget what the new access covers and follows.
        a.history.retain(|p| {
            !(p.before(&acc) && acc.start <= p.start && p.end <= acc.end && (acc.write || !p.write))
        });
        a.history.push(acc.clone());
        if a.history.len() > HISTORY {
            let drop = a.history.len() - HISTORY;
            a.history.drain(..drop);
        }
        let (size, device) = (a.size, a.device);
        for p in found {
            self.report(base, size, device, &p, &acc);
        }
    }

    fn report(&mut self, base: usize, size: usize, device: Option<usize>, x: &Access, y: &Access) {
        let (a, b) = if x.op.order <= y.op.order {
            (x, y)
        } else {
            (y, x)
        };
        // One race: the same two operations (by kind, name and stream) on the same allocation,
        // whichever of their accesses conflict; counted once per pair of op instances.
        let key = format!(
            "{}|{}|{:x}|{}|{}|{}|{:x}|{}|{base}",
            a.op.kind, a.op.name, a.op.code, a.op.comp, b.op.kind, b.op.name, b.op.code, b.op.comp
        );
        let instance = (a.op.comp, a.op.tick, b.op.comp, b.op.tick);
        if let Some(r) = self.reports.get_mut(&key) {
            if r.last != instance {
                r.last = instance;
                r.count += 1;
            }
            return;
        }
        let verb = |w: bool| if w { "writes" } else { "reads" };
        let lo = a.start.max(b.start);
        let hi = a.end.min(b.end);
        let memory = match device {
            Some(d) => format!("the {size}-byte device allocation at {base:#x} (device {d})"),
            None => format!("the {size}-byte page-locked host buffer at {base:#x}"),
        };
        let synchronous = |o: &OpInfo| matches!(o.call, "birenMemcpy" | "birenMemset");
        let fix = if synchronous(&b.op) && !a.op.is_host() {
            format!(
                "synchronize {} (or an event recorded after {}) before calling {}, or make {} wait for such an event",
                stream_name(a.op.comp),
                a.op.short(),
                b.op.call,
                stream_name(b.op.comp)
            )
        } else if b.op.is_host() {
            format!(
                "synchronize {} (or an event recorded after {}) before {}",
                stream_name(a.op.comp),
                a.op.short(),
                b.op.call
            )
        } else if a.op.is_host() {
            format!(
                "make {} wait until {} has returned before {} is enqueued",
                stream_name(b.op.comp),
                a.op.call,
                b.op.short()
            )
        } else {
            format!(
                "record an event after {} in {} and make {} wait for it (birenStreamWaitEvent) before {}",
                a.op.short(),
                stream_name(a.op.comp),
                stream_name(b.op.comp),
                b.op.short()
            )
        };
        let text = format!(
            "biren racecheck: {} {} bytes {}..{} and {} {} bytes {}..{} of {}, and nothing orders them \
             (no stream order, event wait, default-stream rule or host synchronization): they overlap at bytes {}..{}. \
             Fix: {fix}.",
            a.op.what(),
            verb(a.write),
            a.start - base,
            a.end - base,
            b.op.what(),
            verb(b.write),
            b.start - base,
            b.end - base,
            memory,
            lo - base,
            hi - base,
        );
        diagnostics::racecheck_line(&text);
        self.reports.insert(
            key,
            Report {
                text,
                count: 1,
                last: instance,
            },
        );
    }
}

/// An op was pushed on `stream` as op `seq` (called on the enqueueing thread).
pub fn pushed(tag: StreamTag, seq: u64, desc: OpDesc) {
    let host = with_host(|h| h.clock.clone());
    let (call, caller) = call_site();
    let mut st = STATE.lock();
    st.order += 1;
    let order = st.order;
    let implicit = st.implicit(tag);
    let op = Arc::new(OpInfo {
        kind: desc.kind,
        name: desc.name,
        code: desc.code,
        call,
        comp: tag.id,
        tick: seq,
        caller,
        order,
    });
    st.stream(tag).pending.push_back(Pending {
        seq,
        host,
        implicit,
        deps: Vec::new(),
        op,
        ranges: desc.ranges,
        words: desc.words,
    });
}

/// Op `seq` of `stream` found its dependency point (dep_stream, dep_seq) reached.
pub fn dep_reached(stream: u64, seq: u64, dep_stream: u64, dep_seq: u64) {
    let mut st = STATE.lock();
    if let Some(p) = st
        .streams
        .get_mut(&stream)
        .and_then(|s| s.pending.iter_mut().find(|p| p.seq == seq))
    {
        p.deps.push((dep_stream, dep_seq));
    }
}

/// An op that was complete when enqueued (an event record on an idle stream).
pub fn completed_at_once(tag: StreamTag, seq: u64) {
    let host = with_host(|h| h.clock.clone());
    let mut st = STATE.lock();
    let implicit = st.implicit(tag);
    let s = st.stream(tag);
    let mut c = (*s.last).clone();
    c.join(&host);
    for i in &implicit {
        c.join(i);
    }
    c.set(tag.id, seq);
    let c = Arc::new(c);
    s.last = c.clone();
    insert_clock(s, seq, c);
}

fn insert_clock(s: &mut StreamState, seq: u64, c: Arc<Clock>) {
    s.clocks.push_back((seq, c));
    if s.clocks.len() > CLOCKS {
        s.clocks.pop_front();
    }
}

/// Op `seq` of `stream` starts now: its clock is fixed and its accesses are checked.
pub fn started(stream: u64, seq: u64) {
    let kernel_allocs: Vec<(usize, usize)>;
    {
        let mut st = STATE.lock();
        let Some(s) = st.streams.get_mut(&stream) else {
            return;
        };
        // Ops start in order; ones withdrawn before they started are skipped.
        while s.pending.front().is_some_and(|p| p.seq < seq) {
            s.pending.pop_front();
        }
        if s.pending.front().is_none_or(|p| p.seq != seq) {
            return;
        }
        let p = s.pending.pop_front().expect("pending op");
        let mut c = (*s.last).clone();
        c.join(&p.host);
        for i in &p.implicit {
            c.join(i);
        }
        for (ds, dq) in &p.deps {
            if let Some(dc) = st.point_clock(*ds, *dq) {
                c.join(&dc);
            }
        }
        c.set(stream, seq);
        let clock = Arc::new(c);
        let s = st.streams.get_mut(&stream).expect("stream state");
        s.last = clock.clone();
        insert_clock(s, seq, clock.clone());
        for &(addr, len, write) in &p.ranges {
            if len == 0 {
                continue;
            }
            if let Some(base) = st.alloc_of(addr) {
                st.access(
                    base,
                    Access {
                        op: p.op.clone(),
                        clock: clock.clone(),
                        start: addr,
                        end: addr + len,
                        write,
                    },
                );
            }
        }
        let mut allocs: Vec<usize> = p.words.iter().filter_map(|&w| st.alloc_of(w)).collect();
        allocs.sort_unstable();
        allocs.dedup();
        kernel_allocs = allocs.iter().map(|&b| (b, st.allocs[&b].size)).collect();
        let small = kernel_allocs.iter().map(|a| a.1).sum::<usize>() <= SMALL;
        let digests = if small {
            kernel_allocs
                .iter()
                .map(|&(b, size)| (b, size, Snapshot::copy(b, size)))
                .collect()
        } else {
            Vec::new()
        };
        for &(b, size) in &kernel_allocs {
            st.access(
                b,
                Access {
                    op: p.op.clone(),
                    clock: clock.clone(),
                    start: b,
                    end: b + size,
                    write: false,
                },
            );
        }
        st.streams.get_mut(&stream).expect("stream state").running = Some((
            seq,
            Running {
                op: p.op,
                clock,
                digests,
            },
        ));
        if small {
            return;
        }
    }
    if kernel_allocs.is_empty() {
        return;
    }
    // Digests outside the lock (they read megabytes); the op has not started yet.
    let digests: Vec<(usize, usize, Snapshot)> = kernel_allocs
        .into_iter()
        .map(|(b, size)| (b, size, Snapshot::Digest(digest(b, size))))
        .collect();
    if let Some((_, r)) = STATE
        .lock()
        .streams
        .get_mut(&stream)
        .and_then(|s| s.running.as_mut())
        .filter(|r| r.0 == seq)
    {
        r.digests = digests;
    }
}

/// Op `seq` of `stream` has finished running: a kernel's writes are found and checked.
pub fn finished(stream: u64, seq: u64) {
    let mut st = STATE.lock();
    let Some((_, r)) = st
        .streams
        .get_mut(&stream)
        .and_then(|s| s.running.take_if(|r| r.0 == seq))
    else {
        return;
    };
    if r.digests.is_empty() {
        return;
    }
    // A page-locked buffer freed meanwhile (a race reported at birenFreeHost) is not read again.
    let live: Vec<bool> = r
        .digests
        .iter()
        .map(|d| st.allocs.contains_key(&d.0))
        .collect();
    // Small allocations are digested under the lock (cheaper than taking it again).
    let small = r.digests.iter().map(|d| d.1).sum::<usize>() <= SMALL;
    let mut guard = if small {
        Some(st)
    } else {
        drop(st);
        None
    };
    let mut writes = Vec::new();
    for ((b, size, before), _) in r.digests.iter().zip(live).filter(|x| x.1) {
        let changed = before.changed(*b, *size);
        let mut i = 0;
        while i < changed.len() {
            if changed[i] {
                let j = (i..changed.len())
                    .find(|&j| !changed[j])
                    .unwrap_or(changed.len());
                writes.push((*b, b + i * CHUNK, (b + j * CHUNK).min(b + size)));
                i = j;
            } else {
                i += 1;
            }
        }
    }
    let mut st = guard.take().unwrap_or_else(|| STATE.lock());
    for (b, start, end) in writes {
        // A change that an unordered write by another op explains is that op's (the race
        // between the two is reported with this kernel's read already).
        let explained = st.allocs.get(&b).is_none_or(|a| {
            a.history.iter().any(|p| {
                p.write
                    && !Arc::ptr_eq(&p.op, &r.op)
                    && p.start <= start
                    && end <= p.end
                    && p.op.tick > r.clock.get(p.op.comp)
            })
        });
        if !explained {
            st.access(
                b,
                Access {
                    op: r.op.clone(),
                    clock: r.clock.clone(),
                    start,
                    end,
                    write: true,
                },
            );
        }
    }
}

/// A host function of op (stream, seq) is about to run on this thread: the thread takes its clock.
pub fn host_function_enters(stream: u64, seq: u64) {
    let c = STATE.lock().point_clock(stream, seq);
    with_host(|h| {
        let comp = h.comp;
        let tick = h.tick;
        let mut clock = c.map(|c| (*c).clone()).unwrap_or_default();
        clock.set(comp, tick);
        h.clock = Arc::new(clock);
    });
}

/// The calling host thread has waited for points (stream, seq): it knows their clocks.
pub fn host_synced(points: &[(u64, u64)]) {
    let st = STATE.lock();
    let clocks: Vec<Arc<Clock>> = points
        .iter()
        .filter_map(|&(s, q)| st.point_clock(s, q))
        .collect();
    drop(st);
    with_host(|h| {
        let clock = Arc::make_mut(&mut h.clock);
        for c in clocks {
            clock.join(&c);
        }
    });
}

/// A new allocation: device memory (`Some(device)`) or page-locked host memory.
pub fn alloc(base: usize, size: usize, device: Option<usize>) {
    STATE.lock().allocs.insert(
        base,
        Alloc {
            size,
            device,
            history: Vec::new(),
        },
    );
}

/// `birenFree`: the runtime keeps device memory until the work enqueued before the free has
/// completed, so freeing is no hazard; the history is forgotten.
pub fn freed(base: usize) {
    STATE.lock().allocs.remove(&base);
}

/// `birenFreeHost` of a page-locked buffer: released at once, so it is a write of the whole
/// buffer by the calling host thread, checked against every unfinished access.
pub fn host_buffer_freed(base: usize) {
    let (op, clock) = host_access_op();
    let mut st = STATE.lock();
    let Some(size) = st.allocs.get(&base).map(|a| a.size) else {
        return;
    };
    st.access(
        base,
        Access {
            op,
            clock,
            start: base,
            end: base + size,
            write: true,
        },
    );
    st.allocs.remove(&base);
}

fn host_access_op() -> (Arc<OpInfo>, Arc<Clock>) {
    let (call, caller) = call_site();
    let (comp, tick, clock) = with_host(|h| {
        h.tick += 1;
        let (comp, tick) = (h.comp, h.tick);
        Arc::make_mut(&mut h.clock).set(comp, tick);
        (comp, tick, h.clock.clone())
    });
    let order = {
        let mut st = STATE.lock();
        st.order += 1;
        st.order
    };
    (
        Arc::new(OpInfo {
            kind: "host access",
            name: String::new(),
            code: 0,
            call,
            comp,
            tick,
            caller,
            order,
        }),
        clock,
    )
}

/// A device reset: its streams and memory are gone.
pub fn reset_device(device: usize) {
    let mut st = STATE.lock();
    let gone: Vec<u64> = st
        .streams
        .iter()
        .filter(|(_, s)| s.tag.device == device)
        .map(|(&id, _)| id)
        .collect();
    for id in &gone {
        st.streams.remove(id);
    }
    st.allocs.retain(|_, a| a.device != Some(device));
}

/// The races found so far: (first report, how many times seen), in no particular order.
pub fn races() -> Vec<(String, u64)> {
    STATE
        .lock()
        .reports
        .values()
        .map(|r| (r.text.clone(), r.count))
        .collect()
}

/// At exit: how many distinct races were found and how often each was seen.
pub fn exit_summary() {
    if !on() {
        return;
    }
    let r = races();
    if r.is_empty() {
        return;
    }
    let total: u64 = r.iter().map(|x| x.1).sum();
    let mut lines = format!(
        "biren racecheck: {} distinct race(s) found, {total} occurrence(s) in all:",
        r.len()
    );
    for (t, n) in &r {
        let head: String = t
            .trim_start_matches("biren racecheck: ")
            .chars()
            .take(160)
            .collect();
        lines.push_str(&format!("\n  {n} x {head}..."));
    }
    diagnostics::racecheck_line(&lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(v: &[(u64, u64)]) -> Clock {
        let mut c = Clock::default();
        for &(k, t) in v {
            c.set(k, t);
        }
        c
    }

    fn op(comp: u64, tick: u64) -> Arc<OpInfo> {
        Arc::new(OpInfo {
            kind: "kernel",
            name: "k".into(),
            code: 0,
            call: "test",
            comp,
            tick,
            caller: 0,
            order: comp * 100 + tick,
        })
    }

    #[test]
    fn unordered_conflicts_are_races_ordered_ones_not() {
        let mut st = State::default();
        st.allocs.insert(
            0x1000,
            Alloc {
                size: 100,
                device: Some(0),
                history: Vec::new(),
            },
        );
        let acc = |comp, tick, c: &[(u64, u64)], s, e, w| Access {
            op: op(comp, tick),
            clock: Arc::new(clock(c)),
            start: s,
            end: e,
            write: w,
        };
        // stream 1 op 1 writes [0x1000, 0x1010)
        st.access(0x1000, acc(1, 1, &[(1, 1)], 0x1000, 0x1010, true));
        // stream 2 op 1 reads a disjoint range: no race
        st.access(0x1000, acc(2, 1, &[(2, 1)], 0x1010, 0x1020, false));
        assert!(st.reports.is_empty());
        // stream 2 op 2, ordered after stream 1 op 1, reads the written range: no race
        st.access(0x1000, acc(2, 2, &[(1, 1), (2, 2)], 0x1000, 0x1008, false));
        assert!(st.reports.is_empty());
        // stream 3 op 1 writes unordered: race with the write and with both reads
        st.access(0x1000, acc(3, 1, &[(3, 1)], 0x1000, 0x1040, true));
        assert_eq!(
            st.reports.len(),
            2,
            "one report per pair of (op, op) kinds and streams"
        );
        // the same pattern again counts, not reports
        st.access(0x1000, acc(3, 2, &[(3, 2)], 0x1000, 0x1040, true));
        assert_eq!(st.reports.len(), 2);
        assert!(st.reports.values().any(|r| r.count > 1));
    }
}
