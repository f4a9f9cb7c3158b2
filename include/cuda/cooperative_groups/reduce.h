/*
 * cooperative_groups/reduce.h -- cg::reduce over a tile (or coalesced group) with cg::plus,
 * cg::less, cg::greater, cg::bit_and, cg::bit_or, cg::bit_xor: every thread of the group gets
 * the result, as CUDA's. A butterfly of shuffles (log2 of the group's size steps).
 */
#ifndef BIREN_COOPERATIVE_GROUPS_REDUCE_H_
#define BIREN_COOPERATIVE_GROUPS_REDUCE_H_

#include "../cooperative_groups.h"

namespace cooperative_groups {
template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return b < a ? b : a; } };
template <class T> struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

template <unsigned N, class T, class Op> inline T reduce(const thread_block_tile<N> &g, T v, Op op) {
  for (unsigned o = N / 2; o > 0; o /= 2) v = op(v, g.shfl_xor(v, o));
  return v;
}
template <class T, class Op> inline T reduce(const coalesced_group &g, T v, Op op) {
  /* Ranks in the group: the value of every rank gathered by shuffles. */
  T acc = g.shfl(v, 0);
  for (unsigned r = 1; r < g.size(); r++) acc = op(acc, g.shfl(v, (int)r));
  return acc;
}
} // namespace cooperative_groups

#endif /* BIREN_COOPERATIVE_GROUPS_REDUCE_H_ */
