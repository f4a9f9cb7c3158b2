#!/usr/bin/env python3
"""Writes the kernel-form part of the header's hand-written trailer (BIREN_KERNEL, warp
operations, atomics) into cbindgen.toml, between the two marker lines. Its repetitive parts (one
macro per parameter count, one function per type) are generated here; run `python3
tools/kernel_header.py && make header` after editing."""
import re
import sys

MAX_PARAMS = 16
BEGIN = "/* ---- BEGIN kernel form (tools/kernel_header.py) ---- */"
END = "/* ---- END kernel form ---- */"

out = []
w = out.append

w(BEGIN)
w(r"""/* ---- The kernel form: BIREN_KERNEL ------------------------------------------------------
 * BIREN_KERNEL(name, (T1) a1, (T2) a2, ...) { body }  defines kernel `name` with typed parameters
 * (0 to 16; the type in parentheses, because C's preprocessor cannot split a declaration):
 *
 *   BIREN_KERNEL(vadd, (const float *) a, (const float *) b, (float *) c, (int) n) {
 *     int i = blockIdx.x * blockDim.x + threadIdx.x;
 *     if (i < n) c[i] = a[i] + b[i];
 *   }
 *   ... BIREN_LAUNCH(vadd, grid, block, 0, stream, d_a, d_b, d_c, n);
 *
 * The body is CUDA's per-thread code: threadIdx, blockIdx, blockDim and gridDim (dim3 values) and
 * the parameters are in scope, `return` ends the thread, and birenThreadIdx() and the other
 * built-ins work as in any kernel. `name` is an ordinary kernel (void name(void **args)): launch
 * it with BIREN_LAUNCH, birenLaunchKernel or birenLaunchCooperativeKernel, unchanged.
 *
 * What it generates:
 * - name##_biren_thread_: the body, a static always-inline function of one thread;
 * - name##_biren_block_: the block entry (birenKernelBlock_t). It unpacks the arguments once and
 *   runs the block's threads in one loop over threadIdx.x around the inlined body, so the
 *   compiler sees the thread loop: a body without sync points compiles to a plain loop, which
 *   it can vectorise. The loop counts the global x-index blockIdx.x * blockDim.x + threadIdx.x
 *   as an int, so CUDA's usual `int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) ...`
 *   vectorises with GCC -O3 and no masks (c-tests/test_vectorise.sh checks it; GCC 12 takes
 *   the `i < n` test out of the loop). An `unsigned` index stays a scalar loop with GCC 12:
 *   its loop splitting needs a signed counter, and the masked loop it can vectorise instead
 *   ran slower than the scalar one on the AMD machine we measure on (BENCHMARKS.md);
 * - name##_biren_blocks_: the range entry (birenKernelBlocks_t): the same loop over every thread
 *   of several consecutive blocks, one after another, in one call;
 * - name: the per-thread entry, for launches that do not know the block entry;
 * - a registration: a constructor (GCC/Clang; in C++ a static initializer) that calls
 *   birenKernelRegisterBlocks before main, so that launches of `name` run the block and range
 *   entries and copy the argument values at launch (their sizes are known). Without GCC/Clang in
 *   C the kernel runs through its per-thread entry (arguments read by reference, as
 *   unregistered).
 * - name##_biren_sig_: the kernel's signature as a type, which makes BIREN_LAUNCH typed (below).
 *
 * Typed launches. BIREN_LAUNCH(name, grid, block, sharedMem, stream, a1, a2, ...) of a kernel
 * defined with BIREN_KERNEL earlier in the translation unit converts each argument to its
 * parameter's type as a call name(a1, a2, ...) would (3.0 to a float parameter arrives as 3.0f,
 * a size_t to an unsigned one as an unsigned; -Wconversion, -Wfloat-conversion and
 * -Wint-conversion warn as for a call), copies the converted values at launch, and a wrong
 * number of arguments is a compile error naming the kernel ("too few arguments to function
 * 'biren_sig_->name'" in C, "no matching function for call to 'name_biren_sig_::launch_'" in
 * C++). One macro name serves every kernel because C's `struct tag` may name a type not yet
 * declared: BIREN_LAUNCH looks up `struct name##_biren_sig_`, which BIREN_KERNEL defined (the
 * parameters' types), or else is new and incomplete, and BIREN_LAUNCH then makes it the type of
 * the arguments as they are, so a kernel not written with BIREN_KERNEL (void k(void **args),
 * registered or not; a birenKernel_t variable) launches as before, each argument by its own
 * type. In C this needs GCC or Clang (a statement expression and __typeof__, under
 * __extension__: clean with -std=c99 -Wpedantic); in C++ a template picks the struct's launch_
 * when it is complete. Other C compilers launch every kernel by the arguments' own types; there,
 * and for a kernel whose BIREN_KERNEL definition is not in view, the runtime still refuses a
 * number or size of arguments that differs from the registered one (BIREN_ERROR_INVALID_VALUE).
 *
 * Sync points in the body (birenSyncThreads(), warp operations, birenGridSync(), birenTrap())
 * work: the runtime stops the loop after the thread that waits and goes on with the next thread
 * in another fiber. To know which loop they belong to they are macros that pass the hidden
 * parameter `biren_loop_` of the thread function (a NULL constant outside BIREN_KERNEL bodies,
 * so they work in per-thread kernels too); birenThreadIdx() reads the loop's index likewise.
 * How the runtime runs it: thread 0 of a block runs alone first; if it reaches no sync point,
 * the block's other threads run in the one loop, and later blocks run all their threads in one
 * loop, the blocks a compute unit takes together (up to 64) in one call of the range entry; if
 * it does, they run one per fiber. A thread that runs alone (thread 0 first, and each thread of
 * a block whose threads wait) runs through the per-thread entry: it reads its indices from the
 * context and sets up no loop for one turn. A thread that waits in a range ends the range with
 * its block (the block goes on one thread per fiber). Grids whose gridDim.x * blockDim.x exceeds INT_MAX
 * run the per-thread entry instead (the loop counts the global x-index as an int).
 * Helper functions called from the body: one that uses sync points or warp operations should
 * take a parameter `birenKernelLoop *biren_loop_` and be called with `biren_loop_`; without it,
 * it works where thread 0 waits too, and elsewhere fails the launch (LAUNCH_FAILURE) with a
 * message saying so. One that calls birenThreadIdx() itself sees, in the loop, the index of the
 * loop's first thread: pass it threadIdx. -Wshadow notes that the hidden parameter shadows the
 * file-scope constant of the same name.
 */
#if defined(__GNUC__) || defined(__clang__)
#define BIREN_UNUSED_ __attribute__((unused))
#define BIREN_INLINE_ __attribute__((always_inline)) inline
#else
#define BIREN_UNUSED_
#define BIREN_INLINE_ inline
#endif
/* A kernel's block entries start on a 64-byte boundary: their thread loops then sit at the same
 * offset from a fetch window whatever code the unit holds before them, so one kernel runs at one
 * speed in a C, a C++ and a CUDA build (a tight loop straddling a 32-byte window ran 1.2-1.3x
 * slower on the AMD EPYC measured in BENCHMARKS.md). */
#if defined(__GNUC__) || defined(__clang__)
#define BIREN_ENTRY_ __attribute__((aligned(64)))
#else
#define BIREN_ENTRY_
#endif

/* The loop of the BIREN_KERNEL body being compiled; NULL elsewhere (see above). */
static birenKernelLoop *const biren_loop_ BIREN_UNUSED_ = 0;

#define BIREN_KP_DECL_(p) BIREN_KP_STRIP_ p
#define BIREN_KP_STRIP_(...) __VA_ARGS__
#define BIREN_KP_NAME_(p) BIREN_KP_EAT_ p
#define BIREN_KP_EAT_(...)
#define BIREN_KP_TYPE_(p) BIREN_KP_TY1_ p )
#define BIREN_KP_TY1_(...) __VA_ARGS__ BIREN_KP_TY2_(
#define BIREN_KP_TY2_(...)

/* The block entry's thread loop around `call` (rows of threadIdx.x; the index in biren_l_).
 * It counts biren_g_ = blockIdx.x * blockDim.x + threadIdx.x, and the runtime calls a block entry
 * only for grids whose gridDim.x * blockDim.x fits in an int (larger ones run the per-thread
 * entry). A body's usual index, blockIdx.x * blockDim.x + threadIdx.x, unsigned or converted to
 * int, is then the loop's counter, which compilers know cannot wrap: with the loop counting
 * threadIdx.x instead, it could, and GCC did not vectorise `c[i] = a[i] + b[i]` at all. */
#if defined(__GNUC__) || defined(__clang__)
#define BIREN_ASSUME_(c) do { if (!(c)) __builtin_unreachable(); } while (0)
#else
#define BIREN_ASSUME_(c) do { } while (0)
#endif
#define BIREN_KERNEL_LOOP_(call)                                                                  \
  const dim3 biren_bi_ = biren_ctx_->blockIdx, biren_bd_ = biren_ctx_->blockDim,                  \
             biren_gd_ = biren_ctx_->gridDim;                                                     \
  const unsigned biren_base_ = biren_bi_.x * biren_bd_.x;                                         \
  birenKernelLoop biren_l_;                                                                       \
  unsigned biren_lin_ = biren_first_;                                                             \
  biren_l_.end = biren_end_;                                                                      \
  while (biren_lin_ < biren_l_.end) {                                                             \
    unsigned biren_row_ = 0, biren_x0_ = biren_lin_, biren_n_;                                    \
    if (biren_lin_ >= biren_bd_.x) { /* no division in the first row (1-D blocks: always) */      \
      biren_row_ = biren_lin_ / biren_bd_.x;                                                      \
      biren_x0_ = biren_lin_ - biren_row_ * biren_bd_.x;                                          \
    }                                                                                             \
    biren_n_ = biren_bd_.x - biren_x0_;                                                           \
    if (biren_l_.end - biren_lin_ < biren_n_) biren_n_ = biren_l_.end - biren_lin_;               \
    biren_l_.tid.y = 0;                                                                           \
    biren_l_.tid.z = 0;                                                                           \
    if (biren_row_) {                                                                             \
      biren_l_.tid.y = biren_row_ % biren_bd_.y;                                                  \
      biren_l_.tid.z = biren_row_ / biren_bd_.y;                                                  \
    }                                                                                             \
    biren_l_.xe = biren_x0_ + biren_n_;                                                           \
    BIREN_ASSUME_(biren_x0_ <= biren_l_.xe && biren_base_ + biren_l_.xe >= biren_base_ &&         \
                  biren_base_ + biren_l_.xe <= 0x7fffffffu);                                      \
    for (int biren_g_ = (int)(biren_base_ + biren_x0_); biren_g_ < (int)(biren_base_ + biren_l_.xe); \
         ++biren_g_) {                                                                            \
      biren_l_.tid.x = (unsigned)biren_g_ - biren_base_;                                          \
      call;                                                                                       \
    }                                                                                             \
    biren_lin_ = biren_row_ * biren_bd_.x + biren_l_.xe;                                          \
  }

/* The range entry's move to the next block: blockIdx in the context, x fastest (the order the
 * runtime runs blocks in: Dim3::block_after). */
static inline void birenNextBlock_(birenKernelCtx *c) {
  if (++c->blockIdx.x == c->gridDim.x) {
    c->blockIdx.x = 0;
    if (++c->blockIdx.y == c->gridDim.y) {
      c->blockIdx.y = 0;
      ++c->blockIdx.z;
    }
  }
}

/* The range entry's body: the thread loop over every thread of `biren_count_` blocks, from the
 * context's block on, one after another; returns how many it completed (fewer when a thread
 * waited: the runtime lowered the loop's end, and goes on with that block itself). */
#define BIREN_KERNEL_RANGE_(call)                                                                 \
  const unsigned biren_first_ = 0,                                                                \
                 biren_end_ = biren_ctx_->blockDim.x * biren_ctx_->blockDim.y * biren_ctx_->blockDim.z; \
  unsigned biren_done_ = 0;                                                                       \
  for (;;) {                                                                                      \
    {                                                                                             \
      BIREN_KERNEL_LOOP_(call)                                                                    \
      if (biren_l_.end != biren_end_) return biren_done_;                                         \
    }                                                                                             \
    if (++biren_done_ == biren_count_) return biren_done_;                                        \
    birenNextBlock_(biren_ctx_);                                                                  \
  }

#define BIREN_KERNEL_DIMS_DECL_                                                                   \
  const dim3 threadIdx BIREN_UNUSED_, const dim3 blockIdx BIREN_UNUSED_,                          \
      const dim3 blockDim BIREN_UNUSED_, const dim3 gridDim BIREN_UNUSED_,                        \
      birenKernelLoop *biren_loop_ BIREN_UNUSED_

#if defined(__cplusplus)
#define BIREN_KERNEL_REGISTER_(name, n, sizes)                                                    \
  static const birenError_t name##_biren_registered_ BIREN_UNUSED_ =                              \
      birenKernelRegisterBlocks(name, #name, n, sizes, name##_biren_block_, name##_biren_blocks_);
#elif defined(__GNUC__) || defined(__clang__)
#define BIREN_KERNEL_REGISTER_(name, n, sizes)                                                    \
  __attribute__((constructor)) static void name##_biren_register_(void) {                         \
    (void)birenKernelRegisterBlocks(name, #name, n, sizes, name##_biren_block_, name##_biren_blocks_); \
  }
#else
#define BIREN_KERNEL_REGISTER_(name, n, sizes)
#endif

/** Defines a kernel in CUDA's per-thread form with typed parameters (see the section above). */
#define BIREN_KERNEL(...) BIREN_PP_CAT(BIREN_KERNEL_, BIREN_PP_NARGS_K_(__VA_ARGS__))(__VA_ARGS__)
""")
# NARGS for 1..17 arguments (name + 0..16 params)
nums = ", ".join(str(i) for i in range(MAX_PARAMS, -1, -1))
slots = ", ".join(f"_{i}" for i in range(1, MAX_PARAMS + 2))
w(f"#define BIREN_PP_NARGS_K_(...) BIREN_PP_NARGS_K2_(__VA_ARGS__, {nums}, ~)")
w(f"#define BIREN_PP_NARGS_K2_({slots}, N, ...) N")

for n in range(0, MAX_PARAMS + 1):
    ps = [f"p{i}" for i in range(1, n + 1)]
    head = ", ".join(["name"] + ps)
    decls = "".join(f"BIREN_KP_DECL_({p}) BIREN_UNUSED_, " for p in ps)
    names = "".join(f"BIREN_KP_NAME_({p}), " for p in ps)
    unpack = " ".join(
        f"BIREN_KP_DECL_({p}) = *(BIREN_KP_TYPE_({p}) *)biren_args_[{i}];" for i, p in enumerate(ps)
    )
    direct = "".join(f"*(BIREN_KP_TYPE_({p}) *)biren_args_[{i}], " for i, p in enumerate(ps))
    call = f"name##_biren_thread_({names}biren_l_.tid, biren_bi_, biren_bd_, biren_gd_, &biren_l_)"
    body = []
    body.append(f"#define BIREN_KERNEL_{n}({head})")
    body.append("  void name(void **biren_args_);")
    body.append(f"  static BIREN_INLINE_ void name##_biren_thread_({decls}BIREN_KERNEL_DIMS_DECL_);")
    body.append(
        "  static BIREN_ENTRY_ void name##_biren_block_(birenKernelCtx *biren_ctx_, void **biren_args_, "
        "unsigned biren_first_, unsigned biren_end_) {"
    )
    body.append(f"    {unpack} (void)biren_args_;" if n else "    (void)biren_args_;")
    body.append(f"    BIREN_KERNEL_LOOP_({call})")
    body.append("  }")
    body.append(
        "  static BIREN_ENTRY_ unsigned name##_biren_blocks_(birenKernelCtx *biren_ctx_, void **biren_args_, "
        "unsigned biren_count_) {"
    )
    body.append(f"    {unpack} (void)biren_args_;" if n else "    (void)biren_args_;")
    body.append(f"    BIREN_KERNEL_RANGE_({call})")
    body.append("  }")
    body.append("  void name(void **biren_args_) {")
    body.append("    const birenKernelCtx *biren_c_ = birenKernelCtxFast();")
    body.append(
        f"    name##_biren_thread_({direct}biren_c_->threadIdx, biren_c_->blockIdx, "
        "biren_c_->blockDim, biren_c_->gridDim, (birenKernelLoop *)0);"
    )
    if n == 0:
        body.append("    (void)biren_args_;")
    body.append("  }")
    if n:
        sz = ", ".join(f"sizeof(BIREN_KP_TYPE_({p}))" for p in ps)
        body.append(f"  static const size_t name##_biren_sizes_[] = {{{sz}}};")
        body.append(f"  BIREN_KERNEL_REGISTER_(name, {n}, name##_biren_sizes_)")
    else:
        body.append(f"  BIREN_KERNEL_REGISTER_(name, 0, (const size_t *)0)")
    body.append(f"  BIREN_KERNEL_SIG_{n}({head})")
    body.append(f"  static BIREN_INLINE_ void name##_biren_thread_({decls}BIREN_KERNEL_DIMS_DECL_)")
    width = max(len(l) for l in body) + 2
    w("\n".join(l.ljust(width) + "\\" if k < len(body) - 1 else l for k, l in enumerate(body)))


# The kernel's signature as a type (typed launches): in C a struct of the parameters and a
# function pointer named after the kernel; in C++ a struct whose launch_ takes them.
w("/* name##_biren_sig_ (see \"Typed launches\" above). */")
w("#if defined(__cplusplus)")
for n in range(0, MAX_PARAMS + 1):
    ps = [f"p{i}" for i in range(1, n + 1)]
    head = ", ".join(["name"] + ps)
    params = "".join(f", BIREN_KP_TYPE_({p}) biren_a{i}_" for i, p in enumerate(ps))
    if n:
        ptrs = ", ".join(f"(void *)&biren_a{i}_" for i in range(n))
        szs = ", ".join(f"sizeof biren_a{i}_" for i in range(n))
        inner = (f"void *biren_p_[] = {{{ptrs}}}; const size_t biren_z_[] = {{{szs}}}; "
                 f"return birenLaunchKernelArgs(biren_k_, biren_g_, biren_b_, biren_p_, biren_z_, {n}, biren_m_, biren_s_);")
    else:
        inner = "return birenLaunchKernelArgs(biren_k_, biren_g_, biren_b_, 0, 0, 0, biren_m_, biren_s_);"
    w(f"#define BIREN_KERNEL_SIG_{n}({head}) struct name##_biren_sig_ {{ static birenError_t launch_(birenKernel_t biren_k_, "
      f"dim3 biren_g_, dim3 biren_b_, size_t biren_m_, birenStream_t biren_s_{params}) {{ {inner} }} }};")
w("#else")
for n in range(0, MAX_PARAMS + 1):
    ps = [f"p{i}" for i in range(1, n + 1)]
    head = ", ".join(["name"] + ps)
    members = "".join(f"BIREN_KP_TYPE_({p}) biren_a{i}_; " for i, p in enumerate(ps))
    types = ", ".join(f"BIREN_KP_TYPE_({p})" for p in ps) or "void"
    w(f"#define BIREN_KERNEL_SIG_{n}({head}) struct name##_biren_sig_ {{ {members}birenError_t (*name)({types}); }};")
w("#endif")

w(r"""
/* BIREN_LAUNCH (see "Typed launches" above). */
#if defined(__cplusplus)
/* struct name##_biren_sig_ complete (BIREN_KERNEL's): its launch_, else the arguments as they are. */
struct birenLaunchAny_ {
  template <typename... BirenArgs>
  static birenError_t launch_(birenKernel_t kernel, dim3 grid, dim3 block, size_t sharedMem, birenStream_t stream,
                              const BirenArgs &...args) {
    return birenLaunchArgs_(kernel, grid, block, sharedMem, stream, args...);
  }
};
template <size_t> struct birenLaunchVoid_ { typedef void type; };
template <class S, class = void> struct birenLaunchSel_ { typedef birenLaunchAny_ type; };
template <class S> struct birenLaunchSel_<S, typename birenLaunchVoid_<sizeof(S)>::type> { typedef S type; };
#define BIREN_LAUNCH(kernel, grid, block, sharedMem, stream, ...)                                 \
  birenLaunchSel_<struct kernel##_biren_sig_>::type::launch_((kernel), (grid), (block), (sharedMem), (stream), __VA_ARGS__)
#elif defined(__GNUC__) || defined(__clang__)
/* `struct kernel##_biren_sig_` is BIREN_KERNEL's, or new: then the struct of the arguments' own
 * types completes it (in a BIREN_KERNEL's case, the struct of the same tag defined here is
 * another, unused type). The arguments initialize the struct's members (converted to the
 * parameters' types, as a call converts), and an unevaluated call of its function pointer
 * checks their number. */
#define BIREN_LAUNCH(kernel, grid, block, sharedMem, stream, ...)                                 \
  BIREN_LAUNCH_N_(BIREN_PP_NARGS(__VA_ARGS__), kernel, grid, block, sharedMem, stream, __VA_ARGS__)
#define BIREN_LAUNCH_N_(n, ...) BIREN_LAUNCH_N2_(n, __VA_ARGS__)
#define BIREN_LAUNCH_N2_(n, kernel, grid, block, sharedMem, stream, ...)                          \
  __extension__({                                                                                 \
    struct kernel##_biren_sig_ *biren_sig_ = 0;                                                   \
    struct kernel##_biren_sig_ {                                                                  \
      BIREN_LM_M##n(__VA_ARGS__) birenError_t (*kernel)(BIREN_LM_T##n(__VA_ARGS__));             \
    };                                                                                            \
    __typeof__(*biren_sig_) biren_v_ = {BIREN_LM_D##n(__VA_ARGS__)};                              \
    void *biren_p_[] = {BIREN_LM_P##n};                                                           \
    const size_t biren_z_[] = {BIREN_LM_S##n};                                                    \
    (void)sizeof(biren_sig_->kernel(BIREN_LM_V##n));                                              \
    birenLaunchKernelArgs((kernel), (grid), (block), biren_p_, biren_z_, n, (sharedMem), (stream)); \
  })""")
for m in range(1, MAX_PARAMS + 1):
    args = ", ".join(f"a{i}" for i in range(m))
    w(f"#define BIREN_LM_M{m}({args}) " + " ".join(f"__typeof__(a{i}) biren_a{i}_;" for i in range(m)))
    w(f"#define BIREN_LM_T{m}({args}) " + ", ".join(f"__typeof__(a{i})" for i in range(m)))
    w(f"#define BIREN_LM_D{m}({args}) " + ", ".join(f".biren_a{i}_ = a{i}" for i in range(m)))
    w(f"#define BIREN_LM_V{m} " + ", ".join(f"biren_v_.biren_a{i}_" for i in range(m)))
    w(f"#define BIREN_LM_P{m} " + ", ".join(f"(void *)&biren_v_.biren_a{i}_" for i in range(m)))
    w(f"#define BIREN_LM_S{m} " + ", ".join(f"sizeof biren_v_.biren_a{i}_" for i in range(m)))
w(r"""#else
#define BIREN_LAUNCH BIREN_LAUNCH_SIZED_
#endif""")

w(r"""
/* ---- Sync points and built-ins that know the BIREN_KERNEL loop ------------------------------
 * These names are macros passing biren_loop_ (see BIREN_KERNEL); the exported functions of the
 * same names remain for other languages, and are reached in C as (birenSyncThreads)().
 */
static inline dim3 birenThreadIdxIn_(const birenKernelLoop *l) {
  return l ? l->tid : (birenThreadIdx)();
}
#define birenThreadIdx() birenThreadIdxIn_(biren_loop_)
#define birenSyncThreads() birenSyncThreadsLoop(biren_loop_)
#define birenTrap() birenTrapLoop(biren_loop_)
/** Grid-wide barrier of a cooperative launch (CUDA's this_grid().sync()). */
#define birenGridSync() birenGridSyncLoop(biren_loop_)

/* ---- Warp operations (CUDA's, warp size 32) -------------------------------------------------
 * A warp is 32 consecutive threads of a block (linear index, x fastest). The *Sync operations
 * are a rendezvous of the lanes `mask` names (it must name the caller): it completes when all
 * of them have arrived. CUDA's partial-warp rule: lanes of the mask that do not exist (beyond
 * the block's last thread: a block of 120 threads has a last warp of 24 lanes) or whose thread
 * has returned are not waited for, so 0xffffffff works in any warp; a shuffle whose source is
 * such a lane returns the caller's own value (CUDA leaves it undefined), and ballot, any and all
 * leave such lanes out. A mask naming a lane that exists, has not returned and never arrives (it
 * waits at a barrier, say) fails the launch with BIREN_ERROR_LAUNCH_FAILURE, as a divergent
 * barrier does. (A returned lane is known once nothing else can run: a warp whose lanes
 * returned early costs a wait for the rest of its block; partial last warps cost nothing.) Once a warp's lanes go from one full-mask rendezvous to the next, they run
 * among themselves (the runtime's warp ring); a rendezvous then costs a lane about what a
 * block barrier costs a thread (6-8 ns against 5-7 ns on the machine BENCHMARKS.md describes).
 *   birenSyncWarp(mask)               __syncwarp
 *   birenBallotSync(mask, pred)       __ballot_sync: lanes of mask whose pred != 0
 *   birenAnySync / birenAllSync(mask, pred)
 *   birenActiveMask()                 __activemask: the lanes of the warp that exist (the warp
 *                                     runs converged: a lane that returned is still named)
 *   birenLaneId()                     the lane (linear index % 32)
 *   birenShfl{,Up,Down,Xor}Sync{Int,Uint,Ll,Ull,Float,Double}(mask, var, srcLane|delta|laneMask
 *       [, width])                    __shfl*_sync; width (default 32) a power of two <= 32
 * Overloads (CUDA's __shfl_sync(mask, var, ...)) are type-suffixed variants (all languages) and,
 * in C11 and later, the generic names birenShflSync, birenShflUpSync, birenShflDownSync,
 * birenShflXorSync by _Generic over the type of var (int, unsigned, long long, unsigned long
 * long, float, double); in C++ the generic names are overloaded functions.
 */
/** Threads per warp (CUDA's warpSize). */
#define BIREN_WARP_SIZE 32
/** CUDA's __syncwarp: the lanes of mask wait for each other. */
#define birenSyncWarp(mask) ((void)birenWarpExchange(biren_loop_, (mask), 0, 0ull, 0, 32))
/** CUDA's __ballot_sync: the lanes of mask whose pred != 0, as a bit mask. */
#define birenBallotSync(mask, pred)                                                               \
  ((unsigned)birenWarpExchange(biren_loop_, (mask), 5, (unsigned long long)((pred) != 0), 0, 32))
/** CUDA's __any_sync: nonzero if pred != 0 in any lane of mask. */
#define birenAnySync(mask, pred)                                                                  \
  ((int)birenWarpExchange(biren_loop_, (mask), 6, (unsigned long long)((pred) != 0), 0, 32))
/** CUDA's __all_sync: nonzero if pred != 0 in every lane of mask. */
#define birenAllSync(mask, pred)                                                                  \
  ((int)birenWarpExchange(biren_loop_, (mask), 7, (unsigned long long)((pred) != 0), 0, 32))
#define birenActiveMask() birenActiveMaskLoop(biren_loop_)
static inline unsigned birenLaneIdIn_(const birenKernelLoop *l) {
  const birenKernelCtx *c;
  if (!l) return (birenLaneId)();
  c = birenKernelCtxFast();
  return (l->tid.x + c->blockDim.x * (l->tid.y + c->blockDim.y * l->tid.z)) & 31u;
}
#define birenLaneId() birenLaneIdIn_(biren_loop_)

static inline unsigned long long birenBitsFromInt_(int v) { return (unsigned)v; }
static inline int birenBitsToInt_(unsigned long long b) { return (int)(unsigned)b; }
static inline unsigned long long birenBitsFromUint_(unsigned v) { return v; }
static inline unsigned birenBitsToUint_(unsigned long long b) { return (unsigned)b; }
static inline unsigned long long birenBitsFromLl_(long long v) { return (unsigned long long)v; }
static inline long long birenBitsToLl_(unsigned long long b) { return (long long)b; }
static inline unsigned long long birenBitsFromUll_(unsigned long long v) { return v; }
static inline unsigned long long birenBitsToUll_(unsigned long long b) { return b; }
static inline unsigned long long birenBitsFromFloat_(float v) {
  union { float f; uint32_t u; } x;
  x.f = v;
  return x.u;
}
static inline float birenBitsToFloat_(unsigned long long b) {
  union { float f; uint32_t u; } x;
  x.u = (uint32_t)b;
  return x.f;
}
static inline unsigned long long birenBitsFromDouble_(double v) {
  union { double f; uint64_t u; } x;
  x.f = v;
  return x.u;
}
static inline double birenBitsToDouble_(unsigned long long b) {
  union { double f; uint64_t u; } x;
  x.u = b;
  return x.f;
}
""")
TYPES = [("Int", "int"), ("Uint", "unsigned"), ("Ll", "long long"), ("Ull", "unsigned long long"),
         ("Float", "float"), ("Double", "double")]
SHFL = [("Shfl", 1, "srcLane"), ("ShflUp", 2, "delta"), ("ShflDown", 3, "delta"), ("ShflXor", 4, "laneMask")]
for op, code, pname in SHFL:
    for suf, ty in TYPES:
        f = f"biren{op}Sync{suf}"
        w(f"static inline {ty} {f}In_(birenKernelLoop *l, unsigned mask, {ty} var, int {pname}, int width) {{")
        w(f"  return birenBitsTo{suf}_(birenWarpExchange(l, mask, {code}, birenBitsFrom{suf}_(var), {pname}, width));")
        w("}")
        w(f"/** CUDA's __{'_'.join(x.lower() for x in re.findall('[A-Z][a-z]*', op))}_sync on {ty}: ({{mask}}, var, {pname}[, width]); see the warp section above. */")
        w(f"#define {f}(...) BIREN_PP_CAT({f}_, BIREN_PP_NARGS(__VA_ARGS__))(__VA_ARGS__)")
        w(f"#define {f}_3(mask, var, p) {f}In_(biren_loop_, (mask), (var), (p), 32)")
        w(f"#define {f}_4(mask, var, p, width) {f}In_(biren_loop_, (mask), (var), (p), (width))")
w("#if defined(__cplusplus)")
for op, code, pname in SHFL:
    for suf, ty in TYPES:
        w(f"static inline {ty} biren{op}SyncIn_(birenKernelLoop *l, unsigned mask, {ty} var, int p, int width) {{ return biren{op}Sync{suf}In_(l, mask, var, p, width); }}")
    w(f"#define biren{op}Sync(...) BIREN_PP_CAT(biren{op}Sync_, BIREN_PP_NARGS(__VA_ARGS__))(__VA_ARGS__)")
    w(f"#define biren{op}Sync_3(mask, var, p) biren{op}SyncIn_(biren_loop_, (mask), (var), (p), 32)")
    w(f"#define biren{op}Sync_4(mask, var, p, width) biren{op}SyncIn_(biren_loop_, (mask), (var), (p), (width))")
w("#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L")
for op, code, pname in SHFL:
    sel = ", ".join(f"{ty}: biren{op}Sync{suf}In_" for suf, ty in TYPES)
    w(f"#define biren{op}SyncSel_(var) _Generic((var), {sel})")
    w(f"#define biren{op}Sync(...) BIREN_PP_CAT(biren{op}Sync_, BIREN_PP_NARGS(__VA_ARGS__))(__VA_ARGS__)")
    w(f"#define biren{op}Sync_3(mask, var, p) biren{op}SyncSel_(var)(biren_loop_, (mask), (var), (p), 32)")
    w(f"#define biren{op}Sync_4(mask, var, p, width) biren{op}SyncSel_(var)(biren_loop_, (mask), (var), (p), (width))")
w("#endif")

w(r"""
/* ---- Atomics (CUDA's atomicAdd ... __threadfence) -------------------------------------------
 * birenAtomic{Add,Sub,Exch,Min,Max,Inc,Dec,And,Or,Xor}{Int,Uint,Ull}(address, val) and
 * birenAtomicCAS{Int,Uint,Ull}(address, compare, val); birenAtomic{Add,Exch}{Float,Double}.
 * Each returns the old value at `address`; all are atomic across every kernel thread and the
 * host, and relaxed (CUDA's): they order no other access; birenThreadFence() (all threads) and
 * birenThreadFenceBlock() (the block) do. Inc stores (old >= val) ? 0 : old + 1 and Dec
 * (old == 0 || old > val) ? val : old - 1, as CUDA's unsigned atomicInc / atomicDec (the Int and
 * Ull forms are a BIREN extension). Overloads: type-suffixed names (all languages); in C11 and
 * later also the generic names birenAtomicAdd(address, val), ... by _Generic over the pointer
 * type; in C++ overloaded functions of those names.
 * With GCC or Clang these are static inline __atomic built-ins; define BIREN_NO_INLINE_BUILTINS
 * (or use another compiler) to call the library's exported functions of the same names, which
 * other languages use (a NULL or misaligned address there returns 0 and does nothing).
 */""")
ATYPES = [("Int", "int"), ("Uint", "unsigned int"), ("Ull", "unsigned long long")]
INTOPS = ["Add", "Sub", "Exch", "Min", "Max", "Inc", "Dec", "And", "Or", "Xor"]
decls = []
inl = []


def adoc(f):
    """A one-line doc comment for atomic function `f` (see the section comment above)."""
    m = re.match(r"birenAtomic(Add|Sub|Exch|Min|Max|Inc|Dec|And|Or|Xor|CAS)(Int|Uint|Ull|Float|Double)$", f)
    op, suf = m.group(1), m.group(2)
    cuda = {"CAS": "atomicCAS"}.get(op, "atomic" + op)
    ty = {"Int": "int", "Uint": "unsigned int", "Ull": "unsigned long long", "Float": "float", "Double": "double"}[suf]
    return f"/** CUDA's {cuda} on {ty}: atomically updates *address, returns the old value (relaxed). */"
for op in INTOPS:
    for suf, ty in ATYPES:
        f = f"birenAtomic{op}{suf}"
        decls.append(adoc(f) + "\n" + f"{ty} {f}({ty} *address, {ty} val);")
        inl.append(adoc(f))
        if op in ("Add", "Sub", "And", "Or", "Xor"):
            b = {"Add": "add", "Sub": "sub", "And": "and", "Or": "or", "Xor": "xor"}[op]
            inl.append(f"static inline {ty} {f}({ty} *address, {ty} val) {{ return __atomic_fetch_{b}(address, val, __ATOMIC_RELAXED); }}")
        elif op == "Exch":
            inl.append(f"static inline {ty} {f}({ty} *address, {ty} val) {{ return __atomic_exchange_n(address, val, __ATOMIC_RELAXED); }}")
        else:
            new = {"Min": "old < val ? old : val", "Max": "old > val ? old : val",
                   "Inc": "old >= val ? 0 : old + 1",
                   "Dec": "(old == 0 || old > val) ? val : old - 1"}[op]
            inl.append(
                f"static inline {ty} {f}({ty} *address, {ty} val) {{\n"
                f"  {ty} old = __atomic_load_n(address, __ATOMIC_RELAXED);\n"
                f"  while (!__atomic_compare_exchange_n(address, &old, ({ty})({new}), 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {{\n"
                f"  }}\n  return old;\n}}")
for suf, ty in ATYPES:
    f = f"birenAtomicCAS{suf}"
    decls.append(adoc(f) + "\n" + f"{ty} {f}({ty} *address, {ty} compare, {ty} val);")
    inl.append(adoc(f))
    inl.append(
        f"static inline {ty} {f}({ty} *address, {ty} compare, {ty} val) {{\n"
        f"  __atomic_compare_exchange_n(address, &compare, val, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);\n"
        f"  return compare;\n}}")
for suf, ty in [("Float", "float"), ("Double", "double")]:
    decls.append(adoc(f"birenAtomicAdd{suf}") + "\n" + f"{ty} birenAtomicAdd{suf}({ty} *address, {ty} val);")
    decls.append(adoc(f"birenAtomicExch{suf}") + "\n" + f"{ty} birenAtomicExch{suf}({ty} *address, {ty} val);")
    inl.append(adoc(f"birenAtomicAdd{suf}"))
    inl.append(
        f"static inline {ty} birenAtomicAdd{suf}({ty} *address, {ty} val) {{\n"
        f"  {ty} old, sum;\n"
        f"  __atomic_load(address, &old, __ATOMIC_RELAXED);\n"
        f"  do {{\n    sum = old + val;\n"
        f"  }} while (!__atomic_compare_exchange(address, &old, &sum, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n"
        f"  return old;\n}}")
    inl.append(adoc(f"birenAtomicExch{suf}"))
    inl.append(
        f"static inline {ty} birenAtomicExch{suf}({ty} *address, {ty} val) {{\n"
        f"  {ty} old;\n  __atomic_exchange(address, &val, &old, __ATOMIC_RELAXED);\n  return old;\n}}")
FENCE = "/** CUDA's __threadfence: orders this thread's memory accesses for every thread. */"
FENCE_BLOCK = "/** CUDA's __threadfence_block: orders this thread's memory accesses for its block. */"
decls.append(FENCE + "\nvoid birenThreadFence(void);")
decls.append(FENCE_BLOCK + "\nvoid birenThreadFenceBlock(void);")
inl.append(FENCE + "\nstatic inline void birenThreadFence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }")
inl.append(FENCE_BLOCK + "\nstatic inline void birenThreadFenceBlock(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }")
w("#if defined(BIREN_NO_INLINE_BUILTINS) || !(defined(__GNUC__) || defined(__clang__))")
w("#ifdef __cplusplus\nextern \"C\" {\n#endif")
w("\n".join(decls))
w("#ifdef __cplusplus\n}\n#endif")
w("#else")
w("\n".join(inl))
w("#endif")
# generic atomics
ALLT = ATYPES + [("Float", "float"), ("Double", "double")]
ops_types = {op: ATYPES for op in INTOPS}
ops_types["Add"] = ALLT
ops_types["Exch"] = ALLT
w("#if defined(__cplusplus)")
for op, tl in ops_types.items():
    for suf, ty in tl:
        w(f"static inline {ty} birenAtomic{op}({ty} *address, {ty} val) {{ return birenAtomic{op}{suf}(address, val); }}")
for suf, ty in ATYPES:
    w(f"static inline {ty} birenAtomicCAS({ty} *address, {ty} compare, {ty} val) {{ return birenAtomicCAS{suf}(address, compare, val); }}")
w("#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L")
for op, tl in ops_types.items():
    sel = ", ".join(f"{ty} *: birenAtomic{op}{suf}" for suf, ty in tl)
    w(f"#define birenAtomic{op}(address, val) _Generic((address), {sel})((address), (val))")
sel = ", ".join(f"{ty} *: birenAtomicCAS{suf}" for suf, ty in ATYPES)
w(f"#define birenAtomicCAS(address, compare, val) _Generic((address), {sel})((address), (compare), (val))")
w("#endif")
w(END)

text = "\n".join(out)
# The trailer is a TOML basic string: backslashes and quotes are escaped there.
toml_text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
path = "cbindgen.toml"
src = open(path).read()
if BEGIN in src:
    pre = src[: src.index(BEGIN)]
    post = src[src.index(END) + len(END):]
    src = pre + toml_text + post
else:
    marker = "#endif /* BIREN_RUNTIME_INLINE_H */"
    src = src.replace(marker, toml_text + "\n\n" + marker)
# Names the trailer defines itself: not generated from the exports.
excl = [f"birenAtomic{op}{suf}" for op in INTOPS for suf, _ in ATYPES]
excl += [f"birenAtomicCAS{suf}" for suf, _ in ATYPES]
excl += [f"birenAtomic{op}{suf}" for op in ("Add", "Exch") for suf in ("Float", "Double")]
excl += ["birenThreadFence", "birenThreadFenceBlock"]
m = re.search(r'^exclude = \[(.*)\]$', src, re.M)
have = [x.strip().strip('"') for x in m.group(1).split(",") if x.strip()]
for e in excl:
    if e not in have:
        have.append(e)
src = src[: m.start()] + "exclude = [" + ", ".join(f'"{x}"' for x in have) + "]" + src[m.end():]
open(path, "w").write(src)
print("cbindgen.toml: kernel form written", file=sys.stderr)
