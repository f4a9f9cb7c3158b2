/* Faults: a kernel that traps, a kernel the validator catches writing out of bounds or after a
 * free, host functions and kernels that call APIs they may not, a process that exits with work
 * queued, a host thread that dies while its stream has work, and device resets racing with
 * other threads' work. After each fault the runtime must answer correctly.
 *
 * BIREN_UNDER_VALGRIND=1 (set by `make valgrind`) relaxes the time bounds and shortens the
 * reset race. */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <sys/types.h>
#include <sys/wait.h>

static void sleep_ms(double ms) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000.0);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
  nanosleep(&ts, NULL);
}

static void before_each(void) {
  birenSetDeviceValidator(0);
  birenSetValidatorCallback(NULL, NULL);
  birenError_t e = birenDeviceReset();
  if (e != BIREN_SUCCESS) fprintf(stderr, "    before_each: birenDeviceReset returned %s\n", birenGetErrorName(e));
  (void)birenGetLastError();
}

/* ---- kernels ---------------------------------------------------------------------------------- */

static unsigned gid(void) { return birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x; }

/* args: (int *p, int n, int v): p[i] = v + i for i < n. */
static void fill_iota(void **args) {
  int *p = *(int **)args[0];
  int n = *(int *)args[1], v = *(int *)args[2];
  int i = (int)gid();
  if (i < n) p[i] = v + i;
}

/* args: (int *p, int at): thread 0 of block 0 writes p[at] (an index chosen out of bounds). */
static void write_at(void **args) {
  int *p = *(int **)args[0];
  int at = *(int *)args[1];
  if (gid() == 0) p[at] = 12345;
}

/* args: (int *ran): thread 3 of block 1 traps; every thread that gets past counts itself. */
static void trap_in_block_1(void **args) {
  int *ran = *(int **)args[0];
  if (birenBlockIdx().x == 1 && birenThreadIdx().x == 3) birenTrap();
  __atomic_fetch_add(ran, 1, __ATOMIC_SEQ_CST);
}

/* Traps while the other threads of its block wait at a barrier. */
static void trap_at_barrier(void **args) {
  (void)args;
  if (birenThreadIdx().x == 0) birenTrap();
  birenSyncThreads();
}

/* args: (double ms) */
static void spin_kernel(void **args) { spin_ms(*(double *)args[0]); }

/* args: (int *counter, double ms): spins, then counts. */
static void spin_count(void **args) {
  int *c = *(int **)args[0];
  spin_ms(*(double *)args[1]);
  __atomic_fetch_add(c, 1, __ATOMIC_SEQ_CST);
}

static int load_int(const int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }

/* A kernel (on a compute unit) may not synchronize either. args: (int *codes): codes[0..2]. */
static void kernel_calls_sync(void **args) {
  int *codes = *(int **)args[0];
  codes[0] = (int)birenStreamSynchronize(NULL);
  codes[1] = (int)birenDeviceSynchronize();
  int x = 0, y = 0;
  codes[2] = (int)birenMemcpy(&x, &y, sizeof x, birenMemcpyHostToHost);
}

/* Checks that the device works normally: allocate, fill by kernel, copy back, compare. */
static int device_works(void) {
  enum { N = 1000 };
  int *d = NULL, h[N];
  int n = N, v = 7;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, sizeof h));
  OK(BIREN_LAUNCH(fill_iota, birenDim3(4, 1, 1), birenDim3(256, 1, 1), 0, s, d, n, v));
  OK(birenMemcpyAsync(h, d, sizeof h, birenMemcpyDeviceToHost, s));
  OK(birenStreamSynchronize(s));
  for (int i = 0; i < N; i++) EXPECT(h[i] == 7 + i);
  OK(birenFree(d));
  OK(birenStreamDestroy(s));
  OK(birenDeviceSynchronize());
  return 0;
}

/* ---- a kernel that traps ------------------------------------------------------------------- */

static int trap_fails_the_launch_sticky_until_reset(void) {
  int ran = 0;
  int *pran = &ran;
  birenStream_t s, other;
  birenEvent_t e;
  int *d = NULL;
  OK(birenStreamCreate(&s));
  OK(birenStreamCreate(&other));
  OK(birenEventCreate(&e));
  OK(birenMalloc((void **)&d, 4096));
  /* 4 blocks of 8 threads, block 1 traps: the launch fails and no later block starts. */
  OK(BIREN_LAUNCH(trap_in_block_1, birenDim3(4, 1, 1), birenDim3(8, 1, 1), 0, s, pran));
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT(load_int(&ran) < 32);
  EXPECT_CODE(birenGetLastError(), BIREN_ERROR_LAUNCH_FAILURE);
  /* Sticky: every call on the device answers the error, and changes nothing. */
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenStreamSynchronize(other), BIREN_ERROR_LAUNCH_FAILURE);
  void *p = (void *)&ran;
  EXPECT_CODE(birenMalloc(&p, 64), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT(p == (void *)&ran);
  birenStream_t s2 = NULL;
  EXPECT_CODE(birenStreamCreate(&s2), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT(s2 == NULL);
  int n = 10, v = 1;
  EXPECT_CODE(BIREN_LAUNCH(fill_iota, birenDim3(1, 1, 1), birenDim3(32, 1, 1), 0, other, d, n, v), BIREN_ERROR_LAUNCH_FAILURE);
  int h[4] = {0, 0, 0, 0};
  EXPECT_CODE(birenMemcpy(d, h, sizeof h, birenMemcpyHostToDevice), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenEventRecord(e, s), BIREN_ERROR_LAUNCH_FAILURE);
  /* The reset clears it: old handles are gone, the device works. */
  OK(birenDeviceReset());
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventQuery(e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenFree(d), BIREN_ERROR_INVALID_DEVICE_POINTER);
  (void)birenGetLastError();
  OK(birenDeviceSynchronize());
  EXPECT(device_works() == 0);
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  return 0;
}

/* A trap while sibling threads wait at a barrier: no hang, the launch fails; a host thread
 * blocked in a synchronize returns with the error; a reset recovers. */
static int trap_at_a_barrier_and_a_blocked_synchronize(void) {
  birenStream_t s;
  double ms = 150;
  OK(birenStreamCreate(&s));
  OK(BIREN_LAUNCH(spin_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, ms));
  OK(birenLaunchKernel(trap_at_barrier, birenDim3(2, 1, 1), birenDim3(64, 1, 1), NULL, 0, s));
  /* enqueued behind the trap, or refused if the trap has already happened (slow hosts) */
  birenError_t e = BIREN_LAUNCH(spin_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, ms);
  EXPECT(e == BIREN_SUCCESS || e == BIREN_ERROR_LAUNCH_FAILURE);
  double t0 = now_s();
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_LAUNCH_FAILURE); /* blocked while the first spin runs */
  EXPECT(now_s() - t0 < 10.0);
  OK(birenDeviceReset());
  EXPECT(device_works() == 0);
  return 0;
}

/* Many traps in a row, each followed by a reset: nothing accumulates, nothing breaks. */
static int repeated_trap_and_reset(void) {
  size_t free0 = 0, total = 0, free1 = 0;
  OK(birenMemGetInfo(&free0, &total));
  for (int i = 0; i < 50; i++) {
    int ran = 0, *pran = &ran;
    void *d = NULL;
    birenStream_t s;
    OK(birenStreamCreate(&s));
    OK(birenMalloc(&d, 1 << 16));
    OK(BIREN_LAUNCH(trap_in_block_1, birenDim3(3, 1, 1), birenDim3(4, 1, 1), 0, s, pran));
    EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
    OK(birenDeviceReset());
  }
  (void)birenGetLastError();
  OK(birenMemGetInfo(&free1, &total));
  EXPECT(free1 == free0);
  EXPECT(device_works() == 0);
  return 0;
}

/* ---- the validator catches a kernel writing out of bounds ----------------------------------- */

static char found[8192];
static int found_lines;
static void capture(const char *msg, void *user) {
  (void)user;
  size_t n = strlen(found);
  snprintf(found + n, sizeof found - n, "%s\n", msg);
  found_lines++;
}

static int validator_catches_out_of_bounds_write(void) {
  /* index of the bad write: just past the end (guard zone), in the padding of a 40-byte
   * allocation, and just before the start */
  static const int sizes[] = {64, 10, 64};
  static const int at[] = {64, 10, -1};
  for (int c = 0; c < 3; c++) {
    found[0] = 0;
    found_lines = 0;
    OK(birenSetValidatorCallback(capture, NULL));
    OK(birenSetDeviceValidator(1));
    int *d = NULL;
    birenStream_t s;
    OK(birenStreamCreate(&s));
    OK(birenMalloc((void **)&d, (size_t)sizes[c] * sizeof(int)));
    int where = at[c];
    OK(BIREN_LAUNCH(write_at, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, d, where));
    birenError_t e = birenStreamSynchronize(s);
    if (e != BIREN_ERROR_ILLEGAL_ADDRESS)
      fprintf(stderr, "    case %d: %d-int allocation, write at index %d: sync returned %s\n", c, sizes[c], where, birenGetErrorName(e));
    EXPECT_CODE(e, BIREN_ERROR_ILLEGAL_ADDRESS);
    EXPECT(strstr(found, "out of bounds") != NULL);
    /* sticky */
    EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_ILLEGAL_ADDRESS);
    EXPECT_CODE(birenMalloc((void **)&d, 16), BIREN_ERROR_ILLEGAL_ADDRESS);
    /* recovery */
    OK(birenSetDeviceValidator(0));
    OK(birenDeviceReset());
    OK(birenSetValidatorCallback(NULL, NULL));
    (void)birenGetLastError();
    EXPECT(device_works() == 0);
  }
  return 0;
}

static int validator_catches_write_after_free(void) {
  found[0] = 0;
  found_lines = 0;
  OK(birenSetValidatorCallback(capture, NULL));
  OK(birenSetDeviceValidator(1));
  int *d = NULL;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, 1024));
  OK(birenFree(d));
  int where = 3;
  OK(BIREN_LAUNCH(write_at, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, d, where));
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_ILLEGAL_ADDRESS);
  EXPECT(strstr(found, "after free") != NULL || strstr(found, "freed") != NULL);
  OK(birenSetDeviceValidator(0));
  OK(birenDeviceReset());
  OK(birenSetValidatorCallback(NULL, NULL));
  (void)birenGetLastError();
  EXPECT(device_works() == 0);
  return 0;
}

/* ---- host functions and kernels that call what they may not ------------------------------- */

typedef struct hostfn_report {
  birenStream_t self, other;
  birenEvent_t ev;
  int *d;       /* device buffer the host function fills through a launch */
  int *counter; /* the launched kernel counts here */
  int codes[16];
  int done;
} hostfn_report;

static void forbidden_calls(void *p) {
  hostfn_report *r = p;
  int h = 0, g = 0;
  /* synchronizing calls: not permitted (they would wait for this very host function) */
  r->codes[0] = (int)birenStreamSynchronize(r->self);
  r->codes[1] = (int)birenStreamSynchronize(r->other);
  r->codes[2] = (int)birenStreamSynchronize(NULL);
  r->codes[3] = (int)birenDeviceSynchronize();
  r->codes[4] = (int)birenMemcpy(&h, &g, sizeof h, birenMemcpyHostToHost);
  r->codes[5] = (int)birenMemcpy(&h, r->d, sizeof h, birenMemcpyDeviceToHost);
  r->codes[6] = (int)birenMemset(r->d, 0, 4);
  r->codes[7] = (int)birenEventSynchronize(r->ev);
  r->codes[8] = (int)birenDeviceReset();
  /* non-synchronizing calls work */
  int n = 256, v = 100;
  double ms = 1;
  int *c = r->counter;
  r->codes[9] = (int)BIREN_LAUNCH(fill_iota, birenDim3(1, 1, 1), birenDim3(256, 1, 1), 0, r->other, r->d, n, v);
  r->codes[10] = (int)BIREN_LAUNCH(spin_count, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, r->self, c, ms);
  r->codes[11] = (int)birenEventRecord(r->ev, r->other);
  r->codes[12] = (int)birenStreamQuery(r->other); /* SUCCESS or NOT_READY */
  r->codes[13] = (int)birenMemsetAsync((char *)r->d + 2048, 0x11, 16, r->other);
  r->codes[14] = (int)birenLaunchHostFunc(r->other, NULL, NULL); /* INVALID_VALUE, as anywhere */
  __atomic_store_n(&r->done, 1, __ATOMIC_SEQ_CST);
}

static int host_function_may_not_synchronize_but_may_enqueue(void) {
  hostfn_report r;
  memset(&r, 0, sizeof r);
  int counter = 0;
  r.counter = &counter;
  for (int i = 0; i < 16; i++) r.codes[i] = -1;
  OK(birenStreamCreate(&r.self));
  OK(birenStreamCreateWithFlags(&r.other, birenStreamNonBlocking));
  OK(birenEventCreate(&r.ev));
  OK(birenMalloc((void **)&r.d, 4096));
  OK(birenLaunchHostFunc(r.self, forbidden_calls, &r));
  OK(birenStreamSynchronize(r.self)); /* the host function has returned */
  EXPECT(load_int(&r.done) == 1);
  /* its own launches were enqueued while it ran: synchronize again to cover them */
  OK(birenStreamSynchronize(r.self));
  OK(birenEventSynchronize(r.ev));
  OK(birenStreamSynchronize(r.other));
  static const char *names[] = {"birenStreamSynchronize(self)", "birenStreamSynchronize(other)", "birenStreamSynchronize(NULL)",
                                "birenDeviceSynchronize", "birenMemcpy H2H", "birenMemcpy D2H", "birenMemset",
                                "birenEventSynchronize", "birenDeviceReset"};
  int bad = 0;
  for (int i = 0; i <= 8; i++)
    if (r.codes[i] != BIREN_ERROR_NOT_PERMITTED) {
      fprintf(stderr, "    inside a host function %s returned %s, expected BIREN_ERROR_NOT_PERMITTED\n", names[i], birenGetErrorName((birenError_t)r.codes[i]));
      bad = 1;
    }
  EXPECT(!bad);
  EXPECT_CODE((birenError_t)r.codes[9], BIREN_SUCCESS);
  EXPECT_CODE((birenError_t)r.codes[10], BIREN_SUCCESS);
  EXPECT_CODE((birenError_t)r.codes[11], BIREN_SUCCESS);
  EXPECT(r.codes[12] == BIREN_SUCCESS || r.codes[12] == BIREN_ERROR_NOT_READY);
  EXPECT_CODE((birenError_t)r.codes[13], BIREN_SUCCESS);
  EXPECT_CODE((birenError_t)r.codes[14], BIREN_ERROR_INVALID_VALUE);
  /* what it enqueued ran */
  EXPECT(load_int(&counter) == 1);
  int h[256];
  OK(birenMemcpy(h, r.d, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 256; i++) EXPECT(h[i] == 100 + i);
  unsigned char b[16];
  OK(birenMemcpy(b, (char *)r.d + 2048, sizeof b, birenMemcpyDeviceToHost));
  for (int i = 0; i < 16; i++) EXPECT(b[i] == 0x11);
  /* nothing stuck, nothing sticky */
  OK(birenDeviceSynchronize());
  OK(birenFree(r.d));
  OK(birenStreamDestroy(r.self));
  OK(birenStreamDestroy(r.other));
  OK(birenEventDestroy(r.ev));
  return 0;
}

static int kernel_may_not_synchronize(void) {
  int codes[3] = {-1, -1, -1};
  int *pc = codes;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(BIREN_LAUNCH(kernel_calls_sync, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, pc));
  OK(birenStreamSynchronize(s));
  EXPECT_CODE((birenError_t)codes[0], BIREN_ERROR_NOT_PERMITTED);
  EXPECT_CODE((birenError_t)codes[1], BIREN_ERROR_NOT_PERMITTED);
  EXPECT_CODE((birenError_t)codes[2], BIREN_ERROR_NOT_PERMITTED);
  OK(birenDeviceSynchronize()); /* not sticky */
  OK(birenStreamDestroy(s));
  return 0;
}

/* ---- a process that exits with work queued ----------------------------------------------- */

static volatile int child_blocked_ready;
static void *child_blocked_sync(void *arg) {
  birenStream_t s = arg;
  child_blocked_ready = 1;
  (void)birenStreamSynchronize(s); /* still waiting when main returns */
  return NULL;
}

static void child_hostfn(void *p) { (void)p; }

/* The child: enqueues ~10 s of work on two streams (kernels, copies, host functions), then
 * leaves without synchronizing. */
static int child_main(const char *mode) {
  if (birenInit() != BIREN_SUCCESS) return 10;
  birenStream_t s[2];
  static char h[2][1 << 20];
  void *d = NULL;
  if (birenMalloc(&d, sizeof h[0]) != BIREN_SUCCESS) return 11;
  for (int i = 0; i < 2; i++)
    if (birenStreamCreate(&s[i]) != BIREN_SUCCESS) return 12;
  double ms = 100;
  for (int k = 0; k < 100; k++) {
    for (int i = 0; i < 2; i++) {
      if (BIREN_LAUNCH(spin_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s[i], ms) != BIREN_SUCCESS) return 13;
      if (birenMemcpyAsync(d, h[i], sizeof h[i], birenMemcpyHostToDevice, s[i]) != BIREN_SUCCESS) return 14;
      if (birenLaunchHostFunc(s[i], child_hostfn, NULL) != BIREN_SUCCESS) return 15;
    }
  }
  if (!strcmp(mode, "blocked-thread")) {
    pthread_t t;
    pthread_create(&t, NULL, child_blocked_sync, s[0]);
    while (!child_blocked_ready) sleep_ms(1);
    sleep_ms(20);
  } else {
    sleep_ms(20); /* let the first kernels start */
  }
  if (!strcmp(mode, "exit")) exit(0);
  return 0; /* from main: "return", "validator", "trace", "blocked-thread" */
}

/* This program's path: readlink of /proc/self/exe (valgrind answers it with the client's path;
 * exec'ing /proc/self/exe itself would run valgrind's tool binary). */
static char self_path[4096];

/* Runs this program as a child in `mode`, with `env` (NAME=value or NULL); returns its wait
 * status through *status and the seconds it took. -1 if it had to be killed (hang). */
static double run_child(const char *mode, const char *env, const char *errfile, int *status) {
  double t0 = now_s();
  pid_t pid = fork();
  if (pid == 0) {
    if (env != NULL) putenv((char *)env);
    if (freopen(errfile, "w", stderr) == NULL) _exit(126);
    char *argv[] = {(char *)"test_faults", (char *)"--child", (char *)mode, NULL};
    execv(self_path, argv);
    _exit(127);
  }
  if (pid < 0) return -2;
  double limit = 30;
  for (;;) {
    pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid) return now_s() - t0;
    if (now_s() - t0 > limit) {
      kill(pid, SIGKILL);
      waitpid(pid, status, 0);
      return -1;
    }
    sleep_ms(5);
  }
}

static int exit_with_work_queued_is_prompt_and_clean(void) {
  static char trace_env[64];
  snprintf(trace_env, sizeof trace_env, "BIREN_TRACE=/tmp/biren_faults_trace_%d.json", (int)getpid());
  struct {
    const char *mode, *env;
  } cases[] = {
      {"return", NULL},
      {"exit", NULL},
      {"blocked-thread", NULL},
      {"validator", "BIREN_VALIDATOR=1"},
      {"trace", trace_env},
  };
  /* ~10 s of queued work per stream: leaving must not wait for it. */
  double bound = under_valgrind() ? 8.0 : 3.0;
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int st = 0;
    char errfile[96];
    snprintf(errfile, sizeof errfile, "/tmp/biren_faults_child_%d.txt", (int)getpid());
    double took = run_child(cases[i].mode, cases[i].env, errfile, &st);
    /* with the validator on, the child reports at exit what it left alive */
    char text[4096] = "";
    FILE *f = fopen(errfile, "r");
    if (f != NULL) {
      size_t got = fread(text, 1, sizeof text - 1, f);
      text[got] = 0;
      fclose(f);
    }
    unlink(errfile);
    if (!strcmp(cases[i].mode, "validator") && strstr(text, "2 stream(s)") == NULL) {
      printf("    child validator: no leak report naming its 2 streams at exit; stderr was:\n%s\n", text);
      bad = 1;
    }
    const char *what = took < 0 ? "HUNG (killed after 30 s)"
                       : WIFSIGNALED(st) ? "killed by a signal"
                       : !WIFEXITED(st) || WEXITSTATUS(st) != 0 ? "exited non-zero"
                       : took > bound ? "slow" : "ok";
    printf("    child %-15s %s: %s in %.2f s (%s %d)\n", cases[i].mode, cases[i].env ? cases[i].env : "", what, took,
           WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? WTERMSIG(st) : -1);
    if (strcmp(what, "ok") != 0) bad = 1;
  }
  char path[80];
  snprintf(path, sizeof path, "/tmp/biren_faults_trace_%d.json", (int)getpid());
  unlink(path);
  EXPECT(!bad);
  return 0;
}

/* ---- a host thread that dies holding a stream with queued work ------------------------------- */

typedef struct dying {
  birenStream_t s;
  birenEvent_t never; /* a wait on it, never recorded by the dying thread */
  int *counter;
  int launched;
} dying;

static void *dies_with_work_queued(void *arg) {
  dying *d = arg;
  double ms = 20;
  int *c = d->counter;
  if (birenStreamCreate(&d->s) != BIREN_SUCCESS) return NULL;
  if (birenEventCreate(&d->never) != BIREN_SUCCESS) return NULL;
  for (int i = 0; i < 10; i++)
    if (BIREN_LAUNCH(spin_count, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, d->s, c, ms) == BIREN_SUCCESS) d->launched++;
  /* the rest of the stream waits for an event the thread never records */
  if (birenStreamWaitEvent(d->s, d->never) != BIREN_SUCCESS) return NULL;
  for (int i = 0; i < 5; i++)
    if (BIREN_LAUNCH(spin_count, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, d->s, c, ms) == BIREN_SUCCESS) d->launched++;
  pthread_exit(NULL);
}

static int thread_dies_holding_a_stream_with_work(void) {
  int counter = 0;
  dying d;
  memset(&d, 0, sizeof d);
  d.counter = &counter;
  pthread_t t;
  EXPECT(pthread_create(&t, NULL, dies_with_work_queued, &d) == 0);
  EXPECT(pthread_join(t, NULL) == 0);
  EXPECT(d.launched == 15);
  /* the stream outlives its creator: query, enqueue, resolve its wait, synchronize, destroy */
  birenError_t q = birenStreamQuery(d.s);
  EXPECT(q == BIREN_SUCCESS || q == BIREN_ERROR_NOT_READY);
  double ms = 1;
  int *c = &counter;
  OK(BIREN_LAUNCH(spin_count, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, d.s, c, ms));
  birenStream_t mine;
  OK(birenStreamCreateWithFlags(&mine, birenStreamNonBlocking));
  OK(birenEventRecord(d.never, mine));
  OK(birenStreamSynchronize(d.s));
  EXPECT(load_int(&counter) == 16);
  OK(birenStreamDestroy(d.s));
  OK(birenEventDestroy(d.never));
  EXPECT_CODE(birenStreamQuery(d.s), BIREN_ERROR_INVALID_HANDLE);
  OK(birenStreamDestroy(mine));
  return 0;
}

/* The creator dies while another thread is blocked in a synchronize on its stream; a third
 * destroys the stream while its work is still running. */
typedef struct handoff {
  birenStream_t s;
  int *counter;
  volatile int created;
  birenError_t sync_code;
} handoff;

static void *creator_dies(void *arg) {
  handoff *h = arg;
  double ms = 30;
  int *c = h->counter;
  if (birenStreamCreate(&h->s) != BIREN_SUCCESS) pthread_exit(NULL);
  for (int i = 0; i < 8; i++) (void)BIREN_LAUNCH(spin_count, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, h->s, c, ms);
  __atomic_store_n(&h->created, 1, __ATOMIC_SEQ_CST);
  pthread_exit(NULL);
}

static void *waiter(void *arg) {
  handoff *h = arg;
  h->sync_code = birenStreamSynchronize(h->s);
  return NULL;
}

static int stream_destroyed_by_a_third_thread_after_its_creator_died(void) {
  int counter = 0;
  handoff h;
  memset(&h, 0, sizeof h);
  h.counter = &counter;
  h.sync_code = (birenError_t)-1;
  pthread_t a, b;
  EXPECT(pthread_create(&a, NULL, creator_dies, &h) == 0);
  EXPECT(pthread_join(a, NULL) == 0);
  EXPECT(h.created);
  EXPECT(pthread_create(&b, NULL, waiter, &h) == 0);
  sleep_ms(10);
  OK(birenStreamDestroy(h.s)); /* work pending: still completes */
  EXPECT(pthread_join(b, NULL) == 0);
  /* the waiter either saw the work finish, or looked the handle up after the destroy */
  EXPECT(h.sync_code == BIREN_SUCCESS || h.sync_code == BIREN_ERROR_INVALID_HANDLE);
  OK(birenDeviceSynchronize());
  EXPECT(load_int(&counter) == 8);
  return 0;
}

/* ---- device resets racing with other threads' work ------------------------------------------ */

static unsigned long race_started, race_done, race_late;
static volatile int race_stop, race_use_default;

/* A kernel of a stream that a reset destroyed must not start once that reset has returned.
 * args: (unsigned long gen): resets_started read after the stream was created. */
static void race_kernel(void **args) {
  unsigned long gen = *(unsigned long *)args[0];
  if (__atomic_load_n(&race_done, __ATOMIC_SEQ_CST) > gen) __atomic_fetch_add(&race_late, 1, __ATOMIC_SEQ_CST);
  spin_ms(0.05);
}

static void *race_resetter(void *arg) {
  (void)arg;
  while (!race_stop) {
    sleep_ms(0.3);
    __atomic_fetch_add(&race_started, 1, __ATOMIC_SEQ_CST);
    (void)birenDeviceReset();
    __atomic_fetch_add(&race_done, 1, __ATOMIC_SEQ_CST);
  }
  return NULL;
}

static void *race_user(void *arg) {
  static char h1[2][4096], h2[2][4096];
  int me = (int)(size_t)arg;
  while (!race_stop) {
    birenStream_t s;
    if (birenStreamCreate(&s) != BIREN_SUCCESS) continue;
    /* every reset numbered above gen starts after s exists, so it destroys s */
    unsigned long gen = __atomic_load_n(&race_started, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 8; i++)
      if (BIREN_LAUNCH(race_kernel, birenDim3(4, 1, 1), birenDim3(1, 1, 1), 0, s, gen) != BIREN_SUCCESS) break;
    /* default-stream copies: the default stream survives every reset */
    if (race_use_default) (void)birenMemcpyAsync(h2[me], h1[me], sizeof h1[me], birenMemcpyHostToHost, NULL);
    (void)birenStreamDestroy(s);
  }
  return NULL;
}

static volatile int sync_returned;
static void *final_sync(void *arg) {
  birenError_t *code = arg;
  *code = birenDeviceSynchronize();
  __atomic_store_n(&sync_returned, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static int reset_racing_with_other_threads_drops_their_work_cleanly(void) {
  race_late = 0;
  /* Phase 0: kernels in streams the threads create and destroy. Phase 1: plus copies on the
   * default stream (which every reset drains but never destroys). */
  for (int phase = 0; phase < 2; phase++) {
    unsigned long r0 = race_done;
    race_stop = 0;
    race_use_default = phase;
    pthread_t r, u[2];
    EXPECT(pthread_create(&r, NULL, race_resetter, NULL) == 0);
    for (int i = 0; i < 2; i++) EXPECT(pthread_create(&u[i], NULL, race_user, (void *)(size_t)i) == 0);
    sleep_ms(under_valgrind() ? 1000 : 2500);
    race_stop = 1;
    for (int i = 0; i < 2; i++) pthread_join(u[i], NULL);
    pthread_join(r, NULL);
    printf("    phase %d: %lu resets raced with 2 threads' launches%s; so far %lu kernel blocks of destroyed streams started after their reset returned\n",
           phase, race_done - r0, phase ? " and default-stream copies" : "", race_late);
  }
  /* Nothing may be stuck: the device drains (a wedged stream makes this hang). */
  birenError_t code = (birenError_t)-1;
  sync_returned = 0;
  pthread_t f;
  EXPECT(pthread_create(&f, NULL, final_sync, &code) == 0);
  double t0 = now_s();
  while (!__atomic_load_n(&sync_returned, __ATOMIC_SEQ_CST) && now_s() - t0 < 10) sleep_ms(5);
  if (!__atomic_load_n(&sync_returned, __ATOMIC_SEQ_CST)) {
    fprintf(stderr, "    birenDeviceSynchronize still blocked after 10 s with no work running: a stream is wedged\n");
    /* the blocked thread cannot be cancelled safely; exit the whole test with the failure */
    printf("  FAIL  reset_racing_with_other_threads_drops_their_work_cleanly (hang)\n");
    fflush(stdout);
    _exit(1);
  }
  pthread_join(f, NULL);
  OK(code);
  EXPECT(race_late == 0);
  OK(birenDeviceReset());
  EXPECT(device_works() == 0);
  return 0;
}

static const test_case tests[] = {
    TEST(trap_fails_the_launch_sticky_until_reset),
    TEST(trap_at_a_barrier_and_a_blocked_synchronize),
    TEST(repeated_trap_and_reset),
    TEST(validator_catches_out_of_bounds_write),
    TEST(validator_catches_write_after_free),
    TEST(host_function_may_not_synchronize_but_may_enqueue),
    TEST(kernel_may_not_synchronize),
    TEST(exit_with_work_queued_is_prompt_and_clean),
    TEST(thread_dies_holding_a_stream_with_work),
    TEST(stream_destroyed_by_a_third_thread_after_its_creator_died),
    TEST(reset_racing_with_other_threads_drops_their_work_cleanly),
};

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--child")) return child_main(argv[2]);
  ssize_t len = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
  if (len > 0) self_path[len] = 0;
  else snprintf(self_path, sizeof self_path, "%s", argv[0]);
  if (getenv("BIREN_COMPUTE_UNITS") == NULL && sysconf(_SC_NPROCESSORS_ONLN) < 2) setenv("BIREN_COMPUTE_UNITS", "2", 1);
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("faults", tests, before_each, under_valgrind() ? 300 : 60);
}
