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

use super::run::GraphRun;
use crate::runtime::exec::stream::StreamCore;
use crate::runtime::exec::work::{Started, Ticket};
use crate::runtime::lock_order::{Rank, RankedMutex};
use std::sync::Arc;

/// The lanes of an executable graph's event nodes, one per node, reused by its launches (which
/// run one after another, so a lane's ops of one launch follow those of the one before, as the
/// launches do). Made at the first launch; made again after a reset (which ends them) or an
/// update that changed the number of event nodes; retired when the exec is destroyed.
#[derive(Default)]
pub struct EventLanes {
    pub(crate) waits: Vec<Arc<StreamCore>>,
    pub(crate) records: Vec<Arc<StreamCore>>,
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
    waits: Box<[RankedMutex<WaitState>]>,
    gates: Box<[RankedMutex<Gate>]>,
}

impl LaunchEvents {
    pub(crate) fn new(waits: usize, records: usize) -> LaunchEvents {
        LaunchEvents {
            waits: (0..waits)
                .map(|_| RankedMutex::new(Rank::Leaf, WaitState::Idle))
                .collect(),
            gates: (0..records)
                .map(|_| RankedMutex::new(Rank::Leaf, Gate::Closed))
                .collect(),
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
    pub(crate) fn gate(&self, slot: u32, t: Ticket) -> Started {
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
pub(crate) struct Signal {
    pub(crate) events: Arc<LaunchEvents>,
    pub(crate) slot: u32,
    pub(crate) node: u32,
}

impl Drop for Signal {
    fn drop(&mut self) {
        *self.events.waits[self.slot as usize].lock() = WaitState::Done;
    }
}

/// A wait node's lane passed the wait (or could not be set up): the node may finish.
pub(crate) fn signal(events: &LaunchEvents, slot: u32, node: u32) {
    if let Some(run) = events.pass(slot) {
        GraphRun::node_done(&run, node, Ok(()));
    }
}
