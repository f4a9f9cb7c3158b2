//! Inlining device functions that hold barriers into the kernels that call them, as MCUDA does
//! before splitting a kernel at its barriers: region form cannot split a call, so a kernel
//! whose `__syncthreads()` sits in a helper (`reduceInShared(v)`, `scan1Exclusive(...)`) would
//! keep the fiber form.
//!
//! A call is inlined where it is one statement's only such call, evaluated unconditionally
//! (not under `?:`, `&&`, `||`): the statement gets, before it, the callee's body in a block
//! of its own, parameters bound to the arguments' values, locals renamed apart, the final
//! `return E;` storing E in a result variable the statement then reads in place of the call.
//! Callees whose `return` is anywhere but their last statement, that take arrays, or that are
//! templates or methods are left as calls (the second stage then reports them).

// libclang's cursor kinds keep their C names.
#![allow(non_upper_case_globals)]

use crate::clang::Cursor;
use crate::cuda::{apply, last_word, line_directive, Edit, Sources};
use clang_sys::*;
use std::collections::{HashMap, HashSet};

/// How deep helpers that call helpers are inlined.
const MAX_DEPTH: usize = 8;

/// Device functions with a barrier (directly or through calls), by USR: the ones worth inlining.
pub fn barrier_functions(
    all: &[Cursor],
    calls: &HashMap<String, Vec<String>>,
    kernels: &HashSet<String>,
) -> HashMap<String, Cursor> {
    let is_sync = |usr: &str| {
        usr == "c:@F@birenSyncThreadsLoop"
            || (usr.starts_with("c:@N@cooperative_groups@")
                && (usr.contains("@F@sync#") || usr.starts_with("c:@N@cooperative_groups@F@sync")))
    };
    let mut with: HashSet<String> = calls
        .iter()
        .filter(|(_, cs)| cs.iter().any(|c| is_sync(c)))
        .map(|(f, _)| f.clone())
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for (f, cs) in calls {
            if !with.contains(f) && cs.iter().any(|c| with.contains(c) && !kernels.contains(c)) {
                with.insert(f.clone());
                changed = true;
            }
        }
    }
    all.iter()
        .filter(|c| {
            c.kind() == CXCursor_FunctionDecl
                && c.is_definition()
                && !kernels.contains(&c.usr())
                && with.contains(&c.usr())
        })
        .map(|c| (c.usr(), *c))
        .collect()
}

pub struct Inliner<'a> {
    pub callees: &'a HashMap<String, Cursor>,
    pub edits: &'a [Edit],
    pub srcs: &'a mut Sources,
    /// Names given so far (result variables, renamed locals).
    pub n: usize,
    /// The calls inlined (file, offset of the call) and the helpers' bodies now in a kernel.
    pub inlined: HashSet<(String, usize)>,
    pub bodies: Vec<Cursor>,
}

impl Inliner<'_> {
    /// Edits of `body` (a function's body in `file`) that inline its helpers' calls.
    /// `renames`: the edits already made to the body's names (an inlined helper's locals),
    /// which the arguments of the calls inlined here are read with.
    pub fn body_edits(
        &mut self,
        file: &str,
        body: &Cursor,
        depth: usize,
        renames: &[Edit],
    ) -> Vec<Edit> {
        let mut out = Vec::new();
        if depth > MAX_DEPTH {
            return out;
        }
        let Some(src) = self.srcs.get(file).cloned() else {
            return out;
        };
        let compounds = std::iter::once(*body)
            .chain(body.descendants())
            .filter(|c| c.kind() == CXCursor_CompoundStmt);
        for compound in compounds {
            for s in compound.children() {
                if let Some(mut e) = self.statement(file, &src, &s, depth, renames) {
                    out.append(&mut e);
                }
            }
        }
        out
    }

    /// The edits that inline the one helper call of statement `s`, if it has one that can be.
    fn statement(
        &mut self,
        file: &str,
        src: &[u8],
        s: &Cursor,
        depth: usize,
        renames: &[Edit],
    ) -> Option<Vec<Edit>> {
        let k = s.kind();
        if !((100..200).contains(&k) || k == CXCursor_DeclStmt || k == CXCursor_ReturnStmt) {
            return None;
        }
        let mut found = Vec::new();
        self.unconditional_calls(s, false, &mut found);
        let [(call, conditional)] = found.as_slice() else {
            return None;
        };
        if *conditional {
            return None;
        }
        let callee = *self.callees.get(&call.referenced()?.usr())?;
        let (cfile, sa, _) = s.extent_in()?;
        let (_, ca, cb) = call.extent_in()?;
        if cfile != file {
            return None;
        }
        let args: Vec<Cursor> = call.children().into_iter().skip(1).collect();
        let mut arg_text = Vec::new();
        for a in &args {
            let (f, x, y) = a.extent_in()?;
            if f != file {
                return None;
            }
            let mut with: Vec<&Edit> = self.edits.iter().collect();
            with.extend(renames.iter());
            // A variable's own type, under any conversion to the parameter's (a thread_block
            // passed as a thread_group goes through its conversion operator).
            let text = apply(file, src, x, y, &with);
            let ty = std::iter::once(*a)
                .chain(a.descendants())
                .find(|d| d.kind() == CXCursor_DeclRefExpr && d.spelling() == text.trim())
                .unwrap_or(*a)
                .ty()
                .canonical()
                .spelling();
            arg_text.push((text, ty));
        }
        let ret = callee.result_type();
        let void = ret.spelling() == "void";
        // A void helper's call is its statement.
        if void && !call.same(s) {
            return None;
        }
        let r = format!("biren_r{}_", self.n);
        self.n += 1;
        let inner =
            self.inline_body(&callee, &arg_text, (!void).then_some(r.as_str()), depth + 1)?;
        self.inlined.insert((file.to_string(), ca));
        let decl = if void {
            String::new()
        } else {
            format!("{} {r}; ", ret.canonical().spelling())
        };
        Some(vec![
            Edit {
                file: file.to_string(),
                start: sa,
                end: sa,
                text: format!("{decl}{{{inner}}}{}", line_directive(src, sa, file)),
            },
            Edit {
                file: file.to_string(),
                start: ca,
                end: cb,
                text: if void { "(void)0".into() } else { r },
            },
        ])
    }

    /// Calls of helpers in `e`, each with whether it is evaluated only under a condition.
    fn unconditional_calls(&mut self, e: &Cursor, under: bool, out: &mut Vec<(Cursor, bool)>) {
        if e.kind() == CXCursor_CallExpr
            && e.referenced()
                .is_some_and(|r| self.callees.contains_key(&r.usr()))
        {
            out.push((*e, under));
        }
        let cond = match e.kind() {
            CXCursor_ConditionalOperator => true,
            CXCursor_BinaryOperator => self.logical(e),
            _ => false,
        };
        for (i, c) in e.children().iter().enumerate() {
            // The condition of ?: and the left of && / || are evaluated always.
            self.unconditional_calls(c, under || (cond && i > 0), out);
        }
    }

    /// A binary `&&` or `||`: the text between its operands.
    fn logical(&mut self, e: &Cursor) -> bool {
        let ch = e.children();
        let [l, r] = ch.as_slice() else { return true };
        let (Some((f, _, le)), Some((_, rs, _))) = (l.extent_in(), r.extent_in()) else {
            return true;
        };
        let Some(src) = self.srcs.get(&f) else {
            return true;
        };
        let between = &src[le.min(rs).min(src.len())..rs.min(src.len())];
        between.windows(2).any(|w| w == b"&&" || w == b"||")
    }

    /// The body of `callee` as statements of its caller: parameters bound to `args` (text and
    /// type), locals renamed, the last `return E;` storing E in `result`.
    fn inline_body(
        &mut self,
        callee: &Cursor,
        args: &[(String, String)],
        result: Option<&str>,
        depth: usize,
    ) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (file, _, _) = callee.extent_in()?;
        let src = self.srcs.get(&file).cloned()?;
        let children = callee.children();
        let body = children
            .iter()
            .find(|c| c.kind() == CXCursor_CompoundStmt)?;
        let params: Vec<Cursor> = children
            .iter()
            .filter(|c| c.kind() == CXCursor_ParmDecl)
            .copied()
            .collect();
        if params.len() != args.len()
            || params.iter().any(|p| {
                matches!(
                    p.ty().kind(),
                    CXType_ConstantArray | CXType_IncompleteArray | CXType_VariableArray
                )
            })
        {
            return None;
        }
        let (_, open, close_end) = body.extent_in()?;
        // One return at most, the body's last statement.
        let stmts = body.children();
        let returns: Vec<Cursor> = body
            .descendants()
            .into_iter()
            .filter(|d| d.kind() == CXCursor_ReturnStmt)
            .collect();
        let last_is_return = stmts
            .last()
            .is_some_and(|l| l.kind() == CXCursor_ReturnStmt);
        if returns.len() > 1 || (returns.len() == 1 && !last_is_return) {
            return None;
        }
        if result.is_some() && returns.is_empty() {
            return None;
        }
        let tag = self.n;
        self.n += 1;
        let rename = |name: &str| format!("{name}_biren_i{tag}_");
        let mut locals: Vec<Cursor> = params.clone();
        locals.extend(
            body.descendants()
                .into_iter()
                .filter(|d| d.kind() == CXCursor_VarDecl),
        );
        let mut edits: Vec<Edit> = Vec::new();
        for v in &locals {
            if v.kind() == CXCursor_VarDecl {
                let (f, at) = v.location_in()?;
                if f != file {
                    return None;
                }
                edits.push(Edit {
                    file: file.clone(),
                    start: at,
                    end: at + v.spelling().len(),
                    text: rename(&v.spelling()),
                });
            }
        }
        for d in body.descendants() {
            if d.kind() != CXCursor_DeclRefExpr {
                continue;
            }
            let Some(r) = d.referenced() else { continue };
            if !locals.iter().any(|l| l.same(&r)) {
                continue;
            }
            let (f, at) = d.location_in()?;
            if f != file || src.get(at..at + r.spelling().len()) != Some(r.spelling().as_bytes()) {
                return None;
            }
            edits.push(Edit {
                file: file.clone(),
                start: at,
                end: at + r.spelling().len(),
                text: rename(&r.spelling()),
            });
        }
        if let Some(ret) = returns.first() {
            let (_, a, _) = ret.extent_in()?;
            if !src[a..].starts_with(b"return") {
                return None;
            }
            edits.push(Edit {
                file: file.clone(),
                start: a,
                end: a + 6,
                text: match result {
                    Some(r) => format!("{r} ="),
                    None => String::new(),
                },
            });
        }
        let inlined = self.body_edits(&file, body, depth, &edits);
        edits.extend(inlined);
        // The block's size through a group parameter that is the block.
        let block_params: Vec<Cursor> = params
            .iter()
            .zip(args)
            .filter(|(p, (_, t))| {
                is_group(p, "thread_block")
                    || (is_group(p, "thread_group") && t.trim_start_matches("const ") == BLOCK)
            })
            .map(|(p, _)| *p)
            .collect();
        let sizes = block_size_edits(&file, body, |v| {
            block_params.iter().any(|p| p.same(v)) || is_group(v, "thread_block")
        });
        // They replace the whole call, renamed group included.
        edits.retain(|e| !sizes.iter().any(|z| e.start >= z.start && e.end <= z.end));
        edits.extend(sizes);
        // The first stage's own edits of this range, under the ones made here.
        for e in self.edits {
            if e.file == file && e.start > open && e.end < close_end - 1 {
                edits.push(e.clone());
            }
        }
        let refs: Vec<&Edit> = edits.iter().collect();
        let text = apply(&file, &src, open + 1, close_end - 1, &refs);
        self.bodies.push(*body);
        let mut binds = String::new();
        for (p, (arg, arg_ty)) in params.iter().zip(args) {
            let (_, a, b) = p.extent_in()?;
            let mut decl = String::from_utf8_lossy(&src[a..b]).into_owned();
            if let Some(eq) = decl.find('=') {
                decl.truncate(eq);
            }
            let name = p.spelling();
            if name.is_empty() {
                binds.push_str(&format!(" (void)({arg});"));
                continue;
            }
            let new = rename(&name);
            // The generic group of a helper called with the block: the block's own type, so a
            // barrier on it is the block's (cg's thread_group erases it).
            if is_group(p, "thread_group") && arg_ty.trim_start_matches("const ") == BLOCK {
                binds.push_str(&format!(
                    " cooperative_groups::thread_block {new} = ({arg});"
                ));
                continue;
            }
            let at = last_word(&decl, &name)?;
            decl.replace_range(at..at + name.len(), &new);
            binds.push_str(&format!(" {} = ({arg});", decl.trim()));
        }
        Some(format!(
            "{binds}{}{text}\n",
            line_directive(&src, open + 1, &file)
        ))
    }
}

const BLOCK: &str = "cooperative_groups::thread_block";

/// `v` is declared as cooperative_groups' `name` (`thread_block`, `thread_group`).
fn is_group(v: &Cursor, name: &str) -> bool {
    let t = v.ty().canonical().spelling();
    t.trim_start_matches("const ")
        .trim_end_matches(" &")
        .trim_end_matches('&')
        .trim()
        == format!("cooperative_groups::{name}")
}

/// `g.size()` and `g.num_threads()` of a group `g` that is the block (`is_block`), in `body`:
/// the block's thread count over `blockDim`, which region form knows to be one value for the
/// block (a loop `for (k = cta.size() / 2; ...)` with a barrier stays a loop of the block).
pub fn block_size_edits(
    file: &str,
    body: &Cursor,
    is_block: impl Fn(&Cursor) -> bool,
) -> Vec<Edit> {
    let mut out = Vec::new();
    for d in body.descendants() {
        if d.kind() != CXCursor_CallExpr || !matches!(d.spelling().as_str(), "size" | "num_threads")
        {
            continue;
        }
        let ch = d.children();
        let [m] = ch.as_slice() else { continue };
        if m.kind() != CXCursor_MemberRefExpr {
            continue;
        }
        // The object: a variable (under implicit casts).
        let refs: Vec<Cursor> = m
            .descendants()
            .into_iter()
            .filter(|c| !matches!(c.kind(), CXCursor_UnexposedExpr | CXCursor_ParenExpr))
            .collect();
        let [o] = refs.as_slice() else { continue };
        if o.kind() != CXCursor_DeclRefExpr || !o.referenced().is_some_and(|v| is_block(&v)) {
            continue;
        }
        let Some((f, a, b)) = d.extent_in() else {
            continue;
        };
        if f != file {
            continue;
        }
        out.push(Edit {
            file: file.to_string(),
            start: a,
            end: b,
            text: "((unsigned long long)(blockDim.x * blockDim.y * blockDim.z))".into(),
        });
    }
    out
}
