/* The kernel watchdog (BIREN_KERNEL_TIMEOUT_MS, set to 300 ms here before birenInit): a launch
 * running past it fails with the sticky BIREN_ERROR_LAUNCH_TIMEOUT, and a reset then returns.
 * Without it a kernel that never ends would hang every synchronize and birenDeviceReset. */
#define _GNU_SOURCE
#include "harness.h"

static void before_each(void) {
  birenError_t e = birenDeviceReset();
  if (e != BIREN_SUCCESS) fprintf(stderr, "    before_each: birenDeviceReset returned %s\n", birenGetErrorName(e));
  (void)birenGetLastError();
}

static volatile int forever = 1;

static void endless(void **args) {
  (void)args;
  while (forever) {
  }
}

static void endless_with_barriers(void **args) {
  (void)args;
  while (forever) birenSyncThreads();
}

static void endless_sleep(void **args) {
  (void)args;
  while (forever) usleep(1000);
}

static void short_kernel(void **args) { spin_ms(*(double *)args[0]); }

static int endless_kernel_times_out(void (*k)(void **), unsigned threads) {
  double t0 = now_s();
  OK(birenLaunchKernel(k, birenDim3(4, 1, 1), birenDim3(threads, 1, 1), NULL, 0, NULL));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_TIMEOUT);
  double t = now_s() - t0;
  EXPECT(t >= 0.25 && t < 20);
  /* sticky until reset */
  void *p;
  EXPECT_CODE(birenMalloc(&p, 16), BIREN_ERROR_LAUNCH_TIMEOUT);
  OK(birenDeviceReset());
  OK(birenMalloc(&p, 16));
  OK(birenFree(p));
  return 0;
}

static int endless_loop_times_out(void) { return endless_kernel_times_out(endless, 32); }
static int endless_barrier_loop_times_out(void) { return endless_kernel_times_out(endless_with_barriers, 64); }
static int endless_sleeping_kernel_times_out(void) { return endless_kernel_times_out(endless_sleep, 1); }

static int reset_returns_while_an_endless_kernel_runs(void) {
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenLaunchKernel(endless, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, s));
  spin_ms(20);
  double t0 = now_s();
  OK(birenDeviceReset());
  EXPECT(now_s() - t0 < 20);
  /* the device works again */
  double ms = 1;
  OK(BIREN_LAUNCH(short_kernel, birenDim3(2, 1, 1), birenDim3(1, 1, 1), 0, NULL, ms));
  OK(birenDeviceSynchronize());
  return 0;
}

static int kernels_under_the_timeout_succeed(void) {
  double ms = 50; /* a sixth of the timeout per block (both blocks may share one unit on a loaded machine) */
  OK(BIREN_LAUNCH(short_kernel, birenDim3(2, 1, 1), birenDim3(1, 1, 1), 0, NULL, ms));
  OK(birenDeviceSynchronize());
  /* many launches back to back, each short: the timeout is per launch */
  ms = 20;
  for (int i = 0; i < 30; i++) OK(BIREN_LAUNCH(short_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, ms));
  OK(birenDeviceSynchronize());
  return 0;
}

static const test_case tests[] = {
    TEST(kernels_under_the_timeout_succeed),
    TEST(endless_loop_times_out),
    TEST(endless_barrier_loop_times_out),
    TEST(endless_sleeping_kernel_times_out),
    TEST(reset_returns_while_an_endless_kernel_runs),
    TEST(kernels_under_the_timeout_succeed),
};

int main(void) {
  setenv("BIREN_KERNEL_TIMEOUT_MS", "300", 1);
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("test_watchdog", tests, before_each, 60);
}
