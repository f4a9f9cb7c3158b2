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
//! host memory (birenMallocHost); pageable host memory is not tracked. 2D/3D copies and fills:
//! their exact rows (a row pattern per slice; a 3D transfer of more than 16 slices that are not
//! one pattern is tracked by the bounding range of each side). Kernels: every 8-byte word of
//! their copied argument values that points into a known allocation names that allocation; the
//! kernel is assumed to read all of it, and its writes are found by comparing a digest of each
//! 256-byte chunk before and after it ran. A host thread's birenFreeHost writes the whole
//! buffer. A birenFreeAsync writes the whole allocation at its point in stream order (the
//! points of `free_async`). Plain loads and stores by host code are invisible.
//!
//! **Graphs.** A graph launch is one op in its stream (its clock orders it against other
//! streams); each of its nodes is an access set of its own (kernel, copy and fill nodes as
//! above), and two nodes of one launch are ordered only if a path of edges leads from one to the
//! other (`Reach`). Host nodes run with the launch's clock.
//!
//! **Cost.** An op that touches no memory and joins nothing new (no event wait, no new
//! host-thread or default-stream clock) builds no clock of its own: the clock of the op before
//! it in its stream stands for it, which orders exactly the same accesses.
//!
//! Off, every hook is one relaxed atomic load (`on()`).

use crate::runtime::diagnostics::{self, caller};
use crate::runtime::ids::{self, stream_name};
use crate::runtime::lock_order::{Rank, RankedGuard, RankedMutex};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};

mod clock;
mod reach;
mod snapshot;

pub use clock::Clock;
use clock::IntMap;
pub use reach::Reach;
use snapshot::{digest, Snapshot, CHUNK};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

static ON: AtomicBool = AtomicBool::new(false);
/// Things `finished` has to look at (kernels being digested, graph launches running): when 0,
/// it returns without taking the lock.
static TO_FINISH: AtomicUsize = AtomicUsize::new(0);

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
        TO_FINISH.store(0, Ordering::Relaxed);
    }
    ON.store(enable, Ordering::Relaxed);
}

/// Kernel allocations up to this many bytes in all are digested under the state's lock.
const SMALL: usize = 64 << 10;
/// Accesses kept per allocation (older ones are forgotten: races with them go unseen).
const HISTORY: usize = 64;
/// Slices of a 3D transfer tracked row by row (more: the bounding range of each side).
const SLICES: usize = 16;
/// Op clocks kept per stream (a dependency on an older op uses the oldest one kept).
const CLOCKS: usize = 1024;

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

/// Bytes an op touches: `rows` rows of `len` bytes, `pitch` bytes apart, from `addr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub addr: usize,
    pub len: usize,
    pub rows: usize,
    pub pitch: usize,
    pub write: bool,
}

impl Range {
    /// Contiguous bytes.
    pub fn flat(addr: usize, len: usize, write: bool) -> Range {
        Range {
            addr,
            len,
            rows: 1,
            pitch: 0,
            write,
        }
    }

    /// One side of a 2D/3D transfer: `depth` slices `slice` bytes apart of `height` rows
    /// `pitch` bytes apart, each `width` bytes. Exact rows, as few patterns as possible.
    pub fn strided(
        base: usize,
        width: usize,
        height: usize,
        depth: usize,
        pitch: usize,
        slice: usize,
        write: bool,
    ) -> Vec<Range> {
        if width == 0 || height == 0 || depth == 0 {
            return Vec::new();
        }
        let pattern = |addr: usize, rows: usize| {
            if rows <= 1 || pitch <= width {
                // One row, or rows that touch or overlap: one contiguous span.
                Range::flat(addr, (rows - 1) * pitch + width, write)
            } else {
                Range {
                    addr,
                    len: width,
                    rows,
                    pitch,
                    write,
                }
            }
        };
        if depth == 1 || slice == pitch * height {
            return vec![pattern(base, height * depth)];
        }
        if depth <= SLICES {
            return (0..depth)
                .map(|z| pattern(base + z * slice, height))
                .collect();
        }
        let span = (depth - 1) * slice + (height - 1) * pitch + width;
        vec![Range::flat(base, span, write)]
    }

    fn span(&self) -> usize {
        (self.rows.max(1) - 1) * self.pitch + self.len
    }
}

/// What an enqueued op is and what it touches, as the exec layer describes it.
pub struct OpDesc {
    /// "kernel", "memcpy", "memset", "host function", "event record", "event wait", ...
    pub kind: &'static str,
    /// The kernel's registered name, or empty.
    pub name: String,
    /// The kernel's address (its symbol names it when it is not registered), or 0.
    pub code: usize,
    /// Exact byte ranges.
    pub ranges: Vec<Range>,
    /// Kernel argument words (pointer candidates).
    pub words: Vec<usize>,
    /// A graph launch: its nodes.
    pub graph: Option<Arc<GraphDesc>>,
}

/// An executable graph as race detection sees it: per node what it touches, and which node
/// is ordered before which.
pub struct GraphDesc {
    pub nodes: Vec<NodeDesc>,
    pub reach: Reach,
}

/// One node of a graph launch.
pub struct NodeDesc {
    /// "graph exec #E node P: what it does".
    pub label: String,
    pub ranges: Vec<Range>,
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
    /// A node of a graph launch: the graph and the node's index.
    node: Option<(Arc<GraphDesc>, u32)>,
}

impl OpInfo {
    #[cfg(test)]
    fn clone_info(&self) -> OpInfo {
        OpInfo {
            kind: self.kind,
            name: self.name.clone(),
            code: self.code,
            call: self.call,
            comp: self.comp,
            tick: self.tick,
            caller: self.caller,
            order: self.order,
            node: self.node.clone(),
        }
    }

    fn is_host(&self) -> bool {
        ids::is_host(self.comp)
    }
    /// The kernel's name: registered, or its symbol, or its address.
    fn name(&self) -> String {
        if !self.name.is_empty() || self.code == 0 || self.kind == FREE {
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
        if self.kind == FREE {
            return format!(
                "{} in {} (called from {})",
                self.call,
                stream_name(self.code as u64),
                caller::site(self.caller)
            );
        }
        if self.is_host() {
            return format!(
                "{} by host thread #{} (called from {})",
                self.call,
                self.comp - ids::HOST_BASE,
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
        if self.node.is_some() {
            // "graph exec #E node P: ..." -> the launch, for fixes between streams.
            let exec = name.split(" node ").next().unwrap_or(&name);
            return format!("the launch of {exec}");
        }
        if name.is_empty() {
            format!("the {}", self.kind)
        } else {
            format!("the {} '{name}'", self.kind)
        }
    }
}

/// The kind of a stream-ordered free (its `code` is the stream's id).
const FREE: &str = "stream-ordered free";

#[derive(Clone)]
struct Access {
    op: Arc<OpInfo>,
    clock: Arc<Clock>,
    /// From the first byte of the first row to the end of the last row.
    start: usize,
    end: usize,
    /// Rows of `width` bytes `pitch` apart (one row: width = end - start).
    width: usize,
    pitch: usize,
    rows: usize,
    write: bool,
}

impl Access {
    fn new(op: &Arc<OpInfo>, clock: &Arc<Clock>, start: usize, end: usize, write: bool) -> Access {
        Access {
            op: op.clone(),
            clock: clock.clone(),
            start,
            end,
            width: end - start,
            pitch: 0,
            rows: 1,
            write,
        }
    }

    fn of_range(op: &Arc<OpInfo>, clock: &Arc<Clock>, r: &Range) -> Access {
        let mut a = Access::new(op, clock, r.addr, r.addr + r.span(), r.write);
        if r.rows > 1 {
            a.width = r.len;
            a.pitch = r.pitch;
            a.rows = r.rows;
        }
        a
    }

    /// True if `self` happens before `o`. Two accesses of one op are ordered, except those of
    /// two nodes of one graph launch: ordered if a path of edges leads from one to the other.
    fn before(&self, o: &Access) -> bool {
        if self.op.comp == o.op.comp && self.op.tick == o.op.tick {
            return match (&self.op.node, &o.op.node) {
                (Some((g, i)), Some((_, j))) => g.reach.reaches(*i, *j),
                _ => true,
            };
        }
        self.op.tick <= o.clock.get(self.op.comp)
    }

    /// True if some row of `self` meets [s, e).
    fn meets(&self, s: usize, e: usize) -> bool {
        if self.rows <= 1 {
            return self.start < e && s < self.end;
        }
        // The first row that ends after s; it or no row starts before e.
        let k = if s < self.start + self.width {
            0
        } else {
            (s - self.start - self.width) / self.pitch + 1
        };
        k < self.rows && self.start + k * self.pitch < e
    }

    /// True if the two touch a common byte.
    fn overlaps(&self, o: &Access) -> bool {
        if !(self.start < o.end && o.start < self.end) {
            return false;
        }
        let (x, y) = if self.rows <= o.rows {
            (self, o)
        } else {
            (o, self)
        };
        if x.rows <= 1 {
            return y.meets(x.start, x.end);
        }
        (0..x.rows).any(|r| {
            let s = x.start + r * x.pitch;
            y.meets(s, s + x.width)
        })
    }

    /// True if every byte of `o` is one of `self`'s.
    fn covers(&self, o: &Access) -> bool {
        self.rows <= 1 && self.start <= o.start && o.end <= self.end
    }
}

struct Alloc {
    size: usize,
    device: Option<usize>,
    /// Freed in stream order (birenFreeAsync): its bytes are not read any more.
    freed: bool,
    history: Vec<Access>,
}

struct Pending {
    seq: u64,
    /// The enqueueing host thread's clock.
    host: Arc<Clock>,
    /// The default-stream rule's predecessors (their latest started ops at enqueue).
    implicit: Vec<Arc<Clock>>,
    deps: Vec<(u64, u64)>,
    /// Made an `Arc` only if the op touches memory.
    op: OpInfo,
    ranges: Vec<Range>,
    words: Vec<usize>,
    graph: Option<Arc<GraphDesc>>,
}

/// Kernel allocations and what they held before the kernel ran.
type Digests = Vec<(usize, usize, Snapshot)>;

struct Running {
    op: Arc<OpInfo>,
    clock: Arc<Clock>,
    digests: Digests,
}

/// A graph launch running in a stream: its nodes as ops, and its kernel nodes being digested.
struct GraphRunning {
    seq: u64,
    desc: Arc<GraphDesc>,
    clock: Arc<Clock>,
    nodes: Vec<Arc<OpInfo>>,
    digests: IntMap<u32, Digests>,
}

struct StreamState {
    tag: StreamTag,
    last: Arc<Clock>,
    /// The host-thread and default-stream clocks `last` has joined (ops bringing the same
    /// ones need no clock of their own).
    joined_host: Option<Arc<Clock>>,
    joined_implicit: Vec<Arc<Clock>>,
    /// The op started last (0: none).
    started: u64,
    /// Clocks of its recent ops, by op number (increasing).
    clocks: VecDeque<(u64, Arc<Clock>)>,
    /// Ops enqueued, not started (they start in order).
    pending: VecDeque<Pending>,
    /// The op started last, if it is a kernel whose writes are to be found.
    running: Option<(u64, Running)>,
    /// The graph launch started last, while it runs.
    graph: Option<GraphRunning>,
}

/// A birenFreeAsync waiting for the ops it follows to start (their clocks are its clock).
struct PendingFree {
    base: usize,
    op: Arc<OpInfo>,
    host: Arc<Clock>,
    points: Vec<(u64, u64)>,
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
    frees: Vec<PendingFree>,
    /// Buffers of small snapshots, kept for the next ones (a 4 KiB malloc and free per kernel
    /// cost more than the copy).
    spare: Vec<Vec<u8>>,
}

/// Spare snapshot buffers kept.
const SPARE: usize = 16;

static STATE: std::sync::LazyLock<RankedMutex<State>> =
    std::sync::LazyLock::new(|| RankedMutex::new(Rank::RaceState, State::default()));

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
            let comp = ids::next_host();
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
            joined_host: None,
            joined_implicit: Vec::new(),
            started: 0,
            clocks: VecDeque::new(),
            pending: VecDeque::new(),
            running: None,
            graph: None,
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
            if Arc::ptr_eq(&p.op, &acc.op) {
                continue;
            }
            if (p.write || acc.write) && p.overlaps(&acc) && !p.before(&acc) && !acc.before(p) {
                found.push(p.clone());
            }
        }
        // Forget what the new access covers and follows.
        a.history
            .retain(|p| !(p.before(&acc) && acc.covers(p) && (acc.write || !p.write)));
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
        // Program order; two nodes of one launch: the graph's node order.
        let node = |a: &Access| a.op.node.as_ref().map_or(0, |n| n.1);
        let (a, b) = if (x.op.order, node(x)) <= (y.op.order, node(y)) {
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
        let bytes = |x: &Access| {
            if x.rows > 1 {
                format!(
                    "{} rows of {} bytes {} apart, bytes {}..{}",
                    x.rows,
                    x.width,
                    x.pitch,
                    x.start - base,
                    x.end - base
                )
            } else {
                format!("bytes {}..{}", x.start - base, x.end - base)
            }
        };
        let lo = a.start.max(b.start);
        let hi = a.end.min(b.end);
        let memory = match device {
            Some(d) => format!("the {size}-byte device allocation at {base:#x} (device {d})"),
            None => format!("the {size}-byte page-locked host buffer at {base:#x}"),
        };
        let synchronous = |o: &OpInfo| matches!(o.call, "birenMemcpy" | "birenMemset");
        let same_launch = a.op.node.is_some()
            && b.op.node.is_some()
            && a.op.comp == b.op.comp
            && a.op.tick == b.op.tick;
        let fix = if same_launch {
            format!(
                "add an edge (birenGraphAddDependencies, or stream order or an event while capturing) \
                 from node '{}' to node '{}' in the graph, or make them touch different bytes",
                a.op.name,
                b.op.name
            )
        } else if b.op.kind == FREE {
            format!(
                "record an event after {} in {} and make {} wait for it before birenFreeAsync \
                 (or free the memory in {})",
                a.op.short(),
                stream_name(a.op.comp),
                stream_name(b.op.code as u64),
                stream_name(a.op.comp)
            )
        } else if a.op.kind == FREE {
            format!(
                "the memory was freed in {} by birenFreeAsync: order {} before that free \
                 (an event recorded after it, waited for in {}), or do not use the memory after it",
                stream_name(a.op.code as u64),
                b.op.short(),
                stream_name(a.op.code as u64)
            )
        } else if synchronous(&b.op) && !a.op.is_host() {
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
            "biren racecheck: {} {} {} and {} {} {} of {}, and nothing orders them \
             (no stream order, event wait, default-stream rule, graph edge or host synchronization): \
             they overlap {} bytes {}..{}. Fix: {fix}.",
            a.op.what(),
            verb(a.write),
            bytes(a),
            b.op.what(),
            verb(b.write),
            bytes(b),
            memory,
            if a.rows > 1 || b.rows > 1 { "within" } else { "at" },
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
    let op = OpInfo {
        kind: desc.kind,
        name: desc.name,
        code: desc.code,
        call,
        comp: tag.id,
        tick: seq,
        caller,
        order,
        node: None,
    };
    st.stream(tag).pending.push_back(Pending {
        seq,
        host,
        implicit,
        deps: Vec::new(),
        op,
        ranges: desc.ranges,
        words: desc.words,
        graph: desc.graph,
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
    s.joined_host = Some(host);
    s.joined_implicit = implicit;
    s.started = s.started.max(seq);
    insert_clock(s, seq, c);
    st.check_frees();
}

fn insert_clock(s: &mut StreamState, seq: u64, c: Arc<Clock>) {
    s.clocks.push_back((seq, c));
    if s.clocks.len() > CLOCKS {
        s.clocks.pop_front();
    }
}

/// True if `p` joins nothing that `s.last` has not joined already.
fn nothing_new(s: &StreamState, p: &Pending) -> bool {
    p.deps.is_empty()
        && s.joined_host
            .as_ref()
            .is_some_and(|h| Arc::ptr_eq(h, &p.host))
        && p.implicit.len() == s.joined_implicit.len()
        && p.implicit
            .iter()
            .zip(&s.joined_implicit)
            .all(|(a, b)| Arc::ptr_eq(a, b))
}

impl State {
    /// The allocations kernel argument `words` point into (sorted, once each), with sizes and
    /// whether their bytes may be read (not freed).
    fn kernel_allocs(&self, words: &[usize]) -> Vec<(usize, usize, bool)> {
        let mut allocs: Vec<usize> = words.iter().filter_map(|&w| self.alloc_of(w)).collect();
        allocs.sort_unstable();
        allocs.dedup();
        allocs
            .iter()
            .map(|&b| (b, self.allocs[&b].size, !self.allocs[&b].freed))
            .collect()
    }

    /// Checks and records the accesses an op's description names: its ranges, and a read of
    /// every allocation its kernel arguments point into. Returns those allocations.
    fn record_accesses(
        &mut self,
        op: &Arc<OpInfo>,
        clock: &Arc<Clock>,
        ranges: &[Range],
        words: &[usize],
    ) -> Vec<(usize, usize, bool)> {
        for r in ranges {
            if r.len == 0 || r.rows == 0 {
                continue;
            }
            if let Some(base) = self.alloc_of(r.addr) {
                self.access(base, Access::of_range(op, clock, r));
            }
        }
        let allocs = self.kernel_allocs(words);
        for &(b, size, _) in &allocs {
            self.access(b, Access::new(op, clock, b, b + size, false));
        }
        allocs
    }

    /// Frees whose points have all started are checked now (their clocks are known).
    fn check_frees(&mut self) {
        if self.frees.is_empty() {
            return;
        }
        let mut i = 0;
        while i < self.frees.len() {
            let f = &self.frees[i];
            let ready = f
                .points
                .iter()
                .all(|&(s, q)| self.streams.get(&s).is_none_or(|st| st.started >= q));
            if !ready {
                i += 1;
                continue;
            }
            let f = self.frees.swap_remove(i);
            let mut c = (*f.host).clone();
            for &(s, q) in &f.points {
                if let Some(pc) = self.point_clock(s, q) {
                    c.join(&pc);
                }
            }
            let clock = Arc::new(c);
            if let Some(size) = self.allocs.get(&f.base).map(|a| a.size) {
                self.access(
                    f.base,
                    Access::new(&f.op, &clock, f.base, f.base + size, true),
                );
            }
        }
    }
}

/// Takes a copy or digest of `allocs` (those whose bytes may be read); small ones under the
/// lock `st`, which is given back.
fn snapshots(
    mut st: RankedGuard<'static, State>,
    allocs: &[(usize, usize, bool)],
) -> (Option<RankedGuard<'static, State>>, Digests) {
    let live = || allocs.iter().filter(|a| a.2).map(|a| (a.0, a.1));
    if live().map(|a| a.1).sum::<usize>() <= SMALL {
        let d = live()
            .map(|(b, size)| {
                let buf = st.spare.pop().unwrap_or_default();
                (b, size, Snapshot::copy_into(b, size, buf))
            })
            .collect();
        return (Some(st), d);
    }
    // Digests outside the lock (they read megabytes); the op has not started yet.
    drop(st);
    let d = live()
        .map(|(b, size)| (b, size, Snapshot::Digest(digest(b, size))))
        .collect();
    (None, d)
}

/// Op `seq` of `stream` starts now: its clock is fixed and its accesses are checked.
pub fn started(stream: u64, seq: u64) {
    let mut st = STATE.lock();
    let Some(s) = st.streams.get_mut(&stream) else {
        return;
    };
    s.started = s.started.max(seq);
    // Ops start in order; ones withdrawn before they started are skipped.
    while s.pending.front().is_some_and(|p| p.seq < seq) {
        s.pending.pop_front();
    }
    if s.pending.front().is_none_or(|p| p.seq != seq) {
        if !st.frees.is_empty() {
            st.check_frees();
        }
        return;
    }
    let p = s.pending.pop_front().expect("pending op");
    if p.ranges.is_empty() && p.words.is_empty() && p.graph.is_none() && nothing_new(s, &p) {
        // Touches nothing, brings no new order: the previous op's clock stands for it.
        if !st.frees.is_empty() {
            st.check_frees();
        }
        return;
    }
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
    s.joined_host = Some(p.host);
    s.joined_implicit = p.implicit;
    insert_clock(s, seq, clock.clone());
    st.check_frees();
    if let Some(g) = p.graph {
        graph_started(&mut st, stream, seq, p.op, g, clock);
        return;
    }
    if p.ranges.is_empty() && p.words.is_empty() {
        return;
    }
    let op = Arc::new(p.op);
    let allocs = st.record_accesses(&op, &clock, &p.ranges, &p.words);
    if !allocs.iter().any(|a| a.2) {
        return;
    }
    let (guard, digests) = snapshots(st, &allocs);
    let mut st = guard.unwrap_or_else(|| STATE.lock());
    if let Some(s) = st.streams.get_mut(&stream) {
        if s.started == seq {
            s.running = Some((seq, Running { op, clock, digests }));
            TO_FINISH.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A graph launch starts: its nodes become ops with the launch's clock, and what they are
/// known to touch (copy and fill ranges, kernel reads) is checked now.
fn graph_started(
    st: &mut State,
    stream: u64,
    seq: u64,
    launch: OpInfo,
    g: Arc<GraphDesc>,
    clock: Arc<Clock>,
) {
    let nodes: Vec<Arc<OpInfo>> = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            Arc::new(OpInfo {
                kind: "graph node",
                name: n.label.clone(),
                code: 0,
                call: launch.call,
                comp: launch.comp,
                tick: launch.tick,
                caller: launch.caller,
                order: launch.order,
                node: Some((g.clone(), i as u32)),
            })
        })
        .collect();
    for (n, op) in g.nodes.iter().zip(&nodes) {
        st.record_accesses(op, &clock, &n.ranges, &n.words);
    }
    if let Some(s) = st.streams.get_mut(&stream) {
        if s.graph.take().is_some() {
            TO_FINISH.fetch_sub(1, Ordering::Relaxed);
        }
        s.graph = Some(GraphRunning {
            seq,
            desc: g,
            clock,
            nodes,
            digests: IntMap::default(),
        });
        TO_FINISH.fetch_add(1, Ordering::Relaxed);
    }
}

/// Node `node` of the graph launch that is op `seq` of `stream` starts (a kernel node: what
/// its allocations hold now is kept, to find its writes).
pub fn graph_node_starts(stream: u64, seq: u64, node: u32) {
    let st = STATE.lock();
    let Some(words) = st
        .streams
        .get(&stream)
        .and_then(|s| s.graph.as_ref())
        .filter(|g| g.seq == seq)
        .and_then(|g| g.desc.nodes.get(node as usize))
        .map(|n| n.words.clone())
    else {
        return;
    };
    let allocs = st.kernel_allocs(&words);
    if !allocs.iter().any(|a| a.2) {
        return;
    }
    let (guard, digests) = snapshots(st, &allocs);
    let mut st = guard.unwrap_or_else(|| STATE.lock());
    if let Some(g) = st
        .streams
        .get_mut(&stream)
        .and_then(|s| s.graph.as_mut())
        .filter(|g| g.seq == seq)
    {
        g.digests.insert(node, digests);
    }
}

/// Node `node` of the graph launch that is op `seq` of `stream` has finished: a kernel node's
/// writes are found and checked.
pub fn graph_node_finished(stream: u64, seq: u64, node: u32) {
    let mut st = STATE.lock();
    let Some((op, clock, digests)) = st
        .streams
        .get_mut(&stream)
        .and_then(|s| s.graph.as_mut())
        .filter(|g| g.seq == seq)
        .and_then(|g| {
            let d = g.digests.remove(&node)?;
            Some((g.nodes[node as usize].clone(), g.clock.clone(), d))
        })
    else {
        return;
    };
    find_writes(st, &op, &clock, digests);
}

/// Op `seq` of `stream` has finished running: a kernel's writes are found and checked.
pub fn finished(stream: u64, seq: u64) {
    if TO_FINISH.load(Ordering::Relaxed) == 0 {
        return;
    }
    let mut st = STATE.lock();
    let Some(s) = st.streams.get_mut(&stream) else {
        return;
    };
    if s.graph.as_ref().is_some_and(|g| g.seq == seq) {
        s.graph = None;
        TO_FINISH.fetch_sub(1, Ordering::Relaxed);
        return;
    }
    let Some((_, r)) = s.running.take_if(|r| r.0 == seq) else {
        return;
    };
    TO_FINISH.fetch_sub(1, Ordering::Relaxed);
    find_writes(st, &r.op, &r.clock, r.digests);
}

/// Compares what `op`'s allocations hold now with `digests` and records the changed chunks as
/// its writes.
fn find_writes(
    st: RankedGuard<'static, State>,
    op: &Arc<OpInfo>,
    clock: &Arc<Clock>,
    digests: Digests,
) {
    if digests.is_empty() {
        return;
    }
    // A buffer freed meanwhile (a race reported at its free) is not read again.
    let live: Vec<bool> = digests
        .iter()
        .map(|d| st.allocs.get(&d.0).is_some_and(|a| !a.freed))
        .collect();
    // Small allocations are compared under the lock (cheaper than taking it again).
    let small = digests.iter().map(|d| d.1).sum::<usize>() <= SMALL;
    let mut guard = if small {
        Some(st)
    } else {
        drop(st);
        None
    };
    let mut writes = Vec::new();
    for ((b, size, before), _) in digests.iter().zip(live).filter(|x| x.1) {
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
    for (_, _, snap) in digests {
        if st.spare.len() < SPARE {
            if let Some(buf) = snap.into_buffer() {
                st.spare.push(buf);
            }
        }
    }
    for (b, start, end) in writes {
        let acc = Access::new(op, clock, start, end, true);
        // A change that an unordered write by another op explains is that op's (the race
        // between the two is reported with this kernel's read already).
        let explained = st.allocs.get(&b).is_none_or(|a| {
            a.history
                .iter()
                .any(|p| p.write && !Arc::ptr_eq(&p.op, op) && p.covers(&acc) && !p.before(&acc))
        });
        if !explained {
            st.access(b, acc);
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

/// A new allocation: device memory (`Some(device)`) or page-locked host memory. Whatever was
/// tracked of memory it reuses (a stream-ordered free whose point was reached) is forgotten:
/// the allocator hands out only memory whose free is complete, which CUDA's pools make safe.
pub fn alloc(base: usize, size: usize, device: Option<usize>) {
    let mut st = STATE.lock();
    let end = base + size.max(1);
    let old: Vec<usize> = st
        .allocs
        .range(..end)
        .rev()
        .take_while(|(&b, a)| b + a.size.max(1) > base)
        .map(|(&b, _)| b)
        .collect();
    for b in old {
        st.allocs.remove(&b);
    }
    st.allocs.insert(
        base,
        Alloc {
            size,
            device,
            freed: false,
            history: Vec::new(),
        },
    );
}

/// `birenFree`: the runtime keeps device memory until the work enqueued before the free has
/// completed, so freeing is no hazard; the history is forgotten.
pub fn freed(base: usize) {
    STATE.lock().allocs.remove(&base);
}

/// `birenFreeAsync(base, stream)`: the free is a write of the whole allocation that comes after
/// the points (stream, op) it waits for (the stream's ops so far, and the default-stream rule's)
/// and after what the calling thread knows; work not ordered before it that uses the memory is a
/// race (a use after free). Checked once those ops have started (their clocks are known).
pub fn free_async(base: usize, stream: u64, points: Vec<(u64, u64)>) {
    let (mut op, host) = host_access_op();
    Arc::get_mut(&mut op).expect("new op").kind = FREE;
    Arc::get_mut(&mut op).expect("new op").code = stream as usize;
    let mut st = STATE.lock();
    let Some(a) = st.allocs.get_mut(&base) else {
        return;
    };
    a.freed = true;
    st.frees.push(PendingFree {
        base,
        op,
        host,
        points,
    });
    st.check_frees();
}

/// `birenFreeHost` of a page-locked buffer: released at once, so it is a write of the whole
/// buffer by the calling host thread, checked against every unfinished access.
pub fn host_buffer_freed(base: usize) {
    let (op, clock) = host_access_op();
    let mut st = STATE.lock();
    let Some(size) = st.allocs.get(&base).map(|a| a.size) else {
        return;
    };
    st.access(base, Access::new(&op, &clock, base, base + size, true));
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
            node: None,
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
            node: None,
        })
    }

    fn state_with_100_bytes_at_0x1000() -> State {
        let mut st = State::default();
        st.allocs.insert(
            0x1000,
            Alloc {
                size: 100,
                device: Some(0),
                freed: false,
                history: Vec::new(),
            },
        );
        st
    }

    #[test]
    fn unordered_conflicts_are_races_ordered_ones_not() {
        let mut st = state_with_100_bytes_at_0x1000();
        let acc = |comp, tick, c: &[(u64, u64)], s, e, w| {
            Access::new(&op(comp, tick), &Arc::new(clock(c)), s, e, w)
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

    #[test]
    fn rows_overlap_only_where_they_meet() {
        let o = op(1, 1);
        let c = Arc::new(clock(&[(1, 1)]));
        // Two columns of a 16-row image with a 256-byte pitch: bytes 0..64 and 64..128 of each row.
        let left = Range::strided(0x1000, 64, 16, 1, 256, 0, true);
        let right = Range::strided(0x1040, 64, 16, 1, 256, 0, true);
        assert_eq!(left.len(), 1);
        let l = Access::of_range(&o, &c, &left[0]);
        let r = Access::of_range(&o, &c, &right[0]);
        assert!(!l.overlaps(&r) && !r.overlaps(&l), "disjoint columns");
        // One byte of row 7 of the right column.
        let b = Access::new(
            &o,
            &c,
            0x1000 + 7 * 256 + 100,
            0x1000 + 7 * 256 + 101,
            false,
        );
        assert!(r.overlaps(&b) && b.overlaps(&r) && !l.overlaps(&b));
        // Between rows: the gap after row 3 of the right column.
        let gap = Access::new(&o, &c, 0x1000 + 3 * 256 + 128, 0x1000 + 4 * 256, false);
        assert!(!r.overlaps(&gap) && !l.overlaps(&gap));
        // Rows that touch are one span; 3D slices that continue the rows are one pattern.
        assert_eq!(
            Range::strided(0, 256, 4, 1, 256, 0, false),
            vec![Range::flat(0, 1024, false)]
        );
        assert_eq!(Range::strided(0, 64, 4, 3, 256, 1024, false).len(), 1);
        assert_eq!(Range::strided(0, 64, 4, 3, 256, 4096, false).len(), 3);
        assert_eq!(Range::strided(0, 64, 4, 100, 256, 4096, false).len(), 1);
    }

    #[test]
    fn nodes_of_one_launch_are_ordered_by_paths_only() {
        let mut st = state_with_100_bytes_at_0x1000();
        // 0 -> 1; 2 alone.
        let g = Arc::new(GraphDesc {
            nodes: Vec::new(),
            reach: Reach::new(vec![Box::new([1]), Box::new([]), Box::new([])]),
        });
        let node = |i: u32| {
            let mut o = (*op(7, 1)).clone_info();
            o.node = Some((g.clone(), i));
            o.name = format!("n{i}");
            Arc::new(o)
        };
        let c = Arc::new(clock(&[(7, 1)]));
        st.access(0x1000, Access::new(&node(0), &c, 0x1000, 0x1010, true));
        st.access(0x1000, Access::new(&node(1), &c, 0x1000, 0x1010, true));
        assert!(st.reports.is_empty(), "an edge orders nodes 0 and 1");
        st.access(0x1000, Access::new(&node(2), &c, 0x1008, 0x1009, false));
        assert_eq!(st.reports.len(), 1, "node 2 has no path to or from node 1");
        let text = &st.reports.values().next().unwrap().text;
        assert!(text.contains("'n1'") && text.contains("'n2'") && text.contains("add an edge"));
    }
}
