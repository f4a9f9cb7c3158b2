/* Reliability, round two: what hostile programs found. Each test is the regression test of one
 * bug (or one documented decision); the comment above it names the item. */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

static void before_each(void) {
  birenSetDeviceValidator(0);
  birenSetValidatorCallback(NULL, NULL);
  (void)birenSetDevice(0);
  birenError_t e = birenDeviceReset();
  if (e != BIREN_SUCCESS) fprintf(stderr, "    before_each: birenDeviceReset returned %s\n", birenGetErrorName(e));
  (void)birenGetLastError();
}

static int findings;
static char last_finding[1024], all_findings[8192];
static void count_finding(const char *msg, void *user) {
  (void)user;
  if (findings == 0) all_findings[0] = 0;
  findings++;
  snprintf(last_finding, sizeof last_finding, "%s", msg);
  size_t n = strlen(all_findings);
  snprintf(all_findings + n, sizeof all_findings - n, "%s\n", msg);
}

/* ---- 1. freeing a large allocation must not zero its neighbour ------------------------------- */

static int large_free_keeps_neighbour_with(int validator) {
  enum { N = 1000 * 1000, M = 4096 };
  float *a, *b;
  static float hb[M], back[M];
  birenSetDeviceValidator(validator);
  findings = 0;
  birenSetValidatorCallback(count_finding, NULL);
  for (int i = 0; i < M; i++) hb[i] = (float)i + 0.5f;
  OK(birenMalloc((void **)&a, N * sizeof(float)));
  OK(birenMalloc((void **)&b, M * sizeof(float)));
  OK(birenMemcpy(b, hb, sizeof hb, birenMemcpyHostToDevice));
  OK(birenMemset(a, 1, N * sizeof(float)));
  OK(birenFree(a));
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(back, b, sizeof back, birenMemcpyDeviceToHost));
  for (int i = 0; i < M; i++) EXPECT(back[i] == hb[i]);
  OK(birenFree(b));
  OK(birenDeviceSynchronize());
  EXPECT(findings == 0);
  return 0;
}

static int large_free_keeps_neighbour(void) { return large_free_keeps_neighbour_with(0); }
static int large_free_keeps_neighbour_validator(void) { return large_free_keeps_neighbour_with(1); }

/* Many sizes, frees between live neighbours, every live byte compared. */
static int large_frees_between_live_neighbours(void) {
  enum { K = 12 };
  unsigned char *p[K];
  size_t sz[K];
  static unsigned char host[3 << 20];
  for (int i = 0; i < K; i++) {
    sz[i] = (size_t)(1 << 20) + (size_t)i * 4099 + 17; /* >= 1 MiB, unaligned */
    OK(birenMalloc((void **)&p[i], sz[i]));
    memset(host, 0x40 + i, sz[i]);
    OK(birenMemcpy(p[i], host, sz[i], birenMemcpyHostToDevice));
  }
  for (int i = 0; i < K; i += 2) OK(birenFree(p[i]));
  OK(birenDeviceSynchronize());
  for (int i = 1; i < K; i += 2) {
    OK(birenMemcpy(host, p[i], sz[i], birenMemcpyDeviceToHost));
    for (size_t j = 0; j < sz[i]; j++)
      if (host[j] != (unsigned char)(0x40 + i)) {
        fprintf(stderr, "    allocation %d byte %zu is %d\n", i, j, host[j]);
        return 1;
      }
    OK(birenFree(p[i]));
  }
  return 0;
}

/* ---- 2. birenLaunchKernelArgs checks argSizes ------------------------------------------------- */

static void nop_kernel(void **args) { (void)args; }

static int launch_args_refuses_hostile_sizes(void) {
  int v = 7;
  void *args[16];
  size_t sizes[16];
  for (int i = 0; i < 16; i++) {
    args[i] = &v;
    sizes[i] = SIZE_MAX;
  }
  dim3 one = birenDim3(1, 1, 1);
  EXPECT_CODE(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 16, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  sizes[0] = SIZE_MAX;
  EXPECT_CODE(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 1, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  sizes[0] = (size_t)1 << 40;
  EXPECT_CODE(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 1, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  sizes[0] = 0;
  EXPECT_CODE(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 1, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  sizes[0] = 4097;
  EXPECT_CODE(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 1, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  sizes[0] = 4096;
  static unsigned char big[4096];
  args[0] = big;
  OK(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 1, 0, NULL));
  OK(birenDeviceSynchronize());
  return 0;
}

/* ---- 5. a handle of the wrong type is INVALID_HANDLE ----------------------------------------- */

static int cross_typed_handles_are_refused(void) {
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  EXPECT_CODE(birenEventDestroy((birenEvent_t)s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventRecord((birenEvent_t)s, NULL), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventQuery((birenEvent_t)s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamDestroy((birenStream_t)e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamSynchronize((birenStream_t)e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamWaitEvent((birenStream_t)e, (birenEvent_t)s), BIREN_ERROR_INVALID_HANDLE);
  /* both still work */
  OK(birenEventRecord(e, s));
  OK(birenStreamSynchronize(s));
  OK(birenEventQuery(e));
  OK(birenEventDestroy(e));
  OK(birenStreamDestroy(s));
  return 0;
}

/* ---- 6. every copy touching a known allocation is bounds-checked, whatever the kind --------- */

static int host_to_host_into_device_memory_is_bounds_checked(void) {
  unsigned char *a, *b;
  static unsigned char host[8192], back[4096];
  OK(birenMalloc((void **)&a, 4096));
  OK(birenMalloc((void **)&b, 4096));
  OK(birenMemset(b, 0x77, 4096));
  memset(host, 0x11, sizeof host);
  EXPECT_CODE(birenMemcpy(a, host, 8192, birenMemcpyHostToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpy(a + 4000, host, 200, birenMemcpyHostToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpy(host, a, 8192, birenMemcpyHostToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpyAsync(a, host, 8192, birenMemcpyHostToHost, NULL), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenMemcpy(back, b, sizeof back, birenMemcpyDeviceToHost));
  for (int i = 0; i < 4096; i++) EXPECT(back[i] == 0x77);
  /* within bounds, a HostToHost copy into device memory works */
  OK(birenMemcpy(a, host, 4096, birenMemcpyHostToHost));
  OK(birenFree(a));
  OK(birenFree(b));
  return 0;
}

static int pinned_host_buffer_overrun_is_refused(void) {
  unsigned char *pinned, *d;
  OK(birenMallocHost((void **)&pinned, 1024));
  OK(birenMalloc((void **)&d, 4096));
  EXPECT_CODE(birenMemcpy(d, pinned, 2048, birenMemcpyHostToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpy(pinned, d, 2048, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpy(pinned + 512, d, 1024, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenMemcpy(pinned, d, 1024, birenMemcpyDeviceToHost));
  OK(birenFreeHost(pinned));
  OK(birenFree(d));
  return 0;
}

/* ---- frees deferred behind pending work do not slow the device down -------------------------- */

static void hold_until_flag(void *p) {
  while (!__atomic_load_n((volatile int *)p, __ATOMIC_SEQ_CST)) {
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
}

static void nothing(void **args) { (void)args; }

static double launches_then_sync(birenStream_t s, int n) {
  double t0 = now_s();
  for (int i = 0; i < n; i++)
    if (birenLaunchKernel(nothing, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, s) != BIREN_SUCCESS) return -1;
  if (birenStreamSynchronize(s) != BIREN_SUCCESS) return -1;
  return now_s() - t0;
}

/* Found by the stress test's churners: every completed op scanned every free deferred behind
 * pending work, under one lock, so with thousands of such frees the device crawled (8 workers
 * made 21 rounds in 40 s instead of 17 000) and the watchdog saw a hang. Now a completion looks
 * at the oldest deferred free only. Ratio of the same launches with and without 20 000 deferred
 * frees (was > 20x; the bound leaves room for a loaded machine). */
static int deferred_frees_do_not_slow_completions(void) {
  enum { FREES = 20000, LAUNCHES = 3000 };
  birenStream_t a, b;
  OK(birenStreamCreate(&a));
  OK(birenStreamCreateWithFlags(&b, birenStreamNonBlocking));
  double without = 1e9;
  for (int r = 0; r < 3; r++) {
    double t = launches_then_sync(b, LAUNCHES);
    EXPECT(t >= 0);
    if (t < without) without = t;
  }
  static int flag;
  __atomic_store_n(&flag, 0, __ATOMIC_SEQ_CST);
  OK(birenLaunchHostFunc(a, hold_until_flag, &flag)); /* stream a stays busy */
  void **p = malloc(sizeof *p * FREES);
  EXPECT(p != NULL);
  for (int i = 0; i < FREES; i++) OK(birenMalloc(&p[i], 64));
  for (int i = 0; i < FREES; i++) OK(birenFree(p[i])); /* each waits for stream a */
  size_t freemem = 0, total = 0;
  OK(birenMemGetInfo(&freemem, &total));
  double with = launches_then_sync(b, LAUNCHES);
  __atomic_store_n(&flag, 1, __ATOMIC_SEQ_CST);
  OK(birenDeviceSynchronize());
  size_t after = 0;
  OK(birenMemGetInfo(&after, &total));
  EXPECT(with >= 0);
  if (with > 5 * without + 0.05)
    fprintf(stderr, "    %d launches: %.1f ms with %d deferred frees, %.1f ms without\n", LAUNCHES, with * 1e3, FREES,
            without * 1e3);
  EXPECT(with <= 5 * without + 0.05);
  EXPECT(after >= freemem + (size_t)FREES * 64); /* the deferred frees came back */
  free(p);
  OK(birenStreamDestroy(a));
  OK(birenStreamDestroy(b));
  return 0;
}

/* Found by the graphs helper: with 64 or more destroyed streams still holding work, every
 * stream create rescanned them all, so a loop of create + wait + destroy slowed down
 * quadratically (under load, 2 us per round for the first 2000 rounds, 161 us for rounds 6000-8000). */
static int destroyed_busy_streams_do_not_slow_creation(void) {
  enum { ROUNDS = 16000, PART = 4000 };
  birenEvent_t never;
  OK(birenEventCreate(&never));
  double part[ROUNDS / PART];
  for (int k = 0; k < ROUNDS / PART; k++) {
    double t0 = now_s();
    for (int i = 0; i < PART; i++) {
      birenStream_t s;
      OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
      OK(birenStreamWaitEvent(s, never)); /* busy until the event is recorded or destroyed */
      OK(birenStreamDestroy(s));
    }
    part[k] = now_s() - t0;
  }
  OK(birenEventDestroy(never)); /* releases every wait */
  OK(birenDeviceSynchronize());
  double first = part[0], last = part[ROUNDS / PART - 1];
  if (getenv("BIREN_TEST_VERBOSE") || last > 4 * first + 0.01)
    fprintf(stderr, "    rounds 1-%d: %.1f ms, rounds %d-%d: %.1f ms\n", PART, first * 1e3, ROUNDS - PART + 1, ROUNDS,
            last * 1e3);
  EXPECT(last <= 4 * first + 0.01);
  return 0;
}

/* ---- 11. creating and destroying streams is O(1) amortised ----------------------------------- */

static double create_destroy_batch(int n) {
  birenStream_t *s = malloc(sizeof *s * (size_t)n);
  double t0 = now_s();
  for (int i = 0; i < n; i++)
    if (birenStreamCreate(&s[i]) != BIREN_SUCCESS) return -1;
  for (int i = 0; i < n; i++)
    if (birenStreamDestroy(s[i]) != BIREN_SUCCESS) return -1;
  double t = now_s() - t0;
  free(s);
  return t;
}

static int stream_create_does_not_slow_with_live_streams(void) {
  enum { LIVE = 150000, BATCH = 5000 };
  birenStream_t *live = malloc(sizeof *live * LIVE);
  double empty = 1e9, full = 1e9;
  for (int r = 0; r < 3; r++) {
    double t = create_destroy_batch(BATCH);
    EXPECT(t >= 0);
    if (t < empty) empty = t;
  }
  for (int i = 0; i < LIVE; i++) OK(birenStreamCreate(&live[i]));
  for (int r = 0; r < 3; r++) {
    double t = create_destroy_batch(BATCH);
    EXPECT(t >= 0);
    if (t < full) full = t;
  }
  for (int i = 0; i < LIVE; i++) OK(birenStreamDestroy(live[i]));
  free(live);
  printf("    %d creates+destroys: %.2f ms with no live streams, %.2f ms with %d\n", BATCH, empty * 1e3, full * 1e3, LIVE);
  EXPECT(full < empty * 4 + 0.005); /* was ~100x slower */
  return 0;
}

/* ---- 3. a synchronize stalled on a future wait is reported across devices -------------------- */

static int ran_flag;
static void set_flag(void **args) {
  (void)args;
  __atomic_store_n(&ran_flag, 1, __ATOMIC_SEQ_CST);
}

static int future_waits_across_devices_are_counted(void) {
  int count;
  OK(birenGetDeviceCount(&count));
  EXPECT(count == 2);
  birenStream_t s0, s1, s1b;
  birenEvent_t e1, e2;
  OK(birenSetDevice(1));
  OK(birenStreamCreate(&s1));
  OK(birenStreamCreate(&s1b));
  OK(birenEventCreate(&e1));
  OK(birenEventCreate(&e2));
  OK(birenSetDevice(0));
  OK(birenStreamCreate(&s0));
  /* A future wait on device 0, resolved by a record on device 1. */
  OK(birenStreamWaitEvent(s0, e1));
  OK(birenEventRecord(e1, s1));
  OK(birenStreamSynchronize(s0));
  /* A future wait on device 1 that nothing will record: the sync must report it. */
  OK(birenSetDevice(1));
  OK(birenStreamWaitEvent(s1b, e2));
  double t0 = now_s();
  EXPECT_CODE(birenStreamSynchronize(s1b), BIREN_ERROR_DEADLOCK);
  EXPECT(now_s() - t0 < 10);
  OK(birenEventRecord(e2, s1)); /* resolves it: the stream drains */
  OK(birenStreamSynchronize(s1b));
  OK(birenStreamDestroy(s1));
  OK(birenStreamDestroy(s1b));
  OK(birenEventDestroy(e1));
  OK(birenEventDestroy(e2));
  OK(birenDeviceReset());
  OK(birenSetDevice(0));
  OK(birenStreamDestroy(s0));
  return 0;
}

/* A cycle closed across devices is refused at the record that would close it. */
static int cycle_across_devices_is_refused(void) {
  birenStream_t a, b;
  birenEvent_t ea, eb;
  OK(birenSetDevice(0));
  OK(birenStreamCreate(&a));
  OK(birenEventCreate(&ea));
  OK(birenSetDevice(1));
  OK(birenStreamCreate(&b));
  OK(birenEventCreate(&eb));
  OK(birenStreamWaitEvent(a, eb));
  OK(birenStreamWaitEvent(b, ea));
  OK(birenEventRecord(ea, a));
  EXPECT_CODE(birenEventRecord(eb, b), BIREN_ERROR_DEADLOCK);
  double t0 = now_s();
  EXPECT_CODE(birenStreamSynchronize(b), BIREN_ERROR_DEADLOCK);
  EXPECT(now_s() - t0 < 10);
  OK(birenDeviceReset());
  OK(birenSetDevice(0));
  OK(birenDeviceReset());
  return 0;
}

/* ---- 4. a reset does not lose count of futures that other devices still hold ----------------- */

static int reset_keeps_count_of_other_devices_futures(void) {
  birenStream_t s, s2;
  birenEvent_t e;
  OK(birenSetDevice(1));
  OK(birenEventCreate(&e)); /* lives on device 1: device 0's reset keeps it */
  OK(birenSetDevice(0));
  OK(birenStreamCreate(&s));
  OK(birenStreamWaitEvent(s, e));
  OK(birenDeviceReset());
  OK(birenStreamCreate(&s2));
  OK(birenStreamWaitEvent(s2, e));
  double t0 = now_s();
  EXPECT_CODE(birenStreamSynchronize(s2), BIREN_ERROR_DEADLOCK); /* was: a hang */
  EXPECT(now_s() - t0 < 10);
  OK(birenDeviceReset());
  OK(birenSetDevice(1));
  OK(birenEventDestroy(e));
  OK(birenDeviceReset());
  OK(birenSetDevice(0));
  return 0;
}

/* ---- 8. destroying an event releases the streams waiting for its first record --------------- */

static int destroying_an_awaited_event_releases_the_wait(void) {
  birenStream_t s;
  birenEvent_t e;
  int *d, h = 0, one = 1;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMemset(d, 0, sizeof(int)));
  __atomic_store_n(&ran_flag, 0, __ATOMIC_SEQ_CST);
  OK(birenStreamWaitEvent(s, e));
  OK(birenLaunchKernel(set_flag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, s));
  OK(birenMemcpyAsync(d, &one, sizeof one, birenMemcpyHostToDevice, s));
  EXPECT(birenStreamQuery(s) == BIREN_ERROR_NOT_READY);
  birenSetDeviceValidator(1);
  findings = 0;
  birenSetValidatorCallback(count_finding, NULL);
  OK(birenEventDestroy(e));
  EXPECT(findings == 1);
  EXPECT(strstr(last_finding, "released") != NULL);
  OK(birenStreamSynchronize(s));
  EXPECT(__atomic_load_n(&ran_flag, __ATOMIC_SEQ_CST) == 1);
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost)); /* was: DEADLOCK */
  EXPECT(h == 1);
  EXPECT_CODE(birenEventDestroy(e), BIREN_ERROR_INVALID_HANDLE);
  OK(birenFree(d));
  OK(birenStreamDestroy(s));
  return 0;
}

/* ---- 7. fork(): the child's calls fail at once, never hang ----------------------------------- */

static void add_one(void **args) {
  int *p = *(int **)args[0];
  p[birenThreadIdx().x] += 1;
}

static int child_after_fork(void) {
  int *d = NULL;
  alarm(20); /* a hang is a failure */
  if (birenDeviceSynchronize() != BIREN_ERROR_NOT_INITIALIZED) return 10;
  if (birenStreamSynchronize(NULL) != BIREN_ERROR_NOT_INITIALIZED) return 11;
  if (birenMalloc((void **)&d, 128) != BIREN_ERROR_NOT_INITIALIZED) return 12;
  if (birenInit() != BIREN_ERROR_NOT_SUPPORTED) return 13;
  if (birenMalloc((void **)&d, 128) != BIREN_ERROR_NOT_INITIALIZED) return 14;
  if (birenGetLastError() != BIREN_ERROR_NOT_INITIALIZED) return 15;
  return 0;
}

static int fork_child_fails_cleanly_and_parent_goes_on(void) {
  int *d, h[32] = {0};
  birenStream_t s;
  SKIP_UNDER_VALGRIND("the forked child abandons the parent's runtime by design (its threads did not "
                      "follow the fork; src/runtime/mod.rs RUNTIME); memcheck's leak check at the "
                      "child's exit reports that memory as definitely lost and makes the child exit 99");
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenStreamCreate(&s));
  OK(birenMemcpyAsync(d, h, sizeof h, birenMemcpyHostToDevice, s));
  pid_t pid = fork();
  EXPECT(pid >= 0);
  if (pid == 0) _exit(child_after_fork());
  int status = 0;
  EXPECT(waitpid(pid, &status, 0) == pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fprintf(stderr, "    child: %s %d\n", WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* the parent goes on */
  OK(BIREN_LAUNCH(add_one, birenDim3(1, 1, 1), birenDim3(32, 1, 1), 0, s, d));
  OK(birenStreamSynchronize(s));
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 32; i++) EXPECT(h[i] == 1);
  OK(birenStreamDestroy(s));
  OK(birenFree(d));
  return 0;
}

/* ---- 10. a kernel that faults fails its launch; the process lives ---------------------------- */

static void write_through(void **args) {
  int *p = *(int **)args[0];
  if (birenThreadIdx().x == 3) *(volatile int *)p = 42;
}

static int divisor;
static void divide(void **args) {
  int *out = *(int **)args[0];
  out[birenThreadIdx().x] = 100 / *(volatile int *)&divisor;
}

static int deep(volatile char *prev, int n) {
  volatile char buf[4096];
  buf[0] = (char)n;
  if (prev) buf[1] = prev[0];
  return n > 0 ? deep(buf, n - 1) + buf[0] : buf[0];
}
static void overflow(void **args) {
  (void)args;
  (void)deep(NULL, 1 << 20); /* far more than a fiber stack */
}

static int faulting_kernel(void *ptr, const char *expect) {
  void *p = ptr;
  size_t size = sizeof p;
  OK(birenKernelRegister(write_through, "write_through", 1, &size));
  OK(BIREN_LAUNCH(write_through, birenDim3(2, 1, 1), birenDim3(8, 1, 1), 0, NULL, p));
  birenError_t e = birenDeviceSynchronize();
  EXPECT_CODE(e, BIREN_ERROR_ILLEGAL_ADDRESS);
  EXPECT(findings >= 1);
  EXPECT(strstr(all_findings, "write_through") != NULL);
  EXPECT(strstr(all_findings, expect) != NULL);
  EXPECT(strstr(all_findings, "thread (3,0,0)") != NULL);
  /* sticky until reset, then the device works */
  EXPECT_CODE(birenMalloc(&p, 16), BIREN_ERROR_ILLEGAL_ADDRESS);
  OK(birenDeviceReset());
  OK(birenMalloc(&p, 16));
  OK(BIREN_LAUNCH(write_through, birenDim3(1, 1, 1), birenDim3(8, 1, 1), 0, NULL, p));
  OK(birenDeviceSynchronize());
  OK(birenFree(p));
  return 0;
}

static int null_pointer_in_a_kernel_is_an_illegal_address(void) {
  SKIP_UNDER_VALGRIND("a kernel writes through a null pointer: memcheck counts that deliberate invalid "
                      "write as an error");
  findings = 0;
  birenSetValidatorCallback(count_finding, NULL);
  birenSetDeviceValidator(1);
  return faulting_kernel(NULL, "0x0");
}

static int wild_pointer_in_a_kernel_is_an_illegal_address(void) {
  SKIP_UNDER_VALGRIND("a kernel writes to address 0xdead0000: memcheck counts that deliberate invalid "
                      "write as an error");
  findings = 0;
  birenSetValidatorCallback(count_finding, NULL);
  birenSetDeviceValidator(1);
  return faulting_kernel((void *)(uintptr_t)0xdead0000, "0xdead0000");
}

static int division_by_zero_fails_the_launch(void) {
  int *d;
  OK(birenMalloc((void **)&d, 64 * sizeof(int)));
  divisor = 0;
  findings = 0;
  birenSetValidatorCallback(count_finding, NULL);
  birenSetDeviceValidator(1);
  OK(BIREN_LAUNCH(divide, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, NULL, d));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT(strstr(all_findings, "SIGFPE") != NULL);
  OK(birenDeviceReset());
  return 0;
}

static int stack_overflow_in_a_kernel_fails_the_launch(void) {
  findings = 0;
  birenSetValidatorCallback(count_finding, NULL);
  birenSetDeviceValidator(1);
  OK(birenKernelRegister(overflow, "overflow", 0, NULL));
  OK(birenLaunchKernel(overflow, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_ILLEGAL_ADDRESS);
  EXPECT(strstr(all_findings, "overflow") != NULL);
  OK(birenDeviceReset());
  /* the unit that caught it still runs kernels */
  int *d;
  OK(birenMalloc((void **)&d, 64 * sizeof(int)));
  divisor = 1;
  for (int i = 0; i < 8; i++) OK(BIREN_LAUNCH(divide, birenDim3(4, 1, 1), birenDim3(16, 1, 1), 0, NULL, d));
  OK(birenDeviceSynchronize());
  return 0;
}

/* A fault outside a kernel is not the runtime's: the process ends as it would without it. */
static int fault_outside_a_kernel_still_kills_the_process(void) {
  SKIP_UNDER_VALGRIND("a forked child writes through a null pointer: memcheck reports that deliberate "
                      "invalid write (and the runtime the child abandons, as definitely lost)");
  pid_t pid = fork();
  EXPECT(pid >= 0);
  if (pid == 0) {
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none); /* no core file for the expected crash */
    volatile int *p = NULL;
    *p = 1;
    _exit(0);
  }
  int status = 0;
  EXPECT(waitpid(pid, &status, 0) == pid);
  EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
  return 0;
}

/* TESTS-END */

static const test_case tests[] = {
    TEST(large_free_keeps_neighbour),
    TEST(large_free_keeps_neighbour_validator),
    TEST(large_frees_between_live_neighbours),
    TEST(launch_args_refuses_hostile_sizes),
    TEST(cross_typed_handles_are_refused),
    TEST(host_to_host_into_device_memory_is_bounds_checked),
    TEST(pinned_host_buffer_overrun_is_refused),
    TEST(stream_create_does_not_slow_with_live_streams),
    TEST(future_waits_across_devices_are_counted),
    TEST(cycle_across_devices_is_refused),
    TEST(reset_keeps_count_of_other_devices_futures),
    TEST(destroying_an_awaited_event_releases_the_wait),
    TEST(fork_child_fails_cleanly_and_parent_goes_on),
    TEST(null_pointer_in_a_kernel_is_an_illegal_address),
    TEST(wild_pointer_in_a_kernel_is_an_illegal_address),
    TEST(division_by_zero_fails_the_launch),
    TEST(stack_overflow_in_a_kernel_fails_the_launch),
    TEST(fault_outside_a_kernel_still_kills_the_process),
    TEST(deferred_frees_do_not_slow_completions),
    TEST(destroyed_busy_streams_do_not_slow_creation),
};

int main(void) {
  setenv("BIREN_DEVICE_COUNT", "2", 1); /* the cross-device tests need two */
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("test_reliability", tests, before_each, 60);
}
