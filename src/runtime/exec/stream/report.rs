//! What a stream tells the outside about itself: the trace's spans of its ops, race detection's
//! names, and the stall report of the host-synchronize safety net.

use super::*;

impl StreamCore {
    /// How race detection names this stream.
    pub(crate) fn race_tag(&self) -> racecheck::StreamTag {
        racecheck::StreamTag {
            id: self.id,
            device: self.device,
            kind: if self.is_default {
                racecheck::StreamKind::Default
            } else if self.is_blocking() {
                racecheck::StreamKind::Blocking
            } else {
                racecheck::StreamKind::NonBlocking
            },
        }
    }

    /// What a stalled stream looks like: `Some((completed, enqueued))` if it runs nothing while
    /// its head op could start (every dependency reached). A stream may look so for a moment
    /// with nothing lost: the thread that pushed the op or reached the dependency is about to
    /// advance it (and, on a loaded machine, may take seconds to get there). Only the same
    /// mark seen again a second later, with no op completed in between, is a lost wake-up.
    pub fn stall_mark(&self) -> Option<(u64, u64)> {
        let q = self.queue.lock();
        if q.running.is_some() || self.is_dead() || self.exec.is_resetting() {
            return None;
        }
        let t = self.tail.lock();
        let head = q.ops.front().or(t.ops.front())?;
        let ready = head.deps.iter().all(|d| match d {
            Dep::Point(p) => p.reached(),
            Dep::Future(f) => f.resolved().is_some_and(|p| p.reached()),
        });
        ready.then(|| (self.completed(), self.enqueued()))
    }

    /// Kicks the stream if it has work but runs none. If that started an op (its head op was
    /// ready but nobody had advanced it: a lost wake-up), returns what the stream looked like
    /// before the kick, for the report.
    pub fn kick_if_stalled(&self) -> Option<String> {
        let before = {
            let q = self.queue.lock();
            let t = self.tail.lock();
            let has_work = !q.ops.is_empty() || !t.ops.is_empty();
            (q.running.is_none() && has_work).then(|| {
                let head = q.ops.front().or(t.ops.front()).map(|op| {
                    let kind = match &op.work {
                        OpWork::Run(w) => w.kind_name(),
                        OpWork::Record(_) => "event record",
                        OpWork::Wait { .. } => "event wait",
                        OpWork::Hook { .. } => "graph event node",
                    };
                    let deps: Vec<String> = op
                        .deps
                        .iter()
                        .map(|d| match d {
                            Dep::Point(p) => format!(
                                "stream {} op {} ({})",
                                p.stream.id,
                                p.seq,
                                if p.reached() { "reached" } else { "not reached" }
                            ),
                            Dep::Future(f) => format!(
                                "future of event #{} ({})",
                                f.event_id,
                                if f.resolved().is_some() { "resolved" } else { "unresolved" }
                            ),
                        })
                        .collect();
                    format!("op {} ({kind}), deps [{}]", op.seq, deps.join(", "))
                });
                let state = format!(
                    "stream {} (device {}): head {}; {} op(s) taken over, {} in the tail, tail idle flag {}, completed {}, enqueued {}",
                    self.id,
                    self.device,
                    head.unwrap_or_default(),
                    q.ops.len(),
                    t.ops.len(),
                    t.idle,
                    self.completed(),
                    self.enqueued()
                );
                (self.completed.load(Ordering::SeqCst), state)
            })
        };
        let (completed, state) = before?;
        self.kick();
        (self.queue.lock().running.is_some() || self.completed.load(Ordering::SeqCst) != completed)
            .then_some(state)
    }

    /// Tracing: the op about to start, and the wait that held it.
    pub(super) fn trace_start(&self, q: &mut StreamQueue, work: &OpWork) {
        let now = trace::now();
        if q.blocked_since != 0 {
            let what = match work {
                OpWork::Wait { event, .. } => format!("wait for event #{event}"),
                _ => "wait (default-stream rule)".to_string(),
            };
            let args = match work {
                OpWork::Wait { event, .. } => format!("\"event\":{event}"),
                _ => String::new(),
            };
            trace::span(self.track(), trace::WAIT, what, q.blocked_since, args);
            q.blocked_since = 0;
        }
        let (cat, name, args) = match work {
            OpWork::Run(Work::Kernel(l)) => (
                trace::KERNEL,
                l.name(),
                format!(
                    "\"grid\":\"({},{},{})\",\"block\":\"({},{},{})\",\"sharedMem\":{}",
                    l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z, l.shared
                ),
            ),
            OpWork::Run(Work::Copy {
                len, engine, dir, ..
            }) => (
                trace::MEMCPY,
                format!("memcpy {len} B"),
                format!(
                    "\"bytes\":{len},\"engine\":{engine},\"kind\":\"{}\"",
                    dir.short_name()
                ),
            ),
            OpWork::Run(Work::Fill { len, value, .. }) => (
                trace::MEMSET,
                format!("memset {len} B"),
                format!("\"bytes\":{len},\"value\":{value}"),
            ),
            OpWork::Run(Work::Host(_)) => (
                trace::HOST_FUNCTION,
                "host function".to_string(),
                String::new(),
            ),
            OpWork::Run(Work::Strided(t)) => (
                trace::MEMCPY,
                t.describe(),
                format!("\"bytes\":{}", t.bytes()),
            ),
            OpWork::Run(Work::Graph(g)) => (
                trace::GRAPH,
                format!("graph exec #{}", g.exec_id()),
                format!("\"nodes\":{}", g.node_count()),
            ),
            OpWork::Record(r) => {
                trace::instant(
                    self.track(),
                    trace::EVENT,
                    format!("record event #{}", r.event),
                    String::new(),
                );
                trace::flow_start(self.track(), r.id);
                return;
            }
            OpWork::Wait { on, .. } => {
                if let Some(r) = on.record() {
                    trace::flow_end(self.track(), r.id);
                }
                return;
            }
            OpWork::Hook { .. } => return,
        };
        q.span = Some((cat, name, now, args));
    }
}

/// What race detection is told of an op pushed on a stream.
pub(super) fn race_desc(w: &OpWork) -> racecheck::OpDesc {
    let kind = match w {
        OpWork::Run(w) => return crate::runtime::exec::race::work_desc(w),
        OpWork::Record(_) => "event record",
        OpWork::Wait { .. } => "event wait",
        OpWork::Hook { .. } => "graph event node",
    };
    racecheck::OpDesc {
        kind,
        name: String::new(),
        code: 0,
        ranges: Vec::new(),
        words: Vec::new(),
        graph: None,
    }
}
