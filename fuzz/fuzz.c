/* fuzz: a seeded random driver of the BIREN C API (issue 16, "Tests that would have found these").
 *
 *   fuzz [--seed S] [--seconds T] [--threads N] [--watchdog S] [--skip LIST] [--quiet]
 *        [--reset-every N]   (a device reset every ~N operations of a thread, default 400; 0: none)
 *        [--racy-resets]     (a thread resets devices every few ms, racing with every call: codes,
 *                             hangs and crashes are checked, device memory is not used)
 *        [--selftest-hang]   (thread 0 waits for a kernel that never ends: the watchdog must fire)
 *
 * Several host threads (--threads, default 4) each run random operations against the real
 * header and library, on every device of the run (BIREN_DEVICE_COUNT, 1 or 2, chosen by the
 * caller): allocations of boundary sizes (0, 1, page-1, page, page+1, >= 1 MiB unaligned,
 * SIZE_MAX, huge), frees between live neighbours, copies of every kind value (the five kinds
 * and bogus ones) between device allocations, plain and pinned host buffers, NULL and forged
 * pointers, in and out of bounds, synchronous and in streams; fills; kernels that write a
 * pattern and kernels that check it on the device; host functions that check that a
 * synchronize inside them is refused, and host functions and stream callbacks that call every
 * call permitted there (streams, events, future waits, async copies and fills, launches, host
 * functions, callbacks, graph launches, allocations, the small calls) while resets race with
 * them; streams and events created, recorded, waited, queried,
 * synchronized and destroyed; waits on never-recorded events ("future" waits) that are
 * resolved, stalled (DEADLOCK), self-cycles, cross-device cycles and destroyed events; forged,
 * destroyed and cross-typed handles (a stream passed as an event and vice versa); hostile
 * argument arrays for birenLaunchKernelArgs; graphs built explicitly (memset, copy, kernel and
 * empty nodes, edges added later) or by capturing a non-blocking stream, launched several times
 * with kernel parameters changed between launches, destroyed while their launches run, and
 * their misuse (forged, destroyed and cross-typed graph and exec handles, cycles, bad node
 * parameters, capture of the default stream, a launch into another device's stream); device
 * resets at random moments; and the small calls (device count and properties, pointer
 * attributes, memory info, errors, policies).
 *
 * What is checked:
 *  - every return code is one the header documents for that call (the table `DOC` below), and
 *    the one expected for the arguments given (exact where the contract says so);
 *  - data integrity where the fuzzer owns the data: each thread keeps a host shadow of every
 *    device allocation it owns and compares every byte at check points (after frees of large
 *    blocks, at random, and before freeing), plus copies back into host buffers and kernels
 *    that check patterns on the device; destroyed/reset handles stay dead;
 *  - no crash (a signal handler prints the seed and every thread's last call) and no hang: a
 *    watchdog thread fails the run when a thread makes no progress for --watchdog seconds
 *    (default 30), after printing every thread's stack (gdb when present, else
 *    /proc/self/task/<tid>/{stat,wchan}) and every thread's last API call;
 *  - at the end, after a final synchronize and reset of every device, all device memory is free.
 *
 * Resets: a reset of device d takes a write lock of d; every enqueue that touches the thread's
 * own memory or handles of d holds the read lock and knows whether a reset came in between
 * (generation counter), so a reset never makes the fuzzer write into memory another thread now
 * owns, and handles killed by a reset must answer BIREN_ERROR_INVALID_HANDLE. Synchronizing
 * calls run without the lock; a call overlapped by a reset may also return the codes a reset
 * documents (INVALID_HANDLE, INVALID_DEVICE_POINTER, OUT_OF_BOUNDS).
 *
 * Known bugs (issue 16) whose checks can be switched off with --skip a,b,... (or FUZZ_SKIP),
 * "--skip known" = all of them. A skipped check is not run at all when running it would crash,
 * hang or corrupt other threads' data; harmless probes still run and are counted as
 * "observations" (not failures):
 *   madvise      bug 1: allocations >= 1 MiB get unaligned sizes and are freed with birenFree
 *                (else their sizes are whole pages and only resets free them: the arena hands
 *                a freed large range to madvise after dropping its lock, so a range
 *                reallocated in between loses its new contents)
 *   argsizes     bug 2: hostile argSizes (0, 4097, 1<<40, SIZE_MAX, 16 x SIZE_MAX) -> INVALID_VALUE
 *   xdev-wait    bug 3: future waits across devices (cycle -> DEADLOCK, stall -> DEADLOCK)
 *   cross-type   bug 5: a stream passed as an event and vice versa -> INVALID_HANDLE
 *   h2h-bounds   bug 6: host-kind copies touching a device allocation or pinned buffer past
 *                its end -> OUT_OF_BOUNDS
 *   destroy-wait bug 8: destroying an event a stream future-waits on releases the wait
 *   callback-leak issue 31: a stream callback that a reset drops before it runs leaked the
 *                runtime's record of it (32 bytes): when skipped, an ASan build (LeakSanitizer
 *                at exit) adds no stream callbacks; other builds cannot see the leak
 *
 * Output: the seed first; one line per failure (the first 50); totals; and last
 *   fuzz: F failed, C calls, seed S
 * Exit status 0 only if nothing failed. Seeds are per thread: a seed replays each thread's
 * sequence of operations, not the interleaving.
 */
#define _GNU_SOURCE
#include "biren_runtime.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif

/* ---- options ---------------------------------------------------------------------------- */

static double opt_seconds = 10;
static int opt_threads = 4;
static double opt_watchdog = 30;
static unsigned long long opt_seed;
static int opt_quiet;
static int opt_selftest_hang; /* --selftest-hang: thread 0 hangs on purpose (tests the watchdog) */
/* --racy-resets: a resetter thread resets the devices every few ms without the reset lock, so
 * resets race with every call (issue 16 bug 4: a reset zeroing the count of pending future
 * waits while a wait or a record changes it). The workers then touch no device memory (a reset
 * frees it under them) and check codes, hangs and crashes only. */
static int opt_racy;
static int nthreads_all; /* workers, plus the racy resetter */
static int ndev = 1;

enum known { K_MADVISE, K_ARGSIZES, K_XDEV, K_XTYPE, K_H2H, K_DESTROY_WAIT, K_CB_LEAK, K_COUNT };
static const char *known_names[K_COUNT] = {"madvise", "argsizes", "xdev-wait", "cross-type", "h2h-bounds", "destroy-wait", "callback-leak"};
static const char *known_bugs[K_COUNT] = {
    "bug 1: freeing a >= 1 MiB block zeroes live data (its neighbour's first page; a reallocation racing with the madvise)",
    "bug 2: birenLaunchKernelArgs trusts argSizes",
    "bug 3: a future wait across devices hangs instead of DEADLOCK",
    "bug 5: stream and event handles share one encoding",
    "bug 6: host-kind copies into device/pinned memory are not bounds-checked",
    "bug 8: destroying an event with a pending future wait leaves the stream stuck",
    "issue 31: a stream callback dropped by birenDeviceReset leaks its record (LeakSanitizer)"};
static int skip[K_COUNT];
static unsigned long long observed[K_COUNT]; /* skipped-bug probes that showed the bug */

/* ---- time, randomness ------------------------------------------------------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(double ms) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000.0);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
  nanosleep(&ts, NULL);
}

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 2685821657736338717ULL;
}
static unsigned rnd(uint64_t *s, unsigned n) { return n ? (unsigned)(rng_next(s) % n) : 0; }
static size_t rndz(uint64_t *s, size_t n) { return n ? (size_t)(rng_next(s) % n) : 0; }
static int chance(uint64_t *s, unsigned one_in) { return rnd(s, one_in) == 0; }

static unsigned char fillbyte(unsigned seed, size_t i) {
  return (unsigned char)((seed + (unsigned)i * 131u + (unsigned)(i >> 8) * 7u) ^ (seed >> 8) ^ (unsigned)(i >> 16));
}

/* ---- return-code table: what the header documents for each call ------------------------- */

/* One bit per code: codes below 32 as themselves, the CUDA-valued ones (304, 401, 900-915) above,
 * UNKNOWN and any code this table does not know at the top. */
typedef unsigned long long mask_t;
#define BITPOS(c)                                                                                        \
  ((c) == BIREN_ERROR_UNKNOWN                   ? 63                                                    \
   : (int)(c) < 32                              ? (int)(c)                                              \
   : (c) == BIREN_ERROR_ILLEGAL_STATE           ? 32                                                    \
   : (c) == BIREN_ERROR_OPERATING_SYSTEM        ? 33                                                    \
   : ((int)(c) >= 900 && (int)(c) <= 915)       ? 34 + (int)(c) - 900                                   \
                                                : 62)
#define B(code) (1ull << BITPOS(code))
#define S_ B(BIREN_SUCCESS)
#define IV B(BIREN_ERROR_INVALID_VALUE)
#define OOM B(BIREN_ERROR_OUT_OF_MEMORY)
#define IDEV B(BIREN_ERROR_INVALID_DEVICE)
#define IH B(BIREN_ERROR_INVALID_HANDLE)
#define IDP B(BIREN_ERROR_INVALID_DEVICE_POINTER)
#define OOB B(BIREN_ERROR_OUT_OF_BOUNDS)
#define BADKIND B(BIREN_ERROR_INVALID_MEMCPY_DIRECTION)
#define CFG B(BIREN_ERROR_INVALID_CONFIGURATION)
#define NR B(BIREN_ERROR_NOT_READY)
#define DL B(BIREN_ERROR_DEADLOCK)
#define LF B(BIREN_ERROR_LAUNCH_FAILURE)
#define IA B(BIREN_ERROR_ILLEGAL_ADDRESS)
#define NP B(BIREN_ERROR_NOT_PERMITTED)
#define ILS B(BIREN_ERROR_ILLEGAL_STATE)
#define SCU B(BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED)
#define SCINV B(BIREN_ERROR_STREAM_CAPTURE_INVALIDATED)
#define SCUNM B(BIREN_ERROR_STREAM_CAPTURE_UNMATCHED)
#define SCUNJ B(BIREN_ERROR_STREAM_CAPTURE_UNJOINED)
#define SCWT B(BIREN_ERROR_STREAM_CAPTURE_WRONG_THREAD)

enum fn {
  F_Malloc, F_Free, F_MallocHost, F_FreeHost, F_Memcpy, F_MemcpyAsync, F_Memset, F_MemsetAsync,
  F_MemGetInfo, F_PointerGetAttributes, F_StreamCreate, F_StreamDestroy, F_StreamSynchronize,
  F_StreamQuery, F_StreamGetPriority, F_StreamGetFlags, F_StreamWaitEvent, F_LaunchHostFunc,
  F_EventCreate, F_EventRecord, F_EventQuery, F_EventSynchronize, F_EventElapsedTime,
  F_EventDestroy, F_LaunchKernel, F_LaunchKernelArgs, F_KernelRegister, F_DeviceReset,
  F_DeviceSynchronize, F_GetDeviceCount, F_SetDevice, F_GetDevice, F_GetDeviceProperties,
  F_DeviceGetStreamPriorityRange, F_SchedulingPolicy, F_RuntimeGetVersion, F_GraphCreate, F_GraphAddNode,
  F_GraphAddDependencies, F_GraphInstantiate, F_GraphLaunch, F_GraphDestroy, F_GraphExecDestroy,
  F_GraphExecKernelNodeSetParams, F_StreamBeginCapture, F_StreamEndCapture, F_StreamAddCallback, F_COUNT
};

/* From include/biren_runtime.h; NOT_INITIALIZED is documented for every call but never expected
 * here (birenInit comes first). Where a doc says "checked as birenMemcpy" the codes are
 * inherited; INVALID_HANDLE is listed for every call taking a stream or event handle (the
 * header's preamble: a destroyed or forged handle gives INVALID_HANDLE). */
static const struct {
  const char *name;
  mask_t doc;
} DOC[F_COUNT] = {
    [F_Malloc] = {"birenMalloc", S_ | IV | OOM},
    [F_Free] = {"birenFree", S_ | IDP},
    [F_MallocHost] = {"birenMallocHost", S_ | IV | OOM},
    [F_FreeHost] = {"birenFreeHost", S_ | IV},
    [F_Memcpy] = {"birenMemcpy", S_ | BADKIND | IV | IDP | OOB | NP},
    [F_MemcpyAsync] = {"birenMemcpyAsync", S_ | BADKIND | IV | IDP | OOB | IH},
    [F_Memset] = {"birenMemset", S_ | IV | IDP | OOB | NP},
    [F_MemsetAsync] = {"birenMemsetAsync", S_ | IV | IDP | OOB | IH},
    [F_MemGetInfo] = {"birenMemGetInfo", S_ | IV},
    [F_PointerGetAttributes] = {"birenPointerGetAttributes", S_ | IV},
    [F_StreamCreate] = {"birenStreamCreate*", S_ | IV},
    [F_StreamDestroy] = {"birenStreamDestroy", S_ | IH},
    [F_StreamSynchronize] = {"birenStreamSynchronize", S_ | IH | DL | NP | LF | IA},
    [F_StreamQuery] = {"birenStreamQuery", S_ | NR | IH},
    [F_StreamGetPriority] = {"birenStreamGetPriority", S_ | IV | IH},
    [F_StreamGetFlags] = {"birenStreamGetFlags", S_ | IV | IH},
    [F_StreamWaitEvent] = {"birenStreamWaitEvent", S_ | IH},
    [F_LaunchHostFunc] = {"birenLaunchHostFunc", S_ | IV | IH},
    [F_EventCreate] = {"birenEventCreate*", S_ | IV},
    [F_EventRecord] = {"birenEventRecord", S_ | DL | IH},
    [F_EventQuery] = {"birenEventQuery", S_ | NR | IH},
    [F_EventSynchronize] = {"birenEventSynchronize", S_ | DL | NP | IH},
    [F_EventElapsedTime] = {"birenEventElapsedTime", S_ | NR | IH | IV},
    [F_EventDestroy] = {"birenEventDestroy", S_ | IH},
    [F_LaunchKernel] = {"birenLaunchKernel", S_ | IV | CFG | IH},
    [F_LaunchKernelArgs] = {"birenLaunchKernelArgs", S_ | IV | CFG | IH},
    [F_KernelRegister] = {"birenKernelRegister", S_ | IV},
    [F_DeviceReset] = {"birenDeviceReset", S_ | NP},
    [F_DeviceSynchronize] = {"birenDeviceSynchronize", S_ | DL | NP | LF | IA},
    [F_GetDeviceCount] = {"birenGetDeviceCount", S_ | IV},
    [F_SetDevice] = {"birenSetDevice", S_ | IDEV},
    [F_GetDevice] = {"birenGetDevice", S_ | IV},
    [F_GetDeviceProperties] = {"birenGetDeviceProperties", S_ | IV | IDEV},
    [F_DeviceGetStreamPriorityRange] = {"birenDeviceGetStreamPriorityRange", S_},
    [F_SchedulingPolicy] = {"birenDevice{Set,Get}SchedulingPolicy", S_ | IV},
    [F_RuntimeGetVersion] = {"birenRuntimeGetVersion", S_ | IV},
    [F_GraphCreate] = {"birenGraphCreate", S_ | IV},
    /* kernel, memset, 1-D copy and empty nodes: the union of their documented codes */
    [F_GraphAddNode] = {"birenGraphAdd*Node", S_ | IV | CFG | IH | IDP | OOB | BADKIND},
    [F_GraphAddDependencies] = {"birenGraphAddDependencies", S_ | IV | IH},
    [F_GraphInstantiate] = {"birenGraphInstantiate", S_ | IV | IH},
    [F_GraphLaunch] = {"birenGraphLaunch", S_ | IH | IV | IDP | DL},
    [F_GraphDestroy] = {"birenGraphDestroy", S_ | IH},
    [F_GraphExecDestroy] = {"birenGraphExecDestroy", S_ | IH},
    [F_GraphExecKernelNodeSetParams] = {"birenGraphExecKernelNodeSetParams", S_ | IV | CFG | IH},
    [F_StreamBeginCapture] = {"birenStreamBeginCapture", S_ | SCU | ILS | IV | IH},
    [F_StreamEndCapture] = {"birenStreamEndCapture", S_ | ILS | SCUNM | SCWT | SCINV | SCUNJ | IV},
    [F_StreamAddCallback] = {"birenStreamAddCallback", S_ | IV | IH},
};
/* What a call overlapped by a reset of its device may also return. */
#define RESET_TOLERATED (IH | IDP | OOB)

static void mask_names(mask_t m, char *buf, size_t n) {
  static const birenError_t all[] = {
      BIREN_SUCCESS, BIREN_ERROR_INVALID_VALUE, BIREN_ERROR_OUT_OF_MEMORY, BIREN_ERROR_NOT_INITIALIZED,
      BIREN_ERROR_INVALID_DEVICE, BIREN_ERROR_INVALID_HANDLE, BIREN_ERROR_INVALID_DEVICE_POINTER,
      BIREN_ERROR_OUT_OF_BOUNDS, BIREN_ERROR_INVALID_MEMCPY_DIRECTION, BIREN_ERROR_INVALID_CONFIGURATION,
      BIREN_ERROR_NOT_READY, BIREN_ERROR_DEADLOCK, BIREN_ERROR_LAUNCH_FAILURE, BIREN_ERROR_ILLEGAL_ADDRESS,
      BIREN_ERROR_NOT_PERMITTED, BIREN_ERROR_NOT_SUPPORTED, BIREN_ERROR_ILLEGAL_STATE,
      BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED, BIREN_ERROR_STREAM_CAPTURE_INVALIDATED,
      BIREN_ERROR_STREAM_CAPTURE_UNMATCHED, BIREN_ERROR_STREAM_CAPTURE_UNJOINED,
      BIREN_ERROR_STREAM_CAPTURE_IMPLICIT, BIREN_ERROR_STREAM_CAPTURE_WRONG_THREAD, BIREN_ERROR_UNKNOWN};
  size_t used = 0;
  buf[0] = 0;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (!(m & B(all[i]))) continue;
    int k = snprintf(buf + used, n - used, "%s%s", used ? "|" : "", birenGetErrorName(all[i]));
    if (k < 0 || (size_t)k >= n - used) break;
    used += (size_t)k;
  }
}

/* ---- per-thread state ------------------------------------------------------------------- */

#define MAX_THREADS 32
#define MAX_DEV 2
#define MAX_ALLOCS 24
#define MAX_STREAMS 8
#define MAX_EVENTS 8
#define GRAVE 32
#define OWNED_CAP ((size_t)16 << 20) /* device bytes a thread owns at most */
#define HBUF_SIZE ((size_t)8 << 20)   /* plain host staging buffer */
#define PBUF_SIZE ((size_t)4 << 20)   /* pinned staging buffer */
#define PAGE ((size_t)4096)
#define MIB ((size_t)1 << 20)

enum { PEND_NONE = -1, PEND_NULL = 100, PEND_DEV = 101 };

typedef struct alloc {
  unsigned char *p;
  size_t size;
  int dev;
  unsigned long gen;      /* resets[dev] when allocated */
  unsigned char *shadow;  /* what the device bytes must be */
  int pend;               /* PEND_NONE, a stream slot, PEND_NULL or PEND_DEV */
  int used;
} alloc_t;

typedef struct sslot {
  birenStream_t s;
  int dev, used, nonblocking, prio;
  unsigned long gen;
} sslot;

typedef struct eslot {
  birenEvent_t e;
  int dev, used, timing;
  unsigned long gen;
} eslot;

typedef struct hostjob {
  volatile int ran;
  int codes[3]; /* birenStreamSynchronize(NULL), birenDeviceSynchronize, birenMemcpy inside */
  unsigned long gen;
  int dev;
  int kind;          /* HJ_REFUSED, HJ_BUSY (a host function) or HJ_CALLBACK (a stream callback) */
  uint64_t rng;      /* the busy kinds' own randomness (seeded by the worker at each launch) */
  birenStream_t in;  /* the stream the job was enqueued in */
} hostjob;

enum { HJ_REFUSED, HJ_BUSY, HJ_CALLBACK };

typedef struct worker {
  int id;
  pthread_t tid;
  pid_t ostid;
  uint64_t rng;
  int dev;                  /* current device */
  unsigned long opgen[MAX_DEV]; /* resets[d] at the start of the current operation */
  alloc_t allocs[MAX_ALLOCS];
  size_t owned;
  sslot streams[MAX_STREAMS];
  eslot events[MAX_EVENTS];
  birenStream_t grave_s[GRAVE]; /* destroyed handles: dead forever */
  birenEvent_t grave_e[GRAVE];
  unsigned ngs, nge;
  unsigned char *hbuf, *pbuf, *cmp;
  unsigned long long *counter; /* pinned: device-side pattern checks count mismatches here */
  hostjob jobs[8];
  unsigned long long calls, ops, checks_data, bytes_checked, tolerated;
  /* for the watchdog and the crash handler */
  const char *volatile last_call;
  volatile int last_line;
  volatile int in_call;
  double progress; /* __atomic */
  volatile int active;
  char opname[32];
  double op_time[24]; /* seconds spent per operation kind (OPS order; the last: resets) */
  unsigned long long op_count[24];
} worker;

static worker workers[MAX_THREADS];
static volatile int stop_flag;
static volatile int all_done;
static unsigned long long failures;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

/* Reset protocol: resets[d] changes only under the write lock of dev_lock[d]. */
static pthread_rwlock_t dev_lock[MAX_DEV];
static unsigned long resets[MAX_DEV];
/* Allocation lock: every birenMalloc/birenMallocHost of the fuzzer takes it shared; a double
 * free test takes it exclusively (so no other thread can be handed the freed address). */
static pthread_rwlock_t alloc_lock = PTHREAD_RWLOCK_INITIALIZER;
/* Recent large frees (for the report when data goes missing). */
typedef struct freed_range {
  uintptr_t base;
  size_t size;
  int dev;
} freed_range;
static freed_range recent_frees[16];
static unsigned recent_free_n;
static pthread_mutex_t recent_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long gen_of(int d) { return __atomic_load_n(&resets[d], __ATOMIC_SEQ_CST); }
static int reset_since_op(worker *w, int d) { return opt_racy || gen_of(d) != w->opgen[d]; }

static void progress(worker *w) {
  double n = now_s();
  __atomic_store(&w->progress, &n, __ATOMIC_RELAXED);
}

static void fail(worker *w, int line, const char *fmt, ...) {
  unsigned long long n = __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
  if (n > 50) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&out_lock);
  fprintf(stderr, "fuzz: FAIL thread %d dev %d op %s (fuzz.c:%d): %s [seed %llu]\n", w ? w->id : -1, w ? w->dev : -1,
          w ? w->opname : "-", line, msg, opt_seed);
  fflush(stderr);
  pthread_mutex_unlock(&out_lock);
}

/* Wraps an API call: notes it for the watchdog, counts it, and evaluates to its result. */
#define API(w, call)                                                                            \
  ((w)->last_call = #call, (w)->last_line = __LINE__, (w)->in_call = 1, (w)->calls++,          \
   api_done((w), (call)))
static birenError_t api_done(worker *w, birenError_t e) {
  w->in_call = 0;
  progress(w);
  return e;
}

/* Judges a result: it must be documented for the call (DOC) and in `expect`. If it is not, and a
 * reset of `dev` came since the operation began and the code is one a reset explains, it is
 * tolerated. Returns 0 when the code is expected, 1 when tolerated (the caller abandons the
 * operation), 2 on a failure (already reported). `known` >= 0 tags a check of a known bug. */
static int judge_k(worker *w, int line, enum fn f, birenError_t e, mask_t expect, int dev, int known, const char *what) {
  mask_t b = B(e);
  if ((b & expect) && (b & DOC[f].doc)) return 0;
  if (dev >= 0 && (b & RESET_TOLERATED) && reset_since_op(w, dev)) {
    w->tolerated++;
    return 1;
  }
  char want[256];
  mask_names(expect, want, sizeof want);
  if (!(b & DOC[f].doc))
    fail(w, line, "%s%s%s: %s returned %s (%d), which its documentation does not list (expected %s)%s%s%s",
         known >= 0 ? "[known " : "", known >= 0 ? known_names[known] : "", known >= 0 ? "] " : "", DOC[f].name,
         birenGetErrorName(e), (int)e, want, what ? " [" : "", what ? what : "", what ? "]" : "");
  else
    fail(w, line, "%s%s%s%s returned %s, expected %s%s%s%s", known >= 0 ? "[known " : "",
         known >= 0 ? known_names[known] : "", known >= 0 ? "] " : "", DOC[f].name, birenGetErrorName(e), want,
         what ? " [" : "", what ? what : "", what ? "]" : "");
  return 2;
}
#define JUDGE(w, f, e, expect, dev, what) judge_k((w), __LINE__, (f), (e), (expect), (dev), -1, (what))
#define JUDGE_K(w, f, e, expect, dev, k, what) judge_k((w), __LINE__, (f), (e), (expect), (dev), (k), (what))

static void set_op(worker *w, const char *name) {
  snprintf(w->opname, sizeof w->opname, "%s", name);
  for (int d = 0; d < ndev; d++) w->opgen[d] = gen_of(d);
}

/* ---- kernels ------------------------------------------------------------------------------ */

static size_t linear_tid(size_t *nthreads) {
  dim3 b = birenBlockIdx(), t = birenThreadIdx(), bd = birenBlockDim(), gd = birenGridDim();
  size_t per = (size_t)bd.x * bd.y * bd.z;
  *nthreads = per * gd.x * gd.y * gd.z;
  size_t blk = ((size_t)b.z * gd.y + b.y) * gd.x + b.x;
  return blk * per + ((size_t)t.z * bd.y + t.y) * bd.x + t.x;
}

/* p[i] = fillbyte(seed, i) for i < n. */
static void k_fill(void **args) {
  unsigned char *p = *(unsigned char **)args[0];
  size_t n = *(size_t *)args[1];
  unsigned seed = *(unsigned *)args[2];
  size_t nt, i = linear_tid(&nt);
  for (; i < n; i += nt) p[i] = fillbyte(seed, i);
}

/* *bad += number of i < n with p[i] != fillbyte(seed, i). */
static void k_check(void **args) {
  const unsigned char *p = *(const unsigned char **)args[0];
  size_t n = *(size_t *)args[1];
  unsigned seed = *(unsigned *)args[2];
  unsigned long long *bad = *(unsigned long long **)args[3];
  size_t nt, i = linear_tid(&nt);
  unsigned long long b = 0;
  for (; i < n; i += nt) b += p[i] != fillbyte(seed, i);
  if (b) __atomic_fetch_add(bad, b, __ATOMIC_RELAXED);
}

static void k_nop(void **args) { (void)args; }

/* Never ends (--selftest-hang). */
static void k_forever(void **args) {
  (void)args;
  for (;;) sleep_ms(1);
}

/* The same as k_fill but registered (birenLaunchKernel copies its arguments). */
static void k_fill_reg(void **args) { k_fill(args); }

/* A host function: a synchronize inside must be refused with NOT_PERMITTED. */
static void host_job(void *p) {
  hostjob *j = p;
  j->codes[0] = (int)birenStreamSynchronize(NULL);
  j->codes[1] = (int)birenDeviceSynchronize();
  char a = 1, b = 0;
  j->codes[2] = (int)birenMemcpy(&b, &a, 1, birenMemcpyHostToHost);
  __atomic_store_n(&j->ran, 1, __ATOMIC_SEQ_CST);
}

/* ---- helpers on the thread's own state --------------------------------------------------- */

static void lock_dev(int d) { pthread_rwlock_rdlock(&dev_lock[d]); }
static void unlock_dev(int d) { pthread_rwlock_unlock(&dev_lock[d]); }

static void use_device(worker *w, int d) {
  if (w->dev == d) return;
  birenError_t e = API(w, birenSetDevice(d));
  JUDGE(w, F_SetDevice, e, S_, -1, NULL);
  w->dev = d;
}

/* ---- host functions and stream callbacks that call the runtime ---------------------------
 *
 * Inside a host function or a stream callback the header permits every call that does not
 * synchronize, and refuses the synchronizing ones with NOT_PERMITTED. A busy job calls them at
 * random while other threads reset the devices (issue 31: a reset waiting for a host function
 * that waited, inside birenEventDestroy, for a lock the reset held). Each call's code must be
 * one its documentation lists and the one expected, or one a reset explains when a reset of
 * the device began since the job started (or with --racy-resets). Device memory is touched
 * only under the device's reset lock, taken with trylock (a job must never wait for a reset,
 * which waits for the job). */

static unsigned char hj_src[256], hj_dst[256]; /* async host-to-host copies of the jobs */
static unsigned long long busy_jobs, busy_calls;  /* busy jobs run, calls they made (__atomic) */
static void hj_leaf(void *p) { (void)p; }
static void hj_leaf_cb(birenStream_t s, birenError_t status, void *p) {
  (void)s, (void)status, (void)p;
}

/* Judges a code inside a job: the worker is not ours to touch, so failures go to fail(NULL). */
/* What a busy job reads of its slot, once, at its start: with --racy-resets a slot whose job a
 * reset may have dropped is launched again, so its fields are written and read atomically. */
typedef struct jobctx {
  int dev, kind;
  birenStream_t in;
  uint64_t rng;
} jobctx;

static int hj_judge(const jobctx *j, unsigned long g0, int line, enum fn f, birenError_t e, mask_t expect) {
  mask_t b = B(e);
  __atomic_fetch_add(&busy_calls, 1, __ATOMIC_RELAXED);
  if ((b & expect) && (b & DOC[f].doc)) return 0;
  if ((b & RESET_TOLERATED) && (opt_racy || gen_of(j->dev) != g0)) return 1;
  char want[256];
  mask_names(expect, want, sizeof want);
  fail(NULL, line, "inside a %s on device %d, %s returned %s, expected %s", j->kind == HJ_CALLBACK ? "stream callback" : "host function",
       j->dev, DOC[f].name, birenGetErrorName(e), want);
  return 2;
}
#define HJ(f, call, expect) hj_judge(j, g0, __LINE__, (f), (call), (expect))

static void busy_job(hostjob *slot) {
  jobctx ctx = {__atomic_load_n(&slot->dev, __ATOMIC_SEQ_CST), __atomic_load_n(&slot->kind, __ATOMIC_SEQ_CST),
                __atomic_load_n(&slot->in, __ATOMIC_SEQ_CST), __atomic_load_n(&slot->rng, __ATOMIC_SEQ_CST)};
  const jobctx *j = &ctx;
  unsigned long g0 = gen_of(j->dev);
  uint64_t *rng = &ctx.rng;
  birenError_t e;
  HJ(F_SetDevice, birenSetDevice(j->dev), S_);
  /* The synchronizing calls are refused. */
  HJ(F_StreamSynchronize, birenStreamSynchronize(NULL), NP);
  HJ(F_StreamSynchronize, birenStreamSynchronize(j->in), NP | IH);
  HJ(F_DeviceSynchronize, birenDeviceSynchronize(), NP);
  HJ(F_DeviceReset, birenDeviceReset(), NP);
  char a = 1, b = 0;
  HJ(F_Memcpy, birenMemcpy(&b, &a, 1, birenMemcpyHostToHost), NP);
  /* Everything else is permitted, in a random order of a few rounds. */
  birenStream_t t = NULL;
  birenEvent_t ev = NULL, fut = NULL;
  for (int round = 0, n = 2 + (int)rnd(rng, 6); round < n; round++) {
    switch (rnd(rng, 12)) {
    case 0: /* a stream of its own */
      if (t) break;
      if (chance(rng, 2))
        e = birenStreamCreateWithFlags(&t, chance(rng, 2) ? birenStreamNonBlocking : birenStreamDefault);
      else
        e = birenStreamCreateWithPriority(&t, birenStreamNonBlocking, -(int)rnd(rng, 2));
      if (HJ(F_StreamCreate, e, S_)) t = NULL;
      break;
    case 1: /* an event, recorded, queried, waited for */
      if (!ev && HJ(F_EventCreate, birenEventCreate(&ev), S_)) ev = NULL;
      if (!ev) break;
      {
        /* The callback's own stream may be destroyed meanwhile (as for its synchronize above). */
        birenStream_t rs = chance(rng, 2) ? t : j->in;
        HJ(F_EventRecord, birenEventRecord(ev, rs), S_ | DL | (rs == j->in ? IH : 0));
      }
      HJ(F_EventQuery, birenEventQuery(ev), S_ | NR);
      if (t) HJ(F_StreamWaitEvent, birenStreamWaitEvent(t, ev), S_);
      if (chance(rng, 2)) {
        float ms;
        HJ(F_EventElapsedTime, birenEventElapsedTime(&ms, ev, ev), S_ | NR);
      }
      HJ(F_EventSynchronize, birenEventSynchronize(ev), NP);
      break;
    case 2: /* a wait on a never-recorded event, then resolved or abandoned */
      if (!t || fut) break;
      if (HJ(F_EventCreate, birenEventCreateWithFlags(&fut, birenEventDisableTiming), S_)) {
        fut = NULL;
        break;
      }
      HJ(F_StreamWaitEvent, birenStreamWaitEvent(t, fut), S_);
      break;
    case 3: /* async copies and launches in its stream (NULL: the default stream) */
      HJ(F_MemcpyAsync, birenMemcpyAsync(hj_dst, hj_src, 1 + rnd(rng, sizeof hj_src), birenMemcpyHostToHost, t), S_);
      HJ(F_LaunchKernel, birenLaunchKernel(k_nop, birenDim3(1 + rnd(rng, 3), 1, 1), birenDim3(1 + rnd(rng, 32), 1, 1), NULL, 0, t), S_);
      break;
    case 4: /* host functions and callbacks from a host function */
      HJ(F_LaunchHostFunc, birenLaunchHostFunc(t, hj_leaf, NULL), S_);
#ifdef FUZZ_ASAN
      if (skip[K_CB_LEAK]) break; /* a reset may drop the callback: a leak (known bug) */
#endif
      HJ(F_StreamAddCallback, birenStreamAddCallback(t, hj_leaf_cb, NULL, 0), S_);
      break;
    case 5: { /* device memory: allocated, filled, freed (under the reset lock, if free) */
      if (opt_racy || pthread_rwlock_tryrdlock(&dev_lock[j->dev]) != 0) break;
      void *p = NULL;
      size_t size = 1 + rndz(rng, 64 * 1024);
      e = birenMalloc(&p, size);
      if (!HJ(F_Malloc, e, S_ | OOM) && e == BIREN_SUCCESS) {
        HJ(F_MemsetAsync, birenMemsetAsync(p, (int)rnd(rng, 256), size, t), S_);
        HJ(F_Memset, birenMemset(p, 0, size), NP);
        HJ(F_MemcpyAsync, birenMemcpyAsync(p, hj_src, size < sizeof hj_src ? size : sizeof hj_src, birenMemcpyHostToDevice, t), S_);
        HJ(F_Free, birenFree(p), S_);
      }
      pthread_rwlock_unlock(&dev_lock[j->dev]);
      break;
    }
    case 6: { /* a small graph, launched in its stream */
      birenGraph_t g;
      birenGraphExec_t x;
      birenGraphNode_t n1, n2;
      if (HJ(F_GraphCreate, birenGraphCreate(&g, 0), S_)) break;
      birenKernelNodeParams kp;
      memset(&kp, 0, sizeof kp);
      kp.func = k_nop;
      kp.gridDim = birenDim3(1 + rnd(rng, 2), 1, 1);
      kp.blockDim = birenDim3(1 + rnd(rng, 16), 1, 1);
      HJ(F_GraphAddNode, birenGraphAddKernelNode(&n1, g, NULL, 0, &kp), S_);
      HJ(F_GraphAddNode, birenGraphAddEmptyNode(&n2, g, &n1, 1), S_);
      if (!HJ(F_GraphInstantiate, birenGraphInstantiate(&x, g, 0), S_)) {
        HJ(F_GraphLaunch, birenGraphLaunch(x, t), S_);
        HJ(F_GraphExecDestroy, birenGraphExecDestroy(x), S_);
      }
      HJ(F_GraphDestroy, birenGraphDestroy(g), S_);
      break;
    }
    case 7: { /* the small calls */
      int dev = -1, count = 0, lo = 0, hi = 0;
      size_t fr = 0, tot = 0;
      HJ(F_GetDevice, birenGetDevice(&dev), S_);
      if (dev != j->dev) fail(NULL, __LINE__, "inside a job, birenGetDevice gave %d after birenSetDevice(%d)", dev, j->dev);
      HJ(F_GetDeviceCount, birenGetDeviceCount(&count), S_);
      HJ(F_MemGetInfo, birenMemGetInfo(&fr, &tot), S_);
      HJ(F_DeviceGetStreamPriorityRange, birenDeviceGetStreamPriorityRange(&lo, &hi), S_);
      struct birenPointerAttributes pa;
      HJ(F_PointerGetAttributes, birenPointerGetAttributes(&pa, hj_src), S_);
      (void)birenGetLastError();
      (void)birenPeekAtLastError();
      break;
    }
    case 8: /* queries of its stream */
      if (t) {
        int prio = 0;
        unsigned flags = 0;
        HJ(F_StreamQuery, birenStreamQuery(t), S_ | NR);
        HJ(F_StreamGetPriority, birenStreamGetPriority(t, &prio), S_);
        HJ(F_StreamGetFlags, birenStreamGetFlags(t, &flags), S_);
      }
      break;
    case 9: /* the future resolved by a record (in the job's stream: after the job) */
      if (fut) {
        {
          birenStream_t rs = chance(rng, 2) ? NULL : j->in;
          HJ(F_EventRecord, birenEventRecord(fut, rs), S_ | DL | (rs ? IH : 0));
        }
        HJ(F_EventDestroy, birenEventDestroy(fut), S_);
        fut = NULL;
      }
      break;
    case 10: /* its stream destroyed with work pending */
      if (t) {
        HJ(F_StreamDestroy, birenStreamDestroy(t), S_);
        t = NULL;
      }
      break;
    default: /* the event destroyed (a future wait on it is released) */
      if (ev) {
        HJ(F_EventDestroy, birenEventDestroy(ev), S_);
        ev = NULL;
      }
      if (fut && chance(rng, 2)) {
        HJ(F_EventDestroy, birenEventDestroy(fut), S_);
        fut = NULL;
      }
      break;
    }
  }
  if (fut) HJ(F_EventDestroy, birenEventDestroy(fut), S_);
  if (ev) HJ(F_EventDestroy, birenEventDestroy(ev), S_);
  if (t) HJ(F_StreamDestroy, birenStreamDestroy(t), S_);
  __atomic_fetch_add(&busy_jobs, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&slot->ran, 1, __ATOMIC_SEQ_CST);
}

static void host_busy(void *p) { busy_job(p); }
static void callback_busy(birenStream_t s, birenError_t status, void *p) {
  (void)s;
  (void)status;
  busy_job(p);
}

static void bury_stream(worker *w, birenStream_t s) { w->grave_s[w->ngs++ % GRAVE] = s; }
static void bury_event(worker *w, birenEvent_t e) { w->grave_e[w->nge++ % GRAVE] = e; }

/* Drops everything of device d that a reset killed (call with the read lock of d held): handles
 * must then be dead; memory is forgotten (its address may already be another thread's). */
static void reap_device(worker *w, int d) {
  unsigned long g = gen_of(d);
  for (int i = 0; i < MAX_STREAMS; i++) {
    sslot *s = &w->streams[i];
    if (!s->used || s->dev != d || s->gen == g) continue;
    birenError_t e = API(w, birenStreamQuery(s->s));
    if (!opt_racy) JUDGE(w, F_StreamQuery, e, IH, -1, "stream destroyed by birenDeviceReset");
    /* With racy resets a handle made while a reset ran may have survived it: destroy it, for a
     * buried handle must be dead (the destroyed-handle checks expect INVALID_HANDLE). Another
     * reset may destroy it first. */
    for (int j = 0; j < MAX_ALLOCS; j++)
      if (w->allocs[j].used && w->allocs[j].pend == i) w->allocs[j].pend = PEND_DEV;
    if (e != BIREN_ERROR_INVALID_HANDLE) {
      e = API(w, birenStreamDestroy(s->s));
      JUDGE(w, F_StreamDestroy, e, S_ | IH, -1, "a stream that survived a racy reset");
    }
    bury_stream(w, s->s);
    s->used = 0;
  }
  for (int i = 0; i < MAX_EVENTS; i++) {
    eslot *v = &w->events[i];
    if (!v->used || v->dev != d || v->gen == g) continue;
    birenError_t e = API(w, birenEventQuery(v->e));
    if (!opt_racy) JUDGE(w, F_EventQuery, e, IH, -1, "event destroyed by birenDeviceReset");
    if (e != BIREN_ERROR_INVALID_HANDLE) { /* survived a racy reset (see above) */
      e = API(w, birenEventDestroy(v->e));
      JUDGE(w, F_EventDestroy, e, S_ | IH, -1, "an event that survived a racy reset");
    }
    bury_event(w, v->e);
    v->used = 0;
  }
  for (int i = 0; i < MAX_ALLOCS; i++) {
    alloc_t *a = &w->allocs[i];
    if (!a->used || a->dev != d || a->gen == g) continue;
    free(a->shadow);
    w->owned -= a->size;
    memset(a, 0, sizeof *a);
  }
}

static int alloc_alive(worker *w, alloc_t *a) { (void)w; return a->used && a->gen == gen_of(a->dev); }

static alloc_t *pick_alloc(worker *w, int d) {
  int idx[MAX_ALLOCS], n = 0;
  for (int i = 0; i < MAX_ALLOCS; i++)
    if (w->allocs[i].used && w->allocs[i].dev == d) idx[n++] = i;
  return n ? &w->allocs[idx[rnd(&w->rng, (unsigned)n)]] : NULL;
}

static int pick_stream(worker *w, int d) {
  int idx[MAX_STREAMS], n = 0;
  for (int i = 0; i < MAX_STREAMS; i++)
    if (w->streams[i].used && w->streams[i].dev == d) idx[n++] = i;
  return n ? idx[rnd(&w->rng, (unsigned)n)] : -1;
}

static int pick_event(worker *w, int d) {
  int idx[MAX_EVENTS], n = 0;
  for (int i = 0; i < MAX_EVENTS; i++)
    if (w->events[i].used && w->events[i].dev == d) idx[n++] = i;
  return n ? idx[rnd(&w->rng, (unsigned)n)] : -1;
}

static int free_stream_slot(worker *w) {
  for (int i = 0; i < MAX_STREAMS; i++)
    if (!w->streams[i].used) return i;
  return -1;
}
static int free_event_slot(worker *w) {
  for (int i = 0; i < MAX_EVENTS; i++)
    if (!w->events[i].used) return i;
  return -1;
}

/* Creates a stream on device d into a slot (read lock of d held). Returns the slot or -1. */
static int new_stream(worker *w, int d, int nonblocking) {
  int k = free_stream_slot(w);
  if (k < 0) return -1;
  use_device(w, d);
  birenStream_t s = NULL;
  int prio = -(int)rnd(&w->rng, 6);
  birenError_t e = API(w, birenStreamCreateWithPriority(&s, nonblocking ? birenStreamNonBlocking : birenStreamDefault, prio));
  if (JUDGE(w, F_StreamCreate, e, S_, d, NULL)) return -1;
  sslot *t = &w->streams[k];
  t->s = s;
  t->dev = d;
  t->used = 1;
  t->nonblocking = nonblocking;
  t->prio = prio;
  t->gen = gen_of(d);
  return k;
}

static int new_event(worker *w, int d, unsigned flags) {
  int k = free_event_slot(w);
  if (k < 0) return -1;
  use_device(w, d);
  birenEvent_t ev = NULL;
  birenError_t e = API(w, birenEventCreateWithFlags(&ev, flags));
  if (JUDGE(w, F_EventCreate, e, S_, d, NULL)) return -1;
  eslot *t = &w->events[k];
  t->e = ev;
  t->dev = d;
  t->used = 1;
  t->timing = !(flags & birenEventDisableTiming);
  t->gen = gen_of(d);
  return k;
}

/* Destroys one of the thread's streams (read lock held), then checks the handle is dead.
 * Allocations with work pending in it now need a device synchronize. */
static void destroy_stream(worker *w, int k) {
  sslot *s = &w->streams[k];
  for (int i = 0; i < MAX_ALLOCS; i++)
    if (w->allocs[i].used && w->allocs[i].pend == k) w->allocs[i].pend = PEND_DEV;
  birenError_t e = API(w, birenStreamDestroy(s->s));
  JUDGE(w, F_StreamDestroy, e, S_, s->dev, NULL);
  e = API(w, birenStreamQuery(s->s));
  JUDGE(w, F_StreamQuery, e, IH, s->dev, "query of a destroyed stream");
  bury_stream(w, s->s);
  s->used = 0;
}

static void destroy_event(worker *w, int k) {
  eslot *v = &w->events[k];
  birenError_t e = API(w, birenEventDestroy(v->e));
  JUDGE(w, F_EventDestroy, e, S_, v->dev, NULL);
  e = API(w, birenEventQuery(v->e));
  JUDGE(w, F_EventQuery, e, IH, v->dev, "query of a destroyed event");
  bury_event(w, v->e);
  v->used = 0;
}

/* Work of stream slot k (or PEND_NULL: device d's default stream) is known complete. */
static void clear_pend(worker *w, int d, int k) {
  for (int i = 0; i < MAX_ALLOCS; i++)
    if (w->allocs[i].used && w->allocs[i].dev == d && w->allocs[i].pend == k) w->allocs[i].pend = PEND_NONE;
}

/* Synchronizes whatever work may still touch allocation a (no lock held). Returns 0 when a has
 * nothing pending afterwards. */
static int settle(worker *w, alloc_t *a) {
  if (a->pend == PEND_NONE) return 0;
  int d = a->dev;
  if (!alloc_alive(w, a)) return 1; /* a reset took it: reaped under the lock later */
  use_device(w, d);
  birenError_t e;
  if (a->pend == PEND_NULL) {
    e = API(w, birenStreamSynchronize(NULL));
    if (JUDGE(w, F_StreamSynchronize, e, S_, d, "default stream")) return 1;
    clear_pend(w, d, PEND_NULL);
    return 0;
  }
  if (a->pend == PEND_DEV) {
    e = API(w, birenDeviceSynchronize());
    if (e == BIREN_ERROR_DEADLOCK) return 1; /* another thread's stalled future wait: documented */
    if (JUDGE(w, F_DeviceSynchronize, e, S_ | DL, d, NULL)) return 1;
    for (int i = 0; i < MAX_ALLOCS; i++)
      if (w->allocs[i].used && w->allocs[i].dev == d) w->allocs[i].pend = PEND_NONE;
    return 0;
  }
  int k = a->pend;
  if (!w->streams[k].used || w->streams[k].gen != gen_of(d)) return 1;
  e = API(w, birenStreamSynchronize(w->streams[k].s));
  if (JUDGE(w, F_StreamSynchronize, e, S_, d, "stream with the allocation's pending work")) return 1;
  clear_pend(w, d, k);
  return 0;
}

static void note_large_free(uintptr_t base, size_t size, int dev) {
  pthread_mutex_lock(&recent_lock);
  recent_frees[recent_free_n++ % 16] = (freed_range){base, size, dev};
  pthread_mutex_unlock(&recent_lock);
}

/* Compares allocation a (nothing pending, read lock of its device held) with its shadow. */
static void verify_alloc(worker *w, alloc_t *a, const char *when) {
  if (!alloc_alive(w, a) || a->pend != PEND_NONE) return;
  use_device(w, a->dev);
  birenError_t e = API(w, birenMemcpy(w->cmp, a->p, a->size, birenMemcpyDeviceToHost));
  if (JUDGE(w, F_Memcpy, e, S_, a->dev, "read back for a data check")) return;
  w->checks_data++;
  w->bytes_checked += a->size;
  if (memcmp(w->cmp, a->shadow, a->size) == 0) return;
  size_t first = 0, bad = 0, zero = 0, last = 0;
  for (size_t i = 0; i < a->size; i++)
    if (w->cmp[i] != a->shadow[i]) {
      if (!bad) first = i;
      last = i;
      bad++;
      zero += w->cmp[i] == 0;
    }
  char near[256] = "";
  pthread_mutex_lock(&recent_lock);
  for (unsigned i = 0; i < 16; i++) {
    freed_range *r = &recent_frees[i];
    if (r->size && r->dev == a->dev && r->base + r->size <= (uintptr_t)a->p && (uintptr_t)a->p - (r->base + r->size) < PAGE) {
      snprintf(near, sizeof near, "; a %zu-byte block freed just before it at %#lx ended %zu bytes before it (in the same page)",
               r->size, (unsigned long)r->base, (size_t)((uintptr_t)a->p - (r->base + r->size)));
    }
  }
  pthread_mutex_unlock(&recent_lock);
  fail(w, __LINE__,
       "data lost (%s): allocation %p of %zu bytes on device %d: %zu bytes differ from what was written, offsets %zu..%zu, %zu of them now zero%s",
       when, (void *)a->p, a->size, a->dev, bad, first, last, zero, near);
  memcpy(a->shadow, w->cmp, a->size); /* report once */
}

/* Checks every allocation of the thread on device d that has nothing pending (lock held). */
static void verify_all(worker *w, int d, const char *when) {
  for (int i = 0; i < MAX_ALLOCS; i++)
    if (w->allocs[i].used && w->allocs[i].dev == d && w->allocs[i].pend == PEND_NONE) verify_alloc(w, &w->allocs[i], when);
}

/* ---- operations ----------------------------------------------------------------------------- */

static size_t pick_size(worker *w) {
  switch (rnd(&w->rng, 16)) {
  case 0: return 1;
  case 1: return 1 + rnd(&w->rng, 64);
  case 2: return PAGE - 1;
  case 3: return PAGE;
  case 4: return PAGE + 1;
  case 5: return 1 + rnd(&w->rng, 65536);
  case 6: return 2 * PAGE - 1 - rnd(&w->rng, 300);
  case 7: return MIB - 1;
  case 8: return MIB;
  case 9: return MIB + 1;
  default: return MIB + rndz(&w->rng, 2 * MIB); /* >= 1 MiB, unaligned */
  }
}

static void op_alloc(worker *w) {
  int d = w->dev;
  int slot = -1;
  for (int i = 0; i < MAX_ALLOCS; i++)
    if (!w->allocs[i].used) {
      slot = i;
      break;
    }
  unsigned r = rnd(&w->rng, 20);
  if (r == 0) { /* hostile sizes */
    static const size_t huge[] = {SIZE_MAX, SIZE_MAX - 100, SIZE_MAX / 2, (size_t)1 << 50, (size_t)1 << 40, ((size_t)1 << 62) + 1};
    size_t sz = huge[rnd(&w->rng, 6)];
    void *p = (void *)&p;
    pthread_rwlock_rdlock(&alloc_lock);
    birenError_t e = API(w, birenMalloc(&p, sz));
    pthread_rwlock_unlock(&alloc_lock);
    if (!JUDGE(w, F_Malloc, e, OOM, d, "a size past the capacity") && p != (void *)&p)
      fail(w, __LINE__, "birenMalloc(%zu) failed but wrote *devPtr", sz);
    return;
  }
  if (r == 1) {
    birenError_t e = API(w, birenMalloc(NULL, 64));
    JUDGE(w, F_Malloc, e, IV, d, "NULL devPtr");
    return;
  }
  if (r == 2) {
    void *p = (void *)&p;
    pthread_rwlock_rdlock(&alloc_lock);
    birenError_t e = API(w, birenMalloc(&p, 0));
    pthread_rwlock_unlock(&alloc_lock);
    if (!JUDGE(w, F_Malloc, e, S_, d, "size 0") && p != NULL) fail(w, __LINE__, "birenMalloc(0) wrote %p, not NULL", p);
    return;
  }
  if (slot < 0) return;
  size_t size = pick_size(w);
  if (size >= MIB && skip[K_MADVISE]) size = (size + PAGE - 1) / PAGE * PAGE;
  if (w->owned + size > OWNED_CAP) return;
  unsigned char *shadow = malloc(size);
  if (!shadow) return;
  lock_dev(d);
  reap_device(w, d);
  void *p = NULL;
  pthread_rwlock_rdlock(&alloc_lock);
  birenError_t e = API(w, birenMalloc(&p, size));
  pthread_rwlock_unlock(&alloc_lock);
  if (e == BIREN_ERROR_OUT_OF_MEMORY) {
    size_t fr = 0, tot = 0;
    birenError_t e2 = API(w, birenMemGetInfo(&fr, &tot));
    if (!JUDGE(w, F_MemGetInfo, e2, S_, d, NULL) && fr > size + ((size_t)256 << 20))
      fail(w, __LINE__, "birenMalloc(%zu) returned OUT_OF_MEMORY with %zu bytes free", size, fr);
    unlock_dev(d);
    free(shadow);
    return;
  }
  if (JUDGE(w, F_Malloc, e, S_, d, NULL)) {
    unlock_dev(d);
    free(shadow);
    return;
  }
  if (p == NULL || ((uintptr_t)p & 255) != 0) fail(w, __LINE__, "birenMalloc(%zu) gave %p (NULL or not 256-byte aligned)", size, p);
  alloc_t *a = &w->allocs[slot];
  a->p = p;
  a->size = size;
  a->dev = d;
  a->gen = gen_of(d);
  a->shadow = shadow;
  a->pend = PEND_NONE;
  a->used = 1;
  w->owned += size;
  /* Give it known contents: a fill, or a copy of a pattern. */
  if (chance(&w->rng, 2)) {
    int v = (int)rng_next(&w->rng);
    e = API(w, birenMemset(p, v, size));
    if (!JUDGE(w, F_Memset, e, S_, d, "initial fill")) memset(shadow, v & 0xff, size);
  } else {
    unsigned seed = (unsigned)rng_next(&w->rng);
    for (size_t i = 0; i < size; i++) w->hbuf[i] = fillbyte(seed, i);
    e = API(w, birenMemcpy(p, w->hbuf, size, chance(&w->rng, 2) ? birenMemcpyHostToDevice : birenMemcpyDefault));
    if (!JUDGE(w, F_Memcpy, e, S_, d, "initial copy")) memcpy(shadow, w->hbuf, size);
  }
  unlock_dev(d);
}

static void op_free(worker *w) {
  int d = w->dev;
  alloc_t *a = pick_alloc(w, d);
  if (!a) return;
  /* With the madvise check off, a large block is never freed with birenFree (a reset frees
   * it): the arena hands a freed large range to the kernel after dropping its lock, and a free
   * made while any work is pending on the device is released later, on whichever thread
   * completes that work, so no lock of the fuzzer can keep other threads' allocations away. */
  if (skip[K_MADVISE] && a->size >= MIB) return;
  lock_dev(d);
  reap_device(w, d);
  if (!a->used) {
    unlock_dev(d);
    return;
  }
  if (chance(&w->rng, 4)) verify_alloc(w, a, "before its free");
  if (a->size > 1 && chance(&w->rng, 4)) { /* an interior pointer is not an allocation */
    birenError_t e = API(w, birenFree(a->p + 1 + rndz(&w->rng, a->size - 1)));
    JUDGE(w, F_Free, e, IDP, d, "interior pointer");
  }
  uintptr_t base = (uintptr_t)a->p;
  size_t size = a->size;
  int dbl = chance(&w->rng, 8);
  if (dbl) pthread_rwlock_wrlock(&alloc_lock); /* nobody is handed the address in between */
  birenError_t e = API(w, birenFree(a->p));
  int ok = !JUDGE(w, F_Free, e, S_, d, NULL);
  if (ok && dbl) {
    e = API(w, birenFree(a->p));
    JUDGE(w, F_Free, e, IDP, d, "double free");
  }
  if (dbl) pthread_rwlock_unlock(&alloc_lock);
  free(a->shadow);
  w->owned -= a->size;
  memset(a, 0, sizeof *a);
  if (ok && size >= MIB) {
    note_large_free(base, size, d);
    verify_all(w, d, "after a free of a >= 1 MiB block");
  }
  unlock_dev(d);
}

static void op_verify(worker *w) {
  int d = w->dev;
  alloc_t *a = pick_alloc(w, d);
  if (!a) return;
  if (settle(w, a)) return;
  lock_dev(d);
  reap_device(w, d);
  verify_all(w, d, "periodic check");
  unlock_dev(d);
}

/* A range inside allocation a: [off, off+len), len >= 1, boundary-biased. */
static void pick_range(worker *w, size_t size, size_t *off, size_t *len) {
  switch (rnd(&w->rng, 6)) {
  case 0: *off = 0, *len = size; break;
  case 1: *off = 0, *len = 1 + rndz(&w->rng, size); break;
  case 2: *len = 1 + rndz(&w->rng, size < 300 ? size : 300), *off = size - *len; break;
  case 3: *off = size - 1, *len = 1; break;
  default: *off = rndz(&w->rng, size), *len = 1 + rndz(&w->rng, size - *off); break;
  }
}

/* The stream for an async operation on device d touching allocations a and b (either may be
 * NULL): a slot index, PEND_NULL for the default stream, or -2 if none fits. Waits for work of
 * another stream still pending on them first (no lock held). */
static int pick_async_stream(worker *w, int d, alloc_t *a, alloc_t *b) {
  int k = chance(&w->rng, 5) ? PEND_NULL : pick_stream(w, d);
  if (k < 0) k = PEND_NULL;
  alloc_t *both[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    alloc_t *x = both[i];
    if (x && x->pend != PEND_NONE && x->pend != k && settle(w, x)) return -2;
  }
  return k;
}

static birenStream_t stream_handle(worker *w, int k) { return k == PEND_NULL ? NULL : w->streams[k].s; }

static void op_memset(worker *w) {
  int d = w->dev;
  alloc_t *a = pick_alloc(w, d);
  int async = chance(&w->rng, 2);
  int k = PEND_NONE;
  if (a && async) {
    k = pick_async_stream(w, d, a, NULL);
    if (k == -2) return;
  } else if (a && settle(w, a)) return;
  lock_dev(d);
  reap_device(w, d);
  if (a && (!a->used || (k >= 0 && k != PEND_NULL && !w->streams[k].used))) {
    unlock_dev(d);
    return;
  }
  birenStream_t s = async ? (k == PEND_NONE ? NULL : stream_handle(w, k)) : NULL;
  enum fn f = async ? F_MemsetAsync : F_Memset;
  int v = (int)rng_next(&w->rng);
  unsigned r = rnd(&w->rng, 10);
  birenError_t e;
  if (!a || r == 0) { /* bad pointers */
    static int stackvar;
    void *bad[] = {NULL, (void *)0x10, (void *)0x1000, w->hbuf, &stackvar, (void *)(uintptr_t)-4096};
    unsigned i = rnd(&w->rng, 6);
    size_t cnt = 1 + rndz(&w->rng, 4096);
    e = async ? API(w, birenMemsetAsync(bad[i], v, cnt, s)) : API(w, birenMemset(bad[i], v, cnt));
    JUDGE(w, f, e, i == 0 ? IV : IDP, d, "memset of NULL or of memory that is no device allocation");
    if (i == 0 || chance(&w->rng, 2)) {
      e = async ? API(w, birenMemsetAsync(bad[i], v, 0, s)) : API(w, birenMemset(bad[i], v, 0));
      JUDGE(w, f, e, i == 0 ? (S_ | IV) : (S_ | IDP), d, "count 0");
    }
  } else if (r == 1) { /* past the end */
    size_t off = rndz(&w->rng, a->size);
    size_t over = chance(&w->rng, 4) ? SIZE_MAX - rndz(&w->rng, 3) : a->size - off + 1 + rndz(&w->rng, 300);
    e = async ? API(w, birenMemsetAsync(a->p + off, v, over, s)) : API(w, birenMemset(a->p + off, v, over));
    JUDGE(w, f, e, OOB, d, "memset past the end of an allocation");
  } else {
    size_t off, len;
    pick_range(w, a->size, &off, &len);
    e = async ? API(w, birenMemsetAsync(a->p + off, v, len, s)) : API(w, birenMemset(a->p + off, v, len));
    if (!JUDGE(w, f, e, S_, d, NULL)) {
      memset(a->shadow + off, v & 0xff, len);
      if (async) a->pend = k;
    }
  }
  unlock_dev(d);
}

/* ---- copies -------------------------------------------------------------------------------- */

enum side_kind { SD_DEV, SD_HOST, SD_PIN, SD_NULL, SD_FORGED };
typedef struct side {
  enum side_kind k;
  alloc_t *a;
  unsigned char *p;
  size_t room; /* bytes from p to the end of its object */
  size_t off;  /* offset in the allocation (SD_DEV) */
} side;

static void pick_side(worker *w, int d, side *s, int allow_dev, int allow_bad) {
  unsigned r = rnd(&w->rng, 10);
  memset(s, 0, sizeof *s);
  if (allow_dev && r < 5) {
    alloc_t *a = pick_alloc(w, d);
    if (a) {
      s->k = SD_DEV;
      s->a = a;
      s->off = rnd(&w->rng, 3) == 0 ? 0 : rndz(&w->rng, a->size);
      s->p = a->p + s->off;
      s->room = a->size - s->off;
      return;
    }
  }
  if (allow_bad && r == 9) {
    static int stackvar;
    if (chance(&w->rng, 2)) {
      s->k = SD_NULL;
      s->p = NULL;
    } else {
      unsigned char *forged[] = {(unsigned char *)0x10, (unsigned char *)0x1000, (unsigned char *)&stackvar,
                                 (unsigned char *)(uintptr_t)0xdeadbeef000ULL};
      s->k = SD_FORGED;
      s->p = forged[rnd(&w->rng, 4)];
    }
    return;
  }
  if (r & 1) {
    s->k = SD_PIN;
    s->off = rndz(&w->rng, PBUF_SIZE / 8);
    s->p = w->pbuf + s->off;
    s->room = PBUF_SIZE - s->off;
  } else {
    s->k = SD_HOST;
    s->off = rndz(&w->rng, HBUF_SIZE / 2);
    s->p = w->hbuf + s->off;
    s->room = HBUF_SIZE - s->off;
  }
}

/* Expected codes of a copy (header of birenMemcpy). *known_only is set when the only fault is
 * one a known bug leaves unchecked (a host-declared side past the end of a device allocation or
 * pinned buffer). */
static mask_t copy_expect(int kind, const side *dst, const side *src, size_t count, int *known_only, int *h2h_fault) {
  *known_only = 0;
  *h2h_fault = 0;
  if (kind < 0 || kind > 4) return BADKIND;
  if (count == 0) return S_;
  if (dst->k == SD_NULL || src->k == SD_NULL) return IV;
  mask_t faults = 0, kfaults = 0, also = 0;
  const side *sides[2] = {dst, src};
  for (int i = 0; i < 2; i++) {
    const side *s = sides[i];
    int declared_dev = kind == 3 || (kind == 1 && i == 0) || (kind == 2 && i == 1) || (kind == 4 && s->k == SD_DEV);
    if (declared_dev) {
      if (s->k != SD_DEV) faults |= IDP;
      else if (count > s->room) faults |= OOB;
      /* a pinned buffer said to be device memory and overrun: two faults, either code */
      if (s->k == SD_PIN && count > s->room) faults |= OOB;
    } else {
      if ((uintptr_t)s->p + count < (uintptr_t)s->p) faults |= IV;
      else if (s->k == SD_DEV && count > s->room) kfaults |= OOB;
      else if (s->k == SD_PIN && count > s->room) kfaults |= OOB | IV;
      /* A plain host range past the fuzzer's buffer (only with another fault, so nothing is
       * copied) may run into a known allocation or pinned buffer: OUT_OF_BOUNDS then too. */
      else if (s->k == SD_HOST && count > s->room) also |= OOB;
    }
  }
  if (kfaults) *h2h_fault = 1;
  if (faults) return faults | kfaults | also;
  if (kfaults) {
    *known_only = 1;
    return kfaults;
  }
  return S_;
}

static void op_copy(worker *w) {
  int d = w->dev;
  static const int kinds[] = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 4, 5, -1, 100, INT_MIN};
  int kind = kinds[rnd(&w->rng, 16)];
  int async = chance(&w->rng, 2);
  side dst, src;
  int allow_bad = chance(&w->rng, 4);
  pick_side(w, d, &dst, 1, allow_bad);
  pick_side(w, d, &src, 1, allow_bad);
  /* A forged pointer is only ever given where the kind says device memory (else the runtime
   * would rightly write to it as host memory); birenMemcpyDefault takes it for host memory. */
  int dst_dev = kind == 1 || kind == 3, src_dev = kind == 2 || kind == 3;
  if (dst.k == SD_FORGED && !dst_dev && kind >= 0 && kind <= 4) pick_side(w, d, &dst, 1, 0);
  if (src.k == SD_FORGED && !src_dev && kind >= 0 && kind <= 4) pick_side(w, d, &src, 1, 0);
  /* Two host sides: keep them apart (one in hbuf, one in pbuf). */
  if (dst.k == SD_HOST && src.k == SD_HOST) {
    src.k = SD_PIN;
    src.off = rndz(&w->rng, PBUF_SIZE / 8);
    src.p = w->pbuf + src.off;
    src.room = PBUF_SIZE - src.off;
  }
  if (dst.k == SD_PIN && src.k == SD_PIN) {
    dst.k = SD_HOST;
    dst.off = rndz(&w->rng, HBUF_SIZE / 2);
    dst.p = w->hbuf + dst.off;
    dst.room = HBUF_SIZE - dst.off;
  }
  /* The count: in bounds (boundary-biased), past one end, zero, or huge. */
  size_t fit = SIZE_MAX;
  if (dst.k != SD_NULL && dst.k != SD_FORGED) fit = dst.room;
  if (src.k != SD_NULL && src.k != SD_FORGED && src.room < fit) fit = src.room;
  if (fit == SIZE_MAX) fit = 4096;
  if (fit > 3 * MIB + 4096) fit = 3 * MIB + 4096; /* host rooms are bigger than any allocation */
  size_t count;
  unsigned cr = rnd(&w->rng, 12);
  int huge = 0;
  if (cr == 0) count = 0;
  else if (cr == 1) count = fit;
  else if (cr == 2) count = 1;
  else if (cr == 3 || cr == 4) { /* past the end of a device side */
    const side *t = dst.k == SD_DEV ? &dst : &src;
    count = t->k == SD_DEV ? t->room + 1 + rndz(&w->rng, 300) : fit;
  } else if (cr == 5) {
    static const size_t hs[] = {SIZE_MAX, SIZE_MAX / 2, (size_t)1 << 40, SIZE_MAX - 255};
    count = hs[rnd(&w->rng, 4)];
    huge = 1;
  } else count = 1 + rndz(&w->rng, fit);
  int known_only, h2h;
  mask_t expect = copy_expect(kind, &dst, &src, count, &known_only, &h2h);
  /* Never hand the runtime a count that only an unchecked (known-bug) bound would stop, nor a
   * huge count no checked side refuses: either would write past memory the fuzzer owns. */
  if (expect == S_ && count > fit) count = fit, expect = copy_expect(kind, &dst, &src, count, &known_only, &h2h);
  if (known_only && skip[K_H2H]) {
    count = fit;
    expect = copy_expect(kind, &dst, &src, count, &known_only, &h2h);
  }
  if (huge && expect == S_) return;
  if (h2h && !known_only && skip[K_H2H]) {
    /* Another checked fault stops the copy, but which check comes first is the runtime's
     * business: with the bound check missing it might still refuse with the other code. */
  }
  if (expect == S_ && count > fit) return;
  /* Allocations involved: wait for work of other streams on them. */
  int k = PEND_NONE;
  alloc_t *da = dst.k == SD_DEV ? dst.a : NULL, *sa = src.k == SD_DEV ? src.a : NULL;
  if (async) {
    k = pick_async_stream(w, d, da, sa);
    if (k == -2) return;
  } else {
    if (da && settle(w, da)) return;
    if (sa && settle(w, sa)) return;
  }
  lock_dev(d);
  reap_device(w, d);
  if ((da && !da->used) || (sa && !sa->used) || (k >= 0 && k != PEND_NULL && !w->streams[k].used)) {
    unlock_dev(d);
    return;
  }
  /* Host source bytes get a fresh pattern; a device source's bytes are its shadow. */
  unsigned seed = (unsigned)rng_next(&w->rng);
  size_t n_in = count <= fit ? count : 0;
  if (expect == S_ && (src.k == SD_HOST || src.k == SD_PIN))
    for (size_t i = 0; i < n_in; i++) src.p[i] = fillbyte(seed, i);
  birenStream_t s = async ? stream_handle(w, k) : NULL;
  enum fn f = async ? F_MemcpyAsync : F_Memcpy;
  birenError_t e = async ? API(w, birenMemcpyAsync(dst.p, src.p, count, (birenMemcpyKind)kind, s))
                         : API(w, birenMemcpy(dst.p, src.p, count, (birenMemcpyKind)kind));
  char what[160];
  snprintf(what, sizeof what, "kind %d, dst %s%s, src %s%s, count %zu, dst room %zu, src room %zu", kind,
           (const char *[]){"device", "host", "pinned", "NULL", "forged"}[dst.k], "",
           (const char *[]){"device", "host", "pinned", "NULL", "forged"}[src.k], "", count, dst.room, src.room);
  int r = JUDGE_K(w, f, e, expect, d, known_only ? K_H2H : -1, what);
  if (r != 0 || expect != S_ || count == 0) {
    unlock_dev(d);
    return;
  }
  /* Success: the shadow follows; host buffers are read or written until the copy is done, so
   * an async copy with a host side is waited for; host destinations are then compared. */
  int host_side = dst.k == SD_HOST || dst.k == SD_PIN || src.k == SD_HOST || src.k == SD_PIN;
  const unsigned char *from = sa ? sa->shadow + src.off : src.p;
  unsigned char *tmp = NULL;
  if (da) {
    if (sa == da) memmove(da->shadow + dst.off, da->shadow + src.off, count);
    else memcpy(da->shadow + dst.off, from, count);
    if (async) da->pend = k;
  } else if (sa) {
    tmp = malloc(count);
    if (tmp) memcpy(tmp, sa->shadow + src.off, count);
  }
  if (sa && async) sa->pend = k;
  unlock_dev(d);
  if (async && host_side) {
    e = API(w, birenStreamSynchronize(s));
    if (JUDGE(w, F_StreamSynchronize, e, S_, d, "wait for a copy from or to host memory")) {
      free(tmp);
      return;
    }
    clear_pend(w, d, k);
  }
  if (da) return;
  if (sa && !tmp) return;
  if (reset_since_op(w, d)) {
    free(tmp);
    return;
  }
  const unsigned char *want = sa ? tmp : NULL;
  size_t badat = SIZE_MAX;
  for (size_t i = 0; i < count; i++) {
    unsigned char x = want ? want[i] : fillbyte(seed, i);
    if (dst.p[i] != x) {
      badat = i;
      break;
    }
  }
  w->checks_data++;
  w->bytes_checked += count;
  if (badat != SIZE_MAX) {
    size_t nbad = 0, nzero = 0, last = badat;
    for (size_t i = badat; i < count; i++) {
      unsigned char x = want ? want[i] : fillbyte(seed, i);
      if (dst.p[i] != x) nbad++, nzero += dst.p[i] == 0, last = i;
    }
    /* Does the device memory itself still hold what the shadow says (a bad copy), or not (the
     * allocation lost data)? Read the source again. */
    char again[96] = "";
    if (sa) {
      lock_dev(d);
      if (alloc_alive(w, sa) && sa->pend == PEND_NONE &&
          API(w, birenMemcpy(w->cmp, sa->p + src.off, count, birenMemcpyDeviceToHost)) == BIREN_SUCCESS)
        snprintf(again, sizeof again, "; read again, the source %s the shadow",
                 memcmp(w->cmp, sa->shadow + src.off, count) ? "still differs from" : "now matches");
      unlock_dev(d);
    }
    fail(w, __LINE__, "%s copy to host memory delivered wrong data: %zu bytes differ (%zu now zero), bytes %zu..%zu of %zu, src offset %zu, dst offset %zu (%s)%s",
         async ? "an async" : "a", nbad, nzero, badat, last, count, src.off, dst.off, what, again);
  }
  free(tmp);
}

/* ---- kernels -------------------------------------------------------------------------------- */

static dim3 rnd_block(worker *w) {
  switch (rnd(&w->rng, 4)) {
  case 0: return birenDim3(1 + rnd(&w->rng, 256), 1, 1);
  case 1: return birenDim3(1 + rnd(&w->rng, 16), 1 + rnd(&w->rng, 8), 1 + rnd(&w->rng, 4));
  case 2: return birenDim3(32, 1, 1);
  default: return birenDim3(1 + rnd(&w->rng, 64), 1, 1);
  }
}

static void op_kernel(worker *w) {
  int d = w->dev;
  alloc_t *a = pick_alloc(w, d);
  unsigned r = rnd(&w->rng, 12);
  if (!a || r >= 9) { /* launches that must be refused */
    int k = pick_stream(w, d);
    lock_dev(d);
    reap_device(w, d);
    birenStream_t s = k >= 0 && w->streams[k].used ? w->streams[k].s : NULL;
    dim3 g = birenDim3(1, 1, 1), b = birenDim3(1, 1, 1);
    size_t sz = sizeof(int);
    int x = 0;
    void *args[1] = {&x};
    birenError_t e;
    switch (rnd(&w->rng, 9)) {
    case 0:
      e = API(w, birenLaunchKernelArgs(NULL, g, b, args, &sz, 1, 0, s));
      JUDGE(w, F_LaunchKernelArgs, e, IV, d, "NULL kernel");
      break;
    case 1:
      e = API(w, birenLaunchKernel(k_nop, birenDim3(0, 1, 1), b, NULL, 0, s));
      JUDGE(w, F_LaunchKernel, e, CFG, d, "zero grid");
      break;
    case 2:
      e = API(w, birenLaunchKernel(k_nop, g, birenDim3(1025, 1, 1), NULL, 0, s));
      JUDGE(w, F_LaunchKernel, e, CFG, d, "1025 threads");
      break;
    case 3:
      e = API(w, birenLaunchKernel(k_nop, g, birenDim3(32, 32, 2), NULL, 0, s));
      JUDGE(w, F_LaunchKernel, e, CFG, d, "2048 threads");
      break;
    case 4:
      e = API(w, birenLaunchKernel(k_nop, g, b, NULL, (size_t)1 << 30, s));
      JUDGE(w, F_LaunchKernel, e, CFG, d, "sharedMem over the limit");
      break;
    case 5:
      e = API(w, birenLaunchKernelArgs(k_nop, g, b, NULL, &sz, 1, 0, s));
      JUDGE(w, F_LaunchKernelArgs, e, IV, d, "NULL args with numArgs 1");
      break;
    case 6: {
      void *nulls[2] = {&x, NULL};
      size_t szs[2] = {sizeof x, sizeof x};
      e = API(w, birenLaunchKernelArgs(k_nop, g, b, nulls, szs, 2, 0, s));
      JUDGE(w, F_LaunchKernelArgs, e, IV, d, "args[1] NULL");
      break;
    }
    case 7: {
      static void *many[257];
      static size_t msz[257];
      for (int i = 0; i < 257; i++) many[i] = &x, msz[i] = sizeof x;
      e = API(w, birenLaunchKernelArgs(k_nop, g, b, many, msz, 257, 0, s));
      JUDGE(w, F_LaunchKernelArgs, e, IV, d, "257 arguments");
      break;
    }
    default:
      e = API(w, birenLaunchKernelArgs(k_nop, g, b, args, NULL, 1, 0, s));
      JUDGE(w, F_LaunchKernelArgs, e, IV, d, "NULL argSizes with numArgs 1");
      break;
    }
    unlock_dev(d);
    return;
  }
  int k = pick_async_stream(w, d, a, NULL);
  if (k == -2) return;
  lock_dev(d);
  reap_device(w, d);
  if (!a->used || (k != PEND_NULL && !w->streams[k].used)) {
    unlock_dev(d);
    return;
  }
  birenStream_t s = stream_handle(w, k);
  size_t off, len;
  pick_range(w, a->size, &off, &len);
  unsigned char *p = a->p + off;
  unsigned seed = (unsigned)rng_next(&w->rng);
  dim3 g = birenDim3(1 + rnd(&w->rng, 4), 1, 1), b = rnd_block(w);
  size_t shared = chance(&w->rng, 4) ? rndz(&w->rng, 4096) : 0;
  birenError_t e;
  if (chance(&w->rng, 3)) {
    void *args[3] = {&p, &len, &seed};
    e = API(w, birenLaunchKernel(k_fill_reg, g, b, args, shared, s));
    if (JUDGE(w, F_LaunchKernel, e, S_, d, "registered fill kernel")) goto out;
  } else {
    e = API(w, BIREN_LAUNCH(k_fill, g, b, shared, s, p, len, seed));
    if (JUDGE(w, F_LaunchKernelArgs, e, S_, d, "fill kernel")) goto out;
  }
  for (size_t i = 0; i < len; i++) a->shadow[off + i] = fillbyte(seed, i);
  a->pend = k;
  if (chance(&w->rng, 2)) { /* check it on the device, in the same stream */
    unsigned long long *bad = w->counter;
    *bad = 0;
    e = API(w, BIREN_LAUNCH(k_check, birenDim3(1 + rnd(&w->rng, 3), 1, 1), rnd_block(w), 0, s, p, len, seed, bad));
    if (JUDGE(w, F_LaunchKernelArgs, e, S_, d, "check kernel")) goto out;
    unlock_dev(d);
    e = API(w, birenStreamSynchronize(s));
    if (JUDGE(w, F_StreamSynchronize, e, S_, d, "wait for the check kernel")) return;
    clear_pend(w, d, k);
    unsigned long long nbad = __atomic_load_n(bad, __ATOMIC_SEQ_CST);
    w->checks_data++;
    w->bytes_checked += len;
    if (nbad && !reset_since_op(w, d))
      fail(w, __LINE__, "a check kernel after a fill kernel in the same stream found %llu of %zu bytes wrong", nbad, len);
    return;
  }
out:
  unlock_dev(d);
}

/* ---- graphs and stream capture ------------------------------------------------------------ */

/* One node of a fuzzed graph and what it does to the allocation (applied to the shadow once per
 * launch, in the graph's order: the nodes form a chain). */
typedef struct gnode {
  int kind; /* 0 memset, 1 copy from the first half of the allocation to the second, 2 fill kernel */
  size_t off, len, src;
  int value;
  unsigned seed;
  unsigned char *p; /* kernel node: its pointer argument */
  birenGraphNode_t h;
} gnode;

static void gnode_apply(alloc_t *a, const gnode *n) {
  if (n->kind == 0) memset(a->shadow + n->off, n->value & 0xff, n->len);
  else if (n->kind == 1) memcpy(a->shadow + n->off, a->shadow + n->src, n->len);
  else
    for (size_t i = 0; i < n->len; i++) a->shadow[n->off + i] = fillbyte(n->seed, i);
}

static void gnode_pick(worker *w, alloc_t *a, gnode *n) {
  n->kind = a->size >= 2 ? (int)rnd(&w->rng, 3) : (chance(&w->rng, 2) ? 0 : 2);
  n->value = (int)rng_next(&w->rng);
  n->seed = (unsigned)rng_next(&w->rng);
  if (n->kind == 1) { /* disjoint halves: [0, size/2) -> [size/2, size) */
    size_t half = a->size / 2;
    n->len = 1 + rndz(&w->rng, half);
    n->src = rndz(&w->rng, half - n->len + 1);
    n->off = half + rndz(&w->rng, a->size - half - n->len + 1);
  } else {
    pick_range(w, a->size, &n->off, &n->len);
  }
  n->p = a->p + n->off;
}

static birenKernelNodeParams gnode_kernel_params(worker *w, gnode *n, void **args) {
  birenKernelNodeParams kp;
  memset(&kp, 0, sizeof kp);
  args[0] = &n->p, args[1] = &n->len, args[2] = &n->seed;
  kp.func = k_fill_reg;
  kp.gridDim = birenDim3(1 + rnd(&w->rng, 3), 1, 1);
  kp.blockDim = rnd_block(w);
  kp.kernelParams = args;
  return kp;
}

/* Calls that must be refused: forged, destroyed and cross-typed handles, bad node parameters,
 * a cycle, capture misuse. */
static void graph_hostile(worker *w, int d, alloc_t *a) {
  uintptr_t forged[] = {1, 2, 0xdeadbeef, UINTPTR_MAX, ((uintptr_t)0x7ffffff0 << 32) | 7};
  birenError_t e;
  birenGraph_t g = NULL;
  e = API(w, birenGraphCreate(&g, 0));
  if (JUDGE(w, F_GraphCreate, e, S_, d, NULL)) return;
  birenGraphNode_t n1 = NULL, n2 = NULL;
  birenMemsetParams mp;
  memset(&mp, 0, sizeof mp);
  switch (rnd(&w->rng, 11)) {
  case 0:
    e = API(w, birenGraphCreate(&g, 1));
    JUDGE(w, F_GraphCreate, e, IV, d, "flags 1");
    e = API(w, birenGraphCreate(NULL, 0));
    JUDGE(w, F_GraphCreate, e, IV, d, "NULL pGraph");
    break;
  case 1: { /* memset nodes past the end, of non-device memory, with a bad element size */
    if (!a) break;
    mp.dst = a->p + rndz(&w->rng, a->size);
    mp.elementSize = 1, mp.height = 1, mp.width = a->size + 1 + rndz(&w->rng, 100), mp.pitch = mp.width;
    e = API(w, birenGraphAddMemsetNode(&n1, g, NULL, 0, &mp));
    JUDGE(w, F_GraphAddNode, e, OOB, d, "memset node past the end of an allocation");
    mp.dst = w->hbuf, mp.width = 16, mp.pitch = 16;
    e = API(w, birenGraphAddMemsetNode(&n1, g, NULL, 0, &mp));
    JUDGE(w, F_GraphAddNode, e, IDP, d, "memset node on host memory");
    mp.dst = a->p, mp.width = 1, mp.elementSize = 3;
    e = API(w, birenGraphAddMemsetNode(&n1, g, NULL, 0, &mp));
    JUDGE(w, F_GraphAddNode, e, IV, d, "memset node with elementSize 3");
    e = API(w, birenGraphAddMemsetNode(&n1, g, NULL, 0, NULL));
    JUDGE(w, F_GraphAddNode, e, IV, d, "NULL memset params");
    break;
  }
  case 2: { /* kernel nodes: NULL function, too many threads, extra */
    birenKernelNodeParams kp;
    memset(&kp, 0, sizeof kp);
    kp.gridDim = birenDim3(1, 1, 1), kp.blockDim = birenDim3(1, 1, 1);
    e = API(w, birenGraphAddKernelNode(&n1, g, NULL, 0, &kp));
    JUDGE(w, F_GraphAddNode, e, IV, d, "kernel node without a function");
    kp.func = k_nop, kp.blockDim = birenDim3(32, 32, 2);
    e = API(w, birenGraphAddKernelNode(&n1, g, NULL, 0, &kp));
    JUDGE(w, F_GraphAddNode, e, CFG, d, "kernel node with 2048 threads a block");
    break;
  }
  case 3: { /* a cycle, a self edge, a dependency listed twice */
    e = API(w, birenGraphAddEmptyNode(&n1, g, NULL, 0));
    if (JUDGE(w, F_GraphAddNode, e, S_, d, NULL)) break;
    e = API(w, birenGraphAddEmptyNode(&n2, g, &n1, 1));
    if (JUDGE(w, F_GraphAddNode, e, S_, d, NULL)) break;
    e = API(w, birenGraphAddDependencies(g, &n2, &n1, 1));
    JUDGE(w, F_GraphAddDependencies, e, IV, d, "an edge that closes a cycle");
    e = API(w, birenGraphAddDependencies(g, &n1, &n1, 1));
    JUDGE(w, F_GraphAddDependencies, e, IV, d, "a node depending on itself");
    birenGraphNode_t twice[2] = {n1, n1};
    birenGraphNode_t n3 = NULL;
    e = API(w, birenGraphAddEmptyNode(&n3, g, twice, 2));
    JUDGE(w, F_GraphAddNode, e, IV, d, "a dependency listed twice");
    e = API(w, birenGraphAddEmptyNode(&n3, g, NULL, 1));
    JUDGE(w, F_GraphAddNode, e, IV, d, "NULL dependencies with numDependencies 1");
    break;
  }
  case 4: { /* forged and cross-typed handles */
    birenGraphExec_t x = (birenGraphExec_t)forged[rnd(&w->rng, 5)];
    e = API(w, birenGraphLaunch(x, NULL));
    JUDGE(w, F_GraphLaunch, e, IH, d, "forged exec");
    e = API(w, birenGraphExecDestroy(x));
    JUDGE(w, F_GraphExecDestroy, e, IH, d, "forged exec");
    e = API(w, birenGraphDestroy((birenGraph_t)forged[rnd(&w->rng, 5)]));
    JUDGE(w, F_GraphDestroy, e, IH, d, "forged graph");
    e = API(w, birenGraphExecDestroy((birenGraphExec_t)g));
    JUDGE(w, F_GraphExecDestroy, e, IH, d, "a graph passed as an exec");
    int ks = pick_stream(w, d);
    if (ks >= 0) {
      e = API(w, birenGraphLaunch((birenGraphExec_t)w->streams[ks].s, w->streams[ks].s));
      JUDGE(w, F_GraphLaunch, e, IH, d, "a stream passed as an exec");
      e = API(w, birenGraphDestroy((birenGraph_t)w->streams[ks].s));
      JUDGE(w, F_GraphDestroy, e, IH, d, "a stream passed as a graph");
    }
    break;
  }
  case 5: { /* destroyed exec and graph */
    birenGraphExec_t x = NULL;
    e = API(w, birenGraphInstantiate(&x, g, 0));
    if (JUDGE(w, F_GraphInstantiate, e, S_, d, "an empty graph")) break;
    e = API(w, birenGraphExecDestroy(x));
    if (JUDGE(w, F_GraphExecDestroy, e, S_, d, NULL)) break;
    e = API(w, birenGraphLaunch(x, NULL));
    JUDGE(w, F_GraphLaunch, e, IH, d, "destroyed exec");
    e = API(w, birenGraphExecDestroy(x));
    JUDGE(w, F_GraphExecDestroy, e, IH, d, "exec destroyed twice");
    e = API(w, birenGraphDestroy(g));
    if (JUDGE(w, F_GraphDestroy, e, S_, d, NULL)) return;
    e = API(w, birenGraphInstantiate(&x, g, 0));
    JUDGE(w, F_GraphInstantiate, e, IH, d, "destroyed graph");
    e = API(w, birenGraphAddEmptyNode(&n1, g, NULL, 0));
    JUDGE(w, F_GraphAddNode, e, IH, d, "node added to a destroyed graph");
    e = API(w, birenGraphDestroy(g));
    JUDGE(w, F_GraphDestroy, e, IH, d, "graph destroyed twice");
    return;
  }
  case 6: { /* instantiate with bad flags or NULL */
    birenGraphExec_t x = NULL;
    e = API(w, birenGraphInstantiate(NULL, g, 0));
    JUDGE(w, F_GraphInstantiate, e, IV, d, "NULL pGraphExec");
    e = API(w, birenGraphInstantiate(&x, g, 1ull << 40));
    JUDGE(w, F_GraphInstantiate, e, IV, d, "unknown flags");
    break;
  }
  case 7: { /* capture misuse */
    e = API(w, birenStreamBeginCapture(NULL, birenStreamCaptureModeRelaxed));
    JUDGE(w, F_StreamBeginCapture, e, SCU, d, "capture of the default stream");
    int ks = pick_stream(w, d);
    if (ks < 0) break;
    birenGraph_t cg = NULL;
    e = API(w, birenStreamEndCapture(w->streams[ks].s, &cg));
    JUDGE(w, F_StreamEndCapture, e, ILS, d, "end of a capture never begun");
    e = API(w, birenStreamBeginCapture(w->streams[ks].s, 7));
    JUDGE(w, F_StreamBeginCapture, e, IV, d, "unknown capture mode");
    break;
  }
  case 8: { /* a graph launched into a stream of another device */
    if (ndev < 2) break;
    birenGraphExec_t x = NULL;
    e = API(w, birenGraphInstantiate(&x, g, 0));
    if (JUDGE(w, F_GraphInstantiate, e, S_, d, NULL)) break;
    int other = 1 - d;
    lock_dev(other);
    reap_device(w, other);
    int ks = pick_stream(w, other);
    if (ks >= 0) {
      e = API(w, birenGraphLaunch(x, w->streams[ks].s));
      JUDGE(w, F_GraphLaunch, e, IV, d, "a stream of another device");
    }
    unlock_dev(other);
    e = API(w, birenGraphExecDestroy(x));
    JUDGE(w, F_GraphExecDestroy, e, S_, d, NULL);
    break;
  }
  case 9: { /* a copy node with a forged device side and a bogus kind */
    if (!a) break;
    e = API(w, birenGraphAddMemcpyNode1D(&n1, g, NULL, 0, a->p, (void *)0x1000, 1, birenMemcpyDeviceToDevice));
    JUDGE(w, F_GraphAddNode, e, IDP, d, "copy node from memory that is no device allocation");
    e = API(w, birenGraphAddMemcpyNode1D(&n1, g, NULL, 0, a->p, w->hbuf, 1, (birenMemcpyKind)77));
    JUDGE(w, F_GraphAddNode, e, BADKIND, d, "copy node with kind 77");
    e = API(w, birenGraphAddMemcpyNode1D(&n1, g, NULL, 0, a->p, w->hbuf, a->size + 1, birenMemcpyHostToDevice));
    JUDGE(w, F_GraphAddNode, e, OOB, d, "copy node past the end of an allocation");
    break;
  }
  default: { /* kernel parameters set on a node of another graph */
    birenGraph_t g2 = NULL;
    e = API(w, birenGraphCreate(&g2, 0));
    if (JUDGE(w, F_GraphCreate, e, S_, d, NULL)) break;
    birenKernelNodeParams kp;
    memset(&kp, 0, sizeof kp);
    kp.func = k_nop, kp.gridDim = birenDim3(1, 1, 1), kp.blockDim = birenDim3(1, 1, 1);
    e = API(w, birenGraphAddKernelNode(&n1, g2, NULL, 0, &kp));
    birenGraphExec_t x = NULL;
    if (!JUDGE(w, F_GraphAddNode, e, S_, d, NULL)) {
      e = API(w, birenGraphInstantiate(&x, g, 0));
      if (!JUDGE(w, F_GraphInstantiate, e, S_, d, NULL)) {
        e = API(w, birenGraphExecKernelNodeSetParams(x, n1, &kp));
        JUDGE(w, F_GraphExecKernelNodeSetParams, e, IV, d, "a node of another graph");
        e = API(w, birenGraphExecDestroy(x));
        JUDGE(w, F_GraphExecDestroy, e, S_, d, NULL);
      }
    }
    e = API(w, birenGraphDestroy(g2));
    JUDGE(w, F_GraphDestroy, e, S_, d, NULL);
    break;
  }
  }
  e = API(w, birenGraphDestroy(g));
  JUDGE(w, F_GraphDestroy, e, S_, d, NULL);
}

/* A graph of 1-5 nodes (memsets, copies, fill kernels) on one of the thread's allocations, built
 * explicitly (edges at creation or with birenGraphAddDependencies, empty nodes between) or by
 * capturing a non-blocking stream, instantiated and launched 1-3 times (kernel parameters
 * changed between launches), with the graph and the exec destroyed at random moments. The
 * shadow follows every launch; later checks compare it with the device. */
static void op_graph(worker *w) {
  int d = w->dev;
  alloc_t *a = pick_alloc(w, d);
  if (!a || chance(&w->rng, 6)) {
    lock_dev(d);
    reap_device(w, d);
    if (a && !a->used) a = NULL;
    graph_hostile(w, d, a);
    unlock_dev(d);
    return;
  }
  int k = pick_async_stream(w, d, a, NULL);
  if (k == -2) return;
  lock_dev(d);
  reap_device(w, d);
  if (!a->used || (k != PEND_NULL && !w->streams[k].used)) {
    unlock_dev(d);
    return;
  }
  birenStream_t s = stream_handle(w, k);
  gnode nodes[5];
  int n = 1 + (int)rnd(&w->rng, 5);
  for (int i = 0; i < n; i++) gnode_pick(w, a, &nodes[i]);
  birenGraph_t g = NULL;
  birenGraphExec_t x = NULL;
  birenError_t e;
  int captured = k >= 0 && k < MAX_STREAMS && w->streams[k].nonblocking && chance(&w->rng, 2);
  if (captured) {
    /* Thread-local or relaxed: a global capture would refuse other threads' birenMalloc. */
    int mode = chance(&w->rng, 2) ? birenStreamCaptureModeThreadLocal : birenStreamCaptureModeRelaxed;
    e = API(w, birenStreamBeginCapture(s, mode));
    if (JUDGE(w, F_StreamBeginCapture, e, S_, d, "non-blocking stream")) goto out;
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
      gnode *m = &nodes[i];
      if (m->kind == 0) {
        e = API(w, birenMemsetAsync(a->p + m->off, m->value, m->len, s));
        bad = JUDGE(w, F_MemsetAsync, e, S_, d, "captured memset");
      } else if (m->kind == 1) {
        e = API(w, birenMemcpyAsync(a->p + m->off, a->p + m->src, m->len, birenMemcpyDeviceToDevice, s));
        bad = JUDGE(w, F_MemcpyAsync, e, S_, d, "captured copy");
      } else {
        void *args[3];
        birenKernelNodeParams kp = gnode_kernel_params(w, m, args);
        e = API(w, birenLaunchKernel(k_fill_reg, kp.gridDim, kp.blockDim, args, 0, s));
        bad = JUDGE(w, F_LaunchKernel, e, S_, d, "captured fill kernel");
      }
    }
    if (bad) { /* end the capture whatever happened; the graph, if any, is dropped */
      e = API(w, birenStreamEndCapture(s, &g));
      if (e == BIREN_SUCCESS) API(w, birenGraphDestroy(g));
      goto out;
    }
    birenStreamCaptureStatus st;
    e = API(w, birenStreamIsCapturing(s, &st));
    if (e != BIREN_SUCCESS || st != birenStreamCaptureStatusActive)
      fail(w, __LINE__, "birenStreamIsCapturing during a capture: %s, status %d", birenGetErrorName(e), (int)st);
    e = API(w, birenStreamEndCapture(s, &g));
    if (JUDGE(w, F_StreamEndCapture, e, S_, d, NULL)) goto out;
  } else {
    e = API(w, birenGraphCreate(&g, 0));
    if (JUDGE(w, F_GraphCreate, e, S_, d, NULL)) goto out;
    int later_edges = chance(&w->rng, 3);
    birenGraphNode_t prev = NULL;
    for (int i = 0; i < n; i++) {
      gnode *m = &nodes[i];
      if (prev && chance(&w->rng, 4)) { /* an empty node in between */
        birenGraphNode_t em = NULL;
        e = API(w, birenGraphAddEmptyNode(&em, g, &prev, 1));
        if (JUDGE(w, F_GraphAddNode, e, S_, d, "empty node")) goto out;
        prev = em;
      }
      const birenGraphNode_t *deps = prev && !later_edges ? &prev : NULL;
      size_t nd = deps ? 1 : 0;
      if (m->kind == 0) {
        birenMemsetParams mp;
        memset(&mp, 0, sizeof mp);
        mp.dst = a->p + m->off, mp.value = (unsigned)m->value & 0xff, mp.elementSize = 1;
        mp.width = m->len, mp.height = 1, mp.pitch = m->len;
        e = API(w, birenGraphAddMemsetNode(&m->h, g, deps, nd, &mp));
      } else if (m->kind == 1) {
        e = API(w, birenGraphAddMemcpyNode1D(&m->h, g, deps, nd, a->p + m->off, a->p + m->src, m->len,
                                             birenMemcpyDeviceToDevice));
      } else {
        void *args[3];
        birenKernelNodeParams kp = gnode_kernel_params(w, m, args);
        e = API(w, birenGraphAddKernelNode(&m->h, g, deps, nd, &kp));
      }
      if (JUDGE(w, F_GraphAddNode, e, S_, d, "node on the thread's own allocation")) goto out;
      if (prev && later_edges) {
        e = API(w, birenGraphAddDependencies(g, &prev, &m->h, 1));
        if (JUDGE(w, F_GraphAddDependencies, e, S_, d, "chain edge")) goto out;
      }
      prev = m->h;
    }
  }
  e = API(w, birenGraphInstantiate(&x, g, 0));
  if (JUDGE(w, F_GraphInstantiate, e, S_, d, NULL)) goto out;
  int set_params = !captured && chance(&w->rng, 2); /* needs the graph's node handles */
  if (!set_params && chance(&w->rng, 2)) { /* the exec does not need its graph */
    e = API(w, birenGraphDestroy(g));
    g = NULL;
    if (JUDGE(w, F_GraphDestroy, e, S_, d, NULL)) goto out;
  }
  int launches = 1 + (int)rnd(&w->rng, 3);
  for (int l = 0; l < launches; l++) {
    if (set_params && l > 0) {
      for (int i = 0; i < n; i++) {
        gnode *m = &nodes[i];
        if (m->kind != 2) continue;
        m->seed = (unsigned)rng_next(&w->rng);
        void *args[3];
        birenKernelNodeParams kp = gnode_kernel_params(w, m, args);
        e = API(w, birenGraphExecKernelNodeSetParams(x, m->h, &kp));
        if (JUDGE(w, F_GraphExecKernelNodeSetParams, e, S_, d, "new seed for a fill node")) goto out;
      }
    }
    e = API(w, birenGraphLaunch(x, s));
    if (JUDGE(w, F_GraphLaunch, e, S_, d, NULL)) goto out;
    for (int i = 0; i < n; i++) gnode_apply(a, &nodes[i]);
    a->pend = k;
  }
  if (chance(&w->rng, 3)) {
    unlock_dev(d);
    e = API(w, birenStreamSynchronize(s));
    int bad = JUDGE(w, F_StreamSynchronize, e, S_, d, "after graph launches");
    lock_dev(d);
    if (bad || reset_since_op(w, d)) { /* the exec survives a reset; its memory does not */
      e = API(w, birenGraphExecDestroy(x));
      JUDGE(w, F_GraphExecDestroy, e, S_, -1, NULL);
      x = NULL;
      goto out;
    }
    clear_pend(w, d, k);
    if (a->used) verify_alloc(w, a, "after graph launches");
  }
out:
  if (x) {
    e = API(w, birenGraphExecDestroy(x));
    JUDGE(w, F_GraphExecDestroy, e, S_, d, "exec (its launches may still run)");
  }
  if (g) {
    e = API(w, birenGraphDestroy(g));
    JUDGE(w, F_GraphDestroy, e, S_, d, NULL);
  }
  unlock_dev(d);
}

/* Hostile argument arrays (bug 2) and registrations with bad sizes. */
static void op_hostile_args(worker *w) {
  int d = w->dev;
  static unsigned char big[8192];
  int x = 0;
  dim3 one = birenDim3(1, 1, 1);
  lock_dev(d);
  birenError_t e;
  unsigned r = rnd(&w->rng, 9);
  if (r < 3) { /* registration: documented today */
    size_t bad[3] = {0, 4097, SIZE_MAX};
    size_t szs[2] = {sizeof x, bad[r]};
    e = API(w, birenKernelRegister(k_nop, "k_nop", 2, szs));
    JUDGE(w, F_KernelRegister, e, IV, d, "argument size 0, 4097 or SIZE_MAX");
  } else if (r == 3) {
    e = API(w, birenKernelRegister(k_nop, "k_nop", 3, NULL));
    JUDGE(w, F_KernelRegister, e, IV, d, "NULL argSizes");
  } else if (r == 4) {
    static size_t many[257];
    for (int i = 0; i < 257; i++) many[i] = 4;
    e = API(w, birenKernelRegister(k_nop, "k_nop", 257, many));
    JUDGE(w, F_KernelRegister, e, IV, d, "257 arguments");
  } else if (r == 5) { /* sizes 0 and 4097 with real memory behind them: harmless probes */
    void *args[2] = {&x, big};
    size_t szs[2] = {sizeof x, chance(&w->rng, 2) ? 0 : 4097};
    e = API(w, birenLaunchKernelArgs(k_nop, one, one, args, szs, 2, 0, NULL));
    if (skip[K_ARGSIZES]) {
      if (e == BIREN_SUCCESS) __atomic_fetch_add(&observed[K_ARGSIZES], 1, __ATOMIC_RELAXED);
      else JUDGE(w, F_LaunchKernelArgs, e, IV, d, "argument size 0 or 4097");
    } else JUDGE_K(w, F_LaunchKernelArgs, e, IV, d, K_ARGSIZES, "argument size 0 or 4097");
  } else if (!skip[K_ARGSIZES]) { /* would crash or abort today */
    static void *args16[16];
    static size_t sz16[16];
    unsigned n = 1;
    for (int i = 0; i < 16; i++) args16[i] = big;
    switch (r) {
    case 6: sz16[0] = SIZE_MAX; break;
    case 7: sz16[0] = (size_t)1 << 40; break;
    default:
      for (int i = 0; i < 16; i++) sz16[i] = SIZE_MAX;
      n = 16;
      break;
    }
    e = API(w, birenLaunchKernelArgs(k_nop, one, one, args16, sz16, n, 0, NULL));
    JUDGE_K(w, F_LaunchKernelArgs, e, IV, d, K_ARGSIZES, "argSizes SIZE_MAX, 1<<40 or 16 x SIZE_MAX");
  }
  unlock_dev(d);
}

/* ---- streams and events ------------------------------------------------------------------- */

static void op_stream(worker *w) {
  int d = w->dev;
  lock_dev(d);
  reap_device(w, d);
  birenError_t e;
  int k = pick_stream(w, d);
  switch (rnd(&w->rng, 8)) {
  case 0:
  case 1: {
    if (k >= 0 && chance(&w->rng, 2)) destroy_stream(w, k);
    else new_stream(w, d, chance(&w->rng, 2));
    break;
  }
  case 2: { /* bad creations */
    birenStream_t s = (birenStream_t)&e;
    unsigned flags[] = {2, 3, 7, 0x80000000u};
    e = API(w, birenStreamCreateWithFlags(&s, flags[rnd(&w->rng, 4)]));
    if (!JUDGE(w, F_StreamCreate, e, IV, d, "unknown flags") && s != (birenStream_t)&e)
      fail(w, __LINE__, "a refused birenStreamCreateWithFlags wrote *pStream");
    e = API(w, birenStreamCreate(NULL));
    JUDGE(w, F_StreamCreate, e, IV, d, "NULL pStream");
    break;
  }
  case 3:
    if (k >= 0) {
      int prio = 99, want = w->streams[k].prio < -5 ? -5 : w->streams[k].prio > 0 ? 0 : w->streams[k].prio;
      unsigned flags = 99;
      e = API(w, birenStreamGetPriority(w->streams[k].s, &prio));
      if (!JUDGE(w, F_StreamGetPriority, e, S_, d, NULL) && prio != want)
        fail(w, __LINE__, "stream priority %d, created with %d", prio, w->streams[k].prio);
      e = API(w, birenStreamGetFlags(w->streams[k].s, &flags));
      if (!JUDGE(w, F_StreamGetFlags, e, S_, d, NULL) && flags != (unsigned)w->streams[k].nonblocking)
        fail(w, __LINE__, "stream flags %u, created with %d", flags, w->streams[k].nonblocking);
      e = API(w, birenStreamGetFlags(w->streams[k].s, NULL));
      JUDGE(w, F_StreamGetFlags, e, IV, d, "NULL flags");
    }
    break;
  case 4:
    if (k >= 0) {
      e = API(w, birenStreamQuery(w->streams[k].s));
      JUDGE(w, F_StreamQuery, e, S_ | NR, d, NULL);
    }
    break;
  default:
    if (k >= 0) { /* a priority stream with a clamped priority */
      int kk = free_stream_slot(w);
      if (kk >= 0) {
        birenStream_t s;
        int prio = (int)rnd(&w->rng, 200) - 100;
        e = API(w, birenStreamCreateWithPriority(&s, 0, prio));
        if (!JUDGE(w, F_StreamCreate, e, S_, d, NULL)) {
          w->streams[kk] = (sslot){s, d, 1, 0, prio, gen_of(d)};
        }
      }
    }
    break;
  }
  unlock_dev(d);
}

static void op_event(worker *w) {
  int d = w->dev;
  lock_dev(d);
  reap_device(w, d);
  birenError_t e;
  int k = pick_event(w, d), s = pick_stream(w, d);
  switch (rnd(&w->rng, 10)) {
  case 0:
  case 1:
    if (k >= 0 && chance(&w->rng, 2)) destroy_event(w, k);
    else new_event(w, d, rnd(&w->rng, 4));
    break;
  case 2: {
    birenEvent_t ev = (birenEvent_t)&e;
    unsigned bad[] = {4, 8, 0x10, 0xffffffffu};
    e = API(w, birenEventCreateWithFlags(&ev, bad[rnd(&w->rng, 4)]));
    if (!JUDGE(w, F_EventCreate, e, IV, d, "unknown flags") && ev != (birenEvent_t)&e)
      fail(w, __LINE__, "a refused birenEventCreateWithFlags wrote *event");
    e = API(w, birenEventCreate(NULL));
    JUDGE(w, F_EventCreate, e, IV, d, "NULL event");
    break;
  }
  case 3:
  case 4: /* record on a stream of ours or the default stream */
    if (k >= 0) {
      birenStream_t st = s >= 0 && chance(&w->rng, 4) != 0 ? w->streams[s].s : NULL;
      e = API(w, birenEventRecord(w->events[k].e, st));
      JUDGE(w, F_EventRecord, e, S_, d, NULL);
    }
    break;
  case 5:
    if (k >= 0) {
      e = API(w, birenEventQuery(w->events[k].e));
      JUDGE(w, F_EventQuery, e, S_ | NR, d, NULL);
    }
    break;
  case 6:
    if (k >= 0) {
      birenEvent_t ev = w->events[k].e;
      unlock_dev(d);
      e = API(w, birenEventSynchronize(ev));
      JUDGE(w, F_EventSynchronize, e, S_, d, NULL);
      return;
    }
    break;
  case 7:
    if (k >= 0 && s >= 0) { /* a wait on our own (recorded or never recorded but about to be) event */
      birenStream_t st = w->streams[s].s;
      e = API(w, birenEventRecord(w->events[k].e, st));
      if (JUDGE(w, F_EventRecord, e, S_, d, NULL)) break;
      int s2 = pick_stream(w, d);
      e = API(w, birenStreamWaitEvent(w->streams[s2].s, w->events[k].e));
      JUDGE(w, F_StreamWaitEvent, e, S_, d, "wait on a recorded event");
    }
    break;
  default: /* elapsed time */
    if (s >= 0) {
      int a = new_event(w, d, birenEventDefault), b = new_event(w, d, rnd(&w->rng, 3) == 0 ? birenEventDisableTiming : 0);
      if (a >= 0 && b >= 0) {
        birenStream_t st = w->streams[s].s;
        float ms = -1;
        e = API(w, birenEventElapsedTime(&ms, w->events[a].e, w->events[b].e));
        JUDGE(w, F_EventElapsedTime, e, IH, d, "events never recorded");
        e = API(w, birenEventRecord(w->events[a].e, st));
        if (JUDGE(w, F_EventRecord, e, S_, d, NULL)) goto done;
        e = API(w, birenEventRecord(w->events[b].e, st));
        if (JUDGE(w, F_EventRecord, e, S_, d, NULL)) goto done;
        birenEvent_t eb = w->events[b].e;
        int timing = w->events[b].timing;
        unlock_dev(d);
        e = API(w, birenEventSynchronize(eb));
        lock_dev(d);
        if (JUDGE(w, F_EventSynchronize, e, S_, d, NULL)) goto done;
        reap_device(w, d);
        if (!w->events[a].used || !w->events[b].used) goto done;
        e = API(w, birenEventElapsedTime(&ms, w->events[a].e, w->events[b].e));
        if (!JUDGE(w, F_EventElapsedTime, e, timing ? S_ : IH, d, timing ? NULL : "an event without timing") && timing &&
            !(ms >= 0.0f && ms < 600000.0f))
          fail(w, __LINE__, "elapsed time %f ms between two records of one stream", (double)ms);
        e = API(w, birenEventElapsedTime(NULL, w->events[a].e, w->events[b].e));
        JUDGE(w, F_EventElapsedTime, e, IV | (timing ? 0 : IH), d, "NULL ms");
      done:
        if (w->events[a].used && w->events[a].gen == gen_of(d)) destroy_event(w, a);
        if (w->events[b].used && w->events[b].gen == gen_of(d)) destroy_event(w, b);
      } else {
        if (a >= 0) destroy_event(w, a);
        if (b >= 0) destroy_event(w, b);
      }
    }
    break;
  }
  unlock_dev(d);
}

/* Waits on never-recorded events (same device): resolved by a later record, a self-cycle, a
 * stall that must end in DEADLOCK, or (bug 8) the event destroyed while the wait is pending. */
static void op_future(worker *w) {
  int d = w->dev;
  alloc_t *a = pick_alloc(w, d);
  if (a && settle(w, a)) return;
  lock_dev(d);
  reap_device(w, d);
  if (a && !a->used) a = NULL;
  int ws = new_stream(w, d, 1), other = new_stream(w, d, chance(&w->rng, 2)), ev = new_event(w, d, rnd(&w->rng, 3));
  birenError_t e;
  unsigned variant = rnd(&w->rng, 200);
  /* racy resets: half records that resolve a wait (they lower the device's count of pending
   * future waits, which a reset zeroes), half stalls (DEADLOCK, or INVALID_HANDLE after a
   * reset, never a hang: a count that went wrong makes the stall check look away) */
  if (opt_racy) variant = chance(&w->rng, 2) ? rnd(&w->rng, 100) : 140;
  if (variant >= 142 && variant < 172 && skip[K_DESTROY_WAIT]) variant = 0;
  if (ws < 0 || other < 0 || ev < 0) goto cleanup;
  birenStream_t W = w->streams[ws].s, O = w->streams[other].s;
  birenEvent_t E = w->events[ev].e;
  e = API(w, birenStreamWaitEvent(W, E));
  if (JUDGE(w, F_StreamWaitEvent, e, S_, d, "wait on a never-recorded event")) goto cleanup;
  int v = (int)rng_next(&w->rng);
  if (a) {
    e = API(w, birenMemsetAsync(a->p, v, a->size, W));
    if (JUDGE(w, F_MemsetAsync, e, S_, d, "work behind a future wait")) goto cleanup;
    memset(a->shadow, v & 0xff, a->size);
    a->pend = ws;
  }
  if (variant < 100) { /* resolved by a record elsewhere (maybe on the default stream) */
    e = API(w, birenEventRecord(E, chance(&w->rng, 3) ? O : NULL));
    if (JUDGE(w, F_EventRecord, e, S_, d, "the record a future wait waits for")) goto cleanup;
  } else if (variant < 140) { /* a record in the waiting stream itself closes a cycle */
    e = API(w, birenEventRecord(E, W));
    if (JUDGE(w, F_EventRecord, e, DL, d, "record in the stream that waits for it (a cycle)")) goto cleanup;
    e = API(w, birenEventRecord(E, O));
    if (JUDGE(w, F_EventRecord, e, S_, d, NULL)) goto cleanup;
  } else if (variant < 142) { /* a stall (1%): DEADLOCK after the timeout, then released */
    unlock_dev(d);
    double t0 = now_s();
    e = API(w, birenStreamSynchronize(W));
    double dt = now_s() - t0;
    /* With racy resets a stall may end with INVALID_HANDLE (a reset destroyed the stream), but
     * the resetter pauses for 1.5 s between bursts: a stall still waiting long after the
     * deadlock timeout (20 ms) was not seen by the stall check (its count of pending future
     * waits went wrong) and was only ended by the next burst of resets. */
    if (opt_racy && e != BIREN_ERROR_DEADLOCK && dt > 0.8)
      fail(w, __LINE__, "a stall went unreported for %.2f s (deadlock timeout 20 ms) until a reset ended it with %s", dt,
           birenGetErrorName(e));
    lock_dev(d);
    if (JUDGE(w, F_StreamSynchronize, e, DL, d, "sync of a stream waiting for a record that never comes")) goto cleanup;
    reap_device(w, d);
    if (!w->events[ev].used || !w->streams[other].used) goto cleanup;
    e = API(w, birenEventRecord(E, O));
    if (JUDGE(w, F_EventRecord, e, S_, d, NULL)) goto cleanup;
  } else if (variant < 172) { /* bug 8: the event destroyed while a stream waits for its record */
    e = API(w, birenEventDestroy(E));
    JUDGE_K(w, F_EventDestroy, e, S_, d, K_DESTROY_WAIT, "destroy of an event a stream future-waits on");
    bury_event(w, E);
    w->events[ev].used = 0;
    unlock_dev(d);
    e = API(w, birenStreamSynchronize(W));
    lock_dev(d);
    if (JUDGE_K(w, F_StreamSynchronize, e, S_, d, K_DESTROY_WAIT, "sync after the awaited event was destroyed (the destroy releases the wait)"))
      goto cleanup;
    goto synced;
  } else { /* the stream destroyed first: its work still completes once the record comes */
    destroy_stream(w, ws);
    ws = -1;
    e = API(w, birenEventRecord(E, O));
    if (JUDGE(w, F_EventRecord, e, S_, d, NULL)) goto cleanup;
    unlock_dev(d);
    e = API(w, birenDeviceSynchronize());
    lock_dev(d);
    if (e != BIREN_ERROR_DEADLOCK && JUDGE(w, F_DeviceSynchronize, e, S_ | DL, d, NULL)) goto cleanup;
    if (e == BIREN_SUCCESS)
      for (int i = 0; i < MAX_ALLOCS; i++)
        if (w->allocs[i].used && w->allocs[i].dev == d) w->allocs[i].pend = PEND_NONE;
    goto cleanup;
  }
  unlock_dev(d);
  e = API(w, birenStreamSynchronize(W));
  lock_dev(d);
  if (JUDGE(w, F_StreamSynchronize, e, S_, d, "sync of a stream whose future wait was resolved")) goto cleanup;
synced:
  reap_device(w, d);
  if (a && a->used && a->pend == ws && !reset_since_op(w, d)) {
    a->pend = PEND_NONE;
    verify_alloc(w, a, "work behind a resolved future wait");
  }
cleanup:
  reap_device(w, d);
  if (ws >= 0 && w->streams[ws].used) {
    /* Still-blocked work (a failed check): release it before destroying. */
    if (ev >= 0 && w->events[ev].used && other >= 0 && w->streams[other].used) (void)API(w, birenEventRecord(w->events[ev].e, w->streams[other].s));
    destroy_stream(w, ws);
  }
  if (other >= 0 && w->streams[other].used) destroy_stream(w, other);
  if (ev >= 0 && w->events[ev].used) destroy_event(w, ev);
  unlock_dev(d);
}

/* Bug 3: future waits across devices (needs 2 devices). */
static void op_xdev(worker *w) {
  if (ndev < 2 || skip[K_XDEV]) return;
  lock_dev(0);
  lock_dev(1);
  reap_device(w, 0);
  reap_device(w, 1);
  birenError_t e;
  int A = new_stream(w, 0, 1), F = new_event(w, 0, birenEventDisableTiming);
  int Bs = new_stream(w, 1, 1), E = new_event(w, 1, birenEventDisableTiming), C = new_stream(w, 1, 1);
  unsigned variant = rnd(&w->rng, 20);
  int locked = 1, e_killed = 0;
  if (A < 0 || F < 0 || Bs < 0 || E < 0 || C < 0) goto cleanup;
  e = API(w, birenStreamWaitEvent(w->streams[A].s, w->events[E].e));
  if (JUDGE(w, F_StreamWaitEvent, e, S_, 0, "device 0 stream waits for a never-recorded device 1 event")) goto cleanup;
  if (variant < 12) { /* a cycle across the devices: the closing record is refused */
    e = API(w, birenEventRecord(w->events[F].e, w->streams[A].s));
    if (JUDGE(w, F_EventRecord, e, S_, 0, NULL)) goto cleanup;
    e = API(w, birenStreamWaitEvent(w->streams[Bs].s, w->events[F].e));
    if (JUDGE(w, F_StreamWaitEvent, e, S_, 1, NULL)) goto cleanup;
    e = API(w, birenEventRecord(w->events[E].e, w->streams[Bs].s));
    JUDGE_K(w, F_EventRecord, e, DL, 1, K_XDEV, "record on device 1 closing a cycle of waits across devices");
  } else if (variant < 13) { /* a stall across devices: DEADLOCK, not a hang */
    /* During the stall a reset of device 1 may destroy E while A still waits for its first
     * record: the destroy must release the wait (bug 8's case). With that check off, device 1
     * stays locked against resets meanwhile (else device 0 would stay stuck for good). */
    int keep1 = skip[K_DESTROY_WAIT];
    if (!keep1) unlock_dev(1);
    unlock_dev(0);
    locked = 0;
    use_device(w, 0);
    e = API(w, birenStreamSynchronize(w->streams[A].s));
    /* (a reset of device 1 meanwhile destroys E, which releases the wait: SUCCESS) */
    JUDGE_K(w, F_StreamSynchronize, e, DL | (reset_since_op(w, 1) ? S_ : 0), 0, K_XDEV,
            "sync of a device 0 stream waiting for a device 1 record that never comes");
    lock_dev(0);
    if (!keep1) lock_dev(1);
    locked = 1;
    reap_device(w, 0);
    reap_device(w, 1);
    e_killed = !w->events[E].used;
  }
  /* Release: record E where nothing waits, then everything must complete. */
  if (w->events[E].used && w->streams[C].used) {
    e = API(w, birenEventRecord(w->events[E].e, w->streams[C].s));
    if (JUDGE(w, F_EventRecord, e, S_, 1, "the record that releases the cross-device wait")) goto cleanup;
  }
  unlock_dev(1);
  unlock_dev(0);
  locked = 0;
  {
    int order[3] = {A, Bs, C};
    for (int i = 0; i < 3; i++) {
      if (!w->streams[order[i]].used) continue;
      int d = w->streams[order[i]].dev;
      e = API(w, birenStreamSynchronize(w->streams[order[i]].s));
      if (i == 0 && e_killed)
        JUDGE_K(w, F_StreamSynchronize, e, S_, d, K_DESTROY_WAIT,
                "sync of a device 0 stream whose awaited device 1 event a reset destroyed before any record (the destroy releases the wait)");
      else
        JUDGE_K(w, F_StreamSynchronize, e, S_, d, K_XDEV, "sync after a cross-device future wait was released");
    }
  }
  if (variant >= 13 && variant < 16) {
    /* After the cross-device wait was resolved, a stall on the recording device (1) must still
     * end in DEADLOCK (bug 3: its count of pending future waits wrapped, the stall check was
     * skipped, the synchronize hung). */
    lock_dev(0);
    lock_dev(1);
    locked = 1;
    reap_device(w, 1);
    int W = new_stream(w, 1, 1), E2 = new_event(w, 1, birenEventDisableTiming);
    if (W >= 0 && E2 >= 0 && w->streams[C].used) {
      e = API(w, birenStreamWaitEvent(w->streams[W].s, w->events[E2].e));
      if (!JUDGE(w, F_StreamWaitEvent, e, S_, 1, NULL)) {
        /* device 1 stays locked: a reset would end the stall with INVALID_HANDLE */
        e = API(w, birenStreamSynchronize(w->streams[W].s));
        JUDGE_K(w, F_StreamSynchronize, e, DL, 1, K_XDEV,
                "a stall on device 1 after a device 0 stream's wait for a device 1 record was resolved");
        e = API(w, birenEventRecord(w->events[E2].e, w->streams[C].s));
        if (!JUDGE(w, F_EventRecord, e, S_, 1, NULL)) {
          e = API(w, birenStreamSynchronize(w->streams[W].s));
          JUDGE_K(w, F_StreamSynchronize, e, S_, 1, K_XDEV, NULL);
        }
      }
    }
    if (W >= 0) destroy_stream(w, W);
    if (E2 >= 0) destroy_event(w, E2);
    unlock_dev(1);
    unlock_dev(0);
    locked = 0;
  }
cleanup:
  if (!locked) {
    lock_dev(0);
    lock_dev(1);
  }
  reap_device(w, 0);
  reap_device(w, 1);
  if (E >= 0 && w->events[E].used && C >= 0 && w->streams[C].used) (void)API(w, birenEventRecord(w->events[E].e, w->streams[C].s));
  int ss[3] = {A, Bs, C}, es[2] = {F, E};
  for (int i = 0; i < 3; i++)
    if (ss[i] >= 0 && w->streams[ss[i]].used) destroy_stream(w, ss[i]);
  for (int i = 0; i < 2; i++)
    if (es[i] >= 0 && w->events[es[i]].used) destroy_event(w, es[i]);
  unlock_dev(1);
  unlock_dev(0);
}

/* Forged, destroyed and cross-typed handles. */
static void op_handles(worker *w) {
  int d = w->dev;
  lock_dev(d);
  reap_device(w, d);
  birenError_t e;
  static int stackvar;
  /* Never a live handle of another thread: generation 0 (the low 32 bits only), an index no
   * registry reaches, or a generation no slot reaches. */
  uintptr_t forged[] = {1, 2, 0xdeadbeef, ((uintptr_t)0x7fffffff << 32) | 2, UINTPTR_MAX, ((uintptr_t)0x7ffffff0 << 32) | 7,
                        (uintptr_t)&stackvar, (uintptr_t)rng_next(&w->rng) | ((uintptr_t)1 << 31),
                        (uintptr_t)rng_next(&w->rng) & 0xffffffffu};
  unsigned r = rnd(&w->rng, 4);
  birenStream_t s;
  birenEvent_t ev;
  const char *what;
  if (r == 0) {
    s = (birenStream_t)forged[rnd(&w->rng, 9)];
    ev = (birenEvent_t)forged[rnd(&w->rng, 9)];
    what = "forged handle";
  } else if (r == 1 && (w->ngs || w->nge)) {
    s = w->ngs ? w->grave_s[rnd(&w->rng, w->ngs < GRAVE ? w->ngs : GRAVE)] : (birenStream_t)forged[0];
    ev = w->nge ? w->grave_e[rnd(&w->rng, w->nge < GRAVE ? w->nge : GRAVE)] : (birenEvent_t)forged[0];
    what = "destroyed handle";
  } else { /* cross-typed: one of our live streams as an event and a live event as a stream */
    int ks = pick_stream(w, d), ke = pick_event(w, d);
    if (ks < 0 || ke < 0) {
      unlock_dev(d);
      return;
    }
    s = (birenStream_t)w->events[ke].e;
    ev = (birenEvent_t)w->streams[ks].s;
    what = "cross-typed handle (a stream passed as an event, an event as a stream)";
    if (skip[K_XTYPE]) { /* only the queries, which change nothing */
      e = API(w, birenEventQuery(ev));
      if (e != BIREN_ERROR_INVALID_HANDLE) __atomic_fetch_add(&observed[K_XTYPE], 1, __ATOMIC_RELAXED);
      e = API(w, birenStreamQuery(s));
      if (e != BIREN_ERROR_INVALID_HANDLE) __atomic_fetch_add(&observed[K_XTYPE], 1, __ATOMIC_RELAXED);
      unlock_dev(d);
      return;
    }
    int k = K_XTYPE;
    e = API(w, birenEventQuery(ev));
    JUDGE_K(w, F_EventQuery, e, IH, d, k, what);
    e = API(w, birenStreamQuery(s));
    JUDGE_K(w, F_StreamQuery, e, IH, d, k, what);
    e = API(w, birenEventRecord(ev, NULL));
    JUDGE_K(w, F_EventRecord, e, IH, d, k, what);
    e = API(w, birenEventRecord(w->events[ke].e, s));
    JUDGE_K(w, F_EventRecord, e, IH, d, k, what);
    e = API(w, birenStreamWaitEvent(w->streams[ks].s, ev));
    JUDGE_K(w, F_StreamWaitEvent, e, IH, d, k, what);
    e = API(w, birenLaunchKernel(k_nop, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, s));
    JUDGE_K(w, F_LaunchKernel, e, IH, d, k, what);
    e = API(w, birenEventDestroy(ev));
    JUDGE_K(w, F_EventDestroy, e, IH, d, k, what);
    e = API(w, birenStreamDestroy(s));
    JUDGE_K(w, F_StreamDestroy, e, IH, d, k, what);
    unlock_dev(d);
    e = API(w, birenEventSynchronize(ev));
    JUDGE_K(w, F_EventSynchronize, e, IH, d, k, what);
    e = API(w, birenStreamSynchronize(s));
    JUDGE_K(w, F_StreamSynchronize, e, IH, d, k, what);
    return;
  }
  e = API(w, birenStreamQuery(s));
  JUDGE(w, F_StreamQuery, e, IH, -1, what);
  e = API(w, birenStreamDestroy(s));
  JUDGE(w, F_StreamDestroy, e, IH, -1, what);
  e = API(w, birenStreamSynchronize(s));
  JUDGE(w, F_StreamSynchronize, e, IH, -1, what);
  e = API(w, birenStreamWaitEvent(s, NULL));
  JUDGE(w, F_StreamWaitEvent, e, IH, -1, what);
  int pr;
  e = API(w, birenStreamGetPriority(s, &pr));
  JUDGE(w, F_StreamGetPriority, e, IH, -1, what);
  e = API(w, birenLaunchKernel(k_nop, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, s));
  JUDGE(w, F_LaunchKernel, e, IH, -1, what);
  e = API(w, birenLaunchHostFunc(s, host_job, &w->jobs[0]));
  JUDGE(w, F_LaunchHostFunc, e, IH, -1, what);
  alloc_t *a = pick_alloc(w, d);
  if (a) {
    e = API(w, birenMemsetAsync(a->p, 0, 1, s));
    JUDGE(w, F_MemsetAsync, e, IH, -1, what);
    e = API(w, birenMemcpyAsync(w->hbuf, a->p, 1, birenMemcpyDeviceToHost, s));
    JUDGE(w, F_MemcpyAsync, e, IH, -1, what);
  }
  e = API(w, birenEventQuery(ev));
  JUDGE(w, F_EventQuery, e, IH, -1, what);
  e = API(w, birenEventRecord(ev, NULL));
  JUDGE(w, F_EventRecord, e, IH, -1, what);
  e = API(w, birenEventSynchronize(ev));
  JUDGE(w, F_EventSynchronize, e, IH, -1, what);
  e = API(w, birenEventDestroy(ev));
  JUDGE(w, F_EventDestroy, e, IH, -1, what);
  e = API(w, birenStreamWaitEvent(NULL, ev));
  JUDGE(w, F_StreamWaitEvent, e, IH, -1, what);
  float ms;
  e = API(w, birenEventElapsedTime(&ms, ev, ev));
  JUDGE(w, F_EventElapsedTime, e, IH, -1, what);
  e = API(w, birenStreamDestroy(NULL));
  JUDGE(w, F_StreamDestroy, e, IH, -1, "the default stream cannot be destroyed");
  unlock_dev(d);
}

/* One to four jobs in one stream: host functions that refuse a synchronize (their codes are
 * checked afterwards) and busy ones, host functions and stream callbacks, that call everything
 * they may call; then the stream's synchronize. */
static void op_hostfn(worker *w) {
  int d = w->dev;
  lock_dev(d);
  reap_device(w, d);
  int k = pick_stream(w, d);
  birenStream_t s = k >= 0 && chance(&w->rng, 4) ? w->streams[k].s : NULL;
  birenError_t e = API(w, birenLaunchHostFunc(s, NULL, &w->jobs[0]));
  JUDGE(w, F_LaunchHostFunc, e, IV, d, "NULL fn");
  hostjob *launched[4];
  int n = 0;
  for (int i = 0, want = 1 + (int)rnd(&w->rng, 4); i < want; i++) {
    hostjob *j = &w->jobs[rnd(&w->rng, 8)];
    /* Still in flight from an earlier launch. (With racy resets a job may have been dropped
     * by a reset, which nothing tells: its slot is reused. Only busy jobs are launched then,
     * and they read their slot atomically, once.) */
    if (!opt_racy && j->ran == 0 && j->gen != 0) continue;
    int kind = !opt_racy && chance(&w->rng, 3) ? HJ_REFUSED : chance(&w->rng, 2) ? HJ_BUSY : HJ_CALLBACK;
#ifdef FUZZ_ASAN
    if (kind == HJ_CALLBACK && skip[K_CB_LEAK]) kind = HJ_BUSY; /* a reset may drop it: a leak */
#endif
    __atomic_store_n(&j->ran, 0, __ATOMIC_SEQ_CST);
    j->gen = 1;
    __atomic_store_n(&j->dev, d, __ATOMIC_SEQ_CST);
    __atomic_store_n(&j->in, s, __ATOMIC_SEQ_CST);
    __atomic_store_n(&j->rng, rng_next(&w->rng) | 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&j->kind, kind, __ATOMIC_SEQ_CST);
    enum fn f = j->kind == HJ_CALLBACK ? F_StreamAddCallback : F_LaunchHostFunc;
    if (j->kind == HJ_CALLBACK)
      e = API(w, birenStreamAddCallback(s, callback_busy, j, 0));
    else
      e = API(w, birenLaunchHostFunc(s, j->kind == HJ_BUSY ? host_busy : host_job, j));
    if (JUDGE(w, f, e, S_, d, NULL)) {
      __atomic_store_n(&j->ran, 1, __ATOMIC_SEQ_CST);
      break;
    }
    launched[n++] = j;
  }
  unlock_dev(d);
  if (n == 0) return;
  e = API(w, birenStreamSynchronize(s));
  if (JUDGE(w, F_StreamSynchronize, e, S_, d, "wait for a host function")) {
    if (!reset_since_op(w, d))
      for (int i = 0; i < n; i++) launched[i]->ran = 1;
    return;
  }
  if (reset_since_op(w, d)) return; /* they may have been dropped: leave the slots in flight */
  for (int i = 0; i < n; i++) {
    hostjob *j = launched[i];
    if (!__atomic_load_n(&j->ran, __ATOMIC_SEQ_CST)) fail(w, __LINE__, "host function did not run before its stream's synchronize returned");
    if (j->kind != HJ_REFUSED) continue;
    for (int c = 0; c < 3; c++)
      if (j->codes[c] != BIREN_ERROR_NOT_PERMITTED)
        fail(w, __LINE__, "inside a host function, %s returned %s, not NOT_PERMITTED",
             c == 0 ? "birenStreamSynchronize" : c == 1 ? "birenDeviceSynchronize" : "birenMemcpy", birenGetErrorName((birenError_t)j->codes[c]));
  }
}

static void op_sync(worker *w) {
  int d = w->dev;
  birenError_t e;
  switch (rnd(&w->rng, 4)) {
  case 0:
    e = API(w, birenDeviceSynchronize());
    if (!JUDGE(w, F_DeviceSynchronize, e, S_ | DL, d, NULL) && e == BIREN_SUCCESS)
      for (int i = 0; i < MAX_ALLOCS; i++)
        if (w->allocs[i].used && w->allocs[i].dev == d) w->allocs[i].pend = PEND_NONE;
    break;
  case 1:
    e = API(w, birenStreamSynchronize(NULL));
    if (!JUDGE(w, F_StreamSynchronize, e, S_, d, "default stream"))
      for (int i = 0; i < MAX_ALLOCS; i++)
        if (w->allocs[i].pend == PEND_NULL && w->allocs[i].dev == d) w->allocs[i].pend = PEND_NONE;
    break;
  default: {
    lock_dev(d);
    reap_device(w, d);
    int k = pick_stream(w, d);
    birenStream_t s = k >= 0 ? w->streams[k].s : NULL;
    unlock_dev(d);
    if (k < 0) break;
    if (chance(&w->rng, 3)) { /* poll */
      double t0 = now_s();
      while ((e = API(w, birenStreamQuery(s))) == BIREN_ERROR_NOT_READY && now_s() - t0 < 5) sleep_ms(0.2);
      if (JUDGE(w, F_StreamQuery, e, S_, d, "query polled for 5 s")) break;
    } else {
      e = API(w, birenStreamSynchronize(s));
      if (JUDGE(w, F_StreamSynchronize, e, S_, d, NULL)) break;
    }
    clear_pend(w, d, k);
    break;
  }
  }
}

static void op_reset(worker *w) {
  int d = w->dev;
  pthread_rwlock_wrlock(&dev_lock[d]);
  __atomic_fetch_add(&resets[d], 1, __ATOMIC_SEQ_CST);
  birenError_t e = API(w, birenDeviceReset());
  pthread_rwlock_unlock(&dev_lock[d]);
  JUDGE(w, F_DeviceReset, e, S_, -1, NULL);
  lock_dev(d);
  reap_device(w, d);
  unlock_dev(d);
}

static void op_misc(worker *w) {
  int d = w->dev;
  birenError_t e;
  switch (rnd(&w->rng, 14)) {
  case 0: {
    int n = -1;
    e = API(w, birenGetDeviceCount(&n));
    if (!JUDGE(w, F_GetDeviceCount, e, S_, -1, NULL) && n != ndev) fail(w, __LINE__, "birenGetDeviceCount gave %d, expected %d", n, ndev);
    e = API(w, birenGetDeviceCount(NULL));
    JUDGE(w, F_GetDeviceCount, e, IV, -1, "NULL");
    break;
  }
  case 1: {
    int bad[] = {-1, ndev, 7, INT_MIN};
    e = API(w, birenSetDevice(bad[rnd(&w->rng, 4)]));
    JUDGE(w, F_SetDevice, e, IDEV, -1, "no such device");
    int cur = -1;
    e = API(w, birenGetDevice(&cur));
    if (!JUDGE(w, F_GetDevice, e, S_, -1, NULL) && cur != w->dev) fail(w, __LINE__, "birenGetDevice gave %d, expected %d", cur, w->dev);
    break;
  }
  case 2: {
    birenDeviceProp p;
    e = API(w, birenGetDeviceProperties(&p, d));
    JUDGE(w, F_GetDeviceProperties, e, S_, -1, NULL);
    e = API(w, birenGetDeviceProperties(&p, ndev + (int)rnd(&w->rng, 3)));
    JUDGE(w, F_GetDeviceProperties, e, IDEV, -1, "no such device");
    e = API(w, birenGetDeviceProperties(NULL, d));
    JUDGE(w, F_GetDeviceProperties, e, IV, -1, "NULL");
    break;
  }
  case 3: {
    size_t fr = 1, tot = 0;
    e = API(w, birenMemGetInfo(&fr, &tot));
    if (!JUDGE(w, F_MemGetInfo, e, S_, -1, NULL) && fr > tot) fail(w, __LINE__, "birenMemGetInfo: free %zu > total %zu", fr, tot);
    e = API(w, birenMemGetInfo(NULL, &tot));
    JUDGE(w, F_MemGetInfo, e, IV, -1, "NULL");
    break;
  }
  case 4: {
    lock_dev(d);
    reap_device(w, d);
    alloc_t *a = pick_alloc(w, d);
    birenPointerAttributes at;
    if (a) {
      size_t off = rndz(&w->rng, a->size);
      e = API(w, birenPointerGetAttributes(&at, a->p + off));
      if (!JUDGE(w, F_PointerGetAttributes, e, S_, d, NULL) &&
          (at.type != birenMemoryTypeDevice || at.device != d || at.basePointer != a->p || at.size != a->size ||
           at.devicePointer != a->p + off))
        fail(w, __LINE__, "pointer attributes of %p (offset %zu of a %zu-byte allocation on device %d): type %d device %d base %p size %zu",
             (void *)(a->p + off), off, a->size, d, (int)at.type, at.device, at.basePointer, at.size);
    }
    e = API(w, birenPointerGetAttributes(&at, w->pbuf + rndz(&w->rng, PBUF_SIZE)));
    if (!JUDGE(w, F_PointerGetAttributes, e, S_, -1, NULL) && (at.type != birenMemoryTypeHost || at.basePointer != w->pbuf || at.size != PBUF_SIZE))
      fail(w, __LINE__, "pointer attributes of pinned memory: type %d base %p size %zu", (int)at.type, at.basePointer, at.size);
    e = API(w, birenPointerGetAttributes(&at, w->hbuf + 1));
    if (!JUDGE(w, F_PointerGetAttributes, e, S_, -1, NULL) && at.type != birenMemoryTypeUnregistered)
      fail(w, __LINE__, "pointer attributes of malloc'd memory: type %d", (int)at.type);
    e = API(w, birenPointerGetAttributes(NULL, w->hbuf));
    JUDGE(w, F_PointerGetAttributes, e, IV, -1, "NULL attributes");
    unlock_dev(d);
    break;
  }
  case 5: {
    e = API(w, birenGetLastError());
    if (!(B(e) & (S_ | IV | OOM | IDEV | IH | IDP | OOB | BADKIND | CFG | DL | NP | LF | IA | ILS | SCU | SCINV | SCUNM | SCUNJ | SCWT)))
      fail(w, __LINE__, "birenGetLastError gave %s", birenGetErrorName(e));
    e = API(w, birenPeekAtLastError());
    if (e != BIREN_SUCCESS) fail(w, __LINE__, "birenPeekAtLastError right after birenGetLastError gave %s", birenGetErrorName(e));
    int code = (int)rng_next(&w->rng);
    if (birenGetErrorString((birenError_t)code) == NULL || birenGetErrorName((birenError_t)code) == NULL)
      fail(w, __LINE__, "error string or name NULL for %d", code);
    w->calls += 2;
    break;
  }
  case 6: {
    int v = 0, lo = 9, hi = 9;
    e = API(w, birenRuntimeGetVersion(&v));
    JUDGE(w, F_RuntimeGetVersion, e, S_, -1, NULL);
    e = API(w, birenRuntimeGetVersion(NULL));
    JUDGE(w, F_RuntimeGetVersion, e, IV, -1, "NULL");
    e = API(w, birenDeviceGetStreamPriorityRange(&lo, &hi));
    if (!JUDGE(w, F_DeviceGetStreamPriorityRange, e, S_, -1, NULL) && (lo != 0 || hi != -5))
      fail(w, __LINE__, "priority range %d..%d", lo, hi);
    break;
  }
  case 7: {
    int pol[] = {0, 1, 2, -1, 100};
    int i = (int)rnd(&w->rng, 5);
    e = API(w, birenDeviceSetSchedulingPolicy((birenSchedulingPolicy)pol[i]));
    JUDGE(w, F_SchedulingPolicy, e, i < 2 ? S_ : IV, -1, NULL);
    birenSchedulingPolicy p;
    e = API(w, birenDeviceGetSchedulingPolicy(&p));
    JUDGE(w, F_SchedulingPolicy, e, S_, -1, NULL);
    e = API(w, birenDeviceGetSchedulingPolicy(NULL));
    JUDGE(w, F_SchedulingPolicy, e, IV, -1, "NULL");
    break;
  }
  case 8: { /* pinned memory */
    void *p = NULL;
    size_t sizes[] = {0, 1, PAGE - 1, PAGE + 1, MIB + 3};
    size_t sz = sizes[rnd(&w->rng, 5)];
    pthread_rwlock_rdlock(&alloc_lock);
    e = API(w, birenMallocHost(&p, sz));
    pthread_rwlock_unlock(&alloc_lock);
    if (JUDGE(w, F_MallocHost, e, S_, -1, NULL)) break;
    if (sz == 0 && p != NULL) fail(w, __LINE__, "birenMallocHost(0) gave %p", p);
    if (p) memset(p, 0xA5, sz);
    if (p && sz > 1) {
      e = API(w, birenFreeHost((char *)p + 1));
      JUDGE(w, F_FreeHost, e, IV, -1, "interior pointer");
    }
    pthread_rwlock_wrlock(&alloc_lock);
    e = API(w, birenFreeHost(p));
    if (!JUDGE(w, F_FreeHost, e, S_, -1, NULL) && p) {
      e = API(w, birenFreeHost(p));
      JUDGE(w, F_FreeHost, e, IV, -1, "double free");
    }
    pthread_rwlock_unlock(&alloc_lock);
    break;
  }
  case 9: {
    void *p = (void *)&p;
    static const size_t huge[] = {SIZE_MAX, SIZE_MAX - 100, (size_t)1 << 62};
    e = API(w, birenMallocHost(&p, huge[rnd(&w->rng, 3)]));
    if (!JUDGE(w, F_MallocHost, e, OOM, -1, "huge") && p != (void *)&p) fail(w, __LINE__, "a failed birenMallocHost wrote *ptr");
    e = API(w, birenMallocHost(NULL, 16));
    JUDGE(w, F_MallocHost, e, IV, -1, "NULL ptr");
    break;
  }
  case 10: {
    static int stackvar;
    void *bad[] = {w->hbuf, &stackvar, (void *)0x1000};
    e = API(w, birenFreeHost(bad[rnd(&w->rng, 3)]));
    JUDGE(w, F_FreeHost, e, IV, -1, "not from birenMallocHost");
    e = API(w, birenFree(bad[rnd(&w->rng, 3)]));
    JUDGE(w, F_Free, e, IDP, -1, "not device memory");
    e = API(w, birenFree(w->pbuf));
    JUDGE(w, F_Free, e, IDP, -1, "pinned memory is not device memory");
    e = API(w, birenFree(NULL));
    JUDGE(w, F_Free, e, S_, -1, "NULL");
    e = API(w, birenFreeHost(NULL));
    JUDGE(w, F_FreeHost, e, S_, -1, "NULL");
    lock_dev(d);
    reap_device(w, d);
    alloc_t *a = pick_alloc(w, d);
    if (a) {
      e = API(w, birenFreeHost(a->p));
      JUDGE(w, F_FreeHost, e, IV, d, "device memory is not pinned memory");
    }
    unlock_dev(d);
    break;
  }
  default: /* switch device */
    if (ndev > 1) use_device(w, (int)rnd(&w->rng, (unsigned)ndev));
    break;
  }
}

/* ---- the worker loop -------------------------------------------------------------------------- */

typedef struct op {
  const char *name;
  void (*fn)(worker *);
  unsigned weight;
} op;
static const op OPS[] = {
    {"alloc", op_alloc, 12}, {"free", op_free, 8},       {"verify", op_verify, 4},  {"memset", op_memset, 8},
    {"copy", op_copy, 22},   {"kernel", op_kernel, 10},  {"hostile-args", op_hostile_args, 2},
    {"stream", op_stream, 6}, {"event", op_event, 8},    {"future", op_future, 5},  {"xdev", op_xdev, 2},
    {"handles", op_handles, 4}, {"hostfn", op_hostfn, 6}, {"sync", op_sync, 6},     {"misc", op_misc, 6},
    {"graph", op_graph, 6},
};
static unsigned reset_one_in = 400; /* a reset every ~400 operations of a thread */

static void *worker_main(void *arg) {
  worker *w = arg;
  w->ostid = (pid_t)gettid();
  unsigned weights[sizeof OPS / sizeof OPS[0]], total = 0;
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
    weights[i] = OPS[i].weight;
    if (opt_racy && (OPS[i].fn == op_alloc || OPS[i].fn == op_free || OPS[i].fn == op_verify || OPS[i].fn == op_memset ||
                     OPS[i].fn == op_copy || OPS[i].fn == op_kernel || OPS[i].fn == op_graph))
      weights[i] = 0;
    if (opt_racy && OPS[i].fn == op_future) weights[i] = 30;
    if (opt_racy && OPS[i].fn == op_hostfn) weights[i] = 20; /* jobs calling the runtime, racing with resets */
    total += weights[i];
  }
  set_op(w, "setup");
  w->hbuf = malloc(HBUF_SIZE);
  w->cmp = malloc(4 * MIB);
  birenError_t e = API(w, birenMallocHost((void **)&w->pbuf, PBUF_SIZE));
  if (JUDGE(w, F_MallocHost, e, S_, -1, NULL) || !w->hbuf || !w->cmp) return NULL;
  e = API(w, birenMallocHost((void **)&w->counter, sizeof *w->counter));
  if (JUDGE(w, F_MallocHost, e, S_, -1, NULL)) return NULL;
  if (ndev > 1) use_device(w, w->id % ndev);
  if (opt_selftest_hang && w->id == 0) {
    set_op(w, "selftest-hang");
    e = API(w, birenLaunchKernel(k_forever, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL));
    if (!JUDGE(w, F_LaunchKernel, e, S_, -1, NULL)) e = API(w, birenStreamSynchronize(NULL));
  }
  while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
    w->ops++;
    if (!opt_racy && reset_one_in && rnd(&w->rng, reset_one_in) == 0) {
      set_op(w, "reset");
      op_reset(w);
      continue;
    }
    unsigned r = rnd(&w->rng, total);
    size_t i = 0;
    while (r >= weights[i]) r -= weights[i++];
    set_op(w, OPS[i].name);
    double t = now_s();
    OPS[i].fn(w);
    w->op_time[i] += now_s() - t;
    w->op_count[i]++;
    progress(w);
  }
  /* Leave nothing in flight: release, wait, destroy, free. */
  set_op(w, "teardown");
  for (int d = 0; d < ndev; d++) {
    use_device(w, d);
    e = API(w, birenDeviceSynchronize());
    JUDGE(w, F_DeviceSynchronize, e, S_ | DL, -1, "teardown");
    lock_dev(d);
    reap_device(w, d);
    for (int i = 0; i < MAX_ALLOCS; i++)
      if (w->allocs[i].used && w->allocs[i].dev == d) {
        w->allocs[i].pend = e == BIREN_SUCCESS ? PEND_NONE : w->allocs[i].pend;
        verify_alloc(w, &w->allocs[i], "teardown");
        if (!(skip[K_MADVISE] && w->allocs[i].size >= MIB)) { /* else the final reset frees it */
          e = API(w, birenFree(w->allocs[i].p));
          JUDGE(w, F_Free, e, S_, d, "teardown");
        }
        free(w->allocs[i].shadow);
        memset(&w->allocs[i], 0, sizeof w->allocs[i]);
      }
    for (int i = 0; i < MAX_STREAMS; i++)
      if (w->streams[i].used && w->streams[i].dev == d) destroy_stream(w, i);
    for (int i = 0; i < MAX_EVENTS; i++)
      if (w->events[i].used && w->events[i].dev == d) destroy_event(w, i);
    unlock_dev(d);
  }
  for (int d = 0; d < ndev; d++) {
    use_device(w, d);
    e = API(w, birenDeviceSynchronize());
    JUDGE(w, F_DeviceSynchronize, e, S_ | DL, -1, "teardown");
  }
  e = API(w, birenFreeHost(w->pbuf));
  JUDGE(w, F_FreeHost, e, S_, -1, NULL);
  e = API(w, birenFreeHost(w->counter));
  JUDGE(w, F_FreeHost, e, S_, -1, NULL);
  free(w->hbuf);
  free(w->cmp);
  set_op(w, "finished");
  __atomic_store_n(&w->active, 0, __ATOMIC_RELEASE);
  return NULL;
}

/* --racy-resets: resets of random devices every 1 to 20 ms, without the reset lock. */
static void *racy_resetter_main(void *arg) {
  worker *w = arg;
  w->ostid = (pid_t)gettid();
  set_op(w, "racy-reset");
  double burst_end = now_s() + 0.3;
  while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
    sleep_ms(1 + rnd(&w->rng, 20));
    progress(w);
    if (now_s() > burst_end) { /* bursts of 0.3 s, pauses of 1.5 s */
      for (int i = 0; i < 15 && !__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE); i++) {
        sleep_ms(100);
        progress(w);
      }
      burst_end = now_s() + 0.3;
    }
    int d = (int)rnd(&w->rng, (unsigned)ndev);
    use_device(w, d);
    __atomic_fetch_add(&resets[d], 1, __ATOMIC_SEQ_CST);
    birenError_t e = API(w, birenDeviceReset());
    JUDGE(w, F_DeviceReset, e, S_, -1, NULL);
  }
  set_op(w, "finished");
  __atomic_store_n(&w->active, 0, __ATOMIC_RELEASE);
  return NULL;
}

/* ---- hang and crash reports --------------------------------------------------------------------- */

static void print_threads(FILE *f) {
  double now = now_s();
  for (int i = 0; i < nthreads_all; i++) {
    worker *w = &workers[i];
    double l;
    __atomic_load(&w->progress, &l, __ATOMIC_RELAXED);
    fprintf(f, "  thread %d (tid %d) op %-13s %s %s (fuzz.c:%d), last progress %.1f s ago\n", w->id, (int)w->ostid, w->opname,
            w->in_call ? "IN" : "after", w->last_call ? w->last_call : "-", w->last_line, now - l);
  }
}

static void dump_task_states(void) {
  DIR *dir = opendir("/proc/self/task");
  if (!dir) return;
  struct dirent *de;
  fprintf(stderr, "fuzz: /proc/self/task (tid, name, state, wchan):\n");
  while ((de = readdir(dir)) != NULL) {
    if (de->d_name[0] == '.') continue;
    char path[300], stat[512] = "", wchan[128] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", de->d_name);
    FILE *f = fopen(path, "r");
    if (f) {
      if (!fgets(stat, sizeof stat, f)) stat[0] = 0;
      fclose(f);
    }
    snprintf(path, sizeof path, "/proc/self/task/%s/wchan", de->d_name);
    f = fopen(path, "r");
    if (f) {
      if (!fgets(wchan, sizeof wchan, f)) wchan[0] = 0;
      fclose(f);
    }
    /* stat: "tid (comm) S ..." */
    char *lp = strchr(stat, '('), *rp = strrchr(stat, ')');
    char comm[64] = "?", state = '?';
    if (lp && rp && rp > lp) {
      snprintf(comm, sizeof comm, "%.*s", (int)(rp - lp - 1), lp + 1);
      if (rp[1] == ' ') state = rp[2];
    }
    fprintf(stderr, "  %-8s %-16s %c %s\n", de->d_name, comm, state, wchan[0] ? wchan : "-");
  }
  closedir(dir);
}

static void *watchdog_main(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&all_done, __ATOMIC_ACQUIRE)) {
    sleep_ms(250);
    double now = now_s();
    for (int i = 0; i < nthreads_all; i++) {
      worker *w = &workers[i];
      if (!__atomic_load_n(&w->active, __ATOMIC_ACQUIRE)) continue;
      double last;
      __atomic_load(&w->progress, &last, __ATOMIC_RELAXED);
      if (now - last <= opt_watchdog) continue;
      pthread_mutex_lock(&out_lock);
      fprintf(stderr, "fuzz: WATCHDOG: thread %d made no progress for %.0f s (a hang) [seed %llu]; last call per thread:\n", i,
              now - last, opt_seed);
      print_threads(stderr);
      dump_task_states();
      fflush(stderr);
      if (access("/usr/bin/gdb", X_OK) == 0 || access("/usr/local/bin/gdb", X_OK) == 0) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "gdb -q -batch -p %d -ex 'set pagination off' -ex 'thread apply all bt' </dev/null 1>&2 2>/dev/null",
                 (int)getpid());
        fprintf(stderr, "fuzz: every thread's stack (gdb):\n");
        fflush(stderr);
        if (system(cmd) != 0) fprintf(stderr, "fuzz: gdb could not attach (ptrace not permitted?)\n");
      } else {
        fprintf(stderr, "fuzz: no gdb: thread states above are all there is\n");
      }
      fprintf(stderr, "fuzz: 1 failed (hang), seed %llu\n", opt_seed);
      fflush(stderr);
      _exit(3);
    }
  }
  return NULL;
}

#ifndef FUZZ_ASAN
static void on_crash(int sig) {
  char buf[256];
  int n = snprintf(buf, sizeof buf, "\nfuzz: CRASH: signal %d [seed %llu]; last call per thread:\n", sig, opt_seed);
  if (n > 0) (void)!write(2, buf, (size_t)n);
  for (int i = 0; i < nthreads_all; i++) {
    worker *w = &workers[i];
    n = snprintf(buf, sizeof buf, "  thread %d op %s %s %s (fuzz.c:%d)\n", w->id, w->opname, w->in_call ? "IN" : "after",
                 w->last_call ? w->last_call : "-", w->last_line);
    if (n > 0) (void)!write(2, buf, (size_t)(n < (int)sizeof buf ? n : (int)sizeof buf - 1));
  }
  signal(sig, SIG_DFL);
  raise(sig);
}
#endif

/* ---- main ------------------------------------------------------------------------------------ */

static void usage(void) {
  fprintf(stderr, "usage: fuzz [--seed S] [--seconds T] [--threads N] [--watchdog S] [--skip a,b,...|known|none] [--quiet]\n"
                  "            [--reset-every N] [--racy-resets] [--selftest-hang]\n"
                  "  skippable known-bug checks (also FUZZ_SKIP):");
  for (int k = 0; k < K_COUNT; k++) fprintf(stderr, " %s", known_names[k]);
  fprintf(stderr, "\n");
  exit(2);
}

static void parse_skip(const char *list) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (!strcmp(tok, "known") || !strcmp(tok, "all")) {
      for (int k = 0; k < K_COUNT; k++) skip[k] = 1;
      continue;
    }
    if (!strcmp(tok, "none")) {
      for (int k = 0; k < K_COUNT; k++) skip[k] = 0;
      continue;
    }
    int found = 0;
    for (int k = 0; k < K_COUNT; k++)
      if (!strcmp(tok, known_names[k])) skip[k] = 1, found = 1;
    if (!found) {
      fprintf(stderr, "fuzz: unknown check '%s' in --skip\n", tok);
      usage();
    }
  }
}

int main(int argc, char **argv) {
  opt_seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 16);
  const char *env_skip = getenv("FUZZ_SKIP");
  if (env_skip && *env_skip) parse_skip(env_skip);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quiet")) opt_quiet = 1;
    else if (!strcmp(a, "--selftest-hang")) opt_selftest_hang = 1;
    else if (!strcmp(a, "--racy-resets")) opt_racy = 1;
    else if (v == NULL) usage();
    else if (!strcmp(a, "--seed")) opt_seed = strtoull(v, NULL, 0), i++;
    else if (!strcmp(a, "--seconds")) opt_seconds = atof(v), i++;
    else if (!strcmp(a, "--threads")) opt_threads = atoi(v), i++;
    else if (!strcmp(a, "--watchdog")) opt_watchdog = atof(v), i++;
    else if (!strcmp(a, "--skip")) parse_skip(v), i++;
    else if (!strcmp(a, "--reset-every")) reset_one_in = (unsigned)strtoul(v, NULL, 0), i++;
    else usage();
  }
  if (opt_threads < 1 || opt_threads > MAX_THREADS - 1 || opt_seconds <= 0 || opt_watchdog <= 0) usage();
  nthreads_all = opt_threads + (opt_racy ? 1 : 0);
  printf("fuzz: seed %llu, %d threads, %.0f s\n", opt_seed, opt_threads, opt_seconds);
  fflush(stdout);

  /* gdb (a child) may attach to us when Yama restricts ptrace to ancestors. */
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#ifndef FUZZ_ASAN
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGABRT, on_crash);
  signal(SIGILL, on_crash);
  signal(SIGFPE, on_crash);
#endif
  setenv("BIREN_DEVICE_MEMORY", "1G", 0);
  /* Stalls on purpose end in DEADLOCK after this; hangs are the watchdog's business. */
  setenv("BIREN_DEADLOCK_TIMEOUT_MS", opt_racy ? "20" : "250", 0);
  if (birenInit() != BIREN_SUCCESS) {
    fprintf(stderr, "fuzz: birenInit failed\n");
    return 2;
  }
  if (birenGetDeviceCount(&ndev) != BIREN_SUCCESS || ndev < 1) return 2;
  if (ndev > MAX_DEV) ndev = MAX_DEV;
  for (int d = 0; d < MAX_DEV; d++) pthread_rwlock_init(&dev_lock[d], NULL);
  size_t free0[MAX_DEV], total0[MAX_DEV];
  for (int d = 0; d < ndev; d++) {
    if (birenSetDevice(d) != BIREN_SUCCESS || birenMemGetInfo(&free0[d], &total0[d]) != BIREN_SUCCESS) return 2;
  }
  (void)birenSetDevice(0);
  {
    size_t sz[3] = {sizeof(unsigned char *), sizeof(size_t), sizeof(unsigned)};
    if (birenKernelRegister(k_fill_reg, "k_fill_reg", 3, sz) != BIREN_SUCCESS) return 2;
  }
  printf("fuzz: %d device(s); skipped known-bug checks:", ndev);
  int any = 0;
  for (int k = 0; k < K_COUNT; k++)
    if (skip[k]) printf(" %s", known_names[k]), any = 1;
  printf("%s\n", any ? "" : " none");
  fflush(stdout);

  double t0 = now_s();
  for (int i = 0; i < nthreads_all; i++) {
    worker *w = &workers[i];
    w->id = i;
    w->rng = (opt_seed + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ULL;
    if (w->rng == 0) w->rng = 1;
    snprintf(w->opname, sizeof w->opname, "starting");
    progress(w);
    w->active = 1;
  }
  pthread_t wd;
  pthread_create(&wd, NULL, watchdog_main, NULL);
  for (int i = 0; i < nthreads_all; i++) {
    if (pthread_create(&workers[i].tid, NULL, i < opt_threads ? worker_main : racy_resetter_main, &workers[i]) != 0) {
      fprintf(stderr, "fuzz: pthread_create failed\n");
      return 2;
    }
  }
  double next = t0 + 10;
  while (now_s() - t0 < opt_seconds) {
    sleep_ms(50);
    if (!opt_quiet && now_s() >= next) {
      unsigned long long calls = 0;
      for (int i = 0; i < nthreads_all; i++) calls += __atomic_load_n(&workers[i].calls, __ATOMIC_RELAXED);
      printf("  %5.0f s: %llu calls, %llu failures\n", now_s() - t0, calls, __atomic_load_n(&failures, __ATOMIC_RELAXED));
      fflush(stdout);
      next += 10;
    }
  }
  __atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < nthreads_all; i++) pthread_join(workers[i].tid, NULL);

  /* Final: every device synchronized, reset, and all its memory free again. The main thread
   * is watched as worker 0's slot. */
  worker *m = &workers[0];
  m->active = 1;
  set_op(m, "final");
  progress(m);
  for (int d = 0; d < ndev; d++) {
    m->dev = -1;
    use_device(m, d);
    birenError_t e = API(m, birenDeviceSynchronize());
    JUDGE(m, F_DeviceSynchronize, e, S_, -1, "final");
    e = API(m, birenDeviceReset());
    JUDGE(m, F_DeviceReset, e, S_, -1, "final");
    size_t fr = 0, tot = 0;
    e = API(m, birenMemGetInfo(&fr, &tot));
    if (!JUDGE(m, F_MemGetInfo, e, S_, -1, NULL) && (fr != free0[d] || tot != total0[d]))
      fail(m, __LINE__, "device %d: %zu of %zu bytes free at the end, %zu at the start", d, fr, tot, free0[d]);
  }
  m->active = 0;
  __atomic_store_n(&all_done, 1, __ATOMIC_RELEASE);
  pthread_join(wd, NULL);

  unsigned long long calls = 0, ops = 0, checks = 0, bytes = 0, tol = 0, nresets = 0;
  for (int i = 0; i < nthreads_all; i++) {
    calls += workers[i].calls;
    ops += workers[i].ops;
    checks += workers[i].checks_data;
    bytes += workers[i].bytes_checked;
    tol += workers[i].tolerated;
  }
  for (int d = 0; d < ndev; d++) nresets += resets[d];
  printf("fuzz: %.1f s, %llu operations, %llu calls, %llu resets, %llu data checks (%llu bytes), %llu codes explained by a reset\n",
         now_s() - t0, ops, calls, nresets, checks, bytes, tol);
  printf("fuzz: %llu host functions and stream callbacks called the runtime %llu times\n", busy_jobs, busy_calls);
  if (!opt_quiet) {
    printf("fuzz: operations (count, seconds of all threads):");
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
      unsigned long long c = 0;
      double t = 0;
      for (int j = 0; j < nthreads_all; j++) c += workers[j].op_count[i], t += workers[j].op_time[i];
      printf(" %s %llu/%.1f", OPS[i].name, c, t);
    }
    printf("\n");
  }
  for (int k = 0; k < K_COUNT; k++)
    if (skip[k]) printf("fuzz: skipped %-12s (%s)\n", known_names[k], known_bugs[k]);
  for (int k = 0; k < K_COUNT; k++)
    if (observed[k]) printf("fuzz: known bug %s observed %llu times by harmless probes (not counted)\n", known_names[k], observed[k]);
  printf("fuzz: %llu failed, %llu calls, seed %llu\n", failures, calls, opt_seed);
  return failures == 0 ? 0 : 1;
}
