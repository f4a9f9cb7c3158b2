//! Reads a BIREN trace (the Chrome trace-event file `BIREN_TRACE` writes, see
//! src/runtime/trace.rs) into spans and instants on named tracks.

use serde_json::{Map, Value};
use std::collections::HashMap;

/// What a track shows, from the names the runtime gives its tracks.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrackKind {
    /// "default stream" or "stream #N"
    Stream,
    /// "compute unit N"
    Unit(usize),
    /// "copy engine ..."
    CopyEngine,
    /// "host functions"
    HostFunctions,
    /// A host thread (process 0).
    HostThread,
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Track {
    /// The device (None for host threads).
    pub device: Option<usize>,
    pub kind: TrackKind,
    pub name: String,
}

/// A span (`"ph":"X"`) or an instant (`"ph":"i"`, `dur_ns` 0), times in nanoseconds.
#[derive(Clone, Debug)]
pub struct Event {
    pub track: usize,
    pub start_ns: i64,
    pub dur_ns: i64,
    pub cat: String,
    pub name: String,
    pub args: Map<String, Value>,
}

impl Event {
    pub fn end_ns(&self) -> i64 {
        self.start_ns + self.dur_ns
    }

    pub fn arg_u64(&self, key: &str) -> Option<u64> {
        self.args.get(key).and_then(Value::as_u64)
    }

    pub fn arg_str(&self, key: &str) -> Option<&str> {
        self.args.get(key).and_then(Value::as_str)
    }
}

/// An executable segment of a file loaded in the traced process (the trace's
/// `metadata.biren_code_segments`): addresses in [start, end) are at `address - bias` in `file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub file: String,
    pub bias: u64,
    pub start: u64,
    pub end: u64,
}

fn hex(v: Option<&Value>) -> Option<u64> {
    let s = v?.as_str()?;
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

#[derive(Debug, Default)]
pub struct Trace {
    pub tracks: Vec<Track>,
    pub spans: Vec<Event>,
    pub instants: Vec<Event>,
    /// Compute units per device, from the devices' `process_name` records.
    pub compute_units: HashMap<usize, usize>,
    pub segments: Vec<Segment>,
}

fn classify(pid: u64, name: &str) -> (Option<usize>, TrackKind) {
    if pid == 0 {
        return (None, TrackKind::HostThread);
    }
    let device = Some(pid as usize - 1);
    let kind = if name == "default stream" || name.starts_with("stream #") {
        TrackKind::Stream
    } else if let Some(n) = name.strip_prefix("compute unit ") {
        n.parse().map_or(TrackKind::Other, TrackKind::Unit)
    } else if name.starts_with("copy engine") {
        TrackKind::CopyEngine
    } else if name == "host functions" {
        TrackKind::HostFunctions
    } else {
        TrackKind::Other
    };
    (device, kind)
}

/// Microseconds (as the trace writes them, with 3 decimals) to nanoseconds.
fn ns(v: Option<&Value>) -> i64 {
    v.and_then(Value::as_f64)
        .map_or(0, |us| (us * 1000.0).round() as i64)
}

impl Trace {
    pub fn parse(text: &str) -> Result<Trace, String> {
        let doc: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
        let events = doc
            .get("traceEvents")
            .and_then(Value::as_array)
            .ok_or("no \"traceEvents\" array: not a trace-event file")?;
        let mut t = Trace::default();
        let mut names: HashMap<(u64, u64), String> = HashMap::new();
        for e in events {
            if e.get("ph").and_then(Value::as_str) != Some("M") {
                continue;
            }
            let pid = e.get("pid").and_then(Value::as_u64).unwrap_or(0);
            let tid = e.get("tid").and_then(Value::as_u64).unwrap_or(0);
            let args = e.get("args");
            match e.get("name").and_then(Value::as_str) {
                Some("thread_name") => {
                    if let Some(n) = args.and_then(|a| a.get("name")).and_then(Value::as_str) {
                        names.insert((pid, tid), n.to_string());
                    }
                }
                Some("process_name") if pid > 0 => {
                    if let Some(n) = args
                        .and_then(|a| a.get("compute_units"))
                        .and_then(Value::as_u64)
                    {
                        t.compute_units.insert(pid as usize - 1, n as usize);
                    }
                }
                _ => {}
            }
        }
        if let Some(segs) = doc
            .get("metadata")
            .and_then(|m| m.get("biren_code_segments"))
            .and_then(Value::as_array)
        {
            for s in segs {
                if let (Some(file), Some(bias), Some(start), Some(end)) = (
                    s.get("file").and_then(Value::as_str),
                    hex(s.get("bias")),
                    hex(s.get("start")),
                    hex(s.get("end")),
                ) {
                    t.segments.push(Segment {
                        file: file.to_string(),
                        bias,
                        start,
                        end,
                    });
                }
            }
        }
        let mut index: HashMap<(u64, u64), usize> = HashMap::new();
        for e in events {
            let ph = e.get("ph").and_then(Value::as_str).unwrap_or("");
            if ph != "X" && ph != "i" {
                continue;
            }
            let pid = e.get("pid").and_then(Value::as_u64).unwrap_or(0);
            let tid = e.get("tid").and_then(Value::as_u64).unwrap_or(0);
            let track = *index.entry((pid, tid)).or_insert_with(|| {
                let name = names
                    .get(&(pid, tid))
                    .cloned()
                    .unwrap_or_else(|| format!("track {pid}/{tid}"));
                let (device, kind) = classify(pid, &name);
                t.tracks.push(Track { device, kind, name });
                t.tracks.len() - 1
            });
            let ev = Event {
                track,
                start_ns: ns(e.get("ts")),
                dur_ns: ns(e.get("dur")).max(0),
                cat: e
                    .get("cat")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                name: e
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                args: e
                    .get("args")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
            };
            if ph == "X" {
                t.spans.push(ev);
            } else {
                t.instants.push(ev);
            }
        }
        Ok(t)
    }

    pub fn track(&self, e: &Event) -> &Track {
        &self.tracks[e.track]
    }
}
