//! The timeline trace (`BIREN_TRACE=path.json`): a Chrome trace-event file (Perfetto,
//! chrome://tracing) with a track per stream, compute unit and copy engine, and one per host
//! thread that synchronizes. Events are kept in memory and the file is written whole at
//! `birenDeviceReset` and at process exit, so it is well-formed even when work is pending.
//! Off, every hook costs one atomic load.
//!
//! Every span and instant carries a category (`cat`, one of the constants below) so that tools
//! such as `biren-prof` tell kernels, copies, waits and host synchronizations apart without
//! guessing from names. Copies carry their direction (`"kind":"HtoD"`, ...), host
//! synchronizations the user code that called them (`caller`, `caller_object`, `caller_offset`:
//! the return address, as an address in that file that `addr2line` reads), and each device's
//! `process_name` record its number of compute units. A `metadata` object beside `traceEvents`
//! lists the process's code segments (file, load bias, address range) so that an address in the
//! trace (an unregistered kernel's `kernel@0x...`) can be traced back to a file and a function.

use crate::runtime::lock_order::{Rank, RankedMutex};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::OnceLock;
use std::time::Instant;

/// Where an event is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Track {
    Stream {
        device: usize,
        id: u64,
        default: bool,
    },
    Unit {
        device: usize,
        cu: usize,
    },
    CopyEngine {
        device: usize,
        engine: usize,
    },
    HostFunctions {
        device: usize,
    },
    HostThread,
    /// One node of a graph launch (executable node `node` of graph exec `exec`).
    GraphNode {
        device: usize,
        exec: u64,
        node: u32,
    },
}

impl Track {
    fn ids(self) -> (u64, u64) {
        match self {
            Track::Stream {
                device,
                id,
                default,
            } => (device as u64 + 1, if default { 1 } else { 1000 + id }),
            Track::Unit { device, cu } => (device as u64 + 1, 100 + cu as u64),
            Track::CopyEngine { device, engine } => (device as u64 + 1, 200 + engine as u64),
            Track::HostFunctions { device } => (device as u64 + 1, 300),
            Track::HostThread => (0, unsafe { libc::gettid() } as u64),
            Track::GraphNode { device, exec, node } => {
                (device as u64 + 1, 1 << 40 | exec << 20 | node as u64)
            }
        }
    }

    fn name(self) -> String {
        match self {
            Track::Stream { default: true, .. } => "default stream".into(),
            Track::Stream { id, .. } => format!("stream #{id}"),
            Track::Unit { cu, .. } => format!("compute unit {cu}"),
            Track::CopyEngine { engine: 0, .. } => "copy engine 0 (to device)".into(),
            Track::CopyEngine { .. } => "copy engine 1 (from device, fills)".into(),
            Track::HostFunctions { .. } => "host functions".into(),
            Track::HostThread => format!("host thread {}", unsafe { libc::gettid() }),
            Track::GraphNode { exec, node, .. } => format!("graph exec #{exec} node {node}"),
        }
    }
}

/// Categories (`cat`) of spans and instants.
pub const KERNEL: &str = "kernel";
pub const MEMCPY: &str = "memcpy";
pub const MEMSET: &str = "memset";
pub const HOST_FUNCTION: &str = "host_function";
/// A stream held before an op by an event wait or the default-stream rule.
pub const WAIT: &str = "wait";
/// The host blocked in a synchronizing call.
pub const SYNC: &str = "sync";
pub const ERROR: &str = "error";
pub const EVENT: &str = "event";
/// A node of a graph launch (on its own row) and a whole graph launch (on its stream).
pub const GRAPH_NODE: &str = "graph_node";
pub const GRAPH: &str = "graph";
/// A named range of the program (birenRangePush/birenRangePop).
pub const RANGE: &str = "range";

enum Phase {
    Span { dur_ns: u64 },
    Instant,
    FlowStart(u64),
    FlowEnd(u64),
}

struct Event {
    pid: u64,
    tid: u64,
    ts_ns: u64,
    cat: &'static str,
    name: String,
    args: String,
    phase: Phase,
}

pub struct Tracer {
    path: String,
    clock: Instant,
    compute_units: usize,
    events: RankedMutex<Vec<Event>>,
    tracks: RankedMutex<HashMap<(u64, u64), String>>,
}

static TRACER: OnceLock<Tracer> = OnceLock::new();
/// Set in a child made by fork(): the trace belongs to the parent, the child records nothing.
static FORKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The tracer, unless tracing is off (or this is a forked child).
#[inline]
fn tracer() -> Option<&'static Tracer> {
    TRACER
        .get()
        .filter(|_| !FORKED.load(std::sync::atomic::Ordering::Relaxed))
}

/// Called in the child after fork(): it neither records nor writes the parent's trace.
pub fn forked_child() {
    FORKED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Starts tracing into `path` (at `birenInit`); every device has `compute_units` units.
pub fn start(path: String, clock: Instant, compute_units: usize) {
    let _ = TRACER.set(Tracer {
        path,
        clock,
        compute_units,
        events: RankedMutex::new(Rank::TraceEvents, Vec::new()),
        tracks: RankedMutex::new(Rank::TraceTracks, HashMap::new()),
    });
}

/// Recording paused by `birenProfilerStop` (until `birenProfilerStart`).
static PAUSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[inline]
pub fn on() -> bool {
    tracer().is_some() && !PAUSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Pauses (`false`) or resumes (`true`) recording; whether a trace is being written at all.
pub fn set_recording(on: bool) -> bool {
    PAUSED.store(!on, std::sync::atomic::Ordering::Relaxed);
    tracer().is_some()
}

/// Nanoseconds on the trace clock (0 when tracing is off).
#[inline]
pub fn now() -> u64 {
    tracer().map_or(0, |t| t.clock.elapsed().as_nanos() as u64)
}

fn push(track: Track, ts_ns: u64, cat: &'static str, name: String, args: String, phase: Phase) {
    let Some(t) = tracer() else { return };
    let (pid, tid) = track.ids();
    {
        let mut tr = t.tracks.lock();
        tr.entry((pid, tid)).or_insert_with(|| track.name());
    }
    t.events.lock().push(Event {
        pid,
        tid,
        ts_ns,
        cat,
        name,
        args,
        phase,
    });
}

/// A span from `start_ns` to now. `args` is a JSON object body (`"k":v,...`) or empty.
pub fn span(track: Track, cat: &'static str, name: String, start_ns: u64, args: String) {
    if on() {
        let end = now();
        push(
            track,
            start_ns,
            cat,
            name,
            args,
            Phase::Span {
                dur_ns: end.saturating_sub(start_ns),
            },
        );
    }
}

pub fn instant(track: Track, cat: &'static str, name: String, args: String) {
    if on() {
        push(track, now(), cat, name, args, Phase::Instant);
    }
}

/// The start of an arrow (an event record) that `flow_end` with the same id finishes.
pub fn flow_start(track: Track, id: u64) {
    if on() {
        push(
            track,
            now(),
            EVENT,
            "event".into(),
            String::new(),
            Phase::FlowStart(id),
        );
    }
}

pub fn flow_end(track: Track, id: u64) {
    if on() {
        push(
            track,
            now(),
            EVENT,
            "event".into(),
            String::new(),
            Phase::FlowEnd(id),
        );
    }
}

/// An arrow's start (`start`) or end at time `ts_ns`, bound to the slice around it on `track`.
pub fn flow_at(track: Track, id: u64, ts_ns: u64, start: bool) {
    if on() {
        let phase = if start {
            Phase::FlowStart(id)
        } else {
            Phase::FlowEnd(id)
        };
        push(
            track,
            ts_ns,
            GRAPH_NODE,
            "edge".into(),
            String::new(),
            phase,
        );
    }
}

/// Escapes a string for JSON.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn render(t: &Tracer) -> String {
    let events = t.events.lock();
    let tracks = t.tracks.lock();
    let mut o = String::with_capacity(events.len() * 120 + 1024);
    o.push_str("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    let mut first = true;
    let mut sep = |o: &mut String| {
        if !first {
            o.push_str(",\n");
        }
        first = false;
    };
    let mut pids: Vec<u64> = tracks.keys().map(|k| k.0).collect();
    pids.sort();
    pids.dedup();
    for pid in pids {
        sep(&mut o);
        let name = if pid == 0 {
            "host".to_string()
        } else {
            format!("BIREN device {}", pid - 1)
        };
        let units = if pid == 0 {
            String::new()
        } else {
            format!(",\"compute_units\":{}", t.compute_units)
        };
        let _ = write!(o, "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":{}{units}}}}}", json_str(&name));
    }
    for ((pid, tid), name) in tracks.iter() {
        sep(&mut o);
        let _ = write!(o, "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":{}}}}}", json_str(name));
        sep(&mut o);
        let _ = write!(o, "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"sort_index\":{tid}}}}}");
    }
    for e in events.iter() {
        sep(&mut o);
        let ts = e.ts_ns as f64 / 1000.0;
        let _ = write!(
            o,
            "{{\"pid\":{},\"tid\":{},\"ts\":{ts:.3},\"name\":{}",
            e.pid,
            e.tid,
            json_str(&e.name)
        );
        match e.phase {
            Phase::Span { dur_ns } => {
                let _ = write!(o, ",\"ph\":\"X\",\"dur\":{:.3}", dur_ns as f64 / 1000.0);
            }
            Phase::Instant => o.push_str(",\"ph\":\"i\",\"s\":\"t\""),
            Phase::FlowStart(id) => {
                let _ = write!(o, ",\"ph\":\"s\",\"id\":{id}");
            }
            Phase::FlowEnd(id) => {
                let _ = write!(o, ",\"ph\":\"f\",\"bp\":\"e\",\"id\":{id}");
            }
        }
        let _ = write!(o, ",\"cat\":\"{}\"", e.cat);
        if !e.args.is_empty() {
            let _ = write!(o, ",\"args\":{{{}}}", e.args);
        }
        o.push('}');
    }
    // Outside traceEvents, where viewers ignore it: the code segments, for tools (biren-prof)
    // that name unregistered kernels (`kernel@0x...`) from the program's debug information.
    o.push_str("\n],\"metadata\":{\"biren_code_segments\":[");
    for (i, (file, bias, start, end)) in super::caller::code_segments().iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        let _ = write!(
            o,
            "\n{{\"file\":{},\"bias\":\"{bias:#x}\",\"start\":\"{start:#x}\",\"end\":\"{end:#x}\"}}",
            json_str(file)
        );
    }
    o.push_str("\n]}}\n");
    o
}

/// Writes the trace so far to its file (at reset and at exit).
pub fn flush() {
    if let Some(t) = tracer() {
        let text = render(t);
        if let Err(e) = std::fs::write(&t.path, text) {
            eprintln!("biren: cannot write the trace to {}: {e}", t.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_json() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
