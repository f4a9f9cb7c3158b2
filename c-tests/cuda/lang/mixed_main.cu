// A .cu and a .c file in one command (c_helper.c): the C file stays C.
#include <cstdio>
#include <cuda_runtime.h>

extern "C" int c_helper_sum(const int *v, int n);

__global__ void iota(int *v) { v[threadIdx.x] = threadIdx.x; }

int main() {
  int *v;
  if (cudaMallocManaged(&v, 32 * sizeof(int)) != cudaSuccess) return 1;
  iota<<<1, 32>>>(v);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  int s = c_helper_sum(v, 32);
  printf(s == 496 ? "mixed: passed\n" : "mixed: wrong sum %d\n", s);
  return s != 496;
}
