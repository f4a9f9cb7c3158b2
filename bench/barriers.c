/*
 * bench/barriers.c -- barrier kernels in the BIREN_KERNEL form (issue 29): vector add (no
 * barrier, the reference), the block-256 tree reduction, the tiled 16x16 matrix multiply, a block
 * scan, a histogram with shared-memory atomics, a tiled transpose and a bitonic sort within
 * blocks (and, beside them, the reduction by warp shuffles). Kernel bodies use only
 * birenSyncThreads(), BIREN_SHARED / birenSharedMemory(), atomics and plain C.
 *
 * One source, two builds (Makefile): `cc` gives the fiber form (build/bench/barriers), `biren-cc`
 * the region form (build/bench/barriers-region); bench/barriers.sh puts them side by side and,
 * for `make bench-pocl`, beside the same kernels on PoCL (bench/peer/pocl_host.c).
 *
 *   build/bench/barriers            a table: median kernel time, its plain C reference, the ratio
 *   build/bench/barriers --figures  "FIG name value" lines (bench/barriers.sh reads them)
 *   --only=vadd,reduce,...          some kernels only: vadd reduce matmul scan hist transpose
 *                                   bitonic reduce_warp
 *   BENCH_QUICK=1 / BENCH_REPS=N    smaller sizes / repetitions per figure (default 5, quick 3)
 *
 * Each figure is the median of N launches (launch to stream synchronize; the multiply at most 3)
 * after a warm-up launch, its C reference (bench/barrier_ref.h) the median of N runs interleaved
 * with them (the multiply's: one run); the vector add's reference is the better of 1 thread and
 * all compute units, every other one 1 thread. Every result is compared with its reference bit
 * for bit; exit status 1 when one differs.
 */
#define _GNU_SOURCE
#include "biren_runtime.h"

#include "barrier_ref.h"

static int g_reps, g_quick, g_figures, g_failed, g_cus;
static const char *g_only;
static birenStream_t g_s;

/* Whether kernel `name` runs (all when --only is not given). */
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

/* ---- kernels ------------------------------------------------------------------------------------ */

BIREN_KERNEL(kb_vadd, (const float *) a, (const float *) b, (float *) c, (int) n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

/* Tree reduction in dynamic shared memory: 9 barriers per thread with blocks of 256. */
BIREN_KERNEL(kb_reduce, (const float *) in, (float *) out, (int) n) {
  float *sh = (float *)birenSharedMemory();
  unsigned t = threadIdx.x, s;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  sh[t] = i < n ? in[i] : 0.0f;
  birenSyncThreads();
  for (s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    birenSyncThreads();
  }
  if (t == 0) out[blockIdx.x] = sh[0];
}

/* The same sums by warp shuffles: 5 per warp, one barrier, 5 more in the first warp. */
BIREN_KERNEL(kb_reduce_warp, (const float *) in, (float *) out, (int) n) {
  BIREN_SHARED float warp_sums[32];
  int t = (int)threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x, d;
  float v = i < n ? in[i] : 0.0f;
  for (d = 16; d > 0; d >>= 1) v += birenShflDownSyncFloat(0xffffffffu, v, d);
  if ((t & 31) == 0) warp_sums[t >> 5] = v;
  birenSyncThreads();
  if (t < 32) {
    v = t < (int)(blockDim.x >> 5) ? warp_sums[t] : 0.0f;
    for (d = 16; d > 0; d >>= 1) v += birenShflDownSyncFloat(0xffffffffu, v, d);
    if (t == 0) out[blockIdx.x] = v;
  }
}

/* Tiled multiply, 16x16 tiles of A and B in dynamic shared memory, 2 barriers per tile. */
BIREN_KERNEL(kb_matmul, (const float *) A, (const float *) B, (float *) C, (int) n) {
  float *As = (float *)birenSharedMemory(), *Bs = As + BR_TILE * BR_TILE;
  int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
  int row = (int)blockIdx.y * BR_TILE + ty, col = (int)blockIdx.x * BR_TILE + tx;
  float acc = 0.0f;
  int t, k;
  for (t = 0; t < n / BR_TILE; ++t) {
    As[ty * BR_TILE + tx] = A[row * n + t * BR_TILE + tx];
    Bs[ty * BR_TILE + tx] = B[(t * BR_TILE + ty) * n + col];
    birenSyncThreads();
    for (k = 0; k < BR_TILE; ++k) acc += As[ty * BR_TILE + k] * Bs[k * BR_TILE + tx];
    birenSyncThreads();
  }
  C[row * n + col] = acc;
}

/* Inclusive scan of each block's 256 values (Hillis-Steele, two buffers): 9 barriers per thread. */
BIREN_KERNEL(kb_scan, (const float *) in, (float *) out, (int) n) {
  BIREN_SHARED float buf[2][BR_BLOCK];
  int t = (int)threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x, from = 0, off;
  buf[0][t] = i < n ? in[i] : 0.0f;
  birenSyncThreads();
  for (off = 1; off < (int)blockDim.x; off <<= 1) {
    float v = buf[from][t];
    if (t >= off) v += buf[from][t - off];
    buf[1 - from][t] = v;
    from = 1 - from;
    birenSyncThreads();
  }
  if (i < n) out[i] = buf[from][t];
}

/* 256-bin histogram of bytes: each block counts its 256 x 16 bytes with atomics on shared
 * counters, then adds them to the global bins (blocks of 256 threads). */
BIREN_KERNEL(kb_hist, (const unsigned char *) data, (unsigned *) hist, (int) n) {
  BIREN_SHARED unsigned bins[256];
  int t = (int)threadIdx.x, base = blockIdx.x * blockDim.x * BR_HIST_PER, k;
  bins[t] = 0;
  birenSyncThreads();
  for (k = 0; k < BR_HIST_PER; k++) {
    int i = base + k * (int)blockDim.x + t;
    if (i < n) birenAtomicAdd(&bins[data[i]], 1u);
  }
  birenSyncThreads();
  if (bins[t]) birenAtomicAdd(&hist[t], bins[t]);
}

/* out = in transposed (n x n) through a 32x33 shared tile (the +1 column keeps the column reads
 * off one bank on a GPU); blocks of 32x8 threads move 4 rows each. */
BIREN_KERNEL(kb_transpose, (const float *) in, (float *) out, (int) n) {
  BIREN_SHARED float tile[BR_TT][BR_TT + 1];
  int x = (int)blockIdx.x * BR_TT + (int)threadIdx.x, y = (int)blockIdx.y * BR_TT + (int)threadIdx.y, j;
  for (j = 0; j < BR_TT; j += BR_TROWS)
    if (x < n && y + j < n) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
  birenSyncThreads();
  x = (int)blockIdx.y * BR_TT + (int)threadIdx.x;
  y = (int)blockIdx.x * BR_TT + (int)threadIdx.y;
  for (j = 0; j < BR_TT; j += BR_TROWS)
    if (x < n && y + j < n) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

/* Bitonic sort of each block's 256 keys in shared memory: 37 barriers per thread. */
BIREN_KERNEL(kb_bitonic, (const unsigned *) in, (unsigned *) out) {
  BIREN_SHARED unsigned s[BR_BLOCK];
  unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x, k, j;
  s[t] = in[base + t];
  birenSyncThreads();
  for (k = 2; k <= blockDim.x; k <<= 1)
    for (j = k >> 1; j > 0; j >>= 1) {
      unsigned p = t ^ j;
      if (p > t) {
        unsigned a = s[t], b = s[p];
        if ((a > b) == ((t & k) == 0)) s[t] = b, s[p] = a;
      }
      birenSyncThreads();
    }
  out[base + t] = s[t];
}

/* ---- the runs ----------------------------------------------------------------------------------- */

static void sync_stream(void) { BIREN_CHECK(birenStreamSynchronize(g_s)); }
static double run_median(const br_run *r, double *c_ms) { return br_run_median(r, sync_stream, g_reps, c_ms); }

static void *dalloc(size_t bytes) {
  void *p;
  BIREN_CHECK(birenMalloc(&p, bytes));
  return p;
}
static void dfree(void *p) { BIREN_CHECK(birenFree(p)); }
static void to_dev(void *d, const void *h, size_t bytes) { BIREN_CHECK(birenMemcpy(d, h, bytes, birenMemcpyHostToDevice)); }
static void to_host(void *h, const void *d, size_t bytes) { BIREN_CHECK(birenMemcpy(h, d, bytes, birenMemcpyDeviceToHost)); }
static void check(const char *what, const void *got, const void *want, size_t bytes, size_t elem) {
  if (!br_same(what, got, want, bytes, elem)) g_failed = 1;
}

/* vector add */
typedef struct {
  int n;
  float *a, *b, *c, *da, *db, *dc;
} vadd_st;
static void vadd_launch(void *p) {
  vadd_st *s = (vadd_st *)p;
  BIREN_CHECK(BIREN_LAUNCH(kb_vadd, birenDim3((unsigned)(s->n + BR_BLOCK - 1) / BR_BLOCK, 1, 1), birenDim3(BR_BLOCK, 1, 1), 0, g_s, s->da, s->db, s->dc, s->n));
}
static void vadd_c1(void *p) {
  vadd_st *s = (vadd_st *)p;
  br_c_vadd(s->a, s->b, s->c, s->n, 1);
}
static void vadd_cn(void *p) {
  vadd_st *s = (vadd_st *)p;
  br_c_vadd(s->a, s->b, s->c, s->n, g_cus);
}
static void bench_vadd(int n) {
  vadd_st s;
  size_t bytes = (size_t)n * sizeof(float);
  float *got = (float *)br_alloc(bytes);
  double ms, c;
  br_run r = {NULL, vadd_launch, vadd_c1, vadd_cn, &s, 0, 0};
  s.n = n, s.a = (float *)br_alloc(bytes), s.b = (float *)br_alloc(bytes), s.c = (float *)br_alloc(bytes);
  br_fill_small(s.a, n, 1000), br_fill_small(s.b, n, 777);
  s.da = (float *)dalloc(bytes), s.db = (float *)dalloc(bytes), s.dc = (float *)dalloc(bytes);
  to_dev(s.da, s.a, bytes), to_dev(s.db, s.b, bytes);
  ms = run_median(&r, &c);
  to_host(got, s.dc, bytes);
  check("vector add", got, s.c, bytes, sizeof(float));
  br_report(g_figures, "vadd", "vector add (no barrier; C ref: best of 1, all CUs)", ms, c, 0);
  dfree(s.da), dfree(s.db), dfree(s.dc);
  free(s.a), free(s.b), free(s.c), free(got);
}

/* tree reduction, and the same by warp shuffles */
typedef struct {
  int n, nb, warp;
  float *in, *part, *din, *dout;
} reduce_st;
static void reduce_launch(void *p) {
  reduce_st *s = (reduce_st *)p;
  if (s->warp) BIREN_CHECK(BIREN_LAUNCH(kb_reduce_warp, birenDim3((unsigned)s->nb, 1, 1), birenDim3(BR_BLOCK, 1, 1), 0, g_s, s->din, s->dout, s->n));
  else BIREN_CHECK(BIREN_LAUNCH(kb_reduce, birenDim3((unsigned)s->nb, 1, 1), birenDim3(BR_BLOCK, 1, 1), BR_BLOCK * sizeof(float), g_s, s->din, s->dout, s->n));
}
static void reduce_c(void *p) {
  reduce_st *s = (reduce_st *)p;
  br_c_reduce(s->in, s->part, s->n);
}
static void bench_reduce(int n, int warp) {
  reduce_st s;
  size_t bytes = (size_t)n * sizeof(float), pbytes;
  float *got;
  double ms, c;
  br_run r = {NULL, reduce_launch, reduce_c, NULL, &s, 0, 0};
  s.n = n, s.nb = (n + BR_BLOCK - 1) / BR_BLOCK, s.warp = warp;
  pbytes = (size_t)s.nb * sizeof(float);
  s.in = (float *)br_alloc(bytes), s.part = (float *)br_alloc(pbytes), got = (float *)br_alloc(pbytes);
  br_fill_small(s.in, n, 7);
  s.din = (float *)dalloc(bytes), s.dout = (float *)dalloc(pbytes);
  to_dev(s.din, s.in, bytes);
  ms = run_median(&r, &c);
  to_host(got, s.dout, pbytes);
  check(warp ? "warp-shuffle reduction" : "reduction", got, s.part, pbytes, sizeof(float));
  if (warp) br_report(g_figures, "reduce_warp", "  the same by warp shuffles (1 barrier)", ms, c, 0);
  else br_report(g_figures, "reduce", "tree reduction, block 256, 9 barriers", ms, c, 0);
  dfree(s.din), dfree(s.dout);
  free(s.in), free(s.part), free(got);
}

/* tiled matrix multiply */
typedef struct {
  int n, c_done;
  float *a, *b, *c, *da, *db, *dc;
} matmul_st;
static void matmul_launch(void *p) {
  matmul_st *s = (matmul_st *)p;
  BIREN_CHECK(BIREN_LAUNCH(kb_matmul, birenDim3((unsigned)(s->n / BR_TILE), (unsigned)(s->n / BR_TILE), 1), birenDim3(BR_TILE, BR_TILE, 1),
                           2 * BR_TILE * BR_TILE * sizeof(float), g_s, s->da, s->db, s->dc, s->n));
}
static void matmul_c(void *p) {
  matmul_st *s = (matmul_st *)p;
  br_c_matmul(s->a, s->b, s->c, s->n);
}
static void bench_matmul(int n) {
  matmul_st s;
  size_t bytes = (size_t)n * (size_t)n * sizeof(float);
  float *got = (float *)br_alloc(bytes);
  double ms, c;
  br_run r = {NULL, matmul_launch, matmul_c, NULL, &s, 1, 3}; /* ~1 s each: 3 launches, the reference once */
  s.n = n, s.a = (float *)br_alloc(bytes), s.b = (float *)br_alloc(bytes), s.c = (float *)br_alloc(bytes);
  br_fill_matmul(s.a, s.b, n);
  s.da = (float *)dalloc(bytes), s.db = (float *)dalloc(bytes), s.dc = (float *)dalloc(bytes);
  to_dev(s.da, s.a, bytes), to_dev(s.db, s.b, bytes);
  ms = run_median(&r, &c);
  to_host(got, s.dc, bytes);
  check("matmul", got, s.c, bytes, sizeof(float));
  br_report(g_figures, "matmul", "tiled matmul, 16x16 tiles, 2 barriers per tile", ms, c, 2.0 * n * (double)n * n);
  dfree(s.da), dfree(s.db), dfree(s.dc);
  free(s.a), free(s.b), free(s.c), free(got);
}

/* block scan */
typedef struct {
  int n;
  float *in, *out, *din, *dout;
} scan_st;
static void scan_launch(void *p) {
  scan_st *s = (scan_st *)p;
  BIREN_CHECK(BIREN_LAUNCH(kb_scan, birenDim3((unsigned)(s->n + BR_BLOCK - 1) / BR_BLOCK, 1, 1), birenDim3(BR_BLOCK, 1, 1), 0, g_s, s->din, s->dout, s->n));
}
static void scan_c(void *p) {
  scan_st *s = (scan_st *)p;
  br_c_scan(s->in, s->out, s->n);
}
static void bench_scan(int n) {
  scan_st s;
  size_t bytes = (size_t)n * sizeof(float);
  float *got = (float *)br_alloc(bytes);
  double ms, c;
  br_run r = {NULL, scan_launch, scan_c, NULL, &s, 0, 0};
  s.n = n, s.in = (float *)br_alloc(bytes), s.out = (float *)br_alloc(bytes);
  br_fill_small(s.in, n, 5);
  s.din = (float *)dalloc(bytes), s.dout = (float *)dalloc(bytes);
  to_dev(s.din, s.in, bytes);
  ms = run_median(&r, &c);
  to_host(got, s.dout, bytes);
  check("scan", got, s.out, bytes, sizeof(float));
  br_report(g_figures, "scan", "block scan of 256, Hillis-Steele, 9 barriers", ms, c, 0);
  dfree(s.din), dfree(s.dout);
  free(s.in), free(s.out), free(got);
}

/* histogram */
typedef struct {
  int n;
  unsigned char *data, *ddata;
  unsigned *hist, *dhist;
} hist_st;
static void hist_prepare(void *p) {
  hist_st *s = (hist_st *)p;
  BIREN_CHECK(birenMemsetAsync(s->dhist, 0, 256 * sizeof(unsigned), g_s));
}
static void hist_launch(void *p) {
  hist_st *s = (hist_st *)p;
  unsigned per_block = BR_BLOCK * BR_HIST_PER;
  BIREN_CHECK(BIREN_LAUNCH(kb_hist, birenDim3(((unsigned)s->n + per_block - 1) / per_block, 1, 1), birenDim3(BR_BLOCK, 1, 1), 0, g_s, s->ddata, s->dhist, s->n));
}
static void hist_c(void *p) {
  hist_st *s = (hist_st *)p;
  br_c_hist(s->data, s->hist, s->n);
}
static void bench_hist(int n) {
  hist_st s;
  unsigned got[256];
  double ms, c;
  br_run r = {hist_prepare, hist_launch, hist_c, NULL, &s, 0, 0};
  s.n = n, s.data = (unsigned char *)br_alloc((size_t)n), s.hist = (unsigned *)br_alloc(256 * sizeof(unsigned));
  br_fill_bytes(s.data, n);
  s.ddata = (unsigned char *)dalloc((size_t)n), s.dhist = (unsigned *)dalloc(256 * sizeof(unsigned));
  to_dev(s.ddata, s.data, (size_t)n);
  ms = run_median(&r, &c);
  to_host(got, s.dhist, sizeof got);
  check("histogram", got, s.hist, sizeof got, sizeof(unsigned));
  br_report(g_figures, "hist", "histogram of bytes, shared atomics, 2 barriers", ms, c, 0);
  dfree(s.ddata), dfree(s.dhist);
  free(s.data), free(s.hist);
}

/* transpose */
typedef struct {
  int n;
  float *in, *out, *din, *dout;
} transpose_st;
static void transpose_launch(void *p) {
  transpose_st *s = (transpose_st *)p;
  unsigned g = (unsigned)(s->n + BR_TT - 1) / BR_TT;
  BIREN_CHECK(BIREN_LAUNCH(kb_transpose, birenDim3(g, g, 1), birenDim3(BR_TT, BR_TROWS, 1), 0, g_s, s->din, s->dout, s->n));
}
static void transpose_c(void *p) {
  transpose_st *s = (transpose_st *)p;
  br_c_transpose(s->in, s->out, s->n);
}
static void bench_transpose(int n) {
  transpose_st s;
  size_t bytes = (size_t)n * (size_t)n * sizeof(float);
  float *got = (float *)br_alloc(bytes);
  double ms, c;
  br_run r = {NULL, transpose_launch, transpose_c, NULL, &s, 0, 0};
  s.n = n, s.in = (float *)br_alloc(bytes), s.out = (float *)br_alloc(bytes);
  br_fill_small(s.in, n * n, 100003);
  s.din = (float *)dalloc(bytes), s.dout = (float *)dalloc(bytes);
  to_dev(s.din, s.in, bytes);
  ms = run_median(&r, &c);
  to_host(got, s.dout, bytes);
  check("transpose", got, s.out, bytes, sizeof(float));
  br_report(g_figures, "transpose", "transpose, 32x33 shared tile, 1 barrier", ms, c, 0);
  dfree(s.din), dfree(s.dout);
  free(s.in), free(s.out), free(got);
}

/* bitonic sort within blocks */
typedef struct {
  int n;
  unsigned *in, *out, *din, *dout;
} bitonic_st;
static void bitonic_launch(void *p) {
  bitonic_st *s = (bitonic_st *)p;
  BIREN_CHECK(BIREN_LAUNCH(kb_bitonic, birenDim3((unsigned)s->n / BR_BLOCK, 1, 1), birenDim3(BR_BLOCK, 1, 1), 0, g_s, s->din, s->dout));
}
static void bitonic_c(void *p) {
  bitonic_st *s = (bitonic_st *)p;
  br_c_bitonic(s->in, s->out, s->n);
}
static void bench_bitonic(int n) {
  bitonic_st s;
  size_t bytes = (size_t)n * sizeof(unsigned);
  unsigned *got = (unsigned *)br_alloc(bytes);
  double ms, c;
  br_run r = {NULL, bitonic_launch, bitonic_c, NULL, &s, 0, 0};
  s.n = n, s.in = (unsigned *)br_alloc(bytes), s.out = (unsigned *)br_alloc(bytes);
  br_fill_keys(s.in, n);
  s.din = (unsigned *)dalloc(bytes), s.dout = (unsigned *)dalloc(bytes);
  to_dev(s.din, s.in, bytes);
  ms = run_median(&r, &c);
  to_host(got, s.dout, bytes);
  if (!br_runs_sorted(s.out, n)) fprintf(stderr, "barriers: the C bitonic network did not sort\n"), g_failed = 1;
  check("bitonic sort", got, s.out, bytes, sizeof(unsigned));
  br_report(g_figures, "bitonic", "bitonic sort of 256 keys, 37 barriers", ms, c, 0);
  dfree(s.din), dfree(s.dout);
  free(s.in), free(s.out), free(got);
}

int main(int argc, char **argv) {
  const char *q = getenv("BENCH_QUICK"), *reps = getenv("BENCH_REPS");
  birenDeviceProp prop;
  br_sizes sz;
  int i;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--figures") == 0) g_figures = 1;
    else if (strncmp(argv[i], "--only=", 7) == 0) g_only = argv[i] + 7;
    else {
      fprintf(stderr, "usage: %s [--figures] [--only=vadd,reduce,matmul,scan,hist,transpose,bitonic,reduce_warp]\n", argv[0]);
      return 1;
    }
  }
  g_quick = q && *q && strcmp(q, "0") != 0;
  g_reps = reps ? atoi(reps) : (g_quick ? 3 : 5);
  if (g_reps < 1) g_reps = 1;
  if (g_reps > BR_MAXREPS) g_reps = BR_MAXREPS;
  sz = br_sizes_for(g_quick);
  BIREN_CHECK(birenInit());
  BIREN_CHECK(birenGetDeviceProperties(&prop, 0));
  g_cus = prop.multiProcessorCount;
  BIREN_CHECK(birenStreamCreateWithFlags(&g_s, birenStreamNonBlocking));
  {
    char title[320], sizes[200];
    br_sizes_text(&sz, sizes, sizeof sizes);
    snprintf(title, sizeof title, "Barrier kernels (bench/barriers.c): %d compute units, median of %d%s\n%s", g_cus, g_reps,
             g_quick ? " (QUICK: smaller sizes)" : "", sizes);
    br_table_head(g_figures, title);
  }
  if (wanted("vadd")) bench_vadd(sz.vadd);
  if (wanted("reduce")) bench_reduce(sz.reduce, 0);
  if (wanted("reduce_warp")) bench_reduce(sz.reduce_warp, 1);
  if (wanted("matmul")) bench_matmul(sz.matmul);
  if (wanted("scan")) bench_scan(sz.scan);
  if (wanted("hist")) bench_hist(sz.hist);
  if (wanted("transpose")) bench_transpose(sz.transpose);
  if (wanted("bitonic")) bench_bitonic(sz.bitonic);
  BIREN_CHECK(birenStreamDestroy(g_s));
  return g_failed;
}
