/* Deadlock detection (SPEC §7): cycles refused at enqueue; stalled synchronizes reported. */
#define _GNU_SOURCE
#include "harness.h"
#include <pthread.h>

static void set_flag(void **args) { **(int **)args[0] = *(int *)args[1]; }

/* The seed's case with the future-wait extension: A waits for B's event, B waits for A's. */
static int seed_cycle_refused_at_the_closing_call(void) {
  birenStream_t a, b;
  birenEvent_t ea, eb;
  OK(birenStreamCreate(&a));
  OK(birenStreamCreate(&b));
  OK(birenEventCreate(&ea));
  OK(birenEventCreate(&eb));
  OK(birenStreamWaitEvent(a, eb)); /* a waits for eb's next record */
  OK(birenStreamWaitEvent(b, ea)); /* b waits for ea's next record */
  OK(birenEventRecord(ea, a));     /* ea comes after a's wait: fine so far */
  double t0 = now_s();
  birenError_t e = birenEventRecord(eb, b); /* eb after b's wait on ea, after a's wait on eb: cycle */
  double us = (now_s() - t0) * 1e6;
  printf("    closing record refused in %.1f us\n", us);
  EXPECT(e == BIREN_ERROR_DEADLOCK);
  EXPECT(us < 1000.0);
  EXPECT(birenGetLastError() == BIREN_ERROR_DEADLOCK);
  /* nothing was enqueued: b holds only its wait */
  EXPECT_CODE(birenEventQuery(eb), BIREN_SUCCESS); /* never recorded */
  /* recovery: reset drops the stuck work and invalidates the handles */
  OK(birenDeviceReset());
  EXPECT_CODE(birenStreamQuery(a), BIREN_ERROR_INVALID_HANDLE);
  return 0;
}

static int self_cycle_refused(void) {
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(birenStreamWaitEvent(s, e));
  EXPECT_CODE(birenEventRecord(e, s), BIREN_ERROR_DEADLOCK);
  /* The legacy default stream waits for every blocking stream, so a record there would wait
   * for s, which waits for the record: also a cycle. */
  EXPECT_CODE(birenEventRecord(e, NULL), BIREN_ERROR_DEADLOCK);
  /* recovery by recording the event in an independent stream */
  birenStream_t nb;
  OK(birenStreamCreateWithFlags(&nb, birenStreamNonBlocking));
  OK(birenEventRecord(e, nb));
  OK(birenStreamSynchronize(s));
  OK(birenStreamDestroy(nb));
  OK(birenStreamDestroy(s));
  OK(birenEventDestroy(e));
  return 0;
}

/* A longer cycle: a -> b -> c -> a through three events. */
static int three_stream_cycle_refused(void) {
  birenStream_t s[3];
  birenEvent_t e[3];
  for (int i = 0; i < 3; i++) {
    OK(birenStreamCreate(&s[i]));
    OK(birenEventCreate(&e[i]));
  }
  for (int i = 0; i < 3; i++) OK(birenStreamWaitEvent(s[i], e[(i + 1) % 3]));
  OK(birenEventRecord(e[0], s[0]));
  OK(birenEventRecord(e[1], s[1]));
  EXPECT_CODE(birenEventRecord(e[2], s[2]), BIREN_ERROR_DEADLOCK);
  /* recording e[2] on a fresh stream resolves everything */
  birenStream_t t;
  OK(birenStreamCreate(&t));
  OK(birenEventRecord(e[2], t));
  OK(birenDeviceSynchronize());
  for (int i = 0; i < 3; i++) {
    OK(birenStreamDestroy(s[i]));
    OK(birenEventDestroy(e[i]));
  }
  OK(birenStreamDestroy(t));
  return 0;
}

/* Plain CUDA-style use (record before wait) never forms a cycle and is never refused. */
static int ordinary_cross_waits_are_not_refused(void) {
  birenStream_t a, b;
  birenEvent_t ea, eb;
  OK(birenStreamCreate(&a));
  OK(birenStreamCreate(&b));
  OK(birenEventCreate(&ea));
  OK(birenEventCreate(&eb));
  for (int i = 0; i < 50; i++) {
    OK(birenEventRecord(ea, a));
    OK(birenEventRecord(eb, b));
    OK(birenStreamWaitEvent(a, eb));
    OK(birenStreamWaitEvent(b, ea));
  }
  OK(birenDeviceSynchronize());
  OK(birenStreamDestroy(a));
  OK(birenStreamDestroy(b));
  OK(birenEventDestroy(ea));
  OK(birenEventDestroy(eb));
  return 0;
}

static int stalled_sync_reports_deadlock_after_the_timeout(void) {
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(birenStreamWaitEvent(s, e)); /* never recorded: waits for a record nobody makes */
  double t0 = now_s();
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_DEADLOCK);
  double ms = (now_s() - t0) * 1000.0;
  printf("    stream sync returned DEADLOCK after %.0f ms (timeout 200)\n", ms);
  EXPECT(ms >= 195.0);
  EXPECT(ms < 2000.0);
  t0 = now_s();
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_DEADLOCK);
  EXPECT((now_s() - t0) * 1000.0 >= 195.0);
  /* an event recorded after the stuck wait is stuck too */
  birenEvent_t after;
  OK(birenEventCreate(&after));
  OK(birenEventRecord(after, s));
  EXPECT_CODE(birenEventSynchronize(after), BIREN_ERROR_DEADLOCK);
  /* recovery: record the awaited event; everything completes */
  birenStream_t nb;
  OK(birenStreamCreateWithFlags(&nb, birenStreamNonBlocking));
  OK(birenEventRecord(e, nb));
  OK(birenStreamDestroy(nb));
  OK(birenStreamSynchronize(s));
  OK(birenEventSynchronize(after));
  OK(birenStreamDestroy(s));
  OK(birenEventDestroy(e));
  OK(birenEventDestroy(after));
  return 0;
}

struct late_record {
  birenEvent_t e;
  birenStream_t on;
  double delay_ms;
  birenError_t result;
};

static void *record_later(void *p) {
  struct late_record *r = (struct late_record *)p;
  spin_ms(r->delay_ms);
  r->result = birenEventRecord(r->e, r->on);
  return NULL;
}

static int record_from_another_thread_within_the_grace_period_succeeds(void) {
  birenStream_t s;
  pthread_t t;
  int *flag, one = 1;
  struct late_record r;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&r.e));
  OK(birenMallocHost((void **)&flag, sizeof(int)));
  *flag = 0;
  OK(birenStreamWaitEvent(s, r.e));
  OK(BIREN_LAUNCH(set_flag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, flag, one));
  OK(birenStreamCreateWithFlags(&r.on, birenStreamNonBlocking));
  r.delay_ms = 80.0;
  pthread_create(&t, NULL, record_later, &r);
  double t0 = now_s();
  OK(birenStreamSynchronize(s));
  pthread_join(t, NULL);
  EXPECT(r.result == BIREN_SUCCESS);
  EXPECT(*flag == 1);
  EXPECT((now_s() - t0) * 1000.0 >= 60.0);
  OK(birenStreamDestroy(r.on));
  OK(birenStreamDestroy(s));
  OK(birenEventDestroy(r.e));
  OK(birenFreeHost(flag));
  return 0;
}

/* Long-running work that is not blocked on a future is never reported as a deadlock. */
static void busy(void **args) { spin_ms(*(double *)args[0]); }

static int long_work_is_not_a_deadlock(void) {
  birenStream_t s, other;
  birenEvent_t never;
  double ms = 500.0;
  OK(birenStreamCreate(&s));
  OK(birenStreamCreate(&other));
  OK(birenEventCreate(&never));
  OK(birenStreamWaitEvent(other, never)); /* an unrelated stalled stream exists */
  OK(BIREN_LAUNCH(busy, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, ms));
  OK(birenStreamSynchronize(s));
  OK(birenDeviceReset());
  return 0;
}

static char captured[4096];
static void capture(const char *msg, void *user) {
  (void)user;
  size_t n = strlen(captured);
  snprintf(captured + n, sizeof captured - n, "%s\n", msg);
}

/* With the validator on, the refusal names the streams and the event of the cycle. */
static int validator_describes_the_cycle(void) {
  birenStream_t a, b;
  birenEvent_t ea, eb;
  captured[0] = 0;
  OK(birenSetValidatorCallback(capture, NULL));
  OK(birenSetDeviceValidator(1));
  OK(birenStreamCreate(&a));
  OK(birenStreamCreate(&b));
  OK(birenEventCreate(&ea));
  OK(birenEventCreate(&eb));
  OK(birenStreamWaitEvent(a, eb));
  OK(birenStreamWaitEvent(b, ea));
  OK(birenEventRecord(ea, a));
  EXPECT_CODE(birenEventRecord(eb, b), BIREN_ERROR_DEADLOCK);
  OK(birenSetDeviceValidator(0));
  OK(birenSetValidatorCallback(NULL, NULL));
  printf("    %s", captured);
  EXPECT(strstr(captured, "birenEventRecord") != NULL);
  EXPECT(strstr(captured, "cycle") != NULL);
  EXPECT(strstr(captured, "stream #") != NULL);
  EXPECT(strstr(captured, "event #") != NULL);
  return 0;
}

static const test_case tests[] = {
    TEST(validator_describes_the_cycle),
    TEST(seed_cycle_refused_at_the_closing_call),
    TEST(self_cycle_refused),
    TEST(three_stream_cycle_refused),
    TEST(ordinary_cross_waits_are_not_refused),
    TEST(stalled_sync_reports_deadlock_after_the_timeout),
    TEST(record_from_another_thread_within_the_grace_period_succeeds),
    TEST(long_work_is_not_a_deadlock),
};

static void reset(void) { birenDeviceReset(); }

int main(void) {
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("deadlock", tests, reset, 30);
}
