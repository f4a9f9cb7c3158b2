/* Limits: 10 000 live streams, 100 000 live events and 1 000 000 live device allocations, each
 * created, used and destroyed, twice. Afterwards the device's free memory is back where it
 * started, and the process's resident memory did not grow from the first round to the second
 * (generous bound: what the first round needed may stay cached, but a second round must not
 * need as much again). Every phase is timed; the whole test must run well under 60 s on a
 * 2-core machine, so each phase has a time budget, and exceeding it is a failure (a performance
 * bug).
 *
 * BIREN_UNDER_VALGRIND=1 (set by `make valgrind`) divides every count by 10, lifts the time
 * budgets (valgrind is 20-50x slower) and gives the device 256M instead of 2G. */
#define _GNU_SOURCE
#include "harness.h"

#include <stdint.h>

static int scale = 1;                /* counts are divided by this under valgrind */
static double budget_factor = 1.0;   /* time budgets are multiplied by this */

/* Resident set size in bytes (from /proc/self/statm). */
static size_t rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (f == NULL) return 0;
  if (fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
  fclose(f);
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

static size_t free_mem(void) {
  size_t f = 0, t = 0;
  if (birenMemGetInfo(&f, &t) != BIREN_SUCCESS) return 0;
  return f;
}

/* Reports a phase's time; fails it if over budget. */
#define PHASE_END(name, t0, budget_s)                                                         \
  do {                                                                                        \
    double took_ = now_s() - (t0);                                                            \
    printf("    %-48s %7.3f s (budget %.0f s)\n", name, took_, (budget_s) * budget_factor);    \
    fflush(stdout);                                                                           \
    if (took_ > (budget_s) * budget_factor) {                                                 \
      fprintf(stderr, "    PERFORMANCE: %s took %.3f s, over its budget of %.0f s\n", name, took_, \
              (budget_s) * budget_factor);                                                    \
      slow = 1;                                                                               \
    }                                                                                         \
  } while (0)

static void count_kernel(void **args) { __atomic_fetch_add(*(int **)args[0], 1, __ATOMIC_RELAXED); }

/* ---- streams ---------------------------------------------------------------------------------- */

static int streams_round(void) {
  int n = 10000 / scale, every = 100, slow = 0;
  birenStream_t *s = calloc((size_t)n, sizeof *s);
  EXPECT(s != NULL);
  int counter = 0, *pc = &counter, launched = 0;
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    /* mixed flags and priorities */
    OK(birenStreamCreateWithPriority(&s[i], (unsigned)(i & 1), -(i % 6)));
  }
  PHASE_END("create streams", t0, 5);
  t0 = now_s();
  for (int i = 0; i < n; i += every) {
    OK(BIREN_LAUNCH(count_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s[i], pc));
    launched++;
  }
  /* the default stream orders against every blocking stream: one launch there too */
  OK(BIREN_LAUNCH(count_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, pc));
  launched++;
  for (int i = 0; i < n; i += every) OK(birenStreamSynchronize(s[i]));
  OK(birenDeviceSynchronize());
  EXPECT(__atomic_load_n(&counter, __ATOMIC_SEQ_CST) == launched);
  for (int i = 0; i < n; i += 7) OK(birenStreamQuery(s[i]));
  PHASE_END("launch on every 100th stream, sync, query", t0, 5);
  t0 = now_s();
  for (int i = 0; i < n; i++) OK(birenStreamDestroy(s[i]));
  PHASE_END("destroy streams", t0, 5);
  EXPECT_CODE(birenStreamQuery(s[0]), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamQuery(s[n - 1]), BIREN_ERROR_INVALID_HANDLE);
  (void)birenGetLastError();
  free(s);
  EXPECT(!slow);
  return 0;
}

/* ---- events ----------------------------------------------------------------------------------- */

static int events_round(void) {
  int n = 100000 / scale, slow = 0;
  birenEvent_t *e = calloc((size_t)n, sizeof *e);
  EXPECT(e != NULL);
  birenStream_t s[4];
  for (int i = 0; i < 4; i++) OK(birenStreamCreate(&s[i]));
  double t0 = now_s();
  for (int i = 0; i < n; i++) OK(birenEventCreateWithFlags(&e[i], (unsigned)(i % 3)));
  PHASE_END("create events", t0, 5);
  t0 = now_s();
  for (int i = 0; i < n; i++) OK(birenEventRecord(e[i], s[i % 4]));
  /* every 1000th event makes another stream wait for it */
  for (int i = 0; i < n; i += 1000) OK(birenStreamWaitEvent(s[(i + 1) % 4], e[i]));
  for (int i = 0; i < 4; i++) OK(birenStreamSynchronize(s[i]));
  for (int i = 0; i < n; i += 97) OK(birenEventQuery(e[i]));
  OK(birenEventSynchronize(e[n - 1]));
  PHASE_END("record every event, wait on every 1000th, sync", t0, 10);
  t0 = now_s();
  for (int i = 0; i < n; i++) OK(birenEventDestroy(e[i]));
  PHASE_END("destroy events", t0, 5);
  EXPECT_CODE(birenEventQuery(e[0]), BIREN_ERROR_INVALID_HANDLE);
  (void)birenGetLastError();
  for (int i = 0; i < 4; i++) OK(birenStreamDestroy(s[i]));
  free(e);
  EXPECT(!slow);
  return 0;
}

/* ---- allocations ------------------------------------------------------------------------------ */

static int allocations_round(void) {
  int n = 1000000 / scale, slow = 0;
  void **p = calloc((size_t)n, sizeof *p);
  EXPECT(p != NULL);
  size_t free0 = free_mem();
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    birenError_t e = birenMalloc(&p[i], (size_t)(1 + (i % 64) * 4));
    if (e != BIREN_SUCCESS) {
      fprintf(stderr, "    birenMalloc #%d returned %s (free %zu)\n", i, birenGetErrorName(e), free_mem());
      return 1;
    }
  }
  PHASE_END("allocate", t0, 10);
  t0 = now_s();
  /* a memset on every 1000th, read back; pointer lookups on a sample */
  for (int i = 0; i < n; i += 1000) {
    size_t sz = (size_t)(1 + (i % 64) * 4);
    unsigned char back[256];
    OK(birenMemset(p[i], (i / 1000) & 0xff, sz));
    OK(birenMemcpy(back, p[i], sz, birenMemcpyDeviceToHost));
    for (size_t k = 0; k < sz; k++) EXPECT(back[k] == (unsigned char)((i / 1000) & 0xff));
  }
  for (int i = 0; i < n; i += 997) {
    birenPointerAttributes a;
    OK(birenPointerGetAttributes(&a, p[i]));
    EXPECT(a.type == birenMemoryTypeDevice && a.basePointer == p[i]);
  }
  PHASE_END("memset + read back every 1000th, look up a sample", t0, 5);
  t0 = now_s();
  for (int i = 0; i < n; i++) OK(birenFree(p[i]));
  PHASE_END("free", t0, 10);
  EXPECT(free_mem() == free0);
  EXPECT_CODE(birenFree(p[0]), BIREN_ERROR_INVALID_DEVICE_POINTER);
  (void)birenGetLastError();
  free(p);
  EXPECT(!slow);
  return 0;
}

/* ---- two rounds ------------------------------------------------------------------------------- */

static size_t rss_after[2];
static size_t free_at_start;

static int round_trip(int r) {
  printf("    round %d\n", r + 1);
  EXPECT(streams_round() == 0);
  EXPECT(events_round() == 0);
  EXPECT(allocations_round() == 0);
  OK(birenDeviceSynchronize());
  EXPECT(free_mem() == free_at_start);
  rss_after[r] = rss_bytes();
  printf("    RSS after round %d: %.1f MiB\n", r + 1, (double)rss_after[r] / (1 << 20));
  return 0;
}

static int first_round(void) { return round_trip(0); }

static int second_round_needs_no_more_memory(void) {
  EXPECT(round_trip(1) == 0);
  /* Generous: the second round may add at most a quarter of the first round's RSS, plus 32 MiB. */
  size_t bound = rss_after[0] + rss_after[0] / 4 + ((size_t)32 << 20);
  if (rss_after[1] > bound)
    fprintf(stderr, "    RSS grew from %.1f MiB to %.1f MiB across identical rounds (bound %.1f MiB)\n",
            (double)rss_after[0] / (1 << 20), (double)rss_after[1] / (1 << 20), (double)bound / (1 << 20));
  EXPECT(rss_after[1] <= bound);
  return 0;
}

static const test_case tests[] = {
    TEST(first_round),
    TEST(second_round_needs_no_more_memory),
};

int main(void) {
  /* 1 000 000 allocations of up to 253 bytes, each rounded up to 256: 256 MB of the device
   * (under valgrind a tenth: 256M is plenty, and memcheck's leak check at exit reads the whole
   * arena, twice the capacity). */
  setenv("BIREN_DEVICE_MEMORY", under_valgrind() ? "256M" : "2G", 1);
  if (under_valgrind()) {
    scale = 10;
    budget_factor = 100.0;
  }
  double t0 = now_s();
  if (birenInit() != BIREN_SUCCESS) return 2;
  free_at_start = free_mem();
  printf("    RSS at start: %.1f MiB\n", (double)rss_bytes() / (1 << 20));
  int r = RUN_TESTS("limits", tests, NULL, under_valgrind() ? 3000 : 120);
  printf("    total %.1f s\n", now_s() - t0);
  return r;
}
