/*
 * cooperative_groups.h -- CUDA's cooperative groups for programs built with biren-cc: the block
 * (this_thread_block), the grid of a cooperative launch (this_grid, its sync), warp tiles
 * (tiled_partition<N>(g), tiled_partition(g, n), N a power of two up to 32) with their shuffles,
 * votes and sync, coalesced_threads(), and cg::reduce (cooperative_groups/reduce.h).
 * A group carries the kernel's hidden loop (biren_loop_), so its sync points work wherever
 * BIREN's own do. What differs from CUDA: warps run converged, so coalesced_threads() names every
 * lane of the warp that exists, not only those in the current branch; a tile larger than a warp
 * exists only as the whole block (tiled_partition(block, n) with n = the block's size).
 */
#ifndef BIREN_COOPERATIVE_GROUPS_H_
#define BIREN_COOPERATIVE_GROUPS_H_

#include "cuda_runtime.h"

namespace cooperative_groups {
namespace details {
inline dim3 tid(const birenKernelLoop *l) { return l ? l->tid : birenKernelCtxFast()->threadIdx; }
inline unsigned block_rank_of(const birenKernelLoop *l) {
  const birenKernelCtx *c = birenKernelCtxFast();
  dim3 t = tid(l);
  return t.x + c->blockDim.x * (t.y + c->blockDim.y * t.z);
}
inline unsigned block_size() {
  const birenKernelCtx *c = birenKernelCtxFast();
  return c->blockDim.x * c->blockDim.y * c->blockDim.z;
}
/* A shuffle of any trivially copyable value (CUDA's tiles shuffle structs and vectors): its
 * 32-bit words one after another; arithmetic types go straight to BIREN's shuffles. */
enum shfl_kind { shfl_idx, shfl_up, shfl_down, shfl_xor };
inline unsigned shfl_word(birenKernelLoop *l, unsigned mask, unsigned v, int p, int w, shfl_kind k) {
  switch (k) {
  case shfl_up: return birenShflUpSyncIn_(l, mask, v, p, w);
  case shfl_down: return birenShflDownSyncIn_(l, mask, v, p, w);
  case shfl_xor: return birenShflXorSyncIn_(l, mask, v, p, w);
  default: return birenShflSyncIn_(l, mask, v, p, w);
  }
}
template <class T> inline T shfl_any(birenKernelLoop *l, unsigned mask, T v, int p, int w, shfl_kind k) {
  unsigned words[(sizeof(T) + 3) / 4] = {0};
  memcpy(words, &v, sizeof(T));
  for (unsigned i = 0; i < (sizeof(T) + 3) / 4; i++) words[i] = shfl_word(l, mask, words[i], p, w, k);
  T r;
  memcpy(&r, words, sizeof(T));
  return r;
}

/* The lanes of a tile of `n` threads (a power of two <= 32) that holds the calling lane. */
inline unsigned tile_mask(const birenKernelLoop *l, unsigned n) {
  if (n >= 32) return 0xffffffffu;
  unsigned lane = block_rank_of(l) & 31u;
  return ((1u << n) - 1u) << (lane & ~(n - 1u));
}
} // namespace details

/* A group of `n` consecutive threads of a block (n a power of two <= 32, or the whole block):
 * what a function taking any group (cg::thread_group) gets. */
class thread_group {
public:
  birenKernelLoop *loop_;
  unsigned n_;
  thread_group(birenKernelLoop *l, unsigned n) : loop_(l), n_(n) {}
  unsigned long long thread_rank() const { return details::block_rank_of(loop_) % n_; }
  unsigned long long size() const { return n_; }
  unsigned long long num_threads() const { return n_; }
  unsigned long long meta_group_rank() const { return details::block_rank_of(loop_) / n_; }
  unsigned long long meta_group_size() const { return (details::block_size() + n_ - 1) / n_; }
  void sync() const {
    if (n_ <= 32 && n_ < details::block_size())
      (void)birenWarpExchange(loop_, details::tile_mask(loop_, n_), 0, 0ull, 0, 32);
    else
      birenSyncThreadsLoop(loop_);
  }
  bool is_valid() const { return true; }
};

/* The threads of one block. */
class thread_block {
public:
  birenKernelLoop *loop_;
  explicit thread_block(birenKernelLoop *l) : loop_(l) {}
  operator thread_group() const { return thread_group(loop_, details::block_size()); }
  void sync() const { birenSyncThreadsLoop(loop_); }
  unsigned long long thread_rank() const { return details::block_rank_of(loop_); }
  unsigned long long size() const { return details::block_size(); }
  unsigned long long num_threads() const { return details::block_size(); }
  dim3 group_index() const { return birenKernelCtxFast()->blockIdx; }
  dim3 thread_index() const { return details::tid(loop_); }
  dim3 group_dim() const { return birenKernelCtxFast()->blockDim; }
  dim3 dim_threads() const { return birenKernelCtxFast()->blockDim; }
  bool is_valid() const { return true; }
};
inline thread_block this_thread_block_(birenKernelLoop *l) { return thread_block(l); }
#define this_thread_block() this_thread_block_(biren_loop_)

/* The grid of a cooperative launch (cudaLaunchCooperativeKernel): sync() is a grid barrier. */
class grid_group {
public:
  birenKernelLoop *loop_;
  explicit grid_group(birenKernelLoop *l) : loop_(l) {}
  void sync() const { birenGridSyncLoop(loop_); }
  unsigned long long block_rank() const {
    const birenKernelCtx *c = birenKernelCtxFast();
    return c->blockIdx.x + (unsigned long long)c->gridDim.x * (c->blockIdx.y + (unsigned long long)c->gridDim.y * c->blockIdx.z);
  }
  unsigned long long num_blocks() const {
    const birenKernelCtx *c = birenKernelCtxFast();
    return (unsigned long long)c->gridDim.x * c->gridDim.y * c->gridDim.z;
  }
  unsigned long long thread_rank() const { return block_rank() * details::block_size() + details::block_rank_of(loop_); }
  unsigned long long size() const { return num_blocks() * details::block_size(); }
  unsigned long long num_threads() const { return size(); }
  dim3 group_dim() const { return birenKernelCtxFast()->gridDim; }
  bool is_valid() const { return true; }
};
inline grid_group this_grid_(birenKernelLoop *l) { return grid_group(l); }
#define this_grid() this_grid_(biren_loop_)

/* A tile of N threads (a power of two <= 32): CUDA's thread_block_tile<N>. */
template <unsigned N> class thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "a thread_block_tile has a power of two <= 32 threads");

public:
  birenKernelLoop *loop_;
  explicit thread_block_tile(birenKernelLoop *l) : loop_(l) {}
  operator thread_group() const { return thread_group(loop_, N); }
  static constexpr unsigned long long size() { return N; }
  static constexpr unsigned long long num_threads() { return N; }
  unsigned long long thread_rank() const { return details::block_rank_of(loop_) & (N - 1); }
  unsigned long long meta_group_rank() const { return details::block_rank_of(loop_) / N; }
  unsigned long long meta_group_size() const { return (details::block_size() + N - 1) / N; }
  unsigned mask_() const { return details::tile_mask(loop_, N); }
  void sync() const { (void)birenWarpExchange(loop_, mask_(), 0, 0ull, 0, 32); }
  template <class T> T shfl(T v, int src) const { return details::shfl_any(loop_, mask_(), v, src, (int)N, details::shfl_idx); }
  template <class T> T shfl_down(T v, unsigned d) const { return details::shfl_any(loop_, mask_(), v, (int)d, (int)N, details::shfl_down); }
  template <class T> T shfl_up(T v, unsigned d) const { return details::shfl_any(loop_, mask_(), v, (int)d, (int)N, details::shfl_up); }
  template <class T> T shfl_xor(T v, unsigned m) const { return details::shfl_any(loop_, mask_(), v, (int)m, (int)N, details::shfl_xor); }
  int shfl(int v, int src) const { return birenShflSyncIn_(loop_, mask_(), v, src, (int)N); }
  unsigned shfl(unsigned v, int src) const { return birenShflSyncIn_(loop_, mask_(), v, src, (int)N); }
  float shfl(float v, int src) const { return birenShflSyncIn_(loop_, mask_(), v, src, (int)N); }
  double shfl(double v, int src) const { return birenShflSyncIn_(loop_, mask_(), v, src, (int)N); }
  int shfl_down(int v, unsigned d) const { return birenShflDownSyncIn_(loop_, mask_(), v, (int)d, (int)N); }
  unsigned shfl_down(unsigned v, unsigned d) const { return birenShflDownSyncIn_(loop_, mask_(), v, (int)d, (int)N); }
  float shfl_down(float v, unsigned d) const { return birenShflDownSyncIn_(loop_, mask_(), v, (int)d, (int)N); }
  double shfl_down(double v, unsigned d) const { return birenShflDownSyncIn_(loop_, mask_(), v, (int)d, (int)N); }
  int shfl_up(int v, unsigned d) const { return birenShflUpSyncIn_(loop_, mask_(), v, (int)d, (int)N); }
  unsigned shfl_up(unsigned v, unsigned d) const { return birenShflUpSyncIn_(loop_, mask_(), v, (int)d, (int)N); }
  float shfl_up(float v, unsigned d) const { return birenShflUpSyncIn_(loop_, mask_(), v, (int)d, (int)N); }
  double shfl_up(double v, unsigned d) const { return birenShflUpSyncIn_(loop_, mask_(), v, (int)d, (int)N); }
  int shfl_xor(int v, unsigned m) const { return birenShflXorSyncIn_(loop_, mask_(), v, (int)m, (int)N); }
  unsigned shfl_xor(unsigned v, unsigned m) const { return birenShflXorSyncIn_(loop_, mask_(), v, (int)m, (int)N); }
  float shfl_xor(float v, unsigned m) const { return birenShflXorSyncIn_(loop_, mask_(), v, (int)m, (int)N); }
  double shfl_xor(double v, unsigned m) const { return birenShflXorSyncIn_(loop_, mask_(), v, (int)m, (int)N); }
  unsigned ballot(int pred) const {
    unsigned b = (unsigned)birenWarpExchange(loop_, mask_(), 5, (unsigned long long)(pred != 0), 0, 32);
    return N == 32 ? b : (b >> ((details::block_rank_of(loop_) & 31u) & ~(N - 1u))) & ((1u << N) - 1u);
  }
  int any(int pred) const { return (int)birenWarpExchange(loop_, mask_(), 6, (unsigned long long)(pred != 0), 0, 32); }
  int all(int pred) const { return (int)birenWarpExchange(loop_, mask_(), 7, (unsigned long long)(pred != 0), 0, 32); }
  bool is_valid() const { return true; }
};

/* The lanes of the calling warp that run (in BIREN every lane of the warp that exists). */
class coalesced_group {
public:
  birenKernelLoop *loop_;
  unsigned mask_;
  coalesced_group(birenKernelLoop *l, unsigned m) : loop_(l), mask_(m) {}
  unsigned lane_() const { return details::block_rank_of(loop_) & 31u; }
  unsigned long long size() const { return (unsigned)__builtin_popcount(mask_); }
  unsigned long long num_threads() const { return size(); }
  unsigned long long thread_rank() const { return (unsigned)__builtin_popcount(mask_ & ((1u << lane_()) - 1u)); }
  void sync() const { (void)birenWarpExchange(loop_, mask_, 0, 0ull, 0, 32); }
  unsigned ballot(int pred) const { return (unsigned)birenWarpExchange(loop_, mask_, 5, (unsigned long long)(pred != 0), 0, 32); }
  int any(int pred) const { return (int)birenWarpExchange(loop_, mask_, 6, (unsigned long long)(pred != 0), 0, 32); }
  int all(int pred) const { return (int)birenWarpExchange(loop_, mask_, 7, (unsigned long long)(pred != 0), 0, 32); }
  template <class T> T shfl(T v, int src_rank) const {
    /* src_rank counts the group's lanes: the lane of that rank. */
    unsigned m = mask_, lane = 0;
    for (int r = 0; m; m &= m - 1, r++)
      if (r == src_rank) { lane = (unsigned)__builtin_ctz(m); break; }
    return birenShflSyncIn_(loop_, mask_, v, (int)lane, 32);
  }
  bool is_valid() const { return true; }
};
inline coalesced_group coalesced_threads_(birenKernelLoop *l) { return coalesced_group(l, birenActiveMaskLoop(l)); }
#define coalesced_threads() coalesced_threads_(biren_loop_)

template <unsigned N> inline thread_block_tile<N> tiled_partition(const thread_block &g) { return thread_block_tile<N>(g.loop_); }
template <unsigned N, unsigned M> inline thread_block_tile<N> tiled_partition(const thread_block_tile<M> &g) {
  static_assert(N <= M, "a tile is partitioned into smaller tiles");
  return thread_block_tile<N>(g.loop_);
}
inline thread_group tiled_partition(const thread_block &g, unsigned n) {
  if (n == 0 || (n & (n - 1)) != 0 || (n > 32 && n != details::block_size())) birenTrapLoop(g.loop_);
  return thread_group(g.loop_, n);
}
inline thread_group tiled_partition(const thread_group &g, unsigned n) {
  if (n == 0 || (n & (n - 1)) != 0 || n > g.n_) birenTrapLoop(g.loop_);
  return thread_group(g.loop_, n);
}

template <class G> inline void sync(const G &g) { g.sync(); }
template <class G> inline unsigned long long thread_rank(const G &g) { return g.thread_rank(); }
template <class G> inline unsigned long long group_size(const G &g) { return g.size(); }
} // namespace cooperative_groups

#endif /* BIREN_COOPERATIVE_GROUPS_H_ */
