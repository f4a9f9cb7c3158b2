// Kernels with barriers that region form takes as CUDA writes them:
// - a parameter the kernel changes by the thread's index (convolutionSeparable's `d_Src += ...`):
//   each thread's own copy, kept across the barrier;
// - the block size from a local header (quoted include, beside this file);
// - a division after a return that skips it (`if (n == 0) return;`): evaluated only where the
//   threads reach it, never before (a division by zero would fault where CUDA's does not).
#include <cstdio>
#include <cuda_runtime.h>
#include "param_change.h"

__global__ void shift_reverse(const int *src, int *dst, int n) {
  __shared__ int s[PC_BLOCK];
  src += blockIdx.x * PC_BLOCK + threadIdx.x;
  dst += blockIdx.x * PC_BLOCK;
  s[threadIdx.x] = threadIdx.x < (unsigned)n ? src[0] : -1;
  __syncthreads();
  dst[threadIdx.x] = s[PC_BLOCK - 1 - threadIdx.x] * 10000 + src[0];
  n++;  // changed after the last use: still its own copy
}

__global__ void per_share(int *out, int n) {
  __shared__ int s[PC_BLOCK];
  if (n == 0) return;
  int per = PC_BLOCK / n;
  s[threadIdx.x] = per;
  __syncthreads();
  out[blockIdx.x * PC_BLOCK + threadIdx.x] = s[PC_BLOCK - 1 - threadIdx.x] + per;
}

int main() {
  const int blocks = 3, n = blocks * PC_BLOCK;
  int *src, *dst, bad = 0;
  cudaMallocManaged(&src, n * sizeof(int));
  cudaMallocManaged(&dst, n * sizeof(int));
  for (int i = 0; i < n; i++) src[i] = 7 * i + 1;
  shift_reverse<<<blocks, PC_BLOCK>>>(src, dst, PC_BLOCK);
  if (cudaDeviceSynchronize() != cudaSuccess) bad++;
  for (int b = 0; b < blocks; b++)
    for (int t = 0; t < PC_BLOCK; t++) {
      int g = b * PC_BLOCK + t;
      int want = src[b * PC_BLOCK + PC_BLOCK - 1 - t] * 10000 + src[g];
      if (dst[g] != want && bad++ < 5) printf("shift_reverse: dst[%d] = %d, want %d\n", g, dst[g], want);
    }
  per_share<<<blocks, PC_BLOCK>>>(dst, 0);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess && bad++ < 5) printf("per_share(n = 0): %s\n", cudaGetErrorString(e));
  per_share<<<blocks, PC_BLOCK>>>(dst, 4);
  if (cudaDeviceSynchronize() != cudaSuccess) bad++;
  for (int g = 0; g < n; g++)
    if (dst[g] != 2 * (PC_BLOCK / 4) && bad++ < 5) printf("per_share: dst[%d] = %d\n", g, dst[g]);
  printf(bad ? "param_change: %d wrong\n" : "param_change: passed\n", bad);
  return bad != 0;
}
