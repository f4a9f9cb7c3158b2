/* CUDA's partial-warp rule: a warp operation does not wait for the lanes its mask names that do
 * not exist (beyond the block's last thread) or have returned; a shuffle from such a lane gives
 * the caller's own value (BIREN's choice: CUDA leaves it undefined). Every warp operation, in
 * blocks whose last warp is partial (120, 33, 7 threads; 2-D and 3-D blocks), with full and
 * partial masks, with and without lanes that returned first, in the BIREN_KERNEL form and in a
 * per-thread kernel; each result checked against the rule computed on the host, which is CUDA's
 * result wherever CUDA defines one. test_launch_typed.sh also builds it as C++11. */
#include "harness.h"

enum { K = 11 }; /* results per thread */

/* The value each thread shuffles. */
static int val_of(unsigned t) { return (int)(t * 7u + 3u); }

/* The body both kernel forms run: lanes >= keep return first; with `halves`, the even lanes use
 * mask 0x55555555 and the odd lanes its complement, else every lane the full mask. */
static void warp_ops_body(birenKernelLoop *biren_loop_, dim3 tid, dim3 bdim, unsigned keep, int halves,
                          long long *out) {
  unsigned t = tid.x + bdim.x * (tid.y + bdim.y * tid.z);
  unsigned lane = t % 32u;
  unsigned mask = !halves ? 0xffffffffu : (lane % 2u == 0u ? 0x55555555u : 0xaaaaaaaau);
  long long *o = out + (size_t)t * K;
  int v = val_of(t);
  if (lane >= keep) return;
  o[0] = birenShflSyncInt(mask, v, 5);
  o[1] = birenShflUpSyncInt(mask, v, 3);
  o[2] = birenShflDownSyncInt(mask, v, 2);
  o[3] = birenShflXorSyncInt(mask, v, 9);
  o[4] = birenBallotSync(mask, lane % 3u == 0u);
  o[5] = birenAnySync(mask, lane == 4u);
  o[6] = birenAllSync(mask, lane != 6u);
  birenSyncWarp(mask);
  o[7] = 1;
  o[8] = birenActiveMask();
  o[9] = birenShflDownSyncInt(mask, v, 1, 16);
  o[10] = (long long)birenShflSyncDouble(mask, (double)v + 0.5, 30) * 2;
}

BIREN_KERNEL(warp_ops_form, (unsigned) keep, (int) halves, (long long *) out) {
  warp_ops_body(biren_loop_, threadIdx, blockDim, keep, halves, out);
}

static void warp_ops_plain(void **args) {
  warp_ops_body(biren_loop_, birenThreadIdx(), birenBlockDim(), *(unsigned *)args[0], *(int *)args[1],
                *(long long **)args[2]);
}

/* The expected results of thread t (see warp_ops_body). */
static void expect_of(unsigned t, unsigned n, unsigned keep, int halves, long long *e) {
  unsigned w = t / 32u, lane = t % 32u, lanes = n - w * 32u;
  unsigned present = lanes >= 32u ? 0xffffffffu : (1u << lanes) - 1u;
  unsigned active = present & (keep >= 32u ? 0xffffffffu : (1u << keep) - 1u);
  unsigned mask = !halves ? 0xffffffffu : (lane % 2u == 0u ? 0x55555555u : 0xaaaaaaaau);
  unsigned eff = mask & active, ballot = 0, l;
  int own = val_of(t);
#define SRC(s) ((s) < 32u && (eff >> (s) & 1u) ? val_of(w * 32u + (s)) : own)
  e[0] = SRC(5u);
  e[1] = lane >= 3u ? SRC(lane - 3u) : own;
  e[2] = lane + 2u < 32u ? SRC(lane + 2u) : own;
  e[3] = SRC(lane ^ 9u);
  for (l = 0; l < 32u; l++)
    if ((eff >> l & 1u) && l % 3u == 0u) ballot |= 1u << l;
  e[4] = ballot;
  e[5] = (eff >> 4 & 1u) != 0;
  e[6] = (eff >> 6 & 1u) == 0;
  e[7] = 1;
  e[8] = present;
  e[9] = (lane & 15u) + 1u < 16u ? SRC(lane + 1u) : own;
  {
    int s = SRC(30u);
    e[10] = (long long)((double)s + 0.5) * 2;
  }
#undef SRC
}

static int check_shape(birenKernel_t k, dim3 block, unsigned keep, int halves) {
  unsigned n = block.x * block.y * block.z, t;
  size_t bytes = (size_t)n * K * sizeof(long long);
  long long *out = (long long *)malloc(bytes), e[K];
  int i;
  void *args[3];
  EXPECT(out != NULL);
  memset(out, 0x7f, bytes);
  args[0] = &keep;
  args[1] = &halves;
  args[2] = &out;
  {
    size_t sizes[3];
    sizes[0] = sizeof keep;
    sizes[1] = sizeof halves;
    sizes[2] = sizeof out;
    OK(birenLaunchKernelArgs(k, birenDim3(1, 1, 1), block, args, sizes, 3, 0, NULL));
  }
  OK(birenDeviceSynchronize());
  for (t = 0; t < n; t++) {
    if (t % 32u >= keep) continue;
    expect_of(t, n, keep, halves, e);
    for (i = 0; i < K; i++) {
      if (out[(size_t)t * K + i] != e[i]) {
        fprintf(stderr, "    block (%u,%u,%u) keep %u halves %d: thread %u result %d is %lld, expected %lld\n", block.x,
                block.y, block.z, keep, halves, t, i, out[(size_t)t * K + i], e[i]);
        free(out);
        return 1;
      }
    }
  }
  free(out);
  return 0;
}

static const dim3 *shapes(int *count) {
  static dim3 s[7];
  s[0] = birenDim3(120, 1, 1);
  s[1] = birenDim3(33, 1, 1);
  s[2] = birenDim3(7, 1, 1);
  s[3] = birenDim3(10, 5, 1); /* 50 threads: a last warp of 18 */
  s[4] = birenDim3(3, 4, 5);  /* 60 threads: a last warp of 28 */
  s[5] = birenDim3(64, 1, 1); /* full warps */
  s[6] = birenDim3(1, 1, 1);
  *count = 7;
  return s;
}

static int every_warp_operation_in_partial_warps(birenKernel_t k) {
  static const unsigned keeps[] = {32, 20, 5};
  int count, i, halves;
  unsigned j;
  const dim3 *s = shapes(&count);
  for (i = 0; i < count; i++)
    for (j = 0; j < sizeof keeps / sizeof keeps[0]; j++)
      for (halves = 0; halves < 2; halves++)
        if (check_shape(k, s[i], keeps[j], halves)) return 1;
  return 0;
}

static int partial_warps_in_the_kernel_form(void) { return every_warp_operation_in_partial_warps(warp_ops_form); }
static int partial_warps_in_a_per_thread_kernel(void) {
  return every_warp_operation_in_partial_warps(warp_ops_plain);
}

/* shfl_scan's pattern: an inclusive scan of each warp by full-mask shuffles up, in a block of
 * 120 threads (a last warp of 24 lanes), then the warp sums combined through shared memory. */
BIREN_KERNEL(block_scan, (const int *) in, (int *) out) {
  int *sums = (int *)birenSharedMemory();
  unsigned lane = threadIdx.x % 32u, warp = threadIdx.x / 32u, d;
  int v = in[threadIdx.x], i;
  for (d = 1; d < 32u; d *= 2u) {
    int n = birenShflUpSyncInt(0xffffffffu, v, (int)d);
    if (lane >= d) v += n;
  }
  if (lane == 31u || threadIdx.x == blockDim.x - 1u) sums[warp] = v;
  birenSyncThreads();
  for (i = 0; i < (int)warp; i++) v += sums[i];
  out[threadIdx.x] = v;
}

static int shfl_scan_in_a_block_of_120(void) {
  int in[120], out[120], *pi = in, *po = out, i, s = 0;
  for (i = 0; i < 120; i++) in[i] = i % 7 + 1;
  OK(BIREN_LAUNCH(block_scan, birenDim3(1, 1, 1), birenDim3(120, 1, 1), 4 * sizeof(int), NULL, pi, po));
  OK(birenDeviceSynchronize());
  for (i = 0; i < 120; i++) {
    s += in[i];
    EXPECT(out[i] == s);
  }
  return 0;
}

/* A lane that exists, is named, and never arrives (it waits at a barrier) still fails the launch;
 * so does a lane of a partial mask waiting under another mask for ever. */
BIREN_KERNEL(named_lane_waits_at_barrier) {
  if (threadIdx.x % 32u < 10u) birenSyncWarp(0xffffffffu);
  else birenSyncThreads();
}

static int a_named_lane_that_never_arrives_fails(void) {
  OK(birenLaunchKernel(named_lane_waits_at_barrier, birenDim3(1, 1, 1), birenDim3(50, 1, 1), NULL, 0, NULL));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  OK(birenDeviceReset());
  return 0;
}

static void reset_device(void) {
  birenError_t e = birenDeviceReset();
  if (e != BIREN_SUCCESS) fprintf(stderr, "    before_each: birenDeviceReset returned %s\n", birenGetErrorName(e));
}

static const test_case tests[] = {
    TEST(partial_warps_in_the_kernel_form),
    TEST(partial_warps_in_a_per_thread_kernel),
    TEST(shfl_scan_in_a_block_of_120),
    TEST(a_named_lane_that_never_arrives_fails),
};

int main(void) {
  if (getenv("BIREN_COMPUTE_UNITS") == NULL) setenv("BIREN_COMPUTE_UNITS", "2", 1);
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("partial warps", tests, reset_device, 60);
}
