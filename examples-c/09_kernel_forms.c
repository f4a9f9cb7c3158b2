/* 09_kernel_forms.c -- the two ways to write a kernel, and what kernels can do together.
 *
 * Build alone (from the repository root, after `make`):
 *   cc -std=c99 -O3 -march=native -Iinclude examples-c/09_kernel_forms.c -Ltarget/release -Wl,-rpath,$PWD/target/release -lbiren_runtime -o forms
 *
 * 1. The same vector add twice: as a plain C function called once per simulated thread
 *    (void k(void **args)), and with BIREN_KERNEL, CUDA's per-thread body with typed parameters
 *    and threadIdx/blockIdx, which the compiler turns into one loop per block. Both are launched
 *    the same way; the times are printed (never asserted: a busy machine varies).
 * 2. A block sum in the BIREN_KERNEL form: a barrier, then a warp reduction by shuffles, then one
 *    atomic add per warp into the total.
 * 3. A cooperative launch: every block publishes a partial sum, birenGridSync() waits for all of
 *    them, then block 0 adds them up -- one kernel where CUDA would need two.
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

/* 1a. The per-thread form: arguments through void **args, indices through the built-ins. */
static void vadd_plain(void **args) {
  const float *a = *(const float **)args[0];
  const float *b = *(const float **)args[1];
  float *c = *(float **)args[2];
  int n = *(const int *)args[3];
  int i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  if (i < n) c[i] = a[i] + b[i];
}

/* 1b. The BIREN_KERNEL form: the same body, as CUDA writes it. */
BIREN_KERNEL(vadd, (const float *) a, (const float *) b, (float *) c, (int) n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

/* 2. Each block: values to shared memory, a barrier, each warp sums its 32 by shuffles, lane 0
 *    adds the warp's sum to the total. */
BIREN_KERNEL(block_sum, (const int *) in, (unsigned long long *) total) {
  int *sh = (int *)birenSharedMemory();
  int v, d;
  sh[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  birenSyncThreads();
  v = sh[threadIdx.x];
  for (d = 16; d > 0; d /= 2) v += birenShflDownSyncInt(0xffffffffu, v, d);
  if (birenLaneId() == 0) birenAtomicAddUll(total, (unsigned long long)v);
}

/* 3. One kernel, two phases over the whole grid. */
BIREN_KERNEL(grid_sum, (const int *) in, (long long *) partial, (long long *) result) {
  if (threadIdx.x == 0) {
    long long s = 0;
    unsigned k;
    for (k = 0; k < blockDim.x; k++) s += in[blockIdx.x * blockDim.x + k];
    partial[blockIdx.x] = s;
  }
  birenGridSync(); /* every block's partial sum is written */
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    long long s = 0;
    unsigned b;
    for (b = 0; b < gridDim.x; b++) s += partial[b];
    *result = s;
  }
}

int main(void) {
  enum { N = 1 << 22 };
  float *a, *b, *c;
  int n = N, i, reps;
  double t_plain = 1e9, t_form = 1e9;
  BIREN_CHECK(birenInit());

  /* 1 */
  BIREN_CHECK(birenMalloc((void **)&a, N * sizeof(float)));
  BIREN_CHECK(birenMalloc((void **)&b, N * sizeof(float)));
  BIREN_CHECK(birenMalloc((void **)&c, N * sizeof(float)));
  BIREN_CHECK(birenMemset(a, 0, N * sizeof(float)));
  BIREN_CHECK(birenMemset(b, 0, N * sizeof(float)));
  for (reps = 0; reps < 5; reps++) {
    double t0 = now_ms(), t1, t2;
    BIREN_CHECK(BIREN_LAUNCH(vadd_plain, birenDim3(N / 256, 1, 1), birenDim3(256, 1, 1), 0, NULL, a, b, c, n));
    BIREN_CHECK(birenDeviceSynchronize());
    t1 = now_ms();
    BIREN_CHECK(BIREN_LAUNCH(vadd, birenDim3(N / 256, 1, 1), birenDim3(256, 1, 1), 0, NULL, a, b, c, n));
    BIREN_CHECK(birenDeviceSynchronize());
    t2 = now_ms();
    if (t1 - t0 < t_plain) t_plain = t1 - t0;
    if (t2 - t1 < t_form) t_form = t2 - t1;
  }
  printf("1. vector add of %d floats: per-thread form %.1f ms, BIREN_KERNEL form %.1f ms (best of 5)\n", N,
         t_plain, t_form);

  /* 2 */
  {
    enum { M = 1 << 16 };
    static int h[M];
    int *d;
    unsigned long long *total, got = 0, want = 0;
    for (i = 0; i < M; i++) want += (unsigned long long)(h[i] = i % 1000);
    BIREN_CHECK(birenMalloc((void **)&d, sizeof h));
    BIREN_CHECK(birenMalloc((void **)&total, sizeof got));
    BIREN_CHECK(birenMemcpy(d, h, sizeof h, birenMemcpyHostToDevice));
    BIREN_CHECK(birenMemset(total, 0, sizeof got));
    BIREN_CHECK(BIREN_LAUNCH(block_sum, birenDim3(M / 256, 1, 1), birenDim3(256, 1, 1), 256 * sizeof(int), NULL, d, total));
    BIREN_CHECK(birenMemcpy(&got, total, sizeof got, birenMemcpyDeviceToHost));
    printf("2. barrier + warp shuffles + atomics: sum %llu (expected %llu)\n", got, want);
    if (got != want) return 1;

    /* 3 */
    {
      long long *partial, *result, r = 0;
      birenDeviceProp prop;
      unsigned blocks;
      BIREN_CHECK(birenGetDeviceProperties(&prop, 0));
      blocks = 2u * (unsigned)prop.multiProcessorCount; /* fits: at most 32 blocks per unit */
      BIREN_CHECK(birenMalloc((void **)&partial, blocks * sizeof(long long)));
      BIREN_CHECK(birenMalloc((void **)&result, sizeof r));
      {
        void *args[3];
        args[0] = &d;
        args[1] = &partial;
        args[2] = &result;
        BIREN_CHECK(birenLaunchCooperativeKernel(grid_sum, birenDim3(blocks, 1, 1), birenDim3(256, 1, 1), args, 0, NULL));
      }
      BIREN_CHECK(birenMemcpy(&r, result, sizeof r, birenMemcpyDeviceToHost));
      want = 0;
      for (i = 0; i < (int)(blocks * 256); i++) want += (unsigned long long)h[i];
      printf("3. cooperative launch, %u blocks, birenGridSync: sum %lld (expected %llu)\n", blocks, r, want);
      if ((unsigned long long)r != want) return 1;
      BIREN_CHECK(birenFree(partial));
      BIREN_CHECK(birenFree(result));
    }
    BIREN_CHECK(birenFree(d));
    BIREN_CHECK(birenFree(total));
  }
  BIREN_CHECK(birenFree(a));
  BIREN_CHECK(birenFree(b));
  BIREN_CHECK(birenFree(c));
  return 0;
}
