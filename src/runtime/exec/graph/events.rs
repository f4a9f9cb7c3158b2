//! Event record and wait nodes act at their place in the graph, as in CUDA: a record node
//! records its event when the node's dependencies have completed (not when the whole launch
//! has), and a wait node holds only its dependents until the event's record is reached.
//!
//! Events are points in streams (event.rs, stream.rs), and everything that reads them — event
//! query and synchronize, `birenStreamWaitEvent`, the futures of never-recorded events and the
//! wait-for graph that finds deadlocks — works on points. So each event node gets a stream of
//! its own (a *lane*, hidden from the user; one per node of an exec, reused by its launches)
//! and acts, at each launch, through ordinary ops in it:
//!
//! - record node R: lane = [gate][record]. The gate is a `Hook` op that completes when the run
//!   reaches R; the record behind it is enqueued at `birenGraphLaunch` with `DeviceContext::
//!   record`, so the event's latest record is the node's from the launch on (as in CUDA, a
//!   `birenStreamWaitEvent` made after the launch waits for the node), and it is reached when
//!   R's dependencies have completed.
//! - wait node W: lane = [wait][signal]. The wait is `DeviceContext::wait_event` made at
//!   `birenGraphLaunch`: W waits for the event's latest record *at launch* (CUDA fixes what an
//!   event wait node waits for when the graph is launched, as `cudaStreamWaitEvent` does at its
//!   call), or, BIREN extension, for its next record if it was never recorded (a future, with
//!   the usual cycle checks). The signal behind it tells the run that W may finish once its
//!   dependencies in the graph have.
//!
//! The wait-for graph sees the graph's order through the lane ops' dependencies: gates and
//! signals depend on the point before the launch (and the launch's own dependencies) and on the
//! lanes of the wait nodes nearest upstream of their node; an op right after the launch in its
//! stream (the *join*, pushed with it, no op between) depends on every wait node's lane. These
//! dependencies never hold anything back that the run would not: they are there so that a
//! record that would close a cycle through a wait node is refused with DEADLOCK, and a
//! synchronize behind a wait node that can never be satisfied ends in DEADLOCK, not a hang.

use super::exec::ExecGraph;
use super::run::GraphRun;
use crate::runtime::diagnostics::racecheck;
use crate::runtime::error::Result;
use crate::runtime::exec::context::DeviceContext;
use crate::runtime::exec::stream::{Dep, OpWork, StreamCore, StreamPoint, STREAM_NON_BLOCKING};
use crate::runtime::exec::work::{Started, Ticket, Work};
use parking_lot::Mutex;
use std::sync::Arc;

/// The lanes of an executable graph's event nodes, one per node, reused by its launches (which
/// run one after another, so a lane's ops of one launch follow those of the one before, as the
/// launches do). Made at the first launch; made again after a reset (which ends them) or an
/// update that changed the number of event nodes; retired when the exec is destroyed.
#[derive(Default)]
pub struct EventLanes {
    waits: Vec<Arc<StreamCore>>,
    records: Vec<Arc<StreamCore>>,
}

impl EventLanes {
    /// Lanes for `g`'s event nodes on device `d`, made anew unless the current ones fit.
    fn prepare(&mut self, d: &DeviceContext, s: &StreamCore, g: &ExecGraph) {
        let fit = self.waits.len() == g.waits.len()
            && self.records.len() == g.records.len()
            && self
                .waits
                .iter()
                .chain(&self.records)
                .all(|l| !l.is_dead() && l.device == d.index);
        if fit {
            return;
        }
        self.retire(d);
        let lane = || {
            let l = StreamCore::new(
                crate::runtime::ids::next_lane(),
                d.index,
                STREAM_NON_BLOCKING,
                s.priority,
                false,
                d.exec.clone(),
                0,
            );
            // In the device's set, so that device-wide synchronizes wait for them and a reset
            // ends them.
            d.add_stream(l.clone());
            l
        };
        self.waits = g.waits.iter().map(|_| lane()).collect();
        self.records = g.records.iter().map(|_| lane()).collect();
    }

    /// Lets the lanes go (their work still completes).
    pub fn retire(&mut self, d: &DeviceContext) {
        for l in self.waits.drain(..).chain(self.records.drain(..)) {
            d.retire_stream(&l);
        }
    }
}

/// Where a wait node stands: the run has reached it (its dependencies are done) and/or its lane
/// has passed the wait.
enum WaitState {
    Idle,
    /// The run reached it first and waits for the lane.
    Arrived(Arc<GraphRun>),
    /// The lane passed the wait first.
    Passed,
    Done,
}

/// A record node's gate: closed until the run reaches the node.
enum Gate {
    Closed,
    /// The gate op has started and waits for the run.
    Waiting(Ticket),
    Open,
}

/// The event nodes of one launch: where each wait node and each gate stands.
pub struct LaunchEvents {
    waits: Box<[Mutex<WaitState>]>,
    gates: Box<[Mutex<Gate>]>,
}

impl LaunchEvents {
    fn new(waits: usize, records: usize) -> LaunchEvents {
        LaunchEvents {
            waits: (0..waits).map(|_| Mutex::new(WaitState::Idle)).collect(),
            gates: (0..records).map(|_| Mutex::new(Gate::Closed)).collect(),
        }
    }

    /// The run has reached wait node `slot`: true if the node may finish now (its lane has
    /// passed the wait, or `skip`: the launch failed and nodes are skipped); otherwise the
    /// lane's signal finishes it.
    pub(super) fn arrive(&self, slot: u32, run: &Arc<GraphRun>, skip: bool) -> bool {
        let mut st = self.waits[slot as usize].lock();
        match *st {
            WaitState::Idle if !skip => {
                *st = WaitState::Arrived(run.clone());
                false
            }
            _ => {
                *st = WaitState::Done;
                true
            }
        }
    }

    /// The lane of wait node `slot` has passed the wait: the run, if it waits for that.
    fn pass(&self, slot: u32) -> Option<Arc<GraphRun>> {
        let mut st = self.waits[slot as usize].lock();
        match std::mem::replace(&mut *st, WaitState::Done) {
            WaitState::Arrived(run) => Some(run),
            WaitState::Idle => {
                *st = WaitState::Passed;
                None
            }
            WaitState::Passed | WaitState::Done => None,
        }
    }

    /// The run has reached record node `slot`: opens its gate; returns the gate op's ticket to
    /// finish (outside the run's start section) if the op was waiting.
    pub(super) fn open(&self, slot: u32) -> Option<Ticket> {
        match std::mem::replace(&mut *self.gates[slot as usize].lock(), Gate::Open) {
            Gate::Waiting(t) => Some(t),
            _ => None,
        }
    }

    /// The gate op of record node `slot` starts.
    fn gate(&self, slot: u32, t: Ticket) -> Started {
        let mut g = self.gates[slot as usize].lock();
        match *g {
            Gate::Closed => {
                *g = Gate::Waiting(t);
                Started::Running
            }
            _ => Started::Done(Ok(())),
        }
    }
}

/// The signal op of a wait node's lane. Dropped without having run (a reset ended the lane),
/// it lets go of the run that waits at the node: the run holds the launch's events and they
/// would otherwise hold the run, for good.
struct Signal {
    events: Arc<LaunchEvents>,
    slot: u32,
    node: u32,
}

impl Drop for Signal {
    fn drop(&mut self) {
        *self.events.waits[self.slot as usize].lock() = WaitState::Done;
    }
}

/// A wait node's lane passed the wait (or could not be set up): the node may finish.
fn signal(events: &LaunchEvents, slot: u32, node: u32) {
    if let Some(run) = events.pass(slot) {
        GraphRun::node_done(&run, node, Ok(()));
    }
}

/// Enqueues a launch of `g`, which has event nodes, in `s` after `deps`, with a lane per event
/// node (`lanes`, the exec's; the caller serializes the exec's launches). Returns Err if nothing was enqueued; Ok((seq, r)) once the launch is enqueued (its op
/// number in `s`, 0 if a capture took it), where `r` is the first error of an event node's
/// setup (a record refused with DEADLOCK: that event is then not recorded by this launch).
pub fn enqueue_launch(
    d: &DeviceContext,
    s: &Arc<StreamCore>,
    g: &Arc<ExecGraph>,
    deps: Vec<Dep>,
    epoch: u64,
    lanes: &mut EventLanes,
) -> Result<(u64, Result<()>)> {
    lanes.prepare(d, s, g);
    let (wait_lanes, record_lanes) = (&lanes.waits, &lanes.records);
    // A wait lane gets two ops per launch, the wait and the signal; only launches of this exec
    // (serialized by the caller) push to it.
    let signal_seq: Vec<u64> = wait_lanes.iter().map(|l| l.enqueued() + 2).collect();
    let signal_point = |j: u32| StreamPoint {
        stream: wait_lanes[j as usize].clone(),
        seq: signal_seq[j as usize],
    };
    let events = Arc::new(LaunchEvents::new(g.waits.len(), g.records.len()));
    let join = (!wait_lanes.is_empty()).then(|| {
        let deps = (0..wait_lanes.len() as u32)
            .map(|j| Dep::Point(signal_point(j)))
            .collect();
        let hook = OpWork::Hook {
            event: None,
            start: Box::new(|_| Started::Done(Ok(()))),
        };
        (hook, deps)
    });
    let work = Work::Graph(g.clone(), Some(events.clone()));
    let (seq, launch_deps) = d.enqueue_pair(s, work.into(), deps, join, epoch)?;
    if seq == 0 {
        return Ok((0, Ok(()))); // captured: the event nodes are nodes of the capture's graph
    }
    // What every event node waits for before it can act: the launch started.
    let mut started = launch_deps;
    started.push(Dep::Point(StreamPoint {
        stream: s.clone(),
        seq: seq - 1,
    }));
    let after = |upstream: &[u32]| -> Vec<Dep> {
        let mut v = started.clone();
        v.extend(upstream.iter().map(|&j| Dep::Point(signal_point(j))));
        v
    };
    let mut result = Ok(());
    for (j, w) in g.waits.iter().enumerate() {
        let l = &wait_lanes[j];
        let sig = Signal {
            events: events.clone(),
            slot: j as u32,
            node: w.node,
        };
        let hook = OpWork::Hook {
            event: None,
            start: Box::new(move |_| {
                signal(&sig.events, sig.slot, sig.node);
                Started::Done(Ok(()))
            }),
        };
        let r = d
            .wait_event(l, &w.event)
            .and_then(|_| d.enqueue(l, hook, after(&w.after_waits)));
        if let Err(e) = r {
            // A sticky error or a reset came in meanwhile: the node does not wait (the lane is
            // ended, so that nothing waits for its points; the next launch makes a new one).
            l.kill();
            signal(&events, j as u32, w.node);
            result = result.and(Err(e));
        }
    }
    for (k, r) in g.records.iter().enumerate() {
        let l = &record_lanes[k];
        let (ev, slot) = (events.clone(), k as u32);
        let hook = OpWork::Hook {
            event: Some(r.event.id),
            start: Box::new(move |t| ev.gate(slot, t)),
        };
        let res = match d.enqueue(l, hook, after(&r.after_waits)) {
            Ok(_) => d.record(&r.event, l).inspect(|_| {
                // Race detection: a stream that waits for this record is ordered after the
                // launch (its one clock; conservative for the nodes after this one).
                if racecheck::on() {
                    racecheck::dep_reached(l.id, l.enqueued(), s.id, seq);
                }
            }),
            Err(e) => {
                l.kill();
                Err(e)
            }
        };
        if let Err(e) = res {
            result = result.and(Err(e));
        }
    }
    Ok((seq, result))
}
