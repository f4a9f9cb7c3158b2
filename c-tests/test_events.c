/* Events: edges between streams, what a wait captures, waits on never-recorded events (BIREN
 * extension), queries, elapsed time, destroy with a pending record, destroyed and forged handles. */
#include "timed_kernels.h"

/* args: (const int *src, int *dst, interval *iv). Records when it ran; *dst = *src + 1. */
static void read_plus_one(void **args) {
  const int *src = *(const int **)args[0];
  int *dst = *(int **)args[1];
  interval *iv = *(interval **)args[2];
  iv->start = now_s();
  *dst = *src + 1;
  iv->end = now_s();
}

/* args: (int *dst, int value, double ms, interval *iv). Busy-waits ms, then *dst = value. */
static void slow_write(void **args) {
  int *dst = *(int **)args[0];
  int v = *(int *)args[1];
  double ms = *(double *)args[2];
  interval *iv = *(interval **)args[3];
  iv->start = now_s();
  spin_ms(ms);
  *dst = v;
  iv->end = now_s();
}

static int event_edge_orders_work_across_streams(void) {
  NEED_TWO_COMPUTE_UNITS(); /* without concurrency the order would hold trivially */
  int *buf, *out, h = 0, v = 42;
  double ms = 150;
  interval a, b, *pa = &a, *pb = &b;
  birenStream_t s1, s2;
  birenEvent_t e;
  OK(birenStreamCreate(&s1));
  OK(birenStreamCreate(&s2));
  OK(birenEventCreate(&e));
  OK(birenMalloc((void **)&buf, sizeof(int)));
  OK(birenMalloc((void **)&out, sizeof(int)));
  OK(birenMemset(buf, 0, sizeof(int)));
  OK(BIREN_LAUNCH(slow_write, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s1, buf, v, ms, pa));
  OK(birenEventRecord(e, s1));
  OK(birenStreamWaitEvent(s2, e));
  OK(BIREN_LAUNCH(read_plus_one, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s2, buf, out, pb));
  /* the wait does not block the host */
  EXPECT_CODE(birenStreamQuery(s2), BIREN_ERROR_NOT_READY);
  OK(birenStreamSynchronize(s2));
  OK(birenMemcpy(&h, out, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 43);
  EXPECT(before(a, b));
  return 0;
}

/* Non-blocking streams throughout, so the default stream's rules play no part. */
static int wait_ignores_later_rerecord_to_a_finished_point(void) {
  interval a, b;
  birenStream_t s1, s2, s3;
  birenEvent_t e;
  OK(birenStreamCreateWithFlags(&s1, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s2, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s3, birenStreamNonBlocking));
  OK(birenEventCreate(&e));
  OK(launch_timed_spin(&a, 150, s1));
  OK(birenEventRecord(e, s1));
  OK(birenStreamWaitEvent(s2, e)); /* captures "after a" */
  OK(birenEventRecord(e, s3));     /* s3 is empty: this record is reached at once */
  OK(birenEventSynchronize(e));
  OK(launch_timed_spin(&b, 1, s2));
  OK(birenDeviceSynchronize());
  EXPECT(before(a, b));
  return 0;
}

static int wait_ignores_later_rerecord_to_a_later_point(void) {
  NEED_TWO_COMPUTE_UNITS();
  interval a, b, c;
  birenStream_t s1, s2, s3;
  birenEvent_t e;
  OK(birenStreamCreateWithFlags(&s1, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s2, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s3, birenStreamNonBlocking));
  OK(birenEventCreate(&e));
  OK(launch_timed_spin(&a, 20, s1));
  OK(birenEventRecord(e, s1));
  OK(birenStreamWaitEvent(s2, e)); /* captures "after a" */
  OK(launch_timed_spin(&c, 400, s3));
  OK(birenEventRecord(e, s3)); /* now "after c": the wait above must not follow */
  OK(launch_timed_spin(&b, 1, s2));
  OK(birenDeviceSynchronize());
  EXPECT(before(a, b));
  EXPECT(b.end < c.end);
  return 0;
}

static int wait_on_never_recorded_event_holds_until_first_record(void) {
  int flag = 0;
  interval b;
  birenStream_t s1, s2;
  birenEvent_t e;
  OK(birenStreamCreate(&s1));
  OK(birenStreamCreate(&s2));
  OK(birenEventCreate(&e));
  OK(birenStreamWaitEvent(s2, e)); /* never recorded: waits for the next record */
  OK(launch_store_int(&flag, 1, s2));
  OK(launch_timed_spin(&b, 1, s2));
  sleep_ms(150);
  EXPECT_CODE(birenStreamQuery(s2), BIREN_ERROR_NOT_READY);
  EXPECT(load_int(&flag) == 0);
  double recorded_at = now_s();
  OK(birenEventRecord(e, s1));
  OK(birenStreamSynchronize(s2));
  EXPECT(load_int(&flag) == 1);
  EXPECT(b.start >= recorded_at);
  return 0;
}

static int wait_on_never_recorded_event_follows_the_record_point(void) {
  interval a, b;
  birenStream_t s1, s2;
  birenEvent_t e;
  OK(birenStreamCreate(&s1));
  OK(birenStreamCreate(&s2));
  OK(birenEventCreate(&e));
  OK(birenStreamWaitEvent(s2, e));
  OK(launch_timed_spin(&b, 1, s2));
  OK(launch_timed_spin(&a, 150, s1));
  OK(birenEventRecord(e, s1)); /* the first record comes after a: b waits for a */
  OK(birenDeviceSynchronize());
  EXPECT(before(a, b));
  return 0;
}

/* The default stream can wait for an event too (here of a non-blocking stream, which it would
 * otherwise not wait for). */
static int default_stream_waits_for_event(void) {
  interval a, b;
  birenStream_t ns;
  birenEvent_t e;
  OK(birenStreamCreateWithFlags(&ns, birenStreamNonBlocking));
  OK(birenEventCreate(&e));
  OK(launch_timed_spin(&a, 150, ns));
  OK(birenEventRecord(e, ns));
  OK(birenStreamWaitEvent(NULL, e));
  OK(launch_timed_spin(&b, 1, NULL));
  OK(birenStreamSynchronize(NULL));
  EXPECT(before(a, b));
  return 0;
}

/* A stream may wait for an earlier record of its own (no cycle: it is already behind it). */
static int stream_waits_for_its_own_earlier_record(void) {
  interval a, b;
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(launch_timed_spin(&a, 50, s));
  OK(birenEventRecord(e, s));
  OK(birenStreamWaitEvent(s, e));
  OK(launch_timed_spin(&b, 1, s));
  OK(birenStreamSynchronize(s));
  EXPECT(before(a, b));
  return 0;
}

/* A record pending in a stream that is destroyed is still reached. */
static int record_in_destroyed_stream_still_completes(void) {
  int flag = 0;
  interval a;
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(launch_timed_spin(&a, 100, s));
  OK(launch_store_int(&flag, 1, s));
  OK(birenEventRecord(e, s));
  OK(birenStreamDestroy(s));
  EXPECT_CODE(birenEventQuery(e), BIREN_ERROR_NOT_READY);
  OK(birenEventSynchronize(e));
  EXPECT(load_int(&flag) == 1);
  OK(birenEventQuery(e));
  return 0;
}

/* A wait on a never-recorded event takes the first record; a re-record after it does not move it. */
static int wait_on_never_recorded_event_keeps_the_first_record(void) {
  NEED_TWO_COMPUTE_UNITS();
  interval a, b, c;
  birenStream_t s1, s2, s3;
  birenEvent_t e;
  OK(birenStreamCreateWithFlags(&s1, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s2, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s3, birenStreamNonBlocking));
  OK(birenEventCreate(&e));
  OK(birenStreamWaitEvent(s2, e));
  OK(launch_timed_spin(&b, 1, s2));
  OK(launch_timed_spin(&a, 20, s1));
  OK(birenEventRecord(e, s1)); /* the first record: after a */
  OK(launch_timed_spin(&c, 400, s3));
  OK(birenEventRecord(e, s3)); /* a later one: after c */
  OK(birenDeviceSynchronize());
  EXPECT(before(a, b));
  EXPECT(b.end < c.end);
  return 0;
}

/* A record on the default stream is reached only after earlier work in blocking streams. */
static int record_on_default_stream_follows_blocking_streams(void) {
  interval a;
  int flag = 0;
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(launch_timed_spin(&a, 100, s));
  OK(launch_store_int(&flag, 1, s));
  OK(birenEventRecord(e, NULL));
  EXPECT_CODE(birenEventQuery(e), BIREN_ERROR_NOT_READY);
  OK(birenEventSynchronize(e));
  EXPECT(load_int(&flag) == 1);
  return 0;
}

/* Many streams may wait for one record. */
static int many_streams_wait_for_one_record(void) {
  enum { K = 6 };
  interval a, b[K];
  birenStream_t src, s[K];
  birenEvent_t e;
  OK(birenStreamCreateWithFlags(&src, birenStreamNonBlocking));
  OK(birenEventCreate(&e));
  OK(launch_timed_spin(&a, 100, src));
  OK(birenEventRecord(e, src));
  for (int i = 0; i < K; i++) {
    OK(birenStreamCreateWithFlags(&s[i], birenStreamNonBlocking));
    OK(birenStreamWaitEvent(s[i], e));
    OK(launch_timed_spin(&b[i], 1, s[i]));
  }
  OK(birenDeviceSynchronize());
  for (int i = 0; i < K; i++) EXPECT(before(a, b[i]));
  return 0;
}

/* args: (int *v, int i, double ms). Busy-waits ms, then *v = 3 * *v + i (order matters). */
static void mix_in(void **args) {
  int *v = *(int **)args[0];
  int i = *(int *)args[1];
  double ms = *(double *)args[2];
  spin_ms(ms);
  *v = 3 * *v + i;
}

/* A chain of streams, each waiting for the previous one's event: the steps run in chain order. */
static int event_chain_across_many_streams(void) {
  enum { K = 8 };
  int *d, h = 0, expect = 1;
  double ms = 10;
  birenStream_t s[K];
  birenEvent_t e[K];
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMemcpy(d, &expect, sizeof expect, birenMemcpyHostToDevice));
  /* created and enqueued in reverse, so that without the waits the last step would run first */
  for (int i = 0; i < K; i++) {
    OK(birenStreamCreateWithFlags(&s[i], birenStreamNonBlocking));
    OK(birenEventCreate(&e[i]));
  }
  for (int i = K - 1; i >= 0; i--) {
    if (i > 0) OK(birenStreamWaitEvent(s[i], e[i - 1])); /* not recorded yet: waits for its first record */
    OK(BIREN_LAUNCH(mix_in, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s[i], d, i, ms));
    OK(birenEventRecord(e[i], s[i]));
  }
  OK(birenEventSynchronize(e[K - 1]));
  OK(birenDeviceSynchronize());
  for (int i = 0; i < K; i++) expect = 3 * expect + i;
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == expect);
  return 0;
}

static int never_recorded_event_query_and_synchronize_succeed(void) {
  birenEvent_t e;
  OK(birenEventCreate(&e));
  OK(birenEventQuery(e));
  double t0 = now_s();
  OK(birenEventSynchronize(e));
  EXPECT(now_s() - t0 < 0.1);
  return 0;
}

static int event_query_not_ready_then_success(void) {
  interval a;
  int flag = 0;
  birenStream_t s;
  birenEvent_t e;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&e));
  OK(launch_timed_spin(&a, 100, s));
  OK(launch_store_int(&flag, 1, s));
  OK(birenEventRecord(e, s));
  (void)birenGetLastError();
  EXPECT_CODE(birenEventQuery(e), BIREN_ERROR_NOT_READY);
  EXPECT_CODE(birenGetLastError(), BIREN_SUCCESS); /* NOT_READY does not set the last error */
  OK(birenEventSynchronize(e));
  EXPECT(load_int(&flag) == 1); /* the record was reached only after the earlier work */
  OK(birenEventQuery(e));
  /* a record on the default stream */
  OK(launch_timed_spin(&a, 100, NULL));
  OK(birenEventRecord(e, NULL));
  EXPECT_CODE(birenEventQuery(e), BIREN_ERROR_NOT_READY);
  OK(birenEventSynchronize(e));
  OK(birenEventQuery(e));
  return 0;
}

static int event_elapsed_time(void) {
  interval k;
  float ms = -1.0f;
  birenStream_t s;
  birenEvent_t start, stop, never, untimed, blocking;
  OK(birenStreamCreate(&s));
  OK(birenEventCreate(&start));
  OK(birenEventCreate(&stop));
  OK(birenEventCreate(&never));
  OK(birenEventCreateWithFlags(&untimed, birenEventDisableTiming));
  OK(birenEventCreateWithFlags(&blocking, birenEventBlockingSync));
  OK(birenEventRecord(start, s));
  OK(launch_timed_spin(&k, 50, s));
  OK(birenEventRecord(stop, s));
  OK(birenEventRecord(untimed, s));
  /* before completion */
  EXPECT_CODE(birenEventElapsedTime(&ms, start, stop), BIREN_ERROR_NOT_READY);
  EXPECT(ms == -1.0f);
  OK(birenEventSynchronize(stop));
  OK(birenEventElapsedTime(&ms, start, stop));
  if (ms < 49.0f || ms > 2000.0f) fprintf(stderr, "    elapsed %.3f ms for a 50 ms kernel\n", (double)ms);
  EXPECT(ms >= 49.0f && ms < 2000.0f);
  /* never recorded, timing disabled */
  float other = -1.0f;
  EXPECT_CODE(birenEventElapsedTime(&other, start, never), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventElapsedTime(&other, never, stop), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventElapsedTime(&other, start, untimed), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventElapsedTime(&other, untimed, stop), BIREN_ERROR_INVALID_HANDLE);
  EXPECT(other == -1.0f);
  EXPECT_CODE(birenEventElapsedTime(NULL, start, stop), BIREN_ERROR_INVALID_VALUE);
  OK(birenEventElapsedTime(&other, stop, stop));
  EXPECT(other == 0.0f);
  OK(birenEventElapsedTime(&other, stop, start)); /* the other way round: negative, as CUDA */
  EXPECT(other == -ms);
  /* a blocking-sync event times like any other */
  OK(birenEventRecord(blocking, s));
  OK(birenEventSynchronize(blocking));
  OK(birenEventElapsedTime(&other, start, blocking));
  EXPECT(other >= ms);
  /* NOT_READY while the end is pending, although the start was reached */
  OK(launch_timed_spin(&k, 100, s));
  OK(birenEventRecord(stop, s));
  EXPECT_CODE(birenEventElapsedTime(&other, start, stop), BIREN_ERROR_NOT_READY);
  OK(birenStreamSynchronize(s));
  OK(birenEventElapsedTime(&other, start, stop));
  EXPECT(other >= ms + 99.0f);
  return 0;
}

static int event_destroy_with_pending_record_is_safe(void) {
  interval a, b;
  birenStream_t s1, s2;
  birenEvent_t e;
  OK(birenStreamCreate(&s1));
  OK(birenStreamCreate(&s2));
  OK(birenEventCreate(&e));
  OK(launch_timed_spin(&a, 150, s1));
  OK(birenEventRecord(e, s1));
  OK(birenStreamWaitEvent(s2, e));
  double t0 = now_s();
  OK(birenEventDestroy(e)); /* the record is still pending */
  EXPECT(now_s() - t0 < 0.1);
  OK(launch_timed_spin(&b, 1, s2));
  /* the wait made before the destroy still holds */
  OK(birenStreamSynchronize(s2));
  EXPECT(before(a, b));
  OK(birenDeviceSynchronize());
  EXPECT_CODE(birenEventQuery(e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventDestroy(e), BIREN_ERROR_INVALID_HANDLE);
  return 0;
}

static int check_dead_event(birenEvent_t e) {
  float ms;
  birenEvent_t good;
  birenStream_t s;
  OK(birenEventCreate(&good));
  OK(birenStreamCreate(&s));
  OK(birenEventRecord(good, s));
  OK(birenEventSynchronize(good));
  EXPECT_CODE(birenEventRecord(e, s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventRecord(e, NULL), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventQuery(e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventSynchronize(e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventElapsedTime(&ms, e, good), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventElapsedTime(&ms, good, e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamWaitEvent(s, e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamWaitEvent(NULL, e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenEventDestroy(e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenGetLastError(), BIREN_ERROR_INVALID_HANDLE);
  /* nothing was enqueued by the failed calls */
  OK(birenStreamQuery(s));
  OK(birenStreamSynchronize(s));
  OK(birenStreamDestroy(s));
  OK(birenEventDestroy(good));
  return 0;
}

static int destroyed_and_forged_event_handles_are_invalid(void) {
  birenEvent_t e, e2;
  birenStream_t s;
  OK(birenEventCreate(&e));
  OK(birenEventDestroy(e));
  EXPECT(check_dead_event(e) == 0);
  OK(birenEventCreate(&e2));
  if (e2 != e) EXPECT(check_dead_event(e) == 0);
  OK(birenEventQuery(e2));
  EXPECT(check_dead_event((birenEvent_t)0x12345) == 0);
  EXPECT(check_dead_event((birenEvent_t)(uintptr_t)0xdeadbeefcafeULL) == 0);
  EXPECT(check_dead_event((birenEvent_t)(uintptr_t)~(uintptr_t)0) == 0);
  EXPECT(check_dead_event(NULL) == 0);
  /* a stream handle is not an event handle */
  OK(birenStreamCreate(&s));
  EXPECT(check_dead_event((birenEvent_t)(void *)s) == 0);
  OK(birenDeviceSynchronize());
  return 0;
}

static const test_case tests[] = {
    TEST(event_edge_orders_work_across_streams),
    TEST(wait_ignores_later_rerecord_to_a_finished_point),
    TEST(wait_ignores_later_rerecord_to_a_later_point),
    TEST(wait_on_never_recorded_event_holds_until_first_record),
    TEST(wait_on_never_recorded_event_follows_the_record_point),
    TEST(default_stream_waits_for_event),
    TEST(stream_waits_for_its_own_earlier_record),
    TEST(record_in_destroyed_stream_still_completes),
    TEST(wait_on_never_recorded_event_keeps_the_first_record),
    TEST(record_on_default_stream_follows_blocking_streams),
    TEST(many_streams_wait_for_one_record),
    TEST(event_chain_across_many_streams),
    TEST(never_recorded_event_query_and_synchronize_succeed),
    TEST(event_query_not_ready_then_success),
    TEST(event_elapsed_time),
    TEST(event_destroy_with_pending_record_is_safe),
    TEST(destroyed_and_forged_event_handles_are_invalid),
};

int main(void) {
  want_two_compute_units();
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("events", tests, reset_device, 20);
}
