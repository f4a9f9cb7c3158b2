/*
 * bench/barrier_ref.h -- what the barrier-kernel suite's two programs share (issue 29): the
 * sizes, the inputs, the plain C references (one thread each, the same results as the kernels),
 * the result checks and the output lines. Included by bench/barriers.c (BIREN, built with cc
 * for the fiber form and with biren-cc for the region form) and bench/peer/pocl_host.c (the same
 * kernels in OpenCL C on PoCL), so that both run the same work and check it the same way.
 *
 * Every input is made of small integers (or multiples of 1/8), so every float sum below is exact
 * in any order: the checks compare results bit for bit. Needs C11 and POSIX (define _GNU_SOURCE
 * before the first include, as both programs do).
 */
#ifndef BENCH_BARRIER_REF_H
#define BENCH_BARRIER_REF_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BR_BLOCK 256      /* threads per block of the 1-D kernels */
#define BR_TILE 16        /* matmul tile (blocks of 16x16 threads) */
#define BR_TT 32          /* transpose tile: 32x32 elements ... */
#define BR_TROWS 8        /* ... moved by blocks of 32x8 threads, 4 rows each */
#define BR_HIST_PER 16    /* histogram: bytes per thread */
#define BR_MAXREPS 64

/* The problem sizes, full and BENCH_QUICK (the same in both programs). */
typedef struct {
  int vadd, reduce, reduce_warp, matmul, scan, hist, transpose, bitonic;
} br_sizes;

static br_sizes br_sizes_for(int quick) {
  br_sizes s;
  s.vadd = quick ? 1 << 20 : 1 << 24;      /* floats */
  s.reduce = quick ? 1 << 20 : 1 << 24;    /* floats, partial sums of 256 */
  s.reduce_warp = s.reduce / 8;            /* the same by warp shuffles (BIREN only) */
  s.matmul = quick ? 256 : 1024;           /* n of n x n */
  s.scan = quick ? 1 << 17 : 1 << 21;      /* floats, inclusive scans of 256 */
  s.hist = quick ? 1 << 20 : 1 << 24;      /* bytes into 256 bins */
  s.transpose = quick ? 512 : 2048;       /* n of n x n */
  s.bitonic = quick ? 1 << 14 : 1 << 18;   /* keys, sorted in runs of 256 */
  return s;
}

/* "vadd 16M, reduce 16M, ..." (M = 2^20, K = 2^10). */
static void br_sizes_text(const br_sizes *s, char *buf, size_t len) {
#define BR_SZ(v) ((v) >= 1 << 20 ? (v) >> 20 : (v) >> 10), ((v) >= 1 << 20 ? "M" : "K")
  snprintf(buf, len, "vadd %d%s, reduce %d%s (by warp shuffles %d%s), matmul %d^2, scan %d%s, hist %d%s, transpose %d^2, bitonic %d%s",
           BR_SZ(s->vadd), BR_SZ(s->reduce), BR_SZ(s->reduce_warp), s->matmul, BR_SZ(s->scan), BR_SZ(s->hist), s->transpose, BR_SZ(s->bitonic));
#undef BR_SZ
}

static double br_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static int br_cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double br_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, br_cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Page-aligned, zeroed memory (PoCL's CL_MEM_USE_HOST_PTR is zero-copy on it). */
static void *br_alloc(size_t bytes) {
  size_t rounded = (bytes + 4095) & ~(size_t)4095;
  void *p = aligned_alloc(4096, rounded ? rounded : 4096);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  memset(p, 0, rounded);
  return p;
}

/* ---- inputs --------------------------------------------------------------------------------- */

static unsigned br_hash(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
static void br_fill_small(float *v, int n, int mod) {
  int i;
  for (i = 0; i < n; i++) v[i] = (float)(i % mod);
}
static void br_fill_matmul(float *a, float *b, int n) {
  int i;
  for (i = 0; i < n * n; i++) a[i] = (float)(i % 13) * 0.25f, b[i] = (float)(i % 7) * 0.5f;
}
static void br_fill_bytes(unsigned char *v, int n) {
  int i;
  for (i = 0; i < n; i++) v[i] = (unsigned char)(br_hash((unsigned)i) >> 7);
}
static void br_fill_keys(unsigned *v, int n) {
  int i;
  for (i = 0; i < n; i++) v[i] = br_hash((unsigned)i + 12345u);
}

/* ---- plain C references (one thread unless said) ------------------------------------------- */

typedef struct {
  const float *a, *b;
  float *c;
  int lo, hi;
} br_vadd_part;
static void *br_vadd_run(void *p) {
  br_vadd_part *v = (br_vadd_part *)p;
  int i;
  for (i = v->lo; i < v->hi; i++) v->c[i] = v->a[i] + v->b[i];
  return NULL;
}
/* Vector add on `threads` threads (the reference is the best of 1 and all cores). */
static void br_c_vadd(const float *a, const float *b, float *c, int n, int threads) {
  pthread_t th[64];
  br_vadd_part p[64];
  int k;
  if (threads > 64) threads = 64;
  for (k = 0; k < threads; k++) {
    p[k].a = a, p[k].b = b, p[k].c = c;
    p[k].lo = (int)((long long)n * k / threads), p[k].hi = (int)((long long)n * (k + 1) / threads);
    if (threads == 1) br_vadd_run(&p[k]);
    else pthread_create(&th[k], NULL, br_vadd_run, &p[k]);
  }
  if (threads > 1)
    for (k = 0; k < threads; k++) pthread_join(th[k], NULL);
}

/* The reduction's partial sums: one per run of 256 (the tree reduction's per-block results). */
static void br_c_reduce(const float *in, float *part, int n) {
  int b, j, nb = (n + BR_BLOCK - 1) / BR_BLOCK;
  for (b = 0; b < nb; b++) {
    float s = 0.0f;
    for (j = b * BR_BLOCK; j < n && j < (b + 1) * BR_BLOCK; j++) s += in[j];
    part[b] = s;
  }
}

/* C = A B, the i-k-j loop. */
static void br_c_matmul(const float *a, const float *b, float *c, int n) {
  int i, j, k;
  for (i = 0; i < n; i++) {
    float *ci = c + (size_t)i * n;
    for (j = 0; j < n; j++) ci[j] = 0.0f;
    for (k = 0; k < n; k++) {
      float aik = a[(size_t)i * n + k];
      const float *bk = b + (size_t)k * n;
      for (j = 0; j < n; j++) ci[j] += aik * bk[j];
    }
  }
}

/* Inclusive prefix sums within each run of 256. */
static void br_c_scan(const float *in, float *out, int n) {
  int i;
  float s = 0.0f;
  for (i = 0; i < n; i++) {
    if (i % BR_BLOCK == 0) s = 0.0f;
    s += in[i];
    out[i] = s;
  }
}

static void br_c_hist(const unsigned char *data, unsigned *hist, int n) {
  int i;
  memset(hist, 0, 256 * sizeof *hist);
  for (i = 0; i < n; i++) hist[data[i]]++;
}

/* out = in transposed (n x n), in 32x32 tiles. */
static void br_c_transpose(const float *in, float *out, int n) {
  int bi, bj, i, j;
  for (bi = 0; bi < n; bi += BR_TT)
    for (bj = 0; bj < n; bj += BR_TT)
      for (i = bi; i < bi + BR_TT && i < n; i++)
        for (j = bj; j < bj + BR_TT && j < n; j++) out[(size_t)j * n + i] = in[(size_t)i * n + j];
}

/* The kernels' bitonic network on each run of 256 keys (the same compare-exchanges, in order). */
static void br_c_bitonic(const unsigned *in, unsigned *out, int n) {
  int base, k, j, t;
  memcpy(out, in, (size_t)n * sizeof *out);
  for (base = 0; base + BR_BLOCK <= n; base += BR_BLOCK) {
    unsigned *s = out + base;
    for (k = 2; k <= BR_BLOCK; k <<= 1)
      for (j = k >> 1; j > 0; j >>= 1)
        for (t = 0; t < BR_BLOCK; t++) {
          int p = t ^ j;
          if (p > t) {
            unsigned a = s[t], b = s[p];
            if ((a > b) == ((t & k) == 0)) s[t] = b, s[p] = a;
          }
        }
  }
}

/* ---- checks ---------------------------------------------------------------------------------- */

/* Whether `got` equals `want` bit for bit; otherwise says where, once. */
static int br_same(const char *what, const void *got, const void *want, size_t bytes, size_t elem) {
  size_t i;
  if (memcmp(got, want, bytes) == 0) return 1;
  for (i = 0; i < bytes / elem; i++)
    if (memcmp((const char *)got + i * elem, (const char *)want + i * elem, elem) != 0) break;
  fprintf(stderr, "barriers: WRONG RESULT in %s at element %zu\n", what, i);
  return 0;
}
/* Whether each run of 256 keys is in order (the C network's result, checked once). */
static int br_runs_sorted(const unsigned *v, int n) {
  int i;
  for (i = 1; i < n; i++)
    if (i % BR_BLOCK != 0 && v[i - 1] > v[i]) return 0;
  return 1;
}

/* ---- timing ---------------------------------------------------------------------------------- */

/* One kernel's timing loop: `prepare` (untimed, may be NULL), then `launch` and the program's
 * `sync` timed together, then the C reference `cref` (and `cref2`, may be NULL) timed alone. */
typedef struct {
  void (*prepare)(void *);
  void (*launch)(void *);
  void (*cref)(void *);
  void (*cref2)(void *); /* a second reference: *c_ms is the better of the two medians */
  void *st;
  int cref_once; /* time the references once (in the warm-up round) */
  int max_reps;  /* at most this many timed launches (0: no limit) */
} br_run;

/* One warm-up round and `reps` timed rounds; returns the kernel's median in ms and sets *c_ms
 * to the references' (the better one's) median. */
static double br_run_median(const br_run *r, void (*sync)(void), int reps, double *c_ms) {
  double vk[BR_MAXREPS], vc[BR_MAXREPS], vc2[BR_MAXREPS];
  int i, nc;
  if (r->max_reps > 0 && reps > r->max_reps) reps = r->max_reps;
  nc = r->cref_once ? 1 : reps;
  for (i = -1; i < reps; i++) {
    double t0, t1, t2, t3;
    if (r->prepare) r->prepare(r->st);
    sync();
    t0 = br_now();
    r->launch(r->st);
    sync();
    t1 = br_now();
    if (i >= 0) vk[i] = (t1 - t0) * 1e3;
    if (r->cref_once && i >= 0) continue;
    r->cref(r->st);
    t2 = br_now();
    if (r->cref2) r->cref2(r->st);
    t3 = br_now();
    if (r->cref_once || i >= 0) {
      int k = r->cref_once ? 0 : i;
      vc[k] = (t2 - t1) * 1e3, vc2[k] = (t3 - t2) * 1e3;
    }
  }
  *c_ms = br_median(vc, nc);
  if (r->cref2 && br_median(vc2, nc) < *c_ms) *c_ms = br_median(vc2, nc);
  return br_median(vk, reps);
}

/* ---- output ---------------------------------------------------------------------------------- */

/* One kernel's result: "FIG key_ms", "FIG key_c_ms" (and "FIG key_gflops" when flops > 0) with
 * --figures, a table row otherwise. */
static void br_report(int figures, const char *key, const char *text, double ms, double c_ms, double flops) {
  if (figures) {
    printf("FIG %s_ms %.6g\nFIG %s_c_ms %.6g\n", key, ms, key, c_ms);
    if (flops > 0) printf("FIG %s_gflops %.6g\n", key, flops / (ms * 1e-3) / 1e9);
  } else {
    char extra[48] = "";
    if (flops > 0) snprintf(extra, sizeof extra, "%.3g GFLOP/s", flops / (ms * 1e-3) / 1e9);
    printf("| %-44s | %10.2f | %10.2f | %8.2fx | %-14s |\n", text, ms, c_ms, ms / c_ms, extra);
  }
  fflush(stdout);
}
/* The table's head, or with --figures the line "NOTE sizes: ..." (the title's last line). */
static void br_table_head(int figures, const char *title) {
  if (figures) {
    const char *last = strrchr(title, '\n');
    printf("NOTE sizes: %s\n", last ? last + 1 : title);
    return;
  }
  printf("\n%s\n", title);
  printf("| %-44s | %-10s | %-10s | %-9s | %-14s |\n|:--|--:|--:|--:|--|\n", "kernel", "median ms",
         "C ref ms", "/ C ref", "");
}

#endif
