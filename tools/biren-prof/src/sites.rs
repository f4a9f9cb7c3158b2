//! Call sites of host synchronizations as a reader wants them: `file.c:118 in main`, from the
//! trace's (file, address) pairs through `addr2line` (binutils) when the program has debug
//! information, else the runtime's own description.

use crate::summary::Site;
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

/// Parses addr2line -f -C output: two lines per address (function, then `file:line`).
fn parse_addr2line(out: &str, count: usize) -> Vec<Option<String>> {
    let lines: Vec<&str> = out.lines().collect();
    (0..count)
        .map(|i| {
            let func = lines.get(2 * i)?.trim();
            let place = lines.get(2 * i + 1)?.trim();
            // "file:line (discriminator 2)" -> "file:line"
            let place = place.split(" (").next().unwrap_or(place);
            let (file, line) = place.rsplit_once(':')?;
            if file.starts_with("??") || line == "?" || line == "0" {
                return None;
            }
            let mut s = format!("{}:{line}", basename(file));
            if !func.starts_with("??") {
                s.push_str(&format!(" in {func}"));
            }
            Some(s)
        })
        .collect()
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
        let offsets: Vec<&str> = list
            .iter()
            .filter_map(|s| s.object.as_ref().map(|o| o.1.as_str()))
            .collect();
        let run = Command::new("addr2line")
            .args(["-f", "-C", "-e", obj])
            .args(&offsets)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        if let Some(o) = run.ok().filter(|o| o.status.success()) {
            let text = String::from_utf8_lossy(&o.stdout);
            for (site, place) in list.iter().zip(parse_addr2line(&text, offsets.len())) {
                if let Some(p) = place {
                    out.insert((*site).clone(), p);
                }
            }
        }
    }
    for s in sites {
        out.entry((*s).clone()).or_insert_with(|| fallback(s));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_addr2line_output() {
        let out =
            "main\n/src/examples-c/08_trace.c:115 (discriminator 2)\n??\n??:0\nrun\n/x/y.c:7\n";
        assert_eq!(
            parse_addr2line(out, 3),
            vec![
                Some("08_trace.c:115 in main".to_string()),
                None,
                Some("y.c:7 in run".to_string())
            ]
        );
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
