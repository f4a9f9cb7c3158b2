/* Kernels and helpers shared by the stream, event and kernel tests: kernels that take time and
 * record when they ran, so a test can state facts about ordering and overlap. Times are now_s()
 * seconds (CLOCK_MONOTONIC), comparable across host and runtime threads. */
#ifndef BIREN_C_TEST_TIMED_KERNELS_H
#define BIREN_C_TEST_TIMED_KERNELS_H

#include "harness.h"

/* When a kernel ran. */
typedef struct interval {
  double start, end;
} interval;

/* a finished strictly before b started. */
static inline int before(interval a, interval b) { return a.end <= b.start; }

/* a and b ran at the same time for a while. */
static inline int overlap(interval a, interval b) { return a.start < b.end && b.start < a.end; }

/* args: (interval *iv, double ms). Records its start, busy-waits ms, records its end.
 * Launch it with one block of one thread. */
static inline void timed_spin(void **args) {
  interval *iv = *(interval **)args[0];
  double ms = *(double *)args[1];
  double t0 = now_s();
  spin_ms(ms);
  iv->start = t0;
  iv->end = now_s();
}

static inline birenError_t launch_timed_spin(interval *iv, double ms, birenStream_t stream) {
  return BIREN_LAUNCH(timed_spin, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, stream, iv, ms);
}

/* args: (int *p, int value). Stores value into *p (atomically: the host may be polling it). */
static inline void store_int(void **args) {
  int *p = *(int **)args[0];
  int v = *(int *)args[1];
  __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static inline birenError_t launch_store_int(int *p, int value, birenStream_t stream) {
  return BIREN_LAUNCH(store_int, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, stream, p, value);
}

/* args: (int *counter, double ms). Busy-waits ms, then increments *counter atomically. */
static inline void spin_then_count(void **args) {
  int *counter = *(int **)args[0];
  double ms = *(double *)args[1];
  spin_ms(ms);
  __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
}

static inline birenError_t launch_spin_then_count(int *counter, double ms, birenStream_t stream) {
  return BIREN_LAUNCH(spin_then_count, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, stream, counter, ms);
}

static inline int load_int(const int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }

static inline void sleep_ms(double ms) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000.0);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
  nanosleep(&ts, NULL);
}

/* Compute units of device 0 (0 if the query fails). */
static inline int compute_units(void) {
  birenDeviceProp prop;
  if (birenGetDeviceProperties(&prop, 0) != BIREN_SUCCESS) return 0;
  return prop.multiProcessorCount;
}

/* Tests of concurrency need two compute units; the default is one per host CPU, so on a
 * one-CPU host ask for two (before birenInit). An explicit BIREN_COMPUTE_UNITS is respected. */
static inline void want_two_compute_units(void) {
  if (getenv("BIREN_COMPUTE_UNITS") == NULL && sysconf(_SC_NPROCESSORS_ONLN) < 2) setenv("BIREN_COMPUTE_UNITS", "2", 1);
}

/* The harness's before_each: a clean device for every test (drops a sticky error, frees memory,
 * destroys streams and events left by the previous test). */
static inline void reset_device(void) {
  birenError_t e = birenDeviceReset();
  if (e != BIREN_SUCCESS) fprintf(stderr, "    before_each: birenDeviceReset returned %s\n", birenGetErrorName(e));
}

/* Skip marker for tests that need >= 2 compute units when the user forced fewer. */
#define NEED_TWO_COMPUTE_UNITS()                                                              \
  do {                                                                                        \
    if (compute_units() < 2) {                                                                \
      fprintf(stderr, "    skipped: needs >= 2 compute units (BIREN_COMPUTE_UNITS=%s)\n",     \
              getenv("BIREN_COMPUTE_UNITS") ? getenv("BIREN_COMPUTE_UNITS") : "unset");       \
      return 0;                                                                               \
    }                                                                                         \
  } while (0)

#endif
