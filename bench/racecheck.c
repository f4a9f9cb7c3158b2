/* racecheck.c -- the cost of race detection (BIREN_RACECHECK / birenSetRaceCheck), measured in
 * one process: each repetition runs the same work with race detection off, then on, so both
 * see the same machine load; the table gives medians (min..max) and the ratio of medians.
 *
 *   build/bench/racecheck [--reps=N] [--quick]
 *
 * 1. launch-heavy loop: 20 000 launches of an empty kernel without arguments, then a stream
 *    synchronize (per launch, end to end);
 * 2. the same with BIREN_LAUNCH and one pointer argument into a 4 KiB allocation (the kernel's
 *    allocation is digested before and after each launch);
 * 3. vector add, 16M floats (three 64 MiB arrays), block 256, launch + synchronize.
 */
#define _GNU_SOURCE
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void k_empty(void **args) { (void)args; }
static void k_touch(void **args) {
  int *p = *(int **)args[0];
  (void)p;
}
static void k_vadd(void **args) {
  const float *a = *(const float **)args[0], *b = *(const float **)args[1];
  float *c = *(float **)args[2];
  unsigned n = *(unsigned *)args[3];
  unsigned i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  if (i < n) c[i] = a[i] + b[i];
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

enum { MAXR = 31 };
static birenStream_t s;
static int *small;
static float *da, *db, *dc;
static unsigned n_vadd = 16u << 20;
static long n_launch = 20000;

static double loop_empty(void) {
  dim3 one = birenDim3(1, 1, 1);
  double t0 = now_s();
  for (long i = 0; i < n_launch; i++) BIREN_CHECK(birenLaunchKernel(k_empty, one, one, NULL, 0, s));
  BIREN_CHECK(birenStreamSynchronize(s));
  return (now_s() - t0) / (double)n_launch;
}

static double loop_ptr(void) {
  dim3 one = birenDim3(1, 1, 1);
  double t0 = now_s();
  for (long i = 0; i < n_launch; i++) BIREN_CHECK(BIREN_LAUNCH(k_touch, one, one, 0, s, small));
  BIREN_CHECK(birenStreamSynchronize(s));
  return (now_s() - t0) / (double)n_launch;
}

static double vadd(void) {
  dim3 block = birenDim3(256, 1, 1), grid = birenDim3((n_vadd + 255) / 256, 1, 1);
  double t0 = now_s();
  BIREN_CHECK(BIREN_LAUNCH(k_vadd, grid, block, 0, s, da, db, dc, n_vadd));
  BIREN_CHECK(birenStreamSynchronize(s));
  return now_s() - t0;
}

static void row(const char *name, double (*f)(void), int reps, double scale, const char *unit) {
  double off[MAXR], on[MAXR];
  f(); /* warm-up */
  for (int r = 0; r < reps; r++) {
    BIREN_CHECK(birenSetRaceCheck(0));
    off[r] = f();
    BIREN_CHECK(birenSetRaceCheck(1));
    on[r] = f();
  }
  BIREN_CHECK(birenSetRaceCheck(0));
  double lo_off = off[0], hi_off = off[0], lo_on = on[0], hi_on = on[0];
  for (int r = 1; r < reps; r++) {
    if (off[r] < lo_off) lo_off = off[r];
    if (off[r] > hi_off) hi_off = off[r];
    if (on[r] < lo_on) lo_on = on[r];
    if (on[r] > hi_on) hi_on = on[r];
  }
  double mo = median(off, reps), mn = median(on, reps);
  printf("| %s | %.0f %s (%.0f..%.0f) | %.0f %s (%.0f..%.0f) | %.2fx |\n", name, mo * scale, unit, lo_off * scale,
         hi_off * scale, mn * scale, unit, lo_on * scale, hi_on * scale, mn / mo);
  fflush(stdout);
}

int main(int argc, char **argv) {
  int reps = 7;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--reps=", 7) == 0) reps = atoi(argv[i] + 7);
    else if (strcmp(argv[i], "--quick") == 0) {
      reps = 3;
      n_vadd = 1u << 20;
      n_launch = 2000;
    } else {
      fprintf(stderr, "usage: %s [--reps=N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1 || reps > MAXR) reps = 7;
  BIREN_CHECK(birenInit());
  BIREN_CHECK(birenStreamCreate(&s));
  BIREN_CHECK(birenMalloc((void **)&small, 4096));
  size_t bytes = (size_t)n_vadd * sizeof(float);
  BIREN_CHECK(birenMalloc((void **)&da, bytes));
  BIREN_CHECK(birenMalloc((void **)&db, bytes));
  BIREN_CHECK(birenMalloc((void **)&dc, bytes));
  BIREN_CHECK(birenMemset(da, 0, bytes));
  BIREN_CHECK(birenMemset(db, 0, bytes));
  BIREN_CHECK(birenMemset(dc, 0, bytes));
  printf("racecheck cost, %d repetitions, off and on alternating (median (min..max))\n\n", reps);
  printf("| Work | racecheck off | racecheck on | on / off |\n|---|---|---|---|\n");
  row("Launch-heavy loop, empty kernel, no arguments (per launch)", loop_empty, reps, 1e9, "ns");
  row("Launch-heavy loop, BIREN_LAUNCH with a pointer to 4 KiB (per launch)", loop_ptr, reps, 1e9, "ns");
  row("Vector add, 16M floats, block 256 (launch + sync)", vadd, reps, 1e3, "ms");
  return 0;
}
