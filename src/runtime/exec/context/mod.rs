//! One device as the host sees it: its default stream and streams, enqueueing with the
//! default-stream rules, event records and waits (with cycle checks), host synchronization (with
//! stall detection), freeing, and reset.

pub mod graph_launch;
mod host_sync;
mod memory;

pub use host_sync::sync_forbidden_here;

use crate::device::engine::on_device_thread;
use crate::runtime::diagnostics;
use crate::runtime::diagnostics::racecheck;
use crate::runtime::diagnostics::trace::{self};
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
use crate::runtime::lock_order::{Rank, RankedMutex, RankedReadGuard, RankedRwLock};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct DeviceContext {
    pub index: usize,
    pub exec: Arc<Executor>,
    pub default_stream: Arc<StreamCore>,
    /// Streams other than the default one, until destroyed and drained.
    streams: RankedMutex<StreamSet>,
    /// The streams (default one included) that may have work pending: what
    /// `sync_device` waits for.
    busy: Arc<BusyStreams>,
    /// The runtime's futures: their count, and the lock that serializes adding and resolving
    /// them (shared by all devices).
    futures: Arc<Futures>,
    /// Held (write) by a reset; (read) by host threads creating streams and allocations, so that
    /// what exists when a reset starts is destroyed and what is created after it survives.
    reset_lock: RankedRwLock<()>,
    deadlock_timeout: Duration,
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
            streams: RankedMutex::new(Rank::StreamSet, StreamSet::default()),
            busy,
            futures,
            reset_lock: RankedRwLock::new(Rank::ResetGate, ()),
            deadlock_timeout: Duration::from_millis(deadlock_timeout_ms),
        }
    }

    /// Keeps a reset out while a host thread creates something (not on the device's own
    /// threads: a host function may allocate while a reset waits for it to finish).
    pub(crate) fn creating(&self) -> Option<RankedReadGuard<'_, ()>> {
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
        s.check_alive_locked(&t)?;
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
            s.check_alive_locked(&t)?;
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
        let waits: Vec<(u64, u64)> = future.waits().iter().map(|(w, n)| (w.id, *n)).collect();
        // The search locks each stream it visits, one at a time, so it runs with no stream lock
        // held (the lock order: a stream's locks are never taken under another's). What it
        // proved holds for the ops of `s` up to `upto`; the record goes right behind them, or,
        // if another thread enqueued on `s` meanwhile, the search runs again over the new ops.
        // (No new wait on the future can appear meanwhile: adding one takes the futures lock.)
        let (mut t, seq) = loop {
            let upto = s.enqueued();
            let mut starts: Vec<StreamPoint> = deps
                .iter()
                .filter_map(|d| match d {
                    Dep::Point(p) => Some(p.clone()),
                    Dep::Future(_) => None,
                })
                .collect();
            starts.push(StreamPoint {
                stream: s.clone(),
                seq: upto,
            });
            if let Some(found) = deadlock::search(&starts, Goal::Waits(&waits)) {
                return Err(self.refuse_cycle(ev, s, found));
            }
            let t = s.tail.lock();
            s.check_alive_locked(&t)?;
            if s.enqueued() == upto {
                break (t, upto + 1);
            }
        };
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

    /// Reports a record refused because it would close a cycle of waits.
    fn refuse_cycle(
        &self,
        ev: &EventCore,
        s: &Arc<StreamCore>,
        found: deadlock::Found,
    ) -> ErrorCode {
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
        ErrorCode::Deadlock
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
        let g = self.futures.lock.lock();
        let mut st = ev.state.lock();
        if let Some(rs) = st.latest.clone() {
            // Recorded meanwhile: an ordinary wait, whose enqueue may wait for room on the
            // device, so not under the futures lock (a host function recording an event needs it).
            drop(st);
            drop(g);
            return wait_for(rs);
        }
        let implicit = self.implicit_deps(s);
        let mut t = s.tail.lock();
        // Before a future is made: a wait refused here leaves the event as it was.
        s.check_alive_locked(&t)?;
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
        deps.extend(implicit);
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

    /// Drops queued work, waits for running work, destroys all streams and frees all memory.
    /// Returns the live allocations as (base, size, caller). `forget_handles` runs once the
    /// device's threads are done, before anything starts again: what the host function in
    /// progress created is then gone with the rest (before the reset), and what a host thread
    /// creates once the reset lock is free stays (after it); never half of one.
    ///
    /// It waits for the device's threads (running blocks, copies, the host function in progress)
    /// while holding only the reset lock, which they never take (`creating` skips it on device
    /// threads). In particular not the futures lock: a host function may be inside
    /// birenEventDestroy, birenEventRecord or birenStreamWaitEvent, which take it, and would
    /// never finish (issue 31, hang 1). Nothing here needs it: a reset adds, resolves and counts
    /// no future; the streams it kills answer every point as reached, and a cycle search that
    /// meets one mid-kill sees it complete.
    pub fn reset(&self, forget_handles: impl FnOnce()) -> Vec<(usize, usize, usize)> {
        let _r = self.reset_lock.write();
        self.exec.begin_reset();
        self.exec.wait_for_starts();
        let streams = self.streams.lock().take();
        for s in &streams {
            s.kill();
        }
        self.default_stream.drain();
        let live = self.exec.reset();
        // The host function in progress has returned: the streams made meanwhile (by it, or as
        // a graph launch's lanes) go too.
        for s in self.streams.lock().take() {
            s.kill();
        }
        forget_handles();
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
        let host = HostCall::plain(nothing, 0);
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
        let host = HostCall::plain(wait_for_gate, &GATE as *const _ as usize);
        d.enqueue(&d.default_stream, Work::Host(host), Vec::new())
            .unwrap();
        let reset = {
            let d = d.clone();
            std::thread::spawn(move || d.reset(|| {}))
        };
        std::thread::sleep(Duration::from_millis(50));
        GATE.store(true, std::sync::atomic::Ordering::SeqCst);
        reset.join().unwrap();
        assert!(d.exec.is_idle(), "the reset left the dropped op pending");
        // And a push onto a stream the reset killed is refused.
        let s = StreamCore::new(2000, 0, 0, 0, false, d.exec.clone(), 0);
        s.kill();
        assert!(matches!(
            s.check_alive_locked(&s.tail.lock()),
            Err(ErrorCode::InvalidHandle)
        ));
        assert!(d.exec.is_idle());
    }

    unsafe extern "C" fn short_sleep(_: *mut std::ffi::c_void) {
        std::thread::sleep(Duration::from_micros(50));
    }

    /// Records and launches that checked their stream alive just before a reset killed it must
    /// not leave their ops in the dead stream's tail: nothing would ever run or drop them, and a
    /// record's state names its own stream, so the stream would keep itself alive for good.
    /// (`make valgrind` found two streams definitely lost in test_reset_races.) Each round a
    /// thread enqueues on a fresh stream until a reset kills it; then the stream must go away
    /// with its last handle.
    #[test]
    fn ops_racing_a_reset_never_stay_in_a_killed_stream() {
        let d = device();
        let mut kept = 0;
        for round in 0..1000u64 {
            let s = StreamCore::new(3000 + round, 0, 1, 0, false, d.exec.clone(), 0);
            d.add_stream(s.clone());
            let ev = Arc::new(EventCore::new(round + 1, 0, EVENT_DISABLE_TIMING, 0));
            let hammer = {
                let (d, s, ev) = (d.clone(), s.clone(), ev.clone());
                std::thread::spawn(move || loop {
                    let host = HostCall::plain(short_sleep, 0);
                    if d.enqueue(&s, Work::Host(host), Vec::new()).is_err()
                        || d.record(&ev, &s).is_err()
                    {
                        break;
                    }
                })
            };
            std::thread::sleep(Duration::from_micros(100 + round % 7 * 150));
            d.reset(|| {});
            hammer.join().unwrap();
            drop(ev);
            d.busy.prune();
            let w = Arc::downgrade(&s);
            drop(s);
            kept += w.upgrade().is_some() as usize;
        }
        assert_eq!(
            kept, 0,
            "{kept} of 1000 killed streams kept alive by ops left in them"
        );
    }

    /// A record that resolves a future searches the streams its own depends on, for a cycle.
    /// It locks each of them alone, never one under another's (the lock order: the checker of
    /// debug builds panicked here when the search ran under the recording stream's locks), and
    /// still refuses the record that would close a cycle and takes the one that would not.
    #[test]
    fn a_resolving_record_searches_other_streams_holding_no_stream_lock() {
        static GATE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        use crate::runtime::exec::stream::STREAM_NON_BLOCKING;
        let d = device();
        let stream = |id| {
            let s = StreamCore::new(id, 0, STREAM_NON_BLOCKING, 0, false, d.exec.clone(), 0);
            d.add_stream(s.clone());
            s
        };
        let (a, b, c, x) = (stream(3001), stream(3002), stream(3003), stream(3004));
        let event = |id| EventCore::new(id, 0, EVENT_DISABLE_TIMING, 0);
        let (e, f, g) = (event(1), event(2), event(3));
        // a waits for e's first record; b waits for f, recorded in a behind that wait.
        d.wait_event(&a, &e).unwrap();
        d.record(&f, &a).unwrap();
        d.wait_event(&b, &f).unwrap();
        // Recording e in b would make b wait for itself.
        assert!(matches!(d.record(&e, &b), Err(ErrorCode::Deadlock)));
        // c waits for g, recorded in x behind a host function that holds x: the search walks
        // from c into x, finds no wait on e, and the record resolves e.
        let host = HostCall::plain(wait_for_gate, &GATE as *const _ as usize);
        d.enqueue(&x, Work::Host(host), Vec::new()).unwrap();
        d.record(&g, &x).unwrap();
        d.wait_event(&c, &g).unwrap();
        d.record(&e, &c).unwrap();
        GATE.store(true, std::sync::atomic::Ordering::SeqCst);
        for s in [&a, &b, &c, &x] {
            d.sync_stream(s, "test").unwrap();
        }
    }

    /// A wake-up that is late, not lost (the pushing thread kicks its stream 1.5 s after the
    /// push, as a thread descheduled on a loaded machine may): the waiting synchronize sees the
    /// stream stalled once, and not again a second later. Reported as a lost wake-up before,
    /// which on loaded machines made the fuzzer's false alarms (issue 31).
    #[test]
    fn a_wake_up_a_second_late_is_not_a_lost_one() {
        let d = device();
        let s = d.default_stream.clone();
        let host = HostCall::plain(nothing, 0);
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
        let host = HostCall::plain(nothing, 0);
        let (_, kick) = s.push_locked(&mut s.tail.lock(), Work::Host(host).into(), Vec::new());
        assert!(kick, "the stream was stopped: this push must kick it");
        let _ = d.sync_stream(s, "test");
    }
}
