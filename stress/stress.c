/* Stress test of the BIREN runtime: many host threads at once.
 *
 *   stress [--seconds N] [--threads N] [--churners N] [--reset] [--reset-interval-ms N]
 *          [--watchdog S] [--seed N] [--max-elems N] [--quiet]
 *
 * Workers (--threads, default 8) each run rounds until the time is up. A round creates its own
 * streams (random flags and priorities) and events (some without timing), allocates device
 * memory and host buffers (pinned or plain), and runs a pipeline whose every step is checked:
 *   H2D copy -> record -> cross-stream wait -> transform kernel -> record -> wait back ->
 *   in-place kernel -> host function -> D2H copy -> synchronize (stream, event, polling query
 *   or device) -> every element compared; a memset checked byte by byte; a wait on a
 *   never-recorded event (the BIREN extension) resolved by a later record; counting kernels
 *   on three streams (lost updates); elapsed time between two records; a stream destroyed with
 *   work pending whose work must still complete; default-stream kernels and synchronous copies;
 *   and every destroyed handle must then answer BIREN_ERROR_INVALID_HANDLE.
 * All workers also launch counting kernels into one shared stream (checked at the end).
 * Churners (--churners, default 2) create and destroy streams, events and allocations in
 * bursts, and check that destroyed handles, double frees and forged handles are refused.
 *
 * --reset: one more thread calls birenDeviceReset at random moments (every 1 to
 * --reset-interval-ms ms, default 25) while the
 * others run. What is checked then:
 *   - nothing crashes and nothing hangs (the watchdog below);
 *   - a round during which no reset started ("clean round") is checked exactly as without
 *     --reset: every call must succeed and every value must be right;
 *   - in a round a reset overlapped, a call may fail only with BIREN_ERROR_INVALID_HANDLE (its
 *     streams and events were destroyed), BIREN_ERROR_INVALID_DEVICE_POINTER (its memory was
 *     freed) or BIREN_ERROR_OUT_OF_BOUNDS (the freed address now lies in another thread's newer,
 *     smaller allocation); any other code is a failure, and so is either code in a clean round. Data of such
 *     rounds is not compared (the reset dropped work), but work that a reset should have dropped
 *     and that still runs later shows up as wrong data in the worker's next clean round;
 *   - a round creates its streams before it allocates device memory, so that whenever its
 *     streams are alive its device pointers are too (a reset kills both); device memory is only
 *     written through the round's own streams, never through the default stream (which survives
 *     a reset), and birenFree of a round's memory happens under a lock that excludes resets and
 *     only if no reset freed it already: after a reset the same address may have been handed to
 *     another thread, and freeing or writing it would hit that thread's buffer. That hazard is
 *     inherent in the API, not a runtime bug, so the test avoids it;
 *   - after all threads stop: one last reset, then free memory == total memory.
 * No shared stream is used with --reset (a reset destroys it).
 *
 * A watchdog thread aborts the process with a message naming every thread's current call if any
 * thread makes no progress for --watchdog seconds (default 30): a hang is a failure.
 * At the end, counts of operations are printed; the exit status is non-zero on any lost update,
 * wrong value or unexpected error code.
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- options ---------------------------------------------------------------------------- */

static double opt_seconds = 10;
static int opt_threads = 8;
static int opt_churners = 2;
static int opt_reset = 0;
static double opt_watchdog = 30;
static unsigned opt_seed = 12345;
static int opt_max_elems = 16384;
static int opt_quiet = 0;
static int opt_reset_ms = 25;

/* ---- time, randomness, counters --------------------------------------------------------- */

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

enum counter {
  C_ROUNDS, C_CLEAN_ROUNDS, C_TAINTED_ROUNDS, C_KERNELS, C_COPIES, C_MEMSETS, C_RECORDS, C_WAITS,
  C_FUTURE_WAITS, C_HOST_FUNCS, C_SYNCS, C_QUERIES, C_STREAMS, C_EVENTS, C_ALLOCS, C_CHECKED_VALUES,
  C_DEAD_HANDLE_CHECKS, C_DESTROY_PENDING, C_SHARED_LAUNCHES, C_TOLERATED, C_RESETS, C_COUNT
};
static const char *counter_names[C_COUNT] = {
  "rounds", "clean rounds", "rounds overlapped by a reset", "kernel launches", "copies", "memsets",
  "event records", "stream waits", "waits on never-recorded events", "host functions",
  "synchronizations", "queries", "streams created", "events created", "device allocations",
  "values checked", "destroyed/forged handle checks", "streams destroyed with work pending",
  "launches into the shared stream", "tolerated errors (reset)", "device resets"};
static unsigned long long counters[C_COUNT];
static unsigned long long failures;

static void count(enum counter c, unsigned long long n) { __atomic_fetch_add(&counters[c], n, __ATOMIC_RELAXED); }

/* ---- per-thread state for the watchdog -------------------------------------------------- */

#define MAX_THREADS 64
typedef struct thread_state {
  char name[24];
  const char *op; /* the call in progress (a string literal); read and written with __atomic */
  int line;
  double last_progress; /* read and written with __atomic */
  int active;
} thread_state;
static thread_state states[MAX_THREADS + 4];
static int n_states;
static volatile int stop_flag;
static volatile int all_done;

static void progress(thread_state *t) {
  double n = now_s();
  __atomic_store(&t->last_progress, &n, __ATOMIC_RELAXED);
}

static void *watchdog_main(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&all_done, __ATOMIC_ACQUIRE)) {
    sleep_ms(200);
    double now = now_s();
    for (int i = 0; i < n_states; i++) {
      thread_state *t = &states[i];
      if (!__atomic_load_n(&t->active, __ATOMIC_ACQUIRE)) continue;
      double last;
      __atomic_load(&t->last_progress, &last, __ATOMIC_RELAXED);
      if (now - last > opt_watchdog) {
        fprintf(stderr, "stress: WATCHDOG: %s made no progress for %.0f s (hang); threads:\n", t->name, now - last);
        for (int j = 0; j < n_states; j++) {
          double l;
          __atomic_load(&states[j].last_progress, &l, __ATOMIC_RELAXED);
          const char *op = __atomic_load_n(&states[j].op, __ATOMIC_RELAXED);
          fprintf(stderr, "  %-12s %s in %s (stress.c:%d), last progress %.1f s ago\n", states[j].name,
                  __atomic_load_n(&states[j].active, __ATOMIC_ACQUIRE) ? "active" : "done", op ? op : "-",
                  __atomic_load_n(&states[j].line, __ATOMIC_RELAXED), now - l);
        }
        fflush(stderr);
        abort();
      }
    }
  }
  return NULL;
}

/* ---- resets -------------------------------------------------------------------------------- */

/* resets_started is incremented before birenDeviceReset, resets_done after it returns. */
static unsigned long resets_started, resets_done;
/* Held (read) around birenFree in --reset mode, (write) around birenDeviceReset. */
static pthread_rwlock_t free_lock = PTHREAD_RWLOCK_INITIALIZER;

static unsigned long load_ul(const unsigned long *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }

/* ---- kernels ------------------------------------------------------------------------------ */

/* Late work: a block of a kernel (or a host function) of a stream that a reset destroyed, which
 * starts after birenDeviceReset returned. The reset must have dropped it ("drops every command
 * not yet started, lets running blocks finish"), so it is a runtime bug; such work also writes
 * memory that the reset freed. Kernels and host functions of clean rounds carry the round's
 * resets_started value read just after their streams were created (`gen`), and count
 * themselves here if resets_done has passed it when they run; NO_GEN turns the check off
 * (default stream, shared stream). */
#define NO_GEN (~0ul)
static unsigned long late_work;
static void check_not_late(unsigned long gen) {
  if (gen != NO_GEN && __atomic_load_n(&resets_done, __ATOMIC_SEQ_CST) > gen) __atomic_fetch_add(&late_work, 1, __ATOMIC_SEQ_CST);
}

static unsigned gtid(void) {
  dim3 b = birenBlockIdx(), t = birenThreadIdx(), d = birenBlockDim();
  return b.x * d.x + t.x;
}

/* out[i] = in[i] * mul + add for i < n. */
static void k_transform(void **args) {
  unsigned *out = *(unsigned **)args[0];
  const unsigned *in = *(const unsigned **)args[1];
  unsigned n = *(unsigned *)args[2], mul = *(unsigned *)args[3], add = *(unsigned *)args[4];
  unsigned i = gtid();
  check_not_late(*(unsigned long *)args[5]);
  if (i < n) out[i] = in[i] * mul + add;
}

/* p[i] += add for i < n. */
static void k_add(void **args) {
  unsigned *p = *(unsigned **)args[0];
  unsigned n = *(unsigned *)args[1], add = *(unsigned *)args[2];
  unsigned i = gtid();
  check_not_late(*(unsigned long *)args[3]);
  if (i < n) p[i] += add;
}

/* Every thread adds 1 to *counter (atomically: other streams add too). */
static void k_count(void **args) {
  unsigned long long *c = *(unsigned long long **)args[0];
  check_not_late(*(unsigned long *)args[1]);
  __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* p[i] = pattern(seed, i). */
static unsigned pattern(unsigned seed, unsigned i) { return (seed * 2654435761u) ^ (i * 40503u) ^ (i >> 3); }
static void k_pattern(void **args) {
  unsigned *p = *(unsigned **)args[0];
  unsigned n = *(unsigned *)args[1], seed = *(unsigned *)args[2];
  unsigned i = gtid();
  check_not_late(*(unsigned long *)args[3]);
  if (i < n) p[i] = pattern(seed, i);
}

typedef struct host_arg {
  unsigned long long *counter;
  unsigned long gen;
} host_arg;
static void host_inc(void *p) {
  host_arg *a = p;
  check_not_late(a->gen);
  __atomic_fetch_add(a->counter, 1, __ATOMIC_SEQ_CST);
}

/* ---- calling with checks -------------------------------------------------------------------- */

typedef struct worker {
  thread_state *ts;
  uint64_t rng;
  int id;
  int clean_start;           /* no reset was in progress when the round began */
  unsigned long round_resets; /* resets_started when the round began */
  unsigned long long shared_launched; /* threads launched into the shared stream */
  /* buffers that live for the whole run (pinned host memory survives resets) */
  unsigned *h_in, *h_out, *h_aux;
  unsigned long long *h_counter; /* pinned */
  int h_in_pinned, h_out_pinned;
  host_arg host_args[64]; /* a ring: a late host function still reads its own round's gen */
} worker;

/* A round may be checked only if no reset started since it began (read after the check). */
static int round_is_clean(const worker *w) {
  return !opt_reset || (w->clean_start && load_ul(&resets_started) == w->round_resets);
}

static void fail(worker *w, int line, const char *what) {
  __atomic_fetch_add(&failures, 1, __ATOMIC_SEQ_CST);
  fprintf(stderr, "stress: FAIL %s (stress.c:%d): %s\n", w->ts->name, line, what);
}

/* Judges a call's result. Returns 0 on success; 1 if the round must stop (a tolerated error in
 * --reset mode, or a failure, already counted). */
static int judge(worker *w, birenError_t e, const char *call, int line) {
  progress(w->ts);
  if (e == BIREN_SUCCESS) return 0;
  char msg[512];
  if (opt_reset && (e == BIREN_ERROR_INVALID_HANDLE || e == BIREN_ERROR_INVALID_DEVICE_POINTER ||
                    e == BIREN_ERROR_OUT_OF_BOUNDS)) {
    if (load_ul(&resets_started) != w->round_resets || !w->clean_start) {
      count(C_TOLERATED, 1);
      return 1;
    }
    snprintf(msg, sizeof msg, "%s returned %s in a round no reset overlapped", call, birenGetErrorName(e));
  } else {
    snprintf(msg, sizeof msg, "%s returned %s", call, birenGetErrorName(e));
  }
  fail(w, line, msg);
  return 1;
}

/* Notes the call in progress for the watchdog. */
static void note(thread_state *t, const char *op, int line) {
  __atomic_store_n(&t->op, op, __ATOMIC_RELAXED);
  __atomic_store_n(&t->line, line, __ATOMIC_RELAXED);
}

#define CALL(w, call) (note((w)->ts, #call, __LINE__), judge((w), (call), #call, __LINE__))
/* In a round function: stop the round (goto out) if the call does not succeed. */
#define TRY(w, call)                                                                            \
  do {                                                                                          \
    if (CALL(w, call)) goto out;                                                                \
  } while (0)
/* A call whose result must be exactly `code` (e.g. INVALID_HANDLE for a destroyed handle). */
#define EXPECT_CODE(w, call, code)                                                              \
  do {                                                                                          \
    note((w)->ts, #call, __LINE__);                                                             \
    birenError_t e_ = (call);                                                                   \
    progress((w)->ts);                                                                          \
    count(C_DEAD_HANDLE_CHECKS, 1);                                                             \
    if (e_ != (code)) {                                                                         \
      char m_[256];                                                                             \
      snprintf(m_, sizeof m_, "%s returned %s, expected %s", #call, birenGetErrorName(e_),      \
               birenGetErrorName(code));                                                        \
      fail((w), __LINE__, m_);                                                                  \
    }                                                                                           \
  } while (0)

/* Data comparison: a mismatch is a failure only in a clean round. Returns 0 if equal. */
static int check_values(worker *w, int line, const char *what, const unsigned *got, unsigned n, unsigned (*want)(const worker *, unsigned, const void *), const void *ctx) {
  for (unsigned i = 0; i < n; i++) {
    unsigned x = want(w, i, ctx);
    if (got[i] != x) {
      if (!round_is_clean(w)) return 1;
      char m[256];
      snprintf(m, sizeof m, "%s: element %u of %u is %#x, expected %#x (lost or misordered work)", what, i, n, got[i], x);
      fail(w, line, m);
      return 1;
    }
  }
  count(C_CHECKED_VALUES, n);
  return 0;
}

static void expect_true(worker *w, int line, int cond, const char *what) {
  if (cond) return;
  if (!round_is_clean(w)) return;
  fail(w, line, what);
}

/* ---- one worker round ------------------------------------------------------------------- */

typedef struct round_ctx {
  unsigned seed, mul, add1, add2;
} round_ctx;

static unsigned want_pipeline(const worker *w, unsigned i, const void *c) {
  const round_ctx *r = c;
  (void)w;
  return pattern(r->seed, i) * r->mul + r->add1 + r->add2;
}
static unsigned want_pipeline_plus5(const worker *w, unsigned i, const void *c) {
  return want_pipeline(w, i, c) + 5;
}
static unsigned want_pattern(const worker *w, unsigned i, const void *c) {
  (void)w;
  return pattern(*(const unsigned *)c, i);
}
static unsigned want_word(const worker *w, unsigned i, const void *c) {
  (void)w;
  (void)i;
  return *(const unsigned *)c;
}

static birenStream_t shared_stream;
static unsigned long long *shared_counter; /* pinned */

static dim3 grid_for(unsigned n, unsigned block) { return birenDim3((n + block - 1) / block, 1, 1); }

/* Frees a round's device allocation: in --reset mode only if no reset freed it already (a reset
 * since the round began), under the lock that keeps resets out meanwhile. */
static void free_device(worker *w, void *p) {
  if (p == NULL) return;
  if (!opt_reset) {
    if (CALL(w, birenFree(p))) return;
    return;
  }
  pthread_rwlock_rdlock(&free_lock);
  if (w->clean_start && load_ul(&resets_started) == w->round_resets) {
    (void)CALL(w, birenFree(p));
  }
  pthread_rwlock_unlock(&free_lock);
}

/* Destroys a handle at the end of a round; then the handle must be dead. */
static void destroy_stream(worker *w, birenStream_t s) {
  if (s == NULL) return;
  (void)CALL(w, birenStreamDestroy(s));
  EXPECT_CODE(w, birenStreamQuery(s), BIREN_ERROR_INVALID_HANDLE);
}
static void destroy_event(worker *w, birenEvent_t e) {
  if (e == NULL) return;
  (void)CALL(w, birenEventDestroy(e));
  EXPECT_CODE(w, birenEventQuery(e), BIREN_ERROR_INVALID_HANDLE);
}

static void worker_round(worker *w, unsigned round) {
  birenStream_t s[3] = {NULL, NULL, NULL};
  birenEvent_t ev[5] = {NULL, NULL, NULL, NULL, NULL};
  unsigned *d_a = NULL, *d_b = NULL, *d_c = NULL;
  int used_default = 0;
  unsigned n = 1 + rnd(&w->rng, (unsigned)opt_max_elems);
  size_t bytes = (size_t)n * sizeof(unsigned);
  round_ctx rc;
  rc.seed = (unsigned)(w->id * 100003u + round);
  rc.mul = 3 + rnd(&w->rng, 5);
  rc.add1 = rnd(&w->rng, 1000);
  rc.add2 = 1 + rnd(&w->rng, 7);
  unsigned block = 32u << rnd(&w->rng, 4); /* 32..256 */
  dim3 grid = grid_for(n, block), blk = birenDim3(block, 1, 1);
  int timing = rnd(&w->rng, 2);

  /* The round's reset bookkeeping: started first, then done (a reset in progress has
   * started != done). */
  w->round_resets = load_ul(&resets_started);
  w->clean_start = load_ul(&resets_done) == w->round_resets;
  count(C_ROUNDS, 1);
  unsigned long gen = NO_GEN, no_gen = NO_GEN;

  /* Streams first, then memory (see the header comment). */
  for (int i = 0; i < 3; i++) {
    unsigned flags = rnd(&w->rng, 2) ? birenStreamNonBlocking : birenStreamDefault;
    if (i == 2) flags = birenStreamNonBlocking; /* s[2] holds the wait on a never-recorded event */
    int prio = -(int)rnd(&w->rng, 6);
    TRY(w, birenStreamCreateWithPriority(&s[i], flags, prio));
    count(C_STREAMS, 1);
  }
  /* Every reset numbered above `gen` starts after these streams exist, so it destroys them:
   * once one has returned (resets_done > gen), no work of theirs may start. */
  gen = load_ul(&resets_started);
  for (int i = 0; i < 5; i++) {
    unsigned flags = (i == 0 || i == 2) && timing ? birenEventDefault : birenEventDisableTiming;
    if (i == 1 && rnd(&w->rng, 2)) flags |= birenEventBlockingSync;
    TRY(w, birenEventCreateWithFlags(&ev[i], flags));
    count(C_EVENTS, 1);
  }
  TRY(w, birenMalloc((void **)&d_a, bytes));
  TRY(w, birenMalloc((void **)&d_b, bytes));
  TRY(w, birenMalloc((void **)&d_c, bytes));
  count(C_ALLOCS, 3);

  for (unsigned i = 0; i < n; i++) w->h_in[i] = pattern(rc.seed, i);
  memset(w->h_out, 0, bytes);
  memset(w->h_aux, 0, bytes);
  *w->h_counter = 0;

  /* H2D, record, cross-stream wait, transform, record, wait back, in-place add. */
  TRY(w, birenMemcpyAsync(d_a, w->h_in, bytes, rnd(&w->rng, 2) ? birenMemcpyHostToDevice : birenMemcpyDefault, s[0]));
  count(C_COPIES, 1);
  TRY(w, birenEventRecord(ev[0], s[0]));
  count(C_RECORDS, 1);
  TRY(w, birenStreamWaitEvent(s[1], ev[0]));
  count(C_WAITS, 1);
  TRY(w, BIREN_LAUNCH(k_transform, grid, blk, 0, s[1], d_b, d_a, n, rc.mul, rc.add1, gen));
  count(C_KERNELS, 1);
  TRY(w, birenEventRecord(ev[1], s[1]));
  count(C_RECORDS, 1);
  /* d_a is free again once the transform read it: fill it in s[1], checked later. */
  TRY(w, birenMemsetAsync(d_a, 0x5A, bytes, s[1]));
  count(C_MEMSETS, 1);
  TRY(w, birenStreamWaitEvent(s[0], ev[1]));
  count(C_WAITS, 1);
  TRY(w, BIREN_LAUNCH(k_add, grid, blk, 0, s[0], d_b, n, rc.add2, gen));
  count(C_KERNELS, 1);
  {
    host_arg *ha = &w->host_args[round % 64];
    ha->counter = w->h_counter;
    ha->gen = gen;
    TRY(w, birenLaunchHostFunc(s[0], host_inc, ha));
  }
  count(C_HOST_FUNCS, 1);

  /* s[2] waits for the next record of ev[3], which has never been recorded (BIREN extension);
   * the record comes later, after another in-place add in s[0]. */
  TRY(w, birenStreamWaitEvent(s[2], ev[3]));
  count(C_FUTURE_WAITS, 1);
  TRY(w, birenMemcpyAsync(w->h_aux, d_b, bytes, birenMemcpyDeviceToHost, s[2]));
  count(C_COPIES, 1);
  TRY(w, birenMemcpyAsync(w->h_out, d_b, bytes, birenMemcpyDeviceToHost, s[0]));
  count(C_COPIES, 1);
  TRY(w, birenEventRecord(ev[2], s[0]));
  count(C_RECORDS, 1);
  {
    unsigned five = 5;
    TRY(w, BIREN_LAUNCH(k_add, grid, blk, 0, s[0], d_b, n, five, gen));
    count(C_KERNELS, 1);
  }
  TRY(w, birenEventRecord(ev[3], s[0]));
  count(C_RECORDS, 1);

  /* Wait for h_out in one of several ways. */
  switch (rnd(&w->rng, 8)) {
  case 0:
  case 1:
  case 2:
    TRY(w, birenStreamSynchronize(s[0]));
    break;
  case 3:
  case 4:
  case 5:
    TRY(w, birenEventSynchronize(ev[2]));
    break;
  case 6: {
    birenError_t e;
    double t0 = now_s();
    while ((e = birenEventQuery(ev[2])) == BIREN_ERROR_NOT_READY) {
      count(C_QUERIES, 1);
      progress(w->ts);
      if (now_s() - t0 > 1e-3) sleep_ms(0.05);
    }
    TRY(w, e);
    break;
  }
  default:
    TRY(w, birenDeviceSynchronize());
    break;
  }
  count(C_SYNCS, 1);
  if (check_values(w, __LINE__, "pipeline result (copy, wait, transform, wait, add, copy)", w->h_out, n, want_pipeline, &rc)) goto out;
  TRY(w, birenStreamSynchronize(s[0]));
  count(C_SYNCS, 1);
  expect_true(w, __LINE__, __atomic_load_n(w->h_counter, __ATOMIC_SEQ_CST) == 1, "host function ran once, in stream order");

  /* Elapsed time between two timed records of the same stream. */
  if (timing) {
    float ms = -1;
    TRY(w, birenEventElapsedTime(&ms, ev[0], ev[2]));
    expect_true(w, __LINE__, ms >= 0.0f && ms < 600000.0f, "elapsed time between records is >= 0");
  }

  /* The future wait: s[2]'s copy saw d_b after the +5. */
  TRY(w, birenStreamSynchronize(s[2]));
  count(C_SYNCS, 1);
  if (check_values(w, __LINE__, "copy after a wait on a never-recorded event", w->h_aux, n, want_pipeline_plus5, &rc)) goto out;

  /* The memset, read back by a synchronous copy (default stream) after its stream synced. */
  TRY(w, birenStreamSynchronize(s[1]));
  count(C_SYNCS, 1);
  TRY(w, birenMemcpy(w->h_aux, d_a, bytes, birenMemcpyDeviceToHost));
  count(C_COPIES, 1);
  {
    unsigned word = 0x5A5A5A5Au;
    if (check_values(w, __LINE__, "memset read back", w->h_aux, n, want_word, &word)) goto out;
  }

  /* Lost updates: counting kernels on three streams into one pinned counter. */
  {
    unsigned long long expect = 0;
    *w->h_counter = 0;
    int launches = 1 + (int)rnd(&w->rng, 6);
    for (int i = 0; i < launches; i++) {
      unsigned gb = 1 + rnd(&w->rng, 8), tb = 1 + rnd(&w->rng, 128);
      unsigned long long *c = w->h_counter;
      TRY(w, BIREN_LAUNCH(k_count, birenDim3(gb, 1, 1), birenDim3(tb, 1, 1), 0, s[i % 3], c, gen));
      count(C_KERNELS, 1);
      expect += (unsigned long long)gb * tb;
    }
    for (int i = 0; i < 3; i++) {
      TRY(w, birenStreamSynchronize(s[i]));
      count(C_SYNCS, 1);
    }
    unsigned long long got = __atomic_load_n(w->h_counter, __ATOMIC_SEQ_CST);
    if (got != expect) {
      char m[128];
      snprintf(m, sizeof m, "counting kernels on 3 streams: %llu increments, expected %llu (lost updates)", got, expect);
      expect_true(w, __LINE__, 0, m);
    }
    count(C_CHECKED_VALUES, 1);
  }

  /* Kernels and synchronous copies on the default stream, into host memory (in --reset mode
   * the default stream never writes device memory). */
  if (rnd(&w->rng, 4) == 0) {
    used_default = 1;
    unsigned seed2 = rc.seed ^ 0x9e3779b9u;
    unsigned *dst = w->h_aux;
    TRY(w, BIREN_LAUNCH(k_pattern, grid, blk, 0, NULL, dst, n, seed2, no_gen));
    count(C_KERNELS, 1);
    TRY(w, birenStreamSynchronize(NULL));
    count(C_SYNCS, 1);
    if (check_values(w, __LINE__, "default-stream kernel", w->h_aux, n, want_pattern, &seed2)) goto out;
    if (!opt_reset) {
      TRY(w, birenMemcpy(d_c, w->h_aux, bytes, birenMemcpyHostToDevice));
      memset(w->h_out, 0, bytes);
      TRY(w, birenMemcpy(w->h_out, d_c, bytes, birenMemcpyDeviceToHost));
      count(C_COPIES, 2);
      if (check_values(w, __LINE__, "synchronous copies there and back", w->h_out, n, want_pattern, &seed2)) goto out;
    }
  }

  /* A stream destroyed with work pending: the work still completes (observed by an event
   * recorded before the destroy, and by the data). */
  {
    unsigned seed3 = rc.seed + 77;
    memset(w->h_out, 0, bytes);
    TRY(w, BIREN_LAUNCH(k_pattern, grid, blk, 0, s[1], d_c, n, seed3, gen));
    TRY(w, birenMemcpyAsync(w->h_out, d_c, bytes, birenMemcpyDeviceToHost, s[1]));
    TRY(w, birenEventRecord(ev[4], s[1]));
    count(C_KERNELS, 1);
    count(C_COPIES, 1);
    count(C_RECORDS, 1);
    birenStream_t dying = s[1];
    s[1] = NULL;
    TRY(w, birenStreamDestroy(dying));
    count(C_DESTROY_PENDING, 1);
    EXPECT_CODE(w, birenLaunchKernel(k_add, grid, blk, NULL, 0, dying), BIREN_ERROR_INVALID_HANDLE);
    EXPECT_CODE(w, birenStreamSynchronize(dying), BIREN_ERROR_INVALID_HANDLE);
    EXPECT_CODE(w, birenEventRecord(ev[4], dying), BIREN_ERROR_INVALID_HANDLE);
    TRY(w, birenEventSynchronize(ev[4]));
    count(C_SYNCS, 1);
    if (check_values(w, __LINE__, "work of a stream destroyed while pending", w->h_out, n, want_pattern, &seed3)) goto out;
  }

  /* The shared stream: counting launches from every worker. */
  if (shared_stream != NULL && rnd(&w->rng, 3) == 0) {
    unsigned tb = 1 + rnd(&w->rng, 64);
    unsigned long long *c = shared_counter;
    TRY(w, BIREN_LAUNCH(k_count, birenDim3(2, 1, 1), birenDim3(tb, 1, 1), 0, shared_stream, c, no_gen));
    w->shared_launched += 2ull * tb;
    count(C_SHARED_LAUNCHES, 1);
  }

  /* Pointer attributes of the round's memory. */
  {
    birenPointerAttributes a;
    TRY(w, birenPointerGetAttributes(&a, (char *)d_b + 4 * (n / 2)));
    expect_true(w, __LINE__, a.type == birenMemoryTypeDevice && a.basePointer == (void *)d_b && a.size == bytes,
                "pointer attributes of a device allocation");
  }

out:
  if (round_is_clean(w)) count(C_CLEAN_ROUNDS, 1);
  else count(C_TAINTED_ROUNDS, 1);
  if (!round_is_clean(w) || used_default) {
    /* Leave no work of this round behind that could still write the host buffers. */
    for (int i = 0; i < 3; i++)
      if (s[i]) (void)birenStreamSynchronize(s[i]);
    (void)birenStreamSynchronize(NULL);
  }
  if (opt_reset && !round_is_clean(w)) {
    /* Handles may be dead already; codes are not judged here. */
    for (int i = 0; i < 3; i++)
      if (s[i]) (void)birenStreamDestroy(s[i]);
    for (int i = 0; i < 5; i++)
      if (ev[i]) (void)birenEventDestroy(ev[i]);
    free_device(w, d_a);
    free_device(w, d_b);
    free_device(w, d_c);
    (void)birenGetLastError();
    progress(w->ts);
    return;
  }
  free_device(w, d_a);
  free_device(w, d_b);
  free_device(w, d_c);
  for (int i = 0; i < 3; i++) destroy_stream(w, s[i]);
  for (int i = 0; i < 5; i++) destroy_event(w, ev[i]);
  (void)birenGetLastError();
}

static void *worker_main(void *arg) {
  worker *w = arg;
  size_t max_bytes = (size_t)opt_max_elems * sizeof(unsigned);
  __atomic_store_n(&w->ts->active, 1, __ATOMIC_RELEASE);
  progress(w->ts);
  /* Host buffers for the whole run: pinned (birenMallocHost, which a reset does not free) or
   * plain malloc, at random. h_aux and the counter are always pinned. */
  w->h_in_pinned = opt_reset ? 1 : (int)rnd(&w->rng, 2);
  w->h_out_pinned = opt_reset ? 1 : (int)rnd(&w->rng, 2);
  if (w->h_in_pinned) {
    if (CALL(w, birenMallocHost((void **)&w->h_in, max_bytes))) return NULL;
  } else if ((w->h_in = malloc(max_bytes)) == NULL) return NULL;
  if (w->h_out_pinned) {
    if (CALL(w, birenMallocHost((void **)&w->h_out, max_bytes))) return NULL;
  } else if ((w->h_out = malloc(max_bytes)) == NULL) return NULL;
  if (CALL(w, birenMallocHost((void **)&w->h_aux, max_bytes))) return NULL;
  if (CALL(w, birenMallocHost((void **)&w->h_counter, sizeof *w->h_counter))) return NULL;

  unsigned round = 0;
  while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) worker_round(w, round++);

  /* Nothing of ours may still run when the buffers go. */
  note(w->ts, "final birenDeviceSynchronize", __LINE__);
  birenError_t e = birenDeviceSynchronize();
  if (e != BIREN_SUCCESS) {
    char m[128];
    snprintf(m, sizeof m, "final birenDeviceSynchronize returned %s", birenGetErrorName(e));
    fail(w, __LINE__, m);
  }
  if (w->h_in_pinned) (void)CALL(w, birenFreeHost(w->h_in));
  else free(w->h_in);
  if (w->h_out_pinned) (void)CALL(w, birenFreeHost(w->h_out));
  else free(w->h_out);
  (void)CALL(w, birenFreeHost(w->h_aux));
  (void)CALL(w, birenFreeHost(w->h_counter));
  note(w->ts, "finished", __LINE__);
  __atomic_store_n(&w->ts->active, 0, __ATOMIC_RELEASE);
  return NULL;
}

/* ---- handle churn ------------------------------------------------------------------------- */

static void *churner_main(void *arg) {
  worker *w = arg;
  __atomic_store_n(&w->ts->active, 1, __ATOMIC_RELEASE);
  progress(w->ts);
  enum { MAXK = 48 };
  birenStream_t s[MAXK];
  birenEvent_t e[MAXK];
  void *p[MAXK];
  while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
    int k = 1 + (int)rnd(&w->rng, MAXK);
    int ns = 0, ne = 0, np = 0;
    w->round_resets = load_ul(&resets_started);
    w->clean_start = load_ul(&resets_done) == w->round_resets;
    for (int i = 0; i < k; i++) {
      if (CALL(w, birenStreamCreateWithFlags(&s[ns], rnd(&w->rng, 2)))) break;
      ns++;
      count(C_STREAMS, 1);
      if (CALL(w, birenEventCreateWithFlags(&e[ne], rnd(&w->rng, 3)))) break;
      ne++;
      count(C_EVENTS, 1);
    }
    for (int i = 0; i < k && !opt_reset; i++) {
      if (CALL(w, birenMalloc(&p[np], 1 + rnd(&w->rng, 4096)))) break;
      np++;
      count(C_ALLOCS, 1);
    }
    /* Use some: records, queries, waits on one's own events. */
    for (int i = 0; i < ns && i < ne; i++) {
      if (rnd(&w->rng, 2)) {
        if (CALL(w, birenEventRecord(e[i], s[i]))) break;
        count(C_RECORDS, 1);
        if (i > 0) {
          if (CALL(w, birenStreamWaitEvent(s[i - 1], e[i]))) break;
          count(C_WAITS, 1);
        }
      }
      birenError_t q = birenStreamQuery(s[i]);
      progress(w->ts);
      count(C_QUERIES, 1);
      if (q != BIREN_SUCCESS && q != BIREN_ERROR_NOT_READY && judge(w, q, "birenStreamQuery", __LINE__)) break;
    }
    /* Destroy in random order (streams possibly with records pending). */
    for (int i = ns - 1; i >= 0; i--) {
      int j = (int)rnd(&w->rng, (unsigned)(i + 1));
      birenStream_t t = s[j];
      s[j] = s[i];
      s[i] = t;
      (void)CALL(w, birenStreamDestroy(s[i]));
    }
    for (int i = 0; i < ne; i++) (void)CALL(w, birenEventDestroy(e[i]));
    for (int i = 0; i < np; i++) (void)CALL(w, birenFree(p[i]));
    /* Every destroyed handle is dead, whatever happened to its slot meanwhile. */
    for (int i = 0; i < ns; i++) {
      EXPECT_CODE(w, birenStreamQuery(s[i]), BIREN_ERROR_INVALID_HANDLE);
      EXPECT_CODE(w, birenStreamDestroy(s[i]), BIREN_ERROR_INVALID_HANDLE);
      EXPECT_CODE(w, birenLaunchKernel(k_add, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, s[i]), BIREN_ERROR_INVALID_HANDLE);
      EXPECT_CODE(w, birenStreamWaitEvent(s[i], NULL), BIREN_ERROR_INVALID_HANDLE);
    }
    for (int i = 0; i < ne; i++) {
      EXPECT_CODE(w, birenEventQuery(e[i]), BIREN_ERROR_INVALID_HANDLE);
      EXPECT_CODE(w, birenEventRecord(e[i], NULL), BIREN_ERROR_INVALID_HANDLE);
      EXPECT_CODE(w, birenEventSynchronize(e[i]), BIREN_ERROR_INVALID_HANDLE);
      EXPECT_CODE(w, birenEventDestroy(e[i]), BIREN_ERROR_INVALID_HANDLE);
      EXPECT_CODE(w, birenStreamWaitEvent(NULL, e[i]), BIREN_ERROR_INVALID_HANDLE);
    }
    /* Forged handles. */
    {
      uintptr_t forged = (uintptr_t)rng_next(&w->rng) | 1u;
      EXPECT_CODE(w, birenStreamQuery((birenStream_t)forged), BIREN_ERROR_INVALID_HANDLE);
      EXPECT_CODE(w, birenEventQuery((birenEvent_t)forged), BIREN_ERROR_INVALID_HANDLE);
    }
    (void)birenGetLastError();
    progress(w->ts);
  }
  note(w->ts, "finished", __LINE__);
  __atomic_store_n(&w->ts->active, 0, __ATOMIC_RELEASE);
  return NULL;
}

/* ---- resets ------------------------------------------------------------------------------ */

static void *resetter_main(void *arg) {
  worker *w = arg;
  __atomic_store_n(&w->ts->active, 1, __ATOMIC_RELEASE);
  progress(w->ts);
  while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
    note(w->ts, "sleeping", __LINE__);
    double ms = 1 + rnd(&w->rng, (unsigned)opt_reset_ms);
    double until = now_s() + ms / 1000.0;
    while (now_s() < until && !__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
      sleep_ms(1);
      progress(w->ts);
    }
    if (__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) break;
    /* Frees of other threads never run during a reset (see the header comment). */
    note(w->ts, "pthread_rwlock_wrlock(free_lock)", __LINE__);
    pthread_rwlock_wrlock(&free_lock);
    __atomic_fetch_add(&resets_started, 1, __ATOMIC_SEQ_CST);
    note(w->ts, "birenDeviceReset", __LINE__);
    birenError_t e = birenDeviceReset();
    __atomic_fetch_add(&resets_done, 1, __ATOMIC_SEQ_CST);
    pthread_rwlock_unlock(&free_lock);
    progress(w->ts);
    count(C_RESETS, 1);
    if (e != BIREN_SUCCESS) {
      char m[128];
      snprintf(m, sizeof m, "birenDeviceReset returned %s", birenGetErrorName(e));
      fail(w, __LINE__, m);
    }
  }
  note(w->ts, "finished", __LINE__);
  __atomic_store_n(&w->ts->active, 0, __ATOMIC_RELEASE);
  return NULL;
}

/* ---- main ------------------------------------------------------------------------------ */

static void usage(void) {
  fprintf(stderr, "usage: stress [--seconds N] [--threads N] [--churners N] [--reset] [--reset-interval-ms N] [--watchdog S]\n"
                  "              [--seed N] [--max-elems N] [--quiet]\n");
  exit(2);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--reset")) opt_reset = 1;
    else if (!strcmp(a, "--quiet")) opt_quiet = 1;
    else if (v == NULL) usage();
    else if (!strcmp(a, "--seconds")) opt_seconds = atof(v), i++;
    else if (!strcmp(a, "--threads")) opt_threads = atoi(v), i++;
    else if (!strcmp(a, "--churners")) opt_churners = atoi(v), i++;
    else if (!strcmp(a, "--watchdog")) opt_watchdog = atof(v), i++;
    else if (!strcmp(a, "--seed")) opt_seed = (unsigned)strtoul(v, NULL, 0), i++;
    else if (!strcmp(a, "--max-elems")) opt_max_elems = atoi(v), i++;
    else if (!strcmp(a, "--reset-interval-ms")) opt_reset_ms = atoi(v), i++;
    else usage();
  }
  if (opt_threads < 1 || opt_churners < 0 || opt_threads + opt_churners > MAX_THREADS || opt_max_elems < 1 || opt_seconds <= 0 || opt_reset_ms < 1)
    usage();

  /* Memory for every worker's buffers; a sync stalled on a never-recorded event is not expected
   * here, so the deadlock timeout is long (a real hang is the watchdog's business). */
  setenv("BIREN_DEVICE_MEMORY", "1G", 0);
  setenv("BIREN_DEADLOCK_TIMEOUT_MS", "20000", 0);
  if (birenInit() != BIREN_SUCCESS) {
    fprintf(stderr, "stress: birenInit failed\n");
    return 2;
  }
  birenDeviceProp prop;
  if (birenGetDeviceProperties(&prop, 0) != BIREN_SUCCESS) return 2;
  size_t free0 = 0, total = 0;
  if (birenMemGetInfo(&free0, &total) != BIREN_SUCCESS) return 2;
  printf("stress: %s, %d workers, %d churners%s, %.0f s, seed %u, %d compute units\n", opt_reset ? "reset variant" : "normal",
         opt_threads, opt_churners, opt_reset ? ", 1 resetter" : "", opt_seconds, opt_seed, prop.multiProcessorCount);
  fflush(stdout);

  if (!opt_reset) {
    if (birenStreamCreate(&shared_stream) != BIREN_SUCCESS) return 2;
    if (birenMallocHost((void **)&shared_counter, sizeof *shared_counter) != BIREN_SUCCESS) return 2;
    *shared_counter = 0;
  }

  int total_threads = opt_threads + opt_churners + (opt_reset ? 1 : 0);
  worker *ws = calloc((size_t)total_threads, sizeof *ws);
  pthread_t *tids = calloc((size_t)total_threads, sizeof *tids);
  if (!ws || !tids) return 2;
  double t0 = now_s();
  for (int i = 0; i < total_threads; i++) {
    worker *w = &ws[i];
    w->id = i;
    w->rng = (opt_seed + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ULL;
    if (w->rng == 0) w->rng = 1;
    w->ts = &states[i];
    const char *kind = i < opt_threads ? "worker" : i < opt_threads + opt_churners ? "churner" : "resetter";
    snprintf(w->ts->name, sizeof w->ts->name, "%s-%d", kind, i);
    note(w->ts, "starting", __LINE__);
    progress(w->ts);
    __atomic_store_n(&w->ts->active, 1, __ATOMIC_RELEASE);
  }
  n_states = total_threads;
  pthread_t wd;
  pthread_create(&wd, NULL, watchdog_main, NULL);
  for (int i = 0; i < total_threads; i++) {
    void *(*fn)(void *) = i < opt_threads ? worker_main : i < opt_threads + opt_churners ? churner_main : resetter_main;
    if (pthread_create(&tids[i], NULL, fn, &ws[i]) != 0) {
      fprintf(stderr, "stress: pthread_create failed\n");
      return 2;
    }
  }
  /* Run, printing a line now and then. */
  double next_report = t0 + 5;
  while (now_s() - t0 < opt_seconds) {
    sleep_ms(50);
    if (!opt_quiet && now_s() >= next_report) {
      next_report += 5;
      printf("  %5.1f s: %llu rounds, %llu kernels, %llu resets, %llu failures\n", now_s() - t0,
             __atomic_load_n(&counters[C_ROUNDS], __ATOMIC_RELAXED), __atomic_load_n(&counters[C_KERNELS], __ATOMIC_RELAXED),
             __atomic_load_n(&counters[C_RESETS], __ATOMIC_RELAXED), __atomic_load_n(&failures, __ATOMIC_RELAXED));
      fflush(stdout);
    }
  }
  __atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < total_threads; i++) pthread_join(tids[i], NULL);

  /* Final checks, still under the watchdog. */
  thread_state *m = &states[total_threads];
  snprintf(m->name, sizeof m->name, "main");
  n_states = total_threads + 1;
  progress(m);
  __atomic_store_n(&m->active, 1, __ATOMIC_RELEASE);
  worker mw;
  memset(&mw, 0, sizeof mw);
  mw.ts = m;
  mw.clean_start = 1;
  mw.round_resets = load_ul(&resets_started);
  if (!opt_reset) {
    (void)CALL(&mw, birenStreamSynchronize(shared_stream));
    unsigned long long want = 0;
    for (int i = 0; i < opt_threads; i++) want += ws[i].shared_launched;
    unsigned long long got = __atomic_load_n(shared_counter, __ATOMIC_SEQ_CST);
    if (got != want) {
      char msg[128];
      snprintf(msg, sizeof msg, "shared stream: %llu increments, expected %llu (lost updates)", got, want);
      fail(&mw, __LINE__, msg);
    }
    (void)CALL(&mw, birenStreamDestroy(shared_stream));
    (void)CALL(&mw, birenFreeHost(shared_counter));
  } else {
    note(m, "final birenDeviceReset", __LINE__);
    (void)CALL(&mw, birenDeviceReset());
  }
  note(m, "final birenDeviceSynchronize", __LINE__);
  (void)CALL(&mw, birenDeviceSynchronize());
  size_t free1 = 0, total1 = 0;
  (void)CALL(&mw, birenMemGetInfo(&free1, &total1));
  if (free1 != free0) {
    char msg[160];
    snprintf(msg, sizeof msg, "device memory not returned: free %zu at start, %zu at end (total %zu)", free0, free1, total1);
    fail(&mw, __LINE__, msg);
  }
  {
    birenError_t e = birenPeekAtLastError();
    (void)e;
  }
  __atomic_store_n(&m->active, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&all_done, 1, __ATOMIC_RELEASE);
  pthread_join(wd, NULL);

  double elapsed = now_s() - t0;
  printf("stress: %s finished in %.1f s\n", opt_reset ? "reset variant" : "normal", elapsed);
  for (int c = 0; c < C_COUNT; c++) {
    if (!opt_reset && (c == C_TAINTED_ROUNDS || c == C_TOLERATED || c == C_RESETS)) continue;
    if (opt_reset && c == C_SHARED_LAUNCHES) continue;
    printf("  %-36s %12llu\n", counter_names[c], counters[c]);
  }
  if (opt_reset) {
    printf("  %-36s %12lu\n", "late work (ran after its reset)", late_work);
    if (late_work != 0) {
      failures++;
      fprintf(stderr, "stress: FAIL: %lu kernel threads or host functions of streams destroyed by birenDeviceReset started after the reset had returned\n", late_work);
    }
  }
  printf("  %-36s %12llu\n", "FAILURES", failures);
  if (counters[C_ROUNDS] == 0) {
    printf("stress: no round ran\n");
    return 1;
  }
  if (opt_reset && counters[C_CLEAN_ROUNDS] == 0) printf("stress: note: no clean round (resets too frequent?)\n");
  free(ws);
  free(tids);
  return failures == 0 ? 0 : 1;
}
