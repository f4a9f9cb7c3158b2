//! Streams: in-order command queues. Each stream runs one op at a time; an op starts when the
//! op before it in the stream has completed and all its dependencies (points in other streams,
//! event records) are reached. Progress is driven by whoever completes work (compute units,
//! engines) or enqueues it; no thread ever blocks on a dependency.
//!
//! A point `(stream, seq)` is reached when the stream has completed its op number `seq`.

use crate::runtime::diagnostics::trace::{self, Track};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::copy::CopyDir;
use crate::runtime::exec::event::{FutureRecord, RecordState};
use crate::runtime::exec::executor::Executor;
use crate::runtime::exec::notifier::Notifier;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

pub use crate::runtime::exec::launch::Launch;

/// A host function enqueued with `birenLaunchHostFunc`.
#[derive(Clone, Copy)]
pub struct HostCall {
    pub func: unsafe extern "C" fn(*mut std::ffi::c_void),
    pub data: usize,
}

/// What an op does when it runs.
pub enum Work {
    Kernel(Launch),
    Copy {
        dst: usize,
        src: usize,
        len: usize,
        engine: usize,
        dir: CopyDir,
    },
    Fill {
        dst: usize,
        value: u8,
        len: usize,
    },
    Host(HostCall),
    Record(Arc<RecordState>),
    /// Only dependencies (`birenStreamWaitEvent` on event `event`).
    Wait {
        event: u64,
        on: WaitOn,
    },
    /// Moved out when the op started.
    Taken,
}

/// What a wait op waits for: a record made already, or the next record of a never-recorded event.
pub enum WaitOn {
    Record(Arc<RecordState>),
    Future(Arc<FutureRecord>),
}

impl WaitOn {
    fn record(&self) -> Option<Arc<RecordState>> {
        match self {
            WaitOn::Record(r) => Some(r.clone()),
            WaitOn::Future(f) => f.record(),
        }
    }
}

/// A point in a stream: reached once the stream has completed op `seq`.
#[derive(Clone)]
pub struct StreamPoint {
    pub stream: Arc<StreamCore>,
    pub seq: u64,
}

impl StreamPoint {
    pub fn reached(&self) -> bool {
        self.stream.reached(self.seq)
    }
}

/// Something an op waits for before it may start.
#[derive(Clone)]
pub enum Dep {
    Point(StreamPoint),
    /// The next record of an event that had never been recorded (BIREN extension).
    Future(Arc<FutureRecord>),
}

pub struct Op {
    pub seq: u64,
    pub work: Work,
    pub deps: Vec<Dep>,
}

pub(crate) struct StreamQueue {
    pub ops: VecDeque<Op>,
    pub running: bool,
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
    pub(crate) queue: Mutex<StreamQueue>,
    completed: AtomicU64,
    enqueued: AtomicU64,
    point_waiters: Mutex<Vec<(u64, Arc<StreamCore>)>>,
    pub notifier: Notifier,
    dead: AtomicBool,
    destroyed: AtomicBool,
}

/// Outcome of starting an op.
pub enum Started {
    /// Done already (records, waits, skipped work).
    Done(Result<()>),
    /// Handed to a compute unit or an engine, which will call `finish_op`.
    Running,
}

pub(crate) const STREAM_NON_BLOCKING: u32 = 1;

impl StreamCore {
    pub fn new(
        id: u64,
        device: usize,
        flags: u32,
        priority: i32,
        is_default: bool,
        exec: Arc<Executor>,
        caller: usize,
    ) -> StreamCore {
        StreamCore {
            id,
            device,
            flags,
            priority,
            is_default,
            exec,
            caller,
            queue: Mutex::new(StreamQueue {
                ops: VecDeque::new(),
                running: false,
                blocked_since: 0,
                span: None,
            }),
            completed: AtomicU64::new(0),
            enqueued: AtomicU64::new(0),
            point_waiters: Mutex::new(Vec::new()),
            notifier: Notifier::new(),
            dead: AtomicBool::new(false),
            destroyed: AtomicBool::new(false),
        }
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

    /// Appends an op to an already locked queue; returns (seq, must_advance).
    pub(crate) fn push_locked(
        self: &Arc<Self>,
        q: &mut StreamQueue,
        work: Work,
        deps: Vec<Dep>,
    ) -> (u64, bool) {
        let seq = self.enqueued.load(Ordering::Relaxed) + 1;
        q.ops.push_back(Op { seq, work, deps });
        self.enqueued.store(seq, Ordering::SeqCst);
        self.exec.op_enqueued();
        (seq, !q.running && q.ops.len() == 1)
    }

    /// If the stream is idle, takes the next sequence number as an op that is complete already
    /// (an event record with nothing to wait for) and returns true.
    pub(crate) fn record_now_locked(&self, q: &mut StreamQueue) -> bool {
        if q.running || !q.ops.is_empty() || !self.is_idle() || self.exec.is_resetting() {
            return false;
        }
        let seq = self.enqueued.load(Ordering::Relaxed) + 1;
        self.enqueued.store(seq, Ordering::SeqCst);
        self.completed.fetch_max(seq, Ordering::SeqCst);
        true
    }

    /// Makes progress after a push: starts the head op if it can start.
    pub fn kick(self: &Arc<Self>) {
        let mut wake = Vec::new();
        self.advance(&mut wake);
        run_wakeups(wake);
    }

    fn add_point_waiter(&self, seq: u64, waiter: &Arc<StreamCore>) {
        self.point_waiters.lock().push((seq, waiter.clone()));
    }

    /// Starts as many head ops as possible; streams to wake go to `wake`.
    fn advance(self: &Arc<Self>, wake: &mut Vec<Arc<StreamCore>>) {
        loop {
            let mut q = self.queue.lock();
            if q.running || self.is_dead() || self.exec.is_resetting() {
                return;
            }
            let Some(op) = q.ops.front_mut() else { return };
            while let Some(d) = op.deps.last_mut() {
                match d {
                    Dep::Point(p) => {
                        if !p.reached() {
                            p.stream.add_point_waiter(p.seq, self);
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
                            if !f.add_waiter(self) {
                                continue; // resolved meanwhile: look again
                            }
                            if trace::on() && q.blocked_since == 0 {
                                q.blocked_since = trace::now();
                            }
                            return;
                        }
                    },
                }
                op.deps.pop();
            }
            // From taking the op to handing it over, a reset waits for us (and we start nothing
            // once one has begun: it kicks every stream when it ends).
            if !self.exec.enter_start() {
                return;
            }
            let seq = op.seq;
            let work = std::mem::replace(&mut op.work, Work::Taken);
            q.running = true;
            if trace::on() {
                self.trace_start(&mut q, &work);
            }
            let epoch = self.exec.epoch();
            drop(q);
            let started = self.exec.run(self, seq, epoch, work);
            self.exec.leave_start();
            match started {
                Started::Running => return,
                Started::Done(r) => self.complete(seq, epoch, r, wake),
            }
        }
    }

    /// Records the completion of op `seq`; streams whose waits it satisfies go to `wake` (the
    /// caller goes on advancing this stream itself).
    fn complete(
        self: &Arc<Self>,
        seq: u64,
        epoch: u64,
        result: Result<()>,
        wake: &mut Vec<Arc<StreamCore>>,
    ) {
        if epoch != self.exec.epoch() {
            return; // the device was reset meanwhile: this work no longer exists
        }
        {
            let mut q = self.queue.lock();
            if !q.running || q.ops.front().map(|o| o.seq) != Some(seq) {
                return;
            }
            // The error first: whoever sees this op complete must also see its error.
            if let Err(e) = result {
                self.exec.set_sticky(e);
            }
            q.ops.pop_front();
            q.running = false;
            self.mark_completed(&q);
            if let Some((cat, name, start, args)) = q.span.take() {
                trace::span(self.track(), cat, name, start, args);
            }
        }
        self.exec.op_completed();
        self.after_progress(wake);
    }

    /// Everything before the next pending op is complete (sequence numbers may have gaps where
    /// an op was withdrawn).
    fn mark_completed(&self, q: &StreamQueue) {
        let done = q.ops.front().map_or(self.enqueued(), |o| o.seq - 1);
        self.completed.fetch_max(done, Ordering::SeqCst);
    }

    /// Wakes host waiters and the streams waiting for points now reached.
    fn after_progress(&self, wake: &mut Vec<Arc<StreamCore>>) {
        self.notifier.notify();
        let done = self.completed();
        {
            let mut w = self.point_waiters.lock();
            let mut i = 0;
            while i < w.len() {
                if w[i].0 <= done {
                    wake.push(w.swap_remove(i).1);
                } else {
                    i += 1;
                }
            }
        }
    }

    pub fn track(&self) -> Track {
        Track::Stream {
            device: self.device,
            id: self.id,
            default: self.is_default,
        }
    }

    /// Tracing: the op about to start, and the wait that held it.
    fn trace_start(&self, q: &mut StreamQueue, work: &Work) {
        let now = trace::now();
        if q.blocked_since != 0 {
            let what = match work {
                Work::Wait { event, .. } => format!("wait for event #{event}"),
                _ => "wait (default-stream rule)".to_string(),
            };
            let args = match work {
                Work::Wait { event, .. } => format!("\"event\":{event}"),
                _ => String::new(),
            };
            trace::span(self.track(), trace::WAIT, what, q.blocked_since, args);
            q.blocked_since = 0;
        }
        let (cat, name, args) = match work {
            Work::Kernel(l) => (
                trace::KERNEL,
                l.name(),
                format!(
                    "\"grid\":\"({},{},{})\",\"block\":\"({},{},{})\",\"sharedMem\":{}",
                    l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z, l.shared
                ),
            ),
            Work::Copy {
                len, engine, dir, ..
            } => (
                trace::MEMCPY,
                format!("memcpy {len} B"),
                format!(
                    "\"bytes\":{len},\"engine\":{engine},\"kind\":\"{}\"",
                    dir.short_name()
                ),
            ),
            Work::Fill { len, value, .. } => (
                trace::MEMSET,
                format!("memset {len} B"),
                format!("\"bytes\":{len},\"value\":{value}"),
            ),
            Work::Host(_) => (
                trace::HOST_FUNCTION,
                "host function".to_string(),
                String::new(),
            ),
            Work::Record(r) => {
                trace::instant(
                    self.track(),
                    trace::EVENT,
                    format!("record event #{}", r.event),
                    String::new(),
                );
                trace::flow_start(self.track(), r.id);
                return;
            }
            Work::Wait { on, .. } => {
                if let Some(r) = on.record() {
                    trace::flow_end(self.track(), r.id);
                }
                return;
            }
            Work::Taken => return,
        };
        q.span = Some((cat, name, now, args));
    }

    /// Withdraws op `seq` if it has not started (a synchronous copy that gave up): it will never
    /// run and nothing waits for it. False if it has started or completed.
    pub fn withdraw(self: &Arc<Self>, seq: u64) -> bool {
        let mut wake = Vec::new();
        {
            let mut q = self.queue.lock();
            let Some(i) = q.ops.iter().position(|o| o.seq == seq) else {
                return false; // completed already, or dropped by a reset
            };
            if i == 0 && q.running {
                return false;
            }
            let op = q.ops.remove(i);
            if i == 0 {
                self.mark_completed(&q);
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
    pub fn finish_op(self: &Arc<Self>, seq: u64, epoch: u64, result: Result<()>) {
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
        let ops: Vec<Op> = {
            let mut q = self.queue.lock();
            q.running = false;
            self.completed.fetch_max(self.enqueued(), Ordering::SeqCst);
            q.ops.drain(..).collect()
        };
        // Dropped, and the running one's completion will be ignored: none of them is pending.
        self.exec.ops_dropped(ops.len() as u64);
        // Streams parked on our points: they are all reached now (drained or dead); wake them,
        // or a stream that took a dependency on us just before the reset would wait forever.
        let waiters: Vec<Arc<StreamCore>> =
            self.point_waiters.lock().drain(..).map(|w| w.1).collect();
        self.notifier.notify();
        drop(ops);
        run_wakeups(waiters);
    }

    /// Runs `f` over the deps of the ops in `(completed, upto]` (for the wait-for graph).
    pub(crate) fn scan_ops(q: &StreamQueue, from: u64, upto: u64, mut f: impl FnMut(&Op)) {
        for op in q.ops.iter() {
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

/// Advances every stream in `wake`, and those their progress wakes in turn (no recursion).
pub fn run_wakeups(mut wake: Vec<Arc<StreamCore>>) {
    while let Some(s) = wake.pop() {
        s.advance(&mut wake);
    }
}
