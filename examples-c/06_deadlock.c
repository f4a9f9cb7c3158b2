/* 06_deadlock.c -- "stream A waits for B's event while B waits for A's" (seed, section 4.3.2).
 *
 * Build alone (from the repository root, after `make`):
 *   cc -std=c99 -Iinclude examples-c/06_deadlock.c -Ltarget/release -Wl,-rpath,$PWD/target/release -lbiren_runtime -o deadlock
 *
 * With CUDA's rules a stream can only wait for a record that already exists, so no cycle can be
 * built. BIREN's extension lets birenStreamWaitEvent wait for the *next* record of an event never
 * recorded yet -- and so lets a program build the seed's cycle. The runtime keeps a wait-for
 * graph and refuses the record that would close the cycle with BIREN_ERROR_DEADLOCK, enqueueing
 * nothing. A host synchronize on a stream stuck on a record that never comes returns
 * BIREN_ERROR_DEADLOCK after BIREN_DEADLOCK_TIMEOUT_MS (default 200 ms) instead of hanging.
 * Both situations are recovered from: by recording the awaited event where it closes no cycle,
 * or by birenDeviceReset.
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* args: (int *flag, int value). */
static void set_flag(void **args) { **(int **)args[0] = *(int *)args[1]; }

/* Validator lines, printed on stdout with the rest of the story. */
static void print_finding(const char *message, void *user) {
  (void)user;
  printf("      | %s\n", message);
}

static void show(const char *what, birenError_t e) {
  printf("    %-46s -> %s\n", what, birenGetErrorName(e));
}

int main(void) {
  BIREN_CHECK(birenInit());
  const char *timeout = getenv("BIREN_DEADLOCK_TIMEOUT_MS");
  printf("06_deadlock: cycles are refused, stalls are reported (BIREN_DEADLOCK_TIMEOUT_MS=%s)\n\n", timeout ? timeout : "200, the default");
  int *flags; /* page-locked host memory the kernels write, so the host can see what ran */
  BIREN_CHECK(birenMallocHost((void **)&flags, 2 * sizeof(int)));
  int *ranA = &flags[0], *ranB = &flags[1], one = 1;
  *ranA = *ranB = 0;

  /* ---- 1. The seed's cycle ---------------------------------------------------------------- */
  printf("1. Stream A waits for B's event while stream B waits for A's\n");
  birenStream_t A, B, C;
  birenEvent_t eventA, eventB;
  BIREN_CHECK(birenStreamCreate(&A));
  BIREN_CHECK(birenStreamCreate(&B));
  BIREN_CHECK(birenStreamCreateWithFlags(&C, birenStreamNonBlocking)); /* for the recovery */
  BIREN_CHECK(birenEventCreate(&eventA));
  BIREN_CHECK(birenEventCreate(&eventB));
  BIREN_CHECK(birenSetValidatorCallback(print_finding, NULL));
  BIREN_CHECK(birenSetDeviceValidator(1)); /* so that the refusals are explained ("| ..." lines) */
  show("birenStreamWaitEvent(A, eventB)  (not recorded yet)", birenStreamWaitEvent(A, eventB));
  show("birenStreamWaitEvent(B, eventA)  (not recorded yet)", birenStreamWaitEvent(B, eventA));
  BIREN_CHECK(BIREN_LAUNCH(set_flag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, A, ranA, one));
  BIREN_CHECK(BIREN_LAUNCH(set_flag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, B, ranB, one));
  show("birenEventRecord(eventA, A)", birenEventRecord(eventA, A));
  double t0 = now_ms();
  birenError_t e = birenEventRecord(eventB, B);
  double us = (now_ms() - t0) * 1e3;
  show("birenEventRecord(eventB, B)  (closes the cycle)", e);
  printf("    refused in %.0f us, without running anything; nothing was enqueued. A and B still wait.\n", us);

  /* Recovery 1: fix the design -- record eventB where it waits for nothing (a DAG again). */
  printf("  recovery: record eventB in a stream that does not wait for A or B\n");
  show("birenEventRecord(eventB, C)", birenEventRecord(eventB, C));
  show("birenDeviceSynchronize()", birenDeviceSynchronize());
  printf("    A's kernel ran: %s, B's kernel ran: %s\n\n", *ranA ? "yes" : "no", *ranB ? "yes" : "no");

  /* ---- 1b. The default stream waits for every blocking stream ----------------------------- */
  printf("1b. The same cycle through the default stream\n");
  birenEvent_t later;
  BIREN_CHECK(birenEventCreate(&later));
  show("birenStreamWaitEvent(A, later)", birenStreamWaitEvent(A, later));
  show("birenEventRecord(later, NULL /* default */)", birenEventRecord(later, NULL));
  printf("    a record on the default stream waits for all blocking streams, A included,\n"
         "    and A waits for that record: a cycle. A non-blocking stream is exempt:\n");
  show("birenEventRecord(later, C /* non-blocking */)", birenEventRecord(later, C));
  show("birenStreamSynchronize(A)", birenStreamSynchronize(A));
  BIREN_CHECK(birenEventDestroy(eventA));
  BIREN_CHECK(birenEventDestroy(eventB));
  BIREN_CHECK(birenEventDestroy(later));
  BIREN_CHECK(birenStreamDestroy(B));
  BIREN_CHECK(birenStreamDestroy(C));
  printf("\n");

  /* ---- 2. A stall: a wait for a record that never comes --------------------------------- */
  printf("2. A host synchronize on a stream stuck on a never-recorded event\n");
  birenEvent_t never;
  BIREN_CHECK(birenEventCreate(&never));
  *ranA = 0;
  BIREN_CHECK(birenStreamWaitEvent(A, never));
  BIREN_CHECK(BIREN_LAUNCH(set_flag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, A, ranA, one));
  t0 = now_ms();
  e = birenStreamSynchronize(A);
  show("birenStreamSynchronize(A)", e);
  printf("    returned after %.0f ms instead of hanging; A's kernel ran: %s\n", now_ms() - t0, *ranA ? "yes" : "no");
  t0 = now_ms();
  show("birenDeviceSynchronize()", birenDeviceSynchronize());
  printf("    returned after %.0f ms\n", now_ms() - t0);

  /* Recovery 2: reset the device -- drops the stuck work, destroys every stream and event
   * (their handles become invalid), frees all device memory. The runtime stays initialized. */
  printf("  recovery: birenDeviceReset()\n");
  show("birenDeviceReset()", birenDeviceReset());
  BIREN_CHECK(birenSetDeviceValidator(0)); /* the next two failures are expected */
  show("birenStreamQuery(A)  (destroyed by the reset)", birenStreamQuery(A));
  show("birenEventQuery(never)  (destroyed too)", birenEventQuery(never));
  BIREN_CHECK(birenStreamCreate(&A));
  BIREN_CHECK(BIREN_LAUNCH(set_flag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, A, ranA, one));
  show("a new stream, a kernel, birenStreamSynchronize", birenStreamSynchronize(A));
  printf("    the kernel ran: %s\n", *ranA ? "yes" : "no");

  BIREN_CHECK(birenStreamDestroy(A));
  BIREN_CHECK(birenFreeHost(flags));
  BIREN_CHECK(birenSetValidatorCallback(NULL, NULL));
  printf("\nBest of all, as the seed says: make event dependencies a DAG.\n");
  return 0;
}
