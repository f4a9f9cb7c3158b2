//! The wait-for graph. Ordinary dependencies always point at work already enqueued, so they
//! cannot form a cycle; only a wait on an event's *next* record (a future) can. So the graph is
//! searched in two cases only, and only while futures exist:
//! - a record that would resolve a future: does the record (transitively) depend on one of the
//!   waits holding that future? Then it would close a cycle and is refused;
//! - a host synchronize: is the awaited work blocked on a future no enqueued record resolves?
//!
//! The search walks backwards from points, over the unfinished ops of each stream and their
//! dependencies, scanning each stream's range once.

use crate::runtime::exec::stream::{Dep, Op, OpWork, StreamCore, StreamPoint};
use std::collections::HashMap;
use std::sync::Arc;

/// What the search looks for.
pub enum Goal<'a> {
    /// One of these wait ops: (stream id, op seq).
    Waits(&'a [(u64, u64)]),
    /// Any wait on a future that is not resolved.
    UnresolvedFuture,
}

/// One edge of a wait chain: stream `from` waits for stream `to` (through `event`'s record,
/// or through the default-stream rule when `event` is `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub from: u64,
    pub to: u64,
    pub event: Option<u64>,
}

/// Where the search ended: the chain of hops from a start to the op found, and that op.
#[derive(Debug)]
pub struct Found {
    pub hops: Vec<Hop>,
    pub stream: u64,
    pub seq: u64,
    /// The event whose future the found op waits for (UnresolvedFuture goal).
    pub event: Option<u64>,
}

/// Searches backwards from `starts`. It locks one stream at a time (its queue, then its tail)
/// and holds no stream lock between two: the caller must hold none either (lock order).
pub(crate) fn search(starts: &[StreamPoint], goal: Goal) -> Option<Found> {
    let mut scanned: HashMap<u64, u64> = HashMap::new();
    let mut parent: HashMap<u64, Hop> = HashMap::new();
    let mut stack: Vec<(Arc<StreamCore>, u64, Option<Hop>)> = starts
        .iter()
        .map(|p| (p.stream.clone(), p.seq, None))
        .collect();
    while let Some((s, upto, via)) = stack.pop() {
        let lo = scanned.get(&s.id).copied().unwrap_or(0).max(s.completed());
        if upto <= lo {
            continue;
        }
        scanned.insert(s.id, upto);
        if let Some(h) = via {
            if h.from != s.id {
                parent.entry(s.id).or_insert(h);
            }
        }
        let mut found = None;
        let mut visit = |op: &Op| {
            if found.is_some() {
                return;
            }
            if let Goal::Waits(w) = goal {
                if w.contains(&(s.id, op.seq)) {
                    found = Some((op.seq, None));
                    return;
                }
            }
            let event = match op.work {
                OpWork::Wait { event, .. } => Some(event),
                OpWork::Hook { event, .. } => event,
                _ => None,
            };
            for d in &op.deps {
                let target = match d {
                    Dep::Point(p) => Some(p.clone()),
                    Dep::Future(fut) => match fut.resolved() {
                        Some(p) => Some(p),
                        None => {
                            if let Goal::UnresolvedFuture = goal {
                                found = Some((op.seq, Some(fut.event_id)));
                                return;
                            }
                            None
                        }
                    },
                };
                if let Some(p) = target {
                    let hop = Hop {
                        from: s.id,
                        to: p.stream.id,
                        event,
                    };
                    stack.push((p.stream, p.seq, Some(hop)));
                }
            }
        };
        {
            let q = s.queue.lock();
            StreamCore::scan_ops(&q, &s.tail.lock(), lo, upto, &mut visit);
        }
        if let Some((seq, event)) = found {
            let mut hops = Vec::new();
            let mut at = s.id;
            while let Some(h) = parent.get(&at) {
                if hops.iter().any(|x: &Hop| x.from == h.from) {
                    break;
                }
                hops.push(*h);
                at = h.from;
            }
            hops.reverse();
            return Some(Found {
                hops,
                stream: s.id,
                seq,
                event,
            });
        }
    }
    None
}

/// "stream #2 waits for event #3 recorded in stream #1; ..."
pub fn describe_hops(hops: &[Hop]) -> String {
    hops.iter()
        .map(|h| match h.event {
            Some(e) => format!(
                "{} waits for event #{e}, recorded in {}",
                stream_name(h.from),
                stream_name(h.to)
            ),
            None if is_lane(h.from) || is_lane(h.to) => format!(
                "{} waits for {} (the order of a graph's nodes)",
                stream_name(h.from),
                stream_name(h.to)
            ),
            None => format!(
                "{} waits for {} (default-stream rule)",
                stream_name(h.from),
                stream_name(h.to)
            ),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

// Ids and their names: one id space for streams, lanes and host threads (runtime/ids.rs).
pub(crate) use crate::runtime::ids::{default_stream_id, is_lane, stream_name};
