// Cooperative groups' block barrier in region form: cta.sync() and cg::sync(cta) split the
// kernel like __syncthreads(), the group's thread_rank() reads each thread's index. A kernel that
// also uses a warp tile keeps the fiber form (so does a loop whose header reads the group
// object: biren-cc does not yet know its size() is the block's). Results against the host, 2-D blocks included.
#include <cstdio>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

__global__ void block_sum(const int *in, int *out) {
  cg::thread_block cta = cg::this_thread_block();
  extern __shared__ int s[];
  unsigned t = cta.thread_rank();
  s[t] = in[blockIdx.x * cta.size() + t];
  cg::sync(cta);
  for (unsigned k = blockDim.x * blockDim.y / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    cta.sync();
  }
  if (t == 0) out[blockIdx.x] = s[0];
  cta.sync();
  // After the last barrier: every thread reads the block's sum and its own rank again.
  out[gridDim.x + blockIdx.x * cta.size() + t] = s[0] - (int)cta.thread_rank();
}

__global__ void tile_sum(const int *in, int *out) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  int v = in[blockIdx.x * cta.size() + cta.thread_rank()];
  for (int d = 16; d > 0; d >>= 1) v += tile.shfl_down(v, d);
  __shared__ int w[32];
  if (tile.thread_rank() == 0) w[tile.meta_group_rank()] = v;
  cta.sync();
  if (cta.thread_rank() == 0) {
    int s = 0;
    for (unsigned i = 0; i < cta.size() / 32; i++) s += w[i];
    out[blockIdx.x] = s;
  }
}

int main() {
  const int blocks = 6, bx = 16, by = 8, nt = bx * by, n = blocks * nt;
  int *in, *out;
  cudaMallocManaged(&in, n * sizeof(int));
  cudaMallocManaged(&out, (blocks + n) * sizeof(int));
  for (int i = 0; i < n; i++) in[i] = (i * 7) % 13 - 4;
  int bad = 0;
  for (int shape = 0; shape < 2; shape++) {
    dim3 block = shape ? dim3(bx, by) : dim3(nt);
    block_sum<<<blocks, block, nt * sizeof(int)>>>(in, out);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    for (int b = 0; b < blocks; b++) {
      int want = 0;
      for (int t = 0; t < nt; t++) want += in[b * nt + t];
      if (out[b] != want && bad++ < 5) printf("block_sum %d: %d, want %d\n", b, out[b], want);
      for (int t = 0; t < nt; t++)
        if (out[blocks + b * nt + t] != want - t && bad++ < 5) printf("block_sum %d/%d: %d\n", b, t, out[blocks + b * nt + t]);
    }
  }
  tile_sum<<<blocks, nt>>>(in, out);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  for (int b = 0; b < blocks; b++) {
    int want = 0;
    for (int t = 0; t < nt; t++) want += in[b * nt + t];
    if (out[b] != want && bad++ < 5) printf("tile_sum %d: %d, want %d\n", b, out[b], want);
  }
  printf(bad ? "cg_block: %d wrong\n" : "cg_block: passed\n", bad);
  return bad != 0;
}
