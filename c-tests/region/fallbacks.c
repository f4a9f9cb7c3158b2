/* Kernels biren-cc must leave in fiber form, one per reason (c-tests/test_region.sh compares
 * `biren-cc --kernel-report` with c-tests/region/fallbacks.expected). */
#include <biren_runtime.h>

BIREN_KERNEL(thread_condition, (int *) out) {
  if (threadIdx.x < 16) {
    birenSyncThreads();
  }
  out[threadIdx.x] = 1;
}

BIREN_KERNEL(with_goto, (int *) out) {
  int i = 0;
again:
  out[threadIdx.x] = i;
  birenSyncThreads();
  if (++i < 3) goto again;
}

static void helper(birenKernelLoop *biren_loop_, int *out) {
  out[0] = 1;
  birenSyncThreads();
}

BIREN_KERNEL(calls_barrier, (int *) out) {
  helper(biren_loop_, out);
}

static void plain_helper(int *out) {
  birenSyncThreads();
  out[0] = 2;
}

BIREN_KERNEL(calls_plain_barrier, (int *) out) {
  plain_helper(out);
  birenSyncThreads();
}

BIREN_KERNEL(warp_op, (int *) out) {
  int v = birenShflDownSyncInt(0xffffffffu, (int)threadIdx.x, 1);
  birenSyncThreads();
  out[threadIdx.x] = v;
}

BIREN_KERNEL(grid_sync, (int *) out) {
  out[threadIdx.x] = 1;
  birenGridSync();
  birenSyncThreads();
}

BIREN_KERNEL(break_in_loop, (int *) out, (int) n) {
  for (int k = 0; k < n; k++) {
    birenSyncThreads();
    if (out[0] == k) break;
  }
}

BIREN_KERNEL(in_switch, (int *) out, (int) n) {
  switch (n) {
  case 1:
    birenSyncThreads();
    break;
  default:
    break;
  }
  out[0] = n;
}

BIREN_KERNEL(in_expression, (int *) out) {
  (void)(out[0] = 1, 0);
  out[threadIdx.x] ? birenSyncThreads() : (void)0;
}

BIREN_KERNEL(changes_parameter, (int *) out, (int) n) {
  n += (int)threadIdx.x;
  birenSyncThreads();
  out[threadIdx.x] = n;
}

BIREN_KERNEL(address_taken, (int *) out) {
  int v = (int)threadIdx.x;
  int *p = &v;
  birenSyncThreads();
  out[threadIdx.x] = *p;
}

BIREN_KERNEL(thread_counter, (int *) out) {
  for (unsigned k = threadIdx.x; k < 64; k += blockDim.x) {
    birenSyncThreads();
    out[k] = 0;
  }
}

BIREN_KERNEL(thread_bound, (int *) out) {
  int first = (int)threadIdx.x * 2;
  for (int k = first; k < 64; k += 16) {
    birenSyncThreads();
    out[k] = 0;
  }
}

BIREN_KERNEL(active_mask, (unsigned *) out) {
  out[threadIdx.x] = birenActiveMask();
  birenSyncThreads();
}

BIREN_KERNEL(vote_in_declaration, (unsigned *) out) {
  unsigned b = birenBallotSync(0xffffffffu, threadIdx.x & 1u);
  birenSyncThreads();
  out[threadIdx.x] = b;
}

BIREN_KERNEL(no_barrier, (float *) x, (int) n) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) x[i] *= 2.0f;
}
