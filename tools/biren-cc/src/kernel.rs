//! Reading a `BIREN_KERNEL` body: where its barriers are, what runs between them, which
//! variables live across them; the region plan (`Piece`s) or the reason to keep fibers.
//!
//! The plan follows MCUDA's loop fission: a barrier-free run of statements becomes one loop
//! over the block's threads (a region); a barrier ends a region; a compound statement, `if`,
//! `for`, `while` or `do` that holds a barrier stays a statement of the block, its condition
//! evaluated once for the block (checked equal across threads at run time unless it is
//! uniform by construction) and its body planned the same way. A local variable used in more
//! than one region is kept per thread (MCUDA's variable expansion).

// libclang's cursor and type kinds keep their C names.
#![allow(non_upper_case_globals)]

use crate::clang::{Cursor, Pos};
use crate::text;
use clang_sys::*;
use std::collections::{HashMap, HashSet};

/// Why a kernel keeps its fiber form, and where.
#[derive(Debug)]
pub struct Fallback {
    pub reason: String,
    pub offset: usize,
}

/// A piece of a planned body.
#[derive(Debug)]
pub enum Piece {
    /// Statements with no barrier: `text[start..end]`, one loop over the block's threads.
    Run { start: usize, end: usize },
    /// A barrier statement (at `offset`); `warp`: `birenSyncWarp` (a barrier of the block in
    /// region form, a stronger order than the warp's; threads that returned before it are no
    /// error, as CUDA's partial-warp rule has it).
    Barrier { offset: usize, warp: bool },
    /// A statement `text[stmt]` holding one warp shuffle of value `text[val]` and width
    /// `width` (None: 32): a region that stores each thread's value in shuffle store `n`, then
    /// the statement with the shuffle replaced by a read of the source lane's (an edit). A
    /// vote (`vote`: ballot, any, all) stores `val != 0` and the statement reads its warp's
    /// result (`birenRegionVote_`).
    Shuffle {
        stmt: Span,
        val: Span,
        width: Option<Span>,
        n: usize,
        vote: bool,
    },
    /// `{ ... }` holding a barrier.
    Scope(Vec<Piece>),
    /// `if (cond) then else els` holding a barrier.
    If {
        cond: Span,
        then: Vec<Piece>,
        els: Option<Vec<Piece>>,
        check: bool,
        at: usize,
    },
    /// A loop holding a barrier: `for (init; cond; inc)`, `while (cond)`, `do ... while (cond)`.
    Loop {
        kind: LoopKind,
        init: Option<Span>,
        cond: Option<Span>,
        inc: Option<Span>,
        body: Vec<Piece>,
        check: bool,
        at: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopKind {
    For,
    While,
    Do,
}

/// A span of the source text.
pub type Span = (usize, usize);

/// A local variable kept per thread between regions.
#[derive(Debug, Clone)]
pub struct Expanded {
    pub name: String,
    /// Its type for a declaration (`__typeof__(...)`), top-level const removed.
    pub ty: String,
    /// An array: copied in and out whole (it cannot be assigned).
    pub is_array: bool,
    /// Every thread holds the same value (see `Analysis::uniform_kept`): kept once for the
    /// block, not per thread.
    pub uniform: bool,
}

/// A variable recomputed where it is used (see `Plan::remat`).
#[derive(Debug, Clone)]
pub struct Remat {
    pub name: String,
    pub ty: String,
    /// Its initializer's text.
    pub init: Span,
    /// Where it is declared (its name).
    pub decl: usize,
    /// Its value does not depend on the thread (no threadIdx, directly or through another):
    /// computed once per block, before the regions.
    pub uniform: bool,
}

/// See `Plan::guards`.
#[derive(Debug, Clone, Copy)]
pub struct Guard {
    pub cond: Span,
    /// The guarded statement (the `if`'s body).
    pub body: usize,
}

/// See `Plan::splits`.
#[derive(Debug, Clone, Copy)]
pub struct Split {
    /// The condition `x < E` (or `x >= E`, ...) of an `if` in the region.
    pub cond: Span,
    /// The threads that pass are a prefix of each row (`x < E`), else a suffix (`x >= E`).
    pub prefix: bool,
}

/// A text edit inside a region.
#[derive(Debug, Clone)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub with: EditKind,
}

#[derive(Debug, Clone)]
pub enum EditKind {
    /// Replace by this text.
    Text(String),
    /// A `return` of a thread: the region's exit for a thread that returned.
    Return,
}

/// The plan of one kernel in region form.
#[derive(Debug)]
pub struct Plan {
    pub pieces: Vec<Piece>,
    pub expanded: Vec<Expanded>,
    /// Per region (by start offset), the expanded variables it uses, and whether it may
    /// change them (then it stores them back).
    pub uses: HashMap<usize, Vec<(usize, bool)>>,
    /// Variables recomputed in each region that uses them instead of kept: declared once
    /// from the thread's and block's indices and the parameters, never changed (`t =
    /// threadIdx.x`). In declaration order.
    pub remat: Vec<Remat>,
    /// C89 loop counters declared once for the block (see `Var::counter`): name and type.
    pub counters: Vec<(String, String)>,
    /// Per region or checked condition (by start offset), the recomputed variables it needs
    /// declared (in order; those it declares itself left out).
    pub remat_uses: HashMap<usize, Vec<usize>>,
    /// Regions that are one `if (x < E) ...` on the thread's x index and a uniform bound: by
    /// region start, the condition and where its statement starts. Only threads whose x
    /// passes run (a prefix of each row, found by bisection).
    pub guards: HashMap<usize, Guard>,
    /// Regions (by start) holding an `if` on `x < E` or `x >= E` (the thread's x index, a
    /// uniform bound) among other statements: run as two thread loops, over the threads of
    /// each row that fail and those that pass (found by bisection), the condition written as
    /// the constant it is in each; the loops then hold no branch on it and vectorise.
    pub splits: HashMap<usize, Split>,
    /// Per region (by start), kept variables it reads but does not change whose value there
    /// is known as an expression of the thread's and block's indices and the parameters (the
    /// one assignment that reaches it: `x = blockIdx.x * 32 + threadIdx.x;`): recomputed there
    /// instead of loaded, so that the compiler sees it affine in the thread loop's counter.
    pub known: HashMap<usize, Vec<(usize, Span)>>,
    /// Per checked condition (by start offset), the expanded variables it uses.
    pub cond_uses: HashMap<usize, Vec<usize>>,
    /// Declarations moved to the function's top (statics, shared arrays, types).
    pub hoisted: Vec<Span>,
    pub edits: Vec<Edit>,
    /// Some thread may return before a later barrier (a `return` in a region).
    pub returns: bool,
    /// The body uses the loop pointer (birenThreadIdx(), birenTrap()).
    pub uses_loop: bool,
    pub regions: usize,
    /// Per shuffle store, the value's type.
    pub shuffles: Vec<String>,
    /// Atomics on the block's shared memory made plain read-modify-writes (see
    /// `Analysis::shared_atomics`): where each call's name is. A region holding one is no
    /// `ivdep` loop (two threads may update the same element).
    pub block_atomics: Vec<usize>,
}

/// A kernel found in the unit.
pub struct Kernel {
    pub name: String,
    /// Where BIREN_KERNEL is written (its line) and the body's braces.
    pub line: u32,
    pub open: usize,
    pub close: usize,
    /// The kernel's parameters: name and type.
    pub params: Vec<(String, String)>,
    pub has_barrier: bool,
    /// A CUDA kernel whose callees read threadIdx from the context (`_biren_fthread_`): each
    /// thread loop stores the thread's index there first.
    pub ctx_tid: bool,
    /// A CUDA kernel template: its region form is a template too, registered per instantiation.
    pub template: Option<Template>,
    pub plan: Result<Plan, Fallback>,
}

/// The template a kernel's per-thread function is (cuda.rs writes one per kernel template).
pub struct Template {
    /// `template <...>` as written.
    pub head: String,
    /// The arguments naming its parameters: `<T, N>`.
    pub args: String,
    /// Where `template` starts.
    pub start: usize,
}

const THREAD_SUFFIX: &str = "_biren_thread_";
/// The per-thread function of a CUDA kernel whose callees read threadIdx (cuda.rs).
const CTX_THREAD_SUFFIX: &str = "_biren_fthread_";

fn is_barrier_fn(name: &str) -> bool {
    matches!(name, "birenSyncThreadsLoop" | "birenSyncThreads")
}

/// A call that is a block barrier: BIREN's, or (CUDA sources) a cooperative group's for the
/// whole block, `cta.sync()` and `cg::sync(cta)` with `cta` a `cooperative_groups::thread_block`
/// (include/cuda/cooperative_groups.h: both are `birenSyncThreadsLoop` on the kernel's loop).
/// Other groups' `sync` (tiles, the grid, `thread_group`) are warp operations or grid syncs and
/// stay calls.
fn is_barrier_call(call: &Cursor) -> bool {
    let Some(f) = call.referenced() else {
        return false;
    };
    let n = f.spelling();
    if is_barrier_fn(&n) {
        return true;
    }
    if n != "sync" {
        return false;
    }
    let usr = f.usr();
    if usr.starts_with("c:@N@cooperative_groups@S@thread_block@F@sync#") {
        return true;
    }
    // cg::sync(g), a template over the group: a block barrier when the argument is the block.
    (usr.starts_with("c:@N@cooperative_groups@F@sync")
        || usr.starts_with("c:@N@cooperative_groups@FT@"))
        && call.children().last().is_some_and(|a| {
            let t = a.ty().canonical().spelling();
            t.trim_start_matches("const ") == "cooperative_groups::thread_block"
        })
}

/// A warp shuffle (birenShfl*Sync*): region form runs it as two regions, one that stores every
/// thread's value, one that reads the source lane's (`Piece::Shuffle`).
fn is_shfl_fn(name: &str) -> bool {
    name.starts_with("birenShfl")
}

fn is_warp_fn(name: &str) -> bool {
    [
        "birenShfl",
        "birenWarp",
        "birenBallot",
        "birenAny",
        "birenAll",
        "birenActiveMask",
        "birenMatch",
        "birenReduce",
        "birenSyncWarp",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

fn is_grid_fn(name: &str) -> bool {
    name.starts_with("birenGridSync")
}

/// A name with one value for the whole program: an enumerator, or (kernel templates) a
/// non-type template parameter, a constant of each instantiation.
fn is_constant(r: &Cursor) -> bool {
    matches!(
        r.kind(),
        CXCursor_EnumConstantDecl | CXCursor_NonTypeTemplateParameter
    )
}

/// The operator of a unary, binary or compound-assignment expression, as written. libclang 14
/// places such an expression at its start, not at its operator, so the operator is read from
/// the text: a binary one just before its right operand, a unary one at its start (prefix) or
/// at its end (postfix). Empty when the text is not the file's (a macro's).
fn operator<'a>(src: &'a [u8], e: &Cursor) -> &'a [u8] {
    const OP: &[u8] = b"=<>!+-*/%&|^~";
    match e.kind() {
        CXCursor_BinaryOperator | CXCursor_CompoundAssignOperator => {
            let ch = e.children();
            let Some(Pos::Main(mut j)) = ch.get(1).map(|r| r.start()) else {
                return b"";
            };
            while j > 0 && src[j - 1].is_ascii_whitespace() {
                j -= 1;
            }
            let end = j;
            while j > 0 && OP.contains(&src[j - 1]) {
                j -= 1;
            }
            &src[j..end]
        }
        CXCursor_UnaryOperator => {
            let (Pos::Main(a), Pos::Main(b)) = (e.start(), e.end()) else {
                return b"";
            };
            let (a, b) = (a.min(src.len()), b.min(src.len()));
            if a < b && OP.contains(&src[a]) {
                let mut j = a;
                while j < b && OP.contains(&src[j]) && j - a < 2 {
                    j += 1;
                }
                &src[a..j]
            } else {
                let mut j = b;
                while j > a && OP.contains(&src[j - 1]) && b - j < 2 {
                    j -= 1;
                }
                &src[j..b]
            }
        }
        _ => b"",
    }
}

/// An operator that writes its operand: `=`, a compound assignment, `++`, `--`.
fn writes_operand(op: &[u8]) -> bool {
    op == b"++"
        || op == b"--"
        || (op.ends_with(b"=") && !matches!(op, b"==" | b"<=" | b">=" | b"!="))
}

fn is_stmt_kind(k: CXCursorKind) -> bool {
    (200..=299).contains(&k)
}

/// Per region, the kept variables it uses and whether it may change them.
type RegionUses = HashMap<usize, Vec<(usize, bool)>>;
/// Per checked condition, the kept variables it reads.
type CondUses = HashMap<usize, Vec<usize>>;

/// A member selected with '.' (dim3's `threadIdx.x`), not through a pointer: no memory read.
fn dot_member(src: &[u8], d: &Cursor) -> bool {
    let Pos::Main(e) = d.location() else {
        return false;
    };
    let mut j = e;
    while j > 0 && (src[j - 1] as char).is_ascii_whitespace() {
        j -= 1;
    }
    j > 0 && src[j - 1] == b'.'
}

/// Finds the BIREN_KERNEL kernels whose bodies are written in the main file.
pub fn find(root: &Cursor, src: &[u8]) -> Vec<Kernel> {
    let mut out = Vec::new();
    let by_name = functions_by_name(root);
    let mut stack = vec![*root];
    while let Some(c) = stack.pop() {
        for ch in c.children() {
            if std::env::var_os("BIREN_CC_DEBUG").is_some() && ch.in_main_file() {
                eprintln!(
                    "biren-cc debug: {} kind {} def {}",
                    ch.spelling(),
                    ch.kind(),
                    ch.is_definition()
                );
            }
            match ch.kind() {
                CXCursor_Namespace | CXCursor_LinkageSpec | CXCursor_UnexposedDecl
                    if ch.in_main_file() =>
                {
                    stack.push(ch)
                }
                CXCursor_FunctionDecl | CXCursor_FunctionTemplate
                    if ch.is_definition() && ch.in_main_file() =>
                {
                    let name = ch.spelling();
                    let template = if ch.kind() == CXCursor_FunctionTemplate {
                        let Some((head, args)) = crate::clang::template_of(src, &ch) else {
                            continue;
                        };
                        let Pos::Main(start) = ch.start() else {
                            continue;
                        };
                        Some(Template { head, args, start })
                    } else {
                        None
                    };
                    let (k, ctx_tid) = if let Some(k) = name.strip_suffix(THREAD_SUFFIX) {
                        (k, false)
                    } else if let Some(k) = name.strip_suffix(CTX_THREAD_SUFFIX) {
                        (k, true)
                    } else {
                        continue;
                    };
                    if let Some(mut kernel) = read_kernel(&ch, k, src, &by_name) {
                        kernel.ctx_tid = ctx_tid;
                        kernel.template = template;
                        out.push(kernel);
                    }
                }
                _ => {}
            }
        }
    }
    out.sort_by_key(|k| k.open);
    out
}

/// The function (and function template) definitions at namespace scope, by name.
fn functions_by_name(root: &Cursor) -> HashMap<String, Vec<Cursor>> {
    let mut out: HashMap<String, Vec<Cursor>> = HashMap::new();
    let mut stack = vec![*root];
    while let Some(c) = stack.pop() {
        for ch in c.children() {
            match ch.kind() {
                CXCursor_Namespace | CXCursor_LinkageSpec | CXCursor_UnexposedDecl => {
                    stack.push(ch)
                }
                CXCursor_FunctionDecl | CXCursor_FunctionTemplate if ch.is_definition() => {
                    out.entry(ch.spelling()).or_default().push(ch)
                }
                _ => {}
            }
        }
    }
    out
}

fn read_kernel(
    f: &Cursor,
    name: &str,
    src: &[u8],
    by_name: &HashMap<String, Vec<Cursor>>,
) -> Option<Kernel> {
    let children = f.children();
    let body = children
        .iter()
        .find(|c| c.kind() == CXCursor_CompoundStmt)?;
    let (Pos::Main(open), Pos::Main(close_end)) = (body.start(), body.end()) else {
        return None;
    };
    if close_end == 0 || src.get(open) != Some(&b'{') || src.get(close_end - 1) != Some(&b'}') {
        return None;
    }
    let params: Vec<(String, String)> = children
        .iter()
        .filter(|c| c.kind() == CXCursor_ParmDecl)
        .map(|c| (c.spelling(), c.ty().spelling()))
        .collect();
    // The header's thread function ends with threadIdx, blockIdx, blockDim, gridDim, biren_loop_.
    let nparams = params.len().checked_sub(5)?;
    let all_params: Vec<Cursor> = children
        .iter()
        .filter(|c| c.kind() == CXCursor_ParmDecl)
        .copied()
        .collect();
    let mut a = Analysis::new(src, body, &all_params, nparams);
    a.by_name = by_name.clone();
    // Any sync point, direct or in a function the body calls: without one the header's own
    // block entry is already a plain loop.
    let has_barrier = a.reaches_sync(body);
    let plan = if has_barrier {
        a.plan(body, open, close_end - 1)
    } else {
        Err(Fallback {
            reason: String::new(),
            offset: open,
        })
    };
    Some(Kernel {
        name: name.to_string(),
        line: f.line(),
        open,
        close: close_end - 1,
        params: params[..nparams].to_vec(),
        has_barrier,
        ctx_tid: false,
        template: None,
        plan,
    })
}

/// A variable declared in the body.
struct Var {
    cursor: Cursor,
    name: String,
    /// Declared by a statement of a region (not in a loop header, not static).
    in_region: bool,
    /// Declared in the header of a loop that holds a barrier: one value for the block.
    block_level: bool,
    /// Uses, by the offset of the identifier.
    uses: Vec<usize>,
    /// The start of the declaration statement that declares it (its declarators share it).
    stmt: Option<usize>,
    /// A C89 loop counter (`int k; ... for (k = 0; ...)`) only loop headers of the block
    /// change: declared once for the block instead (its initializer, if any, there too).
    counter: bool,
}

struct Analysis<'a> {
    src: &'a [u8],
    body: Cursor,
    /// The shuffle stores' types (`Piece::Shuffle::n`).
    shuffles: Vec<String>,
    /// The statements of each region (by its start).
    run_stmts: HashMap<usize, Vec<Cursor>>,
    /// The parameters: the kernel's, then threadIdx, blockIdx, blockDim, gridDim, biren_loop_.
    params: Vec<Cursor>,
    nparams: usize,
    vars: Vec<Var>,
    by_hash: HashMap<u32, Vec<usize>>,
    /// Regions so far: (start, end).
    regions: Vec<Span>,
    hoisted: Vec<Span>,
    edits: Vec<Edit>,
    returns: bool,
    checked_conds: Vec<Span>,
    /// Spans evaluated once for the block (loop init and increment).
    block_exprs: Vec<Span>,
    barrier_fns: HashMap<u32, bool>,
    /// The unit's function definitions by name: what a call a template leaves unresolved
    /// (`merge<sortDir>(...)`) may reach.
    by_name: HashMap<String, Vec<Cursor>>,
}

impl<'a> Analysis<'a> {
    fn new(src: &'a [u8], body: &Cursor, params: &[Cursor], nparams: usize) -> Analysis<'a> {
        let mut a = Analysis {
            src,
            body: *body,
            shuffles: Vec::new(),
            run_stmts: HashMap::new(),
            params: params.to_vec(),
            nparams,
            vars: Vec::new(),
            by_hash: HashMap::new(),
            regions: Vec::new(),
            hoisted: Vec::new(),
            edits: Vec::new(),
            returns: false,
            checked_conds: Vec::new(),
            block_exprs: Vec::new(),
            barrier_fns: HashMap::new(),
            by_name: HashMap::new(),
        };
        for c in body.descendants() {
            if c.kind() == CXCursor_VarDecl {
                let i = a.vars.len();
                a.vars.push(Var {
                    cursor: c,
                    name: c.spelling(),
                    in_region: false,
                    block_level: false,
                    uses: Vec::new(),
                    stmt: None,
                    counter: false,
                });
                a.by_hash.entry(c.hash()).or_default().push(i);
            }
        }
        a
    }

    fn var_of(&self, decl: &Cursor) -> Option<usize> {
        self.by_hash
            .get(&decl.hash())?
            .iter()
            .copied()
            .find(|&i| self.vars[i].cursor.same(decl))
    }

    /// The number of barrier calls below `c` (functions it calls included; see `calls_barrier`).
    fn barriers_in(&mut self, c: &Cursor) -> usize {
        c.descendants()
            .iter()
            .filter(|d| {
                d.kind() == CXCursor_CallExpr
                    && (is_barrier_call(d)
                        || d.referenced().is_some_and(|f| is_shfl_fn(&f.spelling()))
                        || self.warp_vote(d).is_some())
            })
            .count()
    }

    /// `birenSyncWarp` (0), `birenBallotSync` (5), `birenAnySync` (6), `birenAllSync` (7): the
    /// header's macros over birenWarpExchange, named where the call is written.
    fn warp_vote(&self, d: &Cursor) -> Option<u32> {
        let exchange = d
            .referenced()
            .is_some_and(|f| f.spelling() == "birenWarpExchange");
        if d.kind() != CXCursor_CallExpr || !exchange {
            return None;
        }
        let Pos::Main(at) = d.start() else {
            return None;
        };
        match text::ident_at(self.src, at) {
            "birenSyncWarp" => Some(0),
            "birenBallotSync" => Some(5),
            "birenAnySync" => Some(6),
            "birenAllSync" => Some(7),
            _ => None,
        }
    }

    fn shuffles_in(&self, c: &Cursor) -> usize {
        c.descendants()
            .iter()
            .filter(|d| {
                d.kind() == CXCursor_CallExpr
                    && (d.referenced().is_some_and(|f| is_shfl_fn(&f.spelling()))
                        || self.warp_vote(d).is_some_and(|op| op != 0))
            })
            .count()
    }

    fn reaches_sync(&mut self, body: &Cursor) -> bool {
        for d in body.descendants() {
            if d.kind() != CXCursor_CallExpr {
                continue;
            }
            let Some(f) = d.referenced() else {
                if self.unresolved_may_sync(&d, 0) {
                    return true;
                }
                continue;
            };
            let n = f.spelling();
            if is_barrier_call(&d) || is_warp_fn(&n) || is_grid_fn(&n) {
                return true;
            }
            if f.definition().is_some() && !n.starts_with("biren") && self.calls_sync(&f, 0) {
                return true;
            }
        }
        false
    }

    fn contains_barrier(&mut self, c: &Cursor) -> bool {
        if c.kind() == CXCursor_CallExpr
            && (is_barrier_call(c)
                || c.referenced().is_some_and(|f| is_shfl_fn(&f.spelling()))
                || self.warp_vote(c).is_some())
        {
            return true;
        }
        self.barriers_in(c) > 0
    }

    fn fail<T>(&self, reason: impl Into<String>, at: &Cursor) -> Result<T, Fallback> {
        let offset = match at.location() {
            Pos::Main(o) => o,
            Pos::Elsewhere => match at.start() {
                Pos::Main(o) => o,
                Pos::Elsewhere => 0,
            },
        };
        Err(Fallback {
            reason: reason.into(),
            offset,
        })
    }

    /// Does the function `f` (defined in this unit) reach a sync point, directly or through
    /// the functions it calls?
    fn calls_sync(&mut self, f: &Cursor, depth: usize) -> bool {
        if depth > 16 {
            return true;
        }
        let h = f.hash();
        if let Some(&r) = self.barrier_fns.get(&h) {
            return r;
        }
        self.barrier_fns.insert(h, false);
        let mut r = false;
        if let Some(def) = f.definition() {
            for d in def.descendants() {
                if d.kind() != CXCursor_CallExpr {
                    continue;
                }
                let Some(g) = d.referenced() else {
                    if self.unresolved_may_sync(&d, depth + 1) {
                        r = true;
                        break;
                    }
                    continue;
                };
                let n = g.spelling();
                if is_barrier_fn(&n)
                    || is_barrier_call(&d)
                    || (n == "sync" && g.definition().is_none())
                    || is_warp_fn(&n)
                    || is_grid_fn(&n)
                    || (g.definition().is_some() && self.calls_sync(&g, depth + 1))
                {
                    r = true;
                    break;
                }
            }
        }
        self.barrier_fns.insert(h, r);
        r
    }

    /// A call a template leaves unresolved (its callee depends on the template's parameters):
    /// a sync point if it is named as one (a group's `sync`, a barrier, a warp operation) or
    /// if a function of its name may reach one.
    fn unresolved_may_sync(&mut self, call: &Cursor, depth: usize) -> bool {
        // The callee's name: the call's, else its callee expression's (`merge<sortDir>`, an
        // unresolved lookup), else as written at the call's start.
        let mut n = call.spelling();
        if n.is_empty() {
            n = call
                .children()
                .first()
                .map(|c| c.spelling())
                .unwrap_or_default();
        }
        if n.is_empty() {
            if let Pos::Main(o) = call.start() {
                n = text::ident_at(self.src, o).to_string();
            }
        }
        // A qualified name's last part.
        let n = n.rsplit("::").next().unwrap_or("").to_string();
        if n.is_empty() {
            return false;
        }
        if n == "sync"
            || n.starts_with("__sync")
            || is_barrier_fn(&n)
            || is_warp_fn(&n)
            || is_grid_fn(&n)
        {
            return true;
        }
        let candidates = self.by_name.get(&n).cloned().unwrap_or_default();
        candidates.iter().any(|c| self.calls_sync(c, depth))
    }

    /// Checks the whole body for what region form cannot take.
    fn screen(&mut self, body: &Cursor) -> Result<(), Fallback> {
        let loop_param = self.params[self.nparams + 4];
        for d in body.descendants() {
            match d.kind() {
                CXCursor_GotoStmt | CXCursor_IndirectGotoStmt | CXCursor_LabelStmt => {
                    return self.fail("goto in a kernel with barriers", &d)
                }
                CXCursor_LambdaExpr => return self.fail("a lambda in a kernel with barriers", &d),
                CXCursor_SwitchStmt if self.contains_barrier(&d) => {
                    return self.fail("barrier inside a switch", &d)
                }
                CXCursor_CallExpr => {
                    // A call through a pointer (C11's generic atomics, a function pointer): a
                    // barrier behind it fails the launch at run time (sync_point_in_region).
                    // One a template leaves unresolved is judged by the functions of its name.
                    let Some(f) = d.referenced() else {
                        if self.unresolved_may_sync(&d, 0) {
                            return self
                                .fail("barrier in a function the kernel template calls", &d);
                        }
                        continue;
                    };
                    let n = f.spelling();
                    if is_barrier_call(&d)
                        || n == "birenTrapLoop"
                        || n == "birenThreadIdxIn_"
                        || n == "birenTrap"
                    {
                        continue;
                    }
                    if is_grid_fn(&n) {
                        return self.fail("grid sync (cooperative launch)", &d);
                    }
                    if is_warp_fn(&n) && !is_shfl_fn(&n) && self.warp_vote(&d).is_none() {
                        // The name the user wrote (the header's macros add In_ / Loop).
                        let shown = n
                            .strip_suffix("In_")
                            .or_else(|| n.strip_suffix("Loop"))
                            .unwrap_or(&n);
                        return self.fail(format!("warp operation {shown}"), &d);
                    }
                    if matches!(
                        n.as_str(),
                        "setjmp"
                            | "_setjmp"
                            | "sigsetjmp"
                            | "__sigsetjmp"
                            | "longjmp"
                            | "siglongjmp"
                    ) {
                        return self.fail("setjmp/longjmp", &d);
                    }
                    let passes_loop = d.descendants().iter().any(|a| {
                        a.kind() == CXCursor_DeclRefExpr
                            && a.referenced().is_some_and(|r| r.same(&loop_param))
                    });
                    // The block's group object holds the kernel's loop only to read the
                    // thread's index from it (region form keeps it current); what it can sync
                    // is the block barrier above.
                    let block_group = n == "this_thread_block_"
                        && f.usr().starts_with("c:@N@cooperative_groups@");
                    if passes_loop && !n.starts_with("biren") && !block_group {
                        return self.fail(format!("the kernel's loop passed to {n}"), &d);
                    }
                    if f.definition().is_some() && !n.starts_with("biren") && self.calls_sync(&f, 0)
                    {
                        return self
                            .fail(format!("barrier in a function the kernel calls ({n})"), &d);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn plan(&mut self, body: &Cursor, open: usize, close: usize) -> Result<Plan, Fallback> {
        self.screen(body)?;
        self.find_counters(body);
        let mut pieces = self.split(body, open + 1, close)?;
        self.collect_uses(body)?;
        self.check_params_and_counters(body)?;
        let remat = self.rematerializable();
        self.settle_checks(body, &mut pieces, &remat);
        let block_atomics = self.shared_atomics(body, &remat);
        let expanded = self.expand(&remat)?;
        let (uses, cond_uses) = self.uses_by_region(&expanded);
        let known = self.known_values(&pieces, &expanded);
        let guards = self.guards(&remat);
        let splits = self.splits(&remat, &guards);
        let remat_uses = self.remat_uses(&remat, &guards, &splits);
        // The loop pointer, where a region or a checked condition uses it (the barriers' uses go
        // with them).
        let uses_loop = {
            let lp = &self.params[self.nparams + 4];
            body.descendants().iter().any(|d| {
                d.kind() == CXCursor_DeclRefExpr
                    && d.referenced().is_some_and(|r| r.same(lp))
                    && matches!(d.location(), Pos::Main(o) if self.regions.iter().chain(&self.checked_conds).any(|s| o >= s.0 && o < s.1))
            })
        };
        let expanded_vars: Vec<Expanded> = expanded.iter().map(|(_, e)| e.clone()).collect();
        Ok(Plan {
            pieces,
            expanded: expanded_vars,
            uses,
            cond_uses,
            remat: remat.iter().map(|(_, r, _)| r.clone()).collect(),
            counters: self
                .vars
                .iter()
                .filter(|v| v.counter)
                .map(|v| {
                    let t = v.cursor.ty().spelling();
                    (v.name.clone(), t)
                })
                .collect(),
            remat_uses,
            guards,
            splits,
            known,
            hoisted: std::mem::take(&mut self.hoisted),
            edits: std::mem::take(&mut self.edits),
            returns: self.returns,
            uses_loop,
            regions: self.regions.len(),
            shuffles: std::mem::take(&mut self.shuffles),
            block_atomics,
        })
    }

    /// Plans the statements of a compound statement whose inside is `text[from..to]`.
    fn split(&mut self, compound: &Cursor, from: usize, to: usize) -> Result<Vec<Piece>, Fallback> {
        self.split_list(compound.children(), from, to)
    }

    /// Plans the statements `stmts`, written in `text[from..to]`.
    fn split_list(
        &mut self,
        stmts: Vec<Cursor>,
        from: usize,
        to: usize,
    ) -> Result<Vec<Piece>, Fallback> {
        let mut starts = Vec::with_capacity(stmts.len());
        for s in &stmts {
            match s.start() {
                Pos::Main(o) if o >= from && o <= to => starts.push(o),
                _ => {
                    return self.fail(
                        "a statement written by a macro in a kernel with barriers",
                        s,
                    )
                }
            }
        }
        let mut pieces = Vec::new();
        let mut run_start: Option<usize> = None;
        let mut run: Vec<Cursor> = Vec::new();
        for (i, s) in stmts.iter().enumerate() {
            let start = starts[i];
            let end = if i + 1 < stmts.len() {
                starts[i + 1]
            } else {
                to
            };
            if !self.contains_barrier(s) && !self.promotable(s) {
                if run_start.is_none() {
                    run_start = Some(start);
                }
                self.region_statement(s, start, end)?;
                if !self.hoisted.iter().any(|h| h.0 == start) {
                    run.push(*s);
                }
                continue;
            }
            if let Some(rs) = run_start.take() {
                self.push_run(&mut pieces, rs, start, std::mem::take(&mut run));
            }
            pieces.push(self.barrier_statement(s, start, end)?);
        }
        if let Some(rs) = run_start.take() {
            self.push_run(&mut pieces, rs, to, run);
        }
        Ok(pieces)
    }

    fn push_run(&mut self, pieces: &mut Vec<Piece>, start: usize, end: usize, stmts: Vec<Cursor>) {
        self.run_stmts.insert(start, stmts);
        // A run whose text is only blanks (or only hoisted declarations) makes no region.
        let blank = |a: usize, b: usize| text::skip_blank(self.src, a) >= b;
        let mut at = start;
        let mut empty = true;
        let mut hoisted: Vec<Span> = self
            .hoisted
            .iter()
            .copied()
            .filter(|h| h.0 >= start && h.1 <= end)
            .collect();
        hoisted.sort();
        for h in hoisted {
            if !blank(at, h.0) {
                empty = false;
            }
            at = h.1;
        }
        if !blank(at, end) {
            empty = false;
        }
        if !empty {
            self.regions.push((start, end));
            pieces.push(Piece::Run { start, end });
        }
    }

    /// A barrier-free statement of a region: notes what it declares and how it returns.
    fn region_statement(&mut self, s: &Cursor, start: usize, end: usize) -> Result<(), Fallback> {
        if s.kind() == CXCursor_DeclStmt {
            let decls = s.children();
            let hoist = !decls.is_empty()
                && decls.iter().all(|d| match d.kind() {
                    CXCursor_VarDecl => d.storage_static_or_extern(),
                    CXCursor_TypedefDecl
                    | CXCursor_StructDecl
                    | CXCursor_UnionDecl
                    | CXCursor_EnumDecl
                    | CXCursor_TypeAliasDecl => true,
                    _ => false,
                });
            if hoist {
                self.hoisted.push((start, end));
                return Ok(());
            }
            for d in decls.iter().filter(|d| d.kind() == CXCursor_VarDecl) {
                if let Some(v) = self.var_of(d) {
                    self.vars[v].in_region = true;
                    self.vars[v].stmt = Some(start);
                }
            }
        }
        // Returns, and break/continue that would leave a loop of the block.
        self.region_control(s, false)?;
        Ok(())
    }

    fn region_control(&mut self, s: &Cursor, in_inner: bool) -> Result<(), Fallback> {
        match s.kind() {
            CXCursor_ReturnStmt => {
                let (Pos::Main(a), Pos::Main(b)) = (s.location(), s.spelled_location()) else {
                    return self.fail("a return written by a macro in a kernel with barriers", s);
                };
                if a != b || text::ident_at(self.src, a) != "return" {
                    return self.fail("a return written by a macro in a kernel with barriers", s);
                }
                let Some(semi) =
                    text::scan_top(self.src, a, self.src.len(), |i| self.src[i] == b';')
                else {
                    return self.fail("a return without its ';'", s);
                };
                if text::skip_blank(self.src, a + 6) != semi {
                    return self.fail("a kernel returning a value", s);
                }
                self.returns = true;
                self.edits.push(Edit {
                    start: a,
                    end: semi + 1,
                    with: EditKind::Return,
                });
                return Ok(());
            }
            CXCursor_BreakStmt | CXCursor_ContinueStmt if !in_inner => {
                return self.fail("break or continue in a loop with a barrier", s);
            }
            _ => {}
        }
        let inner = in_inner
            || matches!(
                s.kind(),
                CXCursor_ForStmt
                    | CXCursor_WhileStmt
                    | CXCursor_DoStmt
                    | CXCursor_SwitchStmt
                    | CXCursor_CXXForRangeStmt
            );
        for c in s.children() {
            if is_stmt_kind(c.kind()) {
                self.region_control(&c, inner)?;
            }
        }
        Ok(())
    }

    /// A statement that holds a barrier.
    fn barrier_statement(
        &mut self,
        s: &Cursor,
        start: usize,
        end: usize,
    ) -> Result<Piece, Fallback> {
        let src = self.src;
        if s.kind() == CXCursor_DeclStmt && self.shuffles_in(s) > 0 {
            return self.fail(
                "a warp shuffle or vote in a declaration (declare the variable, then assign it)",
                s,
            );
        }
        if text::ident_at(src, start) == "birenSyncWarp" {
            // The statement is the call and its ';' (nothing else up to the next one).
            let semi = text::scan_top(src, start, end, |i| src[i] == b';');
            let call = std::iter::once(*s)
                .chain(s.descendants())
                .find(|d| d.kind() == CXCursor_CallExpr);
            return match (semi, call) {
                (Some(p), Some(c))
                    if text::skip_blank(src, p + 1) >= end && self.warp_vote(&c) == Some(0) =>
                {
                    Ok(Piece::Barrier {
                        offset: start,
                        warp: true,
                    })
                }
                _ => self.fail("a warp barrier inside an expression", s),
            };
        }
        if (100..200).contains(&s.kind())
            && self.barriers_in(s) + usize::from(s.kind() == CXCursor_CallExpr) > 0
        {
            if let Some(p) = self.shuffle_statement(s, start, end)? {
                return Ok(p);
            }
        }
        match s.kind() {
            CXCursor_CallExpr if is_barrier_call(s) => {
                // The statement is the call and its ';' (nothing else up to the next one).
                let semi = text::scan_top(src, start, end, |i| src[i] == b';');
                match semi {
                    Some(p) if text::skip_blank(src, p + 1) >= end => Ok(Piece::Barrier { offset: start, warp: false }),
                    _ => self.fail("a barrier inside an expression", s),
                }
            }
            CXCursor_CompoundStmt => {
                let (Pos::Main(o), Pos::Main(e)) = (s.start(), s.end()) else {
                    return self.fail("a block written by a macro", s);
                };
                Ok(Piece::Scope(self.split(s, o + 1, e - 1)?))
            }
            CXCursor_IfStmt => {
                let ch: Vec<Cursor> = s.children();
                // if (cond) then [else els]; a C++ init-statement or declaration as condition
                // is not taken.
                let at = start;
                if text::ident_at(src, at) != "if" {
                    return self.fail("an if written by a macro", s);
                }
                let open = text::skip_blank(src, at + 2);
                let close = (src.get(open) == Some(&b'('))
                    .then(|| text::matching(src, open))
                    .flatten();
                let Some(close) = close else { return self.fail("an if without its condition", s) };
                let bodies: Vec<&Cursor> = ch.iter().filter(|c| matches!(c.start(), Pos::Main(o) if o > close)).collect();
                if bodies.is_empty() || bodies.iter().any(|b| b.kind() != CXCursor_CompoundStmt) {
                    return self.fail("a barrier in an if without braces", s);
                }
                let cond = (open + 1, close);
                let check = self.condition(cond, s)?;
                let then = self.compound_pieces(bodies[0])?;
                let els = match bodies.get(1) {
                    Some(b) => Some(self.compound_pieces(b)?),
                    None => None,
                };
                Ok(Piece::If { cond, then, els, check, at })
            }
            CXCursor_ForStmt | CXCursor_WhileStmt | CXCursor_DoStmt => {
                let kind = match s.kind() {
                    CXCursor_ForStmt => LoopKind::For,
                    CXCursor_WhileStmt => LoopKind::While,
                    _ => LoopKind::Do,
                };
                let ch = s.children();
                // The body: the last child of for/while, the first of do.
                let body = if kind == LoopKind::Do { ch.first() } else { ch.last() };
                let Some(body) = body.copied() else {
                    return self.fail("a loop without a body", s);
                };
                let braces = body.kind() == CXCursor_CompoundStmt;
                if !braces && kind == LoopKind::Do {
                    return self.fail("a barrier in a do loop without braces", s);
                }
                let (bo, be) = match (body.start(), body.end(), braces) {
                    (Pos::Main(bo), Pos::Main(be), true) => (bo, be),
                    // One statement without braces: up to the next statement.
                    (Pos::Main(bo), _, false) => (bo, end),
                    _ => return self.fail("a loop written by a macro", s),
                };
                let (mut init, cond, mut inc);
                init = None;
                inc = None;
                match kind {
                    LoopKind::For | LoopKind::While => {
                        let kw = if kind == LoopKind::For { "for" } else { "while" };
                        if text::ident_at(src, start) != kw {
                            return self.fail("a loop written by a macro", s);
                        }
                        let open = text::skip_blank(src, start + kw.len());
                        let close = (src.get(open) == Some(&b'(')).then(|| text::matching(src, open)).flatten();
                        let Some(close) = close else { return self.fail("a loop without its header", s) };
                        if close > bo {
                            return self.fail("a loop written by a macro", s);
                        }
                        if kind == LoopKind::For {
                            let semis = text::split_top(src, open + 1, close, b';');
                            if semis.len() != 2 {
                                return self.fail("a range-for or unusual for header with a barrier", s);
                            }
                            let span = |a: usize, b: usize| (text::skip_blank(src, a) < b).then_some((a, b));
                            init = span(open + 1, semis[0]);
                            cond = span(semis[0] + 1, semis[1]);
                            inc = span(semis[1] + 1, close);
                        } else {
                            cond = Some((open + 1, close));
                        }
                    }
                    LoopKind::Do => {
                        let w = text::skip_blank(src, be);
                        if text::ident_at(src, w) != "while" {
                            return self.fail("a do loop written by a macro", s);
                        }
                        let open = text::skip_blank(src, w + 5);
                        let close = (src.get(open) == Some(&b'(')).then(|| text::matching(src, open)).flatten();
                        let Some(close) = close else { return self.fail("a do loop without its condition", s) };
                        cond = Some((open + 1, close));
                    }
                }
                // The header is the block's: what it declares is one value for the block.
                if let Some(i) = init {
                    for c in ch.iter() {
                        if c.kind() == CXCursor_DeclStmt && matches!(c.start(), Pos::Main(o) if o >= i.0 && o < i.1) {
                            for d in c.children() {
                                if let Some(v) = self.var_of(&d) {
                                    self.vars[v].block_level = true;
                                }
                            }
                        }
                    }
                    self.block_exprs.push(i);
                }
                if let Some(i) = inc {
                    self.block_exprs.push(i);
                }
                let check = match cond {
                    Some(c) => self.condition(c, s)?,
                    None => false,
                };
                let body = if braces { self.split(&body, bo + 1, be - 1)? } else { self.split_list(vec![body], bo, be)? };
                Ok(Piece::Loop { kind, init, cond, inc, body, check, at: start })
            }
            _ => self.fail("a barrier inside a statement region form does not split (switch, label, expression)", s),
        }
    }

    /// A barrier-free `for` loop of a region whose header is uniform by construction (it
    /// declares its counter and reads only parameters, the block's indices and block-level
    /// counters) and whose body neither changes the counter nor leaves the loop early: made a
    /// loop of the block with the thread loop inside (loop interchange), so that the thread
    /// loop is innermost and the system compiler can vectorise it. Legal as a barrier is
    /// between iterations: it only fixes one of the orders the threads may run in.
    fn promotable(&mut self, s: &Cursor) -> bool {
        let src = self.src;
        if s.kind() != CXCursor_ForStmt {
            return false;
        }
        let Pos::Main(start) = s.start() else {
            return false;
        };
        if text::ident_at(src, start) != "for" {
            return false;
        }
        let open = text::skip_blank(src, start + 3);
        let Some(close) = (src.get(open) == Some(&b'('))
            .then(|| text::matching(src, open))
            .flatten()
        else {
            return false;
        };
        let semis = text::split_top(src, open + 1, close, b';');
        if semis.len() != 2 {
            return false;
        }
        let ch = s.children();
        let Some(init) = ch.first() else {
            return false;
        };
        // The counters: declared by the init, or C89 counters it assigns.
        let counters: Vec<Cursor> = if init.kind() == CXCursor_DeclStmt {
            init.children()
                .into_iter()
                .filter(|d| d.kind() == CXCursor_VarDecl)
                .collect()
        } else {
            std::iter::once(*init)
                .chain(init.descendants())
                .filter(|d| d.kind() == CXCursor_DeclRefExpr)
                .filter_map(|d| d.referenced())
                .filter(|r| self.var_of(r).is_some_and(|v| self.vars[v].block_level))
                .collect()
        };
        if counters.is_empty() {
            return false;
        }
        let Some(body) = ch.last() else { return false };
        let thread = self.params[self.nparams];
        let lp = self.params[self.nparams + 4];
        for d in s.descendants() {
            let Pos::Main(o) = d.start() else {
                return false;
            };
            let in_header = o > open && o < close;
            match d.kind() {
                CXCursor_DeclRefExpr if in_header => {
                    let Some(r) = d.referenced() else {
                        return false;
                    };
                    let is_param = self.params.iter().any(|p| p.same(&r));
                    let is_counter = counters.iter().any(|c| c.same(&r));
                    let is_block = self.var_of(&r).is_some_and(|v| self.vars[v].block_level);
                    if r.same(&thread)
                        || r.same(&lp)
                        || !(is_param || is_counter || is_block || is_constant(&r))
                    {
                        return false;
                    }
                }
                CXCursor_CallExpr | CXCursor_ArraySubscriptExpr if in_header => return false,
                CXCursor_MemberRefExpr if in_header && !dot_member(src, &d) => return false,
                CXCursor_UnaryOperator if in_header => {
                    if matches!(src.get(o), Some(b'*' | b'&')) {
                        return false;
                    }
                }
                CXCursor_DeclRefExpr => {
                    // The body must not change the counter.
                    let Some(r) = d.referenced() else { continue };
                    if counters.iter().any(|c| c.same(&r)) {
                        let Pos::Main(l) = d.location() else {
                            return false;
                        };
                        if text::use_context(src, l, r.spelling().len()).writes
                            || text::use_context(src, l, r.spelling().len()).address
                        {
                            return false;
                        }
                    }
                }
                _ => {}
            }
        }
        // No break or continue of this loop; no declaration statement as the whole body.
        !Self::leaves_loop(body) && body.kind() != CXCursor_DeclStmt
    }

    /// An expression with one value for the block: literals and operators over parameters,
    /// the block's indices, block-level counters and enumerators (no call, no memory read).
    fn uniform_expr(&self, e: &Cursor) -> bool {
        self.uniform_expr_as(e, false)
    }

    /// As `uniform_expr`; `writes`: assignments and ++/-- allowed (of block-level variables: a
    /// loop header's increment).
    fn uniform_expr_as(&self, e: &Cursor, writes: bool) -> bool {
        let src = self.src;
        let thread = self.params[self.nparams];
        let lp = self.params[self.nparams + 4];
        for d in std::iter::once(*e).chain(e.descendants()) {
            match d.kind() {
                CXCursor_DeclRefExpr => {
                    let Some(r) = d.referenced() else {
                        return false;
                    };
                    if r.same(&thread) || r.same(&lp) {
                        return false;
                    }
                    let ok = self.params.iter().any(|p| p.same(&r))
                        || is_constant(&r)
                        || self.var_of(&r).is_some_and(|v| self.vars[v].block_level);
                    if !ok {
                        return false;
                    }
                }
                CXCursor_MemberRefExpr if !dot_member(src, &d) => return false,
                CXCursor_MemberRefExpr => {}
                CXCursor_UnaryOperator => {
                    let op = operator(src, &d);
                    if op.is_empty() || op == b"*" || op == b"&" || (!writes && writes_operand(op))
                    {
                        return false;
                    }
                }
                CXCursor_BinaryOperator if !writes && writes_operand(operator(src, &d)) => {
                    return false
                }
                CXCursor_CompoundAssignOperator if writes => {}
                CXCursor_IntegerLiteral
                | CXCursor_FloatingLiteral
                | CXCursor_CharacterLiteral
                | CXCursor_ParenExpr
                | CXCursor_BinaryOperator
                | CXCursor_ConditionalOperator
                | CXCursor_CStyleCastExpr
                | CXCursor_UnexposedExpr
                | CXCursor_TypeRef
                | CXCursor_UnaryExpr => {}
                _ => return false,
            }
        }
        true
    }

    /// `threadIdx.x`, or a recomputed variable that is exactly it (through casts and parentheses).
    fn is_thread_x(&self, e: &Cursor, remat: &[(usize, Remat, Vec<usize>)]) -> bool {
        let src = self.src;
        let mut e = *e;
        while matches!(e.kind(), CXCursor_UnexposedExpr | CXCursor_ParenExpr) {
            let ch = e.children();
            if ch.len() != 1 {
                return false;
            }
            e = ch[0];
        }
        match e.kind() {
            CXCursor_MemberRefExpr => {
                let Pos::Main(o) = e.location() else {
                    return false;
                };
                let base = e.children();
                text::ident_at(src, o) == "x"
                    && base.len() == 1
                    && base[0].kind() == CXCursor_DeclRefExpr
                    && base[0]
                        .referenced()
                        .is_some_and(|r| r.same(&self.params[self.nparams]))
            }
            CXCursor_DeclRefExpr => {
                let Some(r) = e.referenced() else {
                    return false;
                };
                let Some(v) = self.var_of(&r) else {
                    return false;
                };
                remat.iter().any(|(w, rm, _)| {
                    *w == v && {
                        let t = String::from_utf8_lossy(&src[rm.init.0..rm.init.1]);
                        // Exactly x, or x as an int (exact: x < 2^31; the order is kept).
                        matches!(
                            t.split_whitespace().collect::<String>().as_str(),
                            "threadIdx.x" | "(int)threadIdx.x" | "(unsigned)threadIdx.x"
                        )
                    }
                })
            }
            _ => false,
        }
    }

    /// The regions that are one `if (x < E)` (see `Plan::guards`).
    fn guards(&self, remat: &[(usize, Remat, Vec<usize>)]) -> HashMap<usize, Guard> {
        let src = self.src;
        let mut out = HashMap::new();
        for (&start, stmts) in &self.run_stmts {
            let [s] = stmts.as_slice() else { continue };
            if s.kind() != CXCursor_IfStmt {
                continue;
            }
            let ch = s.children();
            let [cond, body] = ch.as_slice() else {
                continue;
            };
            if cond.kind() != CXCursor_BinaryOperator {
                continue;
            }
            let (Pos::Main(at), Pos::Main(b)) = (s.start(), body.start()) else {
                continue;
            };
            let ops = cond.children();
            let [l, r] = ops.as_slice() else { continue };
            // The operator: the token before the right operand.
            let Pos::Main(mut j) = r.start() else {
                continue;
            };
            while j > 0 && (src[j - 1] as char).is_ascii_whitespace() {
                j -= 1;
            }
            let op: &[u8] = if j >= 2 && src[j - 1] == b'=' {
                &src[j - 2..j]
            } else {
                &src[j.saturating_sub(1)..j]
            };
            let before = if j > op.len() {
                src[j - op.len() - 1]
            } else {
                b' '
            };
            let compare = before != b'<' && before != b'>';
            let less = compare
                && (op == b"<" || op == b"<=")
                && self.is_thread_x(l, remat)
                && self.uniform_expr(r);
            let greater = compare
                && (op == b">" || op == b">=")
                && self.is_thread_x(r, remat)
                && self.uniform_expr(l);
            if !(less || greater) {
                continue;
            }
            let open = text::skip_blank(src, at + 2);
            let Some(close) = (src.get(open) == Some(&b'('))
                .then(|| text::matching(src, open))
                .flatten()
            else {
                continue;
            };
            out.insert(
                start,
                Guard {
                    cond: (open + 1, close),
                    body: b,
                },
            );
        }
        out
    }

    /// An `if` whose condition is `x OP E` or `E OP x` (x the thread's x index, E uniform):
    /// the condition's span, and whether the threads that pass are a prefix of each row.
    fn x_compare(&self, s: &Cursor, remat: &[(usize, Remat, Vec<usize>)]) -> Option<(Span, bool)> {
        let src = self.src;
        if s.kind() != CXCursor_IfStmt {
            return None;
        }
        let ch = s.children();
        let cond = strip_parens(ch.first()?);
        if cond.kind() != CXCursor_BinaryOperator {
            return None;
        }
        let Pos::Main(at) = s.start() else {
            return None;
        };
        if text::ident_at(src, at) != "if" {
            return None;
        }
        let ops = cond.children();
        let [l, r] = ops.as_slice() else { return None };
        // The operator: the token before the right operand.
        let Pos::Main(mut j) = r.start() else {
            return None;
        };
        while j > 0 && (src[j - 1] as char).is_ascii_whitespace() {
            j -= 1;
        }
        let op: &[u8] = if j >= 2 && src[j - 1] == b'=' {
            &src[j - 2..j]
        } else {
            &src[j.saturating_sub(1)..j]
        };
        let before = if j > op.len() {
            src[j - op.len() - 1]
        } else {
            b' '
        };
        if before == b'<' || before == b'>' || before == b'=' || before == b'!' {
            return None;
        }
        let less = op == b"<" || op == b"<=";
        let greater = op == b">" || op == b">=";
        if !(less || greater) {
            return None;
        }
        let prefix = if self.is_thread_x(l, remat) && self.uniform_expr(r) {
            less
        } else if self.is_thread_x(r, remat) && self.uniform_expr(l) {
            greater
        } else {
            return None;
        };
        let open = text::skip_blank(src, at + 2);
        let close = (src.get(open) == Some(&b'('))
            .then(|| text::matching(src, open))
            .flatten()?;
        Some(((open + 1, close), prefix))
    }

    /// The regions to run as two thread loops (see `Plan::splits`): those that are no guard
    /// and hold an `if` on the thread's x index against a uniform bound (the first one).
    fn splits(
        &self,
        remat: &[(usize, Remat, Vec<usize>)],
        guards: &HashMap<usize, Guard>,
    ) -> HashMap<usize, Split> {
        let mut out = HashMap::new();
        for (&start, stmts) in &self.run_stmts {
            if guards.contains_key(&start) || !self.regions.iter().any(|r| r.0 == start) {
                continue;
            }
            let found = stmts
                .iter()
                .flat_map(|s| std::iter::once(*s).chain(s.descendants()))
                .find_map(|d| self.x_compare(&d, remat));
            if let Some((cond, prefix)) = found {
                out.insert(start, Split { cond, prefix });
            }
        }
        out
    }

    /// Finds the C89 loop counters (`Var::counter`): scalar locals declared at the body's top
    /// level, written only in the headers of `for` loops that become loops of the block (they
    /// hold a barrier, or are interchanged with the thread loop), whose headers and
    /// initializers are uniform.
    fn find_counters(&mut self, body: &Cursor) {
        let src = self.src;
        let mut names: HashMap<String, usize> = HashMap::new();
        for v in &self.vars {
            *names.entry(v.name.clone()).or_default() += 1;
        }
        let mut cands: Vec<usize> = Vec::new();
        for c in body.children() {
            if c.kind() != CXCursor_DeclStmt {
                continue;
            }
            for d in c.children() {
                let Some(v) = self.var_of(&d) else { continue };
                let k = d.ty().kind();
                let scalar = matches!(
                    k,
                    CXType_Int
                        | CXType_UInt
                        | CXType_Long
                        | CXType_ULong
                        | CXType_LongLong
                        | CXType_ULongLong
                        | CXType_Short
                        | CXType_UShort
                        | CXType_Char_S
                        | CXType_Char_U
                        | CXType_SChar
                        | CXType_UChar
                        | CXType_Typedef
                        | CXType_Elaborated
                );
                if scalar
                    && !d.storage_static_or_extern()
                    && names[&self.vars[v].name] == 1
                    && !d.ty().is_const()
                {
                    cands.push(v);
                }
            }
        }
        if cands.is_empty() {
            return;
        }
        // Every for loop with its header's spans.
        let mut fors: Vec<(Cursor, Span, Span)> = Vec::new();
        for f in body.descendants() {
            if f.kind() != CXCursor_ForStmt {
                continue;
            }
            let Pos::Main(start) = f.start() else {
                continue;
            };
            if text::ident_at(src, start) != "for" {
                continue;
            }
            let open = text::skip_blank(src, start + 3);
            let Some(close) = (src.get(open) == Some(&b'('))
                .then(|| text::matching(src, open))
                .flatten()
            else {
                continue;
            };
            let semis = text::split_top(src, open + 1, close, b';');
            if semis.len() != 2 {
                continue;
            }
            fors.push((f, (open + 1, semis[0]), (semis[1] + 1, close)));
        }
        // Uses: recorded later (collect_uses); read them here.
        let mut uses: HashMap<usize, Vec<usize>> = HashMap::new();
        for d in body.descendants() {
            if d.kind() != CXCursor_DeclRefExpr {
                continue;
            }
            let (Some(r), Pos::Main(o)) = (d.referenced(), d.location()) else {
                continue;
            };
            if let Some(v) = self.var_of(&r) {
                uses.entry(v).or_default().push(o);
            }
        }
        loop {
            for &v in &cands {
                self.vars[v].block_level = true;
            }
            let mut drop: Vec<usize> = Vec::new();
            for &v in &cands {
                let name_len = self.vars[v].name.len();
                let offs = uses.get(&v).cloned().unwrap_or_default();
                let mut ok = true;
                let mut owners: Vec<usize> = Vec::new();
                for &u in &offs {
                    let c = text::use_context(src, u, name_len);
                    if c.address {
                        ok = false;
                    }
                    if c.writes {
                        match fors
                            .iter()
                            .position(|(_, i, n)| (u >= i.0 && u < i.1) || (u >= n.0 && u < n.1))
                        {
                            Some(k) => owners.push(k),
                            None => ok = false,
                        }
                    }
                }
                // The declaration's initializer, if any, is uniform.
                let init = self.vars[v].cursor.children().last().copied();
                let has_init = {
                    let Pos::Main(name_at) = self.vars[v].cursor.location() else {
                        continue;
                    };
                    let end = text::scan_top(src, name_at, src.len(), |i| {
                        src[i] == b';' || src[i] == b','
                    })
                    .unwrap_or(name_at);
                    text::scan_top(src, name_at, end, |i| {
                        src[i] == b'=' && src.get(i + 1) != Some(&b'=')
                    })
                    .is_some()
                };
                if has_init
                    && !init
                        .is_some_and(|e| (100..200).contains(&e.kind()) && self.uniform_expr(&e))
                {
                    ok = false;
                }
                // A counter is written by a loop header (one never written is recomputed).
                if owners.is_empty() {
                    ok = false;
                }
                for k in owners {
                    let f = fors[k].0;
                    let header_uniform = f
                        .children()
                        .iter()
                        .take(f.children().len().saturating_sub(1))
                        .all(|h| h.kind() == CXCursor_DeclStmt || self.uniform_expr_as(h, true));
                    let block_loop = self.contains_barrier(&f) || self.promotable(&f);
                    if !header_uniform || !block_loop {
                        ok = false;
                    }
                }
                if !ok {
                    drop.push(v);
                }
            }
            if drop.is_empty() {
                break;
            }
            for v in &drop {
                self.vars[*v].block_level = false;
            }
            cands.retain(|v| !drop.contains(v));
        }
        for v in cands {
            self.vars[v].counter = true;
        }
    }

    fn leaves_loop(s: &Cursor) -> bool {
        match s.kind() {
            CXCursor_BreakStmt | CXCursor_ContinueStmt => true,
            CXCursor_ForStmt
            | CXCursor_WhileStmt
            | CXCursor_DoStmt
            | CXCursor_SwitchStmt
            | CXCursor_CXXForRangeStmt => false,
            _ => s.children().iter().any(Self::leaves_loop),
        }
    }

    /// An expression statement holding one warp shuffle and no barrier (see `Piece::Shuffle`);
    /// None when it holds a barrier instead.
    fn shuffle_statement(
        &mut self,
        s: &Cursor,
        start: usize,
        end: usize,
    ) -> Result<Option<Piece>, Fallback> {
        let src = self.src;
        let calls: Vec<Cursor> = std::iter::once(*s)
            .chain(s.descendants())
            .filter(|d| d.kind() == CXCursor_CallExpr)
            .filter(|d| {
                is_barrier_call(d)
                    || d.referenced().is_some_and(|f| is_shfl_fn(&f.spelling()))
                    || self.warp_vote(d).is_some()
            })
            .collect();
        if calls
            .iter()
            .any(|c| is_barrier_call(c) || self.warp_vote(c) == Some(0))
        {
            return Ok(None);
        }
        if calls.len() != 1 {
            return self.fail("two warp shuffles in one statement", s);
        }
        let call = calls[0];
        if let Some(op) = self.warp_vote(&call) {
            return self.vote_statement(s, &call, op, start, end).map(Some);
        }
        let name = call.referenced().map(|f| f.spelling()).unwrap_or_default();
        let Pos::Main(at) = call.start() else {
            return self.fail("a warp shuffle written by a macro", s);
        };
        let written = text::ident_at(src, at);
        if !written.starts_with("birenShfl") {
            return self.fail("a warp shuffle written by a macro", s);
        }
        let open = text::skip_blank(src, at + written.len());
        let Some(close) = (src.get(open) == Some(&b'('))
            .then(|| text::matching(src, open))
            .flatten()
        else {
            return self.fail("a warp shuffle without its arguments", s);
        };
        if close >= end {
            return self.fail("a warp shuffle written by a macro", s);
        }
        let commas = text::split_top(src, open + 1, close, b',');
        if commas.len() != 2 && commas.len() != 3 {
            return self.fail("a warp shuffle with an unexpected argument list", s);
        }
        let val = (commas[0] + 1, commas[1]);
        let param = (commas[1] + 1, *commas.get(2).unwrap_or(&close));
        let width = (commas.len() == 3).then(|| (commas[2] + 1, close));
        let kind = if name.starts_with("birenShflUp") {
            1
        } else if name.starts_with("birenShflDown") {
            2
        } else if name.starts_with("birenShflXor") {
            3
        } else {
            0
        };
        let ty = call.ty().spelling();
        let n = self.shuffles.len();
        self.shuffles.push(ty);
        // Two regions: the values (A, first, so uses in the value are its), the statement (B).
        self.regions.push(val);
        self.regions.push((start, end));
        self.region_control(s, false)?;
        // The statement reads the source lane's value instead (see birenRegionShflSrc_).
        let text = |a: Span| String::from_utf8_lossy(&src[a.0..a.1]).into_owned();
        let w = width.map_or_else(|| "32".to_string(), text);
        let read = format!(
            "biren_shv{n}_[birenRegionShflSrc_(biren_t_, {kind}u, (unsigned)({}), (unsigned)({w}), biren_nt_, biren_deadp_)]",
            text(param)
        );
        let newlines = src[at..close + 1].iter().filter(|&&c| c == b'\n').count();
        self.edits.push(Edit {
            start: at,
            end: close + 1,
            with: EditKind::Text(read + &"\n".repeat(newlines)),
        });
        Ok(Some(Piece::Shuffle {
            stmt: (start, end),
            val,
            width,
            n,
            vote: false,
        }))
    }

    /// A statement holding one vote (`birenBallotSync(mask, pred)`, any, all; `op` as
    /// `warp_vote`): like a shuffle, a region that stores every thread's `pred != 0`, then the
    /// statement reading its warp's result.
    fn vote_statement(
        &mut self,
        s: &Cursor,
        call: &Cursor,
        op: u32,
        start: usize,
        end: usize,
    ) -> Result<Piece, Fallback> {
        let src = self.src;
        let Pos::Main(at) = call.start() else {
            return self.fail("a warp vote written by a macro", s);
        };
        let written = text::ident_at(src, at);
        let open = text::skip_blank(src, at + written.len());
        let Some(close) = (src.get(open) == Some(&b'('))
            .then(|| text::matching(src, open))
            .flatten()
        else {
            return self.fail("a warp vote without its arguments", s);
        };
        if close >= end {
            return self.fail("a warp vote written by a macro", s);
        }
        let commas = text::split_top(src, open + 1, close, b',');
        if commas.len() != 1 {
            return self.fail("a warp vote with an unexpected argument list", s);
        }
        let mask = (open + 1, commas[0]);
        let val = (commas[0] + 1, close);
        let n = self.shuffles.len();
        self.shuffles.push("int".to_string());
        self.regions.push(val);
        self.regions.push((start, end));
        self.region_control(s, false)?;
        let text = |a: Span| String::from_utf8_lossy(&src[a.0..a.1]).into_owned();
        let ty = if op == 5 { "unsigned" } else { "int" };
        let read = format!(
            "(({ty})birenRegionVote_(biren_shv{n}_, biren_t_, (unsigned)({}), {op}u, biren_nt_, biren_deadp_))",
            text(mask)
        );
        let newlines = src[at..close + 1].iter().filter(|&&c| c == b'\n').count();
        self.edits.push(Edit {
            start: at,
            end: close + 1,
            with: EditKind::Text(read + &"\n".repeat(newlines)),
        });
        Ok(Piece::Shuffle {
            stmt: (start, end),
            val,
            width: None,
            n,
            vote: true,
        })
    }

    fn compound_pieces(&mut self, c: &Cursor) -> Result<Vec<Piece>, Fallback> {
        let (Pos::Main(o), Pos::Main(e)) = (c.start(), c.end()) else {
            return self.fail("a block written by a macro", c);
        };
        self.split(c, o + 1, e - 1)
    }

    /// Classifies a condition around a barrier: Ok(false) uniform by construction (evaluated
    /// once), Ok(true) evaluated by every thread and checked equal; fails when it names the
    /// thread's index.
    fn condition(&mut self, span: Span, stmt: &Cursor) -> Result<bool, Fallback> {
        let thread = &self.params[self.nparams];
        let lp = &self.params[self.nparams + 4];
        let mut check = false;
        for d in stmt.descendants() {
            let Pos::Main(o) = d.start() else { continue };
            if o < span.0 || o >= span.1 {
                continue;
            }
            match d.kind() {
                CXCursor_DeclRefExpr => {
                    let Some(r) = d.referenced() else { continue };
                    if r.same(thread) || r.same(lp) {
                        return self
                            .fail("barrier under a condition that depends on threadIdx", stmt);
                    }
                    if let Some(v) = self.var_of(&r) {
                        if !self.vars[v].block_level {
                            if self.tainted(v) {
                                return self.fail(
                                    "barrier under a condition that depends on threadIdx",
                                    stmt,
                                );
                            }
                            check = true;
                        }
                    }
                }
                CXCursor_CallExpr => check = true,
                // ++, --, = in a condition: evaluated by each thread, as written.
                CXCursor_UnaryOperator
                | CXCursor_BinaryOperator
                | CXCursor_CompoundAssignOperator
                    if writes_operand(operator(self.src, &d)) =>
                {
                    check = true
                }
                _ => {}
            }
        }
        if check {
            self.checked_conds.push(span);
        }
        Ok(check)
    }

    /// Conditions around barriers that `condition` could only check (they read a local
    /// variable) and that read only block values once the recomputed variables are known
    /// (`aEnd = aBegin + wA - 1`, uniform: see `rematerializable`): evaluated once for the
    /// block, unchecked, as those variables are declared before the block's statements.
    fn settle_checks(
        &mut self,
        body: &Cursor,
        pieces: &mut [Piece],
        remat: &[(usize, Remat, Vec<usize>)],
    ) {
        let set: HashSet<usize> = remat.iter().filter(|r| r.1.uniform).map(|r| r.0).collect();
        if set.is_empty() || self.checked_conds.is_empty() {
            return;
        }
        let nodes = body.descendants();
        let src = self.src;
        let uniform = |span: Span| {
            nodes
                .iter()
                .filter(|d| matches!(d.start(), Pos::Main(o) if o >= span.0 && o < span.1))
                .all(|d| {
                    !writes_operand(operator(src, d))
                        && d.kind() != CXCursor_CompoundAssignOperator
                        && self.uniform_with(d, &set)
                })
        };
        let settled: Vec<Span> = self
            .checked_conds
            .iter()
            .copied()
            .filter(|&c| uniform(c))
            .collect();
        if settled.is_empty() {
            return;
        }
        fn walk(pieces: &mut [Piece], settled: &[Span]) {
            for p in pieces {
                match p {
                    Piece::If {
                        cond,
                        then,
                        els,
                        check,
                        ..
                    } => {
                        if settled.contains(cond) {
                            *check = false;
                        }
                        walk(then, settled);
                        if let Some(e) = els {
                            walk(e, settled);
                        }
                    }
                    Piece::Loop {
                        cond, body, check, ..
                    } => {
                        if cond.is_some_and(|c| settled.contains(&c)) {
                            *check = false;
                        }
                        walk(body, settled);
                    }
                    Piece::Scope(inner) => walk(inner, settled),
                    _ => {}
                }
            }
        }
        walk(pieces, &settled);
        self.checked_conds.retain(|c| !settled.contains(c));
    }

    /// A variable whose declaration reads threadIdx (directly or through another such).
    fn tainted(&self, v: usize) -> bool {
        let thread = &self.params[self.nparams];
        let mut seen = HashSet::new();
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            if !seen.insert(v) {
                continue;
            }
            for d in self.vars[v].cursor.descendants() {
                if d.kind() != CXCursor_DeclRefExpr {
                    continue;
                }
                let Some(r) = d.referenced() else { continue };
                if r.same(thread) {
                    return true;
                }
                if let Some(w) = self.var_of(&r) {
                    stack.push(w);
                }
            }
        }
        false
    }

    /// Every use of a local variable, by offset (uses a macro's body makes are refused: the
    /// region could not see them).
    fn collect_uses(&mut self, body: &Cursor) -> Result<(), Fallback> {
        for d in body.descendants() {
            if d.kind() != CXCursor_DeclRefExpr {
                continue;
            }
            let Some(r) = d.referenced() else { continue };
            let Some(v) = self.var_of(&r) else { continue };
            // A macro's argument is where it is written (inside the body), not where the macro
            // is used: which region it belongs to.
            let inside = |o: usize| matches!((body.start(), body.end()), (Pos::Main(a), Pos::Main(b)) if o > a && o < b);
            match (d.spelled_location(), d.location()) {
                (Pos::Main(o), _) if inside(o) => self.vars[v].uses.push(o),
                (_, Pos::Main(o)) => self.vars[v].uses.push(o),
                _ => return self.fail("a variable used in a macro's own text", &d),
            }
        }
        Ok(())
    }

    /// Kernel parameters and block-level loop counters must keep one value for the block.
    fn check_params_and_counters(&mut self, body: &Cursor) -> Result<(), Fallback> {
        let src = self.src;
        for d in body.descendants() {
            if d.kind() != CXCursor_DeclRefExpr {
                continue;
            }
            let Some(r) = d.referenced() else { continue };
            let Some(p) = self.params[..self.nparams].iter().position(|q| q.same(&r)) else {
                continue;
            };
            let Pos::Main(o) = d.location() else { continue };
            let name = self.params[p].spelling();
            let ctx = text::use_context(src, o, name.len());
            // `&p[i]`, `&p->m`: the address of what a pointer parameter points at.
            let rest = &src[text::skip_blank(src, o + name.len()).min(src.len())..];
            let pointee = self.params[p].ty().kind() == CXType_Pointer
                && (rest.starts_with(b"[") || rest.starts_with(b"->"));
            if ctx.writes || (ctx.address && !pointee) {
                return self.fail(format!("the kernel changes its parameter {name}"), &d);
            }
        }
        for v in 0..self.vars.len() {
            if !self.vars[v].block_level {
                continue;
            }
            let name_len = self.vars[v].name.len();
            for &u in &self.vars[v].uses {
                let in_block_expr = self.block_exprs.iter().any(|s| u >= s.0 && u < s.1);
                if !in_block_expr && text::use_context(src, u, name_len).writes {
                    let c = self.vars[v].cursor;
                    return self.fail(
                        format!(
                            "the loop counter {} changed inside a loop with a barrier",
                            self.vars[v].name
                        ),
                        &c,
                    );
                }
            }
        }
        Ok(())
    }

    /// Chooses the variables kept per thread and checks each can be.
    fn expand(
        &mut self,
        remat: &[(usize, Remat, Vec<usize>)],
    ) -> Result<Vec<(usize, Expanded)>, Fallback> {
        let src = self.src;
        let region_of =
            |regions: &[Span], o: usize| regions.iter().position(|r| o >= r.0 && o < r.1);
        let mut out = Vec::new();
        // Block expressions (loop init/increment) may name only block-level things.
        let thread = self.params[self.nparams];
        let lp = self.params[self.nparams + 4];
        for d in self.body.descendants() {
            let (Pos::Main(o), CXCursor_DeclRefExpr) = (d.location(), d.kind()) else {
                continue;
            };
            if self.block_exprs.iter().any(|s| o >= s.0 && o < s.1)
                && d.referenced()
                    .is_some_and(|r| r.same(&thread) || r.same(&lp))
            {
                return self.fail(
                    "a loop with a barrier whose counter depends on threadIdx",
                    &d,
                );
            }
        }
        for v in 0..self.vars.len() {
            let var = &self.vars[v];
            // A recomputed variable of one value for the block is declared, once per block,
            // before the block's statements: a loop's header may read it.
            let block_value = remat.iter().any(|r| r.0 == v && r.1.uniform);
            if var.block_level || block_value || var.cursor.storage_static_or_extern() {
                continue;
            }
            for &u in &var.uses {
                if self.block_exprs.iter().any(|s| u >= s.0 && u < s.1) {
                    let c = var.cursor;
                    return self.fail(
                        format!(
                            "a loop with a barrier whose header uses the thread's variable {}",
                            var.name
                        ),
                        &c,
                    );
                }
            }
        }
        let mut names: HashMap<String, usize> = HashMap::new();
        for v in &self.vars {
            *names.entry(v.name.clone()).or_default() += 1;
        }
        for v in 0..self.vars.len() {
            let var = &self.vars[v];
            if var.block_level
                || var.cursor.storage_static_or_extern()
                || remat.iter().any(|r| r.0 == v)
            {
                continue;
            }
            let decl_region = match var.cursor.location() {
                Pos::Main(o) => region_of(&self.regions, o),
                Pos::Elsewhere => None,
            };
            let mut regions: HashSet<usize> = var
                .uses
                .iter()
                .filter_map(|&u| region_of(&self.regions, u))
                .collect();
            if let Some(r) = decl_region {
                regions.insert(r);
            }
            let in_cond = var
                .uses
                .iter()
                .any(|&u| self.checked_conds.iter().any(|s| u >= s.0 && u < s.1));
            if regions.len() < 2 && !in_cond {
                continue;
            }
            // Kept per thread: declared by a region statement of a split body.
            let c = var.cursor;
            if !var.in_region {
                return self.fail(
                    format!(
                        "the variable {} lives across a barrier but is declared inside a statement",
                        var.name
                    ),
                    &c,
                );
            }
            if names[&var.name] > 1 {
                return self.fail(
                    format!(
                        "the variable {} lives across a barrier and another variable has its name",
                        var.name
                    ),
                    &c,
                );
            }
            let ty = c.ty();
            let spelled = ty.spelling();
            let kind = ty.kind();
            if kind == CXType_VariableArray
                || kind == CXType_LValueReference
                || kind == CXType_RValueReference
            {
                return self.fail(format!("the variable {} lives across a barrier and has a type region form cannot keep", var.name), &c);
            }
            if spelled.contains("(unnamed")
                || spelled.contains("(anonymous")
                || spelled.contains("lambda")
            {
                return self.fail(
                    format!(
                        "the variable {} lives across a barrier and its type has no name",
                        var.name
                    ),
                    &c,
                );
            }
            if kind == CXType_Record && !ty.is_pod() {
                return self.fail(
                    format!(
                        "the variable {} lives across a barrier and is not plain data",
                        var.name
                    ),
                    &c,
                );
            }
            let is_array = kind == CXType_ConstantArray;
            let is_ptr = kind == CXType_Pointer;
            for &u in &var.uses {
                let ctx = text::use_context(src, u, var.name.len());
                if takes_address(src, u, var.name.len(), is_ptr) || (is_array && !ctx.subscript) {
                    return self.fail(
                        format!(
                            "the address of {} is taken and it lives across a barrier",
                            var.name
                        ),
                        &c,
                    );
                }
            }
            let ty = if ty.is_const() {
                if let Some(t) = spelled.strip_prefix("const ") {
                    t.to_string()
                } else if let Some(t) = spelled.strip_suffix("const") {
                    t.trim_end().to_string()
                } else {
                    return self.fail(
                        format!(
                            "the variable {} lives across a barrier and has a const type",
                            var.name
                        ),
                        &c,
                    );
                }
            } else {
                spelled
            };
            out.push((
                v,
                Expanded {
                    name: var.name.clone(),
                    ty,
                    is_array,
                    uniform: false,
                },
            ));
        }
        // A pointer kept across a barrier may point at a thread's local, which each region
        // declares anew: refuse when a local's address is taken at all.
        let keeps_pointer = out.iter().any(|(v, _)| {
            matches!(
                self.vars[*v].cursor.ty().kind(),
                CXType_Pointer | CXType_Record | CXType_Elaborated | CXType_Typedef
            )
        });
        if keeps_pointer {
            for var in &self.vars {
                if var.cursor.storage_static_or_extern() {
                    continue;
                }
                let is_array = var.cursor.ty().kind() == CXType_ConstantArray;
                let is_ptr = var.cursor.ty().kind() == CXType_Pointer;
                for &u in &var.uses {
                    let ctx = text::use_context(src, u, var.name.len());
                    if takes_address(src, u, var.name.len(), is_ptr) || (is_array && !ctx.subscript)
                    {
                        let c = var.cursor;
                        return self.fail(
                            format!(
                                "the address of {} is taken and a pointer lives across a barrier",
                                var.name
                            ),
                            &c,
                        );
                    }
                }
            }
        }
        let uniform = self.uniform_kept(&out);
        for (v, e) in out.iter_mut() {
            e.uniform = uniform.contains(v);
        }
        // The declarations of expanded variables become assignments.
        let mut rewritten: HashSet<usize> = out.iter().map(|(v, _)| *v).collect();
        rewritten.extend((0..self.vars.len()).filter(|&v| self.vars[v].counter));
        self.rewrite_declarations(&rewritten)?;
        Ok(out)
    }

    /// See `Plan::known`. Walks the plan in order with, per kept variable, the expression its
    /// value is (None: unknown). A region that writes a variable only by `v = E;` statements
    /// of its own, E of indices, parameters and literals only, leaves it E (the last such);
    /// any other write leaves it unknown; a loop or `if` of the block that writes it inside
    /// makes it unknown within and after.
    fn known_values(
        &self,
        pieces: &[Piece],
        kept: &[(usize, Expanded)],
    ) -> HashMap<usize, Vec<(usize, Span)>> {
        let mut state: Vec<Option<Span>> = vec![None; kept.len()];
        let mut out = HashMap::new();
        self.known_walk(pieces, kept, &mut state, &mut out);
        out
    }

    fn known_walk(
        &self,
        pieces: &[Piece],
        kept: &[(usize, Expanded)],
        state: &mut Vec<Option<Span>>,
        out: &mut HashMap<usize, Vec<(usize, Span)>>,
    ) {
        for p in pieces {
            match p {
                Piece::Run { start, end } => {
                    let span = (*start, *end);
                    let mut reads = Vec::new();
                    for (k, (v, e)) in kept.iter().enumerate() {
                        if e.is_array || e.uniform {
                            state[k] = None;
                            continue;
                        }
                        let inside: Vec<usize> = self.vars[*v]
                            .uses
                            .iter()
                            .copied()
                            .filter(|&u| u >= span.0 && u < span.1)
                            .collect();
                        let writes = self.writes_of(*v, span);
                        if writes.is_empty() {
                            if let (Some(x), false) = (state[k], inside.is_empty()) {
                                reads.push((k, x));
                            }
                            continue;
                        }
                        state[k] = self.simple_writes(*v, &writes);
                    }
                    if !reads.is_empty() {
                        out.insert(*start, reads);
                    }
                }
                Piece::Shuffle { stmt, val, .. } => {
                    for (k, (v, _)) in kept.iter().enumerate() {
                        if !self.writes_of(*v, *stmt).is_empty()
                            || !self.writes_of(*v, *val).is_empty()
                        {
                            state[k] = None;
                        }
                    }
                }
                Piece::Barrier { .. } => {}
                Piece::Scope(ps) => self.known_walk(ps, kept, state, out),
                Piece::If {
                    cond, then, els, ..
                } => {
                    let mut spans = vec![*cond];
                    spans.extend(Self::spans_of(then));
                    if let Some(e) = els {
                        spans.extend(Self::spans_of(e));
                    }
                    self.forget_written(kept, state, &spans);
                    let mut s1 = state.clone();
                    self.known_walk(then, kept, &mut s1, out);
                    if let Some(e) = els {
                        let mut s2 = state.clone();
                        self.known_walk(e, kept, &mut s2, out);
                    }
                }
                Piece::Loop {
                    init,
                    cond,
                    inc,
                    body,
                    ..
                } => {
                    let mut spans: Vec<Span> =
                        [init, cond, inc].iter().filter_map(|x| **x).collect();
                    spans.extend(Self::spans_of(body));
                    self.forget_written(kept, state, &spans);
                    let mut s1 = state.clone();
                    self.known_walk(body, kept, &mut s1, out);
                }
            }
        }
    }

    /// Every span of text a plan's pieces run (regions, conditions, loop headers).
    fn spans_of(pieces: &[Piece]) -> Vec<Span> {
        let mut out = Vec::new();
        for p in pieces {
            match p {
                Piece::Run { start, end } => out.push((*start, *end)),
                Piece::Shuffle { stmt, val, .. } => {
                    out.push(*stmt);
                    out.push(*val);
                }
                Piece::Barrier { .. } => {}
                Piece::Scope(ps) => out.extend(Self::spans_of(ps)),
                Piece::If {
                    cond, then, els, ..
                } => {
                    out.push(*cond);
                    out.extend(Self::spans_of(then));
                    if let Some(e) = els {
                        out.extend(Self::spans_of(e));
                    }
                }
                Piece::Loop {
                    init,
                    cond,
                    inc,
                    body,
                    ..
                } => {
                    out.extend([init, cond, inc].iter().filter_map(|x| **x));
                    out.extend(Self::spans_of(body));
                }
            }
        }
        out
    }

    /// Unknown: the kept variables written in any of `spans`.
    fn forget_written(
        &self,
        kept: &[(usize, Expanded)],
        state: &mut [Option<Span>],
        spans: &[Span],
    ) {
        for (k, (v, _)) in kept.iter().enumerate() {
            if spans.iter().any(|s| !self.writes_of(*v, *s).is_empty()) {
                state[k] = None;
            }
        }
    }

    /// Where variable `v` is written in `span` (its declaration counts).
    fn writes_of(&self, v: usize, span: Span) -> Vec<usize> {
        let var = &self.vars[v];
        let mut w: Vec<usize> = var
            .uses
            .iter()
            .copied()
            .filter(|&u| u >= span.0 && u < span.1)
            .filter(|&u| {
                let c = text::use_context(self.src, u, var.name.len());
                c.writes || c.address
            })
            .collect();
        if let Pos::Main(o) = var.cursor.location() {
            if o >= span.0 && o < span.1 {
                w.push(o);
            }
        }
        w.sort();
        w
    }

    /// The value `v` has after writes at `writes` (sorted), if each is a statement of its
    /// region of its own, `v = E;` or `T v = E;`, E of indices, parameters and literals.
    fn simple_writes(&self, v: usize, writes: &[usize]) -> Option<Span> {
        let src = self.src;
        let var = &self.vars[v];
        let top = |o: usize| {
            self.run_stmts.values().flatten().find(
                |s| matches!((s.start(), s.end()), (Pos::Main(a), Pos::Main(b)) if o >= a && o < b),
            )
        };
        let mut last = None;
        for &u in writes {
            let s = top(u)?;
            let decl = matches!(var.cursor.location(), Pos::Main(o) if o == u);
            let value = if decl {
                if s.kind() != CXCursor_DeclStmt {
                    return None;
                }
                let init = var.cursor.children().last().copied()?;
                if !(100..200).contains(&init.kind()) {
                    return None;
                }
                let end = text::scan_top(src, u, src.len(), |i| src[i] == b';' || src[i] == b',')?;
                let eq = text::scan_top(src, u, end, |i| {
                    src[i] == b'=' && src.get(i + 1) != Some(&b'=')
                })?;
                (init, (eq + 1, end))
            } else {
                let e = strip_parens(s);
                if e.kind() != CXCursor_BinaryOperator {
                    return None;
                }
                let ch = e.children();
                let [l, r] = ch.as_slice() else { return None };
                let l = strip_parens(l);
                if l.kind() != CXCursor_DeclRefExpr
                    || !matches!(l.location(), Pos::Main(o) if o == u)
                {
                    return None;
                }
                let after = text::skip_blank(src, u + var.name.len());
                if src.get(after) != Some(&b'=') || src.get(after + 1) == Some(&b'=') {
                    return None;
                }
                let (Pos::Main(_), Pos::Main(se)) = (r.start(), s.end()) else {
                    return None;
                };
                // E: from after '=' to the statement's end (before its ';').
                let semi = text::scan_top(src, after + 1, src.len(), |i| src[i] == b';')?;
                if semi + 1 < se {
                    return None;
                }
                (*r, (after + 1, semi))
            };
            if !self.index_expr(&value.0) {
                return None;
            }
            last = Some(value.1);
        }
        last
    }

    /// An expression of the thread's and block's indices, the parameters, enumerators and
    /// literals only (no memory, no call, no write): the same wherever it is evaluated.
    fn index_expr(&self, e: &Cursor) -> bool {
        let src = self.src;
        let lp = self.params[self.nparams + 4];
        std::iter::once(*e)
            .chain(e.descendants())
            .all(|d| match d.kind() {
                CXCursor_DeclRefExpr => d.referenced().is_some_and(|r| {
                    !r.same(&lp) && (self.params.iter().any(|p| p.same(&r)) || is_constant(&r))
                }),
                CXCursor_MemberRefExpr => dot_member(src, &d),
                CXCursor_UnaryOperator => {
                    let op = operator(src, &d);
                    !op.is_empty() && op != b"*" && op != b"&" && !writes_operand(op)
                }
                CXCursor_BinaryOperator => !writes_operand(operator(src, &d)),
                CXCursor_IntegerLiteral
                | CXCursor_FloatingLiteral
                | CXCursor_CharacterLiteral
                | CXCursor_ParenExpr
                | CXCursor_ConditionalOperator
                | CXCursor_CStyleCastExpr
                | CXCursor_UnexposedExpr
                | CXCursor_TypeRef
                | CXCursor_UnaryExpr => true,
                _ => false,
            })
    }

    /// The kept scalars every thread of a block holds the same value of (MCUDA's uniform
    /// variables; `from = 1 - from` in a scan that swaps buffers): each is written only by
    /// statements of regions that every thread runs (a region's own statements, not inside an
    /// `if` or a loop): its declaration, `v = E;`, `v op= E;`, `v++;`, where E reads only
    /// parameters, the block's indices, block-level counters and such variables, no memory.
    /// Kept once for the block, a region's loads of it are loop invariants and vectorise.
    fn uniform_kept(&self, kept: &[(usize, Expanded)]) -> HashSet<usize> {
        let src = self.src;
        let top: Vec<(Span, Cursor)> = self
            .run_stmts
            .values()
            .flatten()
            .filter_map(|s| match (s.start(), s.end()) {
                (Pos::Main(a), Pos::Main(b)) => Some(((a, b), *s)),
                _ => None,
            })
            .collect();
        let top_stmt = |o: usize| {
            top.iter()
                .find(|(sp, _)| o >= sp.0 && o < sp.1)
                .map(|x| x.1)
        };
        let mut set: HashSet<usize> = kept
            .iter()
            .filter(|(v, e)| {
                let t = self.vars[*v].cursor.ty().canonical().kind();
                !e.is_array
                    && matches!(
                        t,
                        CXType_Int
                            | CXType_UInt
                            | CXType_Long
                            | CXType_ULong
                            | CXType_LongLong
                            | CXType_ULongLong
                            | CXType_Short
                            | CXType_UShort
                            | CXType_Char_S
                            | CXType_Char_U
                            | CXType_SChar
                            | CXType_UChar
                            | CXType_Bool
                            | CXType_Float
                            | CXType_Double
                            | CXType_Enum
                    )
            })
            .map(|(v, _)| *v)
            .collect();
        loop {
            let mut drop = Vec::new();
            for &v in &set {
                let var = &self.vars[v];
                let len = var.name.len();
                let mut ok = true;
                // Its declaration: a region's own statement, its initializer (if any) uniform.
                if let Pos::Main(o) = var.cursor.location() {
                    ok &= top_stmt(o).is_some_and(|s| s.kind() == CXCursor_DeclStmt);
                    let init = var.cursor.children().last().copied();
                    let end =
                        text::scan_top(src, o, src.len(), |i| src[i] == b';' || src[i] == b',')
                            .unwrap_or(o);
                    let has_init = text::scan_top(src, o, end, |i| {
                        src[i] == b'=' && src.get(i + 1) != Some(&b'=')
                    })
                    .is_some();
                    if has_init {
                        ok &= init.is_some_and(|e| {
                            (100..200).contains(&e.kind()) && self.uniform_with(&e, &set)
                        });
                    }
                } else {
                    ok = false;
                }
                for &u in &var.uses {
                    if !ok {
                        break;
                    }
                    if !text::use_context(src, u, len).writes {
                        continue;
                    }
                    // The whole statement is the write, its target this variable.
                    let Some(s) = top_stmt(u) else {
                        ok = false;
                        break;
                    };
                    let e = strip_parens(&s);
                    let target = e.children().first().map(strip_parens);
                    ok = matches!(
                        e.kind(),
                        CXCursor_BinaryOperator
                            | CXCursor_CompoundAssignOperator
                            | CXCursor_UnaryOperator
                    ) && target.is_some_and(|t| {
                        t.kind() == CXCursor_DeclRefExpr
                            && matches!(t.location(), Pos::Main(l) if l == u)
                    }) && self.uniform_with(&e, &set);
                }
                if !ok {
                    drop.push(v);
                }
            }
            if drop.is_empty() {
                return set;
            }
            for v in drop {
                set.remove(&v);
            }
        }
    }

    /// As `uniform_expr_as` (writes allowed), the variables of `set` counted as uniform too.
    fn uniform_with(&self, e: &Cursor, set: &HashSet<usize>) -> bool {
        let thread = self.params[self.nparams];
        let lp = self.params[self.nparams + 4];
        std::iter::once(*e).chain(e.descendants()).all(|d| match d.kind() {
            CXCursor_DeclRefExpr => d.referenced().is_some_and(|r| {
                !r.same(&thread)
                    && !r.same(&lp)
                    && (self.params.iter().any(|p| p.same(&r))
                        || is_constant(&r)
                        || self
                            .var_of(&r)
                            .is_some_and(|v| self.vars[v].block_level || set.contains(&v)))
            }),
            CXCursor_MemberRefExpr => dot_member(self.src, &d),
            CXCursor_UnaryOperator => {
                matches!(d.start(), Pos::Main(o) if !matches!(self.src.get(o), Some(b'*' | b'&')))
            }
            CXCursor_IntegerLiteral
            | CXCursor_FloatingLiteral
            | CXCursor_CharacterLiteral
            | CXCursor_ParenExpr
            | CXCursor_BinaryOperator
            | CXCursor_CompoundAssignOperator
            | CXCursor_ConditionalOperator
            | CXCursor_CStyleCastExpr
            | CXCursor_UnexposedExpr
            | CXCursor_TypeRef
            | CXCursor_UnaryExpr => true,
            _ => false,
        })
    }

    /// Rewrites the declaration statements that declare expanded variables.
    fn rewrite_declarations(&mut self, expanded: &HashSet<usize>) -> Result<(), Fallback> {
        let src = self.src;
        // Group by declaration statement: the variables' starts (shared by one statement).
        let mut stmts: HashMap<usize, Vec<usize>> = HashMap::new();
        for (v, var) in self.vars.iter().enumerate() {
            if !var.in_region {
                continue;
            }
            if let Some(s) = var.stmt {
                stmts.entry(s).or_default().push(v);
            }
        }
        for (start, vars) in stmts {
            if !vars.iter().any(|v| expanded.contains(v)) {
                continue;
            }
            let Some(semi) = text::scan_top(src, start, src.len(), |i| src[i] == b';') else {
                let c = self.vars[vars[0]].cursor;
                return self.fail("a declaration without its ';'", &c);
            };
            let commas = text::split_top(src, start, semi, b',');
            let mut seg_bounds = Vec::new();
            let mut a = start;
            for &c in &commas {
                seg_bounds.push((a, c));
                a = c + 1;
            }
            seg_bounds.push((a, semi));
            let mut vars = vars.clone();
            vars.sort_by_key(|&v| match self.vars[v].cursor.location() {
                Pos::Main(o) => o,
                Pos::Elsewhere => usize::MAX,
            });
            if seg_bounds.len() != vars.len() {
                let c = self.vars[vars[0]].cursor;
                return self.fail("a declaration region form cannot read", &c);
            }
            let mut out = String::new();
            for (k, &v) in vars.iter().enumerate() {
                let var = &self.vars[v];
                let (Pos::Main(name_at), Pos::Main(spelled)) =
                    (var.cursor.location(), var.cursor.spelled_location())
                else {
                    let c = var.cursor;
                    return self.fail("a declaration written by a macro", &c);
                };
                if name_at != spelled || text::ident_at(src, name_at) != var.name {
                    let c = var.cursor;
                    return self.fail("a declaration written by a macro", &c);
                }
                let (_, seg_end) = seg_bounds[k];
                let after_name = name_at + var.name.len();
                let eq = text::scan_top(src, after_name, seg_end, |i| {
                    src[i] == b'=' && src.get(i + 1) != Some(&b'=')
                });
                let init = eq.map(|e| String::from_utf8_lossy(&src[e + 1..seg_end]).into_owned());
                let between = text::skip_blank(src, after_name);
                if eq.is_none() && between < seg_end && src[between] != b'[' {
                    let c = var.cursor;
                    return self.fail(
                        "a declaration with a constructor's parentheses or braces",
                        &c,
                    );
                }
                if expanded.contains(&v) {
                    if let Some(init) = init {
                        if var.cursor.ty().kind() == CXType_ConstantArray {
                            let c = var.cursor;
                            return self.fail(
                                format!(
                                    "the array {} lives across a barrier and has an initializer",
                                    var.name
                                ),
                                &c,
                            );
                        }
                        out.push_str(&format!("{} ={};", var.name, init));
                    }
                } else {
                    let ty = var.cursor.ty().spelling();
                    match init {
                        Some(init) => {
                            out.push_str(&format!("__typeof__({ty}) {} ={};", var.name, init))
                        }
                        None => out.push_str(&format!("__typeof__({ty}) {};", var.name)),
                    }
                }
            }
            if out.is_empty() {
                out.push(';');
            }
            let newlines = src[start..semi + 1].iter().filter(|&&c| c == b'\n').count();
            out.push_str(&"\n".repeat(newlines));
            self.edits.push(Edit {
                start,
                end: semi + 1,
                with: EditKind::Text(out),
            });
        }
        Ok(())
    }

    /// The variables that can be recomputed instead of kept: with the initializer (its span),
    /// and the recomputed variables it reads.
    fn rematerializable(&self) -> Vec<(usize, Remat, Vec<usize>)> {
        let src = self.src;
        let mut out: Vec<(usize, Remat, Vec<usize>)> = Vec::new();
        let mut names: HashMap<&str, usize> = HashMap::new();
        for v in &self.vars {
            *names.entry(v.name.as_str()).or_default() += 1;
        }
        let mut order: Vec<usize> = (0..self.vars.len()).collect();
        order.sort_by_key(|&v| match self.vars[v].cursor.location() {
            Pos::Main(o) => o,
            Pos::Elsewhere => usize::MAX,
        });
        'vars: for v in order {
            let var = &self.vars[v];
            if !var.in_region
                || var.block_level
                || var.cursor.storage_static_or_extern()
                || names[var.name.as_str()] > 1
            {
                continue;
            }
            let ty = var.cursor.ty();
            if !matches!(
                ty.kind(),
                CXType_Int
                    | CXType_UInt
                    | CXType_Long
                    | CXType_ULong
                    | CXType_LongLong
                    | CXType_ULongLong
                    | CXType_Short
                    | CXType_UShort
                    | CXType_Float
                    | CXType_Double
                    | CXType_Bool
                    | CXType_Char_S
                    | CXType_Char_U
                    | CXType_SChar
                    | CXType_UChar
                    | CXType_Pointer
                    | CXType_Typedef
                    | CXType_Elaborated
            ) {
                continue;
            }
            let Pos::Main(name_at) = var.cursor.location() else {
                continue;
            };
            // Never changed after its declaration.
            let is_ptr = var.cursor.ty().kind() == CXType_Pointer;
            if var.uses.iter().any(|&u| {
                text::use_context(src, u, var.name.len()).writes
                    || takes_address(src, u, var.name.len(), is_ptr)
            }) {
                continue;
            }
            // Its initializer: the last child, an expression, after a top-level '='.
            let Some(init) = var.cursor.children().last().copied() else {
                continue;
            };
            if !(100..200).contains(&init.kind()) {
                continue;
            }
            let Pos::Main(init_start) = init.start() else {
                continue;
            };
            let Some(end) = text::scan_top(src, name_at, src.len(), |i| {
                src[i] == b';' || src[i] == b','
            }) else {
                continue;
            };
            let eq = text::scan_top(src, name_at, end, |i| {
                src[i] == b'=' && src.get(i + 1) != Some(&b'=')
            });
            match eq {
                Some(e) if e < init_start => {}
                _ => continue,
            }
            let mut deps = Vec::new();
            let mut uniform = true;
            for d in std::iter::once(init).chain(init.descendants()) {
                match d.kind() {
                    CXCursor_IntegerLiteral
                    | CXCursor_FloatingLiteral
                    | CXCursor_CharacterLiteral
                    | CXCursor_ParenExpr
                    | CXCursor_ConditionalOperator
                    | CXCursor_CStyleCastExpr
                    | CXCursor_UnexposedExpr
                    | CXCursor_TypeRef
                    | CXCursor_UnaryExpr
                    | CXCursor_CXXBoolLiteralExpr
                    | CXCursor_CXXStaticCastExpr => {}
                    // The block's own values: the same for every thread of it (the dynamic
                    // shared memory's address, the dimensions).
                    CXCursor_CallExpr
                        if d.referenced().is_some_and(|f| {
                            matches!(
                                f.spelling().as_str(),
                                "birenSharedMemory"
                                    | "birenBlockDim"
                                    | "birenGridDim"
                                    | "birenBlockIdx"
                                    | "birenKernelCtxFast"
                            )
                        }) => {}
                    CXCursor_UnaryOperator => {
                        let op = operator(src, &d);
                        if op.is_empty() || op == b"*" || op == b"&" || writes_operand(op) {
                            continue 'vars;
                        }
                    }
                    CXCursor_BinaryOperator => {
                        if writes_operand(operator(src, &d)) {
                            continue 'vars;
                        }
                    }
                    CXCursor_MemberRefExpr if !dot_member(src, &d) => continue 'vars,
                    CXCursor_MemberRefExpr => {}
                    CXCursor_DeclRefExpr => {
                        let Some(r) = d.referenced() else {
                            continue 'vars;
                        };
                        if is_constant(&r) {
                            continue;
                        }
                        if r.kind() == CXCursor_FunctionDecl
                            && matches!(
                                r.spelling().as_str(),
                                "birenSharedMemory"
                                    | "birenBlockDim"
                                    | "birenGridDim"
                                    | "birenBlockIdx"
                                    | "birenKernelCtxFast"
                            )
                        {
                            continue;
                        }
                        if let Some(p) = self.params.iter().position(|q| q.same(&r)) {
                            if p == self.nparams + 4 {
                                continue 'vars;
                            }
                            if p == self.nparams {
                                uniform = false;
                            }
                            continue;
                        }
                        match self
                            .var_of(&r)
                            .and_then(|w| out.iter().position(|o| o.0 == w))
                        {
                            Some(k) => {
                                uniform &= out[k].1.uniform;
                                deps.push(k)
                            }
                            None => continue 'vars,
                        }
                    }
                    _ => continue 'vars,
                }
            }
            let Some(eq) = eq else { continue };
            // A value of one block is computed before the block's statements: only where that
            // cannot fault when the declaration itself would not be reached (a division after
            // `if (n == 0) return;`), i.e. a division is moved only from the body's top level
            // with no return before it.
            if uniform && self.may_fault(&init) && !self.reached_by_all(&var.cursor) {
                uniform = false;
            }
            let spelled = ty.spelling();
            let t = if ty.is_const() {
                match spelled.strip_prefix("const ") {
                    Some(t) => t.to_string(),
                    None => continue,
                }
            } else {
                spelled
            };
            out.push((
                v,
                Remat {
                    name: var.name.clone(),
                    ty: t,
                    init: (eq + 1, end),
                    decl: name_at,
                    uniform,
                },
                deps,
            ));
        }
        out
    }

    /// An integer division or remainder in `e` (by zero it faults; a float one does not).
    fn may_fault(&self, e: &Cursor) -> bool {
        std::iter::once(*e).chain(e.descendants()).any(|d| {
            matches!(
                d.kind(),
                CXCursor_BinaryOperator | CXCursor_CompoundAssignOperator
            ) && matches!(operator(self.src, &d), b"/" | b"%" | b"/=" | b"%=")
                && !matches!(
                    d.ty().canonical().kind(),
                    CXType_Float | CXType_Double | CXType_LongDouble | CXType_Half | CXType_Float16
                )
        })
    }

    /// A declaration every thread of the block reaches: a statement of the body's top level,
    /// no `return` before it.
    fn reached_by_all(&self, decl: &Cursor) -> bool {
        let Pos::Main(at) = decl.start() else {
            return false;
        };
        let top = self.body.children().iter().any(|c| {
            c.kind() == CXCursor_DeclStmt
                && matches!((c.start(), c.end()), (Pos::Main(a), Pos::Main(b)) if at >= a && at < b)
        });
        top && !self
            .body
            .descendants()
            .iter()
            .any(|d| d.kind() == CXCursor_ReturnStmt && matches!(d.start(), Pos::Main(o) if o < at))
    }

    /// Atomics whose address is provably in the block's shared memory (a `BIREN_SHARED`
    /// variable, or a pointer recomputed from `birenSharedMemory()`), called in a region: one
    /// OS thread runs the whole block in region form, so no other thread can touch that memory
    /// meanwhile and a plain read-modify-write does (`birenRegionAtomic*_`, emit.rs). An
    /// atomic on any other address (global memory: other blocks run on other cores) stays
    /// atomic. Returns where each rewritten call's name is; the edits rename them.
    fn shared_atomics(
        &mut self,
        body: &Cursor,
        remat: &[(usize, Remat, Vec<usize>)],
    ) -> Vec<usize> {
        let src = self.src;
        // Pointers into shared memory that are recomputed per region (never changed).
        let mut shared_ptrs: HashSet<usize> = HashSet::new();
        for (v, _, _) in remat {
            let Some(init) = self.vars[*v].cursor.children().last().copied() else {
                continue;
            };
            if self.vars[*v].cursor.ty().kind() == CXType_Pointer
                && self.ptr_shared(&init, &shared_ptrs, true)
            {
                shared_ptrs.insert(*v);
            }
        }
        let mut out = Vec::new();
        for d in body.descendants() {
            if d.kind() != CXCursor_CallExpr {
                continue;
            }
            // C's generic atomics are macros over _Generic: a call with no callee libclang
            // names; its name is the macro's, where the call starts.
            if d.referenced()
                .is_some_and(|f| !f.spelling().starts_with("birenAtomic"))
            {
                continue;
            }
            let Pos::Main(at) = d.start() else { continue };
            if out.contains(&at) {
                continue;
            }
            if !self.regions.iter().any(|r| at >= r.0 && at < r.1) {
                continue;
            }
            let written = text::ident_at(src, at);
            let Some(op) = atomic_op(written) else {
                continue;
            };
            let args: Vec<Cursor> = d.children().into_iter().skip(1).collect();
            let want = if op == "CAS" { 3 } else { 2 };
            if args.len() != want || !self.ptr_shared(&args[0], &shared_ptrs, false) {
                continue;
            }
            self.edits.push(Edit {
                start: at,
                end: at + written.len(),
                with: EditKind::Text(format!("birenRegionAtomic{op}_")),
            });
            out.push(at);
        }
        out
    }

    /// A `BIREN_SHARED` variable of the kernel.
    fn is_shared_var(&self, r: &Cursor) -> bool {
        let Some(v) = self.var_of(r) else {
            return false;
        };
        let c = self.vars[v].cursor;
        // Declared by a statement (moved to the function's top) that starts with BIREN_SHARED.
        let Pos::Main(o) = c.location() else {
            return false;
        };
        c.storage_static_or_extern()
            && self.hoisted.iter().any(|h| {
                o >= h.0
                    && o < h.1
                    && text::ident_at(self.src, text::skip_blank(self.src, h.0)) == "BIREN_SHARED"
            })
    }

    /// Whether expression `e`'s value points into the block's shared memory; `alloc`: a call
    /// of `birenSharedMemory()` counts (a recomputed pointer's initializer).
    fn ptr_shared(&self, e: &Cursor, ptrs: &HashSet<usize>, alloc: bool) -> bool {
        let e = strip_expr(e);
        let is_ptr = |c: &Cursor| c.ty().kind() == CXType_Pointer;
        match e.kind() {
            CXCursor_DeclRefExpr => e.referenced().is_some_and(|r| {
                self.var_of(&r).is_some_and(|v| ptrs.contains(&v))
                    || (is_array(&e) && self.is_shared_var(&r))
            }),
            CXCursor_CallExpr => {
                alloc
                    && e.referenced()
                        .is_some_and(|f| f.spelling() == "birenSharedMemory")
            }
            CXCursor_CStyleCastExpr => match e.children().last() {
                Some(c) => self.ptr_shared(c, ptrs, alloc),
                None => false,
            },
            // `&lvalue`: the only unary operator giving a pointer from a non-pointer.
            CXCursor_UnaryOperator => {
                let ch = e.children();
                ch.len() == 1
                    && is_ptr(&e)
                    && !is_ptr(&ch[0])
                    && !is_array(&ch[0])
                    && self.lval_shared(&ch[0], ptrs)
            }
            // pointer + integer, pointer - integer
            CXCursor_BinaryOperator => {
                let ch = e.children();
                // A pointer from a shared pointer and an integer is `+` or `-` (an assignment
                // cannot change a shared array or a recomputed pointer).
                ch.len() == 2
                    && is_ptr(&e)
                    && self.ptr_shared(&ch[0], ptrs, alloc)
                    && is_integer(&ch[1])
            }
            _ => false,
        }
    }

    /// Whether lvalue `e` is stored in the block's shared memory.
    fn lval_shared(&self, e: &Cursor, ptrs: &HashSet<usize>) -> bool {
        let e = strip_expr(e);
        match e.kind() {
            CXCursor_DeclRefExpr => e.referenced().is_some_and(|r| self.is_shared_var(&r)),
            CXCursor_ArraySubscriptExpr => {
                let ch = e.children();
                if ch.len() != 2 || !is_integer(&ch[1]) {
                    return false;
                }
                let base = strip_expr(&ch[0]);
                if is_array(&base) {
                    self.lval_shared(&base, ptrs)
                } else {
                    self.ptr_shared(&base, ptrs, false)
                }
            }
            CXCursor_MemberRefExpr => {
                let Pos::Main(mut j) = e.spelled_location() else {
                    return false;
                };
                while j > 0 && (self.src[j - 1] as char).is_ascii_whitespace() {
                    j -= 1;
                }
                j > 0
                    && self.src[j - 1] == b'.'
                    && e.children()
                        .first()
                        .is_some_and(|b| self.lval_shared(b, ptrs))
            }
            _ => false,
        }
    }

    /// Per region and checked condition, the recomputed variables to declare there.
    fn remat_uses(
        &self,
        remat: &[(usize, Remat, Vec<usize>)],
        guards: &HashMap<usize, Guard>,
        splits: &HashMap<usize, Split>,
    ) -> HashMap<usize, Vec<usize>> {
        let mut out: HashMap<usize, Vec<usize>> = HashMap::new();
        let guard_conds: Vec<Span> = guards
            .values()
            .map(|g| g.cond)
            .chain(splits.values().map(|s| s.cond))
            .collect();
        let spans: Vec<Span> = self
            .regions
            .iter()
            .chain(&self.checked_conds)
            .chain(&guard_conds)
            .copied()
            .collect();
        for span in spans {
            let inside = |o: usize| o >= span.0 && o < span.1;
            let mut need: Vec<bool> = vec![false; remat.len()];
            for (k, (v, _, _)) in remat.iter().enumerate() {
                if self.vars[*v].uses.iter().any(|&u| inside(u)) {
                    need[k] = true;
                }
            }
            // What they read, back to front (a variable reads only earlier ones).
            for k in (0..remat.len()).rev() {
                if need[k] {
                    for &d in &remat[k].2 {
                        need[d] = true;
                    }
                }
            }
            let declared_here = |k: usize| matches!(self.vars[remat[k].0].cursor.location(), Pos::Main(o) if inside(o));
            // Uniform ones are the block's, declared before the regions.
            let list: Vec<usize> = (0..remat.len())
                .filter(|&k| need[k] && !declared_here(k) && !remat[k].1.uniform)
                .collect();
            if !list.is_empty() {
                out.insert(span.0, list);
            }
        }
        out
    }

    fn uses_by_region(&self, expanded: &[(usize, Expanded)]) -> (RegionUses, CondUses) {
        let src = self.src;
        let mut uses: HashMap<usize, Vec<(usize, bool)>> = HashMap::new();
        let mut cond_uses: HashMap<usize, Vec<usize>> = HashMap::new();
        for (k, (v, _)) in expanded.iter().enumerate() {
            let var = &self.vars[*v];
            let whole = matches!(
                var.cursor.ty().kind(),
                CXType_ConstantArray | CXType_Record | CXType_Elaborated
            );
            let mut offs: Vec<(usize, bool)> = var
                .uses
                .iter()
                .map(|&u| {
                    let c = text::use_context(src, u, var.name.len());
                    (u, c.writes || (whole && c.subscript))
                })
                .collect();
            if let Pos::Main(o) = var.cursor.location() {
                offs.push((o, true));
            }
            for (o, writes) in offs {
                if let Some(r) = self.regions.iter().find(|r| o >= r.0 && o < r.1) {
                    let e = uses.entry(r.0).or_default();
                    match e.iter_mut().find(|x| x.0 == k) {
                        Some(x) => x.1 |= writes,
                        None => e.push((k, writes)),
                    }
                }
                if let Some(c) = self.checked_conds.iter().find(|c| o >= c.0 && o < c.1) {
                    let e = cond_uses.entry(c.0).or_default();
                    if !e.contains(&k) {
                        e.push(k);
                    }
                }
            }
        }
        (uses, cond_uses)
    }
}

/// The operation of an atomic's name as written (`birenAtomicAdd`, `birenAtomicAddUint`, ...):
/// the part `birenRegionAtomic{op}_` (emit.rs) implements; None for any other name.
fn atomic_op(written: &str) -> Option<&'static str> {
    let rest = written.strip_prefix("birenAtomic")?;
    for op in [
        "Add", "Sub", "Exch", "Min", "Max", "Inc", "Dec", "CAS", "And", "Or", "Xor",
    ] {
        if let Some(ty) = rest.strip_prefix(op) {
            if matches!(ty, "" | "Int" | "Uint" | "Ull" | "Float" | "Double") {
                return Some(op);
            }
        }
    }
    None
}

/// `e` without parentheses and implicit conversions.
fn strip_expr(e: &Cursor) -> Cursor {
    let mut e = *e;
    while matches!(e.kind(), CXCursor_ParenExpr | CXCursor_UnexposedExpr) {
        let ch = e.children();
        if ch.len() != 1 {
            break;
        }
        e = ch[0];
    }
    e
}

fn is_array(e: &Cursor) -> bool {
    matches!(
        e.ty().kind(),
        CXType_ConstantArray | CXType_IncompleteArray | CXType_VariableArray
    )
}

fn is_integer(e: &Cursor) -> bool {
    let mut t = e.ty();
    // A typedef (size_t) or elaborated name: its canonical type.
    if matches!(t.kind(), CXType_Typedef | CXType_Elaborated) {
        t = t.canonical();
    }
    matches!(
        t.kind(),
        CXType_Int
            | CXType_UInt
            | CXType_Long
            | CXType_ULong
            | CXType_LongLong
            | CXType_ULongLong
            | CXType_Short
            | CXType_UShort
            | CXType_Char_S
            | CXType_Char_U
            | CXType_SChar
            | CXType_UChar
            | CXType_Bool
    )
}

/// Whether the use of a variable at `u` (its name `len` long) takes the variable's address:
/// `&v`, not `&p[i]` or `&p->m` of a pointer `p` (the address of what it points at).
fn takes_address(src: &[u8], u: usize, len: usize, is_ptr: bool) -> bool {
    if !text::use_context(src, u, len).address {
        return false;
    }
    let rest = &src[text::skip_blank(src, u + len).min(src.len())..];
    !(is_ptr && (rest.starts_with(b"[") || rest.starts_with(b"->")))
}

/// `e` without parentheses.
fn strip_parens(e: &Cursor) -> Cursor {
    let mut e = *e;
    while matches!(e.kind(), CXCursor_ParenExpr | CXCursor_UnexposedExpr) {
        let ch = e.children();
        if ch.len() != 1 {
            break;
        }
        e = ch[0];
    }
    e
}
