//! What race detection (diagnostics/racecheck.rs) needs to know about streams and ops, told in
//! its own plain terms. Each hook in the stream queue is `if racecheck::on() { ... }`.

use crate::runtime::diagnostics::racecheck::{self, OpDesc, StreamKind, StreamTag};
use crate::runtime::exec::stream::{OpWork, StreamCore};
use crate::runtime::exec::work::Work;

pub(crate) fn tag(s: &StreamCore) -> StreamTag {
    StreamTag {
        id: s.id,
        device: s.device,
        kind: if s.is_default {
            StreamKind::Default
        } else if s.is_blocking() {
            StreamKind::Blocking
        } else {
            StreamKind::NonBlocking
        },
    }
}

fn desc(w: &OpWork) -> OpDesc {
    let (kind, name, ranges, words, code) = match w {
        OpWork::Run(Work::Kernel(l)) => (
            "kernel",
            // Registered name, or the symbol looked up only when a race is reported.
            l.info.as_ref().map_or(String::new(), |i| i.name.clone()),
            Vec::new(),
            l.args.words(),
            l.kernel as usize,
        ),
        OpWork::Run(Work::Copy { dst, src, len, .. }) => (
            "memcpy",
            String::new(),
            vec![(*src, *len, false), (*dst, *len, true)],
            Vec::new(),
            0,
        ),
        OpWork::Run(Work::Fill { dst, len, .. }) => (
            "memset",
            String::new(),
            vec![(*dst, *len, true)],
            Vec::new(),
            0,
        ),
        // 2D/3D copies and fills are not tracked (their rows are not described here).
        OpWork::Run(Work::Strided(_)) => ("2D/3D copy", String::new(), Vec::new(), Vec::new(), 0),
        // A graph launch is ordered like any op in its stream; its nodes' accesses are not
        // tracked in this version.
        OpWork::Run(Work::Graph(..)) => ("graph launch", String::new(), Vec::new(), Vec::new(), 0),
        OpWork::Run(Work::Host(_)) => ("host function", String::new(), Vec::new(), Vec::new(), 0),
        OpWork::Record(_) => ("event record", String::new(), Vec::new(), Vec::new(), 0),
        OpWork::Wait { .. } => ("event wait", String::new(), Vec::new(), Vec::new(), 0),
        OpWork::Hook { .. } => ("graph event node", String::new(), Vec::new(), Vec::new(), 0),
        OpWork::Taken => ("op", String::new(), Vec::new(), Vec::new(), 0),
    };
    OpDesc {
        kind,
        name,
        code,
        ranges,
        words,
    }
}

/// Op `seq` is being pushed on `s` (the queue is locked).
pub(crate) fn pushed(s: &StreamCore, seq: u64, w: &OpWork) {
    racecheck::pushed(tag(s), seq, desc(w));
}
