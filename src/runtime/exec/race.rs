//! What race detection (diagnostics/racecheck.rs) needs to know about streams and ops, told in
//! its own plain terms. Each hook in the stream queue is `if racecheck::on() { ... }`.

use crate::runtime::diagnostics::racecheck::{self, OpDesc, StreamKind, StreamTag};
use crate::runtime::exec::stream::{StreamCore, Work};

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

fn desc(w: &Work) -> OpDesc {
    let (kind, name, ranges, words) = match w {
        Work::Kernel(l) => (
            "kernel",
            // Registered name, or the symbol looked up only when a race is reported.
            l.info.as_ref().map_or(String::new(), |i| i.name.clone()),
            Vec::new(),
            l.args.words(),
        ),
        Work::Copy { dst, src, len, .. } => (
            "memcpy",
            String::new(),
            vec![(*src, *len, false), (*dst, *len, true)],
            Vec::new(),
        ),
        Work::Fill { dst, len, .. } => (
            "memset",
            String::new(),
            vec![(*dst, *len, true)],
            Vec::new(),
        ),
        Work::Host(_) => ("host function", String::new(), Vec::new(), Vec::new()),
        Work::Record(_) => ("event record", String::new(), Vec::new(), Vec::new()),
        Work::Wait { .. } => ("event wait", String::new(), Vec::new(), Vec::new()),
        Work::Taken => ("op", String::new(), Vec::new(), Vec::new()),
    };
    OpDesc {
        kind,
        name,
        code: match w {
            Work::Kernel(l) => l.kernel as usize,
            _ => 0,
        },
        ranges,
        words,
    }
}

/// Op `seq` is being pushed on `s` (the queue is locked).
pub(crate) fn pushed(s: &StreamCore, seq: u64, w: &Work) {
    racecheck::pushed(tag(s), seq, desc(w));
}
