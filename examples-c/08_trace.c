/* 08_trace.c -- see what ran where and when: BIREN_TRACE writes a Chrome/Perfetto trace.
 *
 * Build alone (from the repository root, after `make`):
 *   cc -std=c99 -Iinclude examples-c/08_trace.c -Ltarget/release -Wl,-rpath,$PWD/target/release -lbiren_runtime -o trace
 *
 * BIREN_TRACE=file.json (read at birenInit) makes the runtime write a trace-event JSON file when
 * the program exits: a track per stream, per compute unit and per copy engine, with kernels
 * (under their registered names), copies, event waits and host synchronizations. This program
 * sets BIREN_TRACE=biren_trace.json unless it is already set, then runs a small two-stream
 * pipeline with an event edge and copies, three times:
 *
 *   stream1:  copy in ---> square ---> record(ready)
 *   stream2:  prepare ----------------- wait(ready) ---> block_sums ---> copy out
 *   host:                                                         birenStreamSynchronize(stream2)
 *
 * Open the file at https://ui.perfetto.dev ("Open trace file") or in chrome://tracing ("Load").
 */
#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

enum { N = 1 << 16, BLOCK = 256, BLOCKS = N / BLOCK, ROUNDS = 3 };

static const char *trace_path;

/* args: (const float *in, float *out). out[i] = in[i] * in[i]. */
static void square(void **args) {
  const float *in = *(const float **)args[0];
  float *out = *(float **)args[1];
  unsigned i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  out[i] = in[i] * in[i];
}

/* args: (float *sums). Clears the per-block sums (independent of stream1: runs beside it). */
static void prepare(void **args) {
  float *sums = *(float **)args[0];
  sums[birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x] = 0.0f;
}

/* args: (const float *in, float *sums). Tree reduction of each block in shared memory. */
static void block_sums(void **args) {
  const float *in = *(const float **)args[0];
  float *sums = *(float **)args[1];
  float *shared = (float *)birenSharedMemory();
  unsigned t = birenThreadIdx().x, b = birenBlockIdx().x;
  shared[t] = in[b * BLOCK + t];
  birenSyncThreads();
  for (unsigned s = BLOCK / 2; s > 0; s /= 2) {
    if (t < s) shared[t] += shared[t + s];
    birenSyncThreads();
  }
  if (t == 0) sums[b] = shared[0];
}

/* Runs after the runtime's own exit handlers (registered later, so run earlier). */
static void report_trace(void) {
  struct stat st;
  if (stat(trace_path, &st) == 0 && st.st_size > 0) {
    printf("trace written: %s (%lld bytes)\n", trace_path, (long long)st.st_size);
  } else {
    printf("trace: %s is not there yet (the runtime writes it as the process ends; if it is still\n"
           "missing afterwards, this build of the library does not support BIREN_TRACE)\n",
           trace_path);
  }
  printf("open it: https://ui.perfetto.dev (\"Open trace file\") or chrome://tracing (\"Load\")\n");
}

int main(void) {
  if (getenv("BIREN_TRACE") == NULL) {
    setenv("BIREN_TRACE", "biren_trace.json", 0);
    remove("biren_trace.json"); /* so that a stale file from an earlier run is not mistaken for this one */
  }
  trace_path = getenv("BIREN_TRACE");
  atexit(report_trace); /* before birenInit, so that it runs after the runtime's exit handlers */
  BIREN_CHECK(birenInit());
  printf("08_trace: tracing to BIREN_TRACE=%s\n", trace_path);

  /* Registered kernels show in the trace under their names. */
  const size_t two_ptrs[] = {sizeof(float *), sizeof(float *)}, one_ptr[] = {sizeof(float *)};
  BIREN_CHECK(birenKernelRegister(square, "square", 2, two_ptrs));
  BIREN_CHECK(birenKernelRegister(prepare, "prepare", 1, one_ptr));
  BIREN_CHECK(birenKernelRegister(block_sums, "block_sums", 2, two_ptrs));

  float *h_in, *h_sums, *d_in, *d_sq, *d_sums;
  BIREN_CHECK(birenMallocHost((void **)&h_in, N * sizeof(float)));
  BIREN_CHECK(birenMallocHost((void **)&h_sums, BLOCKS * sizeof(float)));
  BIREN_CHECK(birenMalloc((void **)&d_in, N * sizeof(float)));
  BIREN_CHECK(birenMalloc((void **)&d_sq, N * sizeof(float)));
  BIREN_CHECK(birenMalloc((void **)&d_sums, BLOCKS * sizeof(float)));
  for (int i = 0; i < N; i++) h_in[i] = (float)(i % 100) / 100.0f;

  birenStream_t stream1, stream2;
  birenEvent_t ready, start, stop;
  BIREN_CHECK(birenStreamCreate(&stream1));
  BIREN_CHECK(birenStreamCreate(&stream2));
  BIREN_CHECK(birenEventCreateWithFlags(&ready, birenEventDisableTiming));
  BIREN_CHECK(birenEventCreate(&start));
  BIREN_CHECK(birenEventCreate(&stop));

  for (int r = 0; r < ROUNDS; r++) {
    BIREN_CHECK(birenEventRecord(start, stream1));
    BIREN_CHECK(birenMemcpyAsync(d_in, h_in, N * sizeof(float), birenMemcpyHostToDevice, stream1));
    BIREN_CHECK(birenLaunchKernel(square, birenDim3(BLOCKS, 1, 1), birenDim3(BLOCK, 1, 1), (void *[]){&d_in, &d_sq}, 0, stream1));
    BIREN_CHECK(birenEventRecord(ready, stream1));

    BIREN_CHECK(birenLaunchKernel(prepare, birenDim3(1, 1, 1), birenDim3(BLOCKS, 1, 1), (void *[]){&d_sums}, 0, stream2));
    BIREN_CHECK(birenStreamWaitEvent(stream2, ready)); /* the edge: stream2 waits for square */
    BIREN_CHECK(birenLaunchKernel(block_sums, birenDim3(BLOCKS, 1, 1), birenDim3(BLOCK, 1, 1), (void *[]){&d_sq, &d_sums},
                                  BLOCK * sizeof(float), stream2));
    BIREN_CHECK(birenMemcpyAsync(h_sums, d_sums, BLOCKS * sizeof(float), birenMemcpyDeviceToHost, stream2));
    BIREN_CHECK(birenEventRecord(stop, stream2));
    BIREN_CHECK(birenStreamSynchronize(stream2));

    double total = 0;
    for (int b = 0; b < BLOCKS; b++) total += h_sums[b];
    float ms = 0;
    BIREN_CHECK(birenEventElapsedTime(&ms, start, stop));
    printf("  round %d: sum of squares = %.2f, %.3f ms from copy-in to copy-out\n", r + 1, total, (double)ms);
  }

  BIREN_CHECK(birenEventDestroy(ready));
  BIREN_CHECK(birenEventDestroy(start));
  BIREN_CHECK(birenEventDestroy(stop));
  BIREN_CHECK(birenStreamDestroy(stream1));
  BIREN_CHECK(birenStreamDestroy(stream2));
  BIREN_CHECK(birenFree(d_in));
  BIREN_CHECK(birenFree(d_sq));
  BIREN_CHECK(birenFree(d_sums));
  BIREN_CHECK(birenFreeHost(h_in));
  BIREN_CHECK(birenFreeHost(h_sums));
  return 0;
}
