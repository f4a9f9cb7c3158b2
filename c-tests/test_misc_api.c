/* Smaller pieces: birenStreamAddCallback, birenStreamGetDevice, birenEventRecordWithFlags,
 * birenProfilerStart/Stop and birenRangePush/Pop (checked in the BIREN_TRACE file), vector types,
 * BIREN_SHARED static shared arrays, BIREN_LAUNCH with expressions. */
#include "compat.h"
#include <stdint.h>

static char trace_path[256];

/* ---- stream callbacks ---- */
typedef struct {
  int order[8];
  int n;
  birenStream_t seen_stream;
  birenError_t seen_status;
  pthread_mutex_t lock;
} cb_log;

static void record_cb(birenStream_t stream, birenError_t status, void *user) {
  cb_log *l = (cb_log *)user;
  pthread_mutex_lock(&l->lock);
  l->seen_stream = stream;
  l->seen_status = status;
  l->order[l->n++] = 100;
  pthread_mutex_unlock(&l->lock);
}
static void slow_kernel(void **args) {
  cb_log *l = *(cb_log **)args[0];
  if (birenThreadIdx().x == 0) {
    spin_ms(20);
    pthread_mutex_lock(&l->lock);
    l->order[l->n++] = 1;
    pthread_mutex_unlock(&l->lock);
  }
}
static void after_kernel(void **args) {
  cb_log *l = *(cb_log **)args[0];
  pthread_mutex_lock(&l->lock);
  l->order[l->n++] = 2;
  pthread_mutex_unlock(&l->lock);
}

static int stream_callback_runs_in_order_with_stream_and_status(void) {
  static cb_log l;
  memset(&l, 0, sizeof l);
  pthread_mutex_init(&l.lock, NULL);
  cb_log *lp = &l;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(BIREN_LAUNCH(slow_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, lp));
  OK(birenStreamAddCallback(s, record_cb, &l, 0));
  OK(BIREN_LAUNCH(after_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, lp));
  OK(birenStreamSynchronize(s));
  EXPECT(l.n == 3 && l.order[0] == 1 && l.order[1] == 100 && l.order[2] == 2);
  EXPECT(l.seen_stream == s && l.seen_status == BIREN_SUCCESS);
  /* The default stream too. */
  OK(birenStreamAddCallback(NULL, record_cb, &l, 0));
  OK(birenDeviceSynchronize());
  EXPECT(l.n == 4 && l.seen_stream == NULL);
  EXPECT_FAIL(birenStreamAddCallback(s, NULL, &l, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenStreamAddCallback(s, record_cb, &l, 1), BIREN_ERROR_INVALID_VALUE);
  OK(birenStreamDestroy(s));
  EXPECT_FAIL(birenStreamAddCallback(s, record_cb, &l, 0), BIREN_ERROR_INVALID_HANDLE);
  OK(birenDeviceSynchronize());
  EXPECT(l.n == 4); /* nothing ran for the failed calls */
  return 0;
}

/* As in CUDA, a stream callback cannot be captured (a host function can): the call is refused
 * with STREAM_CAPTURE_UNSUPPORTED and the capture invalidated. (It used to become a graph host
 * node whose record the first launch freed: the second launch read freed memory.) */
static int stream_callback_is_refused_in_a_capture(void) {
  static cb_log l;
  memset(&l, 0, sizeof l);
  pthread_mutex_init(&l.lock, NULL);
  birenStream_t s;
  birenGraph_t g = NULL;
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  EXPECT_FAIL(birenStreamAddCallback(s, record_cb, &l, 0), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  birenStreamCaptureStatus st;
  OK(birenStreamIsCapturing(s, &st));
  EXPECT(st == birenStreamCaptureStatusInvalidated);
  EXPECT_FAIL(birenStreamEndCapture(s, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT(g == NULL);
  /* The stream works as before, the callback with it. */
  OK(birenStreamAddCallback(s, record_cb, &l, 0));
  OK(birenStreamSynchronize(s));
  EXPECT(l.n == 1 && l.seen_stream == s);
  OK(birenStreamDestroy(s));
  (void)birenGetLastError();
  return 0;
}

static int trap_gate;
/* Traps once the host has queued the callback behind it (opens the gate). */
static void spin_then_trap(void **args) {
  (void)args;
  double end = now_s() + 20.0;
  while (!__atomic_load_n(&trap_gate, __ATOMIC_ACQUIRE) && now_s() < end) {
  }
  birenTrap();
}

/* A callback queued behind a kernel that traps is still called, with the error. */
static int stream_callback_gets_the_error_status(void) {
  static cb_log l;
  memset(&l, 0, sizeof l);
  pthread_mutex_init(&l.lock, NULL);
  birenStream_t s;
  OK(birenStreamCreate(&s));
  __atomic_store_n(&trap_gate, 0, __ATOMIC_RELEASE);
  OK(birenLaunchKernel(spin_then_trap, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, s));
  OK(birenStreamAddCallback(s, record_cb, &l, 0));
  __atomic_store_n(&trap_gate, 1, __ATOMIC_RELEASE);
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT(l.n == 1 && l.seen_stream == s && l.seen_status == BIREN_ERROR_LAUNCH_FAILURE);
  OK(birenDeviceReset());
  (void)birenGetLastError();
  return 0;
}

static int stream_get_device(void) {
  birenStream_t s;
  OK(birenStreamCreate(&s));
  int dev = -1;
  OK(birenStreamGetDevice(s, &dev));
  EXPECT(dev == 0);
  dev = -1;
  OK(birenStreamGetDevice(NULL, &dev));
  EXPECT(dev == 0);
  OK(birenSetDevice(1));
  birenStream_t s1;
  OK(birenStreamCreate(&s1));
  OK(birenSetDevice(0));
  OK(birenStreamGetDevice(s1, &dev));
  EXPECT(dev == 1);
  OK(birenStreamDestroy(s1));
  EXPECT_FAIL(birenStreamGetDevice(s, NULL), BIREN_ERROR_INVALID_VALUE);
  OK(birenStreamDestroy(s));
  dev = 42;
  EXPECT_FAIL(birenStreamGetDevice(s, &dev), BIREN_ERROR_INVALID_HANDLE);
  EXPECT(dev == 42);
  return 0;
}

static void spin_kernel(void **args) {
  (void)args;
  spin_ms(30);
}

static int event_record_with_flags(void) {
  birenEvent_t a, b;
  OK(birenEventCreate(&a));
  OK(birenEventCreate(&b));
  OK(birenEventRecordWithFlags(a, NULL, birenEventRecordDefault));
  OK(birenLaunchKernel(spin_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL));
  OK(birenEventRecordWithFlags(b, NULL, birenEventRecordExternal));
  OK(birenEventSynchronize(b));
  float ms = 0;
  OK(birenEventElapsedTime(&ms, a, b));
  EXPECT(ms >= 20.0f);
  EXPECT_FAIL(birenEventRecordWithFlags(a, NULL, 2), BIREN_ERROR_INVALID_VALUE);
  OK(birenEventDestroy(a));
  EXPECT_FAIL(birenEventRecordWithFlags(a, NULL, 0), BIREN_ERROR_INVALID_HANDLE);
  OK(birenEventDestroy(b));
  return 0;
}

static void traced_kernel(void **args) { (void)args; }
static void paused_kernel(void **args) { (void)args; }

static int profiler_and_ranges_show_in_the_trace(void) {
  OK(birenKernelRegister(traced_kernel, "traced_kernel_api13", 0, NULL));
  OK(birenKernelRegister(paused_kernel, "paused_kernel_api13", 0, NULL));
  OK(birenRangePush("outer range api13"));
  OK(birenRangePush("inner range api13"));
  OK(birenLaunchKernel(traced_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL));
  OK(birenDeviceSynchronize());
  OK(birenRangePop());
  OK(birenRangePop());
  EXPECT_FAIL(birenRangePop(), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenRangePush(NULL), BIREN_ERROR_INVALID_VALUE);
  OK(birenProfilerStop());
  OK(birenLaunchKernel(paused_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL));
  OK(birenDeviceSynchronize());
  OK(birenProfilerStart());
  OK(birenDeviceReset()); /* writes the trace file */
  FILE *f = fopen(trace_path, "r");
  EXPECT(f != NULL);
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  EXPECT(strstr(text, "outer range api13") != NULL);
  EXPECT(strstr(text, "inner range api13") != NULL);
  EXPECT(strstr(text, "traced_kernel_api13") != NULL);
  EXPECT(strstr(text, "paused_kernel_api13") == NULL);
  return 0;
}

/* ---- vector types ---- */
static void saxpy4(void **args) {
  float4 *v = *(float4 **)args[0];
  float a = *(float *)args[1];
  unsigned i = birenThreadIdx().x;
  float4 x = v[i];
  v[i] = make_float4(a * x.x, a * x.y + 1.0f, x.z, x.w - 1.0f);
}

static int vector_types(void) {
  EXPECT(sizeof(float2) == 8 && sizeof(float3) == 12 && sizeof(float4) == 16);
  EXPECT(sizeof(int2) == 8 && sizeof(uint4) == 16 && sizeof(double2) == 16 && sizeof(char4) == 4);
#if defined(__GNUC__)
  EXPECT(__alignof__(float4) == 16 && __alignof__(double2) == 16 && __alignof__(float2) == 8);
#endif
  int3 a = make_int3(1, 2, 3);
  uchar4 c = make_uchar4(1, 2, 3, 250);
  double2 d = make_double2(0.5, 1.5);
  EXPECT(a.x + a.y + a.z == 6 && c.w == 250 && d.y == 1.5);
  float4 h[32], *dv = NULL;
  for (int i = 0; i < 32; i++) h[i] = make_float4((float)i, 1, 2, 3);
  OK(birenMalloc((void **)&dv, sizeof h));
  OK(birenMemcpy(dv, h, sizeof h, birenMemcpyHostToDevice));
  OK(BIREN_LAUNCH(saxpy4, birenDim3(1, 1, 1), birenDim3(32, 1, 1), 0, NULL, dv, 2.0f));
  OK(birenMemcpy(h, dv, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 32; i++) EXPECT(h[i].x == 2.0f * i && h[i].y == 3.0f && h[i].z == 2 && h[i].w == 2);
  OK(birenFree(dv));
  return 0;
}

/* ---- static shared arrays ---- */
#define TILE 256
static void reverse_in_block(void **args) {
  int *out = *(int **)args[0];
  BIREN_SHARED int tile[TILE];
  unsigned t = birenThreadIdx().x, b = birenBlockIdx().x;
  tile[t] = (int)(b * 1000 + t);
  birenSyncThreads();
  out[b * TILE + t] = tile[TILE - 1 - t];
}

static int static_shared_arrays_are_per_block(void) {
  const unsigned blocks = 64;
  int *d = NULL;
  OK(birenMalloc((void **)&d, blocks * TILE * sizeof(int)));
  for (int rep = 0; rep < 3; rep++) {
    OK(BIREN_LAUNCH(reverse_in_block, birenDim3(blocks, 1, 1), birenDim3(TILE, 1, 1), 0, NULL, d));
    static int h[64 * TILE];
    OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
    for (unsigned b = 0; b < blocks; b++)
      for (unsigned t = 0; t < TILE; t++) EXPECT(h[b * TILE + t] == (int)(b * 1000 + (TILE - 1 - t)));
  }
  OK(birenFree(d));
  return 0;
}

/* ---- BIREN_LAUNCH with expressions ---- */
static void axpb(void **args) {
  int *out = *(int **)args[0];
  int a = *(int *)args[1];
  long long b = *(long long *)args[2];
  unsigned i = birenThreadIdx().x;
  out[i] = a * (int)i + (int)b;
}

static int launch_accepts_expressions(void) {
  int *d = NULL, h[16];
  OK(birenMalloc((void **)&d, 32 * sizeof(int)));
  int k = 3;
  OK(BIREN_LAUNCH(axpb, birenDim3(1, 1, 1), birenDim3(16, 1, 1), 0, NULL, d + 16, k * 2, 7LL));
  OK(birenMemcpy(h, d + 16, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 16; i++) EXPECT(h[i] == 6 * i + 7);
  OK(birenFree(d));
  return 0;
}

static int failures_are_reported_by_the_validator(void) {
  capture_start();
  EXPECT_FAIL(birenRangePop(), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenStreamAddCallback(NULL, NULL, NULL, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenEventRecordWithFlags(NULL, NULL, 0), BIREN_ERROR_INVALID_HANDLE);
  capture_stop();
  EXPECT(captured("birenRangePop"));
  EXPECT(captured("birenStreamAddCallback"));
  EXPECT(captured("birenEventRecordWithFlags"));
  return 0;
}

static const test_case tests[] = {
    TEST(stream_callback_runs_in_order_with_stream_and_status),
    TEST(stream_callback_gets_the_error_status),
    TEST(stream_callback_is_refused_in_a_capture),
    TEST(stream_get_device),
    TEST(event_record_with_flags),
    TEST(profiler_and_ranges_show_in_the_trace),
    TEST(vector_types),
    TEST(static_shared_arrays_are_per_block),
    TEST(launch_accepts_expressions),
    TEST(failures_are_reported_by_the_validator),
};

int main(void) {
  unsetenv("BIREN_VALIDATOR");
  setenv("BIREN_DEVICE_COUNT", "2", 1);
  snprintf(trace_path, sizeof trace_path, "/tmp/biren_misc_api_%d.json", (int)getpid());
  setenv("BIREN_TRACE", trace_path, 1);
  int r = RUN_TESTS("misc_api", tests, compat_init, 30);
  unlink(trace_path);
  return r;
}
