//! The numbers of the summary, computed from a trace. No formatting here.
//!
//! Definitions (the README repeats them):
//! - the *span* runs from the start of the first span in the trace to the end of the last one;
//! - a stream is *busy* while one of its ops (kernel, copy, fill, host function) runs on it, from
//!   the op's start to its end as the stream sees it; its *waits* are the times it was held before
//!   an op by an event (`birenStreamWaitEvent`) or by the default-stream rule;
//! - a kernel call lasts from its start to its end on its stream; its *CU time* is the time
//!   compute units spent on its blocks (all units, all calls);
//! - copies and fills are timed on the copy engine that did them (the transfer itself, not the
//!   time queued behind another copy), so bandwidth is bytes / engine time;
//! - a compute unit is busy while it runs blocks of some kernel; utilisation is busy / span;
//! - streams *overlap* while two or more of them are busy at once.

use crate::trace::{Event, Segment, Trace, TrackKind};
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, PartialEq)]
pub struct KernelRow {
    pub name: String,
    pub calls: u64,
    pub total_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
    pub cu_ns: i64,
}

impl KernelRow {
    pub fn mean_ns(&self) -> i64 {
        self.total_ns / self.calls.max(1) as i64
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct StreamRow {
    pub device: Option<usize>,
    pub name: String,
    pub ops: u64,
    pub busy_ns: i64,
    pub event_waits: u64,
    pub event_wait_ns: i64,
    pub rule_wait_ns: i64,
}

/// Copies of one kind (HtoD, DtoH, DtoD, HtoH) or the fills (kind "memset").
#[derive(Debug, Clone, PartialEq)]
pub struct CopyRow {
    pub kind: String,
    pub count: u64,
    pub bytes: u64,
    pub time_ns: i64,
}

impl CopyRow {
    /// Bytes per second over the engine time (None when no time was measured).
    pub fn bandwidth(&self) -> Option<f64> {
        (self.time_ns > 0).then(|| self.bytes as f64 * 1e9 / self.time_ns as f64)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SyncRow {
    pub call: String,
    pub count: u64,
    pub total_ns: i64,
    pub max_ns: i64,
}

/// Where a host synchronization was called from, as the trace gives it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Site {
    /// The file and the address in it (for addr2line), when the runtime knew them.
    pub object: Option<(String, String)>,
    /// The runtime's own description ("main+0x1f in ./prog"), or "unknown caller".
    pub caller: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SiteRow {
    pub site: Site,
    /// The synchronizing calls made there.
    pub calls: Vec<String>,
    pub count: u64,
    pub total_ns: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct UnitRow {
    pub device: usize,
    pub unit: usize,
    pub busy_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Overlap {
    /// Time with at least one stream busy.
    pub any_ns: i64,
    /// Time with two or more streams busy.
    pub two_ns: i64,
    /// The most streams busy at once.
    pub max_streams: usize,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    pub span_ns: i64,
    pub kernels: Vec<KernelRow>,
    pub streams: Vec<StreamRow>,
    pub copies: Vec<CopyRow>,
    pub syncs: Vec<SyncRow>,
    pub sites: Vec<SiteRow>,
    pub units: Vec<UnitRow>,
    /// Compute units per device.
    pub devices: BTreeMap<usize, usize>,
    pub overlap: Overlap,
    /// Failed calls and kernel errors: (what, count).
    pub errors: Vec<(String, u64)>,
    /// The traced process's code, to name unregistered kernels.
    pub segments: Vec<Segment>,
}

impl Summary {
    /// Busy time of all units of a device.
    pub fn device_busy(&self, device: usize) -> i64 {
        self.units
            .iter()
            .filter(|u| u.device == device)
            .map(|u| u.busy_ns)
            .sum()
    }

    /// Busy time of all units / (units x span), per device.
    pub fn utilisation(&self, device: usize) -> Option<f64> {
        let n = *self.devices.get(&device)?;
        let busy = self.device_busy(device);
        (n > 0 && self.span_ns > 0).then(|| busy as f64 / (n as f64 * self.span_ns as f64))
    }
}

/// Merges intervals; returns them sorted and disjoint.
pub fn union(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn total(v: &[(i64, i64)]) -> i64 {
    v.iter().map(|(s, e)| e - s).sum()
}

/// Time with >= 1 and >= 2 of the sets busy, and the most busy at once.
pub fn overlap(sets: &[Vec<(i64, i64)>]) -> Overlap {
    let mut edges: Vec<(i64, i32)> = Vec::new();
    for set in sets {
        for &(s, e) in set {
            if e > s {
                edges.push((s, 1));
                edges.push((e, -1));
            }
        }
    }
    // Ends before starts at the same instant: back-to-back ops do not overlap.
    edges.sort();
    let mut o = Overlap::default();
    let (mut busy, mut last) = (0i32, 0i64);
    for (t, d) in edges {
        if busy >= 1 {
            o.any_ns += t - last;
        }
        if busy >= 2 {
            o.two_ns += t - last;
        }
        busy += d;
        last = t;
        o.max_streams = o.max_streams.max(busy.max(0) as usize);
    }
    o
}

const STREAM_OPS: [&str; 4] = ["kernel", "memcpy", "memset", "host_function"];

fn site_of(e: &Event) -> Site {
    let object = match (e.arg_str("caller_object"), e.arg_str("caller_offset")) {
        (Some(o), Some(off)) => Some((o.to_string(), off.to_string())),
        _ => None,
    };
    Site {
        object,
        caller: e.arg_str("caller").unwrap_or("unknown caller").to_string(),
    }
}

pub fn summarise(t: &Trace) -> Summary {
    let mut s = Summary {
        segments: t.segments.clone(),
        ..Summary::default()
    };
    let start = t.spans.iter().map(|e| e.start_ns).min().unwrap_or(0);
    let end = t.spans.iter().map(Event::end_ns).max().unwrap_or(0);
    s.span_ns = end - start;

    let mut kernels: HashMap<&str, KernelRow> = HashMap::new();
    let mut cu_time: HashMap<&str, i64> = HashMap::new();
    let mut streams: BTreeMap<usize, (StreamRow, Vec<(i64, i64)>)> = BTreeMap::new();
    let mut copies: HashMap<String, CopyRow> = HashMap::new();
    let mut syncs: HashMap<&str, SyncRow> = HashMap::new();
    let mut sites: HashMap<Site, SiteRow> = HashMap::new();
    let mut units: BTreeMap<(usize, usize), Vec<(i64, i64)>> = BTreeMap::new();
    for (&d, &n) in &t.compute_units {
        s.devices.insert(d, n);
        for u in 0..n {
            units.insert((d, u), Vec::new());
        }
    }

    for e in &t.spans {
        let tr = t.track(e);
        match &tr.kind {
            TrackKind::Stream => {
                let (row, busy) = streams.entry(e.track).or_insert_with(|| {
                    let row = StreamRow {
                        device: tr.device,
                        name: tr.name.clone(),
                        ops: 0,
                        busy_ns: 0,
                        event_waits: 0,
                        event_wait_ns: 0,
                        rule_wait_ns: 0,
                    };
                    (row, Vec::new())
                });
                if STREAM_OPS.contains(&e.cat.as_str()) {
                    row.ops += 1;
                    busy.push((e.start_ns, e.end_ns()));
                } else if e.cat == "wait" {
                    if e.args.contains_key("event") {
                        row.event_waits += 1;
                        row.event_wait_ns += e.dur_ns;
                    } else {
                        row.rule_wait_ns += e.dur_ns;
                    }
                }
                if e.cat == "kernel" {
                    let k = kernels.entry(&e.name).or_insert_with(|| KernelRow {
                        name: e.name.clone(),
                        calls: 0,
                        total_ns: 0,
                        min_ns: i64::MAX,
                        max_ns: 0,
                        cu_ns: 0,
                    });
                    k.calls += 1;
                    k.total_ns += e.dur_ns;
                    k.min_ns = k.min_ns.min(e.dur_ns);
                    k.max_ns = k.max_ns.max(e.dur_ns);
                }
            }
            TrackKind::Unit(u) if e.cat == "kernel" => {
                *cu_time.entry(&e.name).or_default() += e.dur_ns;
                let d = tr.device.unwrap_or(0);
                units
                    .entry((d, *u))
                    .or_default()
                    .push((e.start_ns, e.end_ns()));
                let n = s.devices.entry(d).or_default();
                *n = (*n).max(u + 1);
            }
            TrackKind::CopyEngine if e.cat == "memcpy" || e.cat == "memset" => {
                let kind = if e.cat == "memset" {
                    "memset".to_string()
                } else {
                    e.arg_str("kind").unwrap_or("?").to_string()
                };
                let row = copies.entry(kind.clone()).or_insert(CopyRow {
                    kind,
                    count: 0,
                    bytes: 0,
                    time_ns: 0,
                });
                row.count += 1;
                row.bytes += e.arg_u64("bytes").unwrap_or(0);
                row.time_ns += e.dur_ns;
            }
            TrackKind::HostThread if e.cat == "sync" => {
                let call = e.name.split('(').next().unwrap_or(&e.name);
                let row = syncs.entry(call).or_insert_with(|| SyncRow {
                    call: call.to_string(),
                    count: 0,
                    total_ns: 0,
                    max_ns: 0,
                });
                row.count += 1;
                row.total_ns += e.dur_ns;
                row.max_ns = row.max_ns.max(e.dur_ns);
                let site = site_of(e);
                let row = sites.entry(site.clone()).or_insert_with(|| SiteRow {
                    site,
                    calls: Vec::new(),
                    count: 0,
                    total_ns: 0,
                });
                row.count += 1;
                row.total_ns += e.dur_ns;
                if !row.calls.iter().any(|c| c == call) {
                    row.calls.push(call.to_string());
                }
            }
            _ => {}
        }
    }

    for (name, ns) in cu_time {
        if let Some(k) = kernels.get_mut(name) {
            k.cu_ns = ns;
        }
    }
    s.kernels = kernels.into_values().collect();
    s.kernels
        .sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));

    let mut busy_sets = Vec::new();
    for (_, (mut row, busy)) in streams {
        let u = union(busy);
        row.busy_ns = total(&u);
        busy_sets.push(u);
        s.streams.push(row);
    }
    s.overlap = overlap(&busy_sets);
    s.streams.sort_by(|a, b| {
        b.busy_ns
            .cmp(&a.busy_ns)
            .then(a.device.cmp(&b.device))
            .then(a.name.cmp(&b.name))
    });

    s.copies = copies.into_values().collect();
    s.copies
        .sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then(a.kind.cmp(&b.kind)));
    s.syncs = syncs.into_values().collect();
    s.syncs
        .sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.call.cmp(&b.call)));
    s.sites = sites.into_values().collect();
    s.sites
        .sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.site.cmp(&b.site)));
    s.units = units
        .into_iter()
        .map(|((device, unit), v)| UnitRow {
            device,
            unit,
            busy_ns: total(&union(v)),
        })
        .collect();

    let mut errors: BTreeMap<&str, u64> = BTreeMap::new();
    for e in t.instants.iter().filter(|e| e.cat == "error") {
        *errors.entry(&e.name).or_default() += 1;
    }
    s.errors = errors
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    s.errors.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace written by hand, in the runtime's format (times in microseconds):
    ///
    /// ```text
    /// stream #1       k1 [0,100]  HtoD [100,110]        k1 [150,250]
    /// stream #2       wait event [0,50]  k2 [50,120]  memset [120,130]
    /// default stream  wait (rule) [250,260]  k2 [260,300]
    /// compute unit 0  k1 [0,100]  k1 [150,250]
    /// compute unit 1  k2 [50,120]  k2 [260,300]
    /// copy engine 0   HtoD 1000 B [102,110];  copy engine 1: memset 64 B [121,125]
    /// host thread     birenStreamSynchronize [200,250] (with a call site)
    ///                 birenDeviceSynchronize [255,300] (without)
    /// ```
    const TRACE: &str = r#"{"traceEvents":[
{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"host"}},
{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"BIREN device 0","compute_units":2}},
{"ph":"M","name":"thread_name","pid":1,"tid":1001,"args":{"name":"stream #1"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1002,"args":{"name":"stream #2"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"default stream"}},
{"ph":"M","name":"thread_name","pid":1,"tid":100,"args":{"name":"compute unit 0"}},
{"ph":"M","name":"thread_name","pid":1,"tid":101,"args":{"name":"compute unit 1"}},
{"ph":"M","name":"thread_name","pid":1,"tid":200,"args":{"name":"copy engine 0 (to device)"}},
{"ph":"M","name":"thread_name","pid":1,"tid":201,"args":{"name":"copy engine 1 (from device, fills)"}},
{"ph":"M","name":"thread_name","pid":0,"tid":77,"args":{"name":"host thread 77"}},
{"pid":1,"tid":1001,"ts":0.000,"name":"k1","ph":"X","dur":100.000,"cat":"kernel","args":{"grid":"(1,1,1)"}},
{"pid":1,"tid":1001,"ts":100.000,"name":"memcpy 1000 B","ph":"X","dur":10.000,"cat":"memcpy","args":{"bytes":1000,"engine":0,"kind":"HtoD"}},
{"pid":1,"tid":1001,"ts":150.000,"name":"k1","ph":"X","dur":100.000,"cat":"kernel"},
{"pid":1,"tid":1002,"ts":0.000,"name":"wait for event #3","ph":"X","dur":50.000,"cat":"wait","args":{"event":3}},
{"pid":1,"tid":1002,"ts":50.000,"name":"k2","ph":"X","dur":70.000,"cat":"kernel"},
{"pid":1,"tid":1002,"ts":120.000,"name":"memset 64 B","ph":"X","dur":10.000,"cat":"memset","args":{"bytes":64,"value":0}},
{"pid":1,"tid":1,"ts":250.000,"name":"wait (default-stream rule)","ph":"X","dur":10.000,"cat":"wait"},
{"pid":1,"tid":1,"ts":260.000,"name":"k2","ph":"X","dur":40.000,"cat":"kernel"},
{"pid":1,"tid":100,"ts":0.000,"name":"k1","ph":"X","dur":100.000,"cat":"kernel"},
{"pid":1,"tid":100,"ts":150.000,"name":"k1","ph":"X","dur":100.000,"cat":"kernel"},
{"pid":1,"tid":101,"ts":50.000,"name":"k2","ph":"X","dur":70.000,"cat":"kernel"},
{"pid":1,"tid":101,"ts":260.000,"name":"k2","ph":"X","dur":40.000,"cat":"kernel"},
{"pid":1,"tid":200,"ts":102.000,"name":"memcpy 1000 B","ph":"X","dur":8.000,"cat":"memcpy","args":{"bytes":1000,"kind":"HtoD"}},
{"pid":1,"tid":201,"ts":121.000,"name":"memset 64 B","ph":"X","dur":4.000,"cat":"memset","args":{"bytes":64}},
{"pid":1,"tid":1001,"ts":110.000,"ph":"s","id":1,"cat":"event","name":"event"},
{"pid":0,"tid":77,"ts":200.000,"name":"birenStreamSynchronize(stream #1)","ph":"X","dur":50.000,"cat":"sync","args":{"caller":"0x55 in /p","caller_object":"/p","caller_offset":"0x1a"}},
{"pid":0,"tid":77,"ts":255.000,"name":"birenDeviceSynchronize","ph":"X","dur":45.000,"cat":"sync"},
{"pid":0,"tid":77,"ts":10.000,"name":"birenFree -> BIREN_ERROR_INVALID_VALUE","ph":"i","s":"t","cat":"error"}
]}"#;

    fn summary() -> Summary {
        summarise(&Trace::parse(TRACE).unwrap())
    }

    const US: i64 = 1000;

    #[test]
    fn span_is_first_to_last_event() {
        assert_eq!(summary().span_ns, 300 * US);
    }

    #[test]
    fn kernels_per_name_sorted_by_total() {
        let s = summary();
        let k1 = KernelRow {
            name: "k1".into(),
            calls: 2,
            total_ns: 200 * US,
            min_ns: 100 * US,
            max_ns: 100 * US,
            cu_ns: 200 * US,
        };
        let k2 = KernelRow {
            name: "k2".into(),
            calls: 2,
            total_ns: 110 * US,
            min_ns: 40 * US,
            max_ns: 70 * US,
            cu_ns: 110 * US,
        };
        assert_eq!(s.kernels, vec![k1, k2]);
        assert_eq!(s.kernels[1].mean_ns(), 55 * US);
    }

    #[test]
    fn stream_busy_is_the_union_of_its_ops_and_waits_are_apart() {
        let s = summary();
        let got: Vec<(&str, u64, i64, u64, i64, i64)> = s
            .streams
            .iter()
            .map(|r| {
                let name = r.name.as_str();
                (
                    name,
                    r.ops,
                    r.busy_ns,
                    r.event_waits,
                    r.event_wait_ns,
                    r.rule_wait_ns,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                // [0,100] + [100,110] + [150,250]
                ("stream #1", 3, 210 * US, 0, 0, 0),
                // [50,120] + [120,130]; held 50 us by event #3
                ("stream #2", 2, 80 * US, 1, 50 * US, 0),
                ("default stream", 1, 40 * US, 0, 0, 10 * US),
            ]
        );
    }

    #[test]
    fn overlap_counts_time_with_two_streams_busy() {
        // Busy: s1 [0,110] [150,250], s2 [50,130], default [260,300].
        let o = summary().overlap;
        assert_eq!(o.any_ns, 270 * US); // [0,130] + [150,250] + [260,300]
        assert_eq!(o.two_ns, 60 * US); // [50,110]
        assert_eq!(o.max_streams, 2);
    }

    #[test]
    fn utilisation_per_unit_and_device() {
        let s = summary();
        let busy: Vec<(usize, i64)> = s.units.iter().map(|u| (u.unit, u.busy_ns)).collect();
        assert_eq!(busy, vec![(0, 200 * US), (1, 110 * US)]);
        assert_eq!(s.devices.get(&0), Some(&2));
        let u = s.utilisation(0).unwrap();
        assert!((u - 310.0 / 600.0).abs() < 1e-12, "{u}");
    }

    #[test]
    fn copies_by_kind_timed_on_the_engines() {
        let s = summary();
        assert_eq!(
            s.copies,
            vec![
                CopyRow {
                    kind: "HtoD".into(),
                    count: 1,
                    bytes: 1000,
                    time_ns: 8 * US
                },
                CopyRow {
                    kind: "memset".into(),
                    count: 1,
                    bytes: 64,
                    time_ns: 4 * US
                },
            ]
        );
        assert_eq!(s.copies[0].bandwidth(), Some(125e6)); // 1000 B in 8 us
    }

    #[test]
    fn host_syncs_with_their_sites() {
        let s = summary();
        let calls: Vec<(&str, u64, i64)> = s
            .syncs
            .iter()
            .map(|r| (r.call.as_str(), r.count, r.total_ns))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("birenStreamSynchronize", 1, 50 * US),
                ("birenDeviceSynchronize", 1, 45 * US)
            ]
        );
        assert_eq!(s.sites.len(), 2);
        assert_eq!(
            s.sites[0].site.object,
            Some(("/p".to_string(), "0x1a".to_string()))
        );
        assert_eq!(s.sites[1].site.caller, "unknown caller");
        assert_eq!(
            s.errors,
            vec![("birenFree -> BIREN_ERROR_INVALID_VALUE".to_string(), 1)]
        );
    }

    #[test]
    fn units_without_work_count_as_idle() {
        let t = Trace::parse(&TRACE.replace("\"compute_units\":2", "\"compute_units\":4")).unwrap();
        let s = summarise(&t);
        assert_eq!(s.units.len(), 4);
        assert_eq!(s.units[3].busy_ns, 0);
        let u = s.utilisation(0).unwrap();
        assert!((u - 310.0 / 1200.0).abs() < 1e-12, "{u}");
    }

    #[test]
    fn union_and_overlap_edges() {
        assert_eq!(
            union(vec![(5, 6), (0, 2), (1, 3), (3, 4)]),
            vec![(0, 4), (5, 6)]
        );
        // Back to back is not overlap; nesting is.
        let o = overlap(&[vec![(0, 10)], vec![(10, 20)], vec![(12, 14)]]);
        assert_eq!((o.any_ns, o.two_ns, o.max_streams), (20, 2, 2));
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(Trace::parse("{").is_err());
        assert!(Trace::parse("[]").is_err());
        let empty = summarise(&Trace::parse(r#"{"traceEvents":[]}"#).unwrap());
        assert_eq!(empty.span_ns, 0);
        assert!(empty.kernels.is_empty());
    }
}
