//! A launch of an executable graph with event nodes (`birenGraphLaunch`): the lanes of its event
//! nodes and the ops it enqueues in them through the device context (how the nodes act is told
//! in `graph/events.rs`).

use crate::runtime::diagnostics::racecheck;
use crate::runtime::error::Result;
use crate::runtime::exec::context::DeviceContext;
use crate::runtime::exec::graph::events::{signal, EventLanes, LaunchEvents, Signal};
use crate::runtime::exec::graph::exec::ExecGraph;
use crate::runtime::exec::graph::run::GraphLaunch;
use crate::runtime::exec::stream::{Dep, OpWork, StreamCore, StreamPoint, STREAM_NON_BLOCKING};
use crate::runtime::exec::work::Started;
use std::sync::Arc;

impl EventLanes {
    /// Lanes for `g`'s event nodes on device `d`, made anew unless the current ones fit.
    pub(crate) fn prepare(&mut self, d: &DeviceContext, s: &StreamCore, g: &ExecGraph) {
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
    stack_size: usize,
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
    let work = GraphLaunch::work(d.exec.clone(), g.clone(), Some(events.clone()), stack_size);
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
