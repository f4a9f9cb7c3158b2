/* BIREN_DEADLOCK_TIMEOUT_MS=0: a stalled synchronize reports DEADLOCK at once. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

static int stalled_sync_fails_at_once(void) {
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(birenStreamWaitEvent(s, e));
  double t0 = now_s();
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_DEADLOCK);
  EXPECT((now_s() - t0) * 1000.0 < 50.0);
  OK(birenDeviceReset());
  return 0;
}

static const test_case tests[] = {TEST(stalled_sync_fails_at_once)};

int main(void) {
  setenv("BIREN_DEADLOCK_TIMEOUT_MS", "0", 1);
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("deadlock timeout 0", tests, NULL, 30);
}
