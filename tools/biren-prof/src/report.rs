//! The summary as aligned text tables or as CSV. Every table is built once, with a display text
//! and a raw CSV value for each cell, so the two forms cannot disagree.

use crate::sites;
use crate::summary::Summary;
use std::fmt::Write as _;

/// How the program ended, for the heading.
pub struct Run {
    pub program: String,
    /// "exit code 0", "killed by signal 11 (SIGSEGV)"
    pub ended: String,
    pub wall_ns: i64,
}

struct Column {
    text: &'static str,
    csv: &'static str,
    left: bool,
}

const fn col(text: &'static str, csv: &'static str) -> Column {
    Column {
        text,
        csv,
        left: false,
    }
}

const fn left(text: &'static str, csv: &'static str) -> Column {
    Column {
        text,
        csv,
        left: true,
    }
}

struct Cell {
    text: String,
    raw: String,
}

struct Table {
    section: &'static str,
    title: String,
    columns: Vec<Column>,
    rows: Vec<Vec<Cell>>,
    notes: Vec<String>,
}

pub fn time(ns: i64) -> String {
    let v = ns as f64;
    if ns.abs() >= 1_000_000_000 {
        format!("{:.3} s", v / 1e9)
    } else if ns.abs() >= 1_000_000 {
        format!("{:.3} ms", v / 1e6)
    } else if ns.abs() >= 1_000 {
        format!("{:.3} us", v / 1e3)
    } else {
        format!("{ns} ns")
    }
}

pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

fn c_str(s: &str) -> Cell {
    Cell {
        text: s.to_string(),
        raw: s.to_string(),
    }
}

fn c_int(n: u64) -> Cell {
    c_str(&n.to_string())
}

fn c_ns(ns: i64) -> Cell {
    Cell {
        text: time(ns),
        raw: ns.to_string(),
    }
}

fn c_bytes(b: u64) -> Cell {
    Cell {
        text: bytes(b),
        raw: b.to_string(),
    }
}

fn c_pct(part: i64, whole: i64) -> Cell {
    if whole <= 0 {
        return Cell {
            text: "-".into(),
            raw: String::new(),
        };
    }
    let p = 100.0 * part as f64 / whole as f64;
    Cell {
        text: format!("{p:.1}%"),
        raw: format!("{p:.2}"),
    }
}

fn c_bandwidth(bps: Option<f64>) -> Cell {
    match bps {
        Some(b) => Cell {
            text: format!("{:.2} GB/s", b / 1e9),
            raw: format!("{:.4}", b / 1e9),
        },
        None => Cell {
            text: "-".into(),
            raw: String::new(),
        },
    }
}

fn stream_label(device: Option<usize>, name: &str, devices: usize) -> String {
    match device {
        Some(d) if devices > 1 => format!("device {d} {name}"),
        _ => name.to_string(),
    }
}

fn tables(s: &Summary) -> Vec<Table> {
    let ndev = s.devices.len();
    let mut out = Vec::new();
    let kernel_names: Vec<&str> = s.kernels.iter().map(|k| k.name.as_str()).collect();
    let named = sites::kernel_names(&kernel_names, &s.segments);

    out.push(Table {
        section: "kernels",
        title: "Kernels (a call lasts from its start to its end on its stream; sorted by total)"
            .into(),
        columns: vec![
            left("kernel", "kernel"),
            col("calls", "calls"),
            col("total", "total_ns"),
            col("mean", "mean_ns"),
            col("min", "min_ns"),
            col("max", "max_ns"),
            col("CU time", "cu_time_ns"),
        ],
        rows: s
            .kernels
            .iter()
            .map(|k| {
                vec![
                    c_str(named.get(&k.name).unwrap_or(&k.name)),
                    c_int(k.calls),
                    c_ns(k.total_ns),
                    c_ns(k.mean_ns()),
                    c_ns(k.min_ns),
                    c_ns(k.max_ns),
                    c_ns(k.cu_ns),
                ]
            })
            .collect(),
        notes: vec!["CU time: time compute units spent on the kernel's blocks, all units".into()],
    });

    out.push(Table {
        section: "streams",
        title: "Streams (busy: an op running on it; waits: held before an op; sorted by busy)"
            .into(),
        columns: vec![
            left("stream", "stream"),
            col("ops", "ops"),
            col("busy", "busy_ns"),
            col("busy/span", "busy_pct"),
            col("held by events", "event_waits"),
            col("waiting on events", "event_wait_ns"),
            col("default-stream rule", "rule_wait_ns"),
        ],
        rows: s
            .streams
            .iter()
            .map(|r| {
                vec![
                    c_str(&stream_label(r.device, &r.name, ndev)),
                    c_int(r.ops),
                    c_ns(r.busy_ns),
                    c_pct(r.busy_ns, s.span_ns),
                    c_int(r.event_waits),
                    c_ns(r.event_wait_ns),
                    c_ns(r.rule_wait_ns),
                ]
            })
            .collect(),
        notes: vec![],
    });

    out.push(Table {
        section: "copies",
        title: "Copies and fills (timed on the copy engine; sorted by time)".into(),
        columns: vec![
            left("kind", "kind"),
            col("count", "count"),
            col("bytes", "bytes"),
            col("time", "time_ns"),
            col("bandwidth", "bandwidth_gb_per_s"),
        ],
        rows: s
            .copies
            .iter()
            .map(|c| {
                vec![
                    c_str(&c.kind),
                    c_int(c.count),
                    c_bytes(c.bytes),
                    c_ns(c.time_ns),
                    c_bandwidth(c.bandwidth()),
                ]
            })
            .collect(),
        notes: vec!["GB/s = 10^9 bytes per second; memset: device memory fills".into()],
    });

    out.push(Table {
        section: "syncs",
        title: "Host synchronizations (time the calling thread was blocked; sorted by total)"
            .into(),
        columns: vec![
            left("call", "call"),
            col("count", "count"),
            col("blocked", "blocked_ns"),
            col("mean", "mean_ns"),
            col("max", "max_ns"),
        ],
        rows: s
            .syncs
            .iter()
            .map(|r| {
                vec![
                    c_str(&r.call),
                    c_int(r.count),
                    c_ns(r.total_ns),
                    c_ns(r.total_ns / r.count.max(1) as i64),
                    c_ns(r.max_ns),
                ]
            })
            .collect(),
        notes: vec![],
    });

    let places = sites::resolve(&s.sites.iter().map(|r| &r.site).collect::<Vec<_>>());
    out.push(Table {
        section: "sync_sites",
        title: "Synchronization call sites (sorted by time blocked)".into(),
        columns: vec![
            left("call site", "site"),
            left("calls", "calls"),
            col("count", "count"),
            col("blocked", "blocked_ns"),
        ],
        rows: s
            .sites
            .iter()
            .map(|r| {
                vec![
                    c_str(places.get(&r.site).map_or(&r.site.caller, |p| p)),
                    c_str(&r.calls.join(" ")),
                    c_int(r.count),
                    c_ns(r.total_ns),
                ]
            })
            .collect(),
        notes: vec![],
    });

    let mut rows: Vec<Vec<Cell>> = s
        .units
        .iter()
        .map(|u| {
            let name = if ndev > 1 {
                format!("device {} unit {}", u.device, u.unit)
            } else {
                format!("compute unit {}", u.unit)
            };
            vec![c_str(&name), c_ns(u.busy_ns), c_pct(u.busy_ns, s.span_ns)]
        })
        .collect();
    for (&d, &n) in &s.devices {
        let busy = s.device_busy(d);
        let name = if ndev > 1 {
            format!("device {d}: all {n} units")
        } else {
            format!("all {n} units")
        };
        let util = s.utilisation(d).map_or(
            Cell {
                text: "-".into(),
                raw: String::new(),
            },
            |u| Cell {
                text: format!("{:.1}%", 100.0 * u),
                raw: format!("{:.2}", 100.0 * u),
            },
        );
        rows.push(vec![c_str(&name), c_ns(busy), util]);
    }
    out.push(Table {
        section: "units",
        title: "Compute-unit utilisation (busy: running blocks; / span)".into(),
        columns: vec![
            left("unit", "unit"),
            col("busy", "busy_ns"),
            col("utilisation", "utilisation_pct"),
        ],
        rows,
        notes: vec![],
    });

    let o = &s.overlap;
    out.push(Table {
        section: "overlap",
        title: "Stream overlap".into(),
        columns: vec![
            left("streams busy", "streams_busy"),
            col("time", "time_ns"),
            col("share of span", "span_pct"),
        ],
        rows: vec![
            vec![c_str(">= 1"), c_ns(o.any_ns), c_pct(o.any_ns, s.span_ns)],
            vec![c_str(">= 2"), c_ns(o.two_ns), c_pct(o.two_ns, s.span_ns)],
        ],
        notes: vec![format!(
            "at most {} stream{} busy at once",
            o.max_streams,
            if o.max_streams == 1 { "" } else { "s" }
        )],
    });

    if !s.errors.is_empty() {
        out.push(Table {
            section: "errors",
            title: "Errors (failed calls, kernel faults)".into(),
            columns: vec![left("error", "error"), col("count", "count")],
            rows: s
                .errors
                .iter()
                .map(|(e, n)| vec![c_str(e), c_int(*n)])
                .collect(),
            notes: vec![],
        });
    }
    out
}

fn heading(run: &Run, s: &Summary) -> String {
    let devices: Vec<String> = s
        .devices
        .iter()
        .map(|(d, n)| {
            format!(
                "device {d}: {n} compute unit{}",
                if *n == 1 { "" } else { "s" }
            )
        })
        .collect();
    format!(
        "biren-prof: {} ended with {}, wall time {}\ntraced span {} (first to last traced event){}\n",
        run.program,
        run.ended,
        time(run.wall_ns),
        time(s.span_ns),
        if devices.is_empty() {
            String::new()
        } else {
            format!("; {}", devices.join(", "))
        }
    )
}

pub fn text(run: &Run, s: &Summary) -> String {
    let mut o = format!("\n{}", heading(run, s));
    for t in tables(s) {
        let _ = write!(o, "\n{}\n", t.title);
        if t.rows.is_empty() {
            o.push_str("  (none)\n");
            continue;
        }
        let mut width: Vec<usize> = t.columns.iter().map(|c| c.text.len()).collect();
        for r in &t.rows {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.text.chars().count());
            }
        }
        let line = |cells: Vec<&str>| {
            let mut l = String::from(" ");
            for ((c, w), col) in cells.iter().zip(&width).zip(&t.columns) {
                if col.left {
                    let _ = write!(l, " {c:<w$}");
                } else {
                    let _ = write!(l, " {c:>w$}");
                }
            }
            l.truncate(l.trim_end().len());
            l.push('\n');
            l
        };
        o.push_str(&line(t.columns.iter().map(|c| c.text).collect()));
        for r in &t.rows {
            o.push_str(&line(r.iter().map(|c| c.text.as_str()).collect()));
        }
        for n in &t.notes {
            let _ = writeln!(o, "  ({n})");
        }
    }
    o
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One block per table, blocks separated by a blank line; the first column of every line (the
/// header included) names the table.
pub fn csv(run: &Run, s: &Summary) -> String {
    let mut o = String::new();
    o.push_str("section,key,value\n");
    let rows = [
        ("program", run.program.clone()),
        ("ended", run.ended.clone()),
        ("wall_ns", run.wall_ns.to_string()),
        ("span_ns", s.span_ns.to_string()),
    ];
    for (k, v) in rows {
        let _ = writeln!(o, "run,{k},{}", csv_field(&v));
    }
    for (d, n) in &s.devices {
        let _ = writeln!(o, "run,device_{d}_compute_units,{n}");
    }
    for t in tables(s) {
        o.push('\n');
        let head: Vec<&str> = t.columns.iter().map(|c| c.csv).collect();
        let _ = writeln!(o, "section,{}", head.join(","));
        for r in &t.rows {
            let cells: Vec<String> = r.iter().map(|c| csv_field(&c.raw)).collect();
            let _ = writeln!(o, "{},{}", t.section, cells.join(","));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(time(999), "999 ns");
        assert_eq!(time(1_500), "1.500 us");
        assert_eq!(time(12_345_678), "12.346 ms");
        assert_eq!(time(2_000_000_000), "2.000 s");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(262_144), "256.0 KiB");
        assert_eq!(bytes(3 << 20), "3.0 MiB");
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
