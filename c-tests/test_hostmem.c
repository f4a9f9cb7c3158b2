/* Host memory: birenHostAlloc and its flags, birenHostGetDevicePointer, birenHostGetFlags,
 * birenHostRegister/birenHostUnregister; copies that overrun a page-locked or registered host
 * buffer are refused before a byte moves. */
#include "compat.h"

static void add_one(void **args) {
  int *p = *(int **)args[0];
  p[birenThreadIdx().x] += 1;
}

static int host_alloc_flags_and_mapped_pointer(void) {
  int *h = NULL;
  OK(birenHostAlloc((void **)&h, 64 * sizeof(int), birenHostAllocMapped | birenHostAllocPortable));
  EXPECT(h != NULL);
  unsigned f = 0;
  OK(birenHostGetFlags(&f, h));
  EXPECT(f == (birenHostAllocMapped | birenHostAllocPortable));
  OK(birenHostGetFlags(&f, h + 10)); /* anywhere inside */
  EXPECT(f == (birenHostAllocMapped | birenHostAllocPortable));
  for (int i = 0; i < 64; i++) h[i] = i;
  int *d = NULL;
  OK(birenHostGetDevicePointer((void **)&d, h, 0));
  EXPECT(d == h);
  OK(BIREN_LAUNCH(add_one, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, NULL, d));
  OK(birenDeviceSynchronize());
  for (int i = 0; i < 64; i++) EXPECT(h[i] == i + 1);
  birenPointerAttributes a;
  OK(birenPointerGetAttributes(&a, h + 3));
  EXPECT(a.type == birenMemoryTypeHost && a.basePointer == h && a.size == 64 * sizeof(int));
  OK(birenFreeHost(h));
  void *z = (void *)1;
  OK(birenHostAlloc(&z, 0, 0));
  EXPECT(z == NULL);
  /* birenMallocHost memory: flags 0. */
  void *m = NULL;
  OK(birenMallocHost(&m, 32));
  OK(birenHostGetFlags(&f, m));
  EXPECT(f == 0);
  OK(birenFreeHost(m));
  return 0;
}

static int host_alloc_errors_write_nothing(void) {
  void *p = (void *)0x1234;
  EXPECT_FAIL(birenHostAlloc(&p, 64, 8), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenHostAlloc(NULL, 64, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT(p == (void *)0x1234);
  int local[4];
  unsigned f = 77;
  EXPECT_FAIL(birenHostGetFlags(&f, local), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenHostGetFlags(&f, NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT(f == 77);
  void *h = NULL;
  OK(birenHostAlloc(&h, 64, birenHostAllocMapped));
  EXPECT_FAIL(birenHostGetFlags(NULL, h), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenHostGetDevicePointer(&p, h, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenHostGetDevicePointer(&p, local, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenHostGetDevicePointer(NULL, h, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT(p == (void *)0x1234);
  OK(birenFreeHost(h));
  EXPECT_FAIL(birenHostGetFlags(&f, h), BIREN_ERROR_INVALID_VALUE); /* freed */
  return 0;
}

static int pinned_overrun_is_refused(void) {
  unsigned char *h = NULL, *d = NULL;
  OK(birenHostAlloc((void **)&h, 100, 0));
  OK(birenMalloc((void **)&d, 256));
  memset(h, 0x11, 100);
  OK(birenMemset(d, 0x22, 256));
  EXPECT_FAIL(birenMemcpy(d, h, 101, birenMemcpyHostToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpy(d, h + 50, 51, birenMemcpyDefault), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpyAsync(d, h, 200, birenMemcpyHostToDevice, NULL), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpy(h + 1, d, 100, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenDeviceSynchronize());
  unsigned char back[256];
  OK(birenMemcpy(back, d, 256, birenMemcpyDeviceToHost));
  for (int i = 0; i < 256; i++) EXPECT(back[i] == 0x22);
  for (int i = 0; i < 100; i++) EXPECT(h[i] == 0x11);
  OK(birenMemcpy(d, h, 100, birenMemcpyHostToDevice)); /* exactly to the end: fine */
  OK(birenMemcpy(h + 50, d, 50, birenMemcpyDeviceToHost));
  OK(birenFree(d));
  OK(birenFreeHost(h));
  return 0;
}

static int registered_ranges_are_known_and_bounded(void) {
  unsigned char *buf = malloc(8192), *d = NULL;
  EXPECT(buf != NULL);
  memset(buf, 0x33, 8192);
  OK(birenMalloc((void **)&d, 8192));
  OK(birenMemset(d, 0x44, 8192));
  /* Before registration: an ordinary host buffer, copies are not bounded by it. */
  birenPointerAttributes a;
  OK(birenPointerGetAttributes(&a, buf));
  EXPECT(a.type == birenMemoryTypeUnregistered);
  OK(birenHostRegister(buf, 4096, birenHostRegisterMapped | birenHostRegisterReadOnly));
  OK(birenPointerGetAttributes(&a, buf + 4095));
  EXPECT(a.type == birenMemoryTypeHost && a.basePointer == buf && a.size == 4096);
  OK(birenPointerGetAttributes(&a, buf + 4096));
  EXPECT(a.type == birenMemoryTypeUnregistered);
  unsigned f = 0;
  OK(birenHostGetFlags(&f, buf + 100));
  EXPECT(f == (birenHostRegisterMapped | birenHostRegisterReadOnly));
  void *dp = NULL;
  OK(birenHostGetDevicePointer(&dp, buf + 8, 0));
  EXPECT(dp == buf + 8);
  /* A copy running past the registered range: refused, nothing written either side. */
  EXPECT_FAIL(birenMemcpy(d, buf + 4000, 200, birenMemcpyHostToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpy(buf + 4000, d, 200, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpyAsync(buf, d, 4097, birenMemcpyDefault, NULL), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenDeviceSynchronize());
  for (int i = 0; i < 8192; i++) EXPECT(buf[i] == 0x33);
  unsigned char back[8192];
  OK(birenMemcpy(back, d, 8192, birenMemcpyDeviceToHost));
  for (int i = 0; i < 8192; i++) EXPECT(back[i] == 0x44);
  OK(birenMemcpy(d, buf, 4096, birenMemcpyHostToDevice));
  /* Overlaps are refused; a neighbouring range is fine. */
  EXPECT_FAIL(birenHostRegister(buf + 4095, 10, 0), BIREN_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_FAIL(birenHostRegister(buf + 100, 10, 0), BIREN_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  OK(birenHostRegister(buf + 4096, 4096, 0));
  /* Unregister: only at a range's start; freeing it with birenFreeHost is refused. */
  EXPECT_FAIL(birenHostUnregister(buf + 1), BIREN_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_FAIL(birenFreeHost(buf), BIREN_ERROR_INVALID_VALUE);
  OK(birenHostUnregister(buf));
  EXPECT_FAIL(birenHostUnregister(buf), BIREN_ERROR_HOST_MEMORY_NOT_REGISTERED);
  OK(birenHostUnregister(buf + 4096));
  /* Unknown again: a copy across the old boundary is the program's business. */
  OK(birenMemcpy(d, buf + 4000, 200, birenMemcpyHostToDevice));
  OK(birenFree(d));
  free(buf);
  return 0;
}

static int register_errors(void) {
  unsigned char buf[256];
  EXPECT_FAIL(birenHostRegister(NULL, 16, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenHostRegister(buf, 0, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenHostRegister(buf, 16, 0x10), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenHostRegister((void *)(~(uintptr_t)0 - 8), 16, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenHostRegister(buf, 16, birenHostRegisterIoMemory), BIREN_ERROR_NOT_SUPPORTED);
  birenPointerAttributes a;
  OK(birenPointerGetAttributes(&a, buf));
  EXPECT(a.type == birenMemoryTypeUnregistered); /* nothing was registered */
  EXPECT_FAIL(birenHostUnregister(NULL), BIREN_ERROR_INVALID_VALUE);
  void *h = NULL;
  OK(birenHostAlloc(&h, 64, 0));
  EXPECT_FAIL(birenHostUnregister(h), BIREN_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_FAIL(birenHostRegister(h, 16, 0), BIREN_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  OK(birenFreeHost(h));
  return 0;
}

static int failures_are_reported_by_the_validator(void) {
  unsigned char *h = NULL, *d = NULL;
  OK(birenHostAlloc((void **)&h, 64, 0));
  OK(birenMalloc((void **)&d, 256));
  capture_start();
  EXPECT_FAIL(birenMemcpy(d, h, 65, birenMemcpyHostToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenHostUnregister(h), BIREN_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_FAIL(birenHostAlloc((void **)&h, 64, 99), BIREN_ERROR_INVALID_VALUE);
  capture_stop();
  EXPECT(captured("page-locked or registered host buffer"));
  EXPECT(captured("birenHostUnregister"));
  EXPECT(captured("birenHostAlloc"));
  OK(birenFree(d));
  OK(birenFreeHost(h));
  return 0;
}

static const test_case tests[] = {
    TEST(host_alloc_flags_and_mapped_pointer),
    TEST(host_alloc_errors_write_nothing),
    TEST(pinned_overrun_is_refused),
    TEST(registered_ranges_are_known_and_bounded),
    TEST(register_errors),
    TEST(failures_are_reported_by_the_validator),
};

int main(void) {
  unsetenv("BIREN_VALIDATOR");
  return RUN_TESTS("hostmem", tests, compat_init, 30);
}
