//! Code addresses as a reader wants them, through `addr2line` (binutils) when the program has
//! debug information: call sites of host synchronizations as `file.c:118 in main`, unregistered
//! kernels (`kernel@0x...`) by their function's name. Otherwise the trace's own text stays.

use crate::summary::Site;
use crate::trace::Segment;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Command, Stdio};

fn basename(p: &str) -> &str {
    Path::new(p)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(p)
}

/// What to print for a site that addr2line could not place.
fn fallback(site: &Site) -> String {
    match &site.object {
        // The runtime names the symbol when the object exports one; a bare absolute address
        // means nothing after the process is gone, the offset in the file does.
        Some((obj, off)) if site.caller.starts_with("0x") => format!("{}+{off}", basename(obj)),
        _ => site.caller.clone(),
    }
}

/// What addr2line -f -C says of one address: the function and `file:line`, each when known.
#[derive(Debug, PartialEq)]
struct Place {
    func: Option<String>,
    line: Option<String>,
}

/// Parses addr2line -f -C output: two lines per address (function, then `file:line`).
fn parse_addr2line(out: &str, count: usize) -> Vec<Place> {
    let lines: Vec<&str> = out.lines().collect();
    (0..count)
        .map(|i| {
            let func = lines
                .get(2 * i)
                .map(|f| f.trim())
                .filter(|f| !f.is_empty() && !f.starts_with("??"))
                .map(str::to_string);
            // "file:line (discriminator 2)" -> "file:line"
            let line = lines.get(2 * i + 1).and_then(|p| {
                let p = p.trim();
                let p = p.split(" (").next().unwrap_or(p);
                let (file, line) = p.rsplit_once(':')?;
                (!file.starts_with("??") && line != "?" && line != "0")
                    .then(|| format!("{}:{line}", basename(file)))
            });
            Place { func, line }
        })
        .collect()
}

/// addr2line on `offsets` (hex strings) of `file`; None if it cannot be run.
fn addr2line(file: &str, offsets: &[String]) -> Option<Vec<Place>> {
    let o = Command::new("addr2line")
        .args(["-f", "-C", "-e", file])
        .args(offsets)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(parse_addr2line(
        &String::from_utf8_lossy(&o.stdout),
        offsets.len(),
    ))
}

/// A readable place for every site.
pub fn resolve(sites: &[&Site]) -> HashMap<Site, String> {
    let mut by_object: BTreeMap<&str, Vec<&Site>> = BTreeMap::new();
    for s in sites {
        if let Some((obj, _)) = &s.object {
            by_object.entry(obj).or_default().push(s);
        }
    }
    let mut out: HashMap<Site, String> = HashMap::new();
    for (obj, list) in by_object {
        let offsets: Vec<String> = list
            .iter()
            .filter_map(|s| s.object.as_ref().map(|o| o.1.clone()))
            .collect();
        for (site, place) in list
            .iter()
            .zip(addr2line(obj, &offsets).unwrap_or_default())
        {
            if let Some(line) = place.line {
                let text = match place.func {
                    Some(f) => format!("{line} in {f}"),
                    None => line,
                };
                out.insert((*site).clone(), text);
            }
        }
    }
    for s in sites {
        out.entry((*s).clone()).or_insert_with(|| fallback(s));
    }
    out
}

/// The address in an unregistered kernel's name (`kernel@0x55d0c0a1b920`).
fn kernel_address(name: &str) -> Option<u64> {
    u64::from_str_radix(name.strip_prefix("kernel@0x")?, 16).ok()
}

/// Function names for the unregistered kernels among `names`, where the program's debug
/// information has them.
pub fn kernel_names(names: &[&str], segments: &[Segment]) -> HashMap<String, String> {
    let mut by_file: BTreeMap<&str, Vec<(&str, String)>> = BTreeMap::new();
    for name in names {
        let Some(addr) = kernel_address(name) else {
            continue;
        };
        if let Some(seg) = segments.iter().find(|s| s.start <= addr && addr < s.end) {
            by_file
                .entry(&seg.file)
                .or_default()
                .push((name, format!("{:#x}", addr - seg.bias)));
        }
    }
    let mut out = HashMap::new();
    for (file, list) in by_file {
        let offsets: Vec<String> = list.iter().map(|(_, off)| off.clone()).collect();
        for ((name, _), place) in list
            .iter()
            .zip(addr2line(file, &offsets).unwrap_or_default())
        {
            if let Some(f) = place.func {
                out.insert(name.to_string(), f);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_addr2line_output() {
        let out =
            "main\n/src/examples-c/08_trace.c:115 (discriminator 2)\n??\n??:0\nrun\n/x/y.c:?\n";
        let place = |f: Option<&str>, l: Option<&str>| Place {
            func: f.map(str::to_string),
            line: l.map(str::to_string),
        };
        assert_eq!(
            parse_addr2line(out, 3),
            vec![
                place(Some("main"), Some("08_trace.c:115")),
                place(None, None),
                place(Some("run"), None),
            ]
        );
    }

    #[test]
    fn finds_kernel_addresses() {
        assert_eq!(
            kernel_address("kernel@0x55d0c0a1b920"),
            Some(0x55d0c0a1b920)
        );
        assert_eq!(kernel_address("square"), None);
        assert_eq!(kernel_address("kernel@0xzz"), None);
        // Outside every segment: left alone, no addr2line run.
        let segs = [Segment {
            file: "/nonexistent".into(),
            bias: 0x1000,
            start: 0x2000,
            end: 0x3000,
        }];
        assert!(kernel_names(&["kernel@0x5000", "square"], &segs).is_empty());
    }

    #[test]
    fn falls_back_to_the_offset_in_the_file() {
        let bare = Site {
            object: Some(("/bin/prog".into(), "0x173a".into())),
            caller: "0x55d0c0a1b73b in ./prog".into(),
        };
        assert_eq!(fallback(&bare), "prog+0x173a");
        let named = Site {
            object: Some(("/bin/prog".into(), "0x173a".into())),
            caller: "main+0x2da in ./prog".into(),
        };
        assert_eq!(fallback(&named), "main+0x2da in ./prog");
    }
}
