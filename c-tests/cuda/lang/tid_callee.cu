// A kernel with barriers whose device functions read threadIdx (and blockIdx) themselves: in
// region form every thread loop stores the thread's index where those functions read it.
// 2-D blocks, several blocks, a helper two calls deep, a guard on the helper's result.
#include <cstdio>
#include <cuda_runtime.h>

__device__ unsigned lin() { return threadIdx.y * blockDim.x + threadIdx.x; }
__device__ unsigned global_id() { return blockIdx.x * blockDim.x * blockDim.y + lin(); }

__global__ void reverse_in_block(const int *in, int *out) {
  __shared__ int s[256];
  unsigned n = blockDim.x * blockDim.y;
  s[lin()] = in[global_id()];
  __syncthreads();
  int v = s[n - 1 - lin()];
  __syncthreads();
  s[lin()] = v * 2;
  __syncthreads();
  if (lin() % 2 == 0) out[global_id()] = s[lin()] + (int)threadIdx.y;
  else out[global_id()] = -s[lin()];
}

int main() {
  const int blocks = 5, bx = 16, by = 12, n = blocks * bx * by;
  int *in, *out;
  cudaMallocManaged(&in, n * sizeof(int));
  cudaMallocManaged(&out, n * sizeof(int));
  for (int i = 0; i < n; i++) in[i] = i * 3 + 1;
  reverse_in_block<<<blocks, dim3(bx, by)>>>(in, out);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  int bad = 0;
  for (int b = 0; b < blocks; b++)
    for (int t = 0; t < bx * by; t++) {
      int g = b * bx * by + t, v = 2 * in[b * bx * by + (bx * by - 1 - t)];
      int want = t % 2 == 0 ? v + t / bx : -v;
      if (out[g] != want && bad++ < 5) printf("block %d thread %d: %d, want %d\n", b, t, out[g], want);
    }
  printf(bad ? "tid_callee: %d wrong\n" : "tid_callee: passed\n", bad);
  return bad != 0;
}
