/* Reliability, round two: what hostile programs found. Each test is the regression test of one
 * bug (or one documented decision); the comment above it names the item. */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>

static void before_each(void) {
  birenSetDeviceValidator(0);
  birenSetValidatorCallback(NULL, NULL);
  (void)birenSetDevice(0);
  birenError_t e = birenDeviceReset();
  if (e != BIREN_SUCCESS) fprintf(stderr, "    before_each: birenDeviceReset returned %s\n", birenGetErrorName(e));
  (void)birenGetLastError();
}

static int findings;
static char last_finding[1024];
static void count_finding(const char *msg, void *user) {
  (void)user;
  findings++;
  snprintf(last_finding, sizeof last_finding, "%s", msg);
}

/* ---- 1. freeing a large allocation must not zero its neighbour ------------------------------- */

static int large_free_keeps_neighbour_with(int validator) {
  enum { N = 1000 * 1000, M = 4096 };
  float *a, *b;
  static float hb[M], back[M];
  birenSetDeviceValidator(validator);
  findings = 0;
  birenSetValidatorCallback(count_finding, NULL);
  for (int i = 0; i < M; i++) hb[i] = (float)i + 0.5f;
  OK(birenMalloc((void **)&a, N * sizeof(float)));
  OK(birenMalloc((void **)&b, M * sizeof(float)));
  OK(birenMemcpy(b, hb, sizeof hb, birenMemcpyHostToDevice));
  OK(birenMemset(a, 1, N * sizeof(float)));
  OK(birenFree(a));
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(back, b, sizeof back, birenMemcpyDeviceToHost));
  for (int i = 0; i < M; i++) EXPECT(back[i] == hb[i]);
  OK(birenFree(b));
  OK(birenDeviceSynchronize());
  EXPECT(findings == 0);
  return 0;
}

static int large_free_keeps_neighbour(void) { return large_free_keeps_neighbour_with(0); }
static int large_free_keeps_neighbour_validator(void) { return large_free_keeps_neighbour_with(1); }

/* Many sizes, frees between live neighbours, every live byte compared. */
static int large_frees_between_live_neighbours(void) {
  enum { K = 12 };
  unsigned char *p[K];
  size_t sz[K];
  static unsigned char host[3 << 20];
  for (int i = 0; i < K; i++) {
    sz[i] = (size_t)(1 << 20) + (size_t)i * 4099 + 17; /* >= 1 MiB, unaligned */
    OK(birenMalloc((void **)&p[i], sz[i]));
    memset(host, 0x40 + i, sz[i]);
    OK(birenMemcpy(p[i], host, sz[i], birenMemcpyHostToDevice));
  }
  for (int i = 0; i < K; i += 2) OK(birenFree(p[i]));
  OK(birenDeviceSynchronize());
  for (int i = 1; i < K; i += 2) {
    OK(birenMemcpy(host, p[i], sz[i], birenMemcpyDeviceToHost));
    for (size_t j = 0; j < sz[i]; j++)
      if (host[j] != (unsigned char)(0x40 + i)) {
        fprintf(stderr, "    allocation %d byte %zu is %d\n", i, j, host[j]);
        return 1;
      }
    OK(birenFree(p[i]));
  }
  return 0;
}

/* ---- 2. birenLaunchKernelArgs checks argSizes ------------------------------------------------- */

static void nop_kernel(void **args) { (void)args; }

static int launch_args_refuses_hostile_sizes(void) {
  int v = 7;
  void *args[16];
  size_t sizes[16];
  for (int i = 0; i < 16; i++) {
    args[i] = &v;
    sizes[i] = SIZE_MAX;
  }
  dim3 one = birenDim3(1, 1, 1);
  EXPECT_CODE(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 16, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  sizes[0] = SIZE_MAX;
  EXPECT_CODE(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 1, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  sizes[0] = (size_t)1 << 40;
  EXPECT_CODE(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 1, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  sizes[0] = 0;
  EXPECT_CODE(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 1, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  sizes[0] = 4097;
  EXPECT_CODE(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 1, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  sizes[0] = 4096;
  static unsigned char big[4096];
  args[0] = big;
  OK(birenLaunchKernelArgs(nop_kernel, one, one, args, sizes, 1, 0, NULL));
  OK(birenDeviceSynchronize());
  return 0;
}

/* TESTS-END */

static const test_case tests[] = {
    TEST(large_free_keeps_neighbour),
    TEST(large_free_keeps_neighbour_validator),
    TEST(large_frees_between_live_neighbours),
    TEST(launch_args_refuses_hostile_sizes),
};

int main(void) {
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("test_reliability", tests, before_each, 60);
}
