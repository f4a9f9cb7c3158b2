//! biren-prof: runs a program with the BIREN runtime's trace on (`BIREN_TRACE`) and, when it
//! exits, prints what the trace says: kernels, streams, copies, host synchronizations,
//! compute-unit utilisation and stream overlap.

mod report;
mod sites;
mod summary;
mod trace;

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

const USAGE: &str = "\
usage: biren-prof [--trace FILE.json] [--csv] [--output FILE] [--] PROGRAM [ARGS...]

Runs PROGRAM with the BIREN runtime's trace on (BIREN_TRACE) and, when it exits, prints a summary
of the trace to stderr: kernels (calls, total, mean, min, max), streams (busy, waiting on events),
copies (bytes, bandwidth, by kind) and fills, host synchronizations (count, time blocked, call
sites), compute-unit utilisation, and how long streams overlapped.

  --trace FILE   keep the trace (Chrome/Perfetto JSON) in FILE (replaced if it exists); without
                 it the trace goes to a temporary file that is removed afterwards
  --csv          print the tables as CSV (one block per table, blank lines between blocks, the
                 first column of every line names the table)
  --output FILE  write the summary to FILE instead of stderr
  -h, --help     this text

PROGRAM's stdin, stdout and stderr are its own. biren-prof exits with PROGRAM's exit code, or
128+N when a signal N killed it (it says so). Ctrl-C is the program's to handle; SIGTERM and
SIGHUP sent to biren-prof are passed on to it. BIREN_TRACE in the environment is replaced.";

struct Options {
    trace: Option<PathBuf>,
    csv: bool,
    output: Option<PathBuf>,
    program: Vec<OsString>,
}

fn parse_args(args: Vec<OsString>) -> Result<Options, String> {
    let mut o = Options {
        trace: None,
        csv: false,
        output: None,
        program: Vec::new(),
    };
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.to_str() {
            Some("--") => {
                o.program = it.collect();
                break;
            }
            Some("-h") | Some("--help") => return Err(String::new()),
            Some("--csv") => o.csv = true,
            Some(flag @ ("--trace" | "--output" | "-o")) => {
                let v = it.next().ok_or(format!("{flag} needs a file name"))?;
                if flag == "--trace" {
                    o.trace = Some(v.into());
                } else {
                    o.output = Some(v.into());
                }
            }
            Some(s) if s.starts_with("--trace=") => o.trace = Some(s[8..].into()),
            Some(s) if s.starts_with("--output=") => o.output = Some(s[9..].into()),
            Some(s) if s.starts_with('-') && s.len() > 1 => {
                return Err(format!("unknown option {s}"));
            }
            _ => {
                o.program = std::iter::once(a).chain(it).collect();
                break;
            }
        }
    }
    if o.program.is_empty() {
        return Err("no program to run".into());
    }
    Ok(o)
}

/// A private directory for the trace, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut last = None;
        for i in 0..100u32 {
            let p = base.join(format!("biren-prof.{}.{nanos:x}.{i}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&p) {
                Ok(()) => return Ok(TempDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no temporary directory")))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The running program, for `forward_signal`; a signal that came before it started.
static CHILD: AtomicI32 = AtomicI32::new(0);
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward_signal(sig: libc::c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // kill(2) is async-signal-safe.
        unsafe { libc::kill(pid, sig) };
    } else {
        PENDING.store(sig, Ordering::SeqCst);
    }
}

extern "C" fn ignore_signal(_: libc::c_int) {}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

fn main() -> ExitCode {
    let opts = match parse_args(std::env::args_os().skip(1).collect()) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("biren-prof: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let program = opts.program[0].to_string_lossy().into_owned();

    // The program may change directory: give it an absolute path.
    let (trace_path, _tmp) = match &opts.trace {
        Some(p) => {
            let abs = std::env::current_dir().map_or(p.clone(), |d| d.join(p));
            // Writable? (Said now rather than after the run.) And a file left from an earlier
            // run must not pass for this run's trace.
            if let Err(e) = std::fs::File::create(&abs).and_then(|_| std::fs::remove_file(&abs)) {
                eprintln!(
                    "biren-prof: cannot write the trace to {}: {e}",
                    abs.display()
                );
                return ExitCode::from(2);
            }
            (abs, None)
        }
        None => match TempDir::new() {
            Ok(d) => (d.0.join("trace.json"), Some(d)),
            Err(e) => {
                eprintln!("biren-prof: cannot create a temporary directory: {e}");
                return ExitCode::from(2);
            }
        },
    };

    // Ctrl-C and Ctrl-\ reach the whole foreground group: the program decides what to do with
    // them; the profiler stays to report (as `time` does). SIGTERM and SIGHUP sent to the
    // profiler alone (e.g. by `timeout`) are passed on to the program. Handlers, not SIG_IGN:
    // the program starts with the default dispositions, and they are in place before it runs.
    let ignore = ignore_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    let forward = forward_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    unsafe {
        libc::signal(libc::SIGINT, ignore);
        libc::signal(libc::SIGQUIT, ignore);
        libc::signal(libc::SIGTERM, forward);
        libc::signal(libc::SIGHUP, forward);
    }
    let started = Instant::now();
    let child = Command::new(&opts.program[0])
        .args(&opts.program[1..])
        .env("BIREN_TRACE", &trace_path)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            eprintln!("biren-prof: cannot run {program}: {e}");
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            return ExitCode::from(code);
        }
    };
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    let pending = PENDING.swap(0, Ordering::SeqCst);
    if pending != 0 {
        unsafe { libc::kill(child.id() as i32, pending) };
    }
    let status = child.wait();
    let wall_ns = started.elapsed().as_nanos() as i64;
    CHILD.store(0, Ordering::SeqCst);
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
        libc::signal(libc::SIGHUP, libc::SIG_DFL);
    }
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            eprintln!("biren-prof: waiting for {program} failed: {e}");
            return ExitCode::from(2);
        }
    };
    let (ended, code) = match (status.code(), status.signal()) {
        (Some(c), _) => (format!("exit code {c}"), c as u8),
        (None, Some(sig)) => (
            format!("signal {sig} ({})", signal_name(sig)),
            128u8.wrapping_add(sig as u8),
        ),
        _ => ("an unknown status".to_string(), 1),
    };
    if let Some(sig) = status.signal() {
        eprintln!(
            "biren-prof: {program} was killed by signal {sig} ({})",
            signal_name(sig)
        );
    }

    let run = report::Run {
        program,
        ended,
        wall_ns,
    };
    if let Err(e) = summarise(&run, &trace_path, &opts, status.signal()) {
        eprintln!("biren-prof: {e}");
    }
    ExitCode::from(code)
}

fn summarise(
    run: &report::Run,
    trace_path: &Path,
    opts: &Options,
    signal: Option<i32>,
) -> Result<(), String> {
    let text = match std::fs::read_to_string(trace_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let why = if signal.is_some() {
                "the runtime writes the trace as the process exits (and at birenDeviceReset), \
                 and the signal ended the process before that"
                    .to_string()
            } else {
                "it did not use the BIREN runtime (no birenInit or other biren call), or it \
                 ended without running exit handlers (_exit, a crash), or it was linked with a \
                 libbiren_runtime without BIREN_TRACE support"
                    .to_string()
            };
            return Err(format!(
                "{} wrote no trace, so there is nothing to summarise: {why}",
                run.program
            ));
        }
        Err(e) => {
            return Err(format!(
                "cannot read the trace {}: {e}",
                trace_path.display()
            ))
        }
    };
    let t = trace::Trace::parse(&text)
        .map_err(|e| format!("the trace {} is unreadable: {e}", trace_path.display()))?;
    if !t.spans.is_empty() && t.spans.iter().all(|e| e.cat.is_empty()) {
        return Err(format!(
            "the trace {} has no event categories: it was written by an older libbiren_runtime \
             than this biren-prof; rebuild the program against the current library",
            trace_path.display()
        ));
    }
    let s = summary::summarise(&t);
    let mut out = if opts.csv {
        report::csv(run, &s)
    } else {
        report::text(run, &s)
    };
    if t.spans.is_empty() && !opts.csv {
        out.push_str("\n(the runtime started, but no device work or synchronization was traced)\n");
    }
    if let Some(p) = &opts.trace {
        if !opts.csv {
            out.push_str(&format!(
                "\ntrace kept: {} (open it in https://ui.perfetto.dev)\n",
                p.display()
            ));
        }
    }
    match &opts.output {
        Some(p) => std::fs::write(p, out).map_err(|e| format!("cannot write {}: {e}", p.display())),
        None => std::io::stderr()
            .write_all(out.as_bytes())
            .map_err(|e| format!("cannot write the summary: {e}")),
    }
}
