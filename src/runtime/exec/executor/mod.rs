//! The executor of one device: where a stream's ready op goes to run (compute units through the
//! scheduler, copy engines, the host-function thread), plus the device's shared state: its
//! memory, its sticky error, its reset epoch and its count of unfinished work.

use crate::device::{ComputeUnits, EngineThread};
use crate::runtime::diagnostics;
use crate::runtime::diagnostics::trace::{self, Track};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::notifier::Notifier;
use crate::runtime::exec::scheduler::{Policy, Scheduler};
use crate::runtime::exec::work::{Padded, Point, Started, Ticket, Work};
use crate::runtime::lock_order::{Rank, RankedMutex};
use crate::runtime::memory::{Allocation, MemoryTable};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;

/// Which copy engine runs a copy.
pub(crate) use crate::runtime::exec::copy::{ENGINE_FROM_DEVICE, ENGINE_TO_DEVICE};

mod backlog;
mod frees;
mod reset;

/// The count of enqueued ops, and the count from which an enqueue next looks at the finished
/// count (the host's line: enqueuers write both).
struct Enqueued {
    count: AtomicU64,
    next_look: AtomicU64,
}

/// The count of finished ops and the enqueuers waiting for it to grow (on one line pair: the
/// completion that counts also reads whether anybody waits).
struct Finished {
    count: AtomicU64,
    room: Notifier,
}

struct DeferredFree {
    alloc: Allocation,
    until: Vec<Point>,
}

pub struct Executor {
    pub device: usize,
    pub memory: MemoryTable,
    pub scheduler: Arc<Scheduler>,
    copy: [Arc<EngineThread>; 2],
    host: Arc<EngineThread>,
    units: ComputeUnits,
    epoch: AtomicU64,
    /// The sticky error's code (0: none); shared with the host-function jobs, which pass it to
    /// stream callbacks when they run.
    sticky: Arc<AtomicI32>,
    /// Ops enqueued and ops finished (completed, withdrawn or dropped) on the device, on lines of
    /// their own: enqueuing hosts write the first, the device's threads the second.
    ops_in: Padded<Enqueued>,
    ops_out: Padded<Finished>,
    /// `ops_out` when a waiting enqueue last gave up (nothing finished for `BACKLOG_PATIENCE`):
    /// enqueues do not wait again until an op finishes.
    stalled_at: AtomicU64,
    /// Frees waiting for the work enqueued before them, oldest first. A free waits for the
    /// pending work of every stream (birenFree), so a later one is releasable only once the
    /// earlier ones are (stream-ordered frees, which wait for one stream, may be held up behind
    /// an older one: the full scan of `reclaim` releases them).
    deferred: RankedMutex<VecDeque<DeferredFree>>,
    has_deferred: AtomicBool,
    /// A completion found the deferred list locked: its holder looks again after unlocking.
    recheck: AtomicBool,
    /// True during a reset: no op starts.
    resetting: AtomicBool,
    /// Threads between taking an op from a stream and handing it over (a reset waits for them).
    starting: AtomicUsize,
    /// Validator: freed allocations kept poisoned to catch writes after free.
    quarantine: RankedMutex<Quarantine>,
    clock: Instant,
}

#[derive(Default)]
struct Quarantine {
    allocs: std::collections::VecDeque<Allocation>,
    bytes: usize,
}

impl Executor {
    pub fn start(
        device: usize,
        compute_units: usize,
        capacity: u64,
        policy: Policy,
        clock: Instant,
    ) -> Arc<Executor> {
        Arc::new_cyclic(|me: &Weak<Executor>| {
            let me = me.clone();
            let scheduler = Arc::new(Scheduler::new(
                device,
                policy,
                Box::new(move |k, failure| {
                    let mut result = match failure {
                        None => Ok(()),
                        Some((e, msg)) => {
                            diagnostics::async_error(&msg);
                            trace::instant(
                                k.ticket().to.track(),
                                trace::ERROR,
                                format!("error: {msg}"),
                                String::new(),
                            );
                            Err(e)
                        }
                    };
                    if result.is_ok() && diagnostics::validator_on() {
                        if let Some(ex) = me.upgrade() {
                            result = ex.check_memory(&format!("kernel '{}'", k.launch.name()));
                        }
                    }
                    k.ticket().finish(result);
                }),
            ));
            let units = ComputeUnits::start(device, compute_units, scheduler.clone());
            Executor::with_parts(device, capacity, scheduler, units, clock)
        })
    }

    fn with_parts(
        device: usize,
        capacity: u64,
        scheduler: Arc<Scheduler>,
        units: ComputeUnits,
        clock: Instant,
    ) -> Executor {
        Executor {
            device,
            memory: MemoryTable::device(capacity),
            scheduler,
            copy: [
                EngineThread::start(format!("biren-d{device}-copy-in")),
                EngineThread::start(format!("biren-d{device}-copy-out")),
            ],
            host: EngineThread::start(format!("biren-d{device}-host")),
            units,
            epoch: AtomicU64::new(1),
            sticky: Arc::new(AtomicI32::new(0)),
            ops_in: Padded(Enqueued {
                count: AtomicU64::new(0),
                next_look: AtomicU64::new(0),
            }),
            ops_out: Padded(Finished {
                count: AtomicU64::new(0),
                room: Notifier::new(),
            }),
            stalled_at: AtomicU64::new(u64::MAX),
            deferred: RankedMutex::new(Rank::DeferredFrees, VecDeque::new()),
            has_deferred: AtomicBool::new(false),
            recheck: AtomicBool::new(false),
            resetting: AtomicBool::new(false),
            starting: AtomicUsize::new(0),
            quarantine: RankedMutex::new(Rank::Quarantine, Quarantine::default()),
            clock,
        }
    }

    pub fn compute_units(&self) -> usize {
        self.units.count()
    }

    pub fn now_ns(&self) -> u64 {
        self.clock.elapsed().as_nanos() as u64
    }

    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// The device's sticky error, if a launch failed since the last reset.
    pub fn sticky(&self) -> Result<()> {
        match self.sticky.load(Ordering::Acquire) {
            0 => Ok(()),
            c => Err(ErrorCode::from_code(c).unwrap_or(ErrorCode::Unknown)),
        }
    }

    pub fn set_sticky(&self, e: ErrorCode) {
        let _ = self
            .sticky
            .compare_exchange(0, e.code(), Ordering::AcqRel, Ordering::Acquire);
    }

    /// Hands ready work to whatever runs it; `ticket` is finished when it ends (not when it is
    /// skipped: then the result is returned at once). `priority` orders kernels.
    pub fn run(&self, work: Work, priority: i32, ticket: Ticket) -> Started {
        // A device with a sticky error runs nothing more until it is reset; stream callbacks
        // still run (they report the error).
        if self.sticky.load(Ordering::Acquire) != 0
            && !matches!(&work, Work::Host(h) if h.despite_error())
        {
            return Started::Done(Ok(()));
        }
        match work {
            Work::Graph(g) => g.start(priority, ticket),
            Work::Kernel(launch) => {
                self.scheduler.submit(launch, priority, ticket);
                Started::Running
            }
            Work::Copy {
                dst,
                src,
                len,
                engine,
                dir,
            } => {
                let device = self.device;
                self.copy[engine].submit(Box::new(move || {
                    let t0 = trace::now();
                    // SAFETY: both ranges were validated at enqueue and their memory is kept
                    // alive until this op completes (deferred free).
                    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
                    trace::span(
                        Track::CopyEngine { device, engine },
                        trace::MEMCPY,
                        format!("memcpy {len} B"),
                        t0,
                        format!("\"bytes\":{len},\"kind\":\"{}\"", dir.short_name()),
                    );
                    ticket.finish(Ok(()));
                }));
                Started::Running
            }
            Work::Fill { dst, value, len } => {
                let device = self.device;
                self.copy[ENGINE_FROM_DEVICE].submit(Box::new(move || {
                    let t0 = trace::now();
                    unsafe { std::ptr::write_bytes(dst as *mut u8, value, len) };
                    let track = Track::CopyEngine {
                        device,
                        engine: ENGINE_FROM_DEVICE,
                    };
                    trace::span(
                        track,
                        trace::MEMSET,
                        format!("memset {len} B"),
                        t0,
                        format!("\"bytes\":{len}"),
                    );
                    ticket.finish(Ok(()));
                }));
                Started::Running
            }
            Work::Strided(t) => {
                let device = self.device;
                self.copy[t.engine].submit(Box::new(move || {
                    let t0 = trace::now();
                    // SAFETY: every row was validated at enqueue; the memory is kept alive until
                    // this op completes (deferred free).
                    unsafe { t.run() };
                    let engine = t.engine;
                    trace::span(
                        Track::CopyEngine { device, engine },
                        trace::MEMCPY,
                        t.describe(),
                        t0,
                        format!("\"bytes\":{}", t.bytes()),
                    );
                    ticket.finish(Ok(()));
                }));
                Started::Running
            }
            Work::Host(h) => {
                let device = self.device;
                let sticky = self.sticky.clone();
                self.host.submit(Box::new(move || {
                    if diagnostics::racecheck::on() {
                        if let Track::Stream { id, .. } = ticket.to.track() {
                            diagnostics::racecheck::host_function_enters(id, ticket.seq);
                        }
                    }
                    let t0 = trace::now();
                    // SAFETY: the enqueuer's promise (`HostCall::invoke`).
                    unsafe { h.invoke(sticky.load(Ordering::Acquire)) };
                    trace::span(
                        Track::HostFunctions { device },
                        trace::HOST_FUNCTION,
                        "host function".into(),
                        t0,
                        String::new(),
                    );
                    ticket.finish(Ok(()));
                }));
                Started::Running
            }
        }
    }

    /// Runs `job` on copy engine `engine` (graph nodes; the job completes what it belongs to).
    pub(crate) fn submit_engine(&self, engine: usize, job: crate::device::engine::Job) {
        self.copy[engine].submit(job);
    }

    /// Runs `job` on the host-function thread.
    pub(crate) fn submit_host(&self, job: crate::device::engine::Job) {
        self.host.submit(job);
    }
}
