// The same two kernels as kernels_c.c, written in CUDA: bench/cuda/compare.sh times both builds.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <chrono>
#include <cuda_runtime.h>

__global__ void saxpy(const float *x, float *y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void block_reduce(const float *in, float *out) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (unsigned k = 128; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20;
  const int n = 1 << 22;
  float *x, *y, *out;
  cudaMallocManaged(&x, n * sizeof(float));
  cudaMallocManaged(&y, n * sizeof(float));
  cudaMallocManaged(&out, (n / 256) * sizeof(float));
  for (int i = 0; i < n; i++) { x[i] = 1.0f; y[i] = 2.0f; }
  std::vector<double> ts, tr;
  for (int r = 0; r < reps; r++) {
    auto t0 = std::chrono::steady_clock::now();
    saxpy<<<n / 256, 256>>>(x, y, 0.5f, n);
    cudaDeviceSynchronize();
    auto t1 = std::chrono::steady_clock::now();
    block_reduce<<<n / 256, 256>>>(x, out);
    cudaDeviceSynchronize();
    auto t2 = std::chrono::steady_clock::now();
    ts.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    tr.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  std::sort(ts.begin(), ts.end());
  std::sort(tr.begin(), tr.end());
  if (out[0] != 256.0f || cudaGetLastError() != cudaSuccess) { printf("wrong result\n"); return 1; }
  printf("saxpy %.3f ms  reduce %.3f ms\n", ts[reps / 2], tr[reps / 2]);
  return 0;
}
