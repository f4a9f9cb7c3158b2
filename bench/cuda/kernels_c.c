/* The same two kernels as kernels.cu, written with BIREN_KERNEL: bench/cuda/compare.sh. */
#include <biren_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

BIREN_KERNEL(saxpy, (const float *) x, (float *) y, (float) a, (int) n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

BIREN_KERNEL(block_reduce, (const float *) in, (float *) out) {
  BIREN_SHARED float s[256];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  birenSyncThreads();
  for (unsigned k = 128; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    birenSyncThreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20, r, i;
  const int n = 1 << 22;
  float *x, *y, *out;
  double ts[200], tr[200];
  if (reps > 200) reps = 200;
  birenInit();
  birenMallocManaged((void **)&x, n * sizeof(float), birenMemAttachGlobal);
  birenMallocManaged((void **)&y, n * sizeof(float), birenMemAttachGlobal);
  birenMallocManaged((void **)&out, (n / 256) * sizeof(float), birenMemAttachGlobal);
  for (i = 0; i < n; i++) { x[i] = 1.0f; y[i] = 2.0f; }
  for (r = 0; r < reps; r++) {
    double t0 = now_ms(), t1, t2;
    BIREN_LAUNCH(saxpy, birenDim3(n / 256, 1, 1), birenDim3(256, 1, 1), 0, 0, x, y, 0.5f, n);
    birenDeviceSynchronize();
    t1 = now_ms();
    BIREN_LAUNCH(block_reduce, birenDim3(n / 256, 1, 1), birenDim3(256, 1, 1), 0, 0, x, out);
    birenDeviceSynchronize();
    t2 = now_ms();
    ts[r] = t1 - t0;
    tr[r] = t2 - t1;
  }
  qsort(ts, reps, sizeof(double), cmp);
  qsort(tr, reps, sizeof(double), cmp);
  if (out[0] != 256.0f) { printf("wrong result\n"); return 1; }
  printf("saxpy %.3f ms  reduce %.3f ms\n", ts[reps / 2], tr[reps / 2]);
  return 0;
}
