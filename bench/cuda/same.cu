// kernels.cu's kernels in CUDA and (same_c.c) as BIREN_KERNEL in C, in one program: each
// round launches the four in turn, so both forms meet the same machine state. Prints the
// medians (ms) and the ratios .cu / C (bench/cuda/compare.sh): saxpy .cu, C, ratio, then reduce's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

extern "C" void launch_saxpy_c(const float *x, float *y, float a, int n);
extern "C" void launch_block_reduce_c(const float *in, float *out, int n);

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

template <class F> static double timed(F f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  cudaDeviceSynchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20;
  const int n = 1 << 22;
  float *x, *y, *out;
  cudaMallocManaged(&x, n * sizeof(float));
  cudaMallocManaged(&y, n * sizeof(float));
  cudaMallocManaged(&out, (n / 256) * sizeof(float));
  for (int i = 0; i < n; i++) { x[i] = 1.0f; y[i] = 2.0f; }
  std::vector<double> su, sc, ru, rc;
  for (int r = 0; r < reps; r++) {
    // Which form goes first alternates: neither always follows the other's reduce.
    if (r % 2) sc.push_back(timed([&] { launch_saxpy_c(x, y, 0.5f, n); }));
    su.push_back(timed([&] { saxpy<<<n / 256, 256>>>(x, y, 0.5f, n); }));
    if (!(r % 2)) sc.push_back(timed([&] { launch_saxpy_c(x, y, 0.5f, n); }));
    out[0] = 0;
    ru.push_back(timed([&] { block_reduce<<<n / 256, 256>>>(x, out); }));
    if (out[0] != 256.0f) { printf("wrong result (.cu)\n"); return 1; }
    out[0] = 0;
    rc.push_back(timed([&] { launch_block_reduce_c(x, out, n); }));
    if (out[0] != 256.0f) { printf("wrong result (C)\n"); return 1; }
  }
  if (cudaGetLastError() != cudaSuccess) { printf("error\n"); return 1; }
  printf("saxpy %.3f %.3f %.3f reduce %.3f %.3f %.3f\n", median(su), median(sc),
         median(su) / median(sc), median(ru), median(rc), median(ru) / median(rc));
  return 0;
}
