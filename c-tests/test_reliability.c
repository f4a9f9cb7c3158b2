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

/* ---- 5. a handle of the wrong type is INVALID_HANDLE ----------------------------------------- */

static int cross_typed_handles_are_refused(void) {
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  EXPECT_CODE(birenEventDestroy((birenEvent_t)s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventRecord((birenEvent_t)s, NULL), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventQuery((birenEvent_t)s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamDestroy((birenStream_t)e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamSynchronize((birenStream_t)e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamWaitEvent((birenStream_t)e, (birenEvent_t)s), BIREN_ERROR_INVALID_HANDLE);
  /* both still work */
  OK(birenEventRecord(e, s));
  OK(birenStreamSynchronize(s));
  OK(birenEventQuery(e));
  OK(birenEventDestroy(e));
  OK(birenStreamDestroy(s));
  return 0;
}

/* ---- 6. every copy touching a known allocation is bounds-checked, whatever the kind --------- */

static int host_to_host_into_device_memory_is_bounds_checked(void) {
  unsigned char *a, *b;
  static unsigned char host[8192], back[4096];
  OK(birenMalloc((void **)&a, 4096));
  OK(birenMalloc((void **)&b, 4096));
  OK(birenMemset(b, 0x77, 4096));
  memset(host, 0x11, sizeof host);
  EXPECT_CODE(birenMemcpy(a, host, 8192, birenMemcpyHostToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpy(a + 4000, host, 200, birenMemcpyHostToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpy(host, a, 8192, birenMemcpyHostToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpyAsync(a, host, 8192, birenMemcpyHostToHost, NULL), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenMemcpy(back, b, sizeof back, birenMemcpyDeviceToHost));
  for (int i = 0; i < 4096; i++) EXPECT(back[i] == 0x77);
  /* within bounds, a HostToHost copy into device memory works */
  OK(birenMemcpy(a, host, 4096, birenMemcpyHostToHost));
  OK(birenFree(a));
  OK(birenFree(b));
  return 0;
}

static int pinned_host_buffer_overrun_is_refused(void) {
  unsigned char *pinned, *d;
  OK(birenMallocHost((void **)&pinned, 1024));
  OK(birenMalloc((void **)&d, 4096));
  EXPECT_CODE(birenMemcpy(d, pinned, 2048, birenMemcpyHostToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpy(pinned, d, 2048, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenMemcpy(pinned + 512, d, 1024, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenMemcpy(pinned, d, 1024, birenMemcpyDeviceToHost));
  OK(birenFreeHost(pinned));
  OK(birenFree(d));
  return 0;
}

/* ---- 11. creating and destroying streams is O(1) amortised ----------------------------------- */

static double create_destroy_batch(int n) {
  birenStream_t *s = malloc(sizeof *s * (size_t)n);
  double t0 = now_s();
  for (int i = 0; i < n; i++)
    if (birenStreamCreate(&s[i]) != BIREN_SUCCESS) return -1;
  for (int i = 0; i < n; i++)
    if (birenStreamDestroy(s[i]) != BIREN_SUCCESS) return -1;
  double t = now_s() - t0;
  free(s);
  return t;
}

static int stream_create_does_not_slow_with_live_streams(void) {
  enum { LIVE = 150000, BATCH = 5000 };
  birenStream_t *live = malloc(sizeof *live * LIVE);
  double empty = 1e9, full = 1e9;
  for (int r = 0; r < 3; r++) {
    double t = create_destroy_batch(BATCH);
    EXPECT(t >= 0);
    if (t < empty) empty = t;
  }
  for (int i = 0; i < LIVE; i++) OK(birenStreamCreate(&live[i]));
  for (int r = 0; r < 3; r++) {
    double t = create_destroy_batch(BATCH);
    EXPECT(t >= 0);
    if (t < full) full = t;
  }
  for (int i = 0; i < LIVE; i++) OK(birenStreamDestroy(live[i]));
  free(live);
  printf("    %d creates+destroys: %.2f ms with no live streams, %.2f ms with %d\n", BATCH, empty * 1e3, full * 1e3, LIVE);
  EXPECT(full < empty * 4 + 0.005); /* was ~100x slower */
  return 0;
}

/* TESTS-END */

static const test_case tests[] = {
    TEST(large_free_keeps_neighbour),
    TEST(large_free_keeps_neighbour_validator),
    TEST(large_frees_between_live_neighbours),
    TEST(launch_args_refuses_hostile_sizes),
    TEST(cross_typed_handles_are_refused),
    TEST(host_to_host_into_device_memory_is_bounds_checked),
    TEST(pinned_host_buffer_overrun_is_refused),
    TEST(stream_create_does_not_slow_with_live_streams),
};

int main(void) {
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("test_reliability", tests, before_each, 60);
}
