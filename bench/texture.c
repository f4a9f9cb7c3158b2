/* Texture fetch cost (issue 32): a kernel reading a 1024 x 1024 float image through a plain
 * global load, a point-filtered 2-D fetch and a bilinear one, each thread at its own texel
 * (scaled by 0.999 so the coordinates are not integers). Targets: point <= 2x the load,
 * bilinear <= 6x. BENCH_QUICK=1 runs fewer repetitions. */
#include <biren_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { W = 1024, H = 1024 };

BIREN_KERNEL(k_load, (const float *) in, (float *) out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  int sx = (int)((float)x * 0.999f), sy = (int)((float)y * 0.999f);
  out[y * W + x] = in[sy * W + sx];
}

BIREN_KERNEL(k_tex, (unsigned long long) t, (float *) out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  out[y * W + x] = birenTex2DFloat(t, (float)x * 0.999f + 0.5f, (float)y * 0.999f + 0.5f);
}

static double clock_s(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One launch of `which` (0 load, else the texture t), averaged over 4 launches: wall seconds
 * and the process's CPU seconds (the compute units' work; the runtime's idle threads sleep).
 * CPU time counts only what this process ran, so the other jobs of a shared machine move it
 * much less than the wall clock. */
static void once(int which, const float *in, float *out, unsigned long long t, double *wall, double *cpu) {
  dim3 grid = birenDim3(W / 256, H, 1), block = birenDim3(256, 1, 1);
  double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  for (int i = 0; i < 4; i++)
    BIREN_CHECK(which ? BIREN_LAUNCH(k_tex, grid, block, 0, NULL, t, out) : BIREN_LAUNCH(k_load, grid, block, 0, NULL, in, out));
  BIREN_CHECK(birenDeviceSynchronize());
  *wall = (clock_s(CLOCK_MONOTONIC) - w0) / 4;
  *cpu = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) / 4;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], cmp);
  return v[n / 2];
}

int main(void) {
  const char *q = getenv("BENCH_QUICK");
  int reps = q && *q && strcmp(q, "0") != 0 ? 5 : 21;
  BIREN_CHECK(birenInit());
  float *h = malloc(sizeof(float) * W * H), *in, *out;
  for (int i = 0; i < W * H; i++) h[i] = (float)(i % 977);
  BIREN_CHECK(birenMalloc((void **)&in, sizeof(float) * W * H));
  BIREN_CHECK(birenMalloc((void **)&out, sizeof(float) * W * H));
  BIREN_CHECK(birenMemcpy(in, h, sizeof(float) * W * H, birenMemcpyHostToDevice));
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t a;
  BIREN_CHECK(birenMallocArray(&a, &f, W, H, 0));
  BIREN_CHECK(birenMemcpy2DToArray(a, 0, 0, h, W * 4, W * 4, H, birenMemcpyHostToDevice));
  birenResourceDesc r;
  memset(&r, 0, sizeof r);
  r.resType = birenResourceTypeArray;
  r.res.array.array = a;
  birenTextureDesc d;
  memset(&d, 0, sizeof d);
  d.addressMode[0] = d.addressMode[1] = birenAddressModeClamp;
  d.filterMode = birenFilterModePoint;
  unsigned long long tp, tl;
  BIREN_CHECK(birenCreateTextureObject(&tp, &r, &d, NULL));
  d.filterMode = birenFilterModeLinear;
  BIREN_CHECK(birenCreateTextureObject(&tl, &r, &d, NULL));
  /* The three kernels one after another in every round, so that each round's ratios compare
   * runs made under the same load; the medians of the rounds are reported. */
  double load[31], point[31], bilin[31], cl[31], cp[31], cb[31], rp[31], rb[31], w, c;
  once(0, in, out, 0, &w, &c); /* warm up */
  once(1, in, out, tp, &w, &c);
  once(1, in, out, tl, &w, &c);
  int wrong = 0;
  for (int r = 0; r < reps; r++) {
    once(0, in, out, 0, &load[r], &cl[r]);
    once(1, in, out, tp, &point[r], &cp[r]);
    if (r == 0) {
      BIREN_CHECK(birenMemcpy(h, out, sizeof(float) * W * 2, birenMemcpyDeviceToHost));
      for (int y = 0; y < 2; y++) /* the texels under the first rows' threads */
        for (int x = 0; x < W; x++) {
          int sx = (int)((float)x * 0.999f + 0.5f), sy = (int)((float)y * 0.999f + 0.5f);
          wrong |= h[y * W + x] != (float)((sy * W + sx) % 977);
        }
    }
    once(1, in, out, tl, &bilin[r], &cb[r]);
    rp[r] = cp[r] / cl[r];
    rb[r] = cb[r] / cl[r];
  }
  double n = (double)W * H, ml = median(load, reps), mp = median(point, reps), mb = median(bilin, reps);
  double rpm = median(rp, reps), rbm = median(rb, reps);
  double cml = median(cl, reps), cmp_ = median(cp, reps), cmb = median(cb, reps);
  printf("\nTexture fetches, %d x %d float image, one fetch per thread; medians of %d rounds, each running the\n"
         "three kernels; ratio: the median of the rounds' CPU-time ratios (wall time: other jobs move it):\n", W, H, reps);
  printf("  T1  plain global load      %6.2f ns/thread CPU, %6.2f wall\n", cml / n * 1e9, ml / n * 1e9);
  printf("  T2  point 2-D fetch        %6.2f ns/thread CPU, %6.2f wall  %.2fx the load  (target <= 2x: %s)\n",
         cmp_ / n * 1e9, mp / n * 1e9, rpm, rpm <= 2.0 ? "MET" : "MISSED");
  printf("  T3  bilinear 2-D fetch     %6.2f ns/thread CPU, %6.2f wall  %.2fx the load  (target <= 6x: %s)\n",
         cmb / n * 1e9, mb / n * 1e9, rbm, rbm <= 6.0 ? "MET" : "MISSED");
  if (wrong) printf("WRONG RESULT: a point fetch read the wrong texel\n");
  BIREN_CHECK(birenDestroyTextureObject(tp));
  BIREN_CHECK(birenDestroyTextureObject(tl));
  BIREN_CHECK(birenFreeArray(a));
  BIREN_CHECK(birenFree(in));
  BIREN_CHECK(birenFree(out));
  free(h);
  return wrong;
}
