//! Host synchronization: a host thread waits for a point in a stream (birenStreamSynchronize,
//! birenEventSynchronize, birenDeviceSynchronize), helped along by the deadlock search and the
//! safety net that restarts work a lost wake-up left ready but not started.

use super::DeviceContext;
use crate::device::engine::on_device_thread;
use crate::runtime::diagnostics;
use crate::runtime::diagnostics::racecheck;
use crate::runtime::diagnostics::trace::{self, Track};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::deadlock::{self, Goal};
use crate::runtime::exec::event::EventCore;
use crate::runtime::exec::stream::{StreamCore, StreamPoint};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The safety net in `wait_point` restarted work that was ready but not running: a runtime bug
/// (a lost wake-up). Said (at most 10 times per process) so that it is reported, not hidden.
/// It is an assertion where failures are wanted: in the library's own tests and debug builds,
/// and under `BIREN_ABORT_ON_INTERNAL_ERROR=1` (which `make test` sets for the C tests and the
/// fuzzer's short run) the call panics, which the C boundary turns into an abort. A release
/// build without the flag goes on with the work restarted.
pub(super) fn report_rescue(call: &str, what: &str) {
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
                    deadlock::search(std::slice::from_ref(p), Goal::UnresolvedFuture)
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

    pub(super) fn after_wait(&self, s: &StreamCore) -> Result<()> {
        if s.is_dead() {
            return Err(ErrorCode::InvalidHandle);
        }
        self.exec.sticky()
    }

    /// After a host synchronize: the validator checks device memory, then the sticky error.
    pub(super) fn after_sync(&self, call: &str) -> Result<()> {
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
}
