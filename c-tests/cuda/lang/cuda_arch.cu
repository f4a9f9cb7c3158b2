// __CUDA_ARCH__ as programs test it: defined (600, the device's 6.0) in kernels and __device__
// functions, also in the program's headers; undefined in host code and, since one pass compiles
// both sides, in __host__ __device__ functions (their host reading). A kernel whose device
// branch calls a function reading threadIdx stays correct.
#include <cstdio>
#include <cuda_runtime.h>
#include "cuda_arch.h"

__device__ int dev_arch() {
#ifdef __CUDA_ARCH__
  return __CUDA_ARCH__;
#else
  return -1;
#endif
}

__host__ __device__ int hd_arch() {
#ifdef __CUDA_ARCH__
  return __CUDA_ARCH__;
#else
  return -2;
#endif
}

__device__ int tid_helper() { return threadIdx.x; }

// The device branch reads threadIdx through a call and has a barrier after it.
__global__ void arch_kernel(int *out) {
  __shared__ int s[64];
  int t = threadIdx.x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600
  s[t] = tid_helper() + 1;
#else
  s[t] = 1000;
#endif
  __syncthreads();
  out[t] = s[63 - t];
  if (t == 0) {
    out[64] = dev_arch();
    out[65] = hd_arch();
    out[67] = header_arch();
#ifdef __CUDA_ARCH__
    out[66] = __CUDA_ARCH__;
#endif
  }
}

int main() {
  int *o;
  if (cudaMallocManaged(&o, 68 * sizeof(int)) != cudaSuccess) return 1;
  o[66] = 0;
  arch_kernel<<<1, 64>>>(o);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  int bad = 0;
  for (int i = 0; i < 64; i++) bad += o[i] != 64 - i;
#ifdef __CUDA_ARCH__
  bad += 1000;  // host code: undefined
#endif
  if (bad || o[64] != 600 || o[65] != -2 || o[66] != 600 || o[67] != 601) {
    printf("cuda_arch: wrong: %d %d %d %d %d\n", bad, o[64], o[65], o[66], o[67]);
    return 1;
  }
  printf("cuda_arch: passed\n");
  return 0;
}
