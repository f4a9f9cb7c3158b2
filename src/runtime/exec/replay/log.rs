//! The replay file: text, one entry per line, written as things happen (unbuffered, so a run
//! that crashes leaves a usable prefix) and read whole at `birenInit` under `BIREN_REPLAY`.
//!
//! ```text
//! biren-replay 1 devices=1 units=2 schedule=serial     header: version, settings that must match
//! T 0 4711                                            host thread 0 is kernel thread 4711
//! C 0 0 birenMalloc                                   API call: turn, host thread, call name
//! S 3 1                                               device op started: stream id, op number
//! Q 7 600                                             answer of a timing-dependent call: turn, code
//! E 9 1065353216                                      birenEventElapsedTime: turn, f32 bits
//! ```
//!
//! Turns are numbered from 0 without gaps; host threads get ordinals in the order of their first
//! call (a `T` line before the first call gives its kernel thread id, whose order tells threads
//! apart that begin with the same call); `S` lines are the device side's starts, in order (one
//! operation at a time).

use std::collections::HashMap;

const VERSION: u32 = 1;
const MAGIC: &str = "biren-replay";

/// The settings a recording depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub devices: usize,
    pub units: usize,
    /// `normal`, `serial` or `fuzz:SEED`.
    pub schedule: String,
}

impl Header {
    pub fn line(&self) -> String {
        format!(
            "{MAGIC} {VERSION} devices={} units={} schedule={}\n",
            self.devices, self.units, self.schedule
        )
    }
}

/// One API call of the recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub thread: u32,
    pub name: String,
}

/// A recording, read back.
#[derive(Debug, Default)]
pub struct Recording {
    pub header: Option<Header>,
    /// By turn.
    pub calls: Vec<Call>,
    /// Device-side starts, in order: (stream id, op number).
    pub starts: Vec<(u64, u64)>,
    /// Answers of timing-dependent calls, by turn.
    pub answers: HashMap<u64, i32>,
    /// birenEventElapsedTime results, by turn (f32 bits).
    pub elapsed: HashMap<u64, u32>,
    /// Kernel thread ids of the host threads, by ordinal.
    pub tids: HashMap<u32, u64>,
}

impl Recording {
    /// Number of host threads in the recording.
    pub fn threads(&self) -> usize {
        self.calls
            .iter()
            .map(|c| c.thread as usize + 1)
            .max()
            .unwrap_or(0)
    }
}

/// Why a file is refused: the line number (1-based; 0 for the whole file) and what is wrong.
#[derive(Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub what: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.what)
        } else {
            write!(f, "line {}: {}", self.line, self.what)
        }
    }
}

fn num<T: std::str::FromStr>(s: Option<&str>) -> Option<T> {
    let s = s?;
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_header(line: &str) -> Option<std::result::Result<Header, String>> {
    let mut w = line.split(' ');
    if w.next()? != MAGIC {
        return None;
    }
    let version: u32 = num(w.next())?;
    if version != VERSION {
        return Some(Err(format!(
            "version {version}, this runtime reads version {VERSION}"
        )));
    }
    let devices = num(w.next()?.strip_prefix("devices="))?;
    let units = num(w.next()?.strip_prefix("units="))?;
    let schedule = w.next()?.strip_prefix("schedule=")?.to_string();
    if w.next().is_some() || schedule.is_empty() {
        return None;
    }
    Some(Ok(Header {
        devices,
        units,
        schedule,
    }))
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Reads a whole recording; refuses anything malformed or cut short (a last line without its
/// newline), naming the line.
pub fn parse(text: &str) -> std::result::Result<Recording, ParseError> {
    let err = |line: usize, what: &str| ParseError {
        line,
        what: what.to_string(),
    };
    if text.is_empty() {
        return Err(err(0, "the file is empty"));
    }
    if !text.ends_with('\n') {
        return Err(err(
            text.lines().count(),
            "the file is cut short (its last line has no end)",
        ));
    }
    let mut rec = Recording::default();
    let mut threads = 0u32;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if i == 0 {
            match parse_header(line) {
                Some(Ok(h)) => rec.header = Some(h),
                Some(Err(e)) => return Err(err(n, &e)),
                None => {
                    return Err(err(
                        n,
                        "not a BIREN_RECORD file (no \"biren-replay\" header)",
                    ))
                }
            }
            continue;
        }
        let mut w = line.split(' ');
        let kind = w.next().unwrap_or("");
        let a: Option<u64> = num(w.next());
        let b = w.next();
        let malformed = || err(n, &format!("malformed entry {line:?}"));
        match (kind, a, b) {
            ("C", Some(turn), Some(thread)) => {
                let thread: u32 = num(Some(thread)).ok_or_else(malformed)?;
                let name = w.next().filter(|s| is_name(s)).ok_or_else(malformed)?;
                if turn != rec.calls.len() as u64 {
                    return Err(err(
                        n,
                        &format!("turn {turn} where {} was expected", rec.calls.len()),
                    ));
                }
                if thread > threads {
                    return Err(err(n, &format!("thread {thread} before thread {threads}")));
                }
                threads = threads.max(thread + 1);
                rec.calls.push(Call {
                    thread,
                    name: name.to_string(),
                });
            }
            ("T", Some(thread), Some(tid)) => {
                let tid = num(Some(tid)).ok_or_else(malformed)?;
                rec.tids.insert(thread as u32, tid);
            }
            ("S", Some(stream), Some(seq)) => {
                let seq = num(Some(seq)).ok_or_else(malformed)?;
                rec.starts.push((stream, seq));
            }
            ("Q", Some(turn), Some(code)) | ("E", Some(turn), Some(code)) => {
                if turn >= rec.calls.len() as u64 {
                    return Err(err(
                        n,
                        &format!("an answer for turn {turn}, which has no call"),
                    ));
                }
                let v: u32 = num(Some(code)).ok_or_else(malformed)?;
                if kind == "Q" {
                    rec.answers.insert(turn, v as i32);
                } else {
                    rec.elapsed.insert(turn, v);
                }
            }
            _ => return Err(malformed()),
        }
        if w.next().is_some() {
            return Err(malformed());
        }
    }
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "biren-replay 1 devices=1 units=2 schedule=serial\n\
                        T 0 17\nC 0 0 birenMalloc\nT 1 18\nC 1 1 birenStreamQuery\nS 3 1\nQ 1 600\nC 2 0 birenFree\nE 2 1065353216\n";

    #[test]
    fn reads_what_it_writes() {
        let h = Header {
            devices: 1,
            units: 2,
            schedule: "serial".into(),
        };
        assert_eq!(&GOOD[..h.line().len()], h.line());
        let r = parse(GOOD).unwrap();
        assert_eq!(r.header, Some(h));
        assert_eq!(r.calls.len(), 3);
        assert_eq!(r.calls[1].thread, 1);
        assert_eq!(r.calls[2].name, "birenFree");
        assert_eq!(r.starts, vec![(3, 1)]);
        assert_eq!(r.answers.get(&1), Some(&600));
        assert_eq!(r.elapsed.get(&2), Some(&1065353216));
        assert_eq!(r.threads(), 2);
        assert_eq!(r.tids.get(&1), Some(&18));
    }

    #[test]
    fn refuses_damaged_files() {
        assert_eq!(parse("").unwrap_err().line, 0);
        // Cut in the middle of a line.
        let cut = &GOOD[..GOOD.len() - 5];
        assert!(parse(cut).unwrap_err().what.contains("cut short"));
        assert_eq!(parse("hello\n").unwrap_err().line, 1);
        assert!(parse("biren-replay 2 devices=1 units=2 schedule=normal\n")
            .unwrap_err()
            .what
            .contains("version 2"));
        let bad = |body: &str| {
            parse(&format!(
                "biren-replay 1 devices=1 units=2 schedule=normal\n{body}"
            ))
            .unwrap_err()
        };
        assert_eq!(bad("C 1 0 birenMalloc\n").line, 2); // a gap in the turns
        assert_eq!(bad("C 0 1 birenMalloc\n").line, 2); // thread 1 before thread 0
        assert_eq!(bad("C 0 0 biren Malloc\n").line, 2);
        assert_eq!(bad("C 0 0 birenMalloc\nQ 5 0\n").line, 3);
        assert_eq!(bad("S 1\n").line, 2);
        assert_eq!(bad("S -1 2\n").line, 2);
        assert_eq!(bad("X 1 2\n").line, 2);
        assert_eq!(bad("C 0 0 birenMalloc\nS 1 2 3\n").line, 3);
    }
}
