//! One device as the host sees it: its default stream and streams, enqueueing with the
//! default-stream rules, event records and waits (with cycle checks), host synchronization (with
//! stall detection), freeing, and reset.

pub mod graph_launch;

use crate::device::engine::on_device_thread;
use crate::runtime::diagnostics;
use crate::runtime::diagnostics::racecheck;
use crate::runtime::diagnostics::trace::{self, Track};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::deadlock::{self, Goal};
use crate::runtime::exec::event::{EventCore, Futures};
use crate::runtime::exec::executor::Executor;
use crate::runtime::exec::graph::capture;
use crate::runtime::exec::scheduler::Policy;
use crate::runtime::exec::stream::{
    run_wakeups, BusyStreams, Dep, FutureRecord, OpWork, RecordState, StreamCore, StreamPoint,
    WaitOn,
};
use crate::runtime::exec::stream_set::StreamSet;
use crate::runtime::exec::work::Point;
use parking_lot::{Mutex, RwLock};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct DeviceContext {
    pub index: usize,
    pub exec: Arc<Executor>,
    pub default_stream: Arc<StreamCore>,
    /// Streams other than the default one, until destroyed and drained.
    streams: Mutex<StreamSet>,
    /// The streams (default one included) that may have work pending: what
    /// `sync_device` waits for.
    busy: Arc<BusyStreams>,
    /// The runtime's futures: their count, and the lock that serializes adding and resolving
    /// them (shared by all devices).
    futures: Arc<Futures>,
    /// Held (write) by a reset; (read) by host threads creating streams and allocations, so that
    /// what exists when a reset starts is destroyed and what is created after it survives.
    reset_lock: RwLock<()>,
    deadlock_timeout: Duration,
}

/// The safety net in `wait_point` restarted work that was ready but not running: a runtime bug
/// (a lost wake-up). Said (at most 10 times per process) so that it is reported, not hidden.
/// It is an assertion where failures are wanted: in the library's own tests and debug builds,
/// and under `BIREN_ABORT_ON_INTERNAL_ERROR=1` (which `make test` sets for the C tests and the
/// fuzzer's short run) the call panics, which the C boundary turns into an abort. A release
/// build without the flag goes on with the work restarted.
fn report_rescue(call: &str, what: &str) {
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    if COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < 10 {
        eprintln!(
            "biren: internal: {call} found work that was ready but not started (a lost wake-up in the \
             runtime) and restarted it; the program goes on. Please report this with BIREN_TRACE output. \
             Before the restart: {what}"
        );
    }
    if cfg!(any(test, debug_assertions))
        || diagnostics::ABORT_ON_INTERNAL_ERROR.load(std::sync::atomic::Ordering::Relaxed)
    {
        panic!("lost wake-up: {call} found work that was ready but not started: {what}");
    }
}

/// True where a host synchronize would wait for itself (kernels, host functions).
#[inline]
pub fn sync_forbidden_here() -> bool {
    on_device_thread()
}

/// Tracing: a host synchronization, drawn on the calling thread's track with its call site (found
/// before the wait, so that the stack walk does not count as time blocked).
struct SyncSite(Option<(String, u64)>);

impl SyncSite {
    fn start() -> SyncSite {
        SyncSite(trace::on().then(|| {
            (
                crate::runtime::diagnostics::caller::trace_site(),
                trace::now(),
            )
        }))
    }

    fn end(self, name: impl FnOnce() -> String) {
        if let Some((site, t0)) = self.0 {
            trace::span(Track::HostThread, trace::SYNC, name(), t0, site);
        }
    }
}

impl DeviceContext {
    pub fn new(
        index: usize,
        compute_units: usize,
        capacity: u64,
        policy: Policy,
        deadlock_timeout_ms: u64,
        clock: Instant,
        futures: Arc<Futures>,
    ) -> DeviceContext {
        let exec = Executor::start(index, compute_units, capacity, policy, clock);
        let default_stream = StreamCore::new(
            deadlock::default_stream_id(index),
            index,
            0,
            0,
            true,
            exec.clone(),
            0,
        );
        let busy = Arc::new(BusyStreams::default());
        default_stream.track_busy(&busy);
        DeviceContext {
            index,
            exec,
            default_stream,
            streams: Mutex::new(StreamSet::default()),
            busy,
            futures,
            reset_lock: RwLock::new(()),
            deadlock_timeout: Duration::from_millis(deadlock_timeout_ms),
        }
    }

    /// Keeps a reset out while a host thread creates something (not on the device's own
    /// threads: a host function may allocate while a reset waits for it to finish).
    pub fn creating(&self) -> Option<parking_lot::RwLockReadGuard<'_, ()>> {
        (!on_device_thread()).then(|| self.reset_lock.read())
    }

    pub fn add_stream(&self, s: Arc<StreamCore>) {
        s.track_busy(&self.busy);
        self.streams.lock().add(s);
    }

    /// Forgets a destroyed stream once its work is done (now, if it is idle).
    pub fn retire_stream(&self, s: &Arc<StreamCore>) {
        s.mark_destroyed();
        self.streams.lock().retire(s);
    }

    /// Every stream with work that may be pending, the default one first.
    pub fn all_streams(&self) -> Vec<Arc<StreamCore>> {
        let mut v = vec![self.default_stream.clone()];
        v.extend(self.streams.lock().iter().cloned());
        v
    }

    pub fn live_streams(&self) -> usize {
        self.streams.lock().live()
    }

    /// The legacy default-stream dependencies of a new op in `s`.
    fn implicit_deps(&self, s: &Arc<StreamCore>) -> Vec<Dep> {
        if s.is_default {
            self.streams
                .lock()
                .iter()
                .filter(|b| b.is_blocking())
                .filter_map(|b| b.pending_tail().map(Dep::Point))
                .collect()
        } else if s.is_blocking() {
            self.default_stream
                .pending_tail()
                .map(Dep::Point)
                .into_iter()
                .collect()
        } else {
            Vec::new()
        }
    }

    fn check_enqueue(&self, s: &StreamCore) -> Result<()> {
        self.exec.sticky()?;
        s.check_usable()
    }

    /// Enqueues `work` on `s` after `deps` (and the default-stream rules); returns its seq.
    pub fn enqueue(
        &self,
        s: &Arc<StreamCore>,
        work: impl Into<OpWork>,
        deps: Vec<Dep>,
    ) -> Result<u64> {
        self.enqueue_since(s, work, deps, self.exec.epoch())
    }

    /// Enqueues work whose arguments (device pointers) were checked at reset epoch `epoch`: if
    /// the device was reset since, that memory is gone and the work is refused with
    /// INVALID_DEVICE_POINTER (a call that raced with birenDeviceReset). The check is made under
    /// the stream's lock, which the reset takes before it frees anything.
    pub fn enqueue_since(
        &self,
        s: &Arc<StreamCore>,
        work: impl Into<OpWork>,
        deps: Vec<Dep>,
        epoch: u64,
    ) -> Result<u64> {
        self.enqueue_pair(s, work.into(), deps, None, epoch)
            .map(|(seq, _)| seq)
    }

    /// As `enqueue_since`, and then `then` (an op and its dependencies, exempt from the
    /// default-stream rules) right behind it, with no other op between. Returns the first op's
    /// seq (0 if a capture took it) and, when `then` is given, every dependency of the first
    /// op, the default-stream ones included (a graph launch with event nodes: graph/events.rs).
    pub fn enqueue_pair(
        &self,
        s: &Arc<StreamCore>,
        work: OpWork,
        mut deps: Vec<Dep>,
        then: Option<(OpWork, Vec<Dep>)>,
        epoch: u64,
    ) -> Result<(u64, Vec<Dep>)> {
        self.check_enqueue(s)?;
        // Stream capture: device work for a capturing stream becomes a graph node instead.
        let work = match work {
            OpWork::Run(w) if capture::active() => match capture::divert(s, w) {
                Ok(r) => return r.map(|seq| (seq, Vec::new())),
                Err(w) => OpWork::Run(w),
            },
            other => other,
        };
        self.exec.throttle();
        // Non-blocking streams have no implicit dependencies (and skip building none).
        if s.is_default || s.is_blocking() {
            let implicit = self.implicit_deps(s);
            if s.is_default && !implicit.is_empty() && diagnostics::validator_on() {
                crate::runtime::diagnostics::advice::default_stream_serialized(implicit.len());
            }
            deps.extend(implicit);
        }
        let mut t = s.tail.lock();
        if self.exec.epoch() != epoch {
            return Err(ErrorCode::InvalidDevicePointer);
        }
        let seen = if then.is_some() {
            deps.clone()
        } else {
            Vec::new()
        };
        let (seq, kick) = s.push_locked(&mut t, work, deps);
        if let Some((w, d)) = then {
            // The consumer was told (or is running) already: no second kick is due.
            let _ = s.push_locked(&mut t, w, d);
        }
        drop(t);
        if kick {
            s.kick();
        }
        Ok((seq, seen))
    }

    /// Runs `f` now if nothing is queued on the device and no reset happened since `epoch`. The
    /// reset lock (read) keeps a reset from freeing memory during `f` without blocking other
    /// threads' enqueues. False if it did not run.
    pub fn run_inline_since(&self, s: &Arc<StreamCore>, epoch: u64, f: impl FnOnce()) -> bool {
        let _no_reset = self.reset_lock.read();
        if !self.exec.is_idle() || self.exec.epoch() != epoch || !s.is_idle() {
            return false;
        }
        f();
        true
    }

    /// `birenEventRecord`: captures the work enqueued in `s` so far.
    pub fn record(&self, ev: &EventCore, s: &Arc<StreamCore>) -> Result<()> {
        self.check_enqueue(s)?;
        let deps = self.implicit_deps(s);
        let mut st = ev.state.lock();
        if st.future.is_none() {
            let mut t = s.tail.lock();
            let rs = Arc::new(RecordState::new(
                StreamPoint {
                    stream: s.clone(),
                    seq: s.enqueued() + 1,
                },
                ev.id,
                !ev.timing_disabled(),
            ));
            if deps.is_empty() && !trace::on() && s.record_now_locked(&mut t) {
                // Nothing enqueued before it is unfinished: the record is reached now.
                rs.mark(|| self.exec.now_ns());
                if racecheck::on() {
                    racecheck::completed_at_once(s.race_tag(), s.enqueued());
                }
                drop(t);
                st.latest = Some(rs);
                return Ok(());
            }
            let (_, kick) = s.push_locked(&mut t, OpWork::Record(rs.clone()), deps);
            drop(t);
            st.latest = Some(rs);
            drop(st);
            if kick {
                s.kick();
            }
            return Ok(());
        }
        drop(st);
        self.record_resolving(ev, s)
    }

    /// A record that resolves a future: refused if it would close a cycle.
    fn record_resolving(&self, ev: &EventCore, s: &Arc<StreamCore>) -> Result<()> {
        let _g = self.futures.lock.lock();
        let deps = self.implicit_deps(s);
        let mut st = ev.state.lock();
        let Some(future) = st.future.clone() else {
            drop(st);
            return self.record(ev, s);
        };
        // The whole stream in view (consumer's end, then the tail) while we search and push.
        let q = s.queue.lock();
        let mut t = s.tail.lock();
        let seq = s.enqueued() + 1;
        let mut starts: Vec<StreamPoint> = deps
            .iter()
            .filter_map(|d| match d {
                Dep::Point(p) => Some(p.clone()),
                Dep::Future(_) => None,
            })
            .collect();
        starts.push(StreamPoint {
            stream: s.clone(),
            seq: seq - 1,
        });
        let waits: Vec<(u64, u64)> = future.waits().iter().map(|(w, n)| (w.id, *n)).collect();
        if let Some(found) = deadlock::search(&starts, Some((s, &q, &t)), Goal::Waits(&waits)) {
            let chain = if found.hops.is_empty() {
                String::new()
            } else {
                format!("{}; ", deadlock::describe_hops(&found.hops))
            };
            diagnostics::finding(
                "birenEventRecord",
                &format!(
                    "recording event #{} in {} would close a cycle of waits: {}{} waits (its op {}) for this very record of event #{}. \
                     Returned BIREN_ERROR_DEADLOCK; nothing was enqueued. Make the dependencies a DAG, or record the event in a stream that does not wait for these.",
                    ev.id,
                    deadlock::stream_name(s.id),
                    chain,
                    deadlock::stream_name(found.stream),
                    found.seq,
                    ev.id,
                ),
            );
            return Err(ErrorCode::Deadlock);
        }
        let rs = Arc::new(RecordState::new(
            StreamPoint {
                stream: s.clone(),
                seq,
            },
            ev.id,
            !ev.timing_disabled(),
        ));
        let (_, kick) = s.push_locked(&mut t, OpWork::Record(rs.clone()), deps);
        drop(t);
        drop(q);
        st.latest = Some(rs.clone());
        st.future = None;
        self.futures.cleared();
        drop(st);
        let mut wake = future.resolve(rs.clone());
        if kick {
            wake.push(s.clone());
        }
        run_wakeups(wake);
        Ok(())
    }

    /// `birenStreamWaitEvent`: later work in `s` waits for the event's latest record, or for its
    /// next record if it was never recorded.
    pub fn wait_event(&self, s: &Arc<StreamCore>, ev: &EventCore) -> Result<()> {
        self.check_enqueue(s)?;
        let wait_for = |rs: Arc<RecordState>| {
            let deps = vec![Dep::Point(rs.point.clone())];
            let work = OpWork::Wait {
                event: ev.id,
                on: WaitOn::Record(rs),
            };
            self.enqueue(s, work, deps).map(|_| ())
        };
        if let Some(rs) = ev.latest() {
            return wait_for(rs);
        }
        let _g = self.futures.lock.lock();
        let mut st = ev.state.lock();
        if let Some(rs) = st.latest.clone() {
            drop(st);
            return wait_for(rs);
        }
        let future = match &st.future {
            Some(f) => f.clone(),
            None => {
                self.futures.created();
                let f = Arc::new(FutureRecord::new(ev.id));
                st.future = Some(f.clone());
                f
            }
        };
        let mut deps = vec![Dep::Future(future.clone())];
        deps.extend(self.implicit_deps(s));
        let mut t = s.tail.lock();
        let (seq, kick) = s.push_locked(
            &mut t,
            OpWork::Wait {
                event: ev.id,
                on: WaitOn::Future(future.clone()),
            },
            deps,
        );
        future.add_wait(s, seq);
        drop(t);
        drop(st);
        if kick {
            s.kick();
        }
        Ok(())
    }

    /// The event is being destroyed: streams waiting for its first record stop waiting (as a
    /// wait on a never-recorded event does in CUDA). Returns the streams that were waiting.
    pub fn abandon_future(&self, ev: &EventCore) -> Vec<u64> {
        let _g = self.futures.lock.lock();
        let mut st = ev.state.lock();
        let Some(future) = st.future.take() else {
            return Vec::new();
        };
        self.futures.cleared();
        drop(st);
        let waiting = future.waiting_streams();
        run_wakeups(future.abandon());
        waiting
    }

    /// Waits on the host until `p` is reached. `DEADLOCK` if the work is blocked on a wait that
    /// no enqueued record can satisfy for longer than the deadlock timeout.
    pub fn wait_point(&self, p: &StreamPoint, call: &str) -> Result<()> {
        // Recording or replaying: a waiting call lets the other threads' calls go.
        if crate::runtime::exec::replay::on() {
            crate::runtime::exec::replay::release();
        }
        if p.reached() {
            return Ok(());
        }
        let mut deadline: Option<Instant> = None;
        // Safety net against a lost wake-up (a stream whose head op is ready but that nobody
        // advanced): when a stream has looked so at two looks a second apart without any op
        // completing on the device, the waiting host thread kicks it and says so.
        let mut quiet_since = (Instant::now(), self.exec.ops_completed());
        // The streams (by id) and the scheduler that looked stalled at the last look.
        let mut suspects: Vec<(u64, (u64, u64))> = Vec::new();
        let mut scheduler_suspect = None;
        loop {
            if self.futures.pending() > 0 {
                if let Some(found) =
                    deadlock::search(std::slice::from_ref(p), None, Goal::UnresolvedFuture)
                {
                    let now = Instant::now();
                    let d = *deadline.get_or_insert(now + self.deadlock_timeout);
                    if now >= d {
                        diagnostics::finding(
                            call,
                            &format!(
                                "the awaited work can never finish: {}{} (op {}) waits for the first record of event #{}, \
                                 and none has been enqueued for {} ms. Returned BIREN_ERROR_DEADLOCK. Record the event, or call birenDeviceReset.",
                                if found.hops.is_empty() { String::new() } else { format!("{}; ", deadlock::describe_hops(&found.hops)) },
                                deadlock::stream_name(found.stream),
                                found.seq,
                                found.event.unwrap_or(0),
                                self.deadlock_timeout.as_millis(),
                            ),
                        );
                        return Err(ErrorCode::Deadlock);
                    }
                    if p.stream.notifier.wait_until(p.seq, || p.reached(), Some(d)) {
                        return Ok(());
                    }
                    continue;
                }
            }
            deadline = None;
            // Not blocked on a future: the work will finish. Re-check now and then, in case a
            // future appears upstream (it cannot for enqueued work, but waits are cheap).
            if p.stream.notifier.wait_until(
                p.seq,
                || p.reached(),
                Some(Instant::now() + Duration::from_millis(50)),
            ) {
                return Ok(());
            }
            let done = self.exec.ops_completed();
            if done != quiet_since.1 {
                quiet_since = (Instant::now(), done);
                suspects.clear();
                scheduler_suspect = None;
            } else if quiet_since.0.elapsed() >= Duration::from_secs(1) {
                quiet_since = (Instant::now(), done);
                // A stall seen twice, a second apart, with no op completed in between: a wake-up
                // in flight (a thread between making an op ready and advancing its stream, slow
                // on a loaded machine) has had its second; a lost one has not moved. Seen once,
                // it is only remembered (reporting it then made false alarms under load).
                let mut seen = Vec::new();
                for s in self.all_streams() {
                    if let Some(mark) = s.stall_mark() {
                        if suspects.contains(&(s.id, mark)) {
                            if let Some(what) = s.kick_if_stalled() {
                                report_rescue(call, &what);
                            }
                        }
                        seen.push((s.id, mark));
                    }
                }
                let mark = self.exec.scheduler.stall_mark();
                if mark.is_some() && mark == scheduler_suspect {
                    if let Some(what) = self.exec.scheduler.kick_if_stalled() {
                        report_rescue(call, &what);
                    }
                }
                scheduler_suspect = mark;
                suspects = seen;
            }
        }
    }

    /// Waits for op `seq` that a synchronous call (birenMemcpy, birenMemset) enqueued in `s`. If
    /// the wait fails (DEADLOCK), the op is withdrawn: a failed call writes nothing, ever.
    pub fn wait_own(&self, s: &Arc<StreamCore>, seq: u64, call: &str) -> Result<()> {
        let p = StreamPoint {
            stream: s.clone(),
            seq,
        };
        let site = SyncSite::start();
        if let Err(e) = self.wait_point(&p, call) {
            if s.withdraw(seq) {
                site.end(|| call.to_string());
                return Err(e);
            }
            // It started (or finished) just as the wait gave up: it completes normally.
            let r = self.wait_point(&p, call);
            site.end(|| call.to_string());
            r?;
        } else {
            site.end(|| call.to_string());
        }
        if racecheck::on() {
            racecheck::host_synced(&[(s.id, seq)]);
        }
        self.exec.sticky()
    }

    fn after_wait(&self, s: &StreamCore) -> Result<()> {
        if s.is_dead() {
            return Err(ErrorCode::InvalidHandle);
        }
        self.exec.sticky()
    }

    /// After a host synchronize: the validator checks device memory, then the sticky error.
    fn after_sync(&self, call: &str) -> Result<()> {
        if diagnostics::validator_on() && self.exec.sticky().is_ok() {
            self.exec
                .check_memory(&format!("work finished before {call}"))?;
        }
        self.exec.sticky()
    }

    pub fn sync_stream(&self, s: &Arc<StreamCore>, call: &str) -> Result<()> {
        if sync_forbidden_here() {
            return Err(ErrorCode::NotPermitted);
        }
        self.exec.sticky()?;
        let upto = s.enqueued();
        let site = SyncSite::start();
        let r = match s.pending_tail() {
            Some(p) => self.wait_point(&p, call),
            None => Ok(()),
        };
        site.end(|| format!("{call}({})", deadlock::stream_name(s.id)));
        r?;
        if racecheck::on() {
            racecheck::host_synced(&[(s.id, upto)]);
        }
        self.after_wait(s)?;
        self.after_sync(call)
    }

    pub fn sync_device(&self) -> Result<()> {
        if sync_forbidden_here() {
            return Err(ErrorCode::NotPermitted);
        }
        crate::runtime::diagnostics::advice::device_synchronized();
        if diagnostics::validator_on() {
            let busy = self
                .all_streams()
                .iter()
                .filter(|s| s.pending_tail().is_some())
                .count();
            diagnostics::advice::streams_busy(busy, self.exec.compute_units(), self.index);
        }
        let site = SyncSite::start();
        let mut r = Ok(());
        let upto: Vec<(u64, u64)> = if racecheck::on() {
            let streams = self.all_streams();
            streams.iter().map(|s| (s.id, s.enqueued())).collect()
        } else {
            Vec::new()
        };
        // The streams with work pending only (not every stream of the device).
        for p in self.busy.pending() {
            r = self.wait_point(&p, "birenDeviceSynchronize");
            if r.is_err() {
                break;
            }
        }
        self.busy.prune();
        site.end(|| "birenDeviceSynchronize".into());
        r?;
        if racecheck::on() {
            racecheck::host_synced(&upto);
        }
        self.exec.reclaim();
        self.after_sync("birenDeviceSynchronize")
    }

    pub fn sync_event(&self, ev: &EventCore) -> Result<()> {
        if sync_forbidden_here() {
            return Err(ErrorCode::NotPermitted);
        }
        self.exec.sticky()?;
        let site = SyncSite::start();
        let latest = ev.latest();
        let r = match &latest {
            Some(rs) => self.wait_point(&rs.point, "birenEventSynchronize"),
            None => Ok(()),
        };
        site.end(|| format!("birenEventSynchronize(event #{})", ev.id));
        r?;
        if latest.as_ref().is_some_and(|rs| rs.point.stream.is_dead()) {
            return Err(ErrorCode::InvalidHandle);
        }
        if let Some(rs) = latest.filter(|_| racecheck::on()) {
            racecheck::host_synced(&[(rs.point.stream.id, rs.point.seq)]);
        }
        self.after_sync("birenEventSynchronize")
    }

    /// Frees a device allocation once the work enqueued so far no longer needs it.
    pub fn free(&self, base: usize) -> Result<()> {
        let a = self.exec.memory.unregister(base)?;
        if self.exec.is_idle() {
            self.exec.release(a);
        } else {
            let until = self
                .all_streams()
                .iter()
                .filter_map(|s| s.pending_tail().map(|p| p.point()))
                .collect();
            self.exec.free_after(a, until);
        }
        Ok(())
    }

    /// Allocates, waiting for deferred frees when the device is full (not on the device's own
    /// threads: a host function would wait for work queued behind itself); race detection
    /// learns of the allocation (every kind: birenMalloc, pitched, 3-D, managed, pools).
    pub fn malloc(&self, size: usize, guard: usize, caller: usize) -> Result<usize> {
        let p = self.allocate(size, guard, caller)?;
        if crate::runtime::diagnostics::racecheck::on() {
            crate::runtime::diagnostics::racecheck::alloc(p, size, Some(self.index));
        }
        Ok(p)
    }

    fn allocate(&self, size: usize, guard: usize, caller: usize) -> Result<usize> {
        let _no_reset = self.creating();
        match self.exec.memory.allocate(size, guard, caller) {
            Err(ErrorCode::OutOfMemory) => {
                // Memory pools' reserves (memory freed to them and kept) come back first.
                if self.exec.memory.drop_holds() {
                    if let Ok(p) = self.exec.memory.allocate(size, guard, caller) {
                        return Ok(p);
                    }
                }
                // Memory whose work has completed comes back. (A synchronize may return
                // just before the completing thread releases it; that thread may also have
                // released it since our attempt: retry either way.)
                self.exec.reclaim();
                if let Ok(p) = self.exec.memory.allocate(size, guard, caller) {
                    return Ok(p);
                }
                if on_device_thread() {
                    return Err(ErrorCode::OutOfMemory);
                }
                // Would it fit once the deferred frees are released? If not, no wait helps.
                let rounded = (size as u64)
                    .checked_next_multiple_of(256)
                    .unwrap_or(u64::MAX);
                let mem = &self.exec.memory;
                let after = mem.used().saturating_sub(self.exec.deferred_bytes());
                if after.saturating_add(rounded) > mem.capacity() {
                    if self.exec.drain_quarantine() {
                        return mem.allocate(size, guard, caller);
                    }
                    return Err(ErrorCode::OutOfMemory);
                }
                let points = self.exec.deferred_points();
                if points.is_empty() {
                    if self.exec.drain_quarantine() {
                        return self.exec.memory.allocate(size, guard, caller);
                    }
                    return Err(ErrorCode::OutOfMemory);
                }
                for p in points {
                    // Work that can never finish holds its memory for good: out of memory.
                    self.wait_deferred(&p).map_err(|_| ErrorCode::OutOfMemory)?;
                }
                self.exec.reclaim();
                self.exec.memory.allocate(size, guard, caller)
            }
            r => r,
        }
    }

    /// Waits for a point a deferred free waits for (the executor names the stream by id only).
    fn wait_deferred(&self, p: &Point) -> Result<()> {
        let Some(stream) = self.all_streams().into_iter().find(|s| s.id == p.of.id()) else {
            return Ok(()); // gone (reset): its work is dropped, its points reached
        };
        self.wait_point(&StreamPoint { stream, seq: p.seq }, "birenMalloc")
    }

    /// Drops queued work, waits for running work, destroys all streams (returned, for handle
    /// invalidation) and frees all memory. Returns the live allocations as (base, size, caller).
    ///
    /// It waits for the device's threads (running blocks, copies, the host function in progress)
    /// while holding only the reset lock, which they never take (`creating` skips it on device
    /// threads). In particular not the futures lock: a host function may be inside
    /// birenEventDestroy, birenEventRecord or birenStreamWaitEvent, which take it, and would
    /// never finish (issue 31, hang 1). Nothing here needs it: a reset adds, resolves and counts
    /// no future; the streams it kills answer every point as reached, and a cycle search that
    /// meets one mid-kill sees it complete.
    pub fn reset(&self) -> Vec<(usize, usize, usize)> {
        let _r = self.reset_lock.write();
        self.exec.begin_reset();
        self.exec.wait_for_starts();
        let streams = self.streams.lock().take();
        for s in &streams {
            s.kill();
        }
        self.default_stream.drain();
        let live = self.exec.reset();
        if racecheck::on() {
            racecheck::reset_device(self.index);
        }
        crate::runtime::exec::schedule::reset_device(self.index);
        self.exec.end_reset();
        // Work enqueued while the reset ran (by other host threads, on the default stream or on
        // streams created meanwhile) could not start: start it now.
        for s in self.all_streams() {
            s.kick();
        }
        live
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::exec::event::EVENT_DISABLE_TIMING;
    use crate::runtime::exec::stream::test_hooks;
    use crate::runtime::exec::work::{HostCall, Work};
    use std::sync::mpsc;

    unsafe extern "C" fn nothing(_: *mut std::ffi::c_void) {}

    fn device() -> Arc<DeviceContext> {
        Arc::new(DeviceContext::new(
            0,
            1,
            1 << 20,
            Policy::Preemptive,
            250,
            Instant::now(),
            Arc::new(Futures::default()),
        ))
    }

    /// The lost wake-up of issues 16 and 31, forced: a record on an idle blocking stream B
    /// completes at once (`record_now_locked`, two stores). A default-stream op enqueued
    /// between the two stores takes its implicit dependency on B's pending tail. Had `enqueued`
    /// been stored first, that op would depend on a point that no completion announces: it
    /// never starts while every engine is idle, and the synchronize behind it would hang but
    /// for the safety net, which in tests is an assertion (`report_rescue` panics). With
    /// `completed` stored first the op sees nothing pending and runs.
    #[test]
    fn default_stream_op_enqueued_inside_a_record_on_an_idle_stream_runs() {
        let d = device();
        let b = StreamCore::new(1000, 0, 0, 0, false, d.exec.clone(), 0);
        d.add_stream(b.clone());
        let ev = Arc::new(EventCore::new(1, 0, EVENT_DISABLE_TIMING, 0));
        let (at_pause, paused) = mpsc::channel::<()>();
        let (resume, go_on) = mpsc::channel::<()>();
        let recorder = {
            let (d, b, ev) = (d.clone(), b.clone(), ev.clone());
            std::thread::spawn(move || {
                test_hooks::pause_between_record_stores(move || {
                    at_pause.send(()).unwrap();
                    go_on.recv().unwrap();
                });
                d.record(&ev, &b).unwrap();
            })
        };
        paused.recv().unwrap();
        // Between the record's two stores: a synchronous call's op on the default stream.
        let host = HostCall {
            func: nothing,
            data: 0,
            despite_error: false,
        };
        d.enqueue(&d.default_stream, Work::Host(host), Vec::new())
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        resume.send(()).unwrap();
        recorder.join().unwrap();
        let t0 = Instant::now();
        d.sync_stream(&d.default_stream, "test").unwrap();
        assert!(d.default_stream.is_idle() && b.is_idle());
        assert!(t0.elapsed() < Duration::from_secs(1), "the op started late");
    }

    unsafe extern "C" fn wait_for_gate(gate: *mut std::ffi::c_void) {
        let gate = unsafe { &*(gate as *const std::sync::atomic::AtomicBool) };
        while !gate.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// A reset while an op runs (here a host function) drops it: its completion is ignored, so
    /// the reset must count it finished, or the device never counts as idle again (every later
    /// synchronous copy then queued instead of running at once, every free deferred).
    #[test]
    fn a_reset_during_a_running_op_leaves_the_device_idle() {
        static GATE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let d = device();
        let host = HostCall {
            func: wait_for_gate,
            data: &GATE as *const _ as usize,
            despite_error: false,
        };
        d.enqueue(&d.default_stream, Work::Host(host), Vec::new())
            .unwrap();
        let reset = {
            let d = d.clone();
            std::thread::spawn(move || d.reset())
        };
        std::thread::sleep(Duration::from_millis(50));
        GATE.store(true, std::sync::atomic::Ordering::SeqCst);
        reset.join().unwrap();
        assert!(d.exec.is_idle(), "the reset left the dropped op pending");
        // And an op pushed onto a stream the reset killed is not pending either.
        let s = StreamCore::new(2000, 0, 0, 0, false, d.exec.clone(), 0);
        s.kill();
        let (_, _) = s.push_locked(&mut s.tail.lock(), Work::Host(host).into(), Vec::new());
        assert!(
            d.exec.is_idle(),
            "an op on a dead stream counted as pending"
        );
    }

    /// A wake-up that is late, not lost (the pushing thread kicks its stream 1.5 s after the
    /// push, as a thread descheduled on a loaded machine may): the waiting synchronize sees the
    /// stream stalled once, and not again a second later. Reported as a lost wake-up before,
    /// which on loaded machines made the fuzzer's false alarms (issue 31).
    #[test]
    fn a_wake_up_a_second_late_is_not_a_lost_one() {
        let d = device();
        let s = d.default_stream.clone();
        let host = HostCall {
            func: nothing,
            data: 0,
            despite_error: false,
        };
        let (_, kick) = s.push_locked(&mut s.tail.lock(), Work::Host(host).into(), Vec::new());
        assert!(kick);
        let late = {
            let s = s.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(1500));
                s.kick();
            })
        };
        d.sync_stream(&s, "test").unwrap();
        late.join().unwrap();
    }

    /// The safety net is an assertion in tests: a synchronize that finds work ready but not
    /// started (here an op pushed without the kick its push asked for) fails, after restarting it.
    #[test]
    #[should_panic(expected = "lost wake-up")]
    fn a_rescued_lost_wake_up_fails_the_test() {
        let d = device();
        let s = &d.default_stream;
        let host = HostCall {
            func: nothing,
            data: 0,
            despite_error: false,
        };
        let (_, kick) = s.push_locked(&mut s.tail.lock(), Work::Host(host).into(), Vec::new());
        assert!(kick, "the stream was stopped: this push must kick it");
        let _ = d.sync_stream(s, "test");
    }
}
