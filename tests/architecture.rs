//! The architecture test: the imports of the runtime core run one way.
//!
//! It reads every file under `src/runtime/{exec,diagnostics,memory}`, collects the paths each
//! names (`use` lines and paths written inline: `crate::runtime::...`, `super::...`), and fails
//! on any that runs up:
//! - between the groups: `exec` -> `diagnostics` -> `memory`, and none of them reaches the
//!   root's own items (`Runtime`, `get`, `try_get`, ...), which import them;
//! - inside `exec`, between its layers (see `exec/mod.rs` and ARCHITECTURE.md):
//!   ops < device < streams < graphs < context; the debug hooks (`schedule`, `race`, `replay`)
//!   may be called from every layer and import nothing above the ops.
//!
//! A file that has no layer yet fails the test too, so a new file is placed on purpose.

use std::collections::BTreeMap;
use std::path::Path;

/// Layers of `exec`, bottom first.
const OPS: u8 = 0;
const DEVICE: u8 = 1;
const STREAMS: u8 = 2;
const GRAPHS: u8 = 3;
const CONTEXT: u8 = 4;
/// The debug hooks: called by the layer they observe, never calling back into it.
const HOOKS: u8 = 100;
/// `exec/mod.rs`: re-exports for `ffi`; nothing inside `exec` imports through it.
const FACADE: u8 = 200;

/// Every module of `exec` and its layer.
const EXEC_LAYERS: &[(&str, u8)] = &[
    ("exec", FACADE),
    ("exec::work", OPS),
    ("exec::copy", OPS),
    ("exec::strided", OPS),
    ("exec::launch", OPS),
    ("exec::executor", DEVICE),
    ("exec::executor::backlog", DEVICE),
    ("exec::executor::frees", DEVICE),
    ("exec::executor::reset", DEVICE),
    ("exec::scheduler", DEVICE),
    ("exec::notifier", DEVICE),
    ("exec::stream", STREAMS),
    ("exec::stream::point", STREAMS),
    ("exec::stream::report", STREAMS),
    ("exec::stream_set", STREAMS),
    ("exec::event", STREAMS),
    ("exec::deadlock", STREAMS),
    ("exec::graph", GRAPHS),
    ("exec::graph::exec", GRAPHS),
    ("exec::graph::run", GRAPHS),
    ("exec::graph::events", GRAPHS),
    ("exec::graph::capture", GRAPHS),
    ("exec::graph::race", GRAPHS),
    ("exec::context", CONTEXT),
    ("exec::context::host_sync", CONTEXT),
    ("exec::context::graph_launch", CONTEXT),
    ("exec::context::memory", CONTEXT),
    ("exec::schedule", HOOKS),
    ("exec::race", HOOKS),
    ("exec::replay", HOOKS),
    ("exec::replay::log", HOOKS),
];

/// The runtime's groups, bottom first.
const GROUPS: &[&str] = &["memory", "diagnostics", "exec"];

/// The single-file modules beside the groups in `src/runtime/`: shared leaves (errors, ids,
/// handles, configuration) and API-facing helpers. A path into one of them is not a path to the
/// root's own items.
const ROOT_FILES: &[&str] = &[
    "caps",
    "config",
    "copy3d",
    "copies",
    "error",
    "ids",
    "kernels",
    "lock_order",
    "registry",
    "settings",
    "symbols",
    "texture",
];

/// Paths that run up, kept on purpose, each with its reason. Empty is the goal.
const KNOWN: &[(&str, &str, &str)] = &[
    (
        "exec/graph/capture.rs",
        "try_get",
        "a captured 2D/3D copy asks which sides are device memory, on any device; \
         `Strided` should carry it from its plan",
    ),
    (
        "memory/array.rs",
        "diagnostics::finding",
        "an array's box check says why it refuses; the check should return the reason \
         to its caller in ffi",
    ),
];

fn layer_name(l: u8) -> &'static str {
    match l {
        OPS => "ops",
        DEVICE => "device",
        STREAMS => "streams",
        GRAPHS => "graphs",
        CONTEXT => "context",
        HOOKS => "debug hooks",
        FACADE => "facade",
        _ => "?",
    }
}

/// The module a file under `src/runtime/` defines: `exec/graph/run.rs` -> `exec::graph::run`,
/// `exec/graph/mod.rs` -> `exec::graph`.
fn module_of(rel: &str) -> String {
    let rel = rel.trim_end_matches(".rs");
    let rel = rel.strip_suffix("/mod").unwrap_or(rel);
    rel.replace('/', "::")
}

/// The text without comments, string literals and `#[cfg(test)]` items (tests may build what they
/// test from anywhere).
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'"' {
            // A raw string's hashes are not handled: the core has no paths in raw strings.
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal ('"', '\n'), not a lifetime.
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    // Drop each `#[cfg(test)]` item: from the attribute to the end of its block or `;`.
    let mut s = out;
    while let Some(at) = s.find("#[cfg(test)]") {
        let rest = &s[at..];
        let end = match (rest.find('{'), rest.find(';')) {
            (Some(o), Some(semi)) if semi < o => at + semi + 1,
            (Some(o), _) => {
                let mut depth = 0;
                let mut end = s.len();
                for (k, c) in s[at + o..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = at + o + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(semi)) => at + semi + 1,
            (None, None) => s.len(),
        };
        s.replace_range(at..end, "");
    }
    s
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths named from `at` (just after `prefix::`): one path, or several in a `{...}` group,
/// each given as its segments after the prefix.
fn parse_tree(s: &[char], mut at: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix.to_vec();
    loop {
        while at < s.len() && s[at].is_whitespace() {
            at += 1;
        }
        if at < s.len() && s[at] == '{' {
            at += 1;
            loop {
                while at < s.len() && (s[at].is_whitespace() || s[at] == ',') {
                    at += 1;
                }
                if at >= s.len() || s[at] == '}' {
                    return at + 1;
                }
                at = parse_tree(s, at, &path, out);
            }
        }
        let start = at;
        while at < s.len() && is_ident(s[at]) {
            at += 1;
        }
        if at == start {
            if at < s.len() && s[at] == '*' {
                at += 1;
            }
            out.push(path);
            return at;
        }
        path.push(s[start..at].iter().collect());
        let mut k = at;
        while k < s.len() && s[k].is_whitespace() {
            k += 1;
        }
        if s[k..].starts_with(&[':', ':']) {
            at = k + 2;
        } else {
            out.push(path);
            return at;
        }
    }
}

/// Every path the (stripped) text names into the runtime, absolute (`runtime::...` segments
/// without `crate::runtime`), from a file of module `module`.
fn paths_of(module: &str, text: &str) -> Vec<Vec<String>> {
    let s: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let own: Vec<String> = module.split("::").map(str::to_string).collect();
    let mut i = 0;
    while i < s.len() {
        let at_word = i == 0 || !is_ident(s[i - 1]) && s[i - 1] != ':';
        if at_word && s[i..].starts_with(&"crate::runtime::".chars().collect::<Vec<_>>()) {
            i = parse_tree(&s, i + "crate::runtime::".len(), &[], &mut out);
            continue;
        }
        if at_word && s[i..].starts_with(&"super::".chars().collect::<Vec<_>>()) {
            // `super` of a mod.rs is its parent folder; `super::super::` climbs again.
            let mut base = own.clone();
            let mut k = i;
            while s[k..].starts_with(&"super::".chars().collect::<Vec<_>>()) {
                base.pop();
                k += "super::".len();
            }
            let mut found = Vec::new();
            i = parse_tree(&s, k, &base, &mut found);
            out.extend(found);
            continue;
        }
        i += 1;
    }
    out
}

/// What a path names: a module of a group (the longest known prefix), a root file, or the root.
fn target_of(path: &[String], modules: &[String]) -> Option<String> {
    let first = path.first()?;
    if ROOT_FILES.contains(&first.as_str()) {
        return None;
    }
    if !GROUPS.contains(&first.as_str()) {
        return Some("(root)".to_string());
    }
    let mut best = first.clone();
    for n in 2..=path.len() {
        let m = path[..n].join("::");
        if modules.contains(&m) {
            best = m;
        }
    }
    Some(best)
}

fn group_of(module: &str) -> usize {
    let g = module.split("::").next().unwrap_or("");
    GROUPS.iter().position(|x| *x == g).unwrap_or(usize::MAX)
}

fn exec_layer(module: &str) -> Option<u8> {
    EXEC_LAYERS
        .iter()
        .find(|(m, _)| *m == module)
        .map(|&(_, l)| l)
}

/// Why the import of `to` by `from` runs up, if it does.
fn violation(from: &str, to: &str) -> Option<String> {
    if to == "(root)" {
        return Some("reaches the runtime's root, which imports the groups".into());
    }
    if to == from || to.starts_with(&format!("{from}::")) {
        return None; // itself or its own submodules
    }
    let (gf, gt) = (group_of(from), group_of(to));
    if gt > gf {
        return Some(format!(
            "group {} imports group {}, which is above it",
            GROUPS[gf], GROUPS[gt]
        ));
    }
    if gf != gt || GROUPS[gf] != "exec" {
        return None;
    }
    let lf = exec_layer(from)?;
    let lt = exec_layer(to)?;
    let up = match (lf, lt) {
        (_, FACADE) => Some("imports through the facade (exec/mod.rs); name the module".into()),
        (FACADE, _) => None,
        (HOOKS, HOOKS | OPS) => None,
        (HOOKS, _) => Some(format!(
            "a debug hook imports the {} layer it observes",
            layer_name(lt)
        )),
        (_, HOOKS) => None,
        (f, t) if t > f => Some(format!(
            "the {} layer imports the {} layer above it",
            layer_name(f),
            layer_name(t)
        )),
        _ => None,
    };
    up
}

/// Checks the files (path under `src/runtime/`, text): one line per path that runs up.
fn check(files: &BTreeMap<String, String>) -> Vec<String> {
    let modules: Vec<String> = files.keys().map(|f| module_of(f)).collect();
    let mut bad = Vec::new();
    let mut used = vec![false; KNOWN.len()];
    for (file, text) in files {
        let from = module_of(file);
        if from.starts_with("exec") && exec_layer(&from).is_none() {
            bad.push(format!(
                "{file}: module {from} has no layer (give it one in EXEC_LAYERS and exec/mod.rs)"
            ));
            continue;
        }
        let text = strip(text);
        if text.contains("impl Runtime") {
            bad.push(format!(
                "{file}: `impl Runtime` in a group (the root imports the groups): move it to a root file"
            ));
        }
        for p in paths_of(&from, &text) {
            let Some(to) = target_of(&p, &modules) else {
                continue;
            };
            if let Some(why) = violation(&from, &to) {
                let shown = p.join("::");
                if let Some(k) = KNOWN
                    .iter()
                    .position(|(f, path, _)| *f == file && shown.starts_with(path))
                {
                    used[k] = true;
                    continue;
                }
                bad.push(format!("{file}: {shown}: {why}"));
            }
        }
    }
    if files.len() > 30 {
        // The whole tree (not a synthetic test): a kept path that is gone leaves the list.
        for (k, (f, path, _)) in KNOWN.iter().enumerate() {
            if !used[k] {
                bad.push(format!("{f}: {path}: listed in KNOWN but no longer there"));
            }
        }
    }
    bad.sort();
    bad.dedup();
    bad
}

fn read_tree(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for e in std::fs::read_dir(dir).expect("read src/runtime") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            read_tree(root, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(
                rel,
                std::fs::read_to_string(&p).expect("read a source file"),
            );
        }
    }
}

#[test]
fn runtime_imports_run_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime");
    let mut files = BTreeMap::new();
    for g in GROUPS {
        read_tree(&root, &root.join(g), &mut files);
    }
    assert!(files.len() > 30, "found only {} files", files.len());
    let bad = check(&files);
    assert!(
        bad.is_empty(),
        "imports that run up ({}):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

fn synthetic(files: &[(&str, &str)]) -> Vec<String> {
    let mut m: BTreeMap<String, String> = files
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    // The modules the paths below resolve to.
    for f in [
        "exec/mod.rs",
        "exec/work.rs",
        "exec/copy.rs",
        "exec/executor/mod.rs",
        "exec/stream/mod.rs",
        "exec/graph/mod.rs",
        "exec/graph/exec.rs",
        "exec/graph/run.rs",
        "exec/context/mod.rs",
        "exec/schedule.rs",
        "diagnostics/mod.rs",
        "memory/mod.rs",
    ] {
        m.entry(f.to_string()).or_default();
    }
    check(&m)
}

#[test]
fn checker_finds_each_kind_of_back_edge() {
    // The bottom importing a graph type, inline and in a group.
    let bad = synthetic(&[(
        "exec/work.rs",
        "use crate::runtime::exec::{copy::CopyDir, graph::exec::ExecGraph};\n\
         fn f(_: Option<crate::runtime::exec::graph::events::X>) {}",
    )]);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(
        bad[0].contains("exec::graph::events::X")
            && bad[0].contains("ops layer imports the graphs layer")
    );
    assert!(bad[1].contains("exec::graph::exec::ExecGraph"));
    // The device side calling the graph run that imports it.
    let bad = synthetic(&[(
        "exec/executor/mod.rs",
        "fn run() { crate::runtime::exec::graph::run::start(); }",
    )]);
    assert_eq!(bad.len(), 1, "{bad:?}");
    // A hook importing the layer that calls it, by `super::`.
    let bad = synthetic(&[("exec/schedule.rs", "use super::stream::StreamCore;")]);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].contains("debug hook"));
    // A group reaching the root, and adding to it.
    let bad = synthetic(&[(
        "diagnostics/leaks.rs",
        "use crate::runtime::Runtime;\nimpl Runtime { fn f(&self) {} }",
    )]);
    assert_eq!(bad.len(), 2, "{bad:?}");
    // memory importing exec; exec importing through its own facade.
    let bad = synthetic(&[
        (
            "memory/array.rs",
            "use crate::runtime::exec::strided::Side;",
        ),
        ("exec/copy.rs", "use crate::runtime::exec::Thing;"),
    ]);
    assert_eq!(bad.len(), 2, "{bad:?}");
    // A new file without a layer.
    let bad = synthetic(&[("exec/newthing.rs", "")]);
    assert_eq!(bad.len(), 1, "{bad:?}");
    // What may be: down a layer, a hook from anywhere, comments, strings and tests ignored.
    let bad = synthetic(&[
        (
            "exec/graph/run.rs",
            "use crate::runtime::exec::executor::Executor;\nuse super::super::schedule;\n\
             use crate::runtime::error::Result;",
        ),
        (
            "exec/work.rs",
            "// crate::runtime::exec::context::X\nconst S: &str = \"crate::runtime::Runtime\";\n\
             #[cfg(test)]\nmod tests { use crate::runtime::exec::context::Y; }",
        ),
        (
            "exec/mod.rs",
            "pub use crate::runtime::exec::context::DeviceContext;",
        ),
    ]);
    assert!(bad.is_empty(), "{bad:?}");
}

#[test]
fn paths_are_read_like_the_compiler_reads_them() {
    let p = paths_of(
        "exec::graph::run",
        &strip("use super::{exec::{A, B}, events::C};\nlet x = crate::runtime::ids::next();"),
    );
    let shown: Vec<String> = p.iter().map(|v| v.join("::")).collect();
    assert_eq!(
        shown,
        [
            "exec::graph::exec::A",
            "exec::graph::exec::B",
            "exec::graph::events::C",
            "ids::next"
        ]
    );
}

/// The crate's three layers (STYLE.md): `ffi` over `runtime` over `device`; no file of a layer
/// names a layer above it.
fn crate_layer_violations(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (rel, text) in files {
        let code = strip(text);
        let above: &[&str] = if rel.starts_with("device/") {
            &["crate::runtime", "crate::ffi"]
        } else if rel.starts_with("runtime/") {
            &["crate::ffi"]
        } else {
            &[]
        };
        for a in above {
            if code.contains(a) {
                out.push(format!("src/{rel} names {a}, a layer above it"));
            }
        }
    }
    out
}

#[test]
fn crate_layers_run_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    read_tree(&root, &root, &mut files);
    let v = crate_layer_violations(&files);
    assert!(v.is_empty(), "imports that run up:\n{}", v.join("\n"));
    // And it would see one.
    let mut bad = BTreeMap::new();
    bad.insert(
        "device/engine.rs".to_string(),
        "use crate::runtime::lock_order::Rank;".to_string(),
    );
    assert_eq!(crate_layer_violations(&bad).len(), 1);
}
