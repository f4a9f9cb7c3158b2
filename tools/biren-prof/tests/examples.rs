//! biren-prof on real programs: the C examples and known_work.c (work known in advance). Needs
//! them built: `make test-prof` builds them and says where they are (BIREN_PROF_EXAMPLES,
//! BIREN_PROF_KNOWN_WORK); by default they are looked for under build/ at the repository root.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn built(var: &str, default: &str) -> PathBuf {
    let p = std::env::var_os(var).map_or_else(|| root().join(default), PathBuf::from);
    assert!(
        p.exists(),
        "{} is missing: run `make test-prof` (it builds the examples and known_work)",
        p.display()
    );
    p
}

fn example(name: &str) -> PathBuf {
    built("BIREN_PROF_EXAMPLES", "build/examples").join(name)
}

fn known_work() -> PathBuf {
    built("BIREN_PROF_KNOWN_WORK", "build/prof-tests/known_work")
}

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("biren-prof-tests");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Runs biren-prof with `args`, feeding `stdin`.
fn prof(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_biren-prof"))
        .args(args)
        .env("BIREN_COMPUTE_UNITS", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn split_csv_line(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// The CSV as tables: section -> rows of column -> value. Fails unless every block is a header
/// and rows of the same width whose first column names the block.
fn parse_csv(csv: &str) -> HashMap<String, Vec<HashMap<String, String>>> {
    let mut tables: HashMap<String, Vec<HashMap<String, String>>> = HashMap::new();
    for block in csv.trim_end().split("\n\n") {
        let mut lines = block.lines();
        let head = split_csv_line(lines.next().expect("an empty CSV block"));
        assert_eq!(head[0], "section", "block header: {head:?}");
        for line in lines {
            let cells = split_csv_line(line);
            assert_eq!(cells.len(), head.len(), "row {line:?} under {head:?}");
            let row: HashMap<String, String> = head.iter().cloned().zip(cells).collect();
            tables.entry(row["section"].clone()).or_default().push(row);
        }
    }
    tables
}

fn rows<'a>(
    t: &'a HashMap<String, Vec<HashMap<String, String>>>,
    section: &str,
) -> &'a [HashMap<String, String>] {
    t.get(section).map_or(&[], |v| v.as_slice())
}

fn find<'a>(
    t: &'a HashMap<String, Vec<HashMap<String, String>>>,
    section: &str,
    col: &str,
    value: &str,
) -> &'a HashMap<String, String> {
    rows(t, section)
        .iter()
        .find(|r| r[col] == value)
        .unwrap_or_else(|| panic!("no {section} row with {col}={value}: {:?}", t.get(section)))
}

fn num(r: &HashMap<String, String>, col: &str) -> f64 {
    r[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col}={:?} is not a number", r[col]))
}

/// Runs an example under biren-prof --csv; it must exit 0. Its tables.
fn example_csv(name: &str) -> HashMap<String, Vec<HashMap<String, String>>> {
    let csv = tmp(&format!("{name}.csv"));
    let program = example(name);
    let out = prof(
        &[
            "--csv",
            "-o",
            csv.to_str().unwrap(),
            program.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    parse_csv(&std::fs::read_to_string(&csv).unwrap())
}

/// known_work.c: its kernels, copies and synchronizations exactly; stdin, stdout, stderr and the
/// exit code go through.
#[test]
fn known_work_summary_is_exact_and_the_program_is_untouched() {
    let kw = known_work();
    let csv_path = tmp("known.csv");
    let out = prof(
        &[
            "--csv",
            "--output",
            csv_path.to_str().unwrap(),
            kw.to_str().unwrap(),
            "5",
        ],
        "hello\n",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(5),
        "exit code passed through; stderr: {stderr}"
    );
    assert_eq!(
        stdout, "stdin: hello\nknown_work: done\n",
        "stdout is the program's"
    );
    assert_eq!(
        stderr, "known_work: a line on stderr\n",
        "the summary went to --output"
    );
    let t = parse_csv(&std::fs::read_to_string(&csv_path).unwrap());

    assert_eq!(find(&t, "run", "key", "ended")["value"], "exit code 5");
    assert_eq!(
        find(&t, "run", "key", "device_0_compute_units")["value"],
        "2"
    );
    assert_eq!(num(find(&t, "kernels", "kernel", "scale"), "calls"), 5.0);
    assert_eq!(num(find(&t, "kernels", "kernel", "fill"), "calls"), 3.0);
    assert_eq!(rows(&t, "kernels").len(), 2);
    let totals: Vec<f64> = rows(&t, "kernels")
        .iter()
        .map(|r| num(r, "total_ns"))
        .collect();
    assert!(
        totals.windows(2).all(|w| w[0] >= w[1]),
        "sorted by total: {totals:?}"
    );
    for r in rows(&t, "kernels") {
        let (min, mean, max) = (num(r, "min_ns"), num(r, "mean_ns"), num(r, "max_ns"));
        assert!(min <= mean && mean <= max && min > 0.0, "{r:?}");
        assert!(num(r, "cu_time_ns") > 0.0, "{r:?}");
    }

    let copies: Vec<(String, f64, f64)> = {
        let mut v: Vec<_> = rows(&t, "copies")
            .iter()
            .map(|r| (r["kind"].clone(), num(r, "count"), num(r, "bytes")))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let expected = [
        ("DtoD", 1.0, 2048.0),
        ("DtoH", 1.0, 1024.0),
        ("HtoD", 1.0, 4096.0),
        ("HtoH", 1.0, 512.0),
        ("memset", 1.0, 300.0),
    ];
    let expected: Vec<(String, f64, f64)> = expected
        .iter()
        .map(|(k, c, b)| (k.to_string(), *c, *b))
        .collect();
    assert_eq!(copies, expected);
    for r in rows(&t, "copies") {
        assert!(num(r, "bandwidth_gb_per_s") > 0.0, "{r:?}");
    }

    let syncs: HashMap<&str, f64> = rows(&t, "syncs")
        .iter()
        .map(|r| (r["call"].as_str(), num(r, "count")))
        .collect();
    let want: HashMap<&str, f64> = [
        ("birenStreamSynchronize", 2.0),
        ("birenMemcpy", 2.0),
        ("birenDeviceSynchronize", 1.0),
    ]
    .into();
    assert_eq!(syncs, want);
    // Call sites: addr2line places them on the lines of known_work.c that make the calls.
    let source =
        std::fs::read_to_string(root().join("tools/biren-prof/tests/progs/known_work.c")).unwrap();
    let line_of = |needle: &str| {
        source
            .lines()
            .position(|l| l.contains(needle))
            .map(|i| i + 1)
            .unwrap()
    };
    for (call, needle) in [
        ("birenStreamSynchronize", "birenStreamSynchronize(s1)"),
        ("birenDeviceSynchronize", "birenDeviceSynchronize()"),
        ("birenMemcpy", "birenMemcpyHostToHost)"),
    ] {
        let site = format!("known_work.c:{} in main", line_of(needle));
        let r = find(&t, "sync_sites", "site", &site);
        assert_eq!(r["calls"], call);
    }
    assert_eq!(rows(&t, "sync_sites").len(), 5);

    // Two units listed (one may have been idle), then the device total.
    let units: Vec<&str> = rows(&t, "units")
        .iter()
        .map(|r| r["unit"].as_str())
        .collect();
    assert_eq!(units, ["compute unit 0", "compute unit 1", "all 2 units"]);
    let span = num(find(&t, "run", "key", "span_ns"), "value");
    for r in rows(&t, "units") {
        let u = num(r, "utilisation_pct");
        assert!((0.0..=100.0).contains(&u), "{r:?}");
    }
    let two = num(find(&t, "overlap", "streams_busy", ">= 2"), "time_ns");
    let one = num(find(&t, "overlap", "streams_busy", ">= 1"), "time_ns");
    assert!(two <= one && one <= span, "{two} <= {one} <= {span}");
}

/// The text form: titled, aligned tables with units.
#[test]
fn text_tables_are_aligned() {
    let out = prof(&[known_work().to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(0));
    let stderr = text(&out.stderr);
    let summary = &stderr[stderr.find("biren-prof: ").expect(&stderr)..];
    for title in [
        "Kernels (",
        "Streams (",
        "Copies and fills (",
        "Host synchronizations (",
        "Synchronization call sites (",
        "Compute-unit utilisation (",
        "Stream overlap",
    ] {
        assert!(
            summary.contains(&format!("\n{title}")),
            "{title} in:\n{summary}"
        );
    }
    // In each table, the header and the rows have the same width (every last column is
    // right-aligned), and times carry units.
    let mut tables = 0;
    for block in summary.split("\n\n").skip(1) {
        let lines: Vec<&str> = block
            .lines()
            .skip(1)
            .filter(|l| !l.trim_start().starts_with('('))
            .collect();
        if lines.is_empty() {
            continue;
        }
        let w = lines[0].chars().count();
        assert!(
            lines.iter().all(|l| l.chars().count() == w),
            "misaligned:\n{block}"
        );
        tables += 1;
    }
    assert_eq!(tables, 7, "{summary}");
    assert!(summary.contains(" us") || summary.contains(" ms"));
    assert!(summary.contains("GB/s") && summary.contains("KiB"));
    assert!(summary
        .lines()
        .any(|l| l.trim_start().starts_with("scale ")));
}

/// 08_trace: three rounds of square, prepare and block_sums; 256 KiB in and 1 KiB out per
/// round; --trace keeps the Perfetto file; without it the temporary trace is removed.
#[test]
fn example_08_trace() {
    let keep = tmp("kept.json");
    let csv = tmp("08.csv");
    let out = prof(
        &[
            "--trace",
            keep.to_str().unwrap(),
            "--csv",
            "-o",
            csv.to_str().unwrap(),
            "--",
            example("08_trace").to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("round 3: sum of squares"));
    let t = parse_csv(&std::fs::read_to_string(&csv).unwrap());
    for k in ["square", "prepare", "block_sums"] {
        assert_eq!(num(find(&t, "kernels", "kernel", k), "calls"), 3.0, "{k}");
    }
    let htod = find(&t, "copies", "kind", "HtoD");
    assert_eq!(
        (num(htod, "count"), num(htod, "bytes")),
        (3.0, 3.0 * 262144.0)
    );
    let dtoh = find(&t, "copies", "kind", "DtoH");
    assert_eq!(
        (num(dtoh, "count"), num(dtoh, "bytes")),
        (3.0, 3.0 * 1024.0)
    );
    assert_eq!(
        num(find(&t, "syncs", "call", "birenStreamSynchronize"), "count"),
        3.0
    );
    assert!(rows(&t, "sync_sites")[0]["site"].starts_with("08_trace.c:"));
    // The kept file is the program's trace, valid JSON.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&keep).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["name"] == "block_sums"));

    // Without --trace: the program is told a temporary path (08_trace prints it), removed after.
    let out = prof(&[example("08_trace").to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("trace written: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let path = line["trace written: ".len()..].split(" (").next().unwrap();
    assert!(path.contains("biren-prof."), "{path}");
    assert!(!Path::new(path).exists(), "{path} was not removed");
    assert!(!Path::new(path).parent().unwrap().exists());
    assert!(text(&out.stderr).contains("block_sums"));
}

/// 02_streams: 8 calls of its one kernel (four pairs; unregistered, named from the program's
/// debug information), two 4-byte fills on the default stream,
/// the pair on two streams overlapping, and the default-stream rule holding streams.
#[test]
fn example_02_streams() {
    let t = example_csv("02_streams");
    assert_eq!(rows(&t, "kernels").len(), 1);
    assert_eq!(
        num(find(&t, "kernels", "kernel", "busy_kernel"), "calls"),
        8.0
    );
    let fills = find(&t, "copies", "kind", "memset");
    assert_eq!((num(fills, "count"), num(fills, "bytes")), (2.0, 8.0));
    // Two ~200 ms kernels were launched side by side twice: streams overlap for a while.
    let two = num(find(&t, "overlap", "streams_busy", ">= 2"), "time_ns");
    assert!(two > 50e6, "{two} ns with two streams busy");
    let held: f64 = rows(&t, "streams")
        .iter()
        .map(|r| num(r, "rule_wait_ns"))
        .sum();
    assert!(held > 50e6, "default-stream rule waits: {held} ns");
    assert_eq!(
        num(find(&t, "syncs", "call", "birenDeviceSynchronize"), "count"),
        4.0
    );
}

/// 03_events: kernel A (~300 ms) and B, twice each; with the event edge, stream 2 is held by the
/// event while A runs. Both runs of A appear in compute-unit time (the last one included).
#[test]
fn example_03_events() {
    let t = example_csv("03_events");
    let k = rows(&t, "kernels");
    let names: Vec<&str> = k.iter().map(|r| r["kernel"].as_str()).collect();
    assert_eq!(names, ["kernelA", "kernelB"], "sorted by total");
    assert!(k.iter().all(|r| num(r, "calls") == 2.0), "{k:?}");
    // A's compute-unit time covers both runs.
    assert!(num(&k[0], "cu_time_ns") > 2.0 * 300e6 * 0.95, "{:?}", k[0]);
    let s2 = find(&t, "streams", "stream", "stream #2");
    assert!(
        num(s2, "event_waits") >= 1.0 && num(s2, "event_wait_ns") > 100e6,
        "{s2:?}"
    );
}

/// A program that never starts the runtime: its output, its exit code, and a clear message.
#[test]
fn program_without_the_runtime() {
    let out = prof(&["sh", "-c", "echo out; echo err >&2; exit 3"], "");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(text(&out.stdout), "out\n");
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("err\n"), "{stderr}");
    assert!(
        stderr.contains("sh wrote no trace, so there is nothing to summarise")
            && stderr.contains("did not use the BIREN runtime"),
        "{stderr}"
    );
}

/// Killed by a signal: 128 + N and a message; a trace written before (birenDeviceReset) is still
/// summarised.
#[test]
fn signal_death() {
    let kw = known_work();
    let out = prof(&[kw.to_str().unwrap(), "term"], "");
    assert_eq!(out.status.code(), Some(128 + 15));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("was killed by signal 15 (SIGTERM)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("wrote no trace") && stderr.contains("signal ended"),
        "{stderr}"
    );

    let out = prof(&[kw.to_str().unwrap(), "reset-term"], "");
    assert_eq!(out.status.code(), Some(128 + 15));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("ended with signal 15 (SIGTERM)"),
        "{stderr}"
    );
    assert!(
        stderr.lines().any(|l| l.trim_start().starts_with("scale ")),
        "{stderr}"
    );
}

/// SIGTERM sent to the profiler alone reaches the program; the profiler reports and exits 143.
#[test]
fn sigterm_to_the_profiler_is_passed_on() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_biren-prof"))
        .args(["sh", "-c", "echo started; exec sleep 30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 8];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    assert_eq!(&first, b"started\n");
    let t0 = std::time::Instant::now();
    unsafe { libc_kill(child.id() as i32, 15) };
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed().as_secs() < 20, "the program was not stopped");
    assert_eq!(out.status.code(), Some(128 + 15));
    assert!(text(&out.stderr).contains("was killed by signal 15 (SIGTERM)"));
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn usage_errors() {
    let out = prof(&["/nonexistent/program"], "");
    assert_eq!(out.status.code(), Some(127));
    assert!(text(&out.stderr).contains("cannot run /nonexistent/program"));
    let out = prof(&["--bogus", "true"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown option --bogus"));
    let out = prof(&[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no program to run"));
    let out = prof(&["--trace", "/nonexistent-dir/t.json", "true"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot write the trace to /nonexistent-dir/t.json"));
    let out = prof(&["--help"], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("usage: biren-prof"));
}
