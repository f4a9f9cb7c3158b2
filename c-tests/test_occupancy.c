/* Function attributes and the occupancy calculator: birenFuncGetAttributes,
 * birenFuncSetAttribute, birenFuncSetCacheConfig, birenOccupancyMaxActiveBlocksPerMultiprocessor
 * (+WithFlags), birenOccupancyMaxPotentialBlockSize (+VariableSMem); their answers agree with
 * what a launch accepts. */
#include "compat.h"

static void fill(void **args) {
  int *out = *(int **)args[0];
  unsigned n = *(unsigned *)args[1];
  unsigned i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  if (i < n) out[i] = (int)i;
}
static void other_kernel(void **args) { (void)args; }

static int func_attributes_defaults(void) {
  birenFuncAttributes a;
  memset(&a, 0x11, sizeof a);
  OK(birenFuncGetAttributes(&a, fill));
  EXPECT(a.maxThreadsPerBlock == 1024);
  EXPECT(a.maxDynamicSharedSizeBytes == 48 * 1024);
  EXPECT(a.preferredShmemCarveout == -1);
  EXPECT(a.ptxVersion == 60 && a.binaryVersion == 60);
  EXPECT(a.sharedSizeBytes == 0 && a.numRegs == 0);
  return 0;
}

static int func_errors_write_nothing(void) {
  birenFuncAttributes a, sentinel;
  memset(&a, 0x22, sizeof a);
  memcpy(&sentinel, &a, sizeof a);
  EXPECT_FAIL(birenFuncGetAttributes(&a, NULL), BIREN_ERROR_INVALID_DEVICE_FUNCTION);
  EXPECT_FAIL(birenFuncGetAttributes(NULL, fill), BIREN_ERROR_INVALID_VALUE);
  EXPECT(memcmp(&a, &sentinel, sizeof a) == 0);
  EXPECT_FAIL(birenFuncSetAttribute(NULL, birenFuncAttributeMaxDynamicSharedMemorySize, 0), BIREN_ERROR_INVALID_DEVICE_FUNCTION);
  EXPECT_FAIL(birenFuncSetAttribute(other_kernel, birenFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024 + 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenFuncSetAttribute(other_kernel, birenFuncAttributeMaxDynamicSharedMemorySize, -1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenFuncSetAttribute(other_kernel, birenFuncAttributePreferredSharedMemoryCarveout, 101), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenFuncSetAttribute(other_kernel, (birenFuncAttribute)7, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenFuncSetCacheConfig(other_kernel, (birenFuncCache)4), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenFuncSetCacheConfig(NULL, birenFuncCachePreferL1), BIREN_ERROR_INVALID_DEVICE_FUNCTION);
  OK(birenFuncSetCacheConfig(other_kernel, birenFuncCachePreferShared));
  OK(birenFuncGetAttributes(&a, other_kernel));
  EXPECT(a.maxDynamicSharedSizeBytes == 48 * 1024 && a.preferredShmemCarveout == -1);
  return 0;
}

static int max_dynamic_shared_bounds_launches(void) {
  int *d = NULL;
  unsigned n = 64;
  OK(birenMalloc((void **)&d, n * sizeof(int)));
  OK(birenFuncSetAttribute(fill, birenFuncAttributeMaxDynamicSharedMemorySize, 1024));
  OK(birenFuncSetAttribute(fill, birenFuncAttributePreferredSharedMemoryCarveout, 50));
  birenFuncAttributes a;
  OK(birenFuncGetAttributes(&a, fill));
  EXPECT(a.maxDynamicSharedSizeBytes == 1024 && a.preferredShmemCarveout == 50);
  int blocks = -1;
  OK(birenOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fill, 64, 2048));
  EXPECT(blocks == 0);
  EXPECT_FAIL(BIREN_LAUNCH(fill, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 2048, NULL, d, n), BIREN_ERROR_INVALID_CONFIGURATION);
  OK(BIREN_LAUNCH(fill, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 1024, NULL, d, n));
  OK(birenDeviceSynchronize());
  /* Another kernel is not affected. */
  OK(birenLaunchKernel(other_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 2048, NULL));
  OK(birenFuncSetAttribute(fill, birenFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024));
  OK(BIREN_LAUNCH(fill, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 2048, NULL, d, n));
  OK(birenDeviceSynchronize());
  OK(birenFree(d));
  return 0;
}

static int occupancy_model_values(void) {
  int b = -1;
  OK(birenOccupancyMaxActiveBlocksPerMultiprocessor(&b, other_kernel, 256, 0));
  EXPECT(b == 8);
  OK(birenOccupancyMaxActiveBlocksPerMultiprocessor(&b, other_kernel, 1024, 0));
  EXPECT(b == 2);
  OK(birenOccupancyMaxActiveBlocksPerMultiprocessor(&b, other_kernel, 32, 0));
  EXPECT(b == 32);
  OK(birenOccupancyMaxActiveBlocksPerMultiprocessor(&b, other_kernel, 128, 16 * 1024));
  EXPECT(b == 4);
  OK(birenOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&b, other_kernel, 128, 32 * 1024, birenOccupancyDisableCachingOverride));
  EXPECT(b == 2);
  OK(birenOccupancyMaxActiveBlocksPerMultiprocessor(&b, other_kernel, 1025, 0));
  EXPECT(b == 0);
  b = 55;
  EXPECT_FAIL(birenOccupancyMaxActiveBlocksPerMultiprocessor(&b, other_kernel, 0, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenOccupancyMaxActiveBlocksPerMultiprocessor(&b, other_kernel, -5, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenOccupancyMaxActiveBlocksPerMultiprocessor(&b, NULL, 64, 0), BIREN_ERROR_INVALID_DEVICE_FUNCTION);
  EXPECT_FAIL(birenOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&b, other_kernel, 64, 0, 2), BIREN_ERROR_INVALID_VALUE);
  EXPECT(b == 55);
  EXPECT_FAIL(birenOccupancyMaxActiveBlocksPerMultiprocessor(NULL, other_kernel, 64, 0), BIREN_ERROR_INVALID_VALUE);
  return 0;
}

/* Every configuration the calculator says fits can be launched, and every one it says cannot is
 * refused by the launch. */
static int occupancy_agrees_with_launches(void) {
  const int sizes[] = {1, 31, 32, 100, 256, 1024, 1025, 2048};
  const size_t smem[] = {0, 1000, 48 * 1024, 48 * 1024 + 1};
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++) {
      int b = -1;
      OK(birenOccupancyMaxActiveBlocksPerMultiprocessor(&b, other_kernel, sizes[i], smem[j]));
      birenError_t e = birenLaunchKernel(other_kernel, birenDim3(1, 1, 1), birenDim3((unsigned)sizes[i], 1, 1), NULL, smem[j], NULL);
      if ((b > 0) != (e == BIREN_SUCCESS)) {
        fprintf(stderr, "    block %d smem %zu: occupancy %d, launch %s\n", sizes[i], smem[j], b, birenGetErrorName(e));
        return 1;
      }
    }
  (void)birenGetLastError();
  OK(birenDeviceSynchronize());
  return 0;
}

static size_t smem_per_thread(int block) { return (size_t)block * 64; }

static int potential_block_size(void) {
  birenDeviceProp p;
  OK(birenGetDeviceProperties(&p, 0));
  int grid = -1, block = -1;
  OK(birenOccupancyMaxPotentialBlockSize(&grid, &block, fill, 0, 0));
  EXPECT(block == 1024); /* 2 x 1024 = 2048 threads: full; ties go to the larger block */
  EXPECT(grid == 2 * p.multiProcessorCount);
  OK(birenOccupancyMaxPotentialBlockSize(&grid, &block, other_kernel, 0, 100));
  EXPECT(block == 64 && grid == 32 * p.multiProcessorCount); /* 64 x 32 = 2048 beats 96 x 21, 100 x 16 */
  OK(birenOccupancyMaxPotentialBlockSize(&grid, &block, other_kernel, 32 * 1024, 0));
  EXPECT(block == 1024 && grid == 2 * p.multiProcessorCount);
  /* 64 bytes per thread: 1024 threads would need 64 KiB (over 48 KiB per block); 768 fit once
   * (768 threads); 512 fit twice (1024 threads), and nothing smaller beats that. */
  OK(birenOccupancyMaxPotentialBlockSizeVariableSMem(&grid, &block, other_kernel, smem_per_thread, 0));
  EXPECT(block == 512 && grid == 2 * p.multiProcessorCount);
  /* The chosen size launches. */
  OK(birenLaunchKernel(other_kernel, birenDim3((unsigned)grid, 1, 1), birenDim3((unsigned)block, 1, 1), NULL, smem_per_thread(block), NULL));
  OK(birenDeviceSynchronize());
  /* Nothing fits: both 0. */
  OK(birenOccupancyMaxPotentialBlockSize(&grid, &block, other_kernel, 48 * 1024 + 1, 0));
  EXPECT(grid == 0 && block == 0);
  grid = block = 7;
  EXPECT_FAIL(birenOccupancyMaxPotentialBlockSize(NULL, &block, fill, 0, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenOccupancyMaxPotentialBlockSize(&grid, NULL, fill, 0, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenOccupancyMaxPotentialBlockSize(&grid, &block, fill, 0, -1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenOccupancyMaxPotentialBlockSize(&grid, &block, NULL, 0, 0), BIREN_ERROR_INVALID_DEVICE_FUNCTION);
  EXPECT_FAIL(birenOccupancyMaxPotentialBlockSizeVariableSMem(&grid, &block, fill, NULL, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT(grid == 7 && block == 7);
  return 0;
}

static int failures_are_reported_by_the_validator(void) {
  int b;
  capture_start();
  EXPECT_FAIL(birenOccupancyMaxActiveBlocksPerMultiprocessor(&b, other_kernel, 0, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenFuncSetAttribute(other_kernel, (birenFuncAttribute)77, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenFuncGetAttributes(NULL, fill), BIREN_ERROR_INVALID_VALUE);
  capture_stop();
  EXPECT(captured("birenOccupancyMaxActiveBlocksPerMultiprocessor"));
  EXPECT(captured("birenFuncSetAttribute"));
  EXPECT(captured("birenFuncGetAttributes"));
  return 0;
}

static const test_case tests[] = {
    TEST(func_attributes_defaults),
    TEST(func_errors_write_nothing),
    TEST(max_dynamic_shared_bounds_launches),
    TEST(occupancy_model_values),
    TEST(occupancy_agrees_with_launches),
    TEST(potential_block_size),
    TEST(failures_are_reported_by_the_validator),
};

int main(void) {
  unsetenv("BIREN_VALIDATOR");
  return RUN_TESTS("occupancy", tests, compat_init, 30);
}
