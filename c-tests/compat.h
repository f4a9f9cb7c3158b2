/* Helpers shared by the tests of the CUDA-compatible families (test_device.c, test_occupancy.c,
 * test_hostmem.c, test_memory2d.c, test_symbols.c, test_misc_api.c). */
#ifndef BIREN_C_TEST_COMPAT_H
#define BIREN_C_TEST_COMPAT_H
#include "harness.h"
#include <pthread.h>

/* `call` returns `code` and leaves it as the calling thread's last error. */
#define EXPECT_FAIL(call, code)                                                              \
  do {                                                                                       \
    (void)birenGetLastError();                                                               \
    EXPECT_CODE(call, code);                                                                 \
    EXPECT_CODE(birenGetLastError(), code);                                                  \
  } while (0)

/* Validator lines captured by a callback: `capture_start()`, failing calls, then
 * `captured(needle)` says whether a line containing needle arrived. */
static pthread_mutex_t compat_lines_lock = PTHREAD_MUTEX_INITIALIZER;
static char compat_lines[16384];
static void compat_sink(const char *msg, void *user) {
  (void)user;
  pthread_mutex_lock(&compat_lines_lock);
  size_t n = strlen(compat_lines);
  if (n + strlen(msg) + 2 < sizeof compat_lines) {
    strcat(compat_lines, msg);
    strcat(compat_lines, "\n");
  }
  pthread_mutex_unlock(&compat_lines_lock);
}
static inline void capture_start(void) {
  compat_lines[0] = 0;
  birenSetValidatorCallback(compat_sink, NULL);
  birenSetDeviceValidator(1);
}
static inline void capture_stop(void) {
  birenSetDeviceValidator(0);
  birenSetValidatorCallback(NULL, NULL);
}
static inline int captured(const char *needle) {
  pthread_mutex_lock(&compat_lines_lock);
  int found = strstr(compat_lines, needle) != NULL;
  pthread_mutex_unlock(&compat_lines_lock);
  return found;
}

static inline void compat_init(void) {
  if (birenInit() != BIREN_SUCCESS) {
    fprintf(stderr, "    birenInit failed\n");
    exit(2);
  }
  (void)birenGetLastError();
}
#endif
