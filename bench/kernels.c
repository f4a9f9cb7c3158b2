/*
 * bench/kernels.c -- what kernels cost (issue 12): the BIREN_KERNEL form and the per-thread form
 * against plain C loops, barriers, a tiled matrix multiply, warp shuffles, atomics, and the
 * launch path's enqueue and throughput.
 *
 *   make bench                      runs it (with bench/bench.c)
 *   build/bench/kernels --figures   machine-readable lines "FIG name value", what
 *                                   `make bench-peer` (bench/peer.sh) puts beside the peer's
 *   BENCH_QUICK=1 / BENCH_REPS=N    as bench.c
 *   --only=vadd,reduce,...          some groups only: vadd reduce matmul warp launch
 *
 * Every figure is the median of repeated runs after a warm-up; ratios divide medians taken in
 * the same run. Exit status 1 on a wrong result.
 */
#define _GNU_SOURCE
#include "biren_runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_reps, g_quick, g_figures, g_failed, g_cus;
static const char *g_only;

/* Whether group `name` runs (all when --only is not given). */
static int wanted(const char *name) {
  const char *p = g_only;
  size_t len = strlen(name);
  if (!p) return 1;
  while (*p) {
    if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == 0)) return 1;
    p = strchr(p, ',');
    if (!p) break;
    p++;
  }
  return 0;
}
static birenStream_t g_s;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
#define MAXR 64

/* One result: printed as a table row, or as "FIG name value" with --figures. */
static void fig(const char *name, const char *text, double value, const char *unit, const char *target, int met) {
  if (g_figures) {
    printf("FIG %s %.6g\n", name, value);
  } else {
    printf("| %-58s | %10.3g %-8s | %-18s | %-6s |\n", text, value, unit, target ? target : "-",
           target ? (met ? "MET" : "MISSED") : "-");
  }
  fflush(stdout);
}

/* ---- kernels ----------------------------------------------------------------------------------- */

BIREN_KERNEL(kf_vadd, (const float *) a, (const float *) b, (float *) c, (unsigned) n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

/* The spelling: an int index, which GCC vectorises (c-tests/test_vectorise.sh). */
BIREN_KERNEL(kf_vadd_int, (const float *) a, (const float *) b, (float *) c, (int) n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

static void kp_vadd(void **args) {
  const float *a = *(const float **)args[0];
  const float *b = *(const float **)args[1];
  float *c = *(float **)args[2];
  unsigned n = *(const unsigned *)args[3];
  unsigned i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  if (i < n) c[i] = a[i] + b[i];
}

BIREN_KERNEL(kf_reduce, (const float *) in, (float *) out, (unsigned) n) {
  float *sh = (float *)birenSharedMemory();
  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t, s;
  sh[t] = i < n ? in[i] : 0.0f;
  birenSyncThreads();
  for (s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    birenSyncThreads();
  }
  if (t == 0) out[blockIdx.x] = sh[0];
}

static void kp_reduce(void **args) {
  const float *in = *(const float **)args[0];
  float *out = *(float **)args[1];
  unsigned n = *(const unsigned *)args[2];
  float *sh = (float *)birenSharedMemory();
  unsigned t = birenThreadIdx().x, bd = birenBlockDim().x, blk = birenBlockIdx().x, i = blk * bd + t, s;
  sh[t] = i < n ? in[i] : 0.0f;
  birenSyncThreads();
  for (s = bd / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    birenSyncThreads();
  }
  if (t == 0) out[blk] = sh[0];
}

#define TILE 16
BIREN_KERNEL(kf_matmul, (const float *) A, (const float *) B, (float *) C, (int) n) {
  float *As = (float *)birenSharedMemory(), *Bs = As + TILE * TILE;
  int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
  int row = (int)blockIdx.y * TILE + ty, col = (int)blockIdx.x * TILE + tx;
  float acc = 0.0f;
  int t, k;
  for (t = 0; t < n / TILE; ++t) {
    As[ty * TILE + tx] = A[row * n + t * TILE + tx];
    Bs[ty * TILE + tx] = B[(t * TILE + ty) * n + col];
    birenSyncThreads();
    for (k = 0; k < TILE; ++k) acc += As[ty * TILE + k] * Bs[k * TILE + tx];
    birenSyncThreads();
  }
  C[row * n + col] = acc;
}

/* Each warp sums its 32 values by 5 shuffles down; lane 0 writes the sum. */
BIREN_KERNEL(kf_warp_sum, (const float *) in, (float *) out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  int d;
  for (d = 16; d > 0; d /= 2) v += birenShflDownSyncFloat(0xffffffffu, v, d);
  if ((threadIdx.x & 31u) == 0) out[i / 32] = v;
}

/* Every thread adds 1 to one counter (contended across compute units), `reps` times. */
BIREN_KERNEL(kf_atomic, (unsigned long long *) counter, (int) reps) {
  int r;
  for (r = 0; r < reps; r++) birenAtomicAddUll(counter, 1ull);
}

static void k_empty(void **args) { (void)args; }

/* ---- plain C baselines ------------------------------------------------------------------------ */

typedef struct {
  const float *a, *b;
  float *c;
  size_t lo, hi;
} part;
static void *vadd_part(void *p) {
  part *v = (part *)p;
  size_t i;
  for (i = v->lo; i < v->hi; i++) v->c[i] = v->a[i] + v->b[i];
  return NULL;
}
static double vadd_c(const float *a, const float *b, float *c, size_t n, int threads) {
  pthread_t th[64];
  part p[64];
  int k;
  double t0 = now_s();
  for (k = 0; k < threads; k++) {
    p[k].a = a, p[k].b = b, p[k].c = c, p[k].lo = n * (size_t)k / (size_t)threads, p[k].hi = n * (size_t)(k + 1) / (size_t)threads;
    if (threads == 1) vadd_part(&p[k]);
    else pthread_create(&th[k], NULL, vadd_part, &p[k]);
  }
  if (threads > 1)
    for (k = 0; k < threads; k++) pthread_join(th[k], NULL);
  return now_s() - t0;
}

/* ---- figures ------------------------------------------------------------------------------------ */

static void bench_vadd(unsigned n) {
  size_t bytes = (size_t)n * sizeof(float);
  float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes), *chk = (float *)malloc(bytes);
  float *da, *db, *dc;
  double vf[MAXR], vi[MAXR], vp[MAXR], v1[MAXR], vn[MAXR];
  dim3 block = birenDim3(256, 1, 1), grid = birenDim3((n + 255) / 256, 1, 1);
  unsigned i;
  int r;
  for (i = 0; i < n; i++) a[i] = (float)(i % 1000), b[i] = (float)(i % 777) * 0.5f;
  BIREN_CHECK(birenMalloc((void **)&da, bytes));
  BIREN_CHECK(birenMalloc((void **)&db, bytes));
  BIREN_CHECK(birenMalloc((void **)&dc, bytes));
  BIREN_CHECK(birenMemcpy(da, a, bytes, birenMemcpyHostToDevice));
  BIREN_CHECK(birenMemcpy(db, b, bytes, birenMemcpyHostToDevice));
  BIREN_CHECK(birenMemset(dc, 0, bytes));
  for (r = -1; r < g_reps; r++) { /* interleaved: load changes hit all four */
    double t0 = now_s(), t1, t2, t3;
    BIREN_CHECK(BIREN_LAUNCH(kf_vadd, grid, block, 0, g_s, da, db, dc, n));
    BIREN_CHECK(birenStreamSynchronize(g_s));
    t3 = now_s();
    BIREN_CHECK(BIREN_LAUNCH(kf_vadd_int, grid, block, 0, g_s, da, db, dc, (int)n));
    BIREN_CHECK(birenStreamSynchronize(g_s));
    t1 = now_s();
    BIREN_CHECK(BIREN_LAUNCH(kp_vadd, grid, block, 0, g_s, da, db, dc, n));
    BIREN_CHECK(birenStreamSynchronize(g_s));
    t2 = now_s();
    if (r >= 0) {
      vf[r] = t3 - t0;
      vi[r] = t1 - t3;
      vp[r] = t2 - t1;
      v1[r] = vadd_c(a, b, c, n, 1);
      vn[r] = vadd_c(a, b, c, n, g_cus);
    }
  }
  BIREN_CHECK(birenMemcpy(chk, dc, bytes, birenMemcpyDeviceToHost));
  vadd_c(a, b, c, n, 1);
  if (memcmp(chk, c, bytes) != 0) fprintf(stderr, "kernels: WRONG RESULT in vector add\n"), g_failed = 1;
  {
    double f = median(vf, g_reps), fi = median(vi, g_reps), p = median(vp, g_reps), c1 = median(v1, g_reps), cn = median(vn, g_reps);
    double best = c1 < cn ? c1 : cn;
    fig("vadd_form_ratio", "vector add 16M, BIREN_KERNEL form / best C loop", f / best, "x", "<= 1.1", f / best <= 1.1);
    fig("vadd_form_int_ratio", "  the same with an int index (vectorised)", fi / best, "x", NULL, 0);
    fig("vadd_plain_ratio", "vector add 16M, per-thread form / best C loop", p / best, "x", "<= 3", p / best <= 3);
    fig("vadd_form_ms", "  BIREN_KERNEL form", f * 1e3, "ms", NULL, 0);
    fig("vadd_best_c_ms", "  best C loop (1 or all cores)", best * 1e3, "ms", NULL, 0);
  }
  BIREN_CHECK(birenFree(da));
  BIREN_CHECK(birenFree(db));
  BIREN_CHECK(birenFree(dc));
  free(a), free(b), free(c), free(chk);
}

/* K barriers per thread and almost nothing else: the barrier's cost model. */
BIREN_KERNEL(kf_barriers, (float *) out, (int) k) {
  float *sh = (float *)birenSharedMemory();
  unsigned t = threadIdx.x;
  int j;
  sh[t] = 1.0f;
  for (j = 0; j < k; j++) {
    birenSyncThreads();
    sh[t] += 1.0f;
  }
  if (t == 0) out[blockIdx.x] = sh[0];
}

/* K warp shuffles per thread and almost nothing else: the warp rendezvous' cost model. */
BIREN_KERNEL(kf_shuffles, (float *) out, (int) k) {
  float v = (float)threadIdx.x;
  int j;
  for (j = 0; j < k; j++) v += birenShflXorSyncFloat(0xffffffffu, v, 1 << (j & 3));
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

/* Launchers for the cost models: nb blocks of 256 threads, k sync points per thread. */
static void launch_barriers(unsigned nb, float *dout, int k) {
  BIREN_CHECK(BIREN_LAUNCH(kf_barriers, birenDim3(nb, 1, 1), birenDim3(256, 1, 1), 256 * sizeof(float), g_s, dout, k));
}
static void launch_shuffles(unsigned nb, float *dout, int k) {
  BIREN_CHECK(BIREN_LAUNCH(kf_shuffles, birenDim3(nb, 1, 1), birenDim3(256, 1, 1), 0, g_s, dout, k));
}

/* Time per thread (x compute units) of a kernel with 1 and 17 sync points per thread, block
 * 256: what a thread costs to start, wait once and end, and what each further wait adds.
 * `what` names the sync point in the figures ("barrier", "shuffle"); `id` prefixes their keys. */
static void bench_model(unsigned n, void (*launch)(unsigned, float *, int), const char *id, const char *what) {
  const unsigned nb = n / 256;
  float *dout;
  double v1[MAXR], v17[MAXR];
  int r, k;
  BIREN_CHECK(birenMalloc((void **)&dout, nb * sizeof(float)));
  for (r = -1; r < g_reps; r++) {
    for (k = 1; k <= 17; k += 16) {
      double t0 = now_s(), t;
      launch(nb, dout, k);
      BIREN_CHECK(birenStreamSynchronize(g_s));
      t = (now_s() - t0) * g_cus / (double)n;
      if (r >= 0) (k == 1 ? v1 : v17)[r] = t;
    }
  }
  {
    double a = median(v1, g_reps), b = median(v17, g_reps), step = (b - a) / 16.0;
    char key[32], label[80];
    snprintf(key, sizeof key, "%s_fixed_ns", id);
    snprintf(label, sizeof label, "  per thread: start, first %s, end (x CUs)", what);
    fig(key, label, (a - step) * 1e9, "ns", NULL, 0);
    snprintf(key, sizeof key, "%s_step_ns", id);
    snprintf(label, sizeof label, "  per further %s (x CUs)", what);
    fig(key, label, step * 1e9, "ns", NULL, 0);
  }
  BIREN_CHECK(birenFree(dout));
}

static void bench_reduce(unsigned n) {
  const unsigned bs = 256;
  unsigned nb = (n + bs - 1) / bs, i, k;
  size_t bytes = (size_t)n * sizeof(float);
  float *h = (float *)malloc(bytes), *part_ = (float *)malloc(nb * sizeof(float)), *din, *dout;
  double vf[MAXR], vp[MAXR], vc[MAXR], sum_c = 0, sum_k;
  int r, form;
  for (i = 0; i < n; i++) h[i] = (float)(i % 7);
  BIREN_CHECK(birenMalloc((void **)&din, bytes));
  BIREN_CHECK(birenMalloc((void **)&dout, nb * sizeof(float)));
  BIREN_CHECK(birenMemcpy(din, h, bytes, birenMemcpyHostToDevice));
  for (r = -1; r < g_reps; r++) {
    for (form = 0; form < 2; form++) {
      double t0 = now_s(), t;
      if (form == 0) BIREN_CHECK(BIREN_LAUNCH(kf_reduce, birenDim3(nb, 1, 1), birenDim3(bs, 1, 1), bs * sizeof(float), g_s, din, dout, n));
      else BIREN_CHECK(BIREN_LAUNCH(kp_reduce, birenDim3(nb, 1, 1), birenDim3(bs, 1, 1), bs * sizeof(float), g_s, din, dout, n));
      BIREN_CHECK(birenMemcpyAsync(part_, dout, nb * sizeof(float), birenMemcpyDeviceToHost, g_s));
      BIREN_CHECK(birenStreamSynchronize(g_s));
      sum_k = 0;
      for (k = 0; k < nb; k++) sum_k += part_[k];
      t = now_s() - t0;
      if (r >= 0) (form ? vp : vf)[r] = t;
    }
    {
      double t0 = now_s();
      sum_c = 0;
      for (i = 0; i < n; i++) sum_c += h[i];
      if (r >= 0) vc[r] = now_s() - t0;
    }
    if (sum_k != sum_c) fprintf(stderr, "kernels: WRONG RESULT in reduction\n"), g_failed = 1;
  }
  {
    double f = median(vf, g_reps), p = median(vp, g_reps), c = median(vc, g_reps);
    double per = (double)g_cus / ((double)n * 9.0);
    fig("reduce_form_ratio", "barrier reduction 16M, BIREN_KERNEL form / 1-thread C", f / c, "x", "<= 40", f / c <= 40);
    fig("reduce_plain_ratio", "barrier reduction 16M, per-thread form / 1-thread C", p / c, "x", "<= 40", p / c <= 40);
    fig("barrier_ns", "  per thread-barrier (form; time x CUs / (n x 9))", f * per * 1e9, "ns", NULL, 0);
    fig("barrier_plain_ns", "  per thread-barrier (per-thread form)", p * per * 1e9, "ns", NULL, 0);
  }
  BIREN_CHECK(birenFree(din));
  BIREN_CHECK(birenFree(dout));
  free(h), free(part_);
}

static void bench_matmul(int n) {
  size_t bytes = (size_t)n * (size_t)n * sizeof(float);
  float *A = (float *)malloc(bytes), *B = (float *)malloc(bytes), *C = (float *)malloc(bytes), *dA, *dB, *dC;
  double v[MAXR];
  int i, r, reps = g_quick ? 1 : (g_reps < 5 ? g_reps : 5);
  for (i = 0; i < n * n; i++) A[i] = (float)(i % 13) * 0.25f, B[i] = (float)(i % 7) * 0.5f;
  BIREN_CHECK(birenMalloc((void **)&dA, bytes));
  BIREN_CHECK(birenMalloc((void **)&dB, bytes));
  BIREN_CHECK(birenMalloc((void **)&dC, bytes));
  BIREN_CHECK(birenMemcpy(dA, A, bytes, birenMemcpyHostToDevice));
  BIREN_CHECK(birenMemcpy(dB, B, bytes, birenMemcpyHostToDevice));
  for (r = -1; r < reps; r++) {
    double t0 = now_s();
    BIREN_CHECK(BIREN_LAUNCH(kf_matmul, birenDim3(n / TILE, n / TILE, 1), birenDim3(TILE, TILE, 1), 2 * TILE * TILE * sizeof(float), g_s, dA, dB, dC, n));
    BIREN_CHECK(birenStreamSynchronize(g_s));
    if (r >= 0) v[r] = now_s() - t0;
  }
  BIREN_CHECK(birenMemcpy(C, dC, bytes, birenMemcpyDeviceToHost));
  for (i = 0; i < 64; i++) { /* spot checks */
    int row = (i * 97) % n, col = (i * 31) % n, k;
    float want = 0;
    for (k = 0; k < n; k++) want += A[row * n + k] * B[k * n + col];
    if (C[row * n + col] != want) {
      fprintf(stderr, "kernels: WRONG RESULT in matmul at (%d,%d): %g vs %g\n", row, col, C[row * n + col], want);
      g_failed = 1;
      break;
    }
  }
  fig("matmul_gflops", "tiled matmul 1024^2 (16x16 tiles, shared + barriers)", 2.0 * n * n * (double)n / median(v, reps) / 1e9, "GFLOP/s", NULL, 0);
  BIREN_CHECK(birenFree(dA));
  BIREN_CHECK(birenFree(dB));
  BIREN_CHECK(birenFree(dC));
  free(A), free(B), free(C);
}

static void bench_warp_atomic(unsigned n) {
  float *h = (float *)malloc(n * sizeof(float)), *o = (float *)malloc(n / 32 * sizeof(float)), *din, *dout;
  unsigned long long *dctr, ctr;
  double vw[MAXR], va[MAXR];
  unsigned i;
  int r, reps = 16;
  for (i = 0; i < n; i++) h[i] = (float)(i % 5);
  BIREN_CHECK(birenMalloc((void **)&din, n * sizeof(float)));
  BIREN_CHECK(birenMalloc((void **)&dout, n / 32 * sizeof(float)));
  BIREN_CHECK(birenMalloc((void **)&dctr, sizeof ctr));
  BIREN_CHECK(birenMemcpy(din, h, n * sizeof(float), birenMemcpyHostToDevice));
  BIREN_CHECK(birenMemset(dctr, 0, sizeof ctr));
  for (r = -1; r < g_reps; r++) {
    double t0 = now_s(), t1;
    BIREN_CHECK(BIREN_LAUNCH(kf_warp_sum, birenDim3(n / 256, 1, 1), birenDim3(256, 1, 1), 0, g_s, din, dout));
    BIREN_CHECK(birenStreamSynchronize(g_s));
    t1 = now_s();
    BIREN_CHECK(BIREN_LAUNCH(kf_atomic, birenDim3(n / 256 / 16, 1, 1), birenDim3(256, 1, 1), 0, g_s, dctr, reps));
    BIREN_CHECK(birenStreamSynchronize(g_s));
    if (r >= 0) vw[r] = t1 - t0, va[r] = now_s() - t1;
  }
  BIREN_CHECK(birenMemcpy(o, dout, n / 32 * sizeof(float), birenMemcpyDeviceToHost));
  for (i = 0; i < n / 32; i++) {
    float want = 0;
    unsigned j;
    for (j = 0; j < 32; j++) want += h[i * 32 + j];
    if (o[i] != want) {
      fprintf(stderr, "kernels: WRONG RESULT in warp sum\n");
      g_failed = 1;
      break;
    }
  }
  BIREN_CHECK(birenMemcpy(&ctr, dctr, sizeof ctr, birenMemcpyDeviceToHost));
  if (ctr != (unsigned long long)(g_reps + 1) * (n / 16) * (unsigned long long)reps) fprintf(stderr, "kernels: WRONG RESULT in atomics\n"), g_failed = 1;
  fig("shfl_ns", "warp shuffle: per thread-shuffle (5 per thread, x CUs)", median(vw, g_reps) * g_cus / (n * 5.0) * 1e9, "ns", NULL, 0);
  fig("atomic_ns", "atomic add, one contended counter (per op, x CUs)", median(va, g_reps) * g_cus / ((double)n / 16 * reps) * 1e9, "ns", NULL, 0);
  BIREN_CHECK(birenFree(din));
  BIREN_CHECK(birenFree(dout));
  BIREN_CHECK(birenFree(dctr));
  free(h), free(o);
}

/* A host may run at most 4096 ops ahead of a device (then a launch waits for it to drain, as
 * CUDA's does when its queue is full): the enqueue figure launches in batches of 2000 with a
 * synchronize between them outside the timed loops (the peer's bench does the same), the
 * end-to-end figure all n at once. */
#define ENQUEUE_BATCH 2000

static void bench_launch(long n) {
  double ve[MAXR], vt[MAXR];
  dim3 one = birenDim3(1, 1, 1);
  int r;
  long i, done;
  for (r = -1; r < g_reps; r++) {
    double t0, enq = 0;
    for (done = 0; done < n; done += ENQUEUE_BATCH) {
      long b = n - done < ENQUEUE_BATCH ? n - done : ENQUEUE_BATCH;
      t0 = now_s();
      for (i = 0; i < b; i++) BIREN_CHECK(birenLaunchKernel(k_empty, one, one, NULL, 0, g_s));
      enq += now_s() - t0;
      BIREN_CHECK(birenStreamSynchronize(g_s));
    }
    t0 = now_s();
    for (i = 0; i < n; i++) BIREN_CHECK(birenLaunchKernel(k_empty, one, one, NULL, 0, g_s));
    BIREN_CHECK(birenStreamSynchronize(g_s));
    if (r >= 0) ve[r] = enq / (double)n, vt[r] = (double)n / (now_s() - t0);
  }
  fig("enqueue_ns", "launch enqueue, empty 1x1 kernel", median(ve, g_reps) * 1e9, "ns", "<= 90", median(ve, g_reps) * 1e9 <= 90);
  fig("launches_per_s", "empty launches end to end", median(vt, g_reps) / 1e6, "M/s", ">= 3", median(vt, g_reps) / 1e6 >= 3);
}

int main(int argc, char **argv) {
  const char *q = getenv("BENCH_QUICK"), *reps = getenv("BENCH_REPS");
  birenDeviceProp prop;
  unsigned n;
  int i;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--figures") == 0) g_figures = 1;
    else if (strncmp(argv[i], "--only=", 7) == 0) g_only = argv[i] + 7;
    else {
      fprintf(stderr, "usage: %s [--figures] [--only=vadd,reduce,matmul,warp,launch]\n", argv[0]);
      return 1;
    }
  }
  g_quick = q && *q && strcmp(q, "0") != 0;
  g_reps = reps ? atoi(reps) : (g_quick ? 3 : 7);
  if (g_reps < 1) g_reps = 1;
  if (g_reps > MAXR) g_reps = MAXR;
  BIREN_CHECK(birenInit());
  BIREN_CHECK(birenGetDeviceProperties(&prop, 0));
  g_cus = prop.multiProcessorCount;
  BIREN_CHECK(birenStreamCreateWithFlags(&g_s, birenStreamNonBlocking));
  n = g_quick ? 1u << 22 : 1u << 24;
  if (!g_figures) {
    printf("\nKernels (bench/kernels.c): %d compute units, %d repetitions per figure, median shown%s\n", g_cus, g_reps,
           g_quick ? " (QUICK: smaller sizes)" : "");
    printf("| %-58s | %-19s | %-18s | %-6s |\n|:--|--:|--|--|\n", "Figure", "Value", "Target (issue 12)", "Status");
  }
  if (wanted("vadd")) bench_vadd(n);
  if (wanted("reduce")) bench_reduce(n), bench_model(n / 4, launch_barriers, "barrier", "barrier");
  if (wanted("matmul")) bench_matmul(g_quick ? 256 : 1024);
  if (wanted("warp")) bench_warp_atomic(n / 4), bench_model(n / 4, launch_shuffles, "shfl", "shuffle");
  if (wanted("launch")) bench_launch(g_quick ? 20000 : 100000);
  BIREN_CHECK(birenStreamDestroy(g_s));
  return g_failed;
}
