/* The runtime's diagnostics on region-form kernels (c-tests/test_region.sh builds this file with
 * biren-cc, every kernel but grid_sum in loops, and with the plain compiler; both must pass):
 * the validator names a kernel that writes out of bounds or after a free, race detection
 * reports two kernels that write the same memory unordered, the watchdog ends an endless
 * region (BIREN_KERNEL_TIMEOUT_MS, set here), a cooperative launch runs a region-form kernel
 * (as fibers) beside one with birenGridSync. The script also runs it under BIREN_TRACE and
 * BIREN_RECORD / BIREN_REPLAY and checks the region-form kernels are named there. */
#define _GNU_SOURCE
#include "../harness.h"

static char captured[16384];

static void capture(const char *msg, void *user) {
  (void)user;
  size_t n = strlen(captured);
  snprintf(captured + n, sizeof captured - n, "%s\n", msg);
}

#define HAS(s) EXPECT(strstr(captured, (s)) != NULL)

/* Every thread writes its value after a barrier; thread 0 also one element past the end. */
BIREN_KERNEL(oob_after_barrier, (int *) x, (int) n) {
  BIREN_SHARED int s[64];
  s[threadIdx.x] = (int)threadIdx.x;
  birenSyncThreads();
  x[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
  if (threadIdx.x == 0) x[n] = 1;
}

/* x[i] = v for the block's threads, through shared memory. */
BIREN_KERNEL(fill_shared, (int *) x, (int) v) {
  BIREN_SHARED int s[64];
  s[threadIdx.x] = v;
  birenSyncThreads();
  x[blockIdx.x * blockDim.x + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

static volatile int forever = 1;

/* An endless region after a barrier. */
BIREN_KERNEL(endless_region, (int *) x) {
  BIREN_SHARED int s[64];
  s[threadIdx.x] = 1;
  birenSyncThreads();
  while (forever) x[0] = s[threadIdx.x];
}

/* The grid's sum in out[0]: each block's partial, a grid-wide barrier, block 0 adds them. */
BIREN_KERNEL(grid_sum, (const int *) in, (int *) partial, (int *) out) {
  BIREN_SHARED int s[64];
  s[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  birenSyncThreads();
  if (threadIdx.x == 0) {
    int sum = 0;
    for (unsigned k = 0; k < blockDim.x; k++) sum += s[k];
    partial[blockIdx.x] = sum;
  }
  birenGridSync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int sum = 0;
    for (unsigned b = 0; b < gridDim.x; b++) sum += partial[b];
    out[0] = sum;
  }
}

static void before_each(void) {
  birenSetDeviceValidator(0);
  birenSetRaceCheck(0);
  birenDeviceReset();
  (void)birenGetLastError();
  captured[0] = 0;
}

static int validator_names_an_out_of_bounds_write(void) {
  int *d;
  OK(birenSetDeviceValidator(1));
  OK(birenMalloc((void **)&d, 64 * sizeof(int)));
  OK(BIREN_LAUNCH(oob_after_barrier, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, NULL, d, 64));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_ILLEGAL_ADDRESS);
  HAS("kernel 'oob_after_barrier'");
  HAS("256-byte allocation");
  HAS("past its end");
  return 0;
}

static int validator_names_a_write_after_free(void) {
  int *d;
  OK(birenSetDeviceValidator(1));
  OK(birenMalloc((void **)&d, 256 * sizeof(int)));
  OK(birenFree(d));
  OK(BIREN_LAUNCH(fill_shared, birenDim3(2, 1, 1), birenDim3(64, 1, 1), 0, NULL, d, 5));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_ILLEGAL_ADDRESS);
  HAS("use after free");
  return 0;
}

static int racecheck_reports_two_unordered_kernels(void) {
  int *d, h[128];
  birenStream_t s1, s2;
  OK(birenSetRaceCheck(1));
  OK(birenStreamCreateWithFlags(&s1, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s2, birenStreamNonBlocking));
  OK(birenMalloc((void **)&d, sizeof h));
  OK(BIREN_LAUNCH(fill_shared, birenDim3(2, 1, 1), birenDim3(64, 1, 1), 0, s1, d, 1));
  OK(BIREN_LAUNCH(fill_shared, birenDim3(2, 1, 1), birenDim3(64, 1, 1), 0, s2, d, 2));
  OK(birenDeviceSynchronize());
  HAS("biren racecheck:");
  HAS("fill_shared");
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 128; i++) EXPECT(h[i] == 1 || h[i] == 2);
  OK(birenStreamDestroy(s1));
  OK(birenStreamDestroy(s2));
  OK(birenSetRaceCheck(0));
  return 0;
}

static int watchdog_ends_an_endless_region(void) {
  int *d;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(BIREN_LAUNCH(endless_region, birenDim3(2, 1, 1), birenDim3(64, 1, 1), 0, NULL, d));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_TIMEOUT);
  OK(birenDeviceReset());
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenFree(d));
  return 0;
}

static int a_region_kernel_runs(void) {
  int *d, h[256];
  OK(birenMalloc((void **)&d, sizeof h));
  OK(BIREN_LAUNCH(fill_shared, birenDim3(4, 1, 1), birenDim3(64, 1, 1), 0, NULL, d, 3));
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 256; i++) EXPECT(h[i] == 3);
  OK(birenFree(d));
  return 0;
}

static int cooperative_launch_of_region_and_grid_sync_kernels(void) {
  enum { G = 4, B = 64 };
  int h[G * B], r[G * B], *in, *out, *partial, sum = 0, got = 0, v = 7;
  for (int i = 0; i < G * B; i++) sum += h[i] = i % 17;
  OK(birenMalloc((void **)&in, sizeof h));
  OK(birenMalloc((void **)&out, sizeof h));
  OK(birenMalloc((void **)&partial, G * sizeof(int)));
  OK(birenMemcpy(in, h, sizeof h, birenMemcpyHostToDevice));
  void *fill_args[] = {&out, &v};
  OK(birenLaunchCooperativeKernel(fill_shared, birenDim3(G, 1, 1), birenDim3(B, 1, 1), fill_args, 0, NULL));
  OK(birenMemcpy(r, out, sizeof r, birenMemcpyDeviceToHost));
  for (int i = 0; i < G * B; i++) EXPECT(r[i] == 7);
  void *sum_args[] = {&in, &partial, &out};
  OK(birenLaunchCooperativeKernel(grid_sum, birenDim3(G, 1, 1), birenDim3(B, 1, 1), sum_args, 0, NULL));
  OK(birenMemcpy(&got, out, sizeof got, birenMemcpyDeviceToHost));
  EXPECT(got == sum);
  OK(birenFree(in));
  OK(birenFree(out));
  OK(birenFree(partial));
  return 0;
}

int main(int argc, char **argv) {
  /* "--quiet": the runs under trace and record/replay: only the kernels that end normally. */
  int quiet = argc > 1 && strcmp(argv[1], "--quiet") == 0;
  setenv("BIREN_KERNEL_TIMEOUT_MS", "300", 1);
  OK(birenInit());
  OK(birenSetValidatorCallback(capture, NULL));
  static const test_case all[] = {
      TEST(a_region_kernel_runs),
      TEST(validator_names_an_out_of_bounds_write),
      TEST(validator_names_a_write_after_free),
      TEST(racecheck_reports_two_unordered_kernels),
      TEST(watchdog_ends_an_endless_region),
      TEST(cooperative_launch_of_region_and_grid_sync_kernels),
  };
  static const test_case some[] = {
      TEST(a_region_kernel_runs),
      TEST(cooperative_launch_of_region_and_grid_sync_kernels),
  };
  if (quiet) return RUN_TESTS("region diagnostics (quiet)", some, before_each, 120);
  return RUN_TESTS("region diagnostics", all, before_each, 120);
}
