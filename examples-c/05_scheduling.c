/* 05_scheduling.c -- preemptive vs cooperative scheduling (seed, section 4.2.2).
 *
 * Build alone (from the repository root, after `make`):
 *   cc -std=c99 -Iinclude examples-c/05_scheduling.c -Ltarget/release -Wl,-rpath,$PWD/target/release -lbiren_runtime -o scheduling
 *
 * The seed's video customer: a long low-priority task (a "re-encode" kernel of many blocks,
 * ~300 ms in all) fills every compute unit, while each video frame brings a small urgent kernel
 * on a high-priority stream (priority -5) that should finish within the frame's 33 ms.
 *   - cooperative (birenScheduleCooperative): the long task keeps the device until its last
 *     block is dispatched, whatever the priorities; the urgent frames wait behind it.
 *   - preemptive (birenSchedulePreemptive, the default): a free compute unit always takes the
 *     next block of the most urgent kernel, so an urgent kernel starts within about one block
 *     of the long task (5 ms here).
 * The latency of each urgent frame (submission to completion) is measured with events and
 * printed; numbers vary with the machine's load.
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { FRAMES = 5 };
static const double BLOCK_MS = 5.0;       /* one block of the long task */
static const double TASK_MS_PER_CU = 300; /* the long task's length on the whole device */
static const double URGENT_MS = 1.0;      /* one urgent kernel */
static const double FRAME_MS = 33.0;      /* 30 frames per second */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void sleep_ms(double ms) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000.0);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
  nanosleep(&ts, NULL);
}

/* args: (double ms). Each block keeps its compute unit busy for `ms` (thread 0 computes). */
static void busy_blocks(void **args) {
  if (birenThreadIdx().x != 0) return;
  double end = now_ms() + *(double *)args[0];
  volatile double x = 1.0;
  while (now_ms() < end) x = x * 1.0000001 + 1e-9;
}

/* Runs the pipeline under `policy`; prints each urgent frame's latency. */
static void run(birenSchedulingPolicy policy, birenStream_t background, birenStream_t urgent, birenStream_t clock,
                int compute_units) {
  birenEvent_t submitted[FRAMES], done[FRAMES];
  unsigned blocks = (unsigned)(TASK_MS_PER_CU / BLOCK_MS) * (unsigned)compute_units;
  double block_ms = BLOCK_MS, urgent_ms = URGENT_MS;

  BIREN_CHECK(birenDeviceSetSchedulingPolicy(policy));
  for (int f = 0; f < FRAMES; f++) {
    BIREN_CHECK(birenEventCreate(&submitted[f]));
    BIREN_CHECK(birenEventCreate(&done[f]));
  }
  double t0 = now_ms();
  BIREN_CHECK(BIREN_LAUNCH(busy_blocks, birenDim3(blocks, 1, 1), birenDim3(64, 1, 1), 0, background, block_ms));
  for (int f = 0; f < FRAMES; f++) {
    sleep_ms(f == 0 ? 20.0 : FRAME_MS); /* the next frame arrives */
    /* An event recorded in an idle stream is reached at once: it timestamps the submission.
     * (Recorded in `urgent`, it would wait for the previous urgent frame.) */
    BIREN_CHECK(birenEventRecord(submitted[f], clock));
    BIREN_CHECK(BIREN_LAUNCH(busy_blocks, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, urgent, urgent_ms));
    BIREN_CHECK(birenEventRecord(done[f], urgent));
  }
  BIREN_CHECK(birenStreamSynchronize(urgent));
  double urgent_end = now_ms() - t0;
  BIREN_CHECK(birenStreamSynchronize(background));
  double total = now_ms() - t0;

  int late = 0;
  printf("    urgent frame latency (submitted -> done):");
  for (int f = 0; f < FRAMES; f++) {
    float ms = 0;
    BIREN_CHECK(birenEventElapsedTime(&ms, submitted[f], done[f]));
    printf(" %5.1f", (double)ms);
    late += ms > FRAME_MS;
    BIREN_CHECK(birenEventDestroy(submitted[f]));
    BIREN_CHECK(birenEventDestroy(done[f]));
  }
  printf(" ms\n");
  printf("    %d of %d frames missed their %.0f ms deadline; last urgent frame done at %.0f ms, long task at %.0f ms\n",
         late, FRAMES, FRAME_MS, urgent_end, total);
}

int main(void) {
  BIREN_CHECK(birenInit());
  birenDeviceProp prop;
  int least, greatest;
  BIREN_CHECK(birenGetDeviceProperties(&prop, 0));
  BIREN_CHECK(birenDeviceGetStreamPriorityRange(&least, &greatest));
  printf("05_scheduling: %d compute unit(s), stream priorities %d (least urgent) to %d (most urgent)\n", prop.multiProcessorCount,
         least, greatest);
  printf("  long task: %u blocks of %.0f ms at priority %d; %d urgent frames (%.0f ms kernels) at priority %d, every %.0f ms\n\n",
         (unsigned)(TASK_MS_PER_CU / BLOCK_MS) * (unsigned)prop.multiProcessorCount, BLOCK_MS, least, FRAMES, URGENT_MS, greatest,
         FRAME_MS);

  birenStream_t background, urgent, clock;
  BIREN_CHECK(birenStreamCreateWithPriority(&background, birenStreamDefault, least));
  BIREN_CHECK(birenStreamCreateWithPriority(&urgent, birenStreamDefault, greatest));
  BIREN_CHECK(birenStreamCreateWithFlags(&clock, birenStreamNonBlocking)); /* only for timestamps */

  printf("  cooperative: a started task keeps the device until its last block is dispatched\n");
  run(birenScheduleCooperative, background, urgent, clock, prop.multiProcessorCount);
  printf("\n  preemptive: a free compute unit takes the next block of the most urgent kernel\n");
  run(birenSchedulePreemptive, background, urgent, clock, prop.multiProcessorCount);

  birenSchedulingPolicy policy;
  BIREN_CHECK(birenDeviceGetSchedulingPolicy(&policy));
  printf("\nThe policy is now %s (the default; BIREN_SCHEDULING=cooperative changes it at birenInit).\n",
         policy == birenSchedulePreemptive ? "preemptive" : "cooperative");
  BIREN_CHECK(birenStreamDestroy(background));
  BIREN_CHECK(birenStreamDestroy(urgent));
  BIREN_CHECK(birenStreamDestroy(clock));
  return 0;
}
