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
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

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

int main(void) {
  /* The race needs A and B to be able to run at the same time: two compute units. */
  if (getenv("BIREN_COMPUTE_UNITS") == NULL && sysconf(_SC_NPROCESSORS_ONLN) < 2) setenv("BIREN_COMPUTE_UNITS", "2", 0);
  BIREN_CHECK(birenInit());
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
