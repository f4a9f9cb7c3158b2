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

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median seconds of one launch of `which` (0 load, else the texture t). */
static double timed(int which, const float *in, float *out, unsigned long long t, int reps) {
  double v[31];
  dim3 grid = birenDim3(W / 256, H, 1), block = birenDim3(256, 1, 1);
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    for (int i = 0; i < 4; i++)
      BIREN_CHECK(which ? BIREN_LAUNCH(k_tex, grid, block, 0, NULL, t, out) : BIREN_LAUNCH(k_load, grid, block, 0, NULL, in, out));
    BIREN_CHECK(birenDeviceSynchronize());
    v[r] = (now_s() - t0) / 4;
  }
  qsort(v, (size_t)reps, sizeof v[0], cmp);
  return v[reps / 2];
}

int main(void) {
  const char *q = getenv("BENCH_QUICK");
  int reps = q && *q && strcmp(q, "0") != 0 ? 5 : 15;
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
  timed(0, in, out, 0, 1); /* warm up */
  double load = timed(0, in, out, 0, reps);
  double point = timed(1, in, out, tp, reps);
  BIREN_CHECK(birenMemcpy(h, out, sizeof(float) * 12, birenMemcpyDeviceToHost));
  int wrong = h[10] != (float)(int)(10 * 0.999f + 0.5f); /* texel 10 */
  double bilin = timed(1, in, out, tl, reps);
  double n = (double)W * H;
  printf("\nTexture fetches, %d x %d float image, one fetch per thread (median of %d):\n", W, H, reps);
  printf("  T1  plain global load      %6.2f ns/thread\n", load / n * 1e9);
  printf("  T2  point 2-D fetch        %6.2f ns/thread  %.2fx the load  (target <= 2x: %s)\n", point / n * 1e9,
         point / load, point / load <= 2.0 ? "MET" : "MISSED");
  printf("  T3  bilinear 2-D fetch     %6.2f ns/thread  %.2fx the load  (target <= 6x: %s)\n", bilin / n * 1e9,
         bilin / load, bilin / load <= 6.0 ? "MET" : "MISSED");
  if (wrong) printf("WRONG RESULT: point fetch at texel 10 gave %g\n", h[10]);
  BIREN_CHECK(birenDestroyTextureObject(tp));
  BIREN_CHECK(birenDestroyTextureObject(tl));
  BIREN_CHECK(birenFreeArray(a));
  BIREN_CHECK(birenFree(in));
  BIREN_CHECK(birenFree(out));
  free(h);
  return wrong;
}
