// Device functions with barriers, inlined into their kernels (region form, as MCUDA): a void
// helper as a statement, helpers returning values used in a declaration, an assignment and
// a return of another helper (scan's scan4Exclusive -> scan1Exclusive -> scan1Inclusive
// shape), a cooperative group passed as thread_block and as the generic thread_group,
// locals of the same names as the kernel's, a helper called twice.
#include <cstdio>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

#define B 128

__device__ void halve(int *v) {
  for (int s = B / 2; s > 0; s >>= 1) {
    if (threadIdx.x < (unsigned)s) v[threadIdx.x] += v[threadIdx.x + s];
    __syncthreads();
  }
}

__device__ unsigned inclusive(unsigned x, volatile unsigned *s, unsigned size, cg::thread_block cta) {
  unsigned pos = 2 * threadIdx.x - (threadIdx.x & (size - 1));
  s[pos] = 0;
  pos += size;
  s[pos] = x;
  for (unsigned offset = 1; offset < size; offset <<= 1) {
    cg::sync(cta);
    unsigned t = s[pos] + s[pos - offset];
    cg::sync(cta);
    s[pos] = t;
  }
  return s[pos];
}

__device__ unsigned exclusive(unsigned x, volatile unsigned *s, unsigned size, cg::thread_block cta) {
  return inclusive(x, s, size, cta) - x;
}

__device__ int group_sum(cg::thread_group g, int *x, int val) {
  int lane = g.thread_rank();
  for (int i = g.size() / 2; i > 0; i /= 2) {
    x[lane] = val;
    g.sync();
    if (lane < i) val += x[lane + i];
    g.sync();
  }
  return val;
}

__global__ void helpers(const int *in, int *sums, unsigned *scans, int *groups) {
  __shared__ int v[B];
  __shared__ unsigned s[2 * B];
  __shared__ int w[B];
  cg::thread_block cta = cg::this_thread_block();
  int pos = blockIdx.x * B + threadIdx.x;  // `pos` is a helper's local name too
  v[threadIdx.x] = in[pos];
  __syncthreads();
  halve(v);
  if (threadIdx.x == 0) sums[blockIdx.x] = v[0];
  unsigned e = exclusive((unsigned)in[pos], s, B, cta);
  scans[pos] = e;
  int g;
  g = group_sum(cta, w, in[pos]);
  groups[pos] = g + group_sum(cta, w, 1);
}

int main() {
  const int blocks = 4, n = blocks * B;
  int *in, *sums, *groups, bad = 0;
  unsigned *scans;
  cudaMallocManaged(&in, n * sizeof(int));
  cudaMallocManaged(&sums, blocks * sizeof(int));
  cudaMallocManaged(&scans, n * sizeof(unsigned));
  cudaMallocManaged(&groups, n * sizeof(int));
  for (int i = 0; i < n; i++) in[i] = (i * 7) % 13;
  helpers<<<blocks, B>>>(in, sums, scans, groups);
  if (cudaDeviceSynchronize() != cudaSuccess) bad++;
  for (int b = 0; b < blocks; b++) {
    int sum = 0;
    unsigned run = 0;
    for (int t = 0; t < B; t++) {
      int i = b * B + t;
      if (scans[i] != run && bad++ < 5) printf("scan[%d] = %u, want %u\n", i, scans[i], run);
      run += (unsigned)in[i];
      sum += in[i];
    }
    if (sums[b] != sum && bad++ < 5) printf("sum[%d] = %d, want %d\n", b, sums[b], sum);
    // The group's sum reaches thread 0 whole; the others hold partial sums of CUDA's tree.
    if (groups[b * B] != sum + B && bad++ < 5) printf("groups[%d] = %d, want %d\n", b * B, groups[b * B], sum + B);
  }
  printf(bad ? "helper_barrier: %d wrong\n" : "helper_barrier: passed\n", bad);
  return bad != 0;
}
