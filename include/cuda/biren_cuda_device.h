/*
 * biren_cuda_device.h -- CUDA's device library over BIREN's in-kernel API, for C++ compiled
 * through biren-cc (included by cuda_runtime.h). Sync points and warp operations pass the
 * kernel's hidden loop (`biren_loop_`, see biren_runtime.h's kernel form) as BIREN's own macros
 * do, so they work in kernel bodies, and in device functions where the block's thread 0 waits too.
 */
#ifndef BIREN_CUDA_DEVICE_H_
#define BIREN_CUDA_DEVICE_H_

#include <math.h>
#include <stdio.h>
#include <time.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <errno.h>

/* ---- Built-in variables ---------------------------------------------------------------------
 * In a kernel's body biren-cc makes threadIdx, blockIdx, blockDim and gridDim parameters of the
 * body (the thread loop's own values, which the compiler sees). A device function reads these:
 * the running thread's context, which a kernel's entries keep current for every thread when the
 * kernel calls a function that reads them (biren-cc sees which do). */
#if defined(BIREN_CUDA_PARSE_)
extern const dim3 threadIdx, blockIdx, blockDim, gridDim;
#else
static thread_local const dim3 &threadIdx __attribute__((unused)) = birenKernelCtxFast()->threadIdx;
static thread_local const dim3 &blockIdx __attribute__((unused)) = birenKernelCtxFast()->blockIdx;
static thread_local const dim3 &blockDim __attribute__((unused)) = birenKernelCtxFast()->blockDim;
static thread_local const dim3 &gridDim __attribute__((unused)) = birenKernelCtxFast()->gridDim;
#endif
static const int warpSize __attribute__((unused)) = 32;
typedef dim3 uint3_biren_;

/* ---- Launch (what biren-cc turns `k<<<g, b, s, st>>>(args)` into) -------------------------- */
namespace biren_cuda {
struct launch_config {
  dim3 grid, block;
  size_t shared;
  birenStream_t stream;
  int pending;
};
inline launch_config &pending_config() {
  static thread_local launch_config c;
  return c;
}
/* `k<<<grid, block, shared, stream>>>(args)` becomes
 * `(biren_cuda::configure(grid, block, shared, stream) ? (void)0 : k(args))`: the configuration
 * is kept for the stub `k`, which launches with it (as nvcc's __cudaPushCallConfiguration). */
inline int configure(dim3 grid, dim3 block, size_t shared = 0, birenStream_t stream = 0) {
  launch_config &c = pending_config();
  c.grid = grid;
  c.block = block;
  c.shared = shared;
  c.stream = stream;
  c.pending = 1;
  return 0;
}
/* Called by a kernel's host stub: launches with the configuration of the `<<<...>>>` that
 * called it (errors go where every call's do: cudaGetLastError). A stub called like a function,
 * without one (nvcc refuses that at compile time), launches a grid of no blocks: the launch
 * fails with cudaErrorInvalidConfiguration. */
inline void launch_stub(const void *stub, void **args, const size_t *sizes, unsigned n) {
  launch_config &c = pending_config();
  dim3 none(0, 0, 0);
  int ok = c.pending;
  c.pending = 0;
  (void)birenLaunchKernelArgs((birenKernel_t)stub, ok ? c.grid : none, ok ? c.block : none, args,
                              sizes, n, ok ? c.shared : 0, ok ? c.stream : (birenStream_t)0);
}
/* The parameter types of a stub, by position: what a kernel's entries read its arguments as. */
template <class F> struct stub_sig;
template <class... P> struct stub_sig<void (*)(P...)> {
  template <unsigned I, class... Q> struct at_;
  template <class H, class... Q> struct at_<0, H, Q...> { typedef H type; };
  template <unsigned I, class H, class... Q> struct at_<I, H, Q...> { typedef typename at_<I - 1, Q...>::type type; };
  template <unsigned I> using arg = typename at_<I, P...>::type;
};
/* A kernel's name for messages: "name<args>" from the compiler's description of an entry
 * instantiated for the kernel's template arguments. */
inline const char *kernel_name(const char *base, const char *pretty) {
  static thread_local char buf[512];
  const char *w = strstr(pretty, "[with ");
  if (!w) return base;
  snprintf(buf, sizeof buf, "%s [%s", base, w + 6);
  return buf;
}
} // namespace biren_cuda

/* ---- Synchronisation ----------------------------------------------------------------------- */
#define __syncthreads() birenSyncThreads()
namespace biren_cuda {
/* __syncthreads_count/_and/_or: a barrier that also counts the threads whose predicate holds
 * (one OS thread runs a block, so the block's counter needs no atomics). */
static inline int sync_count(birenKernelLoop *l, int pred) {
  BIREN_SHARED int count;
  const birenKernelCtx *c = birenKernelCtxFast();
  dim3 t = l ? l->tid : c->threadIdx;
  birenSyncThreadsLoop(l);
  if (t.x == 0 && t.y == 0 && t.z == 0) count = 0;
  birenSyncThreadsLoop(l);
  if (pred) count++;
  birenSyncThreadsLoop(l);
  int r = count;
  birenSyncThreadsLoop(l);
  return r;
}
inline unsigned block_threads() {
  const birenKernelCtx *c = birenKernelCtxFast();
  return c->blockDim.x * c->blockDim.y * c->blockDim.z;
}
} // namespace biren_cuda
#define __syncthreads_count(pred) biren_cuda::sync_count(biren_loop_, (pred) != 0)
#define __syncthreads_and(pred) (biren_cuda::sync_count(biren_loop_, (pred) != 0) == (int)biren_cuda::block_threads())
#define __syncthreads_or(pred) (biren_cuda::sync_count(biren_loop_, (pred) != 0) != 0)
namespace biren_cuda {
/* __syncwarp()'s mask: all lanes when none is given. */
inline unsigned warp_mask(unsigned m = 0xffffffffu) { return m; }
} // namespace biren_cuda
#define __syncwarp(...) birenSyncWarp(biren_cuda::warp_mask(__VA_ARGS__))
#define __threadfence() birenThreadFence()
#define __threadfence_block() birenThreadFenceBlock()
#define __threadfence_system() birenThreadFence()

/* ---- Warp operations ------------------------------------------------------------------------ */
#define __shfl_sync(...) birenShflSync(__VA_ARGS__)
#define __shfl_up_sync(...) birenShflUpSync(__VA_ARGS__)
#define __shfl_down_sync(...) birenShflDownSync(__VA_ARGS__)
#define __shfl_xor_sync(...) birenShflXorSync(__VA_ARGS__)
#define __ballot_sync(mask, pred) birenBallotSync((mask), (pred))
#define __any_sync(mask, pred) birenAnySync((mask), (pred))
#define __all_sync(mask, pred) birenAllSync((mask), (pred))
#define __activemask() birenActiveMask()
#define __lanemask_lt() ((1u << birenLaneId()) - 1u)

/* ---- Atomics: CUDA's overloads, by the pointer's type -------------------------------------- */
#define BIREN_CUDA_ATOMIC2_(cuda, biren, T, suffix)                                               \
  static inline T cuda(T *a, T v) { return biren##suffix(a, v); }                                \
  static inline T cuda##_block(T *a, T v) { return biren##suffix(a, v); }                        \
  static inline T cuda##_system(T *a, T v) { return biren##suffix(a, v); }
#define BIREN_CUDA_ATOMIC_IUL_(cuda, biren)                                                      \
  BIREN_CUDA_ATOMIC2_(cuda, biren, int, Int)                                                      \
  BIREN_CUDA_ATOMIC2_(cuda, biren, unsigned int, Uint)                                            \
  BIREN_CUDA_ATOMIC2_(cuda, biren, unsigned long long, Ull)
BIREN_CUDA_ATOMIC_IUL_(atomicAdd, birenAtomicAdd)
BIREN_CUDA_ATOMIC2_(atomicAdd, birenAtomicAdd, float, Float)
BIREN_CUDA_ATOMIC2_(atomicAdd, birenAtomicAdd, double, Double)
BIREN_CUDA_ATOMIC2_(atomicSub, birenAtomicSub, int, Int)
BIREN_CUDA_ATOMIC2_(atomicSub, birenAtomicSub, unsigned int, Uint)
BIREN_CUDA_ATOMIC_IUL_(atomicExch, birenAtomicExch)
BIREN_CUDA_ATOMIC2_(atomicExch, birenAtomicExch, float, Float)
BIREN_CUDA_ATOMIC_IUL_(atomicMin, birenAtomicMin)
BIREN_CUDA_ATOMIC_IUL_(atomicMax, birenAtomicMax)
BIREN_CUDA_ATOMIC2_(atomicInc, birenAtomicInc, unsigned int, Uint)
BIREN_CUDA_ATOMIC2_(atomicDec, birenAtomicDec, unsigned int, Uint)
BIREN_CUDA_ATOMIC_IUL_(atomicAnd, birenAtomicAnd)
BIREN_CUDA_ATOMIC_IUL_(atomicOr, birenAtomicOr)
BIREN_CUDA_ATOMIC_IUL_(atomicXor, birenAtomicXor)
#define BIREN_CUDA_CAS_(T, suffix)                                                                \
  static inline T atomicCAS(T *a, T cmp, T v) { return birenAtomicCAS##suffix(a, cmp, v); }        \
  static inline T atomicCAS_block(T *a, T cmp, T v) { return birenAtomicCAS##suffix(a, cmp, v); }  \
  static inline T atomicCAS_system(T *a, T cmp, T v) { return birenAtomicCAS##suffix(a, cmp, v); }
BIREN_CUDA_CAS_(int, Int)
BIREN_CUDA_CAS_(unsigned int, Uint)
BIREN_CUDA_CAS_(unsigned long long, Ull)
/* long long min/max (CUDA has them; BIREN's are on unsigned long long): by compare-and-swap. */
static inline long long atomicMin(long long *a, long long v) {
  unsigned long long *u = (unsigned long long *)a, old = *u, seen;
  while ((long long)old > v && (seen = birenAtomicCASUll(u, old, (unsigned long long)v)) != old) old = seen;
  return (long long)old;
}
static inline long long atomicMax(long long *a, long long v) {
  unsigned long long *u = (unsigned long long *)a, old = *u, seen;
  while ((long long)old < v && (seen = birenAtomicCASUll(u, old, (unsigned long long)v)) != old) old = seen;
  return (long long)old;
}

/* ---- Integer and float intrinsics ------------------------------------------------------------ */
static inline int __mul24(int a, int b) { return (int)((long long)((a << 8) >> 8) * ((b << 8) >> 8)); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
  return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
static inline unsigned __sad(int a, int b, unsigned c) { return c + (unsigned)(a > b ? a - b : b - a); }
static inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
static inline int __float_as_int(float f) { int x; memcpy(&x, &f, 4); return x; }
static inline float __uint_as_float(unsigned x) { float f; memcpy(&f, &x, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned x; memcpy(&x, &f, 4); return x; }
static inline double __longlong_as_double(long long x) { double f; memcpy(&f, &x, 8); return f; }
static inline long long __double_as_longlong(double f) { long long x; memcpy(&x, &f, 8); return x; }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x == x ? x : 0.0f)); }
/* CUDA's fast float functions: here the C library's (glibc declares some of these names for
 * itself without exporting them, so they are macros). */
#define __expf(x) expf(x)
#define __exp10f(x) powf(10.0f, (x))
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __sincosf(x, s, c) (*(s) = sinf(x), *(c) = cosf(x), (void)0)
#define __powf(x, y) powf((x), (y))
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
#ifndef __GLIBC__
static inline float exp10f(float x) { return powf(10.0f, x); }
#endif
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
static inline unsigned __float2uint_rz(float x) { return (unsigned)x; }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline int __double2int_rn(double x) { return (int)nearbyint(x); }
static inline float __double2float_rn(double x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
template <class T> static inline T __ldca(const T *p) { return *p; }
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline void __stcg(T *p, T v) { *p = v; }
template <class T> static inline void __stcs(T *p, T v) { *p = v; }
template <class T> static inline void __stwt(T *p, T v) { *p = v; }

/* CUDA's global min and max (math_functions.h), for the types kernels use. */
static inline int min(int a, int b) { return a < b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned min(int a, unsigned b) { return (unsigned)a < b ? (unsigned)a : b; }
static inline unsigned min(unsigned a, int b) { return a < (unsigned)b ? a : (unsigned)b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline float min(float a, float b) { return fminf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline unsigned max(int a, unsigned b) { return (unsigned)a > b ? (unsigned)a : b; }
static inline unsigned max(unsigned a, int b) { return a > (unsigned)b ? a : (unsigned)b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline long min(long a, long b) { return a < b ? a : b; }
static inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
static inline long max(long a, long b) { return a > b ? a : b; }
static inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
static inline double min(float a, double b) { return fmin(a, b); }
static inline double min(double a, float b) { return fmin(a, b); }
static inline double max(float a, double b) { return fmax(a, b); }
static inline double max(double a, float b) { return fmax(a, b); }
static inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

/* ---- Clocks ----------------------------------------------------------------------------------
 * clock() in a kernel is the C library's (processor time); clock64() counts nanoseconds of
 * CLOCK_MONOTONIC: both only grow, as kernels that time themselves need. */
static inline long long clock64(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static inline unsigned long long __globaltimer(void) { return (unsigned long long)clock64(); }
namespace biren_cuda {
/* What biren-cc makes of clock() in device code: the device's cycles (its clock rate is 1 GHz,
 * cudaDevAttrClockRate), as CUDA's clock() counts its multiprocessor's. */
inline clock_t device_clock(void) { return (clock_t)clock64(); }
} // namespace biren_cuda
static inline unsigned __nanosleep_ns_(unsigned ns) { struct timespec t = {0, (long)ns}; nanosleep(&t, 0); return 0; }
#define __nanosleep(ns) ((void)__nanosleep_ns_(ns))
/* assert() in device code: the C library's assert calls __assert_fail, which this program
 * defines (weak: once per program, whichever unit): in a kernel the launch fails with
 * cudaErrorAssert after CUDA's message; elsewhere the C library's message and abort(). */
extern "C" __attribute__((weak, noreturn)) void __assert_fail(const char *expr, const char *file, unsigned int line,
                                                           const char *function) noexcept {
  birenAssertFail(expr, file, line, function);
  fprintf(stderr, "%s: %s:%u: %s: Assertion `%s' failed.\n", program_invocation_short_name, file, line, function, expr);
  abort();
}
#define __trap() birenTrap()
#define __brkpt() birenTrap()

#endif /* BIREN_CUDA_DEVICE_H_ */
