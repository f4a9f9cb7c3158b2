//! Streams: in-order command queues. Each stream runs one op at a time; an op starts when the
//! op before it in the stream has completed and all its dependencies (points in other streams,
//! event records) are reached. Progress is driven by whoever completes work (compute units,
//! engines) or enqueues it; no thread ever blocks on a dependency.
//!
//! A point `(stream, seq)` is reached when the stream has completed its op number `seq`.

mod point;
mod report;

pub use point::{Dep, FutureRecord, RecordState, StreamPoint};

use crate::runtime::diagnostics::racecheck;
use crate::runtime::diagnostics::trace::{self, Track};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::executor::Executor;
use crate::runtime::exec::notifier::Notifier;
use crate::runtime::exec::schedule;
use crate::runtime::exec::work::{Completion, Padded, Progress, Started, Ticket, Work};
use crate::runtime::lock_order::{Rank, RankedMutex};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// What an op does when it starts.
pub enum OpWork {
    /// Work for the device (handed to the executor).
    Run(Work),
    /// Stamps an event record (completes at once).
    Record(Arc<RecordState>),
    /// Only dependencies (`birenStreamWaitEvent` on event `event`).
    Wait { event: u64, on: WaitOn },
    /// An op of a graph launch's event node (graph/events.rs), on the node's own lane: started
    /// with its ticket, it completes at once (`Done`) or when the launch finishes the ticket.
    /// `event` names the event it serves (wait-chain messages).
    Hook {
        event: Option<u64>,
        start: Box<dyn FnOnce(Ticket) -> Started + Send>,
    },
}

/// What a wait op waits for: a record made already, or the next record of a never-recorded event.
pub enum WaitOn {
    Record(Arc<RecordState>),
    Future(Arc<FutureRecord>),
}

impl From<Work> for OpWork {
    fn from(w: Work) -> OpWork {
        OpWork::Run(w)
    }
}

impl WaitOn {
    fn record(&self) -> Option<Arc<RecordState>> {
        match self {
            WaitOn::Record(r) => Some(r.clone()),
            WaitOn::Future(f) => f.record(),
        }
    }
}

/// Asks the cache for the lines of `op` (its completion's next read), without waiting.
#[inline]
fn prefetch_op(op: &Op) {
    let p = op as *const Op as usize;
    crate::device::fiber::prefetch_lines(p, p + std::mem::size_of::<Op>());
}

pub struct Op {
    pub seq: u64,
    pub work: OpWork,
    pub deps: Vec<Dep>,
}

/// The enqueuers' end of a stream: ops pushed and not yet taken over by the stream's consumer.
/// Host threads take this lock to enqueue; the consumer takes it only when its own queue has run
/// dry (it then takes the whole batch at once), so a host that enqueues ahead of the device and
/// the compute unit that runs the stream's ops do not share a lock or a cache line per op.
pub(crate) struct StreamTail {
    ops: VecDeque<Op>,
    /// The consumer found nothing to do and stopped: the next push must start it (`kick`).
    idle: bool,
}

/// The consumer's end of a stream: the ops it has taken over and not started, head first, and
/// the running one's sequence number. Locked by whoever advances or completes the stream (compute
/// units, engines, a kicking host).
///
/// An op leaves `ops` when it starts: its completion then reads no op. (With many streams
/// enqueued far ahead, each stream's ops sit in memory that is cold by the time they run; a
/// completion that went back to the running op's slot paid that miss twice.)
pub(crate) struct StreamQueue {
    pub ops: VecDeque<Op>,
    /// The running op's sequence number (None: nothing runs).
    pub running: Option<u64>,
    /// Tracing: since when the head op has been blocked on its dependencies (0: not blocked).
    blocked_since: u64,
    /// Tracing: the running op's category, name, start and arguments.
    span: Option<(&'static str, String, u64, String)>,
}

pub struct StreamCore {
    pub id: u64,
    pub device: usize,
    pub flags: u32,
    pub priority: i32,
    pub is_default: bool,
    pub exec: Arc<Executor>,
    /// Return address of the creator (leak reports).
    pub caller: usize,
    /// This stream (it registers itself as a waiter, and hands itself out as a completion).
    me: Weak<StreamCore>,
    /// The enqueuers' end, and `enqueued`, on their own cache lines.
    pub(crate) tail: Padded<RankedMutex<StreamTail>>,
    enqueued: Padded<AtomicU64>,
    /// The consumer's end, and `completed`.
    pub(crate) queue: Padded<RankedMutex<StreamQueue>>,
    completed: Padded<AtomicU64>,
    point_waiters: RankedMutex<Vec<(u64, Arc<StreamCore>)>>,
    /// `point_waiters.len()`, read without the lock by completions.
    point_waiter_count: AtomicUsize,
    pub notifier: Notifier,
    dead: AtomicBool,
    destroyed: AtomicBool,
    /// The device's list of streams with pending work (`BusyStreams`), once the stream is in
    /// the device's set; and whether this stream is on it.
    busy: OnceLock<Arc<BusyStreams>>,
    listed: AtomicBool,
    /// The device-wide order of this stream's last enqueue (`Executor::op_enqueued`).
    last_op: AtomicU64,
}

pub(crate) const STREAM_NON_BLOCKING: u32 = 1;

/// The streams of a device that may have work pending: what a device-wide synchronize waits for,
/// so that its cost follows the work outstanding, not the number of streams. A stream puts
/// itself on the list when an enqueue finds it off it (`StreamCore::push_locked`); `prune`
/// takes off those found idle. A stream with pending work is always on the list: `prune` clears
/// a stream's mark before it looks at its work a last time, and an enqueue marks the stream
/// after the op is visible, so one of the two sees the other.
pub struct BusyStreams {
    list: RankedMutex<Vec<Arc<StreamCore>>>,
}

impl Default for BusyStreams {
    fn default() -> BusyStreams {
        BusyStreams {
            list: RankedMutex::new(Rank::BusyStreams, Vec::new()),
        }
    }
}

impl BusyStreams {
    /// The pending tails of the listed streams, the one enqueued to last first (waiting for it
    /// first, a synchronize mostly finds the others reached).
    pub fn pending(&self) -> Vec<StreamPoint> {
        // The order key is read once per stream before sorting: `last_op` moves under concurrent
        // enqueues, and a key that changes during the sort is no order (std's sort panics on it).
        let mut v: Vec<(u64, StreamPoint)> = self
            .list
            .lock()
            .iter()
            .filter_map(|s| s.pending_tail())
            .map(|p| (p.stream.last_op.load(Ordering::Relaxed), p))
            .collect();
        v.sort_unstable_by_key(|(key, _)| std::cmp::Reverse(*key));
        v.into_iter().map(|(_, p)| p).collect()
    }

    /// Takes off the list the streams without pending work (and dead ones).
    pub fn prune(&self) {
        self.list.lock().retain(|s| {
            if !s.is_idle() && !s.is_dead() {
                return true;
            }
            s.listed.store(false, Ordering::SeqCst);
            if !s.is_idle() && !s.is_dead() {
                // An enqueue came between the two looks and found the stream still marked.
                s.listed.store(true, Ordering::SeqCst);
                return true;
            }
            false
        });
    }

    /// How many streams are on the list.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.list.lock().len()
    }

    fn put(&self, s: Arc<StreamCore>) {
        self.list.lock().push(s);
    }
}

impl StreamCore {
    pub fn new(
        id: u64,
        device: usize,
        flags: u32,
        priority: i32,
        is_default: bool,
        exec: Arc<Executor>,
        caller: usize,
    ) -> Arc<StreamCore> {
        Arc::new_cyclic(|me| StreamCore {
            me: me.clone(),
            id,
            device,
            flags,
            priority,
            is_default,
            exec,
            caller,
            tail: Padded(RankedMutex::new(
                Rank::StreamTail,
                StreamTail {
                    ops: VecDeque::new(),
                    idle: true,
                },
            )),
            enqueued: Padded(AtomicU64::new(0)),
            queue: Padded(RankedMutex::new(
                Rank::StreamQueue,
                StreamQueue {
                    ops: VecDeque::new(),
                    running: None,
                    blocked_since: 0,
                    span: None,
                },
            )),
            completed: Padded(AtomicU64::new(0)),
            point_waiters: RankedMutex::new(Rank::PointWaiters, Vec::new()),
            point_waiter_count: AtomicUsize::new(0),
            notifier: Notifier::new(),
            dead: AtomicBool::new(false),
            destroyed: AtomicBool::new(false),
            busy: OnceLock::new(),
            listed: AtomicBool::new(false),
            last_op: AtomicU64::new(0),
        })
    }

    /// Makes the stream keep itself on its device's list of busy streams from now on (once).
    pub fn track_busy(self: &Arc<Self>, busy: &Arc<BusyStreams>) {
        if self.busy.set(busy.clone()).is_ok() {
            self.list_if_off();
        }
    }

    /// Puts the stream on its device's busy list unless it is on it.
    fn list_if_off(&self) {
        if let Some(b) = self.busy.get() {
            if !self.listed.swap(true, Ordering::SeqCst) {
                b.put(self.arc());
            }
        }
    }

    /// The `Arc` this stream lives in (alive while `&self` is).
    pub(crate) fn arc(&self) -> Arc<StreamCore> {
        self.me.upgrade().expect("a stream in use is alive")
    }

    /// True for streams that follow the legacy default-stream rules.
    pub fn is_blocking(&self) -> bool {
        !self.is_default && self.flags & STREAM_NON_BLOCKING == 0
    }

    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::SeqCst)
    }

    pub fn enqueued(&self) -> u64 {
        self.enqueued.load(Ordering::SeqCst)
    }

    pub fn reached(&self, seq: u64) -> bool {
        self.completed.load(Ordering::SeqCst) >= seq || self.dead.load(Ordering::SeqCst)
    }

    pub fn is_idle(&self) -> bool {
        self.completed() >= self.enqueued()
    }

    pub fn is_dead(&self) -> bool {
        self.dead.load(Ordering::SeqCst)
    }

    pub fn mark_destroyed(&self) {
        self.destroyed.store(true, Ordering::SeqCst);
    }

    pub fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::SeqCst)
    }

    /// The point after everything enqueued so far, if that work is not complete.
    pub fn pending_tail(self: &Arc<Self>) -> Option<StreamPoint> {
        let e = self.enqueued();
        (self.completed() < e).then(|| StreamPoint {
            stream: self.clone(),
            seq: e,
        })
    }

    /// Appends an op to the locked tail; returns (seq, must_kick): the consumer had stopped, so
    /// the caller must `kick` the stream once it has dropped the lock.
    pub(crate) fn push_locked(
        &self,
        t: &mut StreamTail,
        work: OpWork,
        deps: Vec<Dep>,
    ) -> (u64, bool) {
        let seq = self.enqueued.load(Ordering::Relaxed) + 1;
        if racecheck::on() {
            racecheck::pushed(self.race_tag(), seq, report::race_desc(&work));
        }
        // The caller found the stream alive under this lock (`check_alive_locked`): a reset
        // may have marked it dead since, but has not gathered the tail yet, so the op is
        // drained with the rest and counted dropped as it is counted enqueued here.
        t.ops.push_back(Op { seq, work, deps });
        self.enqueued.store(seq, Ordering::SeqCst);
        let order = self.exec.op_enqueued();
        self.last_op.store(order, Ordering::Relaxed);
        self.list_if_off();
        (seq, std::mem::take(&mut t.idle))
    }

    /// Refuses a push onto a stream that a reset has killed, with INVALID_HANDLE (the reset
    /// destroyed it), under the tail lock, right before the push. Such an op would never run
    /// and never be drained: it would stay in the tail for good, and with it every stream its
    /// dependencies name (a record's state names its own stream: a cycle, a leak). Checked
    /// under the tail lock because `kill` marks the stream dead before it gathers the tail: an
    /// op pushed after a check that found the stream alive is gathered and dropped by the drain.
    pub(crate) fn check_alive_locked(&self, _tail: &StreamTail) -> Result<()> {
        if self.dead.load(Ordering::SeqCst) {
            return Err(ErrorCode::InvalidHandle);
        }
        Ok(())
    }

    /// If the stream is idle, takes the next sequence number as an op that is complete already
    /// (an event record with nothing to wait for) and returns true. (Every op enqueued so far
    /// has completed, so the consumer holds none and runs none.)
    pub(crate) fn record_now_locked(&self, t: &mut StreamTail) -> bool {
        if !t.ops.is_empty() || !self.is_idle() || self.exec.is_resetting() {
            return false;
        }
        let seq = self.enqueued.load(Ordering::Relaxed) + 1;
        // Complete before enqueued: a thread reading enqueued then completed (`pending_tail`,
        // the default stream's implicit dependencies) must never see this seq pending, for no
        // completion will ever wake a waiter on it.
        self.completed.fetch_max(seq, Ordering::SeqCst);
        #[cfg(test)]
        test_hooks::between_record_stores();
        self.enqueued.store(seq, Ordering::SeqCst);
        true
    }

    /// True if `BIREN_SCHEDULE` (or record/replay) orders this stream's ops. The lanes of graph
    /// event nodes are not ordered: they are the graph launch's own bookkeeping, and a launch
    /// that holds the one-op-at-a-time slot while its wait node waits for its lane would wait
    /// for ever.
    #[inline]
    fn scheduled(&self) -> bool {
        schedule::active() && !crate::runtime::ids::is_lane(self.id)
    }

    /// Makes progress after a push: starts the head op if it can start.
    pub fn kick(&self) {
        let mut wake = Vec::new();
        self.advance(&mut wake);
        run_wakeups(wake);
    }

    fn add_point_waiter(&self, seq: u64, waiter: Arc<StreamCore>) {
        let mut w = self.point_waiters.lock();
        w.push((seq, waiter));
        // Before the caller's re-check of the point (SeqCst), paired with `after_progress`.
        self.point_waiter_count.store(w.len(), Ordering::SeqCst);
    }

    /// Takes the tail's ops over when the consumer's own queue is empty; with nothing there
    /// either, marks the stream stopped (if `stop`) so that the next push kicks it. Returns
    /// the number every op up to which has completed once the running op (if any) completes,
    /// i.e. the next pending op's seq - 1, or `enqueued` with none.
    fn refill(&self, q: &mut StreamQueue, stop: bool) -> u64 {
        if let Some(op) = q.ops.front() {
            return op.seq - 1;
        }
        let mut t = self.tail.lock();
        if t.ops.is_empty() {
            if stop {
                t.idle = true;
            }
            return self.enqueued.load(Ordering::SeqCst);
        }
        // Our empty deque (with its capacity) goes back to the tail.
        std::mem::swap(&mut q.ops, &mut t.ops);
        q.ops.front().map_or(0, |o| o.seq - 1)
    }

    /// Moves every op of the tail to the consumer's queue (for a full view of the stream).
    pub(crate) fn gather(&self, q: &mut StreamQueue) {
        let mut t = self.tail.lock();
        q.ops.append(&mut t.ops);
    }

    /// Starts as many head ops as possible; streams to wake go to `wake`.
    fn advance(&self, wake: &mut Vec<Arc<StreamCore>>) {
        loop {
            let mut q = self.queue.lock();
            if q.running.is_some() || self.is_dead() || self.exec.is_resetting() {
                return;
            }
            if q.ops.is_empty() {
                self.refill(&mut q, true);
            }
            let Some(op) = q.ops.front_mut() else { return };
            while let Some(d) = op.deps.last_mut() {
                match d {
                    Dep::Point(p) => {
                        if !p.reached() {
                            p.stream.add_point_waiter(p.seq, self.arc());
                            if !p.reached() {
                                if trace::on() && q.blocked_since == 0 {
                                    q.blocked_since = trace::now();
                                }
                                return;
                            }
                        }
                    }
                    Dep::Future(f) => match f.resolved() {
                        Some(p) => {
                            *d = Dep::Point(p);
                            continue;
                        }
                        None => {
                            if !f.add_waiter(&self.arc()) {
                                continue; // resolved meanwhile: look again
                            }
                            if trace::on() && q.blocked_since == 0 {
                                q.blocked_since = trace::now();
                            }
                            return;
                        }
                    },
                }
                let reached = op.deps.pop();
                if racecheck::on() {
                    if let Some(Dep::Point(p)) = &reached {
                        racecheck::dep_reached(self.id, op.seq, p.stream.id, p.seq);
                    }
                }
            }
            // From taking the op to handing it over, a reset waits for us (and we start nothing
            // once one has begun: it kicks every stream when it ends).
            if !self.exec.enter_start() {
                return;
            }
            let op = q.ops.pop_front().expect("the head op was just looked at");
            let seq = op.seq;
            let work = op.work;
            q.running = Some(seq);
            if let Some(next) = q.ops.front() {
                prefetch_op(next);
            }
            if trace::on() {
                self.trace_start(&mut q, &work);
            }
            let epoch = self.exec.epoch();
            drop(q);
            // A graph launch with event wait nodes may wait, midway, for other streams' work:
            // it does not take the one-op-at-a-time slot (serial, record/replay), or that work
            // could never run.
            let gated = self.scheduled()
                && !matches!(&work, OpWork::Run(Work::Graph(g)) if g.waits_midway());
            let work = if gated {
                let later = |w: OpWork| -> schedule::Deferred {
                    let s = self.arc();
                    Box::new(move || s.start_deferred(seq, epoch, w))
                };
                match schedule::before_start((self.id, self.device), seq, work, later) {
                    Some(w) => w,
                    None => {
                        // Deferred: started later by the schedule thread (the stream stays running).
                        self.exec.leave_start();
                        return;
                    }
                }
            } else {
                work
            };
            let started = self.start_op(seq, epoch, work);
            self.exec.leave_start();
            match started {
                Started::Running => return,
                Started::Done(r) => self.complete(seq, epoch, r, wake),
            }
        }
    }

    /// Starts op `seq`, which the schedule deferred, unless a reset came in between (then the
    /// reset dropped it).
    fn start_deferred(&self, seq: u64, epoch: u64, work: OpWork) {
        let exec = self.exec.clone();
        if !exec.enter_start() {
            schedule::release(self.id, self.device, seq);
            return;
        }
        if exec.epoch() != epoch {
            exec.leave_start();
            schedule::release(self.id, self.device, seq);
            return;
        }
        let started = self.start_op(seq, epoch, work);
        exec.leave_start();
        if let Started::Done(r) = started {
            self.finish_op(seq, epoch, r);
        }
    }

    /// Hands a taken op over: records and waits complete at once, work goes to the executor.
    pub(crate) fn start_op(&self, seq: u64, epoch: u64, work: OpWork) -> Started {
        if racecheck::on() {
            racecheck::started(self.id, seq);
        }
        match work {
            OpWork::Record(r) => {
                r.mark(|| self.exec.now_ns());
                Started::Done(Ok(()))
            }
            OpWork::Wait { .. } => Started::Done(Ok(())),
            OpWork::Hook { start, .. } => start(Ticket {
                to: self.arc(),
                seq,
                epoch,
            }),
            OpWork::Run(w) => {
                let ticket = Ticket {
                    to: self.arc(),
                    seq,
                    epoch,
                };
                self.exec.run(w, self.priority, ticket)
            }
        }
    }

    /// Records the completion of op `seq`; streams whose waits it satisfies go to `wake` (the
    /// caller goes on advancing this stream itself).
    fn complete(&self, seq: u64, epoch: u64, result: Result<()>, wake: &mut Vec<Arc<StreamCore>>) {
        if epoch != self.exec.epoch() {
            return; // the device was reset meanwhile: this work no longer exists
        }
        {
            let mut q = self.queue.lock();
            if q.running != Some(seq) {
                return;
            }
            // The error first: whoever sees this op complete must also see its error.
            if let Err(e) = result {
                self.exec.set_sticky(e);
            }
            q.running = None;
            let done = self.refill(&mut q, false);
            self.completed.fetch_max(done, Ordering::SeqCst);
            if self.scheduled() {
                schedule::completed(self.id, self.device, seq);
            }
            if let Some((cat, name, start, args)) = q.span.take() {
                trace::span(self.track(), cat, name, start, args);
            }
        }
        self.exec.op_completed();
        self.after_progress(wake);
    }

    /// Everything before the next pending op is complete (sequence numbers may have gaps where
    /// an op was withdrawn).
    fn mark_completed(&self, q: &mut StreamQueue) {
        let done = self.refill(q, false);
        self.completed.fetch_max(done, Ordering::SeqCst);
    }

    /// Wakes host waiters and the streams waiting for points now reached.
    fn after_progress(&self, wake: &mut Vec<Arc<StreamCore>>) {
        let done = self.completed();
        self.notifier.notify_reached(done);
        if self.point_waiter_count.load(Ordering::SeqCst) != 0 {
            let mut w = self.point_waiters.lock();
            let mut i = 0;
            while i < w.len() {
                if w[i].0 <= done {
                    wake.push(w.swap_remove(i).1);
                } else {
                    i += 1;
                }
            }
            self.point_waiter_count.store(w.len(), Ordering::SeqCst);
        }
    }

    pub fn track(&self) -> Track {
        Track::Stream {
            device: self.device,
            id: self.id,
            default: self.is_default,
        }
    }

    /// Withdraws op `seq` if it has not started (a synchronous copy that gave up): it will never
    /// run and nothing waits for it. False if it has started or completed.
    pub fn withdraw(&self, seq: u64) -> bool {
        let mut wake = Vec::new();
        {
            let mut q = self.queue.lock();
            self.gather(&mut q);
            let Some(i) = q.ops.iter().position(|o| o.seq == seq) else {
                return false; // started, completed already, or dropped by a reset
            };
            let op = q.ops.remove(i);
            // (With an op running, its completion counts the withdrawn one complete.)
            if i == 0 && q.running.is_none() {
                self.mark_completed(&mut q);
            }
            drop(q);
            drop(op);
        }
        self.exec.op_completed();
        self.after_progress(&mut wake);
        self.advance(&mut wake);
        run_wakeups(wake);
        true
    }

    /// Called by compute units and engines when a running op ends.
    pub fn finish_op(&self, seq: u64, epoch: u64, result: Result<()>) {
        if racecheck::on() {
            racecheck::finished(self.id, seq);
        }
        let mut wake = Vec::new();
        self.complete(seq, epoch, result, &mut wake);
        self.advance(&mut wake);
        run_wakeups(wake);
    }

    /// Drops every op not yet started and marks the stream dead (device reset).
    pub fn kill(&self) {
        self.dead.store(true, Ordering::SeqCst);
        self.drain();
    }

    /// Drops every op (started or not) and counts them all complete (reset of the default stream).
    pub fn drain(&self) {
        let (ops, running): (Vec<Op>, bool) = {
            let mut q = self.queue.lock();
            self.gather(&mut q);
            let running = q.running.take().is_some();
            self.completed.fetch_max(self.enqueued(), Ordering::SeqCst);
            (q.ops.drain(..).collect(), running)
        };
        // Dropped, and the running one's completion will be ignored (`complete` finds it no
        // longer running, or from before a reset): none of them is pending, the running one
        // included, or the device would never count as idle again.
        self.exec.ops_dropped(ops.len() as u64 + running as u64);
        // Streams parked on our points: they are all reached now (drained or dead); wake them,
        // or a stream that took a dependency on us just before the reset would wait forever.
        let waiters: Vec<Arc<StreamCore>> = {
            let mut w = self.point_waiters.lock();
            self.point_waiter_count.store(0, Ordering::SeqCst);
            w.drain(..).map(|w| w.1).collect()
        };
        self.notifier.notify();
        drop(ops);
        run_wakeups(waiters);
    }

    /// Runs `f` over the deps of the ops in `(completed, upto]` (for the wait-for graph): those
    /// of the consumer's queue, then those still in the tail.
    pub(crate) fn scan_ops(
        q: &StreamQueue,
        t: &StreamTail,
        from: u64,
        upto: u64,
        mut f: impl FnMut(&Op),
    ) {
        for op in q.ops.iter().chain(t.ops.iter()) {
            if op.seq > from && op.seq <= upto {
                f(op);
            }
        }
    }

    /// Errors for a host that wants to enqueue here.
    pub fn check_usable(&self) -> Result<()> {
        if self.is_dead() {
            return Err(ErrorCode::InvalidHandle);
        }
        Ok(())
    }
}

impl Completion for StreamCore {
    fn op_finished(&self, seq: u64, epoch: u64, result: Result<()>) {
        self.finish_op(seq, epoch, result);
    }
    fn track(&self) -> Track {
        StreamCore::track(self)
    }
}

impl Progress for StreamCore {
    fn reached(&self, seq: u64) -> bool {
        StreamCore::reached(self, seq)
    }
    fn id(&self) -> u64 {
        self.id
    }
}

/// Interleavings forced by tests.
#[cfg(test)]
pub(crate) mod test_hooks {
    use std::cell::RefCell;

    thread_local! {
        static BETWEEN_RECORD_STORES: RefCell<Option<Box<dyn FnMut()>>> = const { RefCell::new(None) };
    }

    /// Runs `f` on this thread between the two stores of its next records that complete at once
    /// (`record_now_locked`): the moment another thread reading the stream's counts sees one
    /// store and not the other.
    pub fn pause_between_record_stores(f: impl FnMut() + 'static) {
        BETWEEN_RECORD_STORES.with(|h| *h.borrow_mut() = Some(Box::new(f)));
    }

    pub(super) fn between_record_stores() {
        BETWEEN_RECORD_STORES.with(|h| {
            if let Some(f) = h.borrow_mut().as_mut() {
                f();
            }
        });
    }
}

/// Advances every stream in `wake`, and those their progress wakes in turn (no recursion).
pub fn run_wakeups(mut wake: Vec<Arc<StreamCore>>) {
    while let Some(s) = wake.pop() {
        s.advance(&mut wake);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::exec::scheduler::Policy;
    use crate::runtime::exec::work::HostCall;
    use std::time::{Duration, Instant};

    static LOG: parking_lot::Mutex<Vec<usize>> = parking_lot::Mutex::new(Vec::new());

    unsafe extern "C" fn log_it(data: *mut std::ffi::c_void) {
        LOG.lock().push(data as usize);
    }

    fn push(s: &StreamCore, value: usize) {
        let mut t = s.tail.lock();
        let call = HostCall::plain(log_it, value);
        let (_, kick) = s.push_locked(&mut t, OpWork::Run(Work::Host(call)), Vec::new());
        drop(t);
        if kick {
            s.kick();
        }
    }

    unsafe extern "C" fn pause(_: *mut std::ffi::c_void) {
        std::thread::sleep(Duration::from_micros(20));
    }

    /// The busy list (what a device-wide synchronize waits for): while host threads enqueue on
    /// many streams and the list is pruned meanwhile, every stream with work pending is on it,
    /// the list holds no stream twice, and once the work is done a prune empties it.
    #[test]
    fn every_stream_with_pending_work_is_on_the_busy_list() {
        const STREAMS: usize = 16;
        let exec = Executor::start(0, 1, 1 << 20, Policy::Preemptive, Instant::now());
        let busy = Arc::new(BusyStreams::default());
        let streams: Vec<_> = (0..STREAMS)
            .map(|i| {
                let s = StreamCore::new(
                    i as u64 + 1,
                    0,
                    STREAM_NON_BLOCKING,
                    0,
                    false,
                    exec.clone(),
                    0,
                );
                s.track_busy(&busy);
                s
            })
            .collect();
        let on_list = |s: &Arc<StreamCore>| busy.list.lock().iter().any(|b| Arc::ptr_eq(b, s));
        for round in 0..20 {
            let stop = Arc::new(AtomicBool::new(false));
            let pruner = {
                let (busy, stop) = (busy.clone(), stop.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        busy.prune();
                        std::thread::yield_now();
                    }
                })
            };
            let producers: Vec<_> = (0..2)
                .map(|t| {
                    let streams = streams.clone();
                    std::thread::spawn(move || {
                        for i in 0..200 {
                            let s = &streams[(i * 7 + t * 3 + round) % STREAMS];
                            let mut tail = s.tail.lock();
                            let call = HostCall::plain(pause, 0);
                            let (_, kick) =
                                s.push_locked(&mut tail, OpWork::Run(Work::Host(call)), Vec::new());
                            drop(tail);
                            if kick {
                                s.kick();
                            }
                        }
                    })
                })
                .collect();
            for p in producers {
                p.join().unwrap();
            }
            stop.store(true, Ordering::Relaxed);
            pruner.join().unwrap();
            for s in &streams {
                if !s.is_idle() {
                    assert!(
                        on_list(s),
                        "stream #{} has work pending and is not on the busy list",
                        s.id
                    );
                }
            }
            let n = busy.len();
            let mut ids: Vec<u64> = busy.list.lock().iter().map(|s| s.id).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), n, "a stream is on the busy list twice");
            // What a device-wide synchronize does: wait for the listed tails, then prune.
            for p in busy.pending() {
                let deadline = Instant::now() + Duration::from_secs(30);
                while !p.reached() {
                    assert!(Instant::now() < deadline, "work never finished");
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            assert!(
                streams.iter().all(|s| s.is_idle()),
                "a synchronize missed pending work"
            );
            busy.prune();
            assert_eq!(busy.len(), 0);
        }
    }

    static HOLD: AtomicBool = AtomicBool::new(false);

    unsafe extern "C" fn hold(_: *mut std::ffi::c_void) {
        while HOLD.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// A device-wide synchronize orders the busy streams by their last enqueue while other
    /// threads enqueue on them: the order must come from one reading per stream. (Found by
    /// `make test`'s stress with resets: std's sort panicked, "user-provided comparison function
    /// does not correctly implement a total order", when the keys moved during the sort.)
    #[test]
    fn pending_orders_streams_while_their_last_enqueue_moves() {
        const STREAMS: usize = 48;
        let exec = Executor::start(0, 1, 1 << 20, Policy::Preemptive, Instant::now());
        let busy = Arc::new(BusyStreams::default());
        HOLD.store(true, Ordering::Release);
        let streams: Vec<_> = (0..STREAMS)
            .map(|i| {
                let s = StreamCore::new(
                    i as u64 + 1,
                    0,
                    STREAM_NON_BLOCKING,
                    0,
                    false,
                    exec.clone(),
                    0,
                );
                s.track_busy(&busy);
                let mut t = s.tail.lock();
                let call = HostCall::plain(hold, 0);
                let (_, kick) = s.push_locked(&mut t, OpWork::Run(Work::Host(call)), Vec::new());
                drop(t);
                if kick {
                    s.kick();
                }
                s
            })
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let movers: Vec<_> = (0..2)
            .map(|t| {
                let (streams, stop) = (streams.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ t;
                    while !stop.load(Ordering::Relaxed) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        streams[x as usize % STREAMS]
                            .last_op
                            .store(x >> 8, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for _ in 0..3000 {
                let v = busy.pending();
                assert_eq!(v.len(), STREAMS, "a stream with pending work is missing");
            }
        }));
        stop.store(true, Ordering::Relaxed);
        for m in movers {
            m.join().unwrap();
        }
        HOLD.store(false, Ordering::Release);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !streams.iter().all(|s| s.is_idle()) {
            assert!(Instant::now() < deadline, "held work never finished");
            std::thread::sleep(Duration::from_millis(1));
        }
        if let Err(e) = result {
            std::panic::resume_unwind(e);
        }
    }

    /// A record on an idle stream takes a sequence number that is complete at once. Another
    /// thread taking the stream's pending tail at that moment (the legacy default stream's
    /// implicit dependency) must not see it as pending: nobody would ever wake a waiter on it.
    /// (Found by `make stress`: the default stream's head op waited for good on a point that an
    /// event record on an idle blocking stream had reached without telling anyone.)
    #[test]
    fn a_record_on_an_idle_stream_is_never_seen_pending() {
        const ROUNDS: usize = 2_000_000;
        let exec = Executor::start(0, 1, 1 << 20, Policy::Preemptive, Instant::now());
        let s = StreamCore::new(1, 0, 0, 0, false, exec, 0);
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let started = std::sync::Arc::new(AtomicBool::new(false));
        let seen = {
            let (s, stop, started) = (s.clone(), stop.clone(), started.clone());
            std::thread::spawn(move || {
                let mut pending = 0u64;
                started.store(true, Ordering::SeqCst);
                while !stop.load(Ordering::Relaxed) {
                    pending += s.pending_tail().is_some() as u64;
                }
                pending
            })
        };
        while !started.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        for _ in 0..ROUNDS {
            let mut t = s.tail.lock();
            assert!(s.record_now_locked(&mut t));
        }
        stop.store(true, Ordering::Relaxed);
        assert_eq!(
            seen.join().unwrap(),
            0,
            "a completed record was seen pending"
        );
        assert!(s.is_idle());
    }

    /// Several host threads enqueue on one stream while its consumer takes batches from the
    /// tail and stops when it runs dry: every op runs once, each thread's in its order, and a
    /// push onto a stopped stream starts it.
    #[test]
    fn concurrent_enqueuers_lose_nothing_and_keep_order() {
        const THREADS: usize = 4;
        const EACH: usize = 2000;
        let exec = Executor::start(0, 1, 1 << 20, Policy::Preemptive, Instant::now());
        let s = StreamCore::new(1, 0, STREAM_NON_BLOCKING, 0, false, exec, 0);
        let producers: Vec<_> = (0..THREADS)
            .map(|t| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for i in 0..EACH {
                        push(&s, t << 16 | i);
                        if i % 97 == 0 {
                            // Let the consumer run dry now and then, so pushes find it stopped.
                            std::thread::sleep(Duration::from_micros(200));
                        }
                    }
                })
            })
            .collect();
        for p in producers {
            p.join().unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while s.completed() < (THREADS * EACH) as u64 {
            assert!(
                Instant::now() < deadline,
                "ops lost: {} done",
                s.completed()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let log = LOG.lock().clone();
        assert_eq!(log.len(), THREADS * EACH);
        for t in 0..THREADS {
            let mine: Vec<usize> = log
                .iter()
                .filter(|v| *v >> 16 == t)
                .map(|v| v & 0xffff)
                .collect();
            assert_eq!(
                mine,
                (0..EACH).collect::<Vec<_>>(),
                "thread {t}'s ops out of order"
            );
        }
        assert!(s.is_idle());
        // Ran dry: stopped, so that the next push kicks it.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !s.tail.lock().idle {
            assert!(
                Instant::now() < deadline,
                "a drained stream is not marked stopped"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        push(&s, 7 << 16);
        while s.completed() < (THREADS * EACH + 1) as u64 {
            assert!(
                Instant::now() < deadline,
                "a push onto a stopped stream did not start it"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The safety net of a waiting synchronize: work pushed onto a stream whose consumer was
    /// never told (a lost wake-up, simulated by a push that does not kick) is started by
    /// `kick_if_stalled`, which says it did; a stream with nothing to do is left alone.
    #[test]
    fn kick_if_stalled_starts_work_that_nobody_started() {
        static RAN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        unsafe extern "C" fn count(_: *mut std::ffi::c_void) {
            RAN.fetch_add(1, Ordering::SeqCst);
        }
        let exec = Executor::start(0, 1, 1 << 20, Policy::Preemptive, Instant::now());
        let s = StreamCore::new(2, 0, STREAM_NON_BLOCKING, 0, false, exec, 0);
        assert!(
            s.kick_if_stalled().is_none(),
            "an empty stream needs no kick"
        );
        {
            let mut t = s.tail.lock();
            let call = HostCall::plain(count, 0);
            // Pushed, but the consumer is not kicked: nobody will start it.
            let _ = s.push_locked(&mut t, OpWork::Run(Work::Host(call)), Vec::new());
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(s.completed(), 0, "nothing started the op");
        let what = s
            .kick_if_stalled()
            .expect("the kick started the stalled op");
        assert!(what.contains("host function"), "{what}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while s.completed() < 1 {
            assert!(Instant::now() < deadline, "the kicked op did not complete");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(RAN.load(Ordering::SeqCst), 1);
        assert!(s.kick_if_stalled().is_none(), "nothing left to start");
    }
}
