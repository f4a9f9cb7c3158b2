// CUDA language features through biren-cc, each checked against CUDA's documented semantics.
// Built unchanged by c-tests/cuda/test_cu_language.sh (with kernels_b.cu, launched from here).
#include <cassert>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

static int failures = 0;
#define EXPECT(c)                                                                                 \
  do {                                                                                            \
    if (!(c)) {                                                                                   \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);                                         \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)
#define OK(call) EXPECT((call) == cudaSuccess)

extern "C" __global__ void scale_other_file(float *a, float s, int n); // kernels_b.cu

__constant__ float c_coef[4];
__device__ int d_counter;
__device__ int d_table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__managed__ int m_value;

__device__ __forceinline__ int my_global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

__global__ void __launch_bounds__(256) axpb(const float *__restrict__ x, float *__restrict__ y, int n) {
  int i = my_global_index(); // a device function reading threadIdx, in a thread loop
  if (i < n) y[i] = c_coef[0] * x[i] + c_coef[1];
}

template <class T, int B> __global__ void block_sum(const T *in, T *out) {
  __shared__ T s[B];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * B + t];
  __syncthreads();
  for (int k = B / 2; k > 0; k >>= 1) {
    if (t < (unsigned)k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

template <class T> __global__ void fill(T *p, T v, int n) { // deduced from the launch
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

__global__ void dyn_shared(int *out) {
  extern __shared__ int buf[];
  buf[threadIdx.x] = threadIdx.x * 2;
  __syncthreads();
  out[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}

__global__ void sync_votes(int *out) {
  int t = threadIdx.x;
  int c = __syncthreads_count(t % 3 == 0);
  int a = __syncthreads_and(t >= 0);
  int o = __syncthreads_or(t == 5);
  if (t == 0) {
    out[0] = c;
    out[1] = a;
    out[2] = o;
  }
}

__global__ void warp_ops(int *out) {
  int t = threadIdx.x;
  unsigned b = __ballot_sync(0xffffffffu, t & 1);
  int any = __any_sync(0xffffffffu, t == 7);
  int all = __all_sync(0xffffffffu, t < 64);
  int down = __shfl_down_sync(0xffffffffu, t, 1);
  int x = __shfl_xor_sync(0xffffffffu, t, 16);
  int src = __shfl_sync(0xffffffffu, t * 10, 3);
  __syncwarp();
  out[t * 6 + 0] = (int)b;
  out[t * 6 + 1] = any;
  out[t * 6 + 2] = all;
  out[t * 6 + 3] = down;
  out[t * 6 + 4] = x;
  out[t * 6 + 5] = src;
}

__device__ int tile_sum(cg::thread_block_tile<16> tile, int v) { return cg::reduce(tile, v, cg::plus<int>()); }

__global__ void groups(int *out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
  int r = tile_sum(tile, (int)tile.thread_rank());
  block.sync();
  int rank = (int)block.thread_rank();
  out[rank * 4 + 0] = r;
  out[rank * 4 + 1] = (int)tile.meta_group_rank();
  out[rank * 4 + 2] = tile.shfl(rank, 0);
  out[rank * 4 + 3] = cg::reduce(tile, rank, cg::greater<int>());
}

__global__ void grid_wide(int *data, int *result) {
  cg::grid_group grid = cg::this_grid();
  atomicAdd(&data[0], 1);
  grid.sync();
  if (grid.thread_rank() == 0) *result = data[0];
}

__global__ void atomics(int *i, unsigned *u, unsigned long long *ull, float *f, double *d) {
  atomicAdd(i, 2);
  atomicSub(i + 1, 1);
  atomicMax(i + 2, (int)threadIdx.x);
  atomicMin(i + 3, -(int)threadIdx.x);
  atomicInc(u, 7u);
  atomicOr(u + 1, 1u << (threadIdx.x % 32));
  atomicAdd(ull, 1ull);
  atomicCAS(i + 4, 0, 42);
  atomicAdd(f, 0.5f);
  atomicAdd(d, 0.25);
  atomicExch(i + 5, 9);
  atomicAdd(&d_counter, 1);
}

__global__ void intrinsics(int *o, float *f) {
  o[0] = __popc(0xF0F0u);
  o[1] = __clz(1);
  o[2] = __ffs(8);
  o[3] = (int)__brev(1u);
  o[4] = __mul24(3000, 4000);
  o[5] = warpSize;
  o[6] = min(3, 7) + max(2u, 5u);
  o[7] = __float_as_int(1.0f);
  f[0] = __saturatef(1.5f);
  f[1] = __fdividef(1.0f, 4.0f);
  f[2] = rsqrtf(4.0f);
  f[3] = __expf(0.0f);
  long long t0 = clock64();
  clock_t c0 = clock();
  o[8] = clock64() >= t0 && clock() >= c0;
  o[9] = d_table[7];
  m_value = 77;
}

__global__ void asserting(int n) { assert(threadIdx.x < (unsigned)n); }

__global__ void empty_kernel() {}

int main() {
  const int n = 1000;
  float *x, *y;
  OK(cudaMallocManaged(&x, n * sizeof(float)));
  OK(cudaMallocManaged(&y, n * sizeof(float)));
  for (int i = 0; i < n; i++) x[i] = (float)i;
  float coef[4] = {2, 1, 0, 0};
  OK(cudaMemcpyToSymbol(c_coef, coef, sizeof coef));
  dim3 block(256), grid((n + 255) / 256);
  axpb<<<grid, block>>>(x, y, n);
  OK(cudaGetLastError());
  OK(cudaDeviceSynchronize());
  for (int i = 0; i < n; i++) EXPECT(y[i] == 2.0f * i + 1.0f);

  // Another file's extern "C" kernel, launched with an integer configuration and a stream.
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  scale_other_file<<<4, 256, 0, s>>>(y, 0.5f, n);
  OK(cudaStreamSynchronize(s));
  EXPECT(y[10] == 10.5f);

  // A template with explicit arguments, its static shared array per block.
  float *sums;
  OK(cudaMallocManaged(&sums, 3 * sizeof(float)));
  block_sum<float, 256><<<3, 256>>>(x, sums);
  OK(cudaDeviceSynchronize());
  for (int b = 0; b < 3; b++) EXPECT(sums[b] == (float)(256 * 256 * b + 255 * 128));

  // A template deduced from its arguments.
  int *ip;
  OK(cudaMallocManaged(&ip, 2048 * sizeof(int)));
  fill<<<2, 512>>>(ip, 7, 1000);
  OK(cudaDeviceSynchronize());
  EXPECT(ip[0] == 7 && ip[999] == 7);

  // Dynamic shared memory: extern __shared__.
  dyn_shared<<<1, 64, 64 * sizeof(int)>>>(ip);
  OK(cudaDeviceSynchronize());
  EXPECT(ip[0] == 126 && ip[63] == 0);

  // __syncthreads_count/_and/_or.
  sync_votes<<<1, 100>>>(ip);
  OK(cudaDeviceSynchronize());
  EXPECT(ip[0] == 34 && ip[1] == 1 && ip[2] == 1);

  // Warp operations.
  warp_ops<<<1, 64>>>(ip);
  OK(cudaDeviceSynchronize());
  EXPECT((unsigned)ip[0] == 0xAAAAAAAAu && ip[1] == 1 && ip[2] == 1);
  EXPECT(ip[5 * 6 + 3] == 6 && ip[5 * 6 + 4] == 21 && ip[40 * 6 + 5] == 350);
  EXPECT(ip[32 * 6 + 1] == 0); // lane 7 of the second warp is thread 39: no t == 7 there

  // Cooperative groups: tiles, shuffles, reduce.
  groups<<<1, 64>>>(ip);
  OK(cudaDeviceSynchronize());
  EXPECT(ip[0] == 120 && ip[17 * 4 + 0] == 120 && ip[17 * 4 + 1] == 1);
  EXPECT(ip[20 * 4 + 2] == 16 && ip[20 * 4 + 3] == 31);

  // A cooperative launch with a grid barrier, the kernel passed by pointer.
  int attr = 0;
  OK(cudaDeviceGetAttribute(&attr, cudaDevAttrCooperativeLaunch, 0));
  EXPECT(attr == 1);
  int *data, *result;
  OK(cudaMallocManaged(&data, sizeof(int)));
  OK(cudaMallocManaged(&result, sizeof(int)));
  *data = 0;
  void *args[] = {&data, &result};
  OK(cudaLaunchCooperativeKernel((void *)grid_wide, dim3(2), dim3(32), args, 0, 0));
  OK(cudaDeviceSynchronize());
  EXPECT(*result == 64);

  // cudaLaunchKernel with the kernel's address; attributes and occupancy by the kernel.
  float two = 2.0f;
  int nn = n;
  void *args2[] = {&y, &two, &nn};
  OK(cudaLaunchKernel((const void *)scale_other_file, dim3(4), dim3(256), args2, 0, 0));
  OK(cudaDeviceSynchronize());
  EXPECT(y[10] == 21.0f);
  cudaFuncAttributes fa;
  OK(cudaFuncGetAttributes(&fa, axpb));
  EXPECT(fa.maxThreadsPerBlock > 0);
  int blocks = 0;
  OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, block_sum<float, 256>, 256, 0));
  EXPECT(blocks > 0);

  // Atomics, every overload family.
  int *ia;
  unsigned *ua;
  unsigned long long *ulla;
  float *fa2;
  double *da;
  OK(cudaMallocManaged(&ia, 6 * sizeof(int)));
  OK(cudaMallocManaged(&ua, 2 * sizeof(unsigned)));
  OK(cudaMallocManaged(&ulla, sizeof(unsigned long long)));
  OK(cudaMallocManaged(&fa2, sizeof(float)));
  OK(cudaMallocManaged(&da, sizeof(double)));
  memset(ia, 0, 6 * sizeof(int));
  memset(ua, 0, 2 * sizeof(unsigned));
  *ulla = 0;
  *fa2 = 0;
  *da = 0;
  int zero = 0;
  OK(cudaMemcpyToSymbol(d_counter, &zero, sizeof zero));
  atomics<<<2, 64>>>(ia, ua, ulla, fa2, da);
  OK(cudaDeviceSynchronize());
  EXPECT(ia[0] == 256 && ia[1] == -128 && ia[2] == 63 && ia[3] == -63 && ia[4] == 42 && ia[5] == 9);
  EXPECT(ua[0] == 128 % 8 && ua[1] == 0xffffffffu && *ulla == 128 && *fa2 == 64.0f && *da == 32.0);
  int counter = 0;
  OK(cudaMemcpyFromSymbol(&counter, d_counter, sizeof counter));
  EXPECT(counter == 128);

  // Intrinsics, device variables with initializers, __managed__.
  float *ff;
  OK(cudaMallocManaged(&ff, 4 * sizeof(float)));
  intrinsics<<<1, 1>>>(ip, ff);
  OK(cudaDeviceSynchronize());
  EXPECT(ip[0] == 8 && ip[1] == 31 && ip[2] == 4 && (unsigned)ip[3] == 0x80000000u);
  EXPECT(ip[4] == 12000000 && ip[5] == 32 && ip[6] == 8 && ip[7] == 0x3f800000 && ip[8] == 1 && ip[9] == 8);
  EXPECT(ff[0] == 1.0f && ff[1] == 0.25f && ff[2] == 0.5f && ff[3] == 1.0f && m_value == 77);
  printf("kernel printf from the device:\n");

  // A failed assert fails the launch with cudaErrorAssert (sticky, as CUDA's).
  asserting<<<1, 8>>>(4);
  EXPECT(cudaDeviceSynchronize() == cudaErrorAssert);
  EXPECT(cudaDeviceSynchronize() == cudaErrorAssert);
  OK(cudaDeviceReset());
  empty_kernel<<<1, 1>>>();
  OK(cudaDeviceSynchronize());

  if (failures) {
    printf("features: %d FAILED\n", failures);
    return 1;
  }
  printf("features: all passed\n");
  return 0;
}
