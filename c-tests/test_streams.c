/* Streams: concurrency between streams, the default stream's ordering both ways and the
 * non-blocking exemption, queries, destroy with pending work, async copies and fills, host
 * functions, device reset dropping queued work, many host threads, forged handles. */
#include "timed_kernels.h"

#include <pthread.h>

/* ---- Concurrency ---------------------------------------------------------------------------- */

static int two_streams_kernels_overlap(void) {
  NEED_TWO_COMPUTE_UNITS();
  interval a, b;
  birenStream_t s1, s2;
  OK(birenStreamCreate(&s1));
  OK(birenStreamCreate(&s2));
  OK(launch_timed_spin(&a, 150, s1));
  OK(launch_timed_spin(&b, 150, s2));
  OK(birenDeviceSynchronize());
  if (!overlap(a, b))
    fprintf(stderr, "    a [%.3f, %.3f] b [%.3f, %.3f] (ms from a.start)\n", 0.0, (a.end - a.start) * 1e3,
            (b.start - a.start) * 1e3, (b.end - a.start) * 1e3);
  EXPECT(overlap(a, b));
  return 0;
}

/* ---- The default stream -------------------------------------------------------------------- */

static int default_stream_waits_for_blocking_streams(void) {
  interval a1, a2, b;
  birenStream_t s1, s2;
  OK(birenStreamCreate(&s1));
  OK(birenStreamCreate(&s2));
  OK(launch_timed_spin(&a1, 150, s1));
  OK(launch_timed_spin(&a2, 100, s2));
  OK(launch_timed_spin(&b, 1, NULL));
  OK(birenDeviceSynchronize());
  EXPECT(before(a1, b));
  EXPECT(before(a2, b));
  return 0;
}

static int blocking_streams_wait_for_default_stream(void) {
  interval a, b1, b2;
  birenStream_t s1, s2;
  OK(birenStreamCreate(&s1));
  OK(birenStreamCreate(&s2));
  OK(launch_timed_spin(&a, 150, NULL));
  OK(launch_timed_spin(&b1, 1, s1));
  OK(launch_timed_spin(&b2, 1, s2));
  OK(birenDeviceSynchronize());
  EXPECT(before(a, b1));
  EXPECT(before(a, b2));
  return 0;
}

/* birenMemcpy is ordered like default-stream work: it sees what earlier blocking-stream work wrote. */
static int memcpy_waits_for_blocking_stream_work(void) {
  int *d, h = 0, v = 42;
  interval iv;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMemset(d, 0, sizeof(int)));
  OK(launch_timed_spin(&iv, 100, s));
  OK(launch_store_int(d, v, s));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost)); /* no explicit synchronize */
  EXPECT(h == 42);
  return 0;
}

/* The default stream's rules hold for copies too (they run on copy engines, not compute units). */
static int default_stream_ordering_covers_copies(void) {
  int *d, *d2, *out, h = 0, v = 42, w = 7;
  double ms = 100;
  interval iv, *pv = &iv;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMalloc((void **)&d2, sizeof(int)));
  OK(birenMalloc((void **)&out, sizeof(int)));
  OK(birenMemset(d2, 0, sizeof(int)));
  /* blocking stream: slow kernel, then a copy; the default stream's kernel must see the copy */
  OK(launch_timed_spin(pv, ms, s));
  OK(launch_store_int(d, v, s));
  OK(birenMemcpyAsync(d2, d, sizeof(int), birenMemcpyDeviceToDevice, s));
  OK(launch_store_int(out, w, NULL)); /* out = 7 after the copy... */
  OK(birenMemcpyAsync(out, d2, sizeof(int), birenMemcpyDeviceToDevice, NULL)); /* ...then out = d2 */
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(&h, out, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 42);
  /* default stream: slow kernel writes; a later copy in a blocking stream must see it */
  OK(launch_timed_spin(pv, ms, NULL));
  OK(launch_store_int(d, w, NULL));
  OK(birenMemcpyAsync(&h, d, sizeof h, birenMemcpyDeviceToHost, s));
  OK(birenStreamSynchronize(s));
  EXPECT(h == 7);
  return 0;
}

static int non_blocking_streams_are_exempt(void) {
  NEED_TWO_COMPUTE_UNITS();
  interval a, b, c, d;
  birenStream_t ns;
  OK(birenStreamCreateWithFlags(&ns, birenStreamNonBlocking));
  unsigned flags = 99;
  OK(birenStreamGetFlags(ns, &flags));
  EXPECT(flags == birenStreamNonBlocking);
  /* default-stream work does not wait for earlier non-blocking work */
  OK(launch_timed_spin(&a, 150, ns));
  OK(launch_timed_spin(&b, 150, NULL));
  OK(birenDeviceSynchronize());
  EXPECT(overlap(a, b));
  /* non-blocking work does not wait for earlier default-stream work */
  OK(launch_timed_spin(&c, 150, NULL));
  OK(launch_timed_spin(&d, 150, ns));
  OK(birenDeviceSynchronize());
  EXPECT(overlap(c, d));
  /* nor does the synchronous birenMemcpy wait for a non-blocking stream */
  {
    int *dp, h = 5;
    interval e;
    OK(birenMalloc((void **)&dp, sizeof(int)));
    OK(launch_timed_spin(&e, 400, ns));
    OK(birenMemcpy(dp, &h, sizeof h, birenMemcpyHostToDevice));
    EXPECT_CODE(birenStreamQuery(ns), BIREN_ERROR_NOT_READY);
    OK(birenStreamSynchronize(ns));
  }
  return 0;
}

/* ---- Query --------------------------------------------------------------------------------- */

static int stream_query_not_ready_then_success(void) {
  interval iv;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenStreamQuery(s)); /* empty */
  OK(launch_timed_spin(&iv, 100, s));
  (void)birenGetLastError();
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_NOT_READY);
  EXPECT_CODE(birenGetLastError(), BIREN_SUCCESS); /* NOT_READY is an answer, not a failure */
  OK(birenStreamSynchronize(s));
  OK(birenStreamQuery(s));
  /* the default stream too */
  OK(launch_timed_spin(&iv, 100, NULL));
  EXPECT_CODE(birenStreamQuery(NULL), BIREN_ERROR_NOT_READY);
  OK(birenStreamSynchronize(NULL));
  OK(birenStreamQuery(NULL));
  return 0;
}

/* ---- Destroy with pending work ------------------------------------------------------------- */

static int stream_destroy_returns_at_once_and_work_completes(void) {
  int *d, h = 0, v = 1234;
  interval iv = {0, 0};
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMemset(d, 0, sizeof(int)));
  OK(launch_timed_spin(&iv, 200, s));
  OK(launch_store_int(d, v, s));
  double t0 = now_s();
  OK(birenStreamDestroy(s));
  double took = now_s() - t0;
  EXPECT(took < 0.1); /* the pending work takes 200 ms */
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(launch_store_int(d, v, s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamDestroy(s), BIREN_ERROR_INVALID_HANDLE);
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 1234);
  EXPECT(iv.end - iv.start >= 0.199);
  /* the default stream cannot be destroyed */
  EXPECT_CODE(birenStreamDestroy(NULL), BIREN_ERROR_INVALID_HANDLE);
  return 0;
}

/* Work left in a destroyed blocking stream is still earlier work that the default stream waits for. */
static int default_stream_waits_for_destroyed_streams_pending_work(void) {
  interval a, b;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(launch_timed_spin(&a, 150, s));
  OK(birenStreamDestroy(s));
  OK(launch_timed_spin(&b, 1, NULL));
  OK(birenStreamSynchronize(NULL));
  EXPECT(before(a, b));
  return 0;
}

/* ---- Async copies and fills --------------------------------------------------------------- */

/* args: (int *p, int n, int add, int mul, double ms). Busy-waits ms, then p[i] = p[i] * mul + add. */
static void slow_affine(void **args) {
  int *p = *(int **)args[0];
  int n = *(int *)args[1], add = *(int *)args[2], mul = *(int *)args[3];
  double ms = *(double *)args[4];
  spin_ms(ms);
  for (int i = 0; i < n; i++) p[i] = p[i] * mul + add;
}

static birenError_t launch_slow_affine(int *p, int n, int add, int mul, double ms, birenStream_t s) {
  return BIREN_LAUNCH(slow_affine, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, p, n, add, mul, ms);
}

static int async_copies_and_fills_run_in_stream_order(void) {
  enum { N = 1 << 16 };
  int *a, *b, *h1, *h2;
  static int src[N], h3[N];
  birenStream_t s;
  for (int i = 0; i < N; i++) src[i] = i;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&a, N * sizeof(int)));
  OK(birenMalloc((void **)&b, N * sizeof(int)));
  OK(birenMallocHost((void **)&h1, N * sizeof(int)));
  OK(birenMallocHost((void **)&h2, N * sizeof(int)));
  OK(birenMemsetAsync(a, 0, N * sizeof(int), s));
  OK(launch_slow_affine(a, N, 1, 1, 50, s));                                    /* a = 1 */
  OK(birenMemcpyAsync(b, a, N * sizeof(int), birenMemcpyDeviceToDevice, s));      /* b = 1 */
  OK(launch_slow_affine(b, N, 0, 3, 50, s));                                    /* b = 3 */
  OK(birenMemcpyAsync(h1, b, N * sizeof(int), birenMemcpyDeviceToHost, s));       /* h1 = 3 */
  OK(birenMemsetAsync(a, 0x01, N * sizeof(int), s));                              /* a = 0x01010101 */
  OK(birenMemcpyAsync(h2, a, N * sizeof(int), birenMemcpyDeviceToHost, s));       /* h2 = 0x01010101 */
  OK(birenMemcpyAsync(a, src, N * sizeof(int), birenMemcpyHostToDevice, s));      /* a = i */
  OK(launch_slow_affine(a, N, 5, 2, 30, s));                                    /* a = 2i + 5 */
  OK(birenMemcpyAsync(h3, a, N * sizeof(int), birenMemcpyDefault, s));            /* h3 = 2i + 5 */
  OK(birenStreamSynchronize(s));
  for (int i = 0; i < N; i++) {
    EXPECT(h1[i] == 3);
    EXPECT(h2[i] == 0x01010101);
    EXPECT(h3[i] == 2 * i + 5);
  }
  OK(birenFreeHost(h1));
  OK(birenFreeHost(h2));
  return 0;
}

static int async_copy_and_fill_errors_return_at_once_and_enqueue_nothing(void) {
  enum { N = 64 };
  int *d, h[N], before_h[N], back[N];
  interval iv;
  birenStream_t s;
  char junk[16];
  for (int i = 0; i < N; i++) before_h[i] = h[i] = -7;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, N * sizeof(int)));
  OK(birenMemset(d, 0x22, N * sizeof(int)));
  OK(launch_timed_spin(&iv, 200, s)); /* the stream is busy for 200 ms */

  EXPECT_CODE(birenMemcpyAsync(h, d, N * sizeof(int) + 4, birenMemcpyDeviceToHost, s), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpyAsync(d + 1, h, N * sizeof(int), birenMemcpyHostToDevice, s), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpyAsync(h, junk, sizeof junk, birenMemcpyDeviceToHost, s), BIREN_ERROR_INVALID_DEVICE_POINTER);
  EXPECT_CODE(birenMemcpyAsync(junk, h, sizeof junk, birenMemcpyHostToDevice, s), BIREN_ERROR_INVALID_DEVICE_POINTER);
  EXPECT_CODE(birenMemcpyAsync(d, h, 4, (birenMemcpyKind)9, s), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_CODE(birenMemcpyAsync(d, h, 4, (birenMemcpyKind)-1, s), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_CODE(birenMemcpyAsync(NULL, d, 4, birenMemcpyDeviceToHost, s), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenMemcpyAsync(h, NULL, 4, birenMemcpyHostToHost, s), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenMemcpyAsync(h, d, 4, birenMemcpyDeviceToHost, (birenStream_t)0x12345), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenMemsetAsync(d + N - 1, 0x7f, 8, s), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemsetAsync(junk, 0, sizeof junk, s), BIREN_ERROR_INVALID_DEVICE_POINTER);
  EXPECT_CODE(birenMemsetAsync(NULL, 0, 4, s), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenMemsetAsync(d, 0, 4, (birenStream_t)0x12345), BIREN_ERROR_INVALID_HANDLE);
  OK(birenMemcpyAsync(h, d, 0, birenMemcpyDeviceToHost, s));
  OK(birenMemsetAsync(d, 0x7f, 0, s));
  /* all of that returned while the stream was still busy: nothing waited */
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_NOT_READY);
  OK(birenStreamSynchronize(s));
  /* and nothing was written */
  EXPECT(memcmp(h, before_h, sizeof h) == 0);
  OK(birenMemcpy(back, d, sizeof back, birenMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(back[i] == 0x22222222);
  return 0;
}

/* ---- Host functions ------------------------------------------------------------------------ */

typedef struct order_log {
  int entries[16];
  int n;
} order_log;

static void log_append(order_log *log, int tag) {
  int i = __atomic_fetch_add(&log->n, 1, __ATOMIC_SEQ_CST);
  if (i < 16) log->entries[i] = tag;
}

/* args: (order_log *log, int tag, double ms). Busy-waits ms, then appends tag. */
static void kernel_log(void **args) {
  order_log *log = *(order_log **)args[0];
  int tag = *(int *)args[1];
  double ms = *(double *)args[2];
  spin_ms(ms);
  log_append(log, tag);
}

typedef struct host_fn_ctx {
  order_log *log;
  int tag;
  birenStream_t stream;
  birenEvent_t event;
  int *dev;
  birenError_t stream_sync, default_sync, device_sync, event_sync, memcpy_sync, memset_sync, reset;
} host_fn_ctx;

static void host_fn_log(void *user) {
  host_fn_ctx *c = user;
  int x = 1;
  sleep_ms(30); /* later work in the stream must wait for this to return */
  c->stream_sync = birenStreamSynchronize(c->stream);
  c->default_sync = birenStreamSynchronize(NULL);
  c->device_sync = birenDeviceSynchronize();
  c->event_sync = birenEventSynchronize(c->event);
  c->memcpy_sync = birenMemcpy(c->dev, &x, sizeof x, birenMemcpyHostToDevice);
  c->memset_sync = birenMemset(c->dev, 0, sizeof x);
  c->reset = birenDeviceReset();
  log_append(c->log, c->tag);
}

static int host_func_runs_in_stream_order_and_may_not_synchronize(void) {
  order_log log;
  order_log *lp = &log;
  int t1 = 1, t3 = 3, t5 = 5;
  double ms = 40, zero = 0;
  birenStream_t s;
  birenEvent_t e;
  host_fn_ctx c2, c4;
  int *d;
  memset(&log, 0, sizeof log);
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(birenMalloc((void **)&d, sizeof(int)));
  memset(&c2, 0xff, sizeof c2);
  c2.log = &log;
  c2.tag = 2;
  c2.stream = s;
  c2.event = e;
  c2.dev = d;
  c4 = c2;
  c4.tag = 4;
  OK(BIREN_LAUNCH(kernel_log, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, lp, t1, ms));
  OK(birenEventRecord(e, s));
  OK(birenLaunchHostFunc(s, host_fn_log, &c2));
  OK(BIREN_LAUNCH(kernel_log, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, lp, t3, zero));
  OK(birenLaunchHostFunc(s, host_fn_log, &c4));
  OK(BIREN_LAUNCH(kernel_log, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, lp, t5, zero));
  OK(birenStreamSynchronize(s));
  EXPECT(load_int(&log.n) == 5);
  for (int i = 0; i < 5; i++) EXPECT(log.entries[i] == i + 1);
  const host_fn_ctx *cs[2] = {&c2, &c4};
  for (int i = 0; i < 2; i++) {
    EXPECT_CODE(cs[i]->stream_sync, BIREN_ERROR_NOT_PERMITTED);
    EXPECT_CODE(cs[i]->default_sync, BIREN_ERROR_NOT_PERMITTED);
    EXPECT_CODE(cs[i]->device_sync, BIREN_ERROR_NOT_PERMITTED);
    EXPECT_CODE(cs[i]->event_sync, BIREN_ERROR_NOT_PERMITTED);
    EXPECT_CODE(cs[i]->memcpy_sync, BIREN_ERROR_NOT_PERMITTED);
    EXPECT_CODE(cs[i]->memset_sync, BIREN_ERROR_NOT_PERMITTED);
    EXPECT_CODE(cs[i]->reset, BIREN_ERROR_NOT_PERMITTED);
  }
  /* none of that left an error behind on the device */
  OK(birenDeviceSynchronize());
  OK(birenStreamQuery(s));
  EXPECT_CODE(birenLaunchHostFunc(s, NULL, NULL), BIREN_ERROR_INVALID_VALUE);
  return 0;
}

static void host_fn_store(void *user) { __atomic_store_n((int *)user, 1, __ATOMIC_SEQ_CST); }

/* A host function on the default stream waits for earlier blocking-stream work. */
static int host_func_on_default_stream_follows_blocking_streams(void) {
  int flag = 0, done = 0;
  interval iv;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  double t0 = now_s();
  OK(launch_timed_spin(&iv, 300, s));
  OK(launch_store_int(&flag, 1, s));
  OK(birenLaunchHostFunc(NULL, host_fn_store, &done));
  sleep_ms(30);
  /* (only meaningful if this thread woke before the 300 ms kernel could have ended) */
  if (now_s() - t0 < 0.25) EXPECT(load_int(&done) == 0);
  OK(birenDeviceSynchronize());
  EXPECT(load_int(&flag) == 1 && load_int(&done) == 1);
  return 0;
}

/* ---- Device reset --------------------------------------------------------------------------- */

/* A fresh stream runs a kernel and a copy. */
static int device_works_on_a_stream(void) {
  int *d, h = 0, v = 9;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(launch_store_int(d, v, s));
  OK(birenMemcpyAsync(&h, d, sizeof h, birenMemcpyDeviceToHost, s));
  OK(birenStreamSynchronize(s));
  EXPECT(h == 9);
  OK(birenStreamDestroy(s));
  OK(birenFree(d));
  return 0;
}

static int device_reset_drops_queued_work(void) {
  int counter = 0, h = 0, v = 9;
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  for (int i = 0; i < 1000; i++) OK(launch_spin_then_count(&counter, 1.0, s));
  OK(birenEventRecord(e, s));
  double t0 = now_s();
  OK(birenDeviceReset());
  double took = now_s() - t0;
  int ran = load_int(&counter);
  if (took >= 0.4) fprintf(stderr, "    reset took %.0f ms, %d kernels ran\n", took * 1e3, ran);
  EXPECT(took < 0.4); /* the queued work alone would take 1 s */
  EXPECT(ran < 1000);
  sleep_ms(100);
  EXPECT(load_int(&counter) == ran); /* nothing of the dropped work runs later */
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(launch_store_int(&h, v, s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamDestroy(s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventQuery(e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventDestroy(e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT(device_works_on_a_stream() == 0); /* usable right after */
  return 0;
}

/* Reset waits for a block that is already running (it may touch memory the reset frees). */
static int device_reset_lets_running_block_finish(void) {
  interval iv = {0, 0};
  int started = 0;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(launch_store_int(&started, 1, s));
  OK(launch_timed_spin(&iv, 200, s));
  while (!load_int(&started)) sleep_ms(1);
  sleep_ms(20); /* the spin is running now */
  OK(birenDeviceReset());
  double returned = now_s();
  EXPECT(iv.end > 0 && iv.end <= returned);
  return 0;
}

/* Reset also drops work held behind a wait that no record will ever satisfy. */
static int device_reset_drops_work_held_by_a_wait(void) {
  int flag = 0;
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(birenStreamWaitEvent(s, e)); /* never recorded */
  OK(launch_store_int(&flag, 1, s));
  double t0 = now_s();
  OK(birenDeviceReset());
  EXPECT(now_s() - t0 < 0.5);
  OK(birenDeviceSynchronize());
  sleep_ms(20);
  EXPECT(load_int(&flag) == 0);
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT(device_works_on_a_stream() == 0);
  return 0;
}

typedef struct sync_waiter {
  birenStream_t stream;
  birenEvent_t event;
  int which; /* 0: stream, 1: event, 2: device */
  birenError_t result;
  int done;
} sync_waiter;

static void *wait_in_sync(void *arg) {
  sync_waiter *w = arg;
  birenError_t e = w->which == 0 ? birenStreamSynchronize(w->stream)
                   : w->which == 1 ? birenEventSynchronize(w->event)
                                   : birenDeviceSynchronize();
  w->result = e;
  __atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static int device_reset_releases_blocked_synchronizes(void) {
  int counter = 0;
  birenStream_t s;
  birenEvent_t e;
  sync_waiter w[3];
  pthread_t th[3];
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  for (int i = 0; i < 1000; i++) OK(launch_spin_then_count(&counter, 1.0, s));
  OK(birenEventRecord(e, s));
  for (int i = 0; i < 3; i++) {
    w[i].stream = s;
    w[i].event = e;
    w[i].which = i;
    w[i].result = BIREN_ERROR_UNKNOWN;
    w[i].done = 0;
    EXPECT(pthread_create(&th[i], NULL, wait_in_sync, &w[i]) == 0);
  }
  sleep_ms(50);
  OK(birenDeviceReset());
  double deadline = now_s() + 2.0;
  for (int i = 0; i < 3; i++)
    while (!load_int(&w[i].done) && now_s() < deadline) sleep_ms(1);
  for (int i = 0; i < 3; i++) EXPECT(load_int(&w[i].done));
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  EXPECT_CODE(w[0].result, BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(w[1].result, BIREN_ERROR_INVALID_HANDLE);
  OK(w[2].result);
  return 0;
}

/* birenDeviceReset while other host threads keep launching into their own blocking streams and
 * the default stream and synchronizing: every call returns SUCCESS or (for a stream the reset
 * destroyed) INVALID_HANDLE, and no synchronize is left hanging once the resets stop. */
typedef struct reset_racer {
  int stop, done, rounds, unexpected;
  birenError_t unexpected_code;
  int *counter;
} reset_racer;

static void racer_note(reset_racer *r, birenError_t e) {
  if (e != BIREN_SUCCESS && e != BIREN_ERROR_INVALID_HANDLE) {
    r->unexpected++;
    r->unexpected_code = e;
  }
}

static void *race_resets(void *arg) {
  reset_racer *r = arg;
  birenStream_t s = NULL;
  while (!load_int(&r->stop)) {
    birenError_t e;
    if (s == NULL && birenStreamCreate(&s) != BIREN_SUCCESS) {
      s = NULL;
      continue;
    }
    e = launch_spin_then_count(r->counter, 0.05, s);
    racer_note(r, e);
    racer_note(r, launch_spin_then_count(r->counter, 0.05, NULL));
    if (e == BIREN_SUCCESS) e = birenStreamSynchronize(s);
    racer_note(r, e);
    if (e == BIREN_ERROR_INVALID_HANDLE) s = NULL;
    r->rounds++;
  }
  __atomic_store_n(&r->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static int device_reset_races_with_other_host_threads(void) {
  enum { T = 4 };
  int counter = 0;
  pthread_t th[T];
  reset_racer r[T];
  memset(r, 0, sizeof r);
  for (int i = 0; i < T; i++) {
    r[i].counter = &counter;
    EXPECT(pthread_create(&th[i], NULL, race_resets, &r[i]) == 0);
  }
  for (int k = 0; k < 40; k++) {
    sleep_ms(10);
    OK(birenDeviceReset());
  }
  for (int i = 0; i < T; i++) __atomic_store_n(&r[i].stop, 1, __ATOMIC_SEQ_CST);
  double deadline = now_s() + 3.0;
  int stuck = 0;
  for (int i = 0; i < T; i++) {
    while (!load_int(&r[i].done) && now_s() < deadline) sleep_ms(1);
    stuck += !load_int(&r[i].done);
  }
  if (stuck) {
    fprintf(stderr, "    %d of %d host threads still blocked in a birenStreamSynchronize 3 s after the last reset\n",
            stuck, T);
    (void)birenDeviceReset(); /* releases them (their streams die), so they can be joined */
    deadline = now_s() + 3.0;
    for (int i = 0; i < T; i++)
      while (!load_int(&r[i].done) && now_s() < deadline) sleep_ms(1);
  }
  for (int i = 0; i < T; i++) {
    if (load_int(&r[i].done))
      pthread_join(th[i], NULL);
    else
      pthread_detach(th[i]);
  }
  EXPECT(stuck == 0);
  for (int i = 0; i < T; i++) {
    if (r[i].unexpected)
      fprintf(stderr, "    thread %d: %d unexpected results, e.g. %s\n", i, r[i].unexpected,
              birenGetErrorName(r[i].unexpected_code));
    EXPECT(r[i].unexpected == 0);
  }
  OK(birenDeviceSynchronize());
  EXPECT(device_works_on_a_stream() == 0);
  return 0;
}

/* ---- Many host threads, each with its own stream --------------------------------------------- */

/* args: (const int *in, int *out, int n, int k). out[i] = 2 * in[i] + k. */
static void twice_plus(void **args) {
  const int *in = *(const int **)args[0];
  int *out = *(int **)args[1];
  int n = *(int *)args[2], k = *(int *)args[3];
  int i = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  if (i < n) out[i] = 2 * in[i] + k;
}

typedef struct worker {
  int id;
  int failures;
  birenError_t first_error;
} worker;

#define WORKER_OK(call)                                    \
  do {                                                     \
    birenError_t worker_e_ = (call);                       \
    if (worker_e_ != BIREN_SUCCESS) {                      \
      if (w->first_error == BIREN_SUCCESS) w->first_error = worker_e_; \
      w->failures++;                                       \
      goto out;                                            \
    }                                                      \
  } while (0)

static void *worker_main(void *arg) {
  enum { N = 10000, ROUNDS = 25 };
  worker *w = arg;
  birenStream_t s = NULL;
  int *din = NULL, *dout = NULL, n = N;
  int *in = malloc(N * sizeof(int)), *out = malloc(N * sizeof(int));
  if (!in || !out) {
    w->failures++;
    goto out;
  }
  WORKER_OK(birenStreamCreate(&s));
  WORKER_OK(birenMalloc((void **)&din, N * sizeof(int)));
  WORKER_OK(birenMalloc((void **)&dout, N * sizeof(int)));
  for (int r = 0; r < ROUNDS; r++) {
    int k = w->id * 1000 + r;
    for (int i = 0; i < N; i++) in[i] = i ^ k;
    memset(out, 0, N * sizeof(int));
    WORKER_OK(birenMemcpyAsync(din, in, N * sizeof(int), birenMemcpyHostToDevice, s));
    WORKER_OK(BIREN_LAUNCH(twice_plus, birenDim3((N + 255) / 256, 1, 1), birenDim3(256, 1, 1), 0, s, din, dout, n, k));
    WORKER_OK(birenMemcpyAsync(out, dout, N * sizeof(int), birenMemcpyDeviceToHost, s));
    WORKER_OK(birenStreamSynchronize(s));
    for (int i = 0; i < N; i++)
      if (out[i] != 2 * (i ^ k) + k) {
        w->failures++;
        break;
      }
  }
out:
  if (dout) birenFree(dout);
  if (din) birenFree(din);
  if (s) birenStreamDestroy(s);
  free(in);
  free(out);
  return NULL;
}

static int eight_host_threads_own_streams_lose_nothing(void) {
  enum { T = 8 };
  pthread_t th[T];
  worker w[T];
  for (int i = 0; i < T; i++) {
    w[i].id = i;
    w[i].failures = 0;
    w[i].first_error = BIREN_SUCCESS;
    EXPECT(pthread_create(&th[i], NULL, worker_main, &w[i]) == 0);
  }
  for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < T; i++) {
    if (w[i].failures)
      fprintf(stderr, "    worker %d: %d failures, first error %s\n", i, w[i].failures,
              birenGetErrorName(w[i].first_error));
    EXPECT(w[i].failures == 0);
  }
  OK(birenDeviceSynchronize());
  return 0;
}

/* Many streams with queued work: every kernel runs once. */
static int many_streams_lose_nothing(void) {
  enum { S = 64, K = 10 };
  int counter = 0;
  birenStream_t s[S];
  for (int i = 0; i < S; i++) {
    OK(i % 2 ? birenStreamCreate(&s[i]) : birenStreamCreateWithFlags(&s[i], birenStreamNonBlocking));
    for (int k = 0; k < K; k++) OK(launch_spin_then_count(&counter, 0.0, s[i]));
  }
  for (int i = 0; i < S; i += 3) OK(birenStreamDestroy(s[i])); /* some go with work pending */
  OK(birenDeviceSynchronize());
  EXPECT(load_int(&counter) == S * K);
  return 0;
}

/* A device-wide synchronize waits for the streams with work pending, which the runtime tracks
 * (not every stream that exists): round after round, work on a changing few of many streams, on
 * streams created since the last synchronize, on the default stream and on streams destroyed
 * with work pending, is all done when birenDeviceSynchronize returns. */
static int device_synchronize_waits_for_every_busy_stream_round_after_round(void) {
  enum { S = 200, ROUNDS = 30 };
  int counter = 0, want = 0;
  birenStream_t s[S];
  for (int i = 0; i < S; i++) OK(birenStreamCreateWithFlags(&s[i], birenStreamNonBlocking));
  unsigned x = 12345;
  for (int r = 0; r < ROUNDS; r++) {
    for (int k = 0; k < 5; k++) {
      x = x * 1103515245u + 12345u;
      OK(launch_spin_then_count(&counter, 0.05, s[(x >> 8) % S]));
      want++;
    }
    if (r % 3 == 0) {
      OK(launch_spin_then_count(&counter, 0.05, NULL));
      want++;
    }
    if (r % 5 == 0) { /* a new stream, given work, then destroyed with it pending */
      birenStream_t t;
      OK(birenStreamCreateWithFlags(&t, birenStreamNonBlocking));
      OK(launch_spin_then_count(&counter, 0.2, t));
      want++;
      OK(birenStreamDestroy(t));
    }
    OK(birenDeviceSynchronize());
    if (load_int(&counter) != want) {
      fprintf(stderr, "    round %d: %d of %d kernels done after birenDeviceSynchronize\n", r, load_int(&counter), want);
      return 1;
    }
  }
  for (int i = 0; i < S; i++) OK(birenStreamDestroy(s[i]));
  return 0;
}

/* Host threads launching into one shared stream (and the default stream) concurrently. */
typedef struct shared_launcher {
  birenStream_t stream;
  int *counter;
  int failures;
} shared_launcher;

static void *launch_many(void *arg) {
  shared_launcher *l = arg;
  for (int i = 0; i < 200; i++)
    if (launch_spin_then_count(l->counter, 0.0, i % 4 ? l->stream : NULL) != BIREN_SUCCESS) l->failures++;
  return NULL;
}

static int host_threads_sharing_a_stream_lose_nothing(void) {
  enum { T = 8 };
  int counter = 0;
  birenStream_t s;
  pthread_t th[T];
  shared_launcher l[T];
  OK(birenStreamCreate(&s));
  for (int i = 0; i < T; i++) {
    l[i].stream = s;
    l[i].counter = &counter;
    l[i].failures = 0;
    EXPECT(pthread_create(&th[i], NULL, launch_many, &l[i]) == 0);
  }
  for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < T; i++) EXPECT(l[i].failures == 0);
  OK(birenStreamSynchronize(s));
  OK(birenDeviceSynchronize());
  EXPECT(load_int(&counter) == T * 200);
  return 0;
}

/* ---- Destroyed and forged handles ----------------------------------------------------------- */

static void noop_host_fn(void *user) { (void)user; }

static int check_dead_stream(birenStream_t s) {
  int p, x = 0;
  unsigned f;
  int *dev;
  birenEvent_t e;
  OK(birenMalloc((void **)&dev, sizeof(int)));
  OK(birenEventCreate(&e));
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamDestroy(s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamGetPriority(s, &p), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamGetFlags(s, &f), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamWaitEvent(s, e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventRecord(e, s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenLaunchHostFunc(s, noop_host_fn, NULL), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenLaunchKernel(store_int, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, s),
              BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(launch_store_int(dev, x, s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenMemcpyAsync(dev, &x, sizeof x, birenMemcpyHostToDevice, s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenMemsetAsync(dev, 0, sizeof x, s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenGetLastError(), BIREN_ERROR_INVALID_HANDLE);
  OK(birenEventDestroy(e));
  OK(birenFree(dev));
  return 0;
}

static int destroyed_and_forged_stream_handles_are_invalid(void) {
  birenStream_t s, s2;
  OK(birenStreamCreate(&s));
  OK(birenStreamDestroy(s));
  EXPECT(check_dead_stream(s) == 0);
  /* a new stream does not bring the old handle back to life */
  OK(birenStreamCreate(&s2));
  if (s2 != s) EXPECT(check_dead_stream(s) == 0);
  OK(birenStreamQuery(s2));
  EXPECT(check_dead_stream((birenStream_t)0x12345) == 0);
  EXPECT(check_dead_stream((birenStream_t)(uintptr_t)0xdeadbeefcafeULL) == 0);
  EXPECT(check_dead_stream((birenStream_t)(uintptr_t)~(uintptr_t)0) == 0);
  /* a handle that points at real memory is still only looked up, never read */
  {
    static unsigned char fake[256];
    memset(fake, 0xff, sizeof fake);
    EXPECT(check_dead_stream((birenStream_t)(void *)fake) == 0);
  }
  OK(birenDeviceSynchronize());
  return 0;
}

/* ---- How far the host runs ahead ------------------------------------------------------------ */

/* A host may run at most 4096 operations ahead of a device (birenLaunchKernel's doc): an
 * enqueue beyond that waits for the device to drain, as CUDA's launch does when its queue is
 * full. */
static void count_host_fn(void *p) { __atomic_fetch_add((long *)p, 1, __ATOMIC_SEQ_CST); }

static int a_host_far_ahead_waits_for_the_device(void) {
  enum { N = 30000 };
  static long done;
  long most = 0;
  birenStream_t s;
  done = 0;
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  for (long i = 1; i <= N; i++) {
    OK(birenLaunchHostFunc(s, count_host_fn, &done));
    long ahead = i - __atomic_load_n(&done, __ATOMIC_SEQ_CST);
    if (ahead > most) most = ahead;
  }
  OK(birenStreamSynchronize(s));
  EXPECT(done == N);
  /* 4097 at most; a wait that sees nothing finish for 10 ms goes on (below), so a stall of the
   * host-function thread on a loaded machine may let the host a little further. Without the
   * bound the host is 20000+ ahead here. */
  if (most > 6000) fprintf(stderr, "    the host ran %ld operations ahead\n", most);
  EXPECT(most <= 6000);
  OK(birenStreamDestroy(s));
  return 0;
}

/* Queued work that waits for something the host does later must not hang the host at the
 * bound: a wait that sees nothing finish goes on (real hardware would hang here). */
static void wait_for_flag(void *p) {
  while (!__atomic_load_n((int *)p, __ATOMIC_SEQ_CST)) sleep_ms(0.1);
}

static int a_host_ahead_of_work_waiting_for_it_goes_on(void) {
  enum { N = 12000 };
  static int flag;
  static long done;
  birenStream_t s;
  flag = 0, done = 0;
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenLaunchHostFunc(s, wait_for_flag, &flag));
  for (long i = 0; i < N; i++) OK(birenLaunchHostFunc(s, count_host_fn, &done));
  EXPECT(done == 0);
  __atomic_store_n(&flag, 1, __ATOMIC_SEQ_CST);
  OK(birenStreamSynchronize(s));
  EXPECT(done == N);
  OK(birenStreamDestroy(s));
  return 0;
}

static const test_case tests[] = {
    TEST(two_streams_kernels_overlap),
    TEST(default_stream_waits_for_blocking_streams),
    TEST(blocking_streams_wait_for_default_stream),
    TEST(memcpy_waits_for_blocking_stream_work),
    TEST(default_stream_ordering_covers_copies),
    TEST(non_blocking_streams_are_exempt),
    TEST(stream_query_not_ready_then_success),
    TEST(stream_destroy_returns_at_once_and_work_completes),
    TEST(default_stream_waits_for_destroyed_streams_pending_work),
    TEST(async_copies_and_fills_run_in_stream_order),
    TEST(async_copy_and_fill_errors_return_at_once_and_enqueue_nothing),
    TEST(host_func_runs_in_stream_order_and_may_not_synchronize),
    TEST(host_func_on_default_stream_follows_blocking_streams),
    TEST(device_reset_drops_queued_work),
    TEST(device_reset_lets_running_block_finish),
    TEST(device_reset_drops_work_held_by_a_wait),
    TEST(device_reset_releases_blocked_synchronizes),
    TEST(eight_host_threads_own_streams_lose_nothing),
    TEST(many_streams_lose_nothing),
    TEST(device_synchronize_waits_for_every_busy_stream_round_after_round),
    TEST(host_threads_sharing_a_stream_lose_nothing),
    TEST(destroyed_and_forged_stream_handles_are_invalid),
    TEST(a_host_far_ahead_waits_for_the_device),
    TEST(a_host_ahead_of_work_waiting_for_it_goes_on),
    TEST(device_reset_races_with_other_host_threads), /* last: when it fails, threads stay blocked */
};

int main(void) {
  want_two_compute_units();
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("streams", tests, reset_device, 20);
}
