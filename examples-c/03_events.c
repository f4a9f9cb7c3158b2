/* 03_events.c -- "task B must wait for task A": an event edge between two streams
 * (seed, section 4.2.3).
 *
 * Build alone (from the repository root, after `make`):
 *   cc -std=c99 -Iinclude examples-c/03_events.c -Ltarget/release -Wl,-rpath,$PWD/target/release -lbiren_runtime -o events
 *
 * Kernel A (stream1) is a slow producer: ~300 ms of work, then it fills a buffer. Kernel B
 * (stream2) sums that buffer. With birenEventRecord(event, stream1) + birenStreamWaitEvent(stream2,
 * event), B starts when A is done and reads A's result, without the host waiting in between.
 * Without the wait, B starts at once on a free compute unit and reads stale data: because A is
 * slow, this race is lost every time, so the wrong result is deterministic.
 *
 * Part 2 makes the same bug visible when A is fast and the race is usually won by luck:
 *  - race detection (birenSetRaceCheck(1), or BIREN_RACECHECK=1) names the race on the first run,
 *    whatever the timing, through the validator channel (here a callback);
 *  - schedule fuzzing (BIREN_SCHEDULE=fuzz:SEED) shuffles the start of ready work: the program
 *    re-runs itself under seeds 1..10, and some seeds show the stale read without the edge;
 *    with the edge, no seed does and race detection is silent.
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { N = 256 };

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Kernel A. args: (int *data, double ms). One block of N threads: thread 0 first spends `ms` on
 * a long computation, then every thread writes its element: data[i] = i + 1. */
static void kernelA(void **args) {
  int *data = *(int **)args[0];
  double ms = *(double *)args[1];
  unsigned i = birenThreadIdx().x;
  if (i == 0) {
    double end = now_ms() + ms;
    while (now_ms() < end) {
    }
  }
  data[i] = (int)i + 1;
}

/* Kernel B. args: (const int *data, long *sum). One thread adds up the N elements. */
static void kernelB(void **args) {
  const int *data = *(const int **)args[0];
  long *sum = *(long **)args[1];
  long s = 0;
  for (int i = 0; i < N; i++) s += data[i];
  *sum = s;
}

/* Runs A in stream1 and B in stream2, with or without the event edge; returns B's result. */
static long run(birenStream_t stream1, birenStream_t stream2, birenEvent_t event, int with_wait, int *d_data, long *d_sum) {
  double ms = 300.0;
  long sum = -1;
  BIREN_CHECK(birenMemset(d_data, 0, N * sizeof(int))); /* the stale data: zeros */
  BIREN_CHECK(birenMemset(d_sum, 0, sizeof(long)));
  double t0 = now_ms();
  /* in stream1: task A, then record the event */
  BIREN_CHECK(BIREN_LAUNCH(kernelA, birenDim3(1, 1, 1), birenDim3(N, 1, 1), 0, stream1, d_data, ms));
  BIREN_CHECK(birenEventRecord(event, stream1));
  /* in stream2: wait for the event, then task B */
  if (with_wait) BIREN_CHECK(birenStreamWaitEvent(stream2, event));
  BIREN_CHECK(BIREN_LAUNCH(kernelB, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, stream2, d_data, d_sum));
  BIREN_CHECK(birenMemcpyAsync(&sum, d_sum, sizeof sum, birenMemcpyDeviceToHost, stream2));
  BIREN_CHECK(birenStreamSynchronize(stream2));
  printf("    B's result arrived on the host after %.0f ms\n", now_ms() - t0);
  BIREN_CHECK(birenDeviceSynchronize());
  return sum;
}

/* Part 2: A fast (no 300 ms of work), so the race is usually won. Returns B's result. */
static long run_fast(birenStream_t stream1, birenStream_t stream2, birenEvent_t event, int with_wait, int *d_data,
                     long *d_sum) {
  double ms = 0.0;
  long sum = -1;
  BIREN_CHECK(birenMemset(d_data, 0, N * sizeof(int)));
  BIREN_CHECK(BIREN_LAUNCH(kernelA, birenDim3(1, 1, 1), birenDim3(N, 1, 1), 0, stream1, d_data, ms));
  BIREN_CHECK(birenEventRecord(event, stream1));
  if (with_wait) BIREN_CHECK(birenStreamWaitEvent(stream2, event));
  BIREN_CHECK(BIREN_LAUNCH(kernelB, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, stream2, d_data, d_sum));
  BIREN_CHECK(birenDeviceSynchronize());
  BIREN_CHECK(birenMemcpy(&sum, d_sum, sizeof sum, birenMemcpyDeviceToHost));
  return sum;
}

static int g_findings;
static void on_finding(const char *line, void *user) {
  (void)user;
  if (strncmp(line, "biren racecheck:", 16) == 0) {
    g_findings++;
    printf("    %s\n", line);
  }
}

/* Runs this program again as `--fuzz-child WITH_WAIT` under BIREN_SCHEDULE=fuzz:SEED; returns
 * its exit status (0: B read the right sum, 1: stale data). */
static int spawn_fuzzed(int seed, int with_wait) {
  char sched[64], *argv[] = {"03_events", "--fuzz-child", with_wait ? "1" : "0", NULL};
  snprintf(sched, sizeof sched, "BIREN_SCHEDULE=fuzz:%d", seed);
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  if (!env) return -1;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "BIREN_SCHEDULE=", 15) != 0) env[k++] = environ[i];
  env[k++] = sched;
  env[k] = NULL;
  pid_t pid;
  int status = -1;
  posix_spawn_file_actions_t quiet; /* the child's stderr (its seed line) to /dev/null */
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
  if (posix_spawn(&pid, "/proc/self/exe", &quiet, NULL, argv, env) == 0 && waitpid(pid, &status, 0) == pid &&
      WIFEXITED(status))
    status = WEXITSTATUS(status);
  else
    status = -1;
  posix_spawn_file_actions_destroy(&quiet);
  free(env);
  return status;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--fuzz-child") == 0) {
    /* One fast run under the schedule the parent chose; exit 1 on stale data. */
    if (getenv("BIREN_COMPUTE_UNITS") == NULL) setenv("BIREN_COMPUTE_UNITS", "2", 0);
    BIREN_CHECK(birenInit());
    birenStream_t s1, s2;
    birenEvent_t ev;
    int *d;
    long *sum;
    BIREN_CHECK(birenStreamCreate(&s1));
    BIREN_CHECK(birenStreamCreate(&s2));
    BIREN_CHECK(birenEventCreate(&ev));
    BIREN_CHECK(birenMalloc((void **)&d, N * sizeof(int)));
    BIREN_CHECK(birenMalloc((void **)&sum, sizeof(long)));
    long got = run_fast(s1, s2, ev, argv[2][0] == '1', d, sum);
    return got == (long)N * (N + 1) / 2 ? 0 : 1;
  }
  /* The race needs A and B to be able to run at the same time: two compute units. */
  if (getenv("BIREN_COMPUTE_UNITS") == NULL && sysconf(_SC_NPROCESSORS_ONLN) < 2) setenv("BIREN_COMPUTE_UNITS", "2", 0);
  BIREN_CHECK(birenInit());
  /* Registered: the runtime copies the arguments at launch and knows the kernels' names. */
  const size_t argsA[2] = {sizeof(int *), sizeof(double)}, argsB[2] = {sizeof(int *), sizeof(long *)};
  BIREN_CHECK(birenKernelRegister(kernelA, "kernelA", 2, argsA));
  BIREN_CHECK(birenKernelRegister(kernelB, "kernelB", 2, argsB));
  const long expected = (long)N * (N + 1) / 2;
  printf("03_events: kernel A (stream1, ~300 ms) writes 1..%d, kernel B (stream2) sums it; expected %ld\n\n", N, expected);

  birenStream_t stream1, stream2;
  birenEvent_t event;
  int *d_data;
  long *d_sum;
  BIREN_CHECK(birenStreamCreate(&stream1));
  BIREN_CHECK(birenStreamCreate(&stream2));
  BIREN_CHECK(birenEventCreate(&event));
  BIREN_CHECK(birenMalloc((void **)&d_data, N * sizeof(int)));
  BIREN_CHECK(birenMalloc((void **)&d_sum, sizeof(long)));

  printf("  with the edge: birenEventRecord(event, stream1); birenStreamWaitEvent(stream2, event)\n");
  long good = run(stream1, stream2, event, 1, d_data, d_sum);
  printf("    B read %ld: %s\n\n", good, good == expected ? "correct, B ran after A" : "WRONG (unexpected)");

  printf("  without the edge (the bug): B does not wait for A\n");
  long bad = run(stream1, stream2, event, 0, d_data, d_sum);
  if (bad == expected) {
    printf("    B read %ld: correct this time, by luck (B could not start before A finished, e.g. on a single\n"
           "    compute unit). The bug is still there.\n\n", bad);
  } else {
    printf("    B read %ld instead of %ld: stale data, B ran while A was still computing\n\n", bad, expected);
  }

  printf("Part 2: A is fast now, so B usually reads the right sum even without the edge. Two tools find\n"
         "the bug anyway.\n\n");
  printf("  race detection (birenSetRaceCheck(1); findings to a birenSetValidatorCallback callback):\n");
  BIREN_CHECK(birenSetValidatorCallback(on_finding, NULL));
  BIREN_CHECK(birenSetRaceCheck(0)); /* off, then on: a fresh start even under BIREN_RACECHECK=1 */
  BIREN_CHECK(birenSetRaceCheck(1));
  printf("  - without the edge, first run:\n");
  long r0 = run_fast(stream1, stream2, event, 0, d_data, d_sum);
  printf("    (B read %ld, %s)\n", r0, r0 == expected ? "right this time: the race is reported all the same" : "stale");
  int without = g_findings;
  g_findings = 0;
  printf("  - with the edge:\n");
  run_fast(stream1, stream2, event, 1, d_data, d_sum);
  printf("    %s\n\n", g_findings == 0 ? "no finding" : "UNEXPECTED finding");
  BIREN_CHECK(birenSetRaceCheck(0));
  BIREN_CHECK(birenSetValidatorCallback(NULL, NULL));

  printf("  schedule fuzzing (this program re-run with BIREN_SCHEDULE=fuzz:SEED, seeds 1..10):\n");
  for (int with_wait = 0; with_wait <= 1; with_wait++) {
    int stale = 0;
    char seeds[128] = "";
    for (int seed = 1; seed <= 10; seed++) {
      int st = spawn_fuzzed(seed, with_wait);
      if (st < 0 || st > 1) {
        fprintf(stderr, "03_events: the fuzzed child failed (status %d)\n", st);
        return 1;
      }
      if (st == 1) {
        stale++;
        size_t len = strlen(seeds);
        snprintf(seeds + len, sizeof seeds - len, " %d", seed);
      }
    }
    printf("  - %s: stale data under %d of 10 seeds%s%s\n", with_wait ? "with the edge" : "without the edge", stale,
           stale ? ", seeds" : "", seeds);
  }
  printf("  A seed that shows the bug shows it again most of the time: BIREN_SCHEDULE=fuzz:SEED re-draws the same\n"
         "  delays (the device threads still run under the OS's timing).\n\n");
  if (without == 0 || g_findings != 0) {
    fprintf(stderr, "03_events: race detection did not behave as described\n");
    return 1;
  }

  /* Every birenEventCreate pairs with a birenEventDestroy (the seed's leak). */
  BIREN_CHECK(birenEventDestroy(event));
  BIREN_CHECK(birenFree(d_data));
  BIREN_CHECK(birenFree(d_sum));
  BIREN_CHECK(birenStreamDestroy(stream1));
  BIREN_CHECK(birenStreamDestroy(stream2));
  printf("The edge costs no host round trip: the runtime starts B when A's record is reached; the host\n"
         "synchronizes only to read the result.\n");
  return 0;
}
