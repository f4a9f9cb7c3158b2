/* A tiny harness for the C tests: a table of named test functions, run in order; each test
 * function returns 0 on success. Prints one line per test and `N passed, N failed` at the end;
 * exits non-zero if any test failed. A test that hangs is killed by a watchdog (SIGALRM). */
#ifndef BIREN_C_TEST_HARNESS_H
#define BIREN_C_TEST_HARNESS_H

#define _POSIX_C_SOURCE 200809L
#include "biren_runtime.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct test_case {
  const char *name;
  int (*fn)(void);
} test_case;

#define TEST(name) { #name, name }

#define EXPECT(cond)                                                                          \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      fprintf(stderr, "    %s:%d: expected %s\n", __FILE__, __LINE__, #cond);                 \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

#define EXPECT_CODE(call, code)                                                               \
  do {                                                                                        \
    birenError_t expect_code_e_ = (call);                                                     \
    if (expect_code_e_ != (code)) {                                                           \
      fprintf(stderr, "    %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call,  \
              birenGetErrorName(expect_code_e_), birenGetErrorName(code));                    \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

#define OK(call) EXPECT_CODE(call, BIREN_SUCCESS)

/* Monotonic time in seconds. */
static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Busy-waits for `ms` milliseconds (a kernel that takes time without sleeping). */
static inline void spin_ms(double ms) {
  double end = now_s() + ms / 1000.0;
  while (now_s() < end) {
  }
}

/* True when BIREN_UNDER_VALGRIND is set, non-empty and not "0" (`make valgrind` sets it). */
static inline int under_valgrind(void) {
  const char *v = getenv("BIREN_UNDER_VALGRIND");
  return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

/* Set by SKIP_UNDER_VALGRIND: the running test was skipped (reported as `skip`, not `ok`). */
static int harness_skipped = 0;

/* Skips the rest of the running test under valgrind, printing `why`. For a test whose point is
 * an access memcheck reports as an error (a kernel writing to an illegal address, a copy still
 * reading a buffer the program freed, a forked child abandoning the parent's runtime): under
 * memcheck that deliberate access would count as a memory error. Place it at the top of the
 * test, before the access. */
#define SKIP_UNDER_VALGRIND(why)                                                              \
  do {                                                                                        \
    if (under_valgrind()) {                                                                   \
      printf("    skipped under valgrind: %s\n", why);                                        \
      harness_skipped = 1;                                                                    \
      return 0;                                                                               \
    }                                                                                         \
  } while (0)

static const char *harness_current = "";
static void harness_watchdog(int sig) {
  (void)sig;
  static const char msg[] = "    watchdog: test hung: ";
  ssize_t w = write(2, msg, sizeof msg - 1);
  w = write(2, harness_current, strlen(harness_current));
  w = write(2, "\n", 1);
  (void)w;
  _exit(3);
}

/* Runs the tests; `before_each` (may be NULL) runs before every test. */
static inline int run_tests(const char *suite, const test_case *tests, size_t n, void (*before_each)(void), unsigned timeout_s) {
  int passed = 0, failed = 0, skipped = 0;
  signal(SIGALRM, harness_watchdog);
  printf("%s\n", suite);
  for (size_t i = 0; i < n; i++) {
    harness_current = tests[i].name;
    harness_skipped = 0;
    if (before_each) before_each();
    alarm(timeout_s);
    int r = tests[i].fn();
    alarm(0);
    if (r == 0 && harness_skipped) {
      skipped++;
      printf("  skip  %s (under valgrind)\n", tests[i].name);
    } else if (r == 0) {
      passed++;
      printf("  ok    %s\n", tests[i].name);
    } else {
      failed++;
      printf("  FAIL  %s\n", tests[i].name);
    }
    fflush(stdout);
  }
  if (skipped > 0)
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  else
    printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

#define RUN_TESTS(suite, table, before, timeout) run_tests(suite, table, sizeof(table) / sizeof((table)[0]), before, timeout)

#endif
