//! Writing a kernel's region form: a block entry (`birenKernelBlocks_t`) that runs whole blocks,
//! each region a loop over the block's threads, and its registration. The user's statements
//! are copied as written, under `#line` directives, so diagnostics point at the user's file.

use crate::kernel::{EditKind, Kernel, LoopKind, Piece, Plan, Span};
use crate::text;
use std::fmt::Write;

/// The translated unit: the user's text, each region-form entry inserted after its kernel's
/// closing brace, `#line` restoring the user's numbering after it.
pub fn unit(src: &[u8], file: &str, kernels: &[Kernel]) -> String {
    let file_lit = c_string(file);
    let mut out = String::new();
    let _ = writeln!(out, "#line 1 {file_lit}");
    let mut at = 0;
    for k in kernels {
        let Ok(plan) = &k.plan else { continue };
        let after = k.close + 1;
        if let Some(t) = &k.template {
            // A template's region form is registered when the template is instantiated: its
            // per-thread function (which every launch instantiates through the stub) names the
            // registration, declared before it and defined with the region entry.
            out.push_str(&String::from_utf8_lossy(&src[at..t.start]));
            let _ = write!(
                out,
                "{} struct {}_biren_rreg_ {{ static const birenError_t r; }}; ",
                t.head, k.name
            );
            out.push_str(&String::from_utf8_lossy(&src[t.start..k.open + 1]));
            let _ = write!(out, " (void)&{}_biren_rreg_{}::r;", k.name, t.args);
            at = k.open + 1;
        }
        out.push_str(&String::from_utf8_lossy(&src[at..after]));
        out.push('\n');
        out.push_str(&entry(src, &file_lit, k, plan));
        let (line, col) = text::line_col(src, after);
        let _ = writeln!(out, "#line {line} {file_lit}");
        out.push_str(&" ".repeat(col - 1));
        at = after;
    }
    out.push_str(&String::from_utf8_lossy(&src[at..]));
    out
}

pub fn c_string(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

struct Writer<'a> {
    src: &'a [u8],
    file: &'a str,
    k: &'a Kernel,
    plan: &'a Plan,
    out: String,
    /// Regions and checks written so far (their labels and names).
    n: usize,
    /// The thread loop being written may carry a dependence (a shared atomic made plain):
    /// no `ivdep`.
    serial: bool,
    /// A condition written as a constant in the region being written (`Plan::splits`).
    over: Option<(Span, &'static str)>,
}

/// The source lane of a warp shuffle in region form, by CUDA's rules as the fiber form applies
/// them (runtime `device/block/warp.rs`): the reading thread's own index when the lane is out
/// of reach, beyond the block's last thread, or of a thread that returned.
const SHUFFLE_HELPER: &str = "#ifndef BIREN_REGION_SHFL_
#define BIREN_REGION_SHFL_
static inline size_t birenRegionShflSrc_(size_t t, unsigned kind, unsigned p, unsigned width, size_t nt,
                                          const unsigned char *dead) {
  unsigned l = (unsigned)(t & 31u), seg = l & ~(width - 1u), lw = l & (width - 1u), s;
  size_t src;
  switch (kind) {
  case 0: s = seg + (p & (width - 1u)); break;
  case 1: if (p > lw) return t; s = l - p; break;
  case 2: if (p >= width || lw + p >= width) return t; s = l + p; break;
  default: s = l ^ p; if (s >= 32u || (s & ~(width - 1u)) > seg) return t; break;
  }
  src = (t & ~(size_t)31) + s;
  if (src >= nt || (dead && dead[src])) return t;
  return src;
}
/* A vote (op 5 ballot, 6 any, 7 all) of thread t's warp: among the lanes of mask that exist and
 * have not returned (CUDA's partial-warp rule), those whose value v[] is nonzero. */
static inline unsigned birenRegionVote_(const int *v, size_t t, unsigned mask, unsigned op, size_t nt,
                                        const unsigned char *dead) {
  size_t w = t & ~(size_t)31, i;
  unsigned need = 0, bits = 0;
  for (i = 0; i < 32 && w + i < nt; i++)
    if (!(dead && dead[w + i])) need |= 1u << i;
  need &= mask;
  for (i = 0; i < 32; i++)
    if ((need >> i & 1u) && v[w + i]) bits |= 1u << i;
  return op == 5u ? bits : op == 6u ? (unsigned)(bits != 0) : (unsigned)(bits == need);
}
#endif
";

/// CUDA's atomics on the block's shared memory as plain read-modify-writes (see
/// `Analysis::shared_atomics`): the old value, as the atomic returns it. The operands are
/// evaluated once, converted to the element's type as the atomic's parameters are.
const ATOMIC_HELPER: &str = "#ifndef BIREN_REGION_ATOMIC_
#define BIREN_REGION_ATOMIC_
#define birenRegionRmw_(p, v, new) __extension__({ __typeof__(&*(p)) biren_ap_ = (p); \\
  const __typeof__(*biren_ap_) biren_av_ = (v), biren_old_ = *biren_ap_; (void)biren_av_; \\
  *biren_ap_ = (new); biren_old_; })
#define birenRegionAtomicAdd_(p, v) birenRegionRmw_(p, v, biren_old_ + biren_av_)
#define birenRegionAtomicSub_(p, v) birenRegionRmw_(p, v, biren_old_ - biren_av_)
#define birenRegionAtomicExch_(p, v) birenRegionRmw_(p, v, biren_av_)
#define birenRegionAtomicMin_(p, v) birenRegionRmw_(p, v, biren_av_ < biren_old_ ? biren_av_ : biren_old_)
#define birenRegionAtomicMax_(p, v) birenRegionRmw_(p, v, biren_av_ > biren_old_ ? biren_av_ : biren_old_)
#define birenRegionAtomicAnd_(p, v) birenRegionRmw_(p, v, biren_old_ & biren_av_)
#define birenRegionAtomicOr_(p, v) birenRegionRmw_(p, v, biren_old_ | biren_av_)
#define birenRegionAtomicXor_(p, v) birenRegionRmw_(p, v, biren_old_ ^ biren_av_)
#define birenRegionAtomicInc_(p, v) birenRegionRmw_(p, v, biren_old_ >= biren_av_ ? 0 : biren_old_ + 1)
#define birenRegionAtomicDec_(p, v) \\
  birenRegionRmw_(p, v, (biren_old_ == 0 || biren_old_ > biren_av_) ? biren_av_ : biren_old_ - 1)
#define birenRegionAtomicCAS_(p, c, v) __extension__({ __typeof__(&*(p)) biren_ap_ = (p); \\
  const __typeof__(*biren_ap_) biren_ac_ = (c), biren_av_ = (v), biren_old_ = *biren_ap_; \\
  if (biren_old_ == biren_ac_) *biren_ap_ = biren_av_; biren_old_; })
#endif
";

fn entry(src: &[u8], file: &str, k: &Kernel, plan: &Plan) -> String {
    let mut w = Writer {
        src,
        file,
        k,
        plan,
        out: String::new(),
        n: 0,
        serial: false,
        over: None,
    };
    w.function();
    w.out
}

impl Writer<'_> {
    fn line_of(&self, off: usize) -> usize {
        text::line_col(self.src, off).0
    }

    /// `#line` for generated code: the kernel's own line.
    fn gen_line(&mut self) {
        let _ = writeln!(self.out, "#line {} {}", self.k.line, self.file);
    }

    /// The user's text `src[a..b]`, with the region's edits applied, under its own `#line`.
    fn user_text(&mut self, a: usize, b: usize, skip: usize) {
        self.user_text_as(a, b, skip, true)
    }

    /// As `user_text`; `cut_hoisted`: leave out the declarations moved to the function's top.
    fn user_text_as(&mut self, a: usize, b: usize, skip: usize, cut_hoisted: bool) {
        let (line, col) = text::line_col(self.src, a);
        let _ = writeln!(self.out, "#line {line} {}", self.file);
        self.out.push_str(&" ".repeat(col - 1));
        let mut edits: Vec<_> = self
            .plan
            .edits
            .iter()
            .filter(|e| e.start >= a && e.end <= b)
            .collect();
        let hoisted: Vec<Span> = self
            .plan
            .hoisted
            .iter()
            .copied()
            .filter(|h| cut_hoisted && h.0 >= a && h.1 <= b)
            .collect();
        edits.sort_by_key(|e| e.start);
        let mut marks: Vec<(usize, usize, String)> = Vec::new();
        for e in edits {
            let with = match &e.with {
                EditKind::Text(t) => t.clone(),
                EditKind::Return => format!(
                    "{{ biren_dead_[biren_t_] = 1; ++biren_ndead_; goto biren_skip_{skip}_; }}"
                ),
            };
            marks.push((e.start, e.end, with));
        }
        for h in hoisted {
            let nl = self.src[h.0..h.1].iter().filter(|&&c| c == b'\n').count();
            marks.push((h.0, h.1, "\n".repeat(nl)));
        }
        if let Some((c, v)) = self.over {
            if c.0 >= a && c.1 <= b {
                let nl = self.src[c.0..c.1].iter().filter(|&&ch| ch == b'\n').count();
                marks.push((c.0, c.1, format!("{v}{}", "\n".repeat(nl))));
            }
        }
        marks.sort_by_key(|m| m.0);
        let mut at = a;
        for (s, e, with) in marks {
            if s < at {
                continue;
            }
            self.out
                .push_str(&String::from_utf8_lossy(&self.src[at..s]));
            self.out.push_str(&with);
            at = e;
        }
        self.out
            .push_str(&String::from_utf8_lossy(&self.src[at..b]));
        self.out.push('\n');
        self.gen_line();
    }

    fn function(&mut self) {
        let name = &self.k.name;
        if !self.plan.shuffles.is_empty() {
            self.out.push_str(SHUFFLE_HELPER);
        }
        if !self.plan.block_atomics.is_empty() {
            self.out.push_str(ATOMIC_HELPER);
        }
        self.gen_line();
        let (head, targs) = match &self.k.template {
            Some(t) => (format!("{}\n", t.head), t.args.as_str()),
            None => (String::new(), ""),
        };
        self.out.push_str(&head);
        // GCC's -O2 vectorises only loops whose trip count is a known multiple of the vector
        // length; the thread loops' is the block's width, known at run time: the region entry
        // asks for the cost model -O3 uses.
        let _ = writeln!(
            self.out,
            "#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)\n\
             __attribute__((optimize(\"vect-cost-model=dynamic\")))\n\
             #endif\n\
             static BIREN_ENTRY_ unsigned {name}_biren_region_(birenKernelCtx *biren_ctx_, void **biren_args_, unsigned biren_count_) {{"
        );
        for (i, (p, ty)) in self.k.params.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "  __typeof__({ty}) {p} = *(__typeof__({ty}) *)biren_args_[{i}]; (void){p};"
            );
        }
        self.out.push_str(
            "  const dim3 blockDim = biren_ctx_->blockDim, gridDim = biren_ctx_->gridDim;\n\
             \x20 const unsigned biren_nt_ = blockDim.x * blockDim.y * blockDim.z;\n\
             \x20 size_t biren_o_ = 0;\n\
             \x20 unsigned char *biren_scr_;\n\
             \x20 (void)gridDim; (void)biren_o_; (void)biren_nt_;\n",
        );
        if self.plan.uses_loop {
            self.out.push_str(
                "  birenKernelLoop biren_l_, *const biren_loop_ = &biren_l_; (void)biren_loop_;\n\
                 \x20 biren_l_.end = biren_nt_; biren_l_.xe = blockDim.x;\n",
            );
        }
        for (i, v) in self.plan.expanded.iter().enumerate() {
            if v.uniform {
                continue;
            }
            let _ = writeln!(
                self.out,
                "  const size_t biren_o{i}_ = biren_o_; biren_o_ += ((size_t)biren_nt_ * sizeof(__typeof__({})) + 63) & ~(size_t)63; /* {} */",
                v.ty, v.name
            );
        }
        for (i, ty) in self.plan.shuffles.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "  const size_t biren_os{i}_ = biren_o_; biren_o_ += ((size_t)biren_nt_ * sizeof(__typeof__({ty})) + 63) & ~(size_t)63;"
            );
        }
        if self.plan.returns {
            self.out
                .push_str("  const size_t biren_od_ = biren_o_; biren_o_ += biren_nt_;\n");
        }
        self.out.push_str(
            "  biren_scr_ = (unsigned char *)birenRegionScratch(biren_o_);\n  (void)biren_scr_;\n",
        );
        // Typed, restrict pointers: the compiler may keep values in registers and vectorise
        // regions without checking that the scratch overlaps the kernel's memory.
        for (i, v) in self.plan.expanded.iter().enumerate() {
            if v.uniform {
                continue;
            }
            if v.is_array {
                let _ = writeln!(
                    self.out,
                    "  unsigned char *__restrict const biren_v{i}_ = biren_scr_ + biren_o{i}_;"
                );
            } else {
                let _ = writeln!(
                    self.out,
                    "  __typeof__({ty}) *__restrict const biren_v{i}_ = (__typeof__({ty}) *)(void *)(biren_scr_ + biren_o{i}_);",
                    ty = v.ty
                );
            }
        }
        if self.plan.returns {
            self.out
                .push_str("  unsigned char *const biren_dead_ = biren_scr_ + biren_od_;\n");
        }
        for (i, ty) in self.plan.shuffles.iter().enumerate() {
            let _ = writeln!(
                self.out,
                "  __typeof__({ty}) *__restrict const biren_shv{i}_ = (__typeof__({ty}) *)(void *)(biren_scr_ + biren_os{i}_);"
            );
        }
        if !self.plan.shuffles.is_empty() {
            let dead = if self.plan.returns {
                "biren_dead_"
            } else {
                "0"
            };
            let _ = writeln!(
                self.out,
                "  const unsigned char *const biren_deadp_ = {dead}; (void)biren_deadp_;"
            );
        }
        let mut hoisted = self.plan.hoisted.clone();
        hoisted.sort();
        for (a, b) in hoisted {
            self.user_text_as(a, b, usize::MAX, false);
        }
        self.out.push_str(
            "  for (unsigned biren_b_ = 0; biren_b_ < biren_count_; ++biren_b_) {\n\
             \x20 if (biren_b_) birenNextBlock_(biren_ctx_);\n\
             \x20 {\n\
             \x20 const dim3 blockIdx = biren_ctx_->blockIdx;\n\
             \x20 const unsigned biren_base_ = blockIdx.x * blockDim.x;\n\
             \x20 (void)blockIdx; (void)biren_base_;\n",
        );
        for (name, ty) in &self.plan.counters {
            let _ = writeln!(self.out, "  __typeof__({ty}) {name}; (void){name};");
        }
        // Kept variables with one value for the block: the value (v) and, while a region
        // runs, the value its threads leave (w).
        for (i, v) in self.plan.expanded.iter().enumerate() {
            if v.uniform {
                let _ = writeln!(
                    self.out,
                    "  __typeof__({ty}) biren_v{i}_ = (__typeof__({ty}))0, biren_w{i}_ = biren_v{i}_; (void)biren_w{i}_;",
                    ty = v.ty
                );
            }
        }
        // Recomputed variables that do not depend on the thread: once per block.
        for k in 0..self.plan.remat.len() {
            let r = &self.plan.remat[k];
            if !r.uniform {
                continue;
            }
            let (name, ty, init) = (r.name.clone(), r.ty.clone(), r.init);
            let _ = write!(self.out, "  __typeof__({ty}) {name} = (");
            self.inline_text(init.0, init.1);
            let _ = writeln!(self.out, "); (void){name};");
        }
        if self.plan.returns {
            self.out.push_str(
                "  unsigned biren_ndead_ = 0;\n  __builtin_memset(biren_dead_, 0, biren_nt_);\n",
            );
        }
        let pieces = &self.plan.pieces;
        self.pieces(pieces);
        self.out.push_str("  }\n");
        if self.plan.returns {
            self.out.push_str("  biren_end_: ;\n");
        }
        self.out.push_str("  }\n  return biren_count_;\n}\n");
        if self.k.template.is_some() {
            let _ = writeln!(
                self.out,
                "{head}const birenError_t {name}_biren_rreg_{targs}::r = birenKernelRegisterRegions(reinterpret_cast<birenKernel_t>(&{name}{targs}), {name}_biren_region_{targs});"
            );
            return;
        }
        let _ = writeln!(
            self.out,
            "#if defined(__cplusplus)\n\
             static const birenError_t {name}_biren_regions_ BIREN_UNUSED_ = birenKernelRegisterRegions(reinterpret_cast<birenKernel_t>(&{name}), {name}_biren_region_);\n\
             #else\n\
             __attribute__((constructor)) static void {name}_biren_regions_(void) {{ (void)birenKernelRegisterRegions({name}, {name}_biren_region_); }}\n\
             #endif"
        );
    }

    fn pieces(&mut self, pieces: &[Piece]) {
        for p in pieces {
            self.piece(p);
        }
    }

    /// The loop over the block's threads (x fastest; x counted as the global index, an int, as
    /// the header's block entry does, so the usual index vectorises). `ivdep`: between two
    /// barriers the threads of a block share no data but through races (what CUDA leaves
    /// undefined), so the iterations carry no dependence and need no run-time alias checks. The
    /// per-thread storage index is a size_t affine in the counter (an unsigned one, which may
    /// wrap, keeps GCC from vectorising its loads).
    fn thread_loop_open(&mut self) {
        self.thread_loop_open_to("blockDim.x")
    }

    /// The thread loop over x in [0, `x_end`) of each row.
    fn thread_loop_open_to(&mut self, x_end: &str) {
        self.thread_loop_open_range("0u", x_end)
    }

    /// The thread loop over x in [`x_start`, `x_end`) of each row.
    fn thread_loop_open_range(&mut self, x_start: &str, x_end: &str) {
        // A kernel whose callees read threadIdx from the context stores it there in every
        // iteration, which orders the iterations: no ivdep.
        let ivdep = if self.serial || self.k.ctx_tid {
            ""
        } else {
            "#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC ivdep\n#endif\n"
        };
        self.out.push_str(
            &"  for (unsigned biren_tz_ = 0; biren_tz_ < blockDim.z; ++biren_tz_)\n\
             \x20 for (unsigned biren_ty_ = 0; biren_ty_ < blockDim.y; ++biren_ty_) {\n\
             \x20 const unsigned biren_row_ = (biren_tz_ * blockDim.y + biren_ty_) * blockDim.x;\n\
             \x20 BIREN_ASSUME_(biren_base_ + blockDim.x >= biren_base_ && biren_base_ + blockDim.x <= 0x7fffffffu);\n\
             BIREN_IVDEP_\
             \x20 for (int biren_g_ = (int)biren_base_; biren_g_ < (int)(biren_base_ + BIREN_X_END_); ++biren_g_) {\n\
             \x20 const size_t biren_t_ = (size_t)biren_row_ + (size_t)(biren_g_ - (int)biren_base_);\n\
             \x20 dim3 threadIdx;\n\
             \x20 threadIdx.x = (unsigned)(biren_g_ - (int)biren_base_); threadIdx.y = biren_ty_; threadIdx.z = biren_tz_;\n\
             \x20 (void)threadIdx; (void)biren_t_;\n"
                .replace(
                    "(int)biren_base_; biren_g_",
                    &if x_start == "0u" {
                        "(int)biren_base_; biren_g_".to_string()
                    } else {
                        format!("(int)(biren_base_ + {x_start}); biren_g_")
                    },
                )
                .replace("BIREN_X_END_", x_end)
                .replace("BIREN_IVDEP_", ivdep),
        );
        if self.plan.returns {
            self.out
                .push_str("  if (biren_dead_[biren_t_]) continue;\n");
        }
        if self.plan.uses_loop {
            self.out.push_str("  biren_l_.tid = threadIdx;\n");
        }
        if self.k.ctx_tid {
            self.out.push_str("  biren_ctx_->threadIdx = threadIdx;\n");
        }
    }

    fn thread_loop_close(&mut self) {
        self.out.push_str("  }\n  }\n");
    }

    fn load(&mut self, vars: &[usize]) {
        for &i in vars {
            let v = &self.plan.expanded[i];
            if v.uniform {
                let _ = writeln!(
                    self.out,
                    "  __typeof__({}) {} = biren_v{i}_; (void){};",
                    v.ty, v.name, v.name
                );
                continue;
            }
            if !v.is_array {
                let _ = writeln!(
                    self.out,
                    "  __typeof__({}) {} = biren_v{i}_[biren_t_]; (void){};",
                    v.ty, v.name, v.name
                );
                continue;
            }
            let _ = writeln!(
                self.out,
                "  __typeof__({}) {}; __builtin_memcpy(&{}, biren_v{i}_ + (size_t)biren_t_ * sizeof({}), sizeof({}));",
                v.ty, v.name, v.name, v.name, v.name
            );
        }
    }

    /// Declares the recomputed variables a region (or checked condition) starting at `at` needs.
    fn remat(&mut self, at: usize) {
        let list = self.plan.remat_uses.get(&at).cloned().unwrap_or_default();
        for k in list {
            let r = &self.plan.remat[k];
            let (name, ty, init) = (r.name.clone(), r.ty.clone(), r.init);
            let _ = write!(self.out, "  __typeof__({ty}) {name} = (");
            self.inline_text(init.0, init.1);
            let _ = writeln!(self.out, "); (void){name};");
        }
    }

    fn store(&mut self, vars: &[usize]) {
        for &i in vars {
            let v = &self.plan.expanded[i];
            if v.uniform {
                let _ = writeln!(self.out, "  biren_w{i}_ = {};", v.name);
                continue;
            }
            if !v.is_array {
                let _ = writeln!(self.out, "  biren_v{i}_[biren_t_] = {};", v.name);
                continue;
            }
            let _ = writeln!(
                self.out,
                "  __builtin_memcpy(biren_v{i}_ + (size_t)biren_t_ * sizeof({}), &{}, sizeof({}));",
                v.name, v.name, v.name
            );
        }
    }

    fn piece(&mut self, p: &Piece) {
        match p {
            Piece::Run { start, end } => {
                let n = self.n;
                self.n += 1;
                self.out.push_str("  { /* region */\n");
                self.serial = self
                    .plan
                    .block_atomics
                    .iter()
                    .any(|&a| a >= *start && a < *end);
                let guard = self.plan.guards.get(start).copied();
                let split = self.plan.splits.get(start).copied();
                // Uniform kept variables the region changes: every thread leaves the same value.
                let uniform_written: Vec<usize> = self
                    .plan
                    .uses
                    .get(start)
                    .map(|u| {
                        u.iter()
                            .filter(|x| x.1 && self.plan.expanded[x.0].uniform)
                            .map(|x| x.0)
                            .collect()
                    })
                    .unwrap_or_default();
                for i in &uniform_written {
                    let _ = writeln!(self.out, "  biren_w{i}_ = biren_v{i}_;");
                }
                match (guard, split) {
                    (Some(g), _) => {
                        // The threads of a row that pass `x < E` are a prefix: find its end.
                        self.bisect(g.cond, true);
                        self.thread_loop_open_to("biren_lo_");
                        self.run_body(*start, g.body, *end, n);
                    }
                    (None, Some(sp)) => {
                        // Those that pass `x < E` (`x >= E`) are a prefix (suffix): each part's
                        // loop with the condition as the constant it is there.
                        self.bisect(sp.cond, sp.prefix);
                        let (first, second) = if sp.prefix { ("1", "0") } else { ("0", "1") };
                        self.thread_loop_open_to("biren_lo_");
                        self.over = Some((sp.cond, first));
                        self.run_body(*start, *start, *end, n);
                        let n2 = self.n;
                        self.n += 1;
                        self.thread_loop_open_range("biren_lo_", "blockDim.x");
                        self.over = Some((sp.cond, second));
                        self.run_body(*start, *start, *end, n2);
                        self.over = None;
                    }
                    (None, None) => {
                        self.thread_loop_open();
                        self.run_body(*start, *start, *end, n);
                    }
                }
                for i in &uniform_written {
                    let _ = writeln!(self.out, "  biren_v{i}_ = biren_w{i}_;");
                }
                self.out.push_str("  }\n");
                self.serial = false;
            }
            Piece::Shuffle {
                stmt,
                val,
                width,
                n,
                vote,
            } => {
                // The values: every thread's, in its store.
                let uses = self.plan.uses.get(&val.0).cloned().unwrap_or_default();
                let vars: Vec<usize> = uses.iter().map(|u| u.0).collect();
                let written: Vec<usize> = uses.iter().filter(|u| u.1).map(|u| u.0).collect();
                self.out.push_str("  { /* a shuffle's values */\n");
                self.thread_loop_open();
                self.load(&vars);
                self.remat(val.0);
                let _ = write!(self.out, "  biren_shv{n}_[biren_t_] = ((");
                self.inline_text(val.0, val.1);
                self.out
                    .push_str(if *vote { ") != 0);\n" } else { "));\n" });
                self.store(&written);
                self.thread_loop_close();
                self.out.push_str("  }\n");
                // The statement, reading the source lane's value; a width CUDA refuses fails.
                if let Some(w) = width {
                    let line = self.line_of(stmt.0);
                    let name = c_string(&self.k.name);
                    let file = self.file.to_string();
                    let uses = self.plan.uses.get(&stmt.0).cloned().unwrap_or_default();
                    let vars: Vec<usize> = uses.iter().map(|u| u.0).collect();
                    self.out.push_str("  {\n");
                    self.thread_loop_open();
                    self.load(&vars);
                    self.remat(stmt.0);
                    self.out
                        .push_str("  { const unsigned biren_w_ = (unsigned)(");
                    self.inline_text(w.0, w.1);
                    let _ = writeln!(
                        self.out,
                        ");\n  if (biren_w_ == 0u || biren_w_ > 32u || (biren_w_ & (biren_w_ - 1u))) birenRegionDivergence({name}, {file}, {line}u, 2u, threadIdx); }}"
                    );
                    self.thread_loop_close();
                    self.out.push_str("  }\n");
                }
                self.piece(&Piece::Run {
                    start: stmt.0,
                    end: stmt.1,
                });
            }
            Piece::Barrier { offset, warp } => {
                if self.plan.returns && !warp {
                    let line = self.line_of(*offset);
                    let _ = writeln!(
                        self.out,
                        "  if (biren_ndead_) {{\n\
                         \x20   if (biren_ndead_ == biren_nt_) goto biren_end_;\n\
                         \x20   {{ unsigned biren_i_ = 0; dim3 biren_d_; while (!biren_dead_[biren_i_]) ++biren_i_;\n\
                         \x20     biren_d_.x = biren_i_ % blockDim.x; biren_d_.y = biren_i_ / blockDim.x % blockDim.y; biren_d_.z = biren_i_ / (blockDim.x * blockDim.y);\n\
                         \x20     birenRegionDivergence({}, {}, {line}u, 1u, biren_d_); }}\n\
                         \x20 }}",
                        c_string(&self.k.name),
                        self.file
                    );
                }
            }
            Piece::Scope(ps) => {
                self.out.push_str("  {\n");
                self.pieces(ps);
                self.out.push_str("  }\n");
            }
            Piece::If {
                cond,
                then,
                els,
                check,
                at,
            } => {
                let c = self.condition(*cond, *check, *at);
                self.out.push_str("  if (");
                self.cond_text(&c, *cond);
                self.out.push_str(") {\n");
                self.pieces(then);
                self.out.push_str("  }");
                if let Some(e) = els {
                    self.out.push_str(" else {\n");
                    self.pieces(e);
                    self.out.push_str("  }");
                }
                self.out.push('\n');
            }
            Piece::Loop {
                kind,
                init,
                cond,
                inc,
                body,
                check,
                at,
            } => {
                let head = |w: &mut Writer, s: &Option<Span>| {
                    if let Some((a, b)) = s {
                        w.inline_text(*a, *b);
                    }
                };
                match (kind, check) {
                    (LoopKind::For, false) => {
                        self.out.push_str("  for (");
                        head(self, init);
                        self.out.push(';');
                        head(self, cond);
                        self.out.push(';');
                        head(self, inc);
                        self.out.push_str(") {\n");
                        self.pieces(body);
                        self.out.push_str("  }\n");
                    }
                    (LoopKind::While, false) => {
                        self.out.push_str("  while (");
                        head(self, cond);
                        self.out.push_str(") {\n");
                        self.pieces(body);
                        self.out.push_str("  }\n");
                    }
                    (LoopKind::Do, false) => {
                        self.out.push_str("  do {\n");
                        self.pieces(body);
                        self.out.push_str("  } while (");
                        head(self, cond);
                        self.out.push_str(");\n");
                    }
                    (_, true) => {
                        // Every thread evaluates the condition; the block goes on if all agree.
                        let c = cond.expect("a checked loop has a condition");
                        self.out.push_str("  for (");
                        head(self, init);
                        self.out.push_str(";;");
                        head(self, inc);
                        self.out.push_str(") {\n");
                        if *kind != LoopKind::Do {
                            let u = self.condition(c, true, *at).unwrap_or_default();
                            let _ = writeln!(self.out, "  if (!{u}) break;");
                            self.pieces(body);
                        } else {
                            self.pieces(body);
                            let u = self.condition(c, true, *at).unwrap_or_default();
                            let _ = writeln!(self.out, "  if (!{u}) break;");
                        }
                        self.out.push_str("  }\n");
                    }
                }
            }
        }
    }

    /// `biren_lo_`: the number of threads at the start of a row (x from 0) for which `cond`
    /// is `prefix` (by bisection: it is monotonic in x).
    fn bisect(&mut self, cond: Span, prefix: bool) {
        self.out.push_str(
            "  unsigned biren_lo_ = 0, biren_hi_ = blockDim.x;\n\
             \x20 while (biren_lo_ < biren_hi_) {\n\
             \x20 const unsigned biren_m_ = biren_lo_ + (biren_hi_ - biren_lo_) / 2;\n\
             \x20 dim3 threadIdx; threadIdx.x = biren_m_; threadIdx.y = 0; threadIdx.z = 0; (void)threadIdx;\n",
        );
        if self.k.ctx_tid {
            self.out.push_str("  biren_ctx_->threadIdx = threadIdx;\n");
        }
        self.remat(cond.0);
        self.out.push_str("  if (");
        self.inline_text(cond.0, cond.1);
        self.out.push_str(if prefix {
            ") biren_lo_ = biren_m_ + 1; else biren_hi_ = biren_m_;\n  }\n"
        } else {
            ") biren_hi_ = biren_m_; else biren_lo_ = biren_m_ + 1;\n  }\n"
        });
    }

    /// A region's body inside its thread loop (opened): its kept variables loaded, the
    /// user's statements from `from` to `end`, the variables it changes stored; closes the
    /// loop. `n`: its label's number.
    fn run_body(&mut self, start: usize, from: usize, end: usize, n: usize) {
        let uses = self.plan.uses.get(&start).cloned().unwrap_or_default();
        let known = self.plan.known.get(&start).cloned().unwrap_or_default();
        let vars: Vec<usize> = uses
            .iter()
            .map(|u| u.0)
            .filter(|k| !known.iter().any(|x| x.0 == *k))
            .collect();
        let written: Vec<usize> = uses.iter().filter(|u| u.1).map(|u| u.0).collect();
        self.load(&vars);
        // Kept variables whose value here is an expression of the indices: recomputed.
        for (k, e) in known {
            let v = &self.plan.expanded[k];
            let (name, ty) = (v.name.clone(), v.ty.clone());
            let _ = write!(self.out, "  __typeof__({ty}) {name} = (__typeof__({ty}))(");
            self.inline_text(e.0, e.1);
            let _ = writeln!(self.out, "); (void){name};");
        }
        self.remat(start);
        self.out.push_str("  {\n");
        self.user_text(from, end, n);
        // Recomputed variables declared here may be used only in later regions.
        for r in self
            .plan
            .remat
            .iter()
            .filter(|r| r.decl >= start && r.decl < end)
        {
            let _ = writeln!(self.out, "  (void){};", r.name);
        }
        self.out.push_str("  }\n");
        self.store(&written);
        let returns_here = self
            .plan
            .edits
            .iter()
            .any(|e| matches!(e.with, EditKind::Return) && e.start >= start && e.end <= end);
        if returns_here {
            let _ = writeln!(self.out, "  biren_skip_{n}_: ;");
        }
        self.thread_loop_close();
    }

    /// A header's text inline (one line of generated code, the user's text under `#line`).
    fn inline_text(&mut self, a: usize, b: usize) {
        let (line, col) = text::line_col(self.src, a);
        let _ = write!(
            self.out,
            "\n#line {line} {}\n{}",
            self.file,
            " ".repeat(col - 1)
        );
        self.out.push_str(&String::from_utf8_lossy(&self.src[a..b]));
        self.out.push('\n');
        self.gen_line();
    }

    fn cond_text(&mut self, checked: &Option<String>, cond: Span) {
        match checked {
            Some(u) => self.out.push_str(u),
            None => self.inline_text(cond.0, cond.1),
        }
    }

    /// For a checked condition: a loop in which every thread evaluates it, failing the launch
    /// if two disagree; returns the variable holding the block's value.
    fn condition(&mut self, cond: Span, check: bool, at: usize) -> Option<String> {
        if !check {
            return None;
        }
        let n = self.n;
        self.n += 1;
        let u = format!("biren_u{n}_");
        let vars = self
            .plan
            .cond_uses
            .get(&cond.0)
            .cloned()
            .unwrap_or_default();
        let _ = writeln!(self.out, "  int {u} = -1;");
        self.thread_loop_open();
        self.load(&vars);
        self.remat(cond.0);
        self.out.push_str("  { const int biren_c_ = (");
        self.inline_text(cond.0, cond.1);
        let line = self.line_of(at);
        let _ = writeln!(
            self.out,
            ") ? 1 : 0;\n  if ({u} < 0) {u} = biren_c_;\n  else if (biren_c_ != {u}) birenRegionDivergence({}, {}, {line}u, 0u, threadIdx); }}",
            c_string(&self.k.name),
            self.file
        );
        self.thread_loop_close();
        let _ = writeln!(self.out, "  if ({u} < 0) {u} = 0;");
        Some(u)
    }
}
