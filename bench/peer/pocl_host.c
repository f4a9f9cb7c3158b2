/*
 * bench/peer/pocl_host.c -- the barrier-kernel suite of bench/barriers.c on an OpenCL CPU device
 * (PoCL), with the same sizes, inputs, C references and checks (bench/barrier_ref.h) and the same
 * output lines ("FIG name value"). The kernels are bench/peer/pocl_kernels.cl. Built and run by
 * `make bench-pocl` / `make bench-peer` (bench/barriers.sh), never by `make test`.
 *
 *   pocl_host [--figures] [--only=...] [--cl=FILE]   as bench/barriers.c; BENCH_QUICK, BENCH_REPS
 *
 * bench/barriers.sh runs it with POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=2
 * POCL_KERNEL_CACHE=0 and POCL_WORK_GROUP_METHOD=loopvec, then =loops. Buffers are
 * CL_MEM_USE_HOST_PTR on page-aligned memory (zero-copy on PoCL's CPU devices). A kernel is
 * compiled for its local size at its first launch: the warm-up launch before the timed ones
 * pays it. A time is clEnqueueNDRangeKernel to clFinish.
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "../barrier_ref.h"

#ifndef POCL_KERNELS_CL
#define POCL_KERNELS_CL "bench/peer/pocl_kernels.cl"
#endif

static int g_reps, g_quick, g_figures, g_failed, g_cus;
static const char *g_only;
static cl_context g_ctx;
static cl_command_queue g_q;
static cl_program g_prog;

#define CL_CHECK(call)                                                                   \
  do {                                                                                   \
    cl_int e_ = (call);                                                                  \
    if (e_ != CL_SUCCESS) {                                                              \
      fprintf(stderr, "pocl_host: OpenCL error %d at %s:%d: %s\n", e_, __FILE__, __LINE__, #call); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

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

static void sync_queue(void) { CL_CHECK(clFinish(g_q)); }
static double run_median(const br_run *r, double *c_ms) { return br_run_median(r, sync_queue, g_reps, c_ms); }

/* A buffer over `host` (page-aligned, from br_alloc): zero-copy on PoCL's CPU devices. */
static cl_mem buf(void *host, size_t bytes) {
  cl_int e;
  cl_mem m = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, &e);
  CL_CHECK(e);
  return m;
}
static void read_buf(cl_mem m, void *dst, size_t bytes) { CL_CHECK(clEnqueueReadBuffer(g_q, m, CL_TRUE, 0, bytes, dst, 0, NULL, NULL)); }
static cl_kernel kernel(const char *name) {
  cl_int e;
  cl_kernel k = clCreateKernel(g_prog, name, &e);
  CL_CHECK(e);
  return k;
}
static void arg_mem(cl_kernel k, cl_uint i, cl_mem *m) { CL_CHECK(clSetKernelArg(k, i, sizeof *m, m)); }
static void arg_int(cl_kernel k, cl_uint i, int v) { CL_CHECK(clSetKernelArg(k, i, sizeof v, &v)); }
static void arg_local(cl_kernel k, cl_uint i, size_t bytes) { CL_CHECK(clSetKernelArg(k, i, bytes, NULL)); }
static void launch(cl_kernel k, cl_uint dims, size_t gx, size_t gy, size_t lx, size_t ly) {
  size_t g[2] = {gx, gy}, l[2] = {lx, ly};
  CL_CHECK(clEnqueueNDRangeKernel(g_q, k, dims, NULL, g, l, 0, NULL, NULL));
}
static void check(const char *what, const void *got, const void *want, size_t bytes, size_t elem) {
  if (!br_same(what, got, want, bytes, elem)) g_failed = 1;
}

/* Every kernel's state: its inputs, reference output, buffers and kernel object. */
typedef struct {
  int n;
  cl_kernel k;
  size_t gx, gy, lx, ly;
  cl_uint dims;
  void *in1, *in2, *want;
  cl_mem m1, m2, mo;
} st_t;
static void st_launch(void *p) {
  st_t *s = (st_t *)p;
  launch(s->k, s->dims, s->gx, s->gy, s->lx, s->ly);
}

static void vadd_c1(void *p) {
  st_t *s = (st_t *)p;
  br_c_vadd((const float *)s->in1, (const float *)s->in2, (float *)s->want, s->n, 1);
}
static void vadd_cn(void *p) {
  st_t *s = (st_t *)p;
  br_c_vadd((const float *)s->in1, (const float *)s->in2, (float *)s->want, s->n, g_cus);
}
static void bench_vadd(int n) {
  st_t s;
  size_t bytes = (size_t)n * sizeof(float);
  float *out = (float *)br_alloc(bytes), *got = (float *)br_alloc(bytes);
  double ms, c;
  br_run r = {NULL, st_launch, vadd_c1, vadd_cn, &s, 0, 0};
  s.n = n, s.in1 = br_alloc(bytes), s.in2 = br_alloc(bytes), s.want = br_alloc(bytes);
  br_fill_small((float *)s.in1, n, 1000), br_fill_small((float *)s.in2, n, 777);
  s.m1 = buf(s.in1, bytes), s.m2 = buf(s.in2, bytes), s.mo = buf(out, bytes);
  s.k = kernel("kb_vadd");
  arg_mem(s.k, 0, &s.m1), arg_mem(s.k, 1, &s.m2), arg_mem(s.k, 2, &s.mo), arg_int(s.k, 3, n);
  s.dims = 1, s.gx = (size_t)(n + BR_BLOCK - 1) / BR_BLOCK * BR_BLOCK, s.gy = 1, s.lx = BR_BLOCK, s.ly = 1;
  ms = run_median(&r, &c);
  read_buf(s.mo, got, bytes);
  check("vector add", got, s.want, bytes, sizeof(float));
  br_report(g_figures, "vadd", "vector add (no barrier; C ref: best of 1, all CUs)", ms, c, 0);
  clReleaseKernel(s.k), clReleaseMemObject(s.m1), clReleaseMemObject(s.m2), clReleaseMemObject(s.mo);
  free(s.in1), free(s.in2), free(s.want), free(out), free(got);
}

static void reduce_c(void *p) {
  st_t *s = (st_t *)p;
  br_c_reduce((const float *)s->in1, (float *)s->want, s->n);
}
static void bench_reduce(int n) {
  st_t s;
  int nb = (n + BR_BLOCK - 1) / BR_BLOCK;
  size_t bytes = (size_t)n * sizeof(float), pbytes = (size_t)nb * sizeof(float);
  float *out = (float *)br_alloc(pbytes), *got = (float *)br_alloc(pbytes);
  double ms, c;
  br_run r = {NULL, st_launch, reduce_c, NULL, &s, 0, 0};
  s.n = n, s.in1 = br_alloc(bytes), s.want = br_alloc(pbytes);
  br_fill_small((float *)s.in1, n, 7);
  s.m1 = buf(s.in1, bytes), s.mo = buf(out, pbytes);
  s.k = kernel("kb_reduce");
  arg_mem(s.k, 0, &s.m1), arg_mem(s.k, 1, &s.mo), arg_int(s.k, 2, n), arg_local(s.k, 3, BR_BLOCK * sizeof(float));
  s.dims = 1, s.gx = (size_t)nb * BR_BLOCK, s.gy = 1, s.lx = BR_BLOCK, s.ly = 1;
  ms = run_median(&r, &c);
  read_buf(s.mo, got, pbytes);
  check("reduction", got, s.want, pbytes, sizeof(float));
  br_report(g_figures, "reduce", "tree reduction, block 256, 9 barriers", ms, c, 0);
  clReleaseKernel(s.k), clReleaseMemObject(s.m1), clReleaseMemObject(s.mo);
  free(s.in1), free(s.want), free(out), free(got);
}

static void matmul_c(void *p) {
  st_t *s = (st_t *)p;
  br_c_matmul((const float *)s->in1, (const float *)s->in2, (float *)s->want, s->n);
}
static void bench_matmul(int n) {
  st_t s;
  size_t bytes = (size_t)n * (size_t)n * sizeof(float);
  float *out = (float *)br_alloc(bytes), *got = (float *)br_alloc(bytes);
  double ms, c;
  br_run r = {NULL, st_launch, matmul_c, NULL, &s, 1, 3}; /* ~1 s each: 3 launches, the reference once */
  s.n = n, s.in1 = br_alloc(bytes), s.in2 = br_alloc(bytes), s.want = br_alloc(bytes);
  br_fill_matmul((float *)s.in1, (float *)s.in2, n);
  s.m1 = buf(s.in1, bytes), s.m2 = buf(s.in2, bytes), s.mo = buf(out, bytes);
  s.k = kernel("kb_matmul");
  arg_mem(s.k, 0, &s.m1), arg_mem(s.k, 1, &s.m2), arg_mem(s.k, 2, &s.mo), arg_int(s.k, 3, n);
  arg_local(s.k, 4, 2 * BR_TILE * BR_TILE * sizeof(float));
  s.dims = 2, s.gx = (size_t)n, s.gy = (size_t)n, s.lx = BR_TILE, s.ly = BR_TILE;
  ms = run_median(&r, &c);
  read_buf(s.mo, got, bytes);
  check("matmul", got, s.want, bytes, sizeof(float));
  br_report(g_figures, "matmul", "tiled matmul, 16x16 tiles, 2 barriers per tile", ms, c, 2.0 * n * (double)n * n);
  clReleaseKernel(s.k), clReleaseMemObject(s.m1), clReleaseMemObject(s.m2), clReleaseMemObject(s.mo);
  free(s.in1), free(s.in2), free(s.want), free(out), free(got);
}

static void scan_c(void *p) {
  st_t *s = (st_t *)p;
  br_c_scan((const float *)s->in1, (float *)s->want, s->n);
}
static void bench_scan(int n) {
  st_t s;
  size_t bytes = (size_t)n * sizeof(float);
  float *out = (float *)br_alloc(bytes), *got = (float *)br_alloc(bytes);
  double ms, c;
  br_run r = {NULL, st_launch, scan_c, NULL, &s, 0, 0};
  s.n = n, s.in1 = br_alloc(bytes), s.want = br_alloc(bytes);
  br_fill_small((float *)s.in1, n, 5);
  s.m1 = buf(s.in1, bytes), s.mo = buf(out, bytes);
  s.k = kernel("kb_scan");
  arg_mem(s.k, 0, &s.m1), arg_mem(s.k, 1, &s.mo), arg_int(s.k, 2, n);
  s.dims = 1, s.gx = (size_t)(n + BR_BLOCK - 1) / BR_BLOCK * BR_BLOCK, s.gy = 1, s.lx = BR_BLOCK, s.ly = 1;
  ms = run_median(&r, &c);
  read_buf(s.mo, got, bytes);
  check("scan", got, s.want, bytes, sizeof(float));
  br_report(g_figures, "scan", "block scan of 256, Hillis-Steele, 9 barriers", ms, c, 0);
  clReleaseKernel(s.k), clReleaseMemObject(s.m1), clReleaseMemObject(s.mo);
  free(s.in1), free(s.want), free(out), free(got);
}

static void hist_prepare(void *p) {
  st_t *s = (st_t *)p;
  unsigned zero = 0;
  CL_CHECK(clEnqueueFillBuffer(g_q, s->mo, &zero, sizeof zero, 0, 256 * sizeof(unsigned), 0, NULL, NULL));
}
static void hist_c(void *p) {
  st_t *s = (st_t *)p;
  br_c_hist((const unsigned char *)s->in1, (unsigned *)s->want, s->n);
}
static void bench_hist(int n) {
  st_t s;
  unsigned *out = (unsigned *)br_alloc(256 * sizeof(unsigned)), got[256];
  unsigned per_block = BR_BLOCK * BR_HIST_PER;
  double ms, c;
  br_run r = {hist_prepare, st_launch, hist_c, NULL, &s, 0, 0};
  s.n = n, s.in1 = br_alloc((size_t)n), s.want = br_alloc(256 * sizeof(unsigned));
  br_fill_bytes((unsigned char *)s.in1, n);
  s.m1 = buf(s.in1, (size_t)n), s.mo = buf(out, 256 * sizeof(unsigned));
  s.k = kernel("kb_hist");
  arg_mem(s.k, 0, &s.m1), arg_mem(s.k, 1, &s.mo), arg_int(s.k, 2, n);
  s.dims = 1, s.gx = ((size_t)n + per_block - 1) / per_block * BR_BLOCK, s.gy = 1, s.lx = BR_BLOCK, s.ly = 1;
  ms = run_median(&r, &c);
  read_buf(s.mo, got, sizeof got);
  check("histogram", got, s.want, sizeof got, sizeof(unsigned));
  br_report(g_figures, "hist", "histogram of bytes, shared atomics, 2 barriers", ms, c, 0);
  clReleaseKernel(s.k), clReleaseMemObject(s.m1), clReleaseMemObject(s.mo);
  free(s.in1), free(s.want), free(out);
}

static void transpose_c(void *p) {
  st_t *s = (st_t *)p;
  br_c_transpose((const float *)s->in1, (float *)s->want, s->n);
}
static void bench_transpose(int n) {
  st_t s;
  size_t bytes = (size_t)n * (size_t)n * sizeof(float), g = (size_t)(n + BR_TT - 1) / BR_TT;
  float *out = (float *)br_alloc(bytes), *got = (float *)br_alloc(bytes);
  double ms, c;
  br_run r = {NULL, st_launch, transpose_c, NULL, &s, 0, 0};
  s.n = n, s.in1 = br_alloc(bytes), s.want = br_alloc(bytes);
  br_fill_small((float *)s.in1, n * n, 100003);
  s.m1 = buf(s.in1, bytes), s.mo = buf(out, bytes);
  s.k = kernel("kb_transpose");
  arg_mem(s.k, 0, &s.m1), arg_mem(s.k, 1, &s.mo), arg_int(s.k, 2, n);
  s.dims = 2, s.gx = g * BR_TT, s.gy = g * BR_TROWS, s.lx = BR_TT, s.ly = BR_TROWS;
  ms = run_median(&r, &c);
  read_buf(s.mo, got, bytes);
  check("transpose", got, s.want, bytes, sizeof(float));
  br_report(g_figures, "transpose", "transpose, 32x33 shared tile, 1 barrier", ms, c, 0);
  clReleaseKernel(s.k), clReleaseMemObject(s.m1), clReleaseMemObject(s.mo);
  free(s.in1), free(s.want), free(out), free(got);
}

static void bitonic_c(void *p) {
  st_t *s = (st_t *)p;
  br_c_bitonic((const unsigned *)s->in1, (unsigned *)s->want, s->n);
}
static void bench_bitonic(int n) {
  st_t s;
  size_t bytes = (size_t)n * sizeof(unsigned);
  unsigned *out = (unsigned *)br_alloc(bytes), *got = (unsigned *)br_alloc(bytes);
  double ms, c;
  br_run r = {NULL, st_launch, bitonic_c, NULL, &s, 0, 0};
  s.n = n, s.in1 = br_alloc(bytes), s.want = br_alloc(bytes);
  br_fill_keys((unsigned *)s.in1, n);
  s.m1 = buf(s.in1, bytes), s.mo = buf(out, bytes);
  s.k = kernel("kb_bitonic");
  arg_mem(s.k, 0, &s.m1), arg_mem(s.k, 1, &s.mo);
  s.dims = 1, s.gx = (size_t)n, s.gy = 1, s.lx = BR_BLOCK, s.ly = 1;
  ms = run_median(&r, &c);
  read_buf(s.mo, got, bytes);
  if (!br_runs_sorted((const unsigned *)s.want, n)) fprintf(stderr, "pocl_host: the C bitonic network did not sort\n"), g_failed = 1;
  check("bitonic sort", got, s.want, bytes, sizeof(unsigned));
  br_report(g_figures, "bitonic", "bitonic sort of 256 keys, 37 barriers", ms, c, 0);
  clReleaseKernel(s.k), clReleaseMemObject(s.m1), clReleaseMemObject(s.mo);
  free(s.in1), free(s.want), free(out), free(got);
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *text;
  long n;
  if (!f) {
    fprintf(stderr, "pocl_host: cannot open %s (give --cl=FILE)\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = (char *)malloc((size_t)n + 1);
  if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "pocl_host: cannot read %s\n", path);
    exit(1);
  }
  text[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return text;
}

/* The first platform's first device; its name and the work-group method for the NOTE line. */
static void setup(const char *cl_path) {
  cl_platform_id plat;
  cl_device_id dev;
  cl_uint n, cus;
  cl_int e;
  char name[256], version[256];
  size_t len;
  const char *src;
  CL_CHECK(clGetPlatformIDs(1, &plat, &n));
  CL_CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, &n));
  CL_CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL));
  CL_CHECK(clGetPlatformInfo(plat, CL_PLATFORM_VERSION, sizeof version, version, NULL));
  CL_CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL));
  g_cus = (int)cus;
  g_ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  CL_CHECK(e);
  g_q = clCreateCommandQueue(g_ctx, dev, 0, &e);
  CL_CHECK(e);
  src = read_file(cl_path, &len);
  g_prog = clCreateProgramWithSource(g_ctx, 1, &src, &len, &e);
  CL_CHECK(e);
  e = clBuildProgram(g_prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL);
  if (e != CL_SUCCESS) {
    static char log[65536];
    clGetProgramBuildInfo(g_prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fprintf(stderr, "pocl_host: building %s failed (%d):\n%s\n", cl_path, e, log);
    exit(1);
  }
  free((void *)src);
  printf("NOTE %s, %s, %u compute units, POCL_WORK_GROUP_METHOD=%s\n", version, name, cus,
         getenv("POCL_WORK_GROUP_METHOD") ? getenv("POCL_WORK_GROUP_METHOD") : "(default)");
}

int main(int argc, char **argv) {
  const char *q = getenv("BENCH_QUICK"), *reps = getenv("BENCH_REPS"), *cl_path = POCL_KERNELS_CL;
  br_sizes sz;
  int i;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--figures") == 0) g_figures = 1;
    else if (strncmp(argv[i], "--only=", 7) == 0) g_only = argv[i] + 7;
    else if (strncmp(argv[i], "--cl=", 5) == 0) cl_path = argv[i] + 5;
    else {
      fprintf(stderr, "usage: %s [--figures] [--only=vadd,reduce,matmul,scan,hist,transpose,bitonic] [--cl=FILE]\n", argv[0]);
      return 1;
    }
  }
  g_quick = q && *q && strcmp(q, "0") != 0;
  g_reps = reps ? atoi(reps) : (g_quick ? 3 : 5);
  if (g_reps < 1) g_reps = 1;
  if (g_reps > BR_MAXREPS) g_reps = BR_MAXREPS;
  sz = br_sizes_for(g_quick);
  setup(cl_path);
  {
    char title[320], sizes[200];
    br_sizes_text(&sz, sizes, sizeof sizes);
    snprintf(title, sizeof title, "Barrier kernels on OpenCL (bench/peer/pocl_host.c): median of %d%s\n%s", g_reps,
             g_quick ? " (QUICK: smaller sizes)" : "", sizes);
    br_table_head(g_figures, title);
  }
  if (wanted("vadd")) bench_vadd(sz.vadd);
  if (wanted("reduce")) bench_reduce(sz.reduce);
  if (wanted("matmul")) bench_matmul(sz.matmul);
  if (wanted("scan")) bench_scan(sz.scan);
  if (wanted("hist")) bench_hist(sz.hist);
  if (wanted("transpose")) bench_transpose(sz.transpose);
  if (wanted("bitonic")) bench_bitonic(sz.bitonic);
  clReleaseProgram(g_prog);
  clReleaseCommandQueue(g_q);
  clReleaseContext(g_ctx);
  return g_failed;
}
