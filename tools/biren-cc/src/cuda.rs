//! CUDA sources (`.cu`): the first stage of their translation. libclang reads the file as CUDA
//! (host side, with BIREN's `include/cuda` headers instead of CUDA's), which tells kernels,
//! device variables, dynamic shared memory and `<<<...>>>` launches apart; this module rewrites
//! just those into C++ over BIREN's kernel form:
//! - a kernel `__global__ void k(P...) { body }` keeps its declaration, now a host stub with
//!   the kernel's parameters (what `k<<<...>>>(...)` calls and `(void *)k` names, as with nvcc),
//!   whose body launches with the pending configuration; the body becomes `k_biren_thread_`,
//!   the per-thread function of BIREN_KERNEL's form, with its entries (per-thread, block,
//!   range) registered by `birenKernelRegisterStub` (templates: per instantiation);
//! - `k<<<g, b, s, st>>>(args)` becomes `(biren_cuda::configure(g, b, s, st) ? (void)0 :
//!   k(args))`, CUDA's own lowering;
//! - `extern __shared__ T a[]` becomes a pointer to the block's dynamic shared memory;
//! - `__constant__` / `__device__` variables are registered as symbols.
//!
//! The result is C++ with `#line` directives pointing at the user's file; the second stage
//! (kernel.rs, emit.rs) then puts kernels with barriers in region form as for C and C++.

#![allow(non_upper_case_globals)]

use crate::clang::{self, Cursor, Unit};
use crate::inline;
use clang_sys::*;
use std::collections::{HashMap, HashSet};

/// `__CUDA_ARCH__` in device code: the simulated device's compute capability, 6.0.
const CUDA_ARCH: u32 = 600;

/// True when `src[a..b]` names `__CUDA_ARCH__` (a token, not part of a longer name).
fn mentions_arch(src: &[u8], a: usize, b: usize) -> bool {
    const W: &[u8] = b"__CUDA_ARCH__";
    let Some(t) = src.get(a..b.min(src.len())) else {
        return false;
    };
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    t.windows(W.len()).enumerate().any(|(i, w)| {
        w == W && (i == 0 || !word(t[i - 1])) && t.get(i + W.len()).is_none_or(|&c| !word(c))
    })
}

/// One rewrite of the source: bytes start..end become `text`.
#[derive(Clone)]
pub(crate) struct Edit {
    pub(crate) file: String,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) text: String,
}

/// A kernel whose body the translation moves.
struct KernelDef {
    name: String,
    file: String,
    /// Where forward declarations go (before the declaration, and before `extern "C"`).
    decl_start: usize,
    body_open: usize,
    /// One past the body's `}`.
    body_end: usize,
    /// The template head (`template <class T, int N>`) and arguments (`<T, N>`), or empty.
    tpl_head: String,
    tpl_args: String,
    /// The parameter declarations as written, each with a name (unnamed ones get one).
    params: Vec<String>,
    param_names: Vec<String>,
    /// The body calls a function that reads threadIdx, or tests `__CUDA_ARCH__` (this stage
    /// read its host branches, so what the device branches call is unknown): the entries, and
    /// the second stage's thread loops, keep the context's threadIdx current for every thread.
    reads_tid_in_callee: bool,
    /// Names given to unnamed parameters in the stub's declaration: (offset, text).
    name_edits: Vec<(usize, String)>,
    /// The local copies of the parameters the body changes, put first in the per-thread
    /// function's body (see `kernel_def`).
    param_copies: String,
}

/// `body` (of a kernel in `path`) writes parameter `p` (named `name`) or takes its address.
fn changes(src: &[u8], path: &str, body: &Cursor, p: &Cursor, name: &str) -> bool {
    !name.is_empty()
        && body.descendants().iter().any(|d| {
            d.kind() == CXCursor_DeclRefExpr
                && d.referenced().is_some_and(|r| r.same(p))
                && matches!(d.extent_in(), Some((f, u, _)) if f == path && u < src.len() && {
                    let c = crate::text::use_context(src, u, name.len());
                    c.writes || c.address
                })
        })
}

/// Where the last whole-word `word` is in `text`.
pub(crate) fn last_word(text: &str, word: &str) -> Option<usize> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    text.rmatch_indices(word)
        .map(|(i, _)| i)
        .find(|&i| (i == 0 || !ident(b[i - 1])) && b.get(i + word.len()).is_none_or(|&c| !ident(c)))
}

/// What the first stage gives the driver.
pub struct Translated {
    pub text: String,
    /// Other files of the program that hold kernels, launches or device variables: their
    /// path as libclang read them, and their translation.
    pub others: Vec<(String, String)>,
}

/// A declaration context at file scope: the unit (libclang numbers it 350 since version 5,
/// clang-sys's constant may say 300), a namespace, a linkage specification.
fn file_scope(k: CXCursorKind) -> bool {
    k == 300 || k == 350 || k == CXCursor_Namespace || k == CXCursor_LinkageSpec
}

fn has_attr(c: &Cursor, kind: CXCursorKind) -> bool {
    c.children().iter().any(|ch| ch.kind() == kind)
}

/// The text of `src[a..b]` as a string.
fn slice(src: &[u8], a: usize, b: usize) -> String {
    String::from_utf8_lossy(&src[a.min(src.len())..b.min(src.len())]).into_owned()
}

fn line_of(src: &[u8], off: usize) -> usize {
    src[..off.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

pub(crate) fn line_directive(src: &[u8], off: usize, file: &str) -> String {
    format!(
        "\n#line {} \"{}\"\n",
        line_of(src, off),
        file.replace('\\', "\\\\").replace('"', "\\\"")
    )
}

/// Applies the edits that fall inside `a..b` to that range of `src`.
pub(crate) fn apply(file: &str, src: &[u8], a: usize, b: usize, edits: &[&Edit]) -> String {
    let mut inside: Vec<&&Edit> = edits
        .iter()
        .filter(|e| e.file == file && e.start >= a && e.end <= b)
        .collect();
    inside.sort_by_key(|e| (e.start, e.end));
    let mut out = String::new();
    let mut at = a;
    for e in inside {
        if e.start < at {
            continue;
        }
        out.push_str(&slice(src, at, e.start));
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(&slice(src, at, b));
    out
}

/// Every cursor of the unit worth a look, depth first.
fn walk(root: &Cursor) -> Vec<Cursor> {
    root.descendants()
}

/// The program's own files, as libclang names them: read once, on demand. Files of the system
/// and of BIREN's headers are not the program's.
pub(crate) struct Sources {
    pub(crate) files: HashMap<String, Option<Vec<u8>>>,
    include: String,
}

impl Sources {
    fn user(&mut self, path: &str, c: &Cursor) -> bool {
        !c.in_system_header() && !path.starts_with(&self.include) && self.get(path).is_some()
    }
    pub(crate) fn get(&mut self, path: &str) -> Option<&Vec<u8>> {
        self.files
            .entry(path.to_string())
            .or_insert_with(|| std::fs::read(path).ok())
            .as_ref()
    }
}

/// Translates a CUDA unit. `file` is the user's path (for `#line`), `include` BIREN's include
/// directory (its headers are not translated).
pub fn translate(unit: &Unit, src: &[u8], file: &str, include: &str) -> Result<Translated, String> {
    let root = unit.root();
    let all = walk(&root);
    let mut srcs = Sources {
        files: HashMap::new(),
        include: include.to_string(),
    };
    srcs.files.insert(file.to_string(), Some(src.to_vec()));
    let mut edits: Vec<Edit> = Vec::new();
    let mut kernels: Vec<KernelDef> = Vec::new();
    let mut errors: Vec<String> = Vec::new();

    // Functions (by USR) whose own body reads threadIdx, and the calls of every function.
    let mut reads_tid: HashSet<String> = HashSet::new();
    let mut calls: HashMap<String, Vec<String>> = HashMap::new();
    let mut kernel_usrs: HashSet<String> = HashSet::new();
    let mut arch_usrs: HashSet<String> = HashSet::new();
    for c in &all {
        let k = c.kind();
        if (k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate || k == CXCursor_CXXMethod)
            && c.is_definition()
            && !c.in_system_header()
        {
            let usr = c.usr();
            if has_attr(c, CXCursor_CUDAGlobalAttr) {
                kernel_usrs.insert(usr.clone());
            }
            // Device code that tests __CUDA_ARCH__ was read here with it undefined (the host
            // side): its device branches may read threadIdx through calls this stage never
            // saw, so it counts as reading it.
            if let Some((path, a, b)) = c.extent_in() {
                if srcs.user(&path, c)
                    && (has_attr(c, CXCursor_CUDAGlobalAttr)
                        || has_attr(c, CXCursor_CUDADeviceAttr))
                    && srcs.get(&path).is_some_and(|t| mentions_arch(t, a, b))
                {
                    arch_usrs.insert(usr.clone());
                    if !has_attr(c, CXCursor_CUDAGlobalAttr) {
                        reads_tid.insert(usr.clone());
                    }
                    // A device-only function is device code: __CUDA_ARCH__ is defined over it,
                    // as in nvcc's device pass. A __host__ __device__ one keeps the host view
                    // (one pass compiles both, and the host calls it).
                    if !has_attr(c, CXCursor_CUDAGlobalAttr) && !has_attr(c, CXCursor_CUDAHostAttr)
                    {
                        let t = srcs.get(&path).cloned().unwrap_or_default();
                        edits.push(Edit {
                            file: path.clone(),
                            start: a,
                            end: a,
                            text: format!(
                                "\n#define __CUDA_ARCH__ {CUDA_ARCH}{}",
                                line_directive(&t, a, &path)
                            ),
                        });
                        edits.push(Edit {
                            file: path.clone(),
                            start: b,
                            end: b,
                            text: format!("\n#undef __CUDA_ARCH__{}", line_directive(&t, b, &path)),
                        });
                    }
                }
            }
            let mut callees = Vec::new();
            for d in c.descendants() {
                match d.kind() {
                    CXCursor_DeclRefExpr if d.spelling() == "threadIdx" => {
                        if let Some(r) = d.referenced() {
                            if r.kind() == CXCursor_VarDecl {
                                reads_tid.insert(usr.clone());
                            }
                        }
                    }
                    CXCursor_CallExpr => {
                        if let Some(r) = d.referenced() {
                            let n = r.spelling();
                            // assert() names the failing thread from the context.
                            if n == "birenThreadIdxIn_"
                                || n == "birenThreadIdx"
                                || n == "__assert_fail"
                            {
                                reads_tid.insert(usr.clone());
                            }
                            if n == "__assert_fail" {
                                reads_tid.insert(r.usr());
                            }
                            callees.push(r.usr());
                        }
                    }
                    _ => {}
                }
            }
            calls.insert(usr, callees);
        }
    }
    // Through calls: a function reads threadIdx if one it calls does (kernels' own reads are
    // their parameters, so a kernel counts only through its callees).
    let mut changed = true;
    while changed {
        changed = false;
        for (f, cs) in &calls {
            if !reads_tid.contains(f)
                && cs
                    .iter()
                    .any(|c| reads_tid.contains(c) && !kernel_usrs.contains(c))
            {
                reads_tid.insert(f.clone());
                changed = true;
            }
        }
    }

    // clock() in device code is the accelerator's cycle counter (at the device's 1 GHz clock
    // rate: nanoseconds), not the C library's processor time.
    let mut seen_clock: HashSet<(String, usize)> = HashSet::new();
    for c in &all {
        let k = c.kind();
        if !((k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate)
            && c.is_definition()
            && (has_attr(c, CXCursor_CUDAGlobalAttr) || has_attr(c, CXCursor_CUDADeviceAttr)))
        {
            continue;
        }
        for d in c.descendants() {
            if d.kind() != CXCursor_CallExpr {
                continue;
            }
            let Some(r) = d.referenced() else { continue };
            if r.spelling() != "clock" || !r.in_system_header() {
                continue;
            }
            let Some(callee) = d.children().into_iter().next() else {
                continue;
            };
            let Some((path, a, b)) = callee.spelled_extent_in() else {
                continue;
            };
            if srcs.user(&path, c) && seen_clock.insert((path.clone(), a)) {
                edits.push(Edit {
                    file: path,
                    start: a,
                    end: b,
                    text: "biren_cuda::device_clock".into(),
                });
            }
        }
    }

    let mut seen_kernels: HashSet<(String, usize)> = HashSet::new();
    let mut kernel_cursors: Vec<(String, Cursor)> = Vec::new();
    let mut seen_launches: HashSet<(String, usize)> = HashSet::new();
    let mut seen_vars: HashSet<(String, usize)> = HashSet::new();
    for c in &all {
        match c.kind() {
            CXCursor_FunctionDecl | CXCursor_FunctionTemplate
                if c.is_definition() && has_attr(c, CXCursor_CUDAGlobalAttr) =>
            {
                let Some((path, a, _)) = c.extent_in() else {
                    continue;
                };
                if !srcs.user(&path, c) || !seen_kernels.insert((path.clone(), a)) {
                    continue;
                }
                let fsrc = srcs.get(&path).cloned().unwrap_or_default();
                match kernel_def(
                    &fsrc,
                    &path,
                    c,
                    &calls,
                    &reads_tid,
                    &kernel_usrs,
                    &arch_usrs,
                ) {
                    Ok(k) => {
                        kernel_cursors.push((path.clone(), *c));
                        for (at, text) in &k.name_edits {
                            edits.push(Edit {
                                file: path.clone(),
                                start: *at,
                                end: *at,
                                text: text.clone(),
                            });
                        }
                        kernels.push(k)
                    }
                    Err(e) => errors.push(e),
                }
            }
            CXCursor_CallExpr => {
                let ch = c.children();
                let Some(cfg) = ch.iter().find(|x| {
                    x.kind() == CXCursor_CallExpr
                        && x.referenced()
                            .is_some_and(|r| r.spelling() == "cudaConfigureCall")
                }) else {
                    continue;
                };
                let (Some((path, s, e)), Some((cpath, cs, ce))) =
                    (c.spelled_extent_in(), cfg.spelled_extent_in())
                else {
                    errors.push(format!(
                        "{file}:{}: error: a kernel launch (<<<...>>>) written inside a macro's definition: biren-cc rewrites launches written in the program's files",
                        c.line()
                    ));
                    continue;
                };
                if path != cpath || !srcs.user(&path, c) || !seen_launches.insert((path.clone(), s))
                {
                    continue;
                }
                let fsrc = srcs.get(&path).cloned().unwrap_or_default();
                if in_define(&fsrc, s) {
                    let line = c.extent_in().map_or(c.line() as usize, |(p, a, _)| {
                        srcs.get(&p).map_or(0, |t| line_of(t, a))
                    });
                    errors.push(format!(
                        "{file}:{line}: error: a kernel launch (<<<...>>>) written inside a macro's definition ({path}:{}): biren-cc rewrites launches written in the program's files",
                        line_of(&fsrc, s)
                    ));
                    continue;
                }
                if !(fsrc.get(cs..).is_some_and(|t| t.starts_with(b"<<<"))
                    && ce >= 3
                    && &fsrc[ce - 3..ce] == b">>>")
                {
                    // libclang places a launch that a macro's expansion produced at the macro's
                    // use, where the text is not the launch.
                    errors.push(format!(
                        "{path}:{}: error: a kernel launch (<<<...>>>) produced by a macro: biren-cc rewrites launches written in the program's files; write it out",
                        line_of(&fsrc, s)
                    ));
                    continue;
                }
                edits.push(Edit {
                    file: path.clone(),
                    start: s,
                    end: s,
                    text: format!(
                        "(biren_cuda::configure({}) ? (void)0 : ",
                        slice(&fsrc, cs + 3, ce - 3)
                    ),
                });
                edits.push(Edit {
                    file: path.clone(),
                    start: cs,
                    end: ce,
                    text: String::new(),
                });
                edits.push(Edit {
                    file: path,
                    start: e,
                    end: e,
                    text: ")".into(),
                });
            }
            CXCursor_VarDecl => {
                let Some((path, s, e)) = c.extent_in() else {
                    continue;
                };
                let shared = c
                    .children()
                    .iter()
                    .any(|a| a.kind() == CXCursor_AnnotateAttr && a.spelling() == "biren_shared");
                let sc = c.storage_extern();
                let symbol = (has_attr(c, CXCursor_CUDAConstantAttr)
                    || has_attr(c, CXCursor_CUDADeviceAttr))
                    && !sc
                    && file_scope(c.lexical_parent().kind());
                if !(symbol || shared && sc) {
                    continue;
                }
                if !srcs.user(&path, c) || !seen_vars.insert((path.clone(), s)) {
                    continue;
                }
                let fsrc = srcs.get(&path).cloned().unwrap_or_default();
                if shared && sc {
                    // extern __shared__ T a[]: the block's dynamic shared memory.
                    let elem = c.ty().element().spelling();
                    if file_scope(c.lexical_parent().kind()) {
                        errors.push(format!(
                            "{path}:{}: error: extern __shared__ at file scope: declare it in the kernel or device function that uses it",
                            line_of(&fsrc, s)
                        ));
                        continue;
                    }
                    edits.push(Edit {
                        file: path,
                        start: s,
                        end: e,
                        text: format!(
                            "{elem} *const {} = ({elem} *)birenSharedMemory()",
                            c.spelling()
                        ),
                    });
                } else {
                    // A device symbol: registered after its declaration's `;`.
                    let Some(semi) = next_semicolon(&fsrc, e) else {
                        continue;
                    };
                    let name = c.spelling();
                    edits.push(Edit {
                        file: path,
                        start: semi + 1,
                        end: semi + 1,
                        text: format!(
                            " static const birenError_t {name}_biren_symbol_ __attribute__((unused)) = birenRegisterSymbol((const void *)&{name}, sizeof({name}), \"{name}\");"
                        ),
                    });
                }
            }
            _ => {}
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }

    // A block group's size in kernels: one value for the block (inline::block_size_edits).
    for (path, c) in &kernel_cursors {
        if let Some(body) = c
            .children()
            .into_iter()
            .find(|b| b.kind() == CXCursor_CompoundStmt)
        {
            edits.extend(inline::block_size_edits(path, &body, |v| {
                v.ty().canonical().spelling().trim_start_matches("const ")
                    == "cooperative_groups::thread_block"
            }));
        }
    }

    // Helpers with barriers, inlined into the kernels that call them (inline.rs).
    let mut helpers = inline::barrier_functions(&all, &calls, &kernel_usrs);
    // The program's own device functions, not BIREN's (cooperative_groups.h's are the barriers).
    helpers.retain(|_, c| {
        has_attr(c, CXCursor_CUDADeviceAttr)
            && c.extent_in().is_some_and(|(p, _, _)| srcs.user(&p, c))
    });
    if !helpers.is_empty() {
        let mut inliner = inline::Inliner {
            callees: &helpers,
            edits: &edits,
            srcs: &mut srcs,
            n: 0,
            inlined: HashSet::new(),
            bodies: Vec::new(),
        };
        let mut more = Vec::new();
        for (i, (path, c)) in kernel_cursors.iter().enumerate() {
            let Some(body) = c
                .children()
                .into_iter()
                .find(|b| b.kind() == CXCursor_CompoundStmt)
            else {
                continue;
            };
            inliner.bodies.clear();
            more.extend(inliner.body_edits(path, &body, 0, &[]));
            if inliner.bodies.is_empty() {
                continue;
            }
            // The helpers' own reads of threadIdx are the kernel's now: the kernel reads it
            // through a callee only by a call left as a call.
            let reads = std::iter::once(body)
                .chain(inliner.bodies.iter().copied())
                .flat_map(|b| b.descendants())
                .filter(|d| d.kind() == CXCursor_CallExpr)
                .filter(|d| {
                    d.extent_in()
                        .is_none_or(|(f, a, _)| !inliner.inlined.contains(&(f, a)))
                })
                .filter_map(|d| d.referenced())
                .any(|r| {
                    let u = r.usr();
                    (reads_tid.contains(&u) || arch_usrs.contains(&u)) && !kernel_usrs.contains(&u)
                });
            kernels[i].reads_tid_in_callee = reads || arch_usrs.contains(&c.usr());
        }
        edits.extend(more);
    }

    // Kernels: edits inside each body are applied to the moved body.
    let edit_refs: Vec<&Edit> = edits.iter().collect();
    let mut kernel_edits: Vec<Edit> = Vec::new();
    for k in &kernels {
        let fsrc = srcs.get(&k.file).cloned().unwrap_or_default();
        let body = apply(&k.file, &fsrc, k.body_open, k.body_end, &edit_refs);
        let (before, stub_body, after) = kernel_text(k, &body, &fsrc, &k.file);
        kernel_edits.push(Edit {
            file: k.file.clone(),
            start: k.decl_start,
            end: k.decl_start,
            text: before,
        });
        kernel_edits.push(Edit {
            file: k.file.clone(),
            start: k.body_open,
            end: k.body_end,
            text: stub_body + &after,
        });
    }
    let in_body = |e: &Edit| {
        kernels
            .iter()
            .any(|k| k.file == e.file && e.start >= k.body_open && e.end <= k.body_end)
    };
    let mut all_edits: Vec<&Edit> = edits.iter().filter(|e| !in_body(e)).collect();
    all_edits.extend(kernel_edits.iter());
    let text = apply(file, src, 0, src.len(), &all_edits);
    let mut files: Vec<String> = all_edits
        .iter()
        .map(|e| e.file.clone())
        .filter(|f| f != file)
        .collect();
    files.sort();
    files.dedup();
    let mut others = Vec::new();
    for f in files {
        let fsrc = srcs.get(&f).cloned().unwrap_or_default();
        let t = apply(&f, &fsrc, 0, fsrc.len(), &all_edits);
        others.push((
            f.clone(),
            format!(
                "#line 1 \"{}\"\n{t}",
                f.replace('\\', "\\\\").replace('"', "\\\"")
            ),
        ));
    }
    Ok(Translated { text, others })
}

/// True when offset `at` is on a `#define` line (the body of a macro).
fn in_define(src: &[u8], at: usize) -> bool {
    let start = src[..at.min(src.len())]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let line = String::from_utf8_lossy(&src[start..at.min(src.len())]);
    let t = line.trim_start();
    t.strip_prefix('#')
        .is_some_and(|r| r.trim_start().starts_with("define"))
}

/// Where `extern "C"` (or `"C++"`) before offset `at` starts, else `at`.
fn linkage_start(src: &[u8], at: usize) -> usize {
    let mut i = at;
    while i > 0 && src[i - 1].is_ascii_whitespace() {
        i -= 1;
    }
    let lit = if src[..i].ends_with(b"\"C\"") {
        3
    } else if src[..i].ends_with(b"\"C++\"") {
        5
    } else {
        return at;
    };
    let mut j = i - lit;
    while j > 0 && src[j - 1].is_ascii_whitespace() {
        j -= 1;
    }
    if src[..j].ends_with(b"extern")
        && (j == 6 || !(src[j - 7].is_ascii_alphanumeric() || src[j - 7] == b'_'))
    {
        j - 6
    } else {
        at
    }
}

/// The `;` that ends a declaration whose declarator ends at `from` (skipping the rest of a
/// declaration list at the top level).
fn next_semicolon(src: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut i = from;
    while i < src.len() {
        match src[i] {
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => depth -= 1,
            b';' if depth <= 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

fn kernel_def(
    src: &[u8],
    path: &str,
    f: &Cursor,
    calls: &HashMap<String, Vec<String>>,
    reads_tid: &HashSet<String>,
    kernels: &HashSet<String>,
    arch: &HashSet<String>,
) -> Result<KernelDef, String> {
    let file_line = f.line();
    let children = f.children();
    let body = children
        .iter()
        .find(|c| c.kind() == CXCursor_CompoundStmt)
        .ok_or_else(|| {
            format!("{path}:{file_line}: error: a kernel without a body biren-cc can read")
        })?;
    let Some((_, open, end)) = body.extent_in() else {
        return Err(format!(
            "{path}:{file_line}: error: a kernel whose body comes from a macro"
        ));
    };
    let (tpl_head, tpl_args) = if f.kind() == CXCursor_FunctionTemplate {
        clang::template_of(src, f).ok_or_else(|| {
            format!("{path}:{file_line}: error: a kernel template biren-cc cannot read")
        })?
    } else {
        (String::new(), String::new())
    };
    let mut decl_start = f
        .extent_in()
        .map(|x| x.1)
        .ok_or_else(|| format!("{path}:{file_line}: error: a kernel declared by a macro"))?;
    // `extern "C" __global__ void k(...)`: forward declarations go before `extern "C"`, which
    // libclang leaves out of the function's extent (C++'s linkage-specification tokens).
    decl_start = linkage_start(src, decl_start);
    let mut params = Vec::new();
    let mut names = Vec::new();
    let mut name_edits = Vec::new();
    let mut copies = String::new();
    for (i, p) in children
        .iter()
        .filter(|c| c.kind() == CXCursor_ParmDecl)
        .enumerate()
    {
        let Some((_, a, b)) = p.extent_in() else {
            return Err(format!(
                "{path}:{file_line}: error: a kernel parameter written by a macro"
            ));
        };
        let mut text = slice(src, a, b);
        let mut name = p.spelling();
        if name.is_empty() {
            name = format!("biren_unnamed{i}_");
            text = format!("{text} {name}");
            name_edits.push((b, format!(" {name}")));
        }
        // A default argument stays with the stub's declaration only.
        if let Some(eq) = text.find('=') {
            text.truncate(eq);
        }
        // A parameter the body changes (`d_Src += offset` with the thread's offset) is each
        // thread's own variable in CUDA: the per-thread function takes it under another name
        // and the body starts with a local copy, which the second stage keeps per thread as
        // any local (a parameter it must take for one value of the block).
        if changes(src, path, body, p, &name) {
            if let Some(at) = last_word(&text, &name) {
                let renamed = format!("{name}_biren_in_");
                text.replace_range(at..at + name.len(), &renamed);
                copies.push_str(&format!(" decltype({renamed}) {name} = {renamed};"));
            }
        }
        params.push(text.trim().to_string());
        names.push(name);
    }
    let usr = f.usr();
    let reads = calls.get(&usr).is_some_and(|cs| {
        cs.iter()
            .any(|c| reads_tid.contains(c) && !kernels.contains(c))
    });
    Ok(KernelDef {
        name: f.spelling(),
        file: path.to_string(),
        decl_start,
        body_open: open,
        body_end: end,
        tpl_head,
        tpl_args,
        params,
        param_names: names,
        reads_tid_in_callee: reads || arch.contains(&usr),
        param_copies: copies,
        name_edits,
    })
}

/// The text for kernel `k`: what goes before its declaration, its stub's body (replacing its
/// own) and what follows it (the body as the per-thread function, the entries, the
/// registration).
fn kernel_text(k: &KernelDef, body: &str, src: &[u8], file: &str) -> (String, String, String) {
    let name = &k.name;
    let tpl = if k.tpl_head.is_empty() {
        String::new()
    } else {
        format!("{} ", k.tpl_head)
    };
    let targs = &k.tpl_args;
    let n = k.params.len();
    let reg = format!("{name}_biren_reg_{targs}");
    // The kernel's unnamed parameters got names: the stub's declaration keeps the user's text,
    // so the stub's body reaches its arguments by those names only where they were written.
    let before = format!(
        "{tpl}struct {name}_biren_reg_ {{ static const birenError_t r; }};{}",
        line_directive(src, k.decl_start, file)
    );
    let self_ptr = format!("reinterpret_cast<const void *>(&{name}{targs})");
    let stub_body = if n == 0 {
        format!("{{ (void)&{reg}::r; biren_cuda::launch_stub({self_ptr}, (void **)0, (const size_t *)0, 0); }}")
    } else {
        let ptrs: Vec<String> = k
            .param_names
            .iter()
            .map(|p| format!("(void *)&{p}"))
            .collect();
        let sizes: Vec<String> = k
            .param_names
            .iter()
            .map(|p| format!("sizeof({p})"))
            .collect();
        format!(
            "{{ (void)&{reg}::r; void *biren_p_[] = {{{}}}; const size_t biren_z_[] = {{{}}}; biren_cuda::launch_stub({self_ptr}, biren_p_, biren_z_, {n}); }}",
            ptrs.join(", "),
            sizes.join(", ")
        )
    };
    // The copies go on the body's first line, after its brace: the user's lines keep their
    // numbers.
    let body = match body.strip_prefix('{') {
        Some(rest) if !k.param_copies.is_empty() => format!("{{{}{rest}", k.param_copies),
        _ => body.to_string(),
    };
    let thread_params = if n == 0 {
        "BIREN_KERNEL_DIMS_DECL_".to_string()
    } else {
        format!("{}, BIREN_KERNEL_DIMS_DECL_", k.params.join(", "))
    };
    // The second stage puts kernels with barriers in region form, not templates (it reads
    // plain functions); `_biren_fthread_` tells it the callees read threadIdx from the context.
    let thread = if k.reads_tid_in_callee {
        format!("{name}_biren_fthread_")
    } else {
        format!("{name}_biren_thread_")
    };
    let sig = format!("biren_cuda::stub_sig<decltype(&{name}{targs})>");
    let mut decls = String::new();
    let mut names = Vec::new();
    for i in 0..n {
        decls.push_str(&format!(
            "typename {sig}::template arg<{i}> biren_a{i}_ = *(typename {sig}::template arg<{i}> *)biren_args_[{i}]; "
        ));
        names.push(format!("biren_a{i}_"));
    }
    let arg_list = |tail: &str| -> String {
        if names.is_empty() {
            tail.to_string()
        } else {
            format!("{}, {tail}", names.join(", "))
        }
    };
    // One parenthesised expression: the template's arguments hold commas.
    let store = if k.reads_tid_in_callee {
        "biren_ctx_->threadIdx = biren_l_.tid, "
    } else {
        ""
    };
    let call_loop = format!(
        "({store}{thread}{targs}({}))",
        arg_list("biren_l_.tid, biren_bi_, biren_bd_, biren_gd_, &biren_l_")
    );
    let sizes: Vec<String> = (0..n)
        .map(|i| format!("sizeof(typename {sig}::template arg<{i}>)"))
        .collect();
    let sizes_arr = if n == 0 {
        "(const size_t *)0".to_string()
    } else {
        "biren_z_".to_string()
    };
    let sizes_decl = if n == 0 {
        String::new()
    } else {
        format!(
            "static const size_t biren_z_[] = {{{}}}; ",
            sizes.join(", ")
        )
    };
    let name_expr = if k.tpl_head.is_empty() {
        format!("\"{name}\"")
    } else {
        format!("biren_cuda::kernel_name(\"{name}\", {name}_biren_name_{targs}())")
    };
    let name_fn = if k.tpl_head.is_empty() {
        String::new()
    } else {
        format!("{tpl}static const char *{name}_biren_name_() {{ return __PRETTY_FUNCTION__; }}\n")
    };
    let after = format!(
        "\n#define __CUDA_ARCH__ {CUDA_ARCH}\n{tpl}static inline __attribute__((always_inline)) void {thread}({thread_params}){}{body}\n#undef __CUDA_ARCH__\n\
{tpl}void {name}_biren_entry_(void **biren_args_) {{ {decls}const birenKernelCtx *biren_c_ = birenKernelCtxFast(); (void)biren_args_; {thread}{targs}({}); }}\n\
{tpl}static BIREN_ENTRY_ void {name}_biren_block_(birenKernelCtx *biren_ctx_, void **biren_args_, unsigned biren_first_, unsigned biren_end_) {{ {decls}(void)biren_args_; BIREN_KERNEL_LOOP_({call_loop}) }}\n\
{tpl}static BIREN_ENTRY_ unsigned {name}_biren_blocks_(birenKernelCtx *biren_ctx_, void **biren_args_, unsigned biren_count_) {{ {decls}(void)biren_args_; BIREN_KERNEL_RANGE_({call_loop}) }}\n\
{name_fn}{tpl}const birenError_t {reg}::r = [] {{ {sizes_decl}return birenKernelRegisterStub({self_ptr}, {name}_biren_entry_{targs}, {name_expr}, {n}, {sizes_arr}, {name}_biren_block_{targs}, {name}_biren_blocks_{targs}); }}();{}",
        line_directive(src, k.body_open, file),
        arg_list("biren_c_->threadIdx, biren_c_->blockIdx, biren_c_->blockDim, biren_c_->gridDim, (birenKernelLoop *)0"),
        line_directive(src, k.body_end, file),
    );
    (before, stub_body, after)
}
