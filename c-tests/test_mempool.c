/* Stream-ordered allocation and memory pools: birenMallocAsync, birenFreeAsync,
 * birenMallocFromPoolAsync, birenDeviceGetDefaultMemPool/GetMemPool/SetMemPool,
 * birenMemPoolCreate/Destroy, birenMemPoolSetAttribute/GetAttribute, birenMemPoolTrimTo.
 * Runs with BIREN_DEVICE_MEMORY=1M and two devices. */
#include "compat.h"

static int fill_gate;
/* Fills once the host opens the gate (so the host can look at the state before it runs). */
static void slow_fill(void **args) {
  int *p = *(int **)args[0];
  int *done = *(int **)args[1];
  unsigned i = birenThreadIdx().x;
  double end = now_s() + 20.0;
  while (i == 0 && !__atomic_load_n(&fill_gate, __ATOMIC_ACQUIRE) && now_s() < end) {
  }
  p[i] = (int)i;
  if (i == 0) __atomic_store_n(done, 1, __ATOMIC_RELEASE);
}

static int free_async_returns_memory_when_the_stream_reaches_it(void) {
  birenStream_t s;
  OK(birenStreamCreate(&s));
  int *p = NULL;
  static int done;
  done = 0;
  int *dp = &done;
  size_t big = 768 * 1024;
  OK(birenMallocAsync((void **)&p, big, s));
  EXPECT(p != NULL);
  __atomic_store_n(&fill_gate, 0, __ATOMIC_RELEASE);
  OK(BIREN_LAUNCH(slow_fill, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, s, p, dp));
  OK(birenFreeAsync(p, s));
  size_t free_b = 0, total = 0;
  OK(birenMemGetInfo(&free_b, &total));
  EXPECT(free_b < total - big + 1); /* still held: the kernel before the free runs */
  EXPECT(__atomic_load_n(&done, __ATOMIC_ACQUIRE) == 0);
  /* A later use of the freed pointer is refused at once. */
  int h[4];
  EXPECT_FAIL(birenMemcpyAsync(h, p, sizeof h, birenMemcpyDeviceToHost, s), BIREN_ERROR_INVALID_DEVICE_POINTER);
  EXPECT_FAIL(birenFreeAsync(p, s), BIREN_ERROR_INVALID_DEVICE_POINTER);
  /* Allocating the same amount waits for the free to be reached, i.e. for the kernel. */
  __atomic_store_n(&fill_gate, 1, __ATOMIC_RELEASE);
  void *q = NULL;
  OK(birenMalloc(&q, big));
  EXPECT(__atomic_load_n(&done, __ATOMIC_ACQUIRE) == 1);
  OK(birenFree(q));
  OK(birenStreamSynchronize(s));
  OK(birenMemGetInfo(&free_b, &total));
  EXPECT(free_b == total);
  /* Size 0, NULL. */
  void *z = (void *)1;
  OK(birenMallocAsync(&z, 0, s));
  EXPECT(z == NULL);
  OK(birenFreeAsync(NULL, s));
  OK(birenStreamDestroy(s));
  return 0;
}

static int malloc_async_errors_write_nothing(void) {
  birenStream_t s;
  OK(birenStreamCreate(&s));
  void *p = (void *)0x77;
  EXPECT_FAIL(birenMallocAsync(NULL, 64, s), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocAsync(&p, (size_t)2 << 20, s), BIREN_ERROR_OUT_OF_MEMORY);
  EXPECT(p == (void *)0x77);
  int local;
  EXPECT_FAIL(birenFreeAsync(&local, s), BIREN_ERROR_INVALID_DEVICE_POINTER);
  void *d = NULL;
  OK(birenMallocAsync(&d, 512, s));
  EXPECT_FAIL(birenFreeAsync((char *)d + 8, s), BIREN_ERROR_INVALID_DEVICE_POINTER);
  OK(birenStreamDestroy(s));
  EXPECT_FAIL(birenMallocAsync(&p, 64, s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_FAIL(birenFreeAsync(d, s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT(p == (void *)0x77);
  OK(birenFreeAsync(d, NULL)); /* still live: the failed free changed nothing */
  OK(birenDeviceSynchronize());
  return 0;
}

static int pools_count_and_limit(void) {
  birenMemPool_t def = NULL, cur = NULL, again = NULL;
  OK(birenDeviceGetDefaultMemPool(&def, 0));
  OK(birenDeviceGetDefaultMemPool(&again, 0));
  OK(birenDeviceGetMemPool(&cur, 0));
  EXPECT(def != NULL && def == again && cur == def);
  birenMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = birenMemAllocationTypePinned;
  props.location.type = birenMemLocationTypeDevice;
  props.location.id = 0;
  props.maxSize = 4096;
  birenMemPool_t pool = NULL;
  OK(birenMemPoolCreate(&pool, &props));
  EXPECT(pool != NULL && pool != def);
  void *a = NULL, *b = NULL;
  OK(birenMallocFromPoolAsync(&a, 4000, pool, NULL));
  EXPECT_FAIL(birenMallocFromPoolAsync(&b, 256, pool, NULL), BIREN_ERROR_OUT_OF_MEMORY);
  EXPECT(b == NULL);
  uint64_t v = 0;
  OK(birenMemPoolGetAttribute(pool, birenMemPoolAttrUsedMemCurrent, &v));
  EXPECT(v == 4096);
  OK(birenMemPoolGetAttribute(pool, birenMemPoolAttrReservedMemCurrent, &v));
  EXPECT(v == 4096);
  OK(birenFreeAsync(a, NULL));
  OK(birenMemPoolGetAttribute(pool, birenMemPoolAttrUsedMemCurrent, &v));
  EXPECT(v == 0);
  OK(birenMemPoolGetAttribute(pool, birenMemPoolAttrUsedMemHigh, &v));
  EXPECT(v == 4096);
  v = 0;
  OK(birenMemPoolSetAttribute(pool, birenMemPoolAttrUsedMemHigh, &v));
  OK(birenMemPoolGetAttribute(pool, birenMemPoolAttrUsedMemHigh, &v));
  EXPECT(v == 0);
  /* The device's current pool: birenMallocAsync draws from it. */
  OK(birenDeviceSetMemPool(0, pool));
  OK(birenDeviceGetMemPool(&cur, 0));
  EXPECT(cur == pool);
  OK(birenMallocAsync(&a, 1000, NULL));
  OK(birenMemPoolGetAttribute(pool, birenMemPoolAttrUsedMemCurrent, &v));
  EXPECT(v == 1024);
  /* birenFree of pool memory is counted too. */
  OK(birenFree(a));
  OK(birenMemPoolGetAttribute(pool, birenMemPoolAttrUsedMemCurrent, &v));
  EXPECT(v == 0);
  OK(birenMemPoolTrimTo(pool, 0));
  OK(birenMemPoolDestroy(pool));
  OK(birenDeviceGetMemPool(&cur, 0));
  EXPECT(cur == def);
  EXPECT_FAIL(birenMemPoolDestroy(pool), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemPoolDestroy(def), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocFromPoolAsync(&b, 16, pool, NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemPoolTrimTo(pool, 0), BIREN_ERROR_INVALID_VALUE);
  OK(birenDeviceSynchronize());
  return 0;
}

static int pool_attributes_and_errors(void) {
  birenMemPool_t def = NULL, other = NULL;
  OK(birenDeviceGetDefaultMemPool(&def, 0));
  OK(birenDeviceGetDefaultMemPool(&other, 1));
  EXPECT(other != def);
  uint64_t thr = 1 << 20, v = 0;
  OK(birenMemPoolSetAttribute(def, birenMemPoolAttrReleaseThreshold, &thr));
  OK(birenMemPoolGetAttribute(def, birenMemPoolAttrReleaseThreshold, &v));
  EXPECT(v == thr);
  int flag = 0, got = 7;
  OK(birenMemPoolSetAttribute(def, birenMemPoolReuseAllowOpportunistic, &flag));
  OK(birenMemPoolGetAttribute(def, birenMemPoolReuseAllowOpportunistic, &got));
  EXPECT(got == 0);
  flag = 2;
  EXPECT_FAIL(birenMemPoolSetAttribute(def, birenMemPoolReuseAllowOpportunistic, &flag), BIREN_ERROR_INVALID_VALUE);
  v = 5;
  EXPECT_FAIL(birenMemPoolSetAttribute(def, birenMemPoolAttrUsedMemHigh, &v), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemPoolSetAttribute(def, birenMemPoolAttrUsedMemCurrent, &v), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemPoolSetAttribute(def, (birenMemPoolAttr)9, &v), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemPoolSetAttribute(def, birenMemPoolAttrReleaseThreshold, NULL), BIREN_ERROR_INVALID_VALUE);
  v = 99;
  EXPECT_FAIL(birenMemPoolGetAttribute(def, (birenMemPoolAttr)0, &v), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemPoolGetAttribute(NULL, birenMemPoolAttrUsedMemCurrent, &v), BIREN_ERROR_INVALID_VALUE);
  EXPECT(v == 99);
  EXPECT_FAIL(birenDeviceSetMemPool(0, other), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenDeviceSetMemPool(2, def), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenDeviceGetDefaultMemPool(&other, 5), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenDeviceGetDefaultMemPool(NULL, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenDeviceGetMemPool(NULL, 0), BIREN_ERROR_INVALID_VALUE);
  birenMemPoolProps props;
  memset(&props, 0, sizeof props);
  birenMemPool_t p = (birenMemPool_t)0x1;
  EXPECT_FAIL(birenMemPoolCreate(&p, &props), BIREN_ERROR_INVALID_VALUE);
  props.allocType = birenMemAllocationTypePinned;
  props.location.type = birenMemLocationTypeDevice;
  props.location.id = 9;
  EXPECT_FAIL(birenMemPoolCreate(&p, &props), BIREN_ERROR_INVALID_DEVICE);
  props.location.id = 1;
  props.handleTypes = 1;
  EXPECT_FAIL(birenMemPoolCreate(&p, &props), BIREN_ERROR_NOT_SUPPORTED);
  EXPECT_FAIL(birenMemPoolCreate(&p, NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemPoolCreate(NULL, &props), BIREN_ERROR_INVALID_VALUE);
  EXPECT(p == (birenMemPool_t)0x1);
  return 0;
}

static int use_after_stream_ordered_free_is_named(void) {
  void *p = NULL;
  OK(birenMallocAsync(&p, 256, NULL));
  OK(birenFreeAsync(p, NULL));
  capture_start();
  EXPECT_FAIL(birenMemset(p, 0, 16), BIREN_ERROR_INVALID_DEVICE_POINTER);
  capture_stop();
  EXPECT(captured("birenFreeAsync") && captured("use after the free"));
  OK(birenDeviceSynchronize());
  return 0;
}

static int reset_clears_pool_usage(void) {
  birenMemPool_t def = NULL;
  OK(birenDeviceGetDefaultMemPool(&def, 0));
  void *p = NULL;
  OK(birenMallocAsync(&p, 1000, NULL));
  uint64_t v = 0;
  OK(birenMemPoolGetAttribute(def, birenMemPoolAttrUsedMemCurrent, &v));
  EXPECT(v == 1024);
  OK(birenDeviceReset());
  OK(birenMemPoolGetAttribute(def, birenMemPoolAttrUsedMemCurrent, &v));
  EXPECT(v == 0);
  size_t free_b, total;
  OK(birenMemGetInfo(&free_b, &total));
  EXPECT(free_b == total);
  return 0;
}

/* As CUDA's: a pool keeps the memory freed to it up to its release threshold at each
 * synchronize (held: the device counts it as used), draws on it for its next allocations, and
 * gives it back to birenMemPoolTrimTo; with threshold 0 (the default) it gives it all back. */
static uint64_t attr64(birenMemPool_t pool, birenMemPoolAttr a) {
  uint64_t v = 12345;
  if (birenMemPoolGetAttribute(pool, a, &v) != BIREN_SUCCESS) return 12345;
  return v;
}

static int release_threshold_keeps_freed_memory(void) {
  birenMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = birenMemAllocationTypePinned;
  props.location.type = birenMemLocationTypeDevice;
  props.location.id = 0;
  birenMemPool_t pool = NULL;
  birenStream_t s;
  void *a = NULL;
  size_t free0, free1, total;
  uint64_t thr = UINT64_MAX;
  OK(birenMemPoolCreate(&pool, &props));
  OK(birenStreamCreate(&s));
  OK(birenDeviceSynchronize());
  OK(birenMemGetInfo(&free0, &total));
  OK(birenMemPoolSetAttribute(pool, birenMemPoolAttrReleaseThreshold, &thr));
  OK(birenMallocFromPoolAsync(&a, 64 * 1024, pool, s));
  OK(birenFreeAsync(a, s));
  OK(birenStreamSynchronize(s));
  EXPECT(attr64(pool, birenMemPoolAttrUsedMemCurrent) == 0);
  EXPECT(attr64(pool, birenMemPoolAttrReservedMemCurrent) == 64 * 1024);
  EXPECT(attr64(pool, birenMemPoolAttrReservedMemHigh) == 64 * 1024);
  EXPECT(attr64(pool, birenMemPoolAttrUsedMemHigh) == 64 * 1024);
  OK(birenMemGetInfo(&free1, &total));
  EXPECT(free1 == free0 - 64 * 1024);
  /* The next allocation draws on what is kept: nothing more is reserved. */
  OK(birenMallocFromPoolAsync(&a, 32 * 1024, pool, s));
  EXPECT(attr64(pool, birenMemPoolAttrUsedMemCurrent) == 32 * 1024);
  EXPECT(attr64(pool, birenMemPoolAttrReservedMemCurrent) == 64 * 1024);
  OK(birenFreeAsync(a, s));
  OK(birenDeviceSynchronize());
  EXPECT(attr64(pool, birenMemPoolAttrReservedMemCurrent) == 64 * 1024);
  OK(birenMemPoolTrimTo(pool, 4096));
  EXPECT(attr64(pool, birenMemPoolAttrReservedMemCurrent) == 4096);
  OK(birenMemPoolTrimTo(pool, 0));
  EXPECT(attr64(pool, birenMemPoolAttrReservedMemCurrent) == 0);
  OK(birenMemGetInfo(&free1, &total));
  EXPECT(free1 == free0);
  /* Threshold 0: kept until the next synchronize, then given back. */
  thr = 0;
  OK(birenMemPoolSetAttribute(pool, birenMemPoolAttrReleaseThreshold, &thr));
  OK(birenMallocFromPoolAsync(&a, 64 * 1024, pool, s));
  OK(birenFreeAsync(a, s));
  EXPECT(attr64(pool, birenMemPoolAttrReservedMemCurrent) == 64 * 1024);
  OK(birenStreamSynchronize(s));
  EXPECT(attr64(pool, birenMemPoolAttrReservedMemCurrent) == 0);
  /* Memory kept by a pool does not make another allocation fail: it is taken back. */
  thr = UINT64_MAX;
  OK(birenMemPoolSetAttribute(pool, birenMemPoolAttrReleaseThreshold, &thr));
  OK(birenMallocFromPoolAsync(&a, 512 * 1024, pool, s));
  OK(birenFreeAsync(a, s));
  OK(birenStreamSynchronize(s));
  EXPECT(attr64(pool, birenMemPoolAttrReservedMemCurrent) == 512 * 1024);
  OK(birenMalloc(&a, free0 - 4096));
  EXPECT(attr64(pool, birenMemPoolAttrReservedMemCurrent) == 0);
  OK(birenFree(a));
  OK(birenStreamDestroy(s));
  OK(birenMemPoolDestroy(pool));
  OK(birenMemGetInfo(&free1, &total));
  EXPECT(free1 == free0);
  return 0;
}

static int pool_access(void) {
  birenMemPool_t p0 = NULL;
  OK(birenDeviceGetDefaultMemPool(&p0, 0));
  birenMemLocation loc;
  loc.type = birenMemLocationTypeDevice;
  loc.id = 1;
  int f = -1;
  OK(birenMemPoolGetAccess(&f, p0, &loc));
  EXPECT(f == birenMemAccessFlagsProtNone);
  birenMemAccessDesc d[2];
  d[0].location = loc;
  d[0].flags = birenMemAccessFlagsProtReadWrite;
  d[1].location.type = birenMemLocationTypeDevice;
  d[1].location.id = 0;
  d[1].flags = birenMemAccessFlagsProtReadWrite;
  OK(birenMemPoolSetAccess(p0, d, 2));
  OK(birenMemPoolGetAccess(&f, p0, &loc));
  EXPECT(f == birenMemAccessFlagsProtReadWrite);
  loc.id = 0;
  OK(birenMemPoolGetAccess(&f, p0, &loc));
  EXPECT(f == birenMemAccessFlagsProtReadWrite);
  /* Errors: checked as a whole before any is applied. */
  d[0].flags = birenMemAccessFlagsProtRead;
  d[1].flags = birenMemAccessFlagsProtNone; /* the owner cannot lose access */
  EXPECT_FAIL(birenMemPoolSetAccess(p0, d, 2), BIREN_ERROR_INVALID_VALUE);
  loc.id = 1;
  OK(birenMemPoolGetAccess(&f, p0, &loc));
  EXPECT(f == birenMemAccessFlagsProtReadWrite);
  d[0].flags = 2;
  EXPECT_FAIL(birenMemPoolSetAccess(p0, d, 1), BIREN_ERROR_INVALID_VALUE);
  d[0].flags = 1;
  d[0].location.id = 4;
  EXPECT_FAIL(birenMemPoolSetAccess(p0, d, 1), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenMemPoolSetAccess(p0, NULL, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemPoolSetAccess(NULL, d, 1), BIREN_ERROR_INVALID_VALUE);
  loc.type = 0;
  f = 9;
  EXPECT_FAIL(birenMemPoolGetAccess(&f, p0, &loc), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemPoolGetAccess(NULL, p0, &loc), BIREN_ERROR_INVALID_VALUE);
  EXPECT(f == 9);
  return 0;
}

static const test_case tests[] = {
    TEST(pool_access),
    TEST(free_async_returns_memory_when_the_stream_reaches_it),
    TEST(malloc_async_errors_write_nothing),
    TEST(pools_count_and_limit),
    TEST(pool_attributes_and_errors),
    TEST(use_after_stream_ordered_free_is_named),
    TEST(reset_clears_pool_usage),
    TEST(release_threshold_keeps_freed_memory),
};

int main(void) {
  unsetenv("BIREN_VALIDATOR");
  setenv("BIREN_DEVICE_MEMORY", "1M", 1);
  setenv("BIREN_DEVICE_COUNT", "2", 1);
  return RUN_TESTS("mempool", tests, compat_init, 30);
}
