/* 02_streams.c -- streams are independent in-order queues; different streams run in parallel
 * (seed, section 4.2.1).
 *
 * Build alone (from the repository root, after `make`):
 *   cc -std=c99 -Iinclude examples-c/02_streams.c -Ltarget/release -Wl,-rpath,$PWD/target/release -lbiren_runtime -o streams
 *
 * Two kernels of ~200 ms each: one after the other in one stream, then kernel A in stream1 and
 * kernel B in stream2 followed by birenDeviceSynchronize, as in the seed. Each kernel is a single
 * block, so it occupies one compute unit and leaves the others idle: a second stream fills them.
 * Finally the seed's warning: one tiny op on the default stream between the two launches
 * serializes the streams again (unless they are created birenStreamNonBlocking).
 * Times are measured and printed, never asserted: on a busy machine they vary.
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* args: (double ms). ~`ms` of busy work: an arithmetic loop that checks the clock now and then,
 * so that the duration does not depend on the machine's speed. */
static void busy_kernel(void **args) {
  double end = now_ms() + *(double *)args[0];
  volatile double x = 1.0;
  while (now_ms() < end) {
    for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 1e-9;
  }
}

/* Kernel A in `a`, then (optionally) a tiny memset on the default stream, then kernel B in `b`
 * (a may equal b), then birenDeviceSynchronize. Returns the wall time in ms. */
static double run_two(birenStream_t a, birenStream_t b, void *d_flag) {
  double ms = 200.0;
  double t0 = now_ms();
  BIREN_CHECK(BIREN_LAUNCH(busy_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, a, ms));
  if (d_flag != NULL) {
    /* Work on the default stream (NULL) waits for all earlier work in blocking streams, and
     * later work in blocking streams waits for it. */
    BIREN_CHECK(birenMemsetAsync(d_flag, 0, sizeof(int), NULL));
  }
  BIREN_CHECK(BIREN_LAUNCH(busy_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, b, ms));
  BIREN_CHECK(birenDeviceSynchronize());
  return now_ms() - t0;
}

static void verdict(double serial, double t) {
  double overlap = (serial - t) / (serial / 2.0) * 100.0;
  if (overlap < 0) overlap = 0;
  if (overlap > 100) overlap = 100;
  printf("      -> %.2fx the speed of one stream; the kernels overlapped for ~%.0f%% of their run time\n", serial / t, overlap);
}

int main(void) {
  /* Parallel streams need two compute units; the default is one per host CPU. */
  if (getenv("BIREN_COMPUTE_UNITS") == NULL && sysconf(_SC_NPROCESSORS_ONLN) < 2) setenv("BIREN_COMPUTE_UNITS", "2", 0);
  BIREN_CHECK(birenInit());
  birenDeviceProp prop;
  BIREN_CHECK(birenGetDeviceProperties(&prop, 0));
  printf("02_streams: %s; two one-block kernels of ~200 ms each\n\n", prop.name);

  birenStream_t stream1, stream2, nb1, nb2;
  BIREN_CHECK(birenStreamCreate(&stream1));
  BIREN_CHECK(birenStreamCreate(&stream2));
  BIREN_CHECK(birenStreamCreateWithFlags(&nb1, birenStreamNonBlocking));
  BIREN_CHECK(birenStreamCreateWithFlags(&nb2, birenStreamNonBlocking));
  void *d_flag;
  BIREN_CHECK(birenMalloc(&d_flag, sizeof(int)));

  double serial = run_two(stream1, stream1, NULL);
  printf("  A and B both in stream1 (in order)                   %6.1f ms\n", serial);

  double parallel = run_two(stream1, stream2, NULL);
  printf("  A in stream1, B in stream2, birenDeviceSynchronize   %6.1f ms\n", parallel);
  verdict(serial, parallel);

  double legacy = run_two(stream1, stream2, d_flag);
  printf("  same, with a 4-byte memset on the default stream     %6.1f ms\n", legacy);
  printf("      (the default stream waits for A, and B waits for the default stream: serialized)\n");

  double nonblocking = run_two(nb1, nb2, d_flag);
  printf("  same, streams created birenStreamNonBlocking         %6.1f ms\n", nonblocking);
  verdict(serial, nonblocking);

  if (prop.multiProcessorCount < 2) printf("\n  (one compute unit only: kernels of different streams cannot run side by side)\n");
  printf("\nPrefer explicit streams over the default stream, as the seed advises.\n");

  BIREN_CHECK(birenFree(d_flag));
  BIREN_CHECK(birenStreamDestroy(stream1));
  BIREN_CHECK(birenStreamDestroy(stream2));
  BIREN_CHECK(birenStreamDestroy(nb1));
  BIREN_CHECK(birenStreamDestroy(nb2));
  return 0;
}
