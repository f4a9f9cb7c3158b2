/* Control, devices and errors (SPEC §2): birenInit, device count/selection/properties, stream
 * priority range, scheduling policy, version, error names and strings, the per-thread last
 * error, reset. Runs with BIREN_DEVICE_COUNT=2 (set below, before birenInit). The first test
 * runs before birenInit; every failing call is checked to write nothing and set the last error. */
#include "harness.h"
#include <limits.h>
#include <pthread.h>

/* `call` returns `code` and leaves it as the calling thread's last error: Peek returns it (and
 * keeps it), Get returns it and clears it. */
#define EXPECT_FAIL(call, code)                                                              \
  do {                                                                                       \
    (void)birenGetLastError();                                                               \
    EXPECT_CODE(call, code);                                                                 \
    EXPECT_CODE(birenPeekAtLastError(), code);                                               \
    EXPECT_CODE(birenPeekAtLastError(), code);                                               \
    EXPECT_CODE(birenGetLastError(), code);                                                  \
    EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);                                      \
  } while (0)

#define NOT_INIT BIREN_ERROR_NOT_INITIALIZED

static const struct {
  birenError_t code;
  int value;
  const char *name;
} known_codes[] = {
    {BIREN_SUCCESS, 0, "BIREN_SUCCESS"},
    {BIREN_ERROR_INVALID_VALUE, 1, "BIREN_ERROR_INVALID_VALUE"},
    {BIREN_ERROR_OUT_OF_MEMORY, 2, "BIREN_ERROR_OUT_OF_MEMORY"},
    {BIREN_ERROR_NOT_INITIALIZED, 3, "BIREN_ERROR_NOT_INITIALIZED"},
    {BIREN_ERROR_INVALID_DEVICE, 4, "BIREN_ERROR_INVALID_DEVICE"},
    {BIREN_ERROR_INVALID_HANDLE, 5, "BIREN_ERROR_INVALID_HANDLE"},
    {BIREN_ERROR_INVALID_DEVICE_POINTER, 6, "BIREN_ERROR_INVALID_DEVICE_POINTER"},
    {BIREN_ERROR_OUT_OF_BOUNDS, 7, "BIREN_ERROR_OUT_OF_BOUNDS"},
    {BIREN_ERROR_INVALID_MEMCPY_DIRECTION, 8, "BIREN_ERROR_INVALID_MEMCPY_DIRECTION"},
    {BIREN_ERROR_INVALID_CONFIGURATION, 9, "BIREN_ERROR_INVALID_CONFIGURATION"},
    {BIREN_ERROR_NOT_READY, 10, "BIREN_ERROR_NOT_READY"},
    {BIREN_ERROR_DEADLOCK, 11, "BIREN_ERROR_DEADLOCK"},
    {BIREN_ERROR_LAUNCH_FAILURE, 12, "BIREN_ERROR_LAUNCH_FAILURE"},
    {BIREN_ERROR_ILLEGAL_ADDRESS, 13, "BIREN_ERROR_ILLEGAL_ADDRESS"},
    {BIREN_ERROR_NOT_PERMITTED, 14, "BIREN_ERROR_NOT_PERMITTED"},
    {BIREN_ERROR_NOT_SUPPORTED, 15, "BIREN_ERROR_NOT_SUPPORTED"},
    {BIREN_ERROR_LAUNCH_TIMEOUT, 16, "BIREN_ERROR_LAUNCH_TIMEOUT"},
    {BIREN_ERROR_UNKNOWN, 999, "BIREN_ERROR_UNKNOWN"},
};
#define N_KNOWN (sizeof known_codes / sizeof known_codes[0])

static const int unknown_values[] = {500, 777, 998, 1000, -1, -999, INT_MAX, INT_MIN};
#define N_UNKNOWN (sizeof unknown_values / sizeof unknown_values[0])

/* ---- before birenInit ------------------------------------------------------------------- */

static int control_calls_before_init_fail_and_write_nothing(void) {
  int count = 77, dev = 77, least = 77, greatest = 77;
  birenSchedulingPolicy policy = (birenSchedulingPolicy)77;
  birenDeviceProp prop, sentinel;
  memset(&prop, 0xA5, sizeof prop);
  memset(&sentinel, 0xA5, sizeof sentinel);

  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  EXPECT_CODE(birenGetLastError(), BIREN_SUCCESS);

  EXPECT_FAIL(birenGetDeviceCount(&count), NOT_INIT);
  EXPECT(count == 77);
  EXPECT_FAIL(birenGetDeviceCount(NULL), NOT_INIT);
  EXPECT_FAIL(birenSetDevice(0), NOT_INIT);
  EXPECT_FAIL(birenGetDevice(&dev), NOT_INIT);
  EXPECT(dev == 77);
  EXPECT_FAIL(birenGetDeviceProperties(&prop, 0), NOT_INIT);
  EXPECT(memcmp(&prop, &sentinel, sizeof prop) == 0);
  EXPECT_FAIL(birenDeviceGetStreamPriorityRange(&least, &greatest), NOT_INIT);
  EXPECT(least == 77 && greatest == 77);
  EXPECT_FAIL(birenDeviceGetSchedulingPolicy(&policy), NOT_INIT);
  EXPECT((int)policy == 77);
  EXPECT_FAIL(birenDeviceSetSchedulingPolicy(birenScheduleCooperative), NOT_INIT);
  EXPECT_FAIL(birenDeviceSynchronize(), NOT_INIT);
  EXPECT_FAIL(birenDeviceReset(), NOT_INIT);
  EXPECT_FAIL(birenSetDeviceValidator(0), NOT_INIT);
  EXPECT_FAIL(birenSetValidatorCallback(NULL, NULL), NOT_INIT);

  /* The version, error-string and last-error calls work before init. */
  int version = -1;
  OK(birenRuntimeGetVersion(&version));
  EXPECT(version > 0 && version % 10 == 0);
  EXPECT_FAIL(birenRuntimeGetVersion(NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT(strcmp(birenGetErrorName(BIREN_ERROR_OUT_OF_BOUNDS), "BIREN_ERROR_OUT_OF_BOUNDS") == 0);
  EXPECT(strcmp(birenGetErrorName(BIREN_ERROR_NOT_INITIALIZED), "BIREN_ERROR_NOT_INITIALIZED") == 0);
  EXPECT(strcmp(birenGetErrorName((birenError_t)-1), "BIREN_ERROR_UNRECOGNIZED") == 0);
  EXPECT(birenGetErrorString(BIREN_ERROR_NOT_INITIALIZED) != NULL);
  EXPECT(birenGetErrorString(BIREN_ERROR_NOT_INITIALIZED)[0] != '\0');
  EXPECT(birenGetErrorString((birenError_t)12345) != NULL);
  return 0;
}

/* ---- birenInit ---------------------------------------------------------------------------- */

enum { INIT_THREADS = 8 };
static volatile int init_go;

static void *init_thread(void *arg) {
  while (!init_go) {
  }
  *(birenError_t *)arg = birenInit();
  return NULL;
}

static int init_is_thread_safe_and_idempotent(void) {
  pthread_t t[INIT_THREADS];
  birenError_t r[INIT_THREADS];
  for (int i = 0; i < INIT_THREADS; i++) {
    r[i] = BIREN_ERROR_UNKNOWN;
    EXPECT(pthread_create(&t[i], NULL, init_thread, &r[i]) == 0);
  }
  init_go = 1; /* all threads race into birenInit */
  for (int i = 0; i < INIT_THREADS; i++) EXPECT(pthread_join(t[i], NULL) == 0);
  for (int i = 0; i < INIT_THREADS; i++) EXPECT_CODE(r[i], BIREN_SUCCESS);

  int count = 0;
  OK(birenGetDeviceCount(&count));
  EXPECT(count == 2);

  /* A later birenInit returns SUCCESS and changes nothing: current device, policy, memory. */
  void *d = NULL;
  birenPointerAttributes a;
  birenSchedulingPolicy p;
  OK(birenSetDevice(1));
  OK(birenDeviceSetSchedulingPolicy(birenScheduleCooperative));
  OK(birenMalloc(&d, 1000));
  /* The configuration was read by the first birenInit: later ones do not read it again. */
  setenv("BIREN_DEVICE_COUNT", "3", 1);
  OK(birenInit());
  OK(birenInit());
  setenv("BIREN_DEVICE_COUNT", "2", 1);
  OK(birenGetDeviceCount(&count));
  EXPECT(count == 2);
  int dev = -1;
  OK(birenGetDevice(&dev));
  EXPECT(dev == 1);
  OK(birenDeviceGetSchedulingPolicy(&p));
  EXPECT(p == birenScheduleCooperative);
  OK(birenPointerGetAttributes(&a, d));
  EXPECT(a.type == birenMemoryTypeDevice && a.device == 1 && a.basePointer == d && a.size == 1000);
  OK(birenDeviceSetSchedulingPolicy(birenSchedulePreemptive));
  OK(birenFree(d));
  OK(birenSetDevice(0));
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  return 0;
}

/* ---- error names and strings ------------------------------------------------------------ */

static int error_names_and_strings_for_every_code(void) {
  for (size_t i = 0; i < N_KNOWN; i++) {
    EXPECT((int)known_codes[i].code == known_codes[i].value); /* explicit, stable values */
    const char *name = birenGetErrorName(known_codes[i].code);
    const char *text = birenGetErrorString(known_codes[i].code);
    EXPECT(name != NULL && text != NULL);
    if (strcmp(name, known_codes[i].name) != 0) {
      fprintf(stderr, "    birenGetErrorName(%d) = \"%s\", expected \"%s\"\n", known_codes[i].value, name, known_codes[i].name);
      return 1;
    }
    EXPECT(strlen(text) > 0);
    /* The same pointer every time (static strings). */
    EXPECT(birenGetErrorName(known_codes[i].code) == name);
    EXPECT(birenGetErrorString(known_codes[i].code) == text);
    /* Each code has its own description. */
    for (size_t j = 0; j < i; j++) {
      if (strcmp(text, birenGetErrorString(known_codes[j].code)) == 0) {
        fprintf(stderr, "    %s and %s share the description \"%s\"\n", known_codes[i].name, known_codes[j].name, text);
        return 1;
      }
    }
  }
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS); /* asking is not failing */
  return 0;
}

static int error_names_and_strings_for_unknown_values(void) {
  for (size_t i = 0; i < N_UNKNOWN; i++) {
    birenError_t e = (birenError_t)unknown_values[i];
    const char *name = birenGetErrorName(e);
    const char *text = birenGetErrorString(e);
    EXPECT(name != NULL && text != NULL);
    if (strcmp(name, "BIREN_ERROR_UNRECOGNIZED") != 0) {
      fprintf(stderr, "    birenGetErrorName(%d) = \"%s\"\n", unknown_values[i], name);
      return 1;
    }
    EXPECT(strlen(text) > 0);
    for (size_t j = 0; j < N_KNOWN; j++) EXPECT(strcmp(text, birenGetErrorString(known_codes[j].code)) != 0);
  }
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  return 0;
}

/* ---- last error --------------------------------------------------------------------------- */

static int last_error_get_clears_peek_keeps(void) {
  int n = 0;
  EXPECT_CODE(birenGetLastError(), BIREN_SUCCESS);
  EXPECT_CODE(birenGetDeviceCount(NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenPeekAtLastError(), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenPeekAtLastError(), BIREN_ERROR_INVALID_VALUE);
  /* A successful call leaves the last error alone. */
  OK(birenGetDeviceCount(&n));
  EXPECT_CODE(birenPeekAtLastError(), BIREN_ERROR_INVALID_VALUE);
  /* A later failure replaces it. */
  EXPECT_CODE(birenSetDevice(99), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_CODE(birenPeekAtLastError(), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_CODE(birenGetLastError(), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_CODE(birenGetLastError(), BIREN_SUCCESS);
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  return 0;
}

typedef struct {
  int fail_with_null_count; /* 1: fail with INVALID_VALUE, 0: with INVALID_DEVICE */
  int rounds;
  birenError_t seen_at_start;
  int mismatches;
} last_error_job;

static volatile int last_error_go;

static void *last_error_thread(void *arg) {
  last_error_job *j = (last_error_job *)arg;
  j->seen_at_start = birenPeekAtLastError();
  while (!last_error_go) {
  }
  birenError_t mine = j->fail_with_null_count ? BIREN_ERROR_INVALID_VALUE : BIREN_ERROR_INVALID_DEVICE;
  for (int i = 0; i < j->rounds; i++) {
    birenError_t r = j->fail_with_null_count ? birenGetDeviceCount(NULL) : birenSetDevice(-3);
    if (r != mine || birenPeekAtLastError() != mine) j->mismatches++;
    if ((i & 1) && birenGetLastError() != mine) j->mismatches++;
    if ((i & 1) && birenPeekAtLastError() != BIREN_SUCCESS) j->mismatches++;
  }
  if (birenPeekAtLastError() != BIREN_SUCCESS) j->mismatches++; /* rounds is even: last was a Get */
  return NULL;
}

static int last_error_is_per_host_thread(void) {
  /* This thread fails first; a new thread starts with no last error. */
  EXPECT_CODE(birenSetDevice(7), BIREN_ERROR_INVALID_DEVICE);
  last_error_job a = {1, 2000, BIREN_ERROR_UNKNOWN, 0};
  last_error_job b = {0, 2000, BIREN_ERROR_UNKNOWN, 0};
  pthread_t ta, tb;
  EXPECT(pthread_create(&ta, NULL, last_error_thread, &a) == 0);
  EXPECT(pthread_create(&tb, NULL, last_error_thread, &b) == 0);
  last_error_go = 1; /* both threads fail concurrently, each with its own code */
  EXPECT(pthread_join(ta, NULL) == 0);
  EXPECT(pthread_join(tb, NULL) == 0);
  EXPECT_CODE(a.seen_at_start, BIREN_SUCCESS);
  EXPECT_CODE(b.seen_at_start, BIREN_SUCCESS);
  EXPECT(a.mismatches == 0);
  EXPECT(b.mismatches == 0);
  /* The other threads' failures and clears did not touch this thread's last error. */
  EXPECT_CODE(birenPeekAtLastError(), BIREN_ERROR_INVALID_DEVICE);
  EXPECT_CODE(birenGetLastError(), BIREN_ERROR_INVALID_DEVICE);
  return 0;
}

/* ---- devices ------------------------------------------------------------------------------ */

static int device_count_and_current_device(void) {
  int count = -1, dev = -1;
  OK(birenGetDeviceCount(&count));
  EXPECT(count == 2);
  EXPECT_FAIL(birenGetDeviceCount(NULL), BIREN_ERROR_INVALID_VALUE);

  OK(birenGetDevice(&dev));
  EXPECT(dev == 0);
  OK(birenSetDevice(1));
  OK(birenGetDevice(&dev));
  EXPECT(dev == 1);
  const int bad[] = {2, 3, -1, INT_MAX, INT_MIN};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    EXPECT_FAIL(birenSetDevice(bad[i]), BIREN_ERROR_INVALID_DEVICE);
    dev = -7;
    OK(birenGetDevice(&dev));
    EXPECT(dev == 1); /* unchanged by the failed call */
  }
  EXPECT_FAIL(birenGetDevice(NULL), BIREN_ERROR_INVALID_VALUE);
  OK(birenSetDevice(0));
  OK(birenGetDevice(&dev));
  EXPECT(dev == 0);
  return 0;
}

typedef struct {
  int first, after_set, errors;
} device_job;

static void *device_thread(void *arg) {
  device_job *j = (device_job *)arg;
  j->first = j->after_set = -1;
  if (birenGetDevice(&j->first) != BIREN_SUCCESS) j->errors++;
  if (birenSetDevice(1) != BIREN_SUCCESS) j->errors++;
  if (birenGetDevice(&j->after_set) != BIREN_SUCCESS) j->errors++;
  if (birenSetDevice(0) != BIREN_SUCCESS) j->errors++; /* must not move the main thread */
  return NULL;
}

static int current_device_is_per_host_thread(void) {
  OK(birenSetDevice(1));
  device_job j = {0, 0, 0};
  pthread_t t;
  EXPECT(pthread_create(&t, NULL, device_thread, &j) == 0);
  EXPECT(pthread_join(t, NULL) == 0);
  EXPECT(j.errors == 0);
  EXPECT(j.first == 0); /* each thread starts on device 0 */
  EXPECT(j.after_set == 1);
  int dev = -1;
  OK(birenGetDevice(&dev));
  EXPECT(dev == 1);
  /* Memory follows the current device. */
  void *d = NULL;
  birenPointerAttributes a;
  OK(birenMalloc(&d, 512));
  OK(birenPointerGetAttributes(&a, d));
  EXPECT(a.type == birenMemoryTypeDevice && a.device == 1);
  OK(birenFree(d));
  OK(birenSetDevice(0));
  OK(birenMalloc(&d, 512));
  OK(birenPointerGetAttributes(&a, d));
  EXPECT(a.type == birenMemoryTypeDevice && a.device == 0);
  OK(birenFree(d));
  return 0;
}

static int device_properties(void) {
  for (int dev = 0; dev < 2; dev++) {
    birenDeviceProp p;
    memset(&p, 0xA5, sizeof p);
    OK(birenGetDeviceProperties(&p, dev));
    EXPECT(memchr(p.name, '\0', sizeof p.name) != NULL);
    EXPECT(strlen(p.name) > 0);
    EXPECT(p.totalGlobalMem > 0);
    EXPECT(p.sharedMemPerBlock > 0);
    EXPECT(p.maxThreadsPerBlock == 1024);
    EXPECT(p.maxThreadsDim[0] == 1024 && p.maxThreadsDim[1] == 1024 && p.maxThreadsDim[2] == 64);
    EXPECT(p.maxGridSize[0] == INT_MAX && p.maxGridSize[1] == 65535 && p.maxGridSize[2] == 65535);
    EXPECT(p.multiProcessorCount >= 1);
    EXPECT(p.asyncEngineCount >= 1);
    EXPECT(p.concurrentKernels == 1);
    EXPECT(p.streamPrioritiesSupported == 1);
    /* totalGlobalMem is the capacity birenMemGetInfo reports on that device. */
    size_t free_b = 0, total_b = 0;
    OK(birenSetDevice(dev));
    OK(birenMemGetInfo(&free_b, &total_b));
    EXPECT(total_b == p.totalGlobalMem);
  }
  OK(birenSetDevice(0));

  birenDeviceProp p, sentinel;
  memset(&p, 0x5A, sizeof p);
  memset(&sentinel, 0x5A, sizeof sentinel);
  const int bad[] = {2, -1, INT_MAX, INT_MIN};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    EXPECT_FAIL(birenGetDeviceProperties(&p, bad[i]), BIREN_ERROR_INVALID_DEVICE);
    EXPECT(memcmp(&p, &sentinel, sizeof p) == 0);
  }
  EXPECT_FAIL(birenGetDeviceProperties(NULL, 0), BIREN_ERROR_INVALID_VALUE);
  return 0;
}

static int stream_priority_range(void) {
  int least = 77, greatest = 77;
  OK(birenDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT(least == 0 && greatest == -5);
  EXPECT(least == BIREN_STREAM_PRIORITY_LEAST && greatest == BIREN_STREAM_PRIORITY_GREATEST);
  /* Either pointer may be NULL: the other is still written. */
  least = greatest = 77;
  OK(birenDeviceGetStreamPriorityRange(&least, NULL));
  EXPECT(least == 0);
  OK(birenDeviceGetStreamPriorityRange(NULL, &greatest));
  EXPECT(greatest == -5);
  OK(birenDeviceGetStreamPriorityRange(NULL, NULL));
  EXPECT_CODE(birenPeekAtLastError(), BIREN_SUCCESS);
  return 0;
}

static int scheduling_policy_per_device(void) {
  birenSchedulingPolicy p = (birenSchedulingPolicy)77;
  OK(birenDeviceGetSchedulingPolicy(&p));
  EXPECT(p == birenSchedulePreemptive); /* the default */
  OK(birenDeviceSetSchedulingPolicy(birenScheduleCooperative));
  OK(birenDeviceGetSchedulingPolicy(&p));
  EXPECT(p == birenScheduleCooperative);
  /* The policy belongs to the current device. */
  OK(birenSetDevice(1));
  OK(birenDeviceGetSchedulingPolicy(&p));
  EXPECT(p == birenSchedulePreemptive);
  OK(birenSetDevice(0));
  /* Unknown values are refused and change nothing. */
  const int bad[] = {2, -1, 77, INT_MIN};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    EXPECT_FAIL(birenDeviceSetSchedulingPolicy((birenSchedulingPolicy)bad[i]), BIREN_ERROR_INVALID_VALUE);
    OK(birenDeviceGetSchedulingPolicy(&p));
    EXPECT(p == birenScheduleCooperative);
  }
  EXPECT_FAIL(birenDeviceGetSchedulingPolicy(NULL), BIREN_ERROR_INVALID_VALUE);
  OK(birenDeviceSetSchedulingPolicy(birenSchedulePreemptive));
  OK(birenDeviceGetSchedulingPolicy(&p));
  EXPECT(p == birenSchedulePreemptive);
  return 0;
}

static int runtime_version(void) {
  int v = -1;
  OK(birenRuntimeGetVersion(&v));
  EXPECT(v >= 10);      /* 1000*major + 10*minor, not 0.0 */
  EXPECT(v % 10 == 0);  /* no patch digit */
  int again = -2;
  OK(birenRuntimeGetVersion(&again));
  EXPECT(again == v);
  EXPECT_FAIL(birenRuntimeGetVersion(NULL), BIREN_ERROR_INVALID_VALUE);
  return 0;
}

/* ---- synchronize and reset ---------------------------------------------------------------- */

static int reset_frees_current_device_memory_only(void) {
  size_t free0 = 0, total0 = 0, f = 0, t = 0;
  OK(birenDeviceSynchronize());
  OK(birenMemGetInfo(&free0, &total0));
  void *d0 = NULL, *d1 = NULL, *h = NULL;
  OK(birenMalloc(&d0, 4096));
  OK(birenMallocHost(&h, 4096));
  OK(birenSetDevice(1));
  OK(birenMalloc(&d1, 4096));
  OK(birenSetDevice(0));
  OK(birenMemGetInfo(&f, &t));
  EXPECT(f + 4096 <= free0);

  OK(birenDeviceReset());
  /* Still initialized, same device, its memory gone. */
  int dev = -1;
  OK(birenGetDevice(&dev));
  EXPECT(dev == 0);
  OK(birenMemGetInfo(&f, &t));
  EXPECT(f == free0 && t == total0);
  birenPointerAttributes a;
  OK(birenPointerGetAttributes(&a, d0));
  EXPECT(a.type == birenMemoryTypeUnregistered);
  EXPECT_FAIL(birenFree(d0), BIREN_ERROR_INVALID_DEVICE_POINTER);
  /* Device 1's memory and page-locked host memory survive. */
  OK(birenPointerGetAttributes(&a, d1));
  EXPECT(a.type == birenMemoryTypeDevice && a.device == 1);
  OK(birenPointerGetAttributes(&a, h));
  EXPECT(a.type == birenMemoryTypeHost);
  memset(h, 1, 4096);
  OK(birenSetDevice(1));
  OK(birenMemset(d1, 3, 4096));
  OK(birenFree(d1));
  OK(birenSetDevice(0));
  OK(birenFreeHost(h));
  /* Usable at once. */
  OK(birenMalloc(&d0, 256));
  OK(birenMemset(d0, 0, 256));
  OK(birenFree(d0));
  OK(birenDeviceSynchronize());
  return 0;
}

/* ---- validator switch --------------------------------------------------------------------- */

static int validator_lines;
static int validator_named_free;

static void on_validator_line(const char *message, void *user) {
  if (user == (void *)&validator_lines) validator_lines++;
  if (message != NULL && strstr(message, "birenFree") != NULL) validator_named_free++;
}

static int validator_reports_to_callback_when_on(void) {
  int local = 0;
  validator_lines = validator_named_free = 0;
  OK(birenSetValidatorCallback(on_validator_line, &validator_lines));
  OK(birenSetDeviceValidator(0));
  EXPECT_FAIL(birenFree(&local), BIREN_ERROR_INVALID_DEVICE_POINTER);
  EXPECT(validator_lines == 0); /* off: no report */
  OK(birenSetDeviceValidator(1));
  EXPECT_FAIL(birenFree(&local), BIREN_ERROR_INVALID_DEVICE_POINTER);
  OK(birenSetDeviceValidator(0));
  OK(birenSetValidatorCallback(NULL, NULL));
  EXPECT(validator_lines >= 1);
  EXPECT(validator_named_free >= 1); /* the line names the call */
  return 0;
}

/* ---- driver ------------------------------------------------------------------------------- */

static const test_case tests[] = {
    TEST(control_calls_before_init_fail_and_write_nothing), /* must stay first */
    TEST(init_is_thread_safe_and_idempotent),              /* must stay second */
    TEST(error_names_and_strings_for_every_code),
    TEST(error_names_and_strings_for_unknown_values),
    TEST(last_error_get_clears_peek_keeps),
    TEST(last_error_is_per_host_thread),
    TEST(device_count_and_current_device),
    TEST(current_device_is_per_host_thread),
    TEST(device_properties),
    TEST(stream_priority_range),
    TEST(scheduling_policy_per_device),
    TEST(runtime_version),
    TEST(reset_frees_current_device_memory_only),
    TEST(validator_reports_to_callback_when_on),
};

/* The first two tests start the runtime themselves; later ones get a clean slate. */
static void before_each(void) {
  static int n;
  if (n++ < 2) return;
  (void)birenInit();
  (void)birenSetDevice(0);
  (void)birenGetLastError();
}

int main(void) {
  /* Configuration is read at birenInit: two devices, default policy, validator off. */
  setenv("BIREN_DEVICE_COUNT", "2", 1);
  unsetenv("BIREN_SCHEDULING");
  unsetenv("BIREN_VALIDATOR");
  return RUN_TESTS("control", tests, before_each, 20);
}
