/* The validator (SPEC §8): findings, guard zones, poisoning, leak report, advice. Every message
 * is captured through birenSetValidatorCallback and checked for its key facts. */
#include "harness.h"

static char captured[16384];
static int lines;

static void capture(const char *msg, void *user) {
  (void)user;
  size_t n = strlen(captured);
  snprintf(captured + n, sizeof captured - n, "%s\n", msg);
  lines++;
}

static void before(void) {
  birenSetDeviceValidator(0);
  birenDeviceReset();
  birenSetValidatorCallback(capture, NULL);
  birenSetDeviceValidator(1);
  captured[0] = 0;
  lines = 0;
}

#define HAS(s) EXPECT(strstr(captured, (s)) != NULL)

static void scale(void **args) {
  float *x = *(float **)args[0];
  int n = *(int *)args[1];
  int i = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  if (i < n) x[i] *= 2.0f;
}

/* A clean program produces no validator output at all. */
static int clean_program_is_silent(void) {
  float h[1000], *d;
  int n = 1000;
  birenStream_t s;
  birenEvent_t e;
  OK(birenKernelRegister(scale, "scale", 2, (const size_t[]){sizeof(float *), sizeof(int)}));
  for (int i = 0; i < n; i++) h[i] = (float)i;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMemcpyAsync(d, h, sizeof h, birenMemcpyHostToDevice, s));
  OK(BIREN_LAUNCH(scale, birenDim3(4, 1, 1), birenDim3(256, 1, 1), 0, s, d, n));
  OK(birenEventRecord(e, s));
  OK(birenMemcpyAsync(h, d, sizeof h, birenMemcpyDeviceToHost, s));
  OK(birenEventSynchronize(e));
  OK(birenStreamSynchronize(s));
  EXPECT(h[10] == 20.0f);
  OK(birenFree(d));
  OK(birenEventDestroy(e));
  OK(birenStreamDestroy(s));
  if (lines) printf("%s", captured);
  EXPECT(lines == 0);
  return 0;
}

static int copy_past_the_end_is_explained(void) {
  char h[4096], *d;
  OK(birenMalloc((void **)&d, 3072));
  EXPECT_CODE(birenMemcpy(d, h, 4096, birenMemcpyHostToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  printf("    %s", captured);
  EXPECT(lines == 1);
  HAS("birenMemcpy");
  HAS("dst=0x");
  HAS("1024 bytes past the end of the 3072-byte allocation");
  return 0;
}

static int host_pointer_as_device_pointer_is_explained(void) {
  char a[64], b[64] = {0};
  EXPECT_CODE(birenMemcpy(a, b, 64, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_DEVICE_POINTER);
  HAS("src=0x");
  HAS("not inside any live device allocation");
  return 0;
}

static int double_free_is_explained(void) {
  void *d;
  OK(birenMalloc(&d, 100));
  OK(birenFree(d));
  EXPECT_CODE(birenFree(d), BIREN_ERROR_INVALID_DEVICE_POINTER);
  HAS("birenFree");
  HAS("double free");
  return 0;
}

static int every_failure_gets_a_line(void) {
  int p;
  EXPECT_CODE(birenStreamGetPriority((birenStream_t)0x5555, &p), BIREN_ERROR_INVALID_HANDLE);
  HAS("birenStreamGetPriority");
  HAS("stream=0x5555");
  HAS("BIREN_ERROR_INVALID_HANDLE");
  EXPECT_CODE(birenEventCreateWithFlags(NULL, 0), BIREN_ERROR_INVALID_VALUE);
  HAS("birenEventCreateWithFlags");
  EXPECT(lines == 2);
  return 0;
}

/* Writes x[n] (one past the end). args: float *x, int n */
static void off_by_one(void **args) {
  float *x = *(float **)args[0];
  int n = *(int *)args[1];
  if (birenThreadIdx().x == 0) x[n] = 1.0f;
}

static int kernel_out_of_bounds_write_fails_the_launch(void) {
  float *d;
  int n = 100;
  OK(birenKernelRegister(off_by_one, "off_by_one", 2, (const size_t[]){sizeof(float *), sizeof(int)}));
  OK(birenMalloc((void **)&d, (size_t)n * sizeof(float)));
  OK(BIREN_LAUNCH(off_by_one, birenDim3(1, 1, 1), birenDim3(32, 1, 1), 0, NULL, d, n));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_ILLEGAL_ADDRESS);
  printf("    %s", captured);
  HAS("kernel 'off_by_one'");
  HAS("400-byte allocation");
  HAS("bytes 400..403 past its end");
  /* sticky until reset */
  void *p;
  EXPECT_CODE(birenMalloc(&p, 16), BIREN_ERROR_ILLEGAL_ADDRESS);
  OK(birenDeviceReset());
  OK(birenMalloc(&p, 16));
  return 0;
}

static void write_first(void **args) {
  float *x = *(float **)args[0];
  if (birenThreadIdx().x == 0) x[0] = 3.0f;
}

static int kernel_write_after_free_is_caught(void) {
  float *d;
  OK(birenMalloc((void **)&d, 256));
  OK(birenFree(d));
  /* launched by reference with a stale pointer: a use after free */
  void *args[] = {&d};
  OK(birenLaunchKernel(write_first, birenDim3(1, 1, 1), birenDim3(1, 1, 1), args, 0, NULL));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_ILLEGAL_ADDRESS);
  HAS("use after free");
  HAS("256-byte allocation");
  return 0;
}

static int new_memory_is_poisoned(void) {
  unsigned char h[64];
  void *d;
  OK(birenMalloc(&d, 64));
  OK(birenMemcpy(h, d, 64, birenMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++) EXPECT(h[i] == 0xCD);
  OK(birenFree(d));
  return 0;
}

static int leak_report_names_event_and_allocation(void) {
  birenEvent_t e;
  void *d;
  OK(birenEventCreate(&e));
  OK(birenMalloc(&d, 12345));
  OK(birenDeviceReset());
  printf("%s", captured);
  HAS("leak report");
  HAS("1 event(s)");
  HAS("leaked event #");
  HAS("leaked allocation of 12345 bytes");
  HAS("created by"); /* the caller, as far as dladdr can tell */
  return 0;
}

static void write_second(void **args) {
  float *x = *(float **)args[0];
  if (birenThreadIdx().x == 0) x[1] = 3.0f;
}

static int unregistered_kernel_gets_advice_once(void) {
  float *d;
  int n = 4;
  void *args[] = {&d, &n};
  OK(birenMalloc((void **)&d, 16));
  for (int i = 0; i < 3; i++) OK(birenLaunchKernel(write_second, birenDim3(1, 1, 1), birenDim3(1, 1, 1), args, 0, NULL));
  OK(birenDeviceSynchronize());
  HAS("not registered");
  HAS("by reference");
  EXPECT(lines == 1);
  return 0;
}

static void nop(void **args) { (void)args; }

static int device_sync_in_a_loop_gets_advice(void) {
  for (int i = 0; i < 150; i++) {
    OK(birenLaunchKernel(nop, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL));
    OK(birenDeviceSynchronize());
  }
  HAS("birenDeviceSynchronize was called");
  HAS("birenStreamSynchronize");
  return 0;
}

/* Busy-waits args[0] milliseconds (double). */
static void spin_kernel(void **args) { spin_ms(*(double *)args[0]); }

static int too_many_streams_and_default_stream_get_advice(void) {
  birenDeviceProp p;
  OK(birenGetDeviceProperties(&p, 0));
  int units = p.multiProcessorCount, n = 4 * units + 1;
  birenStream_t *s = malloc(sizeof *s * (size_t)n);
  double ms = 30;
  /* A few more streams than units, all busy: ordinary (copies and waits overlap kernels). */
  for (int i = 0; i < units + 2; i++) OK(birenStreamCreate(&s[i]));
  for (int i = 0; i < units + 2; i++) OK(BIREN_LAUNCH(spin_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s[i], ms));
  OK(birenDeviceSynchronize());
  EXPECT(strstr(captured, "compute units") == NULL);
  /* Far more streams than units with work in flight at once: advice. */
  for (int i = units + 2; i < n; i++) OK(birenStreamCreate(&s[i]));
  for (int i = 0; i < n; i++) OK(BIREN_LAUNCH(spin_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s[i], ms));
  OK(birenDeviceSynchronize());
  HAS("compute units");
  /* default stream work after pending work in a blocking stream */
  OK(BIREN_LAUNCH(spin_kernel, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s[0], ms));
  OK(birenLaunchKernel(nop, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL));
  OK(birenDeviceSynchronize());
  HAS("the default stream serializes");
  for (int i = 0; i < n; i++) OK(birenStreamDestroy(s[i]));
  free(s);
  return 0;
}

/* A kernel without arguments launched with args = NULL has nothing to read by reference. */
static void nop_no_args(void **args) { (void)args; }

static int kernel_without_args_gets_no_registration_advice(void) {
  for (int i = 0; i < 3; i++) OK(birenLaunchKernel(nop_no_args, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL));
  OK(birenDeviceSynchronize());
  EXPECT(strstr(captured, "not registered") == NULL);
  return 0;
}

static int event_churn_gets_advice(void) {
  birenEvent_t e;
  for (int i = 0; i < 1100; i++) OK(birenEventCreate(&e));
  HAS("events were created but only");
  OK(birenDeviceReset());
  return 0;
}

static const test_case tests[] = {
    TEST(clean_program_is_silent),
    TEST(copy_past_the_end_is_explained),
    TEST(host_pointer_as_device_pointer_is_explained),
    TEST(double_free_is_explained),
    TEST(every_failure_gets_a_line),
    TEST(kernel_out_of_bounds_write_fails_the_launch),
    TEST(kernel_write_after_free_is_caught),
    TEST(new_memory_is_poisoned),
    TEST(leak_report_names_event_and_allocation),
    TEST(unregistered_kernel_gets_advice_once),
    TEST(device_sync_in_a_loop_gets_advice),
    TEST(too_many_streams_and_default_stream_get_advice),
    TEST(event_churn_gets_advice),
    TEST(kernel_without_args_gets_no_registration_advice),
};

int main(void) {
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("validator", tests, before, 60);
}
