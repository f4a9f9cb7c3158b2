/* Device queries and settings: birenDeviceGetAttribute, birenGetDeviceProperties(_v2) and the
 * old entry point's ABI, birenDriverGetVersion, birenSetDeviceFlags/birenGetDeviceFlags,
 * birenDeviceSetLimit/birenDeviceGetLimit (the stack size really sizes the simulated threads'
 * stacks: checked with a kernel that needs more than the default, in a child process). */
#define _GNU_SOURCE
#include "compat.h"
#include <stddef.h>
#include <sys/wait.h>

static int device_attributes_match_properties(void) {
  birenDeviceProp p;
  memset(&p, 0, sizeof p);
  OK(birenGetDeviceProperties(&p, 0)); /* the _v2 entry point, through the header's #define */
  struct { birenDeviceAttr a; int expect; } t[] = {
      {birenDevAttrMaxThreadsPerBlock, p.maxThreadsPerBlock},
      {birenDevAttrMaxBlockDimX, p.maxThreadsDim[0]},
      {birenDevAttrMaxBlockDimY, p.maxThreadsDim[1]},
      {birenDevAttrMaxBlockDimZ, p.maxThreadsDim[2]},
      {birenDevAttrMaxGridDimX, p.maxGridSize[0]},
      {birenDevAttrMaxGridDimY, p.maxGridSize[1]},
      {birenDevAttrMaxGridDimZ, p.maxGridSize[2]},
      {birenDevAttrMaxSharedMemoryPerBlock, (int)p.sharedMemPerBlock},
      {birenDevAttrWarpSize, p.warpSize},
      {birenDevAttrMultiProcessorCount, p.multiProcessorCount},
      {birenDevAttrComputeCapabilityMajor, p.major},
      {birenDevAttrComputeCapabilityMinor, p.minor},
      {birenDevAttrClockRate, p.clockRate},
      {birenDevAttrConcurrentKernels, p.concurrentKernels},
      {birenDevAttrAsyncEngineCount, p.asyncEngineCount},
      {birenDevAttrCanMapHostMemory, p.canMapHostMemory},
      {birenDevAttrUnifiedAddressing, p.unifiedAddressing},
      {birenDevAttrManagedMemory, p.managedMemory},
      {birenDevAttrCooperativeLaunch, p.cooperativeLaunch},
      {birenDevAttrL2CacheSize, p.l2CacheSize},
      {birenDevAttrMaxThreadsPerMultiProcessor, p.maxThreadsPerMultiProcessor},
      {birenDevAttrMaxSharedMemoryPerMultiprocessor, (int)p.sharedMemPerMultiprocessor},
      {birenDevAttrMaxSharedMemoryPerBlockOptin, (int)p.sharedMemPerBlockOptin},
      {birenDevAttrMaxBlocksPerMultiprocessor, p.maxBlocksPerMultiProcessor},
      {birenDevAttrStreamPrioritiesSupported, p.streamPrioritiesSupported},
      {birenDevAttrHostRegisterSupported, p.hostRegisterSupported},
      {birenDevAttrPciBusId, p.pciBusID},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    int v = -12345;
    OK(birenDeviceGetAttribute(&v, t[i].a, 0));
    if (v != t[i].expect) {
      fprintf(stderr, "    attribute %d: %d, properties say %d\n", (int)t[i].a, v, t[i].expect);
      return 1;
    }
  }
  return 0;
}

static int compute_capability_and_limits(void) {
  birenDeviceProp p;
  OK(birenGetDeviceProperties_v2(&p, 0));
  EXPECT(p.major == 6 && p.minor == 0);
  EXPECT(p.warpSize == 32);
  EXPECT(p.maxThreadsPerBlock == 1024);
  EXPECT(p.sharedMemPerBlock == 48 * 1024 && p.sharedMemPerBlockOptin == 48 * 1024);
  EXPECT(p.maxThreadsPerMultiProcessor == 2048 && p.maxBlocksPerMultiProcessor == 32);
  EXPECT(p.multiProcessorCount >= 1);
  EXPECT(strncmp(p.name, "BIREN", 5) == 0);
  for (int i = 0; i < 32; i++) EXPECT(p.reserved[i] == 0);
  int v = 0;
  OK(birenDeviceGetAttribute(&v, birenDevAttrTotalConstantMemory, 0));
  EXPECT(v == 65536);
  OK(birenDeviceGetAttribute(&v, birenDevAttrMaxPitch, 0));
  EXPECT((size_t)v == p.memPitch);
  return 0;
}

/* The old exported symbol fills the version-1.0 fields and nothing after them. */
#undef birenGetDeviceProperties
static int old_entry_point_writes_only_the_old_fields(void) {
  unsigned char buf[sizeof(birenDeviceProp)];
  memset(buf, 0xAB, sizeof buf);
  birenDeviceProp *p = (birenDeviceProp *)(void *)buf;
  OK(birenGetDeviceProperties(p, 0));
  EXPECT(p->maxThreadsPerBlock == 1024 && p->maxGridSize[1] == 65535 && p->streamPrioritiesSupported == 1);
  EXPECT(strncmp(p->name, "BIREN", 5) == 0);
  for (size_t i = offsetof(birenDeviceProp, warpSize); i < sizeof buf; i++) {
    if (buf[i] != 0xAB) {
      fprintf(stderr, "    byte %zu past the old struct was written\n", i);
      return 1;
    }
  }
  EXPECT(offsetof(birenDeviceProp, warpSize) == 316);
  return 0;
}

static int attribute_errors_write_nothing(void) {
  int v = 77;
  EXPECT_FAIL(birenDeviceGetAttribute(&v, (birenDeviceAttr)14, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenDeviceGetAttribute(&v, (birenDeviceAttr)0, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenDeviceGetAttribute(&v, (birenDeviceAttr)-3, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenDeviceGetAttribute(&v, (birenDeviceAttr)100000, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenDeviceGetAttribute(&v, birenDevAttrWarpSize, 1), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenDeviceGetAttribute(&v, birenDevAttrWarpSize, -1), BIREN_ERROR_INVALID_DEVICE);
  EXPECT(v == 77);
  EXPECT_FAIL(birenDeviceGetAttribute(NULL, birenDevAttrWarpSize, 0), BIREN_ERROR_INVALID_VALUE);
  birenDeviceProp p, sentinel;
  memset(&p, 0x5A, sizeof p);
  memcpy(&sentinel, &p, sizeof p);
  EXPECT_FAIL(birenGetDeviceProperties_v2(&p, 3), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenGetDeviceProperties_v2(NULL, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT(memcmp(&p, &sentinel, sizeof p) == 0);
  return 0;
}

static int failures_are_reported_by_the_validator(void) {
  int v;
  size_t s;
  capture_start();
  EXPECT_FAIL(birenDeviceGetAttribute(&v, (birenDeviceAttr)14, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenDeviceSetLimit(birenLimitDevRuntimeSyncDepth, 4), BIREN_ERROR_UNSUPPORTED_LIMIT);
  EXPECT_FAIL(birenDeviceGetLimit(NULL, birenLimitStackSize), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenSetDeviceFlags(0x3), BIREN_ERROR_INVALID_VALUE);
  (void)s;
  capture_stop();
  EXPECT(captured("birenDeviceGetAttribute"));
  EXPECT(captured("birenDeviceSetLimit"));
  EXPECT(captured("birenDeviceGetLimit"));
  EXPECT(captured("birenSetDeviceFlags"));
  return 0;
}

static int driver_version_is_the_runtime_version(void) {
  int d = 0, r = 0;
  OK(birenDriverGetVersion(&d));
  OK(birenRuntimeGetVersion(&r));
  EXPECT(d == r && d >= 1000);
  EXPECT_FAIL(birenDriverGetVersion(NULL), BIREN_ERROR_INVALID_VALUE);
  return 0;
}

static int device_flags_set_get_and_checked(void) {
  unsigned f = 99;
  OK(birenGetDeviceFlags(&f));
  EXPECT(f == birenDeviceScheduleAuto);
  OK(birenSetDeviceFlags(birenDeviceScheduleBlockingSync | birenDeviceMapHost));
  OK(birenGetDeviceFlags(&f));
  EXPECT(f == (birenDeviceScheduleBlockingSync | birenDeviceMapHost));
  EXPECT_FAIL(birenSetDeviceFlags(birenDeviceScheduleSpin | birenDeviceScheduleYield), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenSetDeviceFlags(0x20), BIREN_ERROR_INVALID_VALUE);
  OK(birenGetDeviceFlags(&f));
  EXPECT(f == (birenDeviceScheduleBlockingSync | birenDeviceMapHost));
  EXPECT_FAIL(birenGetDeviceFlags(NULL), BIREN_ERROR_INVALID_VALUE);
  /* Kept across a reset, like the primary context's flags. */
  OK(birenDeviceReset());
  OK(birenGetDeviceFlags(&f));
  EXPECT(f == (birenDeviceScheduleBlockingSync | birenDeviceMapHost));
  OK(birenSetDeviceFlags(0));
  /* A synchronize still works under every scheduling flag. */
  const unsigned sched[] = {birenDeviceScheduleSpin, birenDeviceScheduleYield, birenDeviceScheduleBlockingSync, 0};
  for (int i = 0; i < 4; i++) {
    OK(birenSetDeviceFlags(sched[i]));
    OK(birenDeviceSynchronize());
  }
  return 0;
}

static int limits_set_get_round_and_reset(void) {
  size_t v = 0;
  OK(birenDeviceGetLimit(&v, birenLimitStackSize));
  EXPECT(v == 256 * 1024);
  OK(birenDeviceSetLimit(birenLimitStackSize, 1));
  OK(birenDeviceGetLimit(&v, birenLimitStackSize));
  EXPECT(v == 16 * 1024);
  OK(birenDeviceSetLimit(birenLimitStackSize, 100000));
  OK(birenDeviceGetLimit(&v, birenLimitStackSize));
  EXPECT(v == 102400);
  EXPECT_FAIL(birenDeviceSetLimit(birenLimitStackSize, (size_t)17 << 20), BIREN_ERROR_INVALID_VALUE);
  OK(birenDeviceGetLimit(&v, birenLimitStackSize));
  EXPECT(v == 102400);
  OK(birenDeviceSetLimit(birenLimitPrintfFifoSize, 4 << 20));
  OK(birenDeviceGetLimit(&v, birenLimitPrintfFifoSize));
  EXPECT(v == (size_t)4 << 20);
  OK(birenDeviceSetLimit(birenLimitMallocHeapSize, 123456));
  OK(birenDeviceGetLimit(&v, birenLimitMallocHeapSize));
  EXPECT(v == 123456);
  OK(birenDeviceSetLimit(birenLimitMaxL2FetchGranularity, 128));
  EXPECT_FAIL(birenDeviceSetLimit(birenLimitMaxL2FetchGranularity, 129), BIREN_ERROR_INVALID_VALUE);
  const int unsupported[] = {birenLimitDevRuntimeSyncDepth, birenLimitDevRuntimePendingLaunchCount,
                             birenLimitPersistingL2CacheSize, 7, -1, 1000};
  for (int i = 0; i < 6; i++) {
    v = 42;
    EXPECT_FAIL(birenDeviceSetLimit((birenLimit)unsupported[i], 1), BIREN_ERROR_UNSUPPORTED_LIMIT);
    EXPECT_FAIL(birenDeviceGetLimit(&v, (birenLimit)unsupported[i]), BIREN_ERROR_UNSUPPORTED_LIMIT);
    EXPECT(v == 42);
  }
  EXPECT_FAIL(birenDeviceGetLimit(NULL, birenLimitStackSize), BIREN_ERROR_INVALID_VALUE);
  OK(birenDeviceReset());
  OK(birenDeviceGetLimit(&v, birenLimitStackSize));
  EXPECT(v == 256 * 1024);
  OK(birenDeviceGetLimit(&v, birenLimitPrintfFifoSize));
  EXPECT(v == 1 << 20);
  return 0;
}

/* Uses about 600 KiB of stack per thread: more than the default 256 KiB fiber stack. */
#define BIG_FRAME (600 * 1024)
static void deep_kernel(void **args) {
  int *out = *(int **)args[0];
  volatile char frame[BIG_FRAME];
  for (size_t i = 0; i < BIG_FRAME; i += 4096) frame[i] = (char)(i >> 12);
  frame[BIG_FRAME - 1] = 7;
  int sum = 0;
  for (size_t i = 0; i < BIG_FRAME; i += 4096) sum += frame[i];
  out[birenThreadIdx().x] = sum + frame[BIG_FRAME - 1];
}

static int run_deep_kernel(void) {
  int *d = NULL, h[4] = {0};
  BIREN_CHECK(birenMalloc((void **)&d, sizeof h));
  BIREN_CHECK(BIREN_LAUNCH(deep_kernel, birenDim3(1, 1, 1), birenDim3(4, 1, 1), 0, NULL, d));
  BIREN_CHECK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  int expect = 7;
  for (size_t i = 0; i < BIG_FRAME; i += 4096) expect += (char)(i >> 12);
  for (int i = 0; i < 4; i++)
    if (h[i] != expect) return 1;
  return 0;
}

static const char *self_path;

static int stack_size_limit_really_sizes_thread_stacks(void) {
  OK(birenDeviceSetLimit(birenLimitStackSize, 1 << 20));
  EXPECT(run_deep_kernel() == 0);
  OK(birenDeviceSetLimit(birenLimitStackSize, 256 * 1024));
  /* With the default the same kernel overflows its stack: its launch fails with
   * BIREN_ERROR_ILLEGAL_ADDRESS (the runtime catches the overflow) and the child's BIREN_CHECK
   * exits with EXIT_FAILURE. Run it in a child process. */
  pid_t pid = fork();
  if (pid == 0) {
    execl(self_path, self_path, "--deep-kernel-default-stack", (char *)NULL);
    _exit(99);
  }
  int status = 0;
  EXPECT(waitpid(pid, &status, 0) == pid);
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE);
  return 0;
}

/* birenLaunchCooperativeKernel exists, so the device says so (CUDA programs such as
 * reductionMultiBlockCG check before launching); there is no multi-device form. */
static int cooperative_launch_is_reported(void) {
  birenDeviceProp p;
  OK(birenGetDeviceProperties_v2(&p, 0));
  EXPECT(p.cooperativeLaunch == 1);
  int v = -1;
  OK(birenDeviceGetAttribute(&v, birenDevAttrCooperativeLaunch, 0));
  EXPECT(v == 1);
  OK(birenDeviceGetAttribute(&v, birenDevAttrCooperativeMultiDeviceLaunch, 0));
  EXPECT(v == 0);
  return 0;
}

static const test_case tests[] = {
    TEST(device_attributes_match_properties),
    TEST(compute_capability_and_limits),
    TEST(cooperative_launch_is_reported),
    TEST(old_entry_point_writes_only_the_old_fields),
    TEST(attribute_errors_write_nothing),
    TEST(failures_are_reported_by_the_validator),
    TEST(driver_version_is_the_runtime_version),
    TEST(device_flags_set_get_and_checked),
    TEST(limits_set_get_round_and_reset),
    TEST(stack_size_limit_really_sizes_thread_stacks),
};

int main(int argc, char **argv) {
  self_path = argv[0];
  setenv("BIREN_DEVICE_COUNT", "1", 1);
  unsetenv("BIREN_VALIDATOR");
  if (argc > 1 && strcmp(argv[1], "--deep-kernel-default-stack") == 0) {
    compat_init();
    return run_deep_kernel(); /* expected to fail with ILLEGAL_ADDRESS (a stack overflow) */
  }
  /* Works before birenInit. */
  int d = 0;
  if (birenDriverGetVersion(&d) != BIREN_SUCCESS || d < 1000) {
    fprintf(stderr, "birenDriverGetVersion failed before birenInit\n");
    return 1;
  }
  return RUN_TESTS("device", tests, compat_init, 30);
}
