//! The wait-for graph. Ordinary dependencies always point at work already enqueued, so they
//! cannot form a cycle; only a wait on an event's *next* record (a future) can. So the graph is
//! searched in two cases only, and only while futures exist:
//! - a record that would resolve a future: does the record (transitively) depend on one of the
//!   waits holding that future? Then it would close a cycle and is refused;
//! - a host synchronize: is the awaited work blocked on a future no enqueued record resolves?
//!
//! The search walks backwards from points, over the unfinished ops of each stream and their
//! dependencies, scanning each stream's range once.

use super::stream::{Dep, Op, StreamCore, StreamPoint, StreamQueue};
use std::collections::HashMap;
use std::sync::Arc;

/// What the search looks for.
pub enum Goal<'a> {
    /// One of these wait ops: (stream id, op seq).
    Waits(&'a [(u64, u64)]),
    /// Any wait on a future that is not resolved.
    UnresolvedFuture,
}

/// Where the search ended: the chain of stream ids from a start to the op found, and that op.
#[derive(Debug)]
pub struct Found {
    pub chain: Vec<u64>,
    pub stream: u64,
    pub seq: u64,
    /// The event whose future the found op waits for (UnresolvedFuture goal).
    pub event: Option<u64>,
}

/// Searches backwards from `starts`. `held` is a stream whose queue the caller has locked.
pub(crate) fn search(starts: &[StreamPoint], held: Option<(&Arc<StreamCore>, &StreamQueue)>, goal: Goal) -> Option<Found> {
    let mut scanned: HashMap<u64, u64> = HashMap::new();
    let mut parent: HashMap<u64, u64> = HashMap::new();
    let mut stack: Vec<(Arc<StreamCore>, u64, Option<u64>)> =
        starts.iter().map(|p| (p.stream.clone(), p.seq, None)).collect();
    while let Some((s, upto, from)) = stack.pop() {
        let lo = scanned.get(&s.id).copied().unwrap_or(0).max(s.completed());
        if upto <= lo {
            continue;
        }
        scanned.insert(s.id, upto);
        if let Some(f) = from {
            if f != s.id {
                parent.entry(s.id).or_insert(f);
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
            for d in &op.deps {
                match d {
                    Dep::Point(p) => stack.push((p.stream.clone(), p.seq, Some(s.id))),
                    Dep::Future(fut) => match fut.resolved() {
                        Some(p) => stack.push((p.stream.clone(), p.seq, Some(s.id))),
                        None => {
                            if let Goal::UnresolvedFuture = goal {
                                found = Some((op.seq, Some(fut.event_id)));
                                return;
                            }
                        }
                    },
                }
            }
        };
        match held {
            Some((h, q)) if Arc::ptr_eq(h, &s) => StreamCore::scan_ops(q, lo, upto, &mut visit),
            _ => StreamCore::scan_ops(&s.queue.lock(), lo, upto, &mut visit),
        }
        if let Some((seq, event)) = found {
            let mut chain = vec![s.id];
            let mut at = s.id;
            while let Some(&p) = parent.get(&at) {
                if chain.contains(&p) {
                    break;
                }
                chain.push(p);
                at = p;
            }
            chain.reverse();
            return Some(Found { chain, stream: s.id, seq, event });
        }
    }
    None
}

/// "stream 3 -> stream 4 -> stream 3"
pub fn describe_chain(chain: &[u64]) -> String {
    chain.iter().map(|id| stream_name(*id)).collect::<Vec<_>>().join(" -> ")
}

/// Default streams have ids from the top of the range, one per device.
pub(crate) const fn default_stream_id(device: usize) -> u64 {
    u64::MAX - device as u64
}

pub fn stream_name(id: u64) -> String {
    if id >= default_stream_id(64) {
        "the default stream".to_string()
    } else {
        format!("stream #{id}")
    }
}
