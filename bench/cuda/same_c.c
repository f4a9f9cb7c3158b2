/* The kernels of kernels.cu as BIREN_KERNEL in C, linked into same.cu's program: one process
 * launches both forms in turn (bench/cuda/compare.sh). */
#include <biren_runtime.h>

BIREN_KERNEL(saxpy_c, (const float *) x, (float *) y, (float) a, (int) n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

BIREN_KERNEL(block_reduce_c, (const float *) in, (float *) out) {
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

void launch_saxpy_c(const float *x, float *y, float a, int n) {
  BIREN_LAUNCH(saxpy_c, birenDim3(n / 256, 1, 1), birenDim3(256, 1, 1), 0, 0, x, y, a, n);
}

void launch_block_reduce_c(const float *in, float *out, int n) {
  BIREN_LAUNCH(block_reduce_c, birenDim3(n / 256, 1, 1), birenDim3(256, 1, 1), 0, 0, in, out);
}
