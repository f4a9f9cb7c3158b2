/* birenDeviceSynchronize against the number of streams: 100 000 small kernels round-robin over
 * 1000 streams, then over 2, with a birenDeviceSynchronize every 1000 launches (and, for
 * reference, without). Prints the medians of 5 runs and the ratio 1000 streams / 2 streams; a
 * synchronize that costs with the number of streams that exist (not the work outstanding) shows
 * as a ratio well over 1 with the synchronizes only. Usage: sync_streams [kernels [sync_every]]
 * (sync_every 1: a synchronize after each launch, what isolates the synchronize's cost). */
#include <biren_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    birenError_t e_ = (call);                                                                      \
    if (e_ != BIREN_SUCCESS) {                                                                     \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)e_);              \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

enum { REPS = 5 };
static long g_sync_every = 1000;

/* A few hundred ns of arithmetic per thread (bench.c's small kernel). */
static void k_small(void **args) {
  float *out = *(float **)args[0];
  unsigned t = birenThreadIdx().x;
  float x = (float)t;
  for (int k = 0; k < 32; k++) x = x * 1.0001f + 0.5f;
  out[t] = x;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float *g_out;

static double run(birenStream_t *s, int ns, long kernels, int sync) {
  dim3 one = birenDim3(1, 1, 1), block = birenDim3(64, 1, 1);
  double t0 = now_s();
  for (long i = 0; i < kernels; i++) {
    float *p = g_out + (size_t)(i % ns) * 64;
    CHECK(BIREN_LAUNCH(k_small, one, block, 0, s[i % ns], p));
    if (sync && (i + 1) % g_sync_every == 0) CHECK(birenDeviceSynchronize());
  }
  CHECK(birenDeviceSynchronize());
  return now_s() - t0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v) {
  qsort(v, REPS, sizeof *v, cmp);
  return v[REPS / 2];
}

int main(int argc, char **argv) {
  long kernels = argc > 1 ? atol(argv[1]) : 100000;
  if (argc > 2) g_sync_every = atol(argv[2]);
  birenStream_t *many = calloc(1000, sizeof *many), two[2];
  CHECK(birenInit());
  CHECK(birenMalloc((void **)&g_out, 1000 * 64 * sizeof(float)));
  for (int i = 0; i < 1000; i++) CHECK(birenStreamCreateWithFlags(&many[i], birenStreamNonBlocking));
  for (int i = 0; i < 2; i++) CHECK(birenStreamCreateWithFlags(&two[i], birenStreamNonBlocking));
  for (int sync = 1; sync >= 0; sync--) {
    double v2[REPS], v1000[REPS];
    for (int r = -1; r < REPS; r++) { /* interleaved, so that load changes hit both */
      double t2 = run(two, 2, kernels, sync), t1000 = run(many, 1000, kernels, sync);
      if (r >= 0) {
        v2[r] = t2;
        v1000[r] = t1000;
      }
    }
    double m2 = median(v2), m1000 = median(v1000);
    printf("%ld small kernels, %s every %ld: 1000 streams %.1f ms, 2 streams %.1f ms, ratio %.2fx\n", kernels,
           sync ? "birenDeviceSynchronize" : "no synchronize", sync ? g_sync_every : 0, m1000 * 1e3, m2 * 1e3,
           m1000 / m2);
  }
  for (int i = 0; i < 1000; i++) CHECK(birenStreamDestroy(many[i]));
  for (int i = 0; i < 2; i++) CHECK(birenStreamDestroy(two[i]));
  CHECK(birenFree(g_out));
  free(many);
  return 0;
}
