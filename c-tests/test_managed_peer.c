/* Managed memory (birenMallocManaged, birenMemPrefetchAsync, birenMemAdvise,
 * birenStreamAttachMemAsync, birenPointerGetAttributes) and several devices
 * (birenDeviceCanAccessPeer, birenDeviceEnablePeerAccess/Disable, birenDeviceGetP2PAttribute,
 * birenMemcpyPeer(+Async), an event of one device waited for by a stream of another). Two
 * devices. */
#include "compat.h"

static void triple(void **args) {
  int *p = *(int **)args[0];
  unsigned i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  p[i] *= 3;
}

static int managed_memory_is_shared_by_host_and_kernels(void) {
  int *m = NULL;
  OK(birenMallocManaged((void **)&m, 1024 * sizeof(int), birenMemAttachGlobal));
  for (int i = 0; i < 1024; i++) m[i] = i; /* the host writes it directly */
  OK(BIREN_LAUNCH(triple, birenDim3(4, 1, 1), birenDim3(256, 1, 1), 0, NULL, m));
  OK(birenDeviceSynchronize());
  for (int i = 0; i < 1024; i++) EXPECT(m[i] == 3 * i);
  birenPointerAttributes a;
  OK(birenPointerGetAttributes(&a, m + 10));
  EXPECT(a.type == birenMemoryTypeManaged && a.device == 0 && a.devicePointer == m + 10 && a.hostPointer == m + 10);
  EXPECT(a.basePointer == m && a.size == 1024 * sizeof(int));
  /* A kernel of the other device uses it too. */
  OK(birenSetDevice(1));
  OK(BIREN_LAUNCH(triple, birenDim3(4, 1, 1), birenDim3(256, 1, 1), 0, NULL, m));
  OK(birenDeviceSynchronize());
  OK(birenSetDevice(0));
  EXPECT(m[5] == 45);
  /* Copies treat it as device memory. */
  int h[4];
  OK(birenMemcpy(h, m, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h[3] == 27);
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenStreamAttachMemAsync(s, m, 0, birenMemAttachSingle));
  OK(birenMemPrefetchAsync(m, 1024 * sizeof(int), 0, s));
  OK(birenMemPrefetchAsync(m + 512, 512 * sizeof(int), birenCpuDeviceId, s));
  OK(birenMemAdvise(m, 4096, birenMemAdviseSetReadMostly, 0));
  OK(birenMemAdvise(m, 4096, birenMemAdviseSetPreferredLocation, birenCpuDeviceId));
  OK(birenMemAdvise(m, 4096, birenMemAdviseSetAccessedBy, 1));
  OK(birenStreamSynchronize(s));
  OK(birenStreamDestroy(s));
  size_t before, after, total;
  OK(birenMemGetInfo(&before, &total));
  OK(birenFree(m));
  OK(birenMemGetInfo(&after, &total));
  EXPECT(after > before);
  OK(birenPointerGetAttributes(&a, m));
  EXPECT(a.type == birenMemoryTypeUnregistered);
  return 0;
}

static int managed_errors(void) {
  void *p = (void *)0x5;
  EXPECT_FAIL(birenMallocManaged(&p, 0, birenMemAttachGlobal), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocManaged(&p, 64, birenMemAttachSingle), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocManaged(NULL, 64, birenMemAttachGlobal), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocManaged(&p, (size_t)1 << 40, birenMemAttachGlobal), BIREN_ERROR_OUT_OF_MEMORY);
  EXPECT(p == (void *)0x5);
  int *m = NULL, *d = NULL;
  OK(birenMallocManaged((void **)&m, 256, birenMemAttachHost));
  OK(birenMalloc((void **)&d, 256));
  EXPECT_FAIL(birenMemPrefetchAsync(d, 16, 0, NULL), BIREN_ERROR_INVALID_VALUE); /* not managed */
  EXPECT_FAIL(birenMemPrefetchAsync(m, 257, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemPrefetchAsync(m, 16, 2, NULL), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenMemPrefetchAsync(m, 16, -2, NULL), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenMemAdvise(m, 16, 7, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemAdvise(m, 16, birenMemAdviseSetPreferredLocation, 5), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenMemAdvise(d, 16, birenMemAdviseSetReadMostly, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenStreamAttachMemAsync(NULL, m + 1, 0, birenMemAttachGlobal), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenStreamAttachMemAsync(NULL, m, 100, birenMemAttachGlobal), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenStreamAttachMemAsync(NULL, m, 0, 3), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenStreamAttachMemAsync(NULL, d, 0, birenMemAttachGlobal), BIREN_ERROR_INVALID_VALUE);
  OK(birenStreamAttachMemAsync(NULL, m, 256, birenMemAttachHost));
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenStreamDestroy(s));
  EXPECT_FAIL(birenMemPrefetchAsync(m, 16, 0, s), BIREN_ERROR_INVALID_HANDLE);
  OK(birenFree(m));
  OK(birenFree(d));
  return 0;
}

static int peer_access_is_recorded_per_pair(void) {
  int can = -1;
  OK(birenDeviceCanAccessPeer(&can, 0, 1));
  EXPECT(can == 1);
  OK(birenDeviceCanAccessPeer(&can, 1, 1));
  EXPECT(can == 0);
  EXPECT_FAIL(birenDeviceCanAccessPeer(&can, 0, 2), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenDeviceCanAccessPeer(NULL, 0, 1), BIREN_ERROR_INVALID_VALUE);
  OK(birenDeviceEnablePeerAccess(1, 0));
  EXPECT_FAIL(birenDeviceEnablePeerAccess(1, 0), BIREN_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  EXPECT_FAIL(birenDeviceEnablePeerAccess(0, 0), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenDeviceEnablePeerAccess(7, 0), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenDeviceEnablePeerAccess(1, 1), BIREN_ERROR_INVALID_VALUE);
  OK(birenSetDevice(1));
  EXPECT_FAIL(birenDeviceDisablePeerAccess(0), BIREN_ERROR_PEER_ACCESS_NOT_ENABLED); /* per direction */
  OK(birenSetDevice(0));
  OK(birenDeviceDisablePeerAccess(1));
  EXPECT_FAIL(birenDeviceDisablePeerAccess(1), BIREN_ERROR_PEER_ACCESS_NOT_ENABLED);
  /* A reset of the device forgets its peers. */
  OK(birenDeviceEnablePeerAccess(1, 0));
  OK(birenDeviceReset());
  OK(birenDeviceEnablePeerAccess(1, 0));
  OK(birenDeviceDisablePeerAccess(1));
  int v = -1;
  OK(birenDeviceGetP2PAttribute(&v, birenDevP2PAttrAccessSupported, 0, 1));
  EXPECT(v == 1);
  OK(birenDeviceGetP2PAttribute(&v, birenDevP2PAttrPerformanceRank, 1, 0));
  EXPECT(v == 0);
  OK(birenDeviceGetP2PAttribute(&v, birenDevP2PAttrNativeAtomicSupported, 0, 1));
  EXPECT(v == 1);
  v = 9;
  EXPECT_FAIL(birenDeviceGetP2PAttribute(&v, (birenDeviceP2PAttr)5, 0, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenDeviceGetP2PAttribute(&v, birenDevP2PAttrAccessSupported, 0, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenDeviceGetP2PAttribute(&v, birenDevP2PAttrAccessSupported, 0, 3), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenDeviceGetP2PAttribute(NULL, birenDevP2PAttrAccessSupported, 0, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT(v == 9);
  return 0;
}

static int memcpy_peer_between_devices(void) {
  int *a = NULL, *b = NULL, h[256];
  OK(birenMalloc((void **)&a, sizeof h));
  OK(birenSetDevice(1));
  OK(birenMalloc((void **)&b, sizeof h));
  OK(birenSetDevice(0));
  for (int i = 0; i < 256; i++) h[i] = i * 7;
  OK(birenMemcpy(a, h, sizeof h, birenMemcpyHostToDevice));
  OK(birenMemcpyPeer(b, 1, a, 0, sizeof h));
  memset(h, 0, sizeof h);
  OK(birenMemcpy(h, b, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 256; i++) EXPECT(h[i] == i * 7);
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenMemset(a, 0, sizeof h));
  OK(birenMemcpyPeerAsync(a, 0, b + 128, 1, 128 * sizeof(int), s));
  OK(birenStreamSynchronize(s));
  OK(birenMemcpy(h, a, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 128; i++) EXPECT(h[i] == (i + 128) * 7);
  /* Errors: each side checked against its own device, nothing written. */
  OK(birenMemset(a, 0x11, sizeof h));
  EXPECT_FAIL(birenMemcpyPeer(b, 0, a, 0, 16), BIREN_ERROR_INVALID_DEVICE_POINTER); /* b is on device 1 */
  EXPECT_FAIL(birenMemcpyPeer(b, 1, a, 1, 16), BIREN_ERROR_INVALID_DEVICE_POINTER);
  EXPECT_FAIL(birenMemcpyPeer(b + 1, 1, a, 0, sizeof h), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpyPeer(a, 0, b, 1, sizeof h + 1), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpyPeer(b, 3, a, 0, 16), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_FAIL(birenMemcpyPeerAsync(a, 0, b, 1, sizeof h + 4, s), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenMemcpyPeer(b, 1, a, 0, 0));
  OK(birenStreamSynchronize(s));
  OK(birenMemcpy(h, a, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 256; i++) EXPECT(h[i] == 0x11111111);
  OK(birenStreamDestroy(s));
  OK(birenFree(a));
  OK(birenFree(b));
  return 0;
}

static void slow_set(void **args) {
  int *p = *(int **)args[0];
  spin_ms(40);
  *p = 42;
}
static void read_into(void **args) {
  int *p = *(int **)args[0];
  int *out = *(int **)args[1];
  *out = *p;
}

/* An event recorded on device 0 orders a stream of device 1. */
static int event_of_one_device_orders_a_stream_of_another(void) {
  int *m = NULL, *out = NULL;
  OK(birenMallocManaged((void **)&m, sizeof(int), birenMemAttachGlobal));
  OK(birenMallocManaged((void **)&out, sizeof(int), birenMemAttachGlobal));
  *m = 0;
  *out = -1;
  birenStream_t s0, s1;
  birenEvent_t e;
  OK(birenStreamCreate(&s0));
  OK(birenEventCreate(&e));
  OK(birenSetDevice(1));
  OK(birenStreamCreate(&s1));
  OK(birenSetDevice(0));
  OK(BIREN_LAUNCH(slow_set, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s0, m));
  OK(birenEventRecord(e, s0));
  OK(birenStreamWaitEvent(s1, e));
  OK(BIREN_LAUNCH(read_into, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s1, m, out));
  OK(birenStreamSynchronize(s1));
  EXPECT(*out == 42);
  OK(birenStreamDestroy(s0));
  OK(birenStreamDestroy(s1));
  OK(birenEventDestroy(e));
  OK(birenFree(m));
  OK(birenFree(out));
  return 0;
}

/* A stream of device 0 waits for a record made by a stream of device 1 that itself waits for an
 * event never recorded: the synchronize reports DEADLOCK after the timeout instead of hanging,
 * and recording the event lets everything finish. */
static int future_wait_on_another_device_is_reported_not_hung(void) {
  birenStream_t s0, s1;
  birenEvent_t e, f;
  OK(birenStreamCreate(&s0));
  OK(birenEventCreate(&e));
  OK(birenEventCreate(&f));
  OK(birenSetDevice(1));
  OK(birenStreamCreate(&s1));
  OK(birenSetDevice(0));
  OK(birenStreamWaitEvent(s1, e));
  OK(birenEventRecord(f, s1));
  OK(birenStreamWaitEvent(s0, f));
  EXPECT_FAIL(birenStreamSynchronize(s0), BIREN_ERROR_DEADLOCK);
  birenStream_t free_stream; /* the default stream would wait for s0 itself: a cycle */
  OK(birenStreamCreateWithFlags(&free_stream, birenStreamNonBlocking));
  OK(birenEventRecord(e, free_stream));
  OK(birenStreamSynchronize(s0));
  OK(birenStreamDestroy(free_stream));
  OK(birenStreamDestroy(s0));
  OK(birenStreamDestroy(s1));
  OK(birenEventDestroy(e));
  OK(birenEventDestroy(f));
  return 0;
}

static int failures_are_reported_by_the_validator(void) {
  capture_start();
  EXPECT_FAIL(birenDeviceDisablePeerAccess(1), BIREN_ERROR_PEER_ACCESS_NOT_ENABLED);
  EXPECT_FAIL(birenMallocManaged(NULL, 0, 0), BIREN_ERROR_INVALID_VALUE);
  capture_stop();
  EXPECT(captured("birenDeviceDisablePeerAccess"));
  EXPECT(captured("birenMallocManaged"));
  return 0;
}

static const test_case tests[] = {
    TEST(managed_memory_is_shared_by_host_and_kernels),
    TEST(managed_errors),
    TEST(peer_access_is_recorded_per_pair),
    TEST(memcpy_peer_between_devices),
    TEST(event_of_one_device_orders_a_stream_of_another),
    TEST(future_wait_on_another_device_is_reported_not_hung),
    TEST(failures_are_reported_by_the_validator),
};

int main(void) {
  unsetenv("BIREN_VALIDATOR");
  setenv("BIREN_DEVICE_COUNT", "2", 1);
  setenv("BIREN_DEVICE_MEMORY", "64M", 1);
  return RUN_TESTS("managed_peer", tests, compat_init, 30);
}
