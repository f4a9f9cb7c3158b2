/* race.h -- shared by the race corpus (c-tests/race/): small kernels and helpers.
 *
 * Each corpus program says in its header comment:
 *   verdict: racy | race-free    what BIREN_RACECHECK=1 must say about it
 *   fuzz: yes | no               racy only: whether its result can differ with the order
 *                                (then some BIREN_SCHEDULE=fuzz:SEED among 1..20 must make it fail)
 * A program exits 0 when its result is the one its author meant, 1 when it is not (a stale
 * read, a lost write), and 2 when a call fails. Run by c-tests/test_racecheck.sh. */
#ifndef RACE_H
#define RACE_H
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 256 };

#define CHECK(call)                                                          \
  do {                                                                       \
    birenError_t e_ = (call);                                                \
    if (e_ != BIREN_SUCCESS) {                                               \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,   \
              birenGetErrorName(e_));                                        \
      exit(2);                                                               \
    }                                                                        \
  } while (0)

/* fill(int *p, int v): thread i of one block writes p[i] = v. */
static inline void fill(void **args) {
  int *p = *(int **)args[0];
  int v = *(int *)args[1];
  p[birenThreadIdx().x] = v;
}

/* add(int *dst, const int *src): dst[i] += src[i]. */
static inline void add(void **args) {
  int *dst = *(int **)args[0];
  const int *src = *(const int **)args[1];
  unsigned i = birenThreadIdx().x;
  dst[i] += src[i];
}

/* sum(const int *p, long *out): one thread adds up N ints. */
static inline void sum(void **args) {
  const int *p = *(const int **)args[0];
  long *out = *(long **)args[1];
  long s = 0;
  for (int i = 0; i < N; i++) s += p[i];
  *out = s;
}

#define ONE birenDim3(1, 1, 1)
#define ROW birenDim3(N, 1, 1)

/* Launch helpers (BIREN_LAUNCH copies the arguments, so race detection sees the pointers). */
static inline void launch_fill(int *p, int v, birenStream_t s) { CHECK(BIREN_LAUNCH(fill, ONE, ROW, 0, s, p, v)); }
static inline void launch_add(int *dst, const int *src, birenStream_t s) { CHECK(BIREN_LAUNCH(add, ONE, ROW, 0, s, dst, src)); }
static inline void launch_sum(const int *p, long *out, birenStream_t s) { CHECK(BIREN_LAUNCH(sum, ONE, ONE, 0, s, p, out)); }

/* birenInit, and the kernels' names (shown in race reports). */
static inline void setup(void) {
  CHECK(birenInit());
  size_t two[2] = {sizeof(void *), sizeof(void *)};
  size_t fill_args[2] = {sizeof(void *), sizeof(int)};
  CHECK(birenKernelRegister(fill, "fill", 2, fill_args));
  CHECK(birenKernelRegister(add, "add", 2, two));
  CHECK(birenKernelRegister(sum, "sum", 2, two));
}

/* Device buffer of N ints, zeroed (synchronously). */
static inline int *dev_ints(void) {
  int *p;
  CHECK(birenMalloc((void **)&p, N * sizeof(int)));
  CHECK(birenMemset(p, 0, N * sizeof(int)));
  return p;
}

static inline long *dev_long(void) {
  long *p;
  CHECK(birenMalloc((void **)&p, sizeof(long)));
  CHECK(birenMemset(p, 0, sizeof(long)));
  return p;
}

static inline long read_long(const long *d) {
  long v = -1;
  CHECK(birenMemcpy(&v, d, sizeof v, birenMemcpyDeviceToHost));
  return v;
}

static inline birenStream_t stream(int nonblocking) {
  birenStream_t s;
  CHECK(birenStreamCreateWithFlags(&s, nonblocking ? birenStreamNonBlocking : birenStreamDefault));
  return s;
}

static inline birenEvent_t event(void) {
  birenEvent_t e;
  CHECK(birenEventCreateWithFlags(&e, birenEventDisableTiming));
  return e;
}

/* Adds a kernel node running k(args) (one block of N threads) after `deps` to graph g. */
static inline birenGraphNode_t node_kernel(birenGraph_t g, const birenGraphNode_t *deps, size_t nd, birenKernel_t k, void **args) {
  birenGraphNode_t n;
  birenKernelNodeParams kp;
  memset(&kp, 0, sizeof kp);
  kp.func = k;
  kp.gridDim = ONE;
  kp.blockDim = ROW;
  kp.kernelParams = args;
  CHECK(birenGraphAddKernelNode(&n, g, deps, nd, &kp));
  return n;
}

/* Graph nodes running fill(p, v) and add(dst, src). */
static inline birenGraphNode_t node_fill(birenGraph_t g, const birenGraphNode_t *deps, size_t nd, int *p, int v) {
  void *args[2] = {&p, &v};
  return node_kernel(g, deps, nd, fill, args);
}

static inline birenGraphNode_t node_add(birenGraph_t g, const birenGraphNode_t *deps, size_t nd, int *dst, int *src) {
  void *args[2] = {&dst, &src};
  return node_kernel(g, deps, nd, add, args);
}

static inline birenGraphExec_t instantiate(birenGraph_t g) {
  birenGraphExec_t x;
  CHECK(birenGraphInstantiate(&x, g, 0));
  return x;
}

/* Exit status: 0 if `ok`, else 1 (with a line saying what was seen). */
static inline int verdict(int ok, const char *what) {
  if (!ok) fprintf(stderr, "WRONG RESULT: %s\n", what);
  return ok ? 0 : 1;
}

#endif
