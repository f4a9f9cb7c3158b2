/* Stream capture: nothing runs while capturing; the captured graph runs the same work; fork and
 * join across three streams; the errors for what is illegal while capturing (unsupported calls,
 * invalidation, unjoined forks, isolation, implicit default-stream dependencies, captured events,
 * wrong thread, unmatched end); capture modes across threads; status queries. */
#include "timed_kernels.h"

#include <pthread.h>

/* args: (int *p, int i, int v): p[i] = v. */
static void put(void **args) {
  int *p = *(int **)args[0];
  int i = *(int *)args[1];
  int v = *(int *)args[2];
  p[i] = v;
}

/* args: (int *p, int i, int j): p[j] = p[i] + 1 (reads a result of an earlier node). */
static void inc_into(void **args) {
  int *p = *(int **)args[0];
  int i = *(int *)args[1];
  int j = *(int *)args[2];
  p[j] = p[i] + 1;
}

static void host_count(void *p) { __atomic_fetch_add((int *)p, 1, __ATOMIC_SEQ_CST); }

static birenError_t put_on(int *p, int i, int v, birenStream_t s) {
  return BIREN_LAUNCH(put, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, p, i, v);
}
static birenError_t inc_on(int *p, int i, int j, birenStream_t s) {
  return BIREN_LAUNCH(inc_into, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, s, p, i, j);
}

static birenStreamCaptureStatus status_of(birenStream_t s) {
  birenStreamCaptureStatus st = (birenStreamCaptureStatus)99;
  if (birenStreamIsCapturing(s, &st) != BIREN_SUCCESS) return (birenStreamCaptureStatus)98;
  return st;
}

/* Kernels, copies, memsets and host functions are captured, not run; the graph runs them. */
static int nothing_runs_while_capturing(void) {
  int *d, h[4] = {0}, counter = 0;
  birenStream_t s;
  birenGraph_t g;
  birenGraphExec_t e;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMemset(d, 0, sizeof h));
  EXPECT(status_of(s) == birenStreamCaptureStatusNone);
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeGlobal));
  EXPECT(status_of(s) == birenStreamCaptureStatusActive);
  OK(birenMemsetAsync(d, 0, sizeof h, s));
  OK(put_on(d, 0, 41, s));
  OK(inc_on(d, 0, 1, s));
  OK(birenLaunchHostFunc(s, host_count, &counter));
  OK(birenMemcpyAsync(h, d, sizeof h, birenMemcpyDeviceToHost, s));
  sleep_ms(20);
  EXPECT(load_int(&counter) == 0);
  EXPECT(h[0] == 0 && h[1] == 0);
  OK(birenStreamEndCapture(s, &g));
  EXPECT(status_of(s) == birenStreamCaptureStatusNone);
  size_t n = 0, ne = 0;
  OK(birenGraphGetNodes(g, NULL, &n));
  OK(birenGraphGetEdges(g, NULL, NULL, &ne));
  EXPECT(n == 5 && ne == 4); /* a chain */
  birenGraphNode_t nodes[5];
  OK(birenGraphGetNodes(g, nodes, &n));
  birenGraphNodeType t;
  OK(birenGraphNodeGetType(nodes[0], &t));
  EXPECT(t == birenGraphNodeTypeMemset);
  OK(birenGraphNodeGetType(nodes[3], &t));
  EXPECT(t == birenGraphNodeTypeHost);
  OK(birenGraphInstantiate(&e, g, 0));
  for (int i = 0; i < 3; i++) {
    h[0] = h[1] = 0;
    OK(birenGraphLaunch(e, s));
    OK(birenStreamSynchronize(s));
    EXPECT(h[0] == 41 && h[1] == 42);
  }
  EXPECT(load_int(&counter) == 3);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(s));
  OK(birenFree(d));
  return 0;
}

/* Fork into two more streams with events and join back: the graph has the diamond's edges and
 * runs the branches after the fork and the tail after both. */
static int fork_and_join_across_three_streams(void) {
  int *d, h[5] = {0};
  birenStream_t s0, s1, s2;
  birenEvent_t fork, j1, j2;
  birenGraph_t g;
  birenGraphExec_t e;
  OK(birenStreamCreate(&s0));
  OK(birenStreamCreate(&s1));
  OK(birenStreamCreate(&s2));
  OK(birenEventCreate(&fork));
  OK(birenEventCreate(&j1));
  OK(birenEventCreate(&j2));
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMemset(d, 0, sizeof h));
  OK(birenStreamBeginCapture(s0, birenStreamCaptureModeGlobal));
  OK(put_on(d, 0, 10, s0));
  OK(birenEventRecord(fork, s0));
  OK(birenStreamWaitEvent(s1, fork));
  OK(birenStreamWaitEvent(s2, fork));
  EXPECT(status_of(s1) == birenStreamCaptureStatusActive);
  EXPECT(status_of(s2) == birenStreamCaptureStatusActive);
  OK(inc_on(d, 0, 1, s1));
  OK(inc_on(d, 0, 2, s2));
  OK(birenEventRecord(j1, s1));
  OK(birenEventRecord(j2, s2));
  EXPECT_CODE(birenEventQuery(j1), BIREN_ERROR_CAPTURED_EVENT);
  EXPECT_CODE(birenEventSynchronize(j2), BIREN_ERROR_CAPTURED_EVENT);
  OK(birenStreamWaitEvent(s0, j1));
  OK(birenStreamWaitEvent(s0, j2));
  birenStreamCaptureStatus st;
  unsigned long long id = 0;
  birenGraph_t building = NULL;
  const birenGraphNode_t *deps = NULL;
  size_t nd = 0;
  OK(birenStreamGetCaptureInfo(s0, &st, &id, &building, &deps, &nd));
  EXPECT(st == birenStreamCaptureStatusActive && id != 0 && building != NULL && nd == 2 && deps != NULL);
  unsigned long long id1 = 0;
  OK(birenStreamGetCaptureInfo(s1, &st, &id1, NULL, NULL, NULL));
  EXPECT(id1 == id);
  OK(inc_on(d, 1, 3, s0));
  OK(inc_on(d, 3, 4, s0));
  /* Only the origin stream can end it. */
  EXPECT_CODE(birenStreamEndCapture(s1, &g), BIREN_ERROR_STREAM_CAPTURE_UNMATCHED);
  OK(birenStreamEndCapture(s0, &g));
  EXPECT(g == building);
  EXPECT(status_of(s1) == birenStreamCaptureStatusNone);
  EXPECT(status_of(s2) == birenStreamCaptureStatusNone);
  size_t n = 0, ne = 0, nr = 0;
  OK(birenGraphGetNodes(g, NULL, &n));
  OK(birenGraphGetEdges(g, NULL, NULL, &ne));
  OK(birenGraphGetRootNodes(g, NULL, &nr));
  EXPECT(n == 5 && ne == 5 && nr == 1); /* 0->1, 0->2, 1->3, 2->3, 3->4 */
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, s0));
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h[0] == 10 && h[1] == 11 && h[2] == 11 && h[3] == 12 && h[4] == 13);
  /* After the capture, the events are ordinary again. */
  OK(birenEventRecord(j1, s1));
  OK(birenEventSynchronize(j1));
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(fork));
  OK(birenEventDestroy(j1));
  OK(birenEventDestroy(j2));
  OK(birenStreamDestroy(s0));
  OK(birenStreamDestroy(s1));
  OK(birenStreamDestroy(s2));
  OK(birenFree(d));
  return 0;
}

/* A forked stream that does not join back: UNJOINED, the capture ends without a graph. */
static int unjoined_fork_is_refused(void) {
  int *d;
  birenStream_t s0, s1;
  birenEvent_t fork;
  birenGraph_t g = NULL;
  OK(birenStreamCreate(&s0));
  OK(birenStreamCreate(&s1));
  OK(birenEventCreate(&fork));
  OK(birenMalloc((void **)&d, 8));
  OK(birenStreamBeginCapture(s0, birenStreamCaptureModeGlobal));
  OK(put_on(d, 0, 1, s0));
  OK(birenEventRecord(fork, s0));
  OK(birenStreamWaitEvent(s1, fork));
  OK(put_on(d, 1, 1, s1));
  EXPECT_CODE(birenStreamEndCapture(s0, &g), BIREN_ERROR_STREAM_CAPTURE_UNJOINED);
  EXPECT(g == NULL);
  EXPECT(status_of(s0) == birenStreamCaptureStatusNone);
  EXPECT(status_of(s1) == birenStreamCaptureStatusNone);
  /* A fork that did nothing after waiting counts as joined. */
  OK(birenStreamBeginCapture(s0, birenStreamCaptureModeGlobal));
  OK(put_on(d, 0, 1, s0));
  OK(birenEventRecord(fork, s0));
  OK(birenStreamWaitEvent(s1, fork));
  OK(birenStreamEndCapture(s0, &g));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(fork));
  OK(birenStreamDestroy(s0));
  OK(birenStreamDestroy(s1));
  OK(birenFree(d));
  return 0;
}

/* Synchronizing or querying a capturing stream: UNSUPPORTED, and the capture is invalidated:
 * later captured work gets INVALIDATED, and so does the end. */
static int sync_of_capturing_stream_invalidates(void) {
  int *d;
  birenStream_t s;
  birenGraph_t g = NULL;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, 8));
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  OK(put_on(d, 0, 1, s));
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT(status_of(s) == birenStreamCaptureStatusInvalidated);
  EXPECT_CODE(put_on(d, 0, 1, s), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_CODE(birenStreamEndCapture(s, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT(g == NULL);
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_CODE(birenStreamEndCapture(s, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  /* The stream works normally afterwards. */
  OK(put_on(d, 0, 5, s));
  OK(birenStreamSynchronize(s));
  OK(birenStreamDestroy(s));
  OK(birenFree(d));
  return 0;
}

/* Global mode: this thread's birenMalloc, birenMemcpy, birenDeviceSynchronize are refused and
 * invalidate the capture; relaxed mode allows them. */
static int unsafe_calls_by_mode(void) {
  int *d, *x = NULL, h = 0;
  birenStream_t s;
  birenGraph_t g = NULL;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, 8));
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeGlobal));
  EXPECT_CODE(birenMalloc((void **)&x, 8), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT(x == NULL);
  EXPECT_CODE(birenMemcpy(&h, d, 4, birenMemcpyDeviceToHost), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_CODE(birenFree(d), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_CODE(birenStreamEndCapture(s, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  /* Thread-local: the same calls are refused in this thread too. */
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeThreadLocal));
  EXPECT_CODE(birenMalloc((void **)&x, 8), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_CODE(birenStreamEndCapture(s, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  /* Relaxed: allowed (and a synchronous copy does not touch the capturing stream). */
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  OK(birenMalloc((void **)&x, 8));
  OK(birenFree(x));
  OK(birenStreamEndCapture(s, &g));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(s));
  OK(birenFree(d));
  return 0;
}

/* Work on the default stream while a blocking stream captures would make it wait for the
 * capture: STREAM_CAPTURE_IMPLICIT, and the capture is invalidated. Non-blocking captures are not
 * affected. Capturing the default stream itself is unsupported. */
static int default_stream_during_capture(void) {
  int *d;
  birenStream_t s, nb;
  birenGraph_t g = NULL;
  OK(birenStreamCreate(&s));
  OK(birenStreamCreateWithFlags(&nb, birenStreamNonBlocking));
  OK(birenMalloc((void **)&d, 8));
  EXPECT_CODE(birenStreamBeginCapture(NULL, birenStreamCaptureModeGlobal), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  birenStreamCaptureStatus st;
  EXPECT_CODE(birenStreamIsCapturing(NULL, &st), BIREN_ERROR_STREAM_CAPTURE_IMPLICIT);
  EXPECT_CODE(put_on(d, 0, 1, NULL), BIREN_ERROR_STREAM_CAPTURE_IMPLICIT);
  EXPECT_CODE(birenStreamEndCapture(s, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  EXPECT_CODE(birenStreamSynchronize(NULL), BIREN_ERROR_STREAM_CAPTURE_IMPLICIT);
  EXPECT_CODE(birenStreamQuery(NULL), BIREN_ERROR_STREAM_CAPTURE_IMPLICIT);
  EXPECT_CODE(birenStreamEndCapture(s, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  OK(birenStreamBeginCapture(nb, birenStreamCaptureModeRelaxed));
  OK(put_on(d, 0, 1, NULL));
  OK(birenStreamSynchronize(NULL));
  OK(birenStreamEndCapture(nb, &g));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(s));
  OK(birenStreamDestroy(nb));
  OK(birenFree(d));
  return 0;
}

/* Waiting in a capturing stream for an event recorded outside the capture: ISOLATION. Two
 * captures joined by a wait: MERGE. Beginning twice: ILLEGAL_STATE. Ending a stream not capturing:
 * ILLEGAL_STATE. Bad mode: INVALID_VALUE. */
static int isolation_merge_and_state_errors(void) {
  birenStream_t a, b;
  birenEvent_t ev, ea;
  birenGraph_t g = NULL;
  OK(birenStreamCreate(&a));
  OK(birenStreamCreate(&b));
  OK(birenEventCreate(&ev));
  OK(birenEventCreate(&ea));
  OK(birenEventRecord(ev, a));
  EXPECT_CODE(birenStreamBeginCapture(a, 7), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenStreamEndCapture(a, &g), BIREN_ERROR_ILLEGAL_STATE);
  OK(birenStreamBeginCapture(a, birenStreamCaptureModeGlobal));
  EXPECT_CODE(birenStreamBeginCapture(a, birenStreamCaptureModeGlobal), BIREN_ERROR_ILLEGAL_STATE);
  EXPECT_CODE(birenStreamWaitEvent(a, ev), BIREN_ERROR_STREAM_CAPTURE_ISOLATION);
  EXPECT_CODE(birenStreamEndCapture(a, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  OK(birenStreamBeginCapture(a, birenStreamCaptureModeGlobal));
  OK(birenStreamBeginCapture(b, birenStreamCaptureModeGlobal));
  OK(birenEventRecord(ea, a));
  EXPECT_CODE(birenStreamWaitEvent(b, ea), BIREN_ERROR_STREAM_CAPTURE_MERGE);
  OK(birenStreamEndCapture(a, &g));
  OK(birenGraphDestroy(g));
  EXPECT_CODE(birenStreamEndCapture(b, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_CODE(birenStreamEndCapture(a, NULL), BIREN_ERROR_INVALID_VALUE);
  OK(birenEventDestroy(ev));
  OK(birenEventDestroy(ea));
  OK(birenStreamDestroy(a));
  OK(birenStreamDestroy(b));
  return 0;
}

/* ---- Modes across threads ------------------------------------------------------------------- */

typedef struct probe {
  birenStreamCaptureMode mode; /* the probing thread's own mode */
  birenError_t malloc_result;
  birenError_t end_result;
  birenStream_t end_stream;
} probe;

static void *probe_main(void *arg) {
  probe *p = (probe *)arg;
  birenStreamCaptureMode m = p->mode;
  if (birenThreadExchangeStreamCaptureMode(&m) != BIREN_SUCCESS) return (void *)1;
  void *x = NULL;
  p->malloc_result = birenMalloc(&x, 16);
  if (p->malloc_result == BIREN_SUCCESS) birenFree(x);
  if (p->end_stream) {
    birenGraph_t g = NULL;
    p->end_result = birenStreamEndCapture(p->end_stream, &g);
    if (g) birenGraphDestroy(g);
  }
  return NULL;
}

static birenError_t probe_in_thread(birenStreamCaptureMode mode, birenStream_t end, birenError_t *end_result) {
  probe p = {mode, BIREN_ERROR_UNKNOWN, BIREN_ERROR_UNKNOWN, end};
  pthread_t th;
  if (pthread_create(&th, NULL, probe_main, &p) != 0) return BIREN_ERROR_UNKNOWN;
  pthread_join(th, NULL);
  if (end_result) *end_result = p.end_result;
  return p.malloc_result;
}

static int capture_modes_across_threads(void) {
  birenStream_t s;
  birenGraph_t g;
  birenError_t end;
  OK(birenStreamCreate(&s));
  /* A global capture forbids unsafe calls in other threads whose mode is global... */
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeGlobal));
  EXPECT(probe_in_thread(birenStreamCaptureModeGlobal, NULL, NULL) == BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  /* ...but not in threads whose mode is thread-local or relaxed, */
  EXPECT(probe_in_thread(birenStreamCaptureModeThreadLocal, NULL, NULL) == BIREN_SUCCESS);
  EXPECT(probe_in_thread(birenStreamCaptureModeRelaxed, NULL, NULL) == BIREN_SUCCESS);
  /* and another thread's refused call does not invalidate this thread's capture. Ending it from
   * another thread is WRONG_THREAD. */
  EXPECT(probe_in_thread(birenStreamCaptureModeRelaxed, s, &end) == BIREN_SUCCESS);
  EXPECT(end == BIREN_ERROR_STREAM_CAPTURE_WRONG_THREAD);
  OK(birenStreamEndCapture(s, &g));
  OK(birenGraphDestroy(g));
  /* A thread-local capture does not affect other threads at all. */
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeThreadLocal));
  EXPECT(probe_in_thread(birenStreamCaptureModeGlobal, NULL, NULL) == BIREN_SUCCESS);
  EXPECT(probe_in_thread(birenStreamCaptureModeGlobal, s, &end) == BIREN_SUCCESS);
  EXPECT(end == BIREN_ERROR_STREAM_CAPTURE_WRONG_THREAD);
  OK(birenStreamEndCapture(s, &g));
  OK(birenGraphDestroy(g));
  /* A relaxed capture may be ended by another thread. */
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  EXPECT(probe_in_thread(birenStreamCaptureModeGlobal, s, &end) == BIREN_SUCCESS);
  EXPECT(end == BIREN_SUCCESS);
  EXPECT(status_of(s) == birenStreamCaptureStatusNone);
  OK(birenStreamDestroy(s));
  return 0;
}

static int exchange_mode_round_trip(void) {
  birenStreamCaptureMode m = birenStreamCaptureModeRelaxed;
  OK(birenThreadExchangeStreamCaptureMode(&m));
  EXPECT(m == birenStreamCaptureModeGlobal); /* the default */
  OK(birenThreadExchangeStreamCaptureMode(&m));
  EXPECT(m == birenStreamCaptureModeRelaxed);
  EXPECT_CODE(birenThreadExchangeStreamCaptureMode(NULL), BIREN_ERROR_INVALID_VALUE);
  birenStreamCaptureMode bad = (birenStreamCaptureMode)5;
  EXPECT_CODE(birenThreadExchangeStreamCaptureMode(&bad), BIREN_ERROR_INVALID_VALUE);
  EXPECT(bad == (birenStreamCaptureMode)5);
  /* A thread whose own mode is relaxed may make unsafe calls even during its global capture. */
  birenStream_t s;
  birenGraph_t g;
  void *x;
  OK(birenStreamCreate(&s));
  m = birenStreamCaptureModeRelaxed;
  OK(birenThreadExchangeStreamCaptureMode(&m));
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeGlobal));
  OK(birenMalloc(&x, 8));
  OK(birenFree(x));
  OK(birenStreamEndCapture(s, &g));
  OK(birenThreadExchangeStreamCaptureMode(&m)); /* back to global */
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(s));
  return 0;
}

/* A graph launch into a capturing stream becomes a child-graph node. */
static int graph_launch_is_captured_as_child(void) {
  int *d, h = 0;
  birenStream_t s;
  birenGraph_t inner, outer;
  birenGraphExec_t ie, oe;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, 8));
  OK(birenMemset(d, 0, 8));
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeGlobal));
  OK(put_on(d, 0, 3, s));
  OK(birenStreamEndCapture(s, &inner));
  OK(birenGraphInstantiate(&ie, inner, 0));
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeGlobal));
  OK(birenGraphLaunch(ie, s));
  OK(inc_on(d, 0, 1, s));
  OK(birenStreamEndCapture(s, &outer));
  birenGraphNode_t nodes[2];
  size_t n = 2;
  OK(birenGraphGetNodes(outer, nodes, &n));
  EXPECT(n == 2);
  birenGraphNodeType t;
  OK(birenGraphNodeGetType(nodes[0], &t));
  EXPECT(t == birenGraphNodeTypeGraph);
  OK(birenGraphInstantiate(&oe, outer, 0));
  OK(birenGraphLaunch(oe, s));
  OK(birenStreamSynchronize(s));
  OK(birenMemcpy(&h, d + 1, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 4);
  OK(birenGraphExecDestroy(ie));
  OK(birenGraphExecDestroy(oe));
  OK(birenGraphDestroy(inner));
  OK(birenGraphDestroy(outer));
  OK(birenStreamDestroy(s));
  OK(birenFree(d));
  return 0;
}

/* Destroying the origin stream ends its capture; reset ends all captures of the device. */
static int destroy_and_reset_end_captures(void) {
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeGlobal));
  OK(birenStreamDestroy(s));
  void *x;
  OK(birenMalloc(&x, 8)); /* no capture any more */
  OK(birenFree(x));
  OK(birenStreamCreate(&s));
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  OK(birenDeviceReset());
  OK(birenMalloc(&x, 8));
  OK(birenFree(x));
  return 0;
}


/* Status queries: argument errors, outputs of a stream not capturing left alone, forged streams. */
static int status_query_arguments(void) {
  birenStream_t s;
  OK(birenStreamCreate(&s));
  birenStreamCaptureStatus st = birenStreamCaptureStatusActive;
  unsigned long long id = 77;
  birenGraph_t g = (birenGraph_t)(uintptr_t)1;
  const birenGraphNode_t *deps = (const birenGraphNode_t *)(uintptr_t)2;
  size_t nd = 5;
  OK(birenStreamGetCaptureInfo(s, &st, &id, &g, &deps, &nd));
  EXPECT(st == birenStreamCaptureStatusNone && id == 77 && g == (birenGraph_t)(uintptr_t)1 && nd == 5);
  EXPECT_CODE(birenStreamGetCaptureInfo(s, NULL, &id, NULL, NULL, NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenStreamIsCapturing(s, NULL), BIREN_ERROR_INVALID_VALUE);
  birenStream_t forged = (birenStream_t)(uintptr_t)0xabcdef;
  EXPECT_CODE(birenStreamIsCapturing(forged, &st), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamBeginCapture(forged, birenStreamCaptureModeGlobal), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenStreamEndCapture(forged, &g), BIREN_ERROR_INVALID_HANDLE);
  /* An empty capture gives an empty graph. */
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeGlobal));
  OK(birenStreamGetCaptureInfo(s, &st, &id, NULL, &deps, &nd));
  EXPECT(st == birenStreamCaptureStatusActive && nd == 0);
  OK(birenStreamEndCapture(s, &g));
  size_t n = 9;
  OK(birenGraphGetNodes(g, NULL, &n));
  EXPECT(n == 0);
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(s));
  EXPECT_CODE(birenStreamBeginCapture(s, birenStreamCaptureModeGlobal), BIREN_ERROR_INVALID_HANDLE);
  return 0;
}

/* Stream-ordered allocation is not captured (CUDA records alloc/free nodes): refused, and the
 * capture invalidated, so that no captured kernel is left writing memory freed at capture time
 * (it used to run the free at once). Before and after a capture it works as usual. */
static int stream_ordered_allocation_is_refused_while_capturing(void) {
  birenStream_t s;
  birenGraph_t g = NULL;
  void *before = NULL, *p = (void *)1;
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenMallocAsync(&before, 1024, s));
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  EXPECT_CODE(birenMallocAsync(&p, 1024, s), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT(p == (void *)1); /* nothing written */
  EXPECT_CODE(birenStreamEndCapture(s, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeRelaxed));
  EXPECT_CODE(birenFreeAsync(before, s), BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_CODE(birenStreamEndCapture(s, &g), BIREN_ERROR_STREAM_CAPTURE_INVALIDATED);
  OK(birenFreeAsync(before, s)); /* still allocated: the refused free changed nothing */
  OK(birenStreamSynchronize(s));
  OK(birenStreamDestroy(s));
  return 0;
}

static const test_case tests[] = {
    TEST(nothing_runs_while_capturing),
    TEST(fork_and_join_across_three_streams),
    TEST(unjoined_fork_is_refused),
    TEST(sync_of_capturing_stream_invalidates),
    TEST(unsafe_calls_by_mode),
    TEST(default_stream_during_capture),
    TEST(isolation_merge_and_state_errors),
    TEST(capture_modes_across_threads),
    TEST(exchange_mode_round_trip),
    TEST(graph_launch_is_captured_as_child),
    TEST(destroy_and_reset_end_captures),
    TEST(status_query_arguments),
    TEST(stream_ordered_allocation_is_refused_while_capturing),
};

int main(void) {
  want_two_compute_units();
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("capture", tests, reset_device, 20);
}
