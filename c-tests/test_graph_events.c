/* Event record and wait nodes act at their place in the graph (as in CUDA), not at the
 * boundaries of the whole launch: a record node's event completes when the node's dependencies
 * have, while the rest of the graph still runs; a wait node holds only its dependents, and it
 * may wait for work that itself waits for what the graph produced before it. Also in child
 * graphs and in captured graphs (birenEventRecordWithFlags / birenStreamWaitEventWithFlags with
 * the External flags), with cycles refused and unsatisfiable waits ending in DEADLOCK. */
#include "timed_kernels.h"

/* args: (int *p, int i, int v): p[i] = v (atomically: the host may poll it). */
static void put(void **args) {
  int *p = *(int **)args[0];
  int i = *(int *)args[1];
  int v = *(int *)args[2];
  __atomic_store_n(&p[i], v, __ATOMIC_SEQ_CST);
}

/* args: (int *log, int *next, int tag): appends tag to a log (order of execution). */
static void log_tag(void **args) {
  int *log = *(int **)args[0];
  int *next = *(int **)args[1];
  int tag = *(int *)args[2];
  log[__atomic_fetch_add(next, 1, __ATOMIC_SEQ_CST)] = tag;
}

static void register_kernels(void) {
  size_t put_sizes[3] = {sizeof(int *), sizeof(int), sizeof(int)};
  size_t log_sizes[3] = {sizeof(int *), sizeof(int *), sizeof(int)};
  size_t count_sizes[2] = {sizeof(int *), sizeof(double)};
  birenKernelRegister(put, "put", 3, put_sizes);
  birenKernelRegister(log_tag, "log_tag", 3, log_sizes);
  birenKernelRegister(spin_then_count, "spin_then_count", 2, count_sizes);
}

static birenKernelNodeParams kparams(birenKernel_t f, void **args) {
  birenKernelNodeParams p;
  memset(&p, 0, sizeof p);
  p.func = f;
  p.gridDim = birenDim3(1, 1, 1);
  p.blockDim = birenDim3(1, 1, 1);
  p.kernelParams = args;
  return p;
}

static birenError_t add_put(birenGraphNode_t *n, birenGraph_t g, const birenGraphNode_t *deps, size_t nd, int *p, int i, int v) {
  void *args[3] = {&p, &i, &v};
  birenKernelNodeParams kp = kparams(put, args);
  return birenGraphAddKernelNode(n, g, deps, nd, &kp);
}

static birenError_t add_log(birenGraphNode_t *n, birenGraph_t g, const birenGraphNode_t *deps, size_t nd, int *log, int *next, int tag) {
  void *args[3] = {&log, &next, &tag};
  birenKernelNodeParams kp = kparams(log_tag, args);
  return birenGraphAddKernelNode(n, g, deps, nd, &kp);
}

/* A node that spins `ms` then increments *counter. */
static birenError_t add_slow(birenGraphNode_t *n, birenGraph_t g, const birenGraphNode_t *deps, size_t nd, int *counter, double ms) {
  void *args[2] = {&counter, &ms};
  birenKernelNodeParams kp = kparams(spin_then_count, args);
  return birenGraphAddKernelNode(n, g, deps, nd, &kp);
}

static const double SLOW_MS = 400;

/* The facts of a graph put(d[0]=1) -> record(ev) -> slow(counter), launched in s: the event
 * completes (host synchronize and query, another stream's wait) while the slow node still
 * runs, and the node before the record has run by then. Three launches in a row. */
static int check_record_before_the_end(birenGraphExec_t e, birenEvent_t ev, int *d, int *counter) {
  birenStream_t s, other;
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&other, birenStreamNonBlocking));
  int *flag;
  OK(birenMallocManaged((void **)&flag, sizeof(int), birenMemAttachGlobal));
  for (int round = 1; round <= 3; round++) {
    int h = 0;
    *flag = 0;
    OK(birenMemset(d, 0, sizeof(int)));
    OK(birenGraphLaunch(e, s));
    OK(birenStreamWaitEvent(other, ev));
    OK(launch_store_int(flag, round, other));
    OK(birenEventSynchronize(ev));
    EXPECT(load_int(counter) == round - 1); /* the slow node is still running */
    OK(birenEventQuery(ev));
    OK(birenStreamSynchronize(other));
    EXPECT(load_int(flag) == round);
    EXPECT(load_int(counter) == round - 1);
    OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
    EXPECT(h == 1);
    OK(birenStreamSynchronize(s));
    EXPECT(load_int(counter) == round);
  }
  OK(birenFree(flag));
  OK(birenStreamDestroy(s));
  OK(birenStreamDestroy(other));
  return 0;
}

static int record_node_completes_when_its_dependencies_have(void) {
  int *d, *counter;
  birenEvent_t ev;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t a, r, b;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMallocManaged((void **)&counter, sizeof(int), birenMemAttachGlobal));
  *counter = 0;
  OK(birenEventCreate(&ev));
  OK(birenGraphCreate(&g, 0));
  OK(add_put(&a, g, NULL, 0, d, 0, 1));
  OK(birenGraphAddEventRecordNode(&r, g, &a, 1, ev));
  OK(add_slow(&b, g, &r, 1, counter, SLOW_MS));
  OK(birenGraphInstantiate(&e, g, 0));
  if (check_record_before_the_end(e, ev, d, counter)) return 1;
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(ev));
  OK(birenFree(d));
  OK(birenFree(counter));
  return 0;
}

/* The same graph as a child graph node between two empty nodes. */
static int record_node_in_a_child_graph(void) {
  int *d, *counter;
  birenEvent_t ev;
  birenGraph_t child, g;
  birenGraphExec_t e;
  birenGraphNode_t a, r, b, pre, c, post;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMallocManaged((void **)&counter, sizeof(int), birenMemAttachGlobal));
  *counter = 0;
  OK(birenEventCreate(&ev));
  OK(birenGraphCreate(&child, 0));
  OK(add_put(&a, child, NULL, 0, d, 0, 1));
  OK(birenGraphAddEventRecordNode(&r, child, &a, 1, ev));
  OK(add_slow(&b, child, &r, 1, counter, SLOW_MS));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddEmptyNode(&pre, g, NULL, 0));
  OK(birenGraphAddChildGraphNode(&c, g, &pre, 1, child));
  OK(birenGraphAddEmptyNode(&post, g, &c, 1));
  OK(birenGraphInstantiate(&e, g, 0));
  if (check_record_before_the_end(e, ev, d, counter)) return 1;
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenGraphDestroy(child));
  OK(birenEventDestroy(ev));
  OK(birenFree(d));
  OK(birenFree(counter));
  return 0;
}

/* Captured: put; birenEventRecordWithFlags(External); slow. The record becomes an event record
 * node between the two kernels, and acts there. */
static int record_node_from_a_capture(void) {
  int *d, *counter;
  birenEvent_t ev;
  birenStream_t cs;
  birenGraph_t g;
  birenGraphExec_t e;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMallocManaged((void **)&counter, sizeof(int), birenMemAttachGlobal));
  *counter = 0;
  OK(birenEventCreate(&ev));
  OK(birenStreamCreateWithFlags(&cs, birenStreamNonBlocking));
  OK(birenStreamBeginCapture(cs, birenStreamCaptureModeGlobal));
  int zero = 0, one = 1;
  double ms = SLOW_MS;
  OK(BIREN_LAUNCH(put, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, cs, d, zero, one));
  OK(birenEventRecordWithFlags(ev, cs, birenEventRecordExternal));
  OK(BIREN_LAUNCH(spin_then_count, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, cs, counter, ms));
  EXPECT_CODE(birenEventRecordWithFlags(ev, cs, 2), BIREN_ERROR_INVALID_VALUE);
  OK(birenStreamEndCapture(cs, &g));
  /* Three nodes in a chain: kernel -> event record -> kernel. */
  birenGraphNode_t nodes[3];
  size_t n = 3;
  OK(birenGraphGetNodes(g, nodes, &n));
  EXPECT(n == 3);
  birenGraphNodeType t[3];
  for (int i = 0; i < 3; i++) OK(birenGraphNodeGetType(nodes[i], &t[i]));
  EXPECT(t[0] == birenGraphNodeTypeKernel && t[1] == birenGraphNodeTypeEventRecord && t[2] == birenGraphNodeTypeKernel);
  size_t ne = 0;
  OK(birenGraphGetEdges(g, NULL, NULL, &ne));
  EXPECT(ne == 2);
  /* Nothing ran while capturing. */
  EXPECT(load_int(counter) == 0);
  OK(birenGraphInstantiate(&e, g, 0));
  if (check_record_before_the_end(e, ev, d, counter)) return 1;
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(cs));
  OK(birenEventDestroy(ev));
  OK(birenFree(d));
  OK(birenFree(counter));
  return 0;
}

/* Outside a capture, the External flags are an ordinary record and wait. */
static int external_flags_outside_a_capture_are_ordinary(void) {
  birenStream_t s1, s2;
  birenEvent_t ev;
  int *flag;
  interval iv;
  OK(birenMallocManaged((void **)&flag, sizeof(int), birenMemAttachGlobal));
  *flag = 0;
  OK(birenStreamCreateWithFlags(&s1, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s2, birenStreamNonBlocking));
  OK(birenEventCreate(&ev));
  OK(launch_timed_spin(&iv, 100, s1));
  OK(birenEventRecordWithFlags(ev, s1, birenEventRecordExternal));
  OK(birenStreamWaitEventWithFlags(s2, ev, birenEventWaitExternal));
  EXPECT_CODE(birenStreamWaitEventWithFlags(s2, ev, 2), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenStreamWaitEventWithFlags(s2, NULL, 0), BIREN_ERROR_INVALID_HANDLE);
  OK(launch_store_int(flag, 1, s2));
  OK(birenStreamSynchronize(s2));
  EXPECT(load_int(flag) == 1);
  double done = now_s();
  EXPECT(done >= iv.end && iv.end > 0);
  OK(birenStreamSynchronize(s1));
  OK(birenEventDestroy(ev));
  OK(birenStreamDestroy(s1));
  OK(birenStreamDestroy(s2));
  OK(birenFree(flag));
  return 0;
}

/* Graph: A -> record(e1) -> wait(e2) -> B, with e2 never recorded before the launch (so the
 * wait node waits for its next record: BIREN extension). After the launch, another stream waits
 * for e1 (the graph's record node), runs K and records e2. A runs, then K, then B. Before event
 * nodes acted at their place, that record was refused with DEADLOCK (the wait was made before
 * the whole launch and the record after it). */
static int wait_node_waits_for_work_that_waits_for_the_graph(void) {
  int *log, *next, h[4] = {0, 0, 0, 0};
  birenStream_t s, other;
  birenEvent_t e1, e2;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t a, r, w, b;
  OK(birenMalloc((void **)&log, sizeof h));
  OK(birenMalloc((void **)&next, sizeof(int)));
  OK(birenMemset(log, 0, sizeof h));
  OK(birenMemset(next, 0, sizeof(int)));
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&other, birenStreamNonBlocking));
  OK(birenEventCreate(&e1));
  OK(birenEventCreate(&e2));
  OK(birenGraphCreate(&g, 0));
  OK(add_log(&a, g, NULL, 0, log, next, 1));
  OK(birenGraphAddEventRecordNode(&r, g, &a, 1, e1));
  OK(birenGraphAddEventWaitNode(&w, g, &r, 1, e2));
  OK(add_log(&b, g, &w, 1, log, next, 3));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, s));
  OK(birenStreamWaitEvent(other, e1));
  int tag = 2;
  OK(BIREN_LAUNCH(log_tag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, other, log, next, tag));
  OK(birenEventRecord(e2, other));
  OK(birenStreamSynchronize(s));
  OK(birenStreamSynchronize(other));
  OK(birenMemcpy(h, log, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h[0] == 1 && h[1] == 2 && h[2] == 3);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(e1));
  OK(birenEventDestroy(e2));
  OK(birenStreamDestroy(s));
  OK(birenStreamDestroy(other));
  OK(birenFree(log));
  OK(birenFree(next));
  return 0;
}

/* The reverse order closes a real cycle: wait(e2) -> A -> record(e1); another stream waits for
 * e1 and then records e2, which the wait node holds: that record is refused with DEADLOCK,
 * nothing enqueued. A record elsewhere then releases the launch. */
static int record_closing_a_cycle_through_a_wait_node_is_refused(void) {
  int *d, h = 0;
  birenStream_t s, other, third;
  birenEvent_t e1, e2;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t w, a, r;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMemset(d, 0, sizeof(int)));
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&other, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&third, birenStreamNonBlocking));
  OK(birenEventCreate(&e1));
  OK(birenEventCreate(&e2));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddEventWaitNode(&w, g, NULL, 0, e2));
  OK(add_put(&a, g, &w, 1, d, 0, 5));
  OK(birenGraphAddEventRecordNode(&r, g, &a, 1, e1));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, s));
  OK(birenStreamWaitEvent(other, e1));
  EXPECT_CODE(birenEventRecord(e2, other), BIREN_ERROR_DEADLOCK);
  OK(birenEventRecord(e2, third));
  OK(birenStreamSynchronize(s));
  OK(birenStreamSynchronize(other));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 5);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(e1));
  OK(birenEventDestroy(e2));
  OK(birenStreamDestroy(s));
  OK(birenStreamDestroy(other));
  OK(birenStreamDestroy(third));
  OK(birenFree(d));
  return 0;
}

/* A wait node holds only its dependents: an independent branch of the same graph runs while
 * the wait node waits for a record that never comes; a synchronize on the launch then ends in
 * DEADLOCK (not a hang), and a record releases it. */
static int wait_node_holds_only_its_dependents_and_deadlock_is_reported(void) {
  int *d, h[2] = {0, 0};
  birenStream_t s, other;
  birenEvent_t ev;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t w, b, c;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMemset(d, 0, sizeof h));
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&other, birenStreamNonBlocking));
  OK(birenEventCreate(&ev));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddEventWaitNode(&w, g, NULL, 0, ev));
  OK(add_put(&b, g, &w, 1, d, 0, 7));
  OK(add_put(&c, g, NULL, 0, d, 1, 8));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, s));
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_DEADLOCK);
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h[0] == 0 && h[1] == 8); /* the independent branch ran, the waiting one did not */
  /* A device-wide synchronize sees the same. */
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_DEADLOCK);
  OK(birenEventRecord(ev, other));
  OK(birenStreamSynchronize(s));
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h[0] == 7 && h[1] == 8);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(ev));
  OK(birenStreamDestroy(s));
  OK(birenStreamDestroy(other));
  OK(birenFree(d));
  return 0;
}

/* A wait node waits for the event's latest record at the time of the launch: work recorded
 * before the launch holds its dependents, a record made after the launch does not change it. */
static int wait_node_takes_the_record_at_launch(void) {
  int *log, *next, h[3] = {0, 0, 0};
  birenStream_t s, other;
  birenEvent_t ev;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t w, b, c;
  interval iv;
  OK(birenMalloc((void **)&log, sizeof h));
  OK(birenMalloc((void **)&next, sizeof(int)));
  OK(birenMemset(log, 0, sizeof h));
  OK(birenMemset(next, 0, sizeof(int)));
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&other, birenStreamNonBlocking));
  OK(birenEventCreate(&ev));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddEventWaitNode(&w, g, NULL, 0, ev));
  OK(add_log(&b, g, &w, 1, log, next, 2));
  OK(add_log(&c, g, NULL, 0, log, next, 1));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(launch_timed_spin(&iv, 150, other));
  OK(birenEventRecord(ev, other));
  OK(birenGraphLaunch(e, s));
  /* Recorded again after the launch, behind more work: the launch does not wait for this. */
  int tag = 3;
  OK(launch_timed_spin(&iv, 300, other));
  OK(BIREN_LAUNCH(log_tag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, other, log, next, tag));
  OK(birenEventRecord(ev, other));
  OK(birenStreamSynchronize(s));
  OK(birenMemcpy(h, log, 2 * sizeof(int), birenMemcpyDeviceToHost));
  EXPECT(h[0] == 1 && h[1] == 2); /* the independent node first, the waiting one after 150 ms */
  OK(birenStreamSynchronize(other));
  OK(birenMemcpy(h, log, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h[2] == 3);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(ev));
  OK(birenStreamDestroy(s));
  OK(birenStreamDestroy(other));
  OK(birenFree(log));
  OK(birenFree(next));
  return 0;
}

/* Captured wait (birenStreamWaitEventWithFlags, External) in a child graph: the same facts as
 * the explicit wait node. */
static int wait_node_from_a_capture_in_a_child_graph(void) {
  int *log, *next, h[3] = {0, 0, 0};
  birenStream_t cs, s, other;
  birenEvent_t e1, e2;
  birenGraph_t inner, g;
  birenGraphExec_t e;
  birenGraphNode_t cn;
  OK(birenMalloc((void **)&log, sizeof h));
  OK(birenMalloc((void **)&next, sizeof(int)));
  OK(birenMemset(log, 0, sizeof h));
  OK(birenMemset(next, 0, sizeof(int)));
  OK(birenStreamCreateWithFlags(&cs, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&other, birenStreamNonBlocking));
  OK(birenEventCreate(&e1));
  OK(birenEventCreate(&e2));
  int t1 = 1, t3 = 3, t2 = 2;
  OK(birenStreamBeginCapture(cs, birenStreamCaptureModeGlobal));
  OK(BIREN_LAUNCH(log_tag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, cs, log, next, t1));
  OK(birenEventRecordWithFlags(e1, cs, birenEventRecordExternal));
  OK(birenStreamWaitEventWithFlags(cs, e2, birenEventWaitExternal));
  OK(BIREN_LAUNCH(log_tag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, cs, log, next, t3));
  OK(birenStreamEndCapture(cs, &inner));
  birenGraphNode_t nodes[4];
  size_t n = 4;
  OK(birenGraphGetNodes(inner, nodes, &n));
  EXPECT(n == 4);
  birenGraphNodeType ty;
  OK(birenGraphNodeGetType(nodes[2], &ty));
  EXPECT(ty == birenGraphNodeTypeWaitEvent);
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddChildGraphNode(&cn, g, NULL, 0, inner));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, s));
  OK(birenStreamWaitEvent(other, e1));
  OK(BIREN_LAUNCH(log_tag, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, other, log, next, t2));
  OK(birenEventRecord(e2, other));
  OK(birenStreamSynchronize(s));
  OK(birenMemcpy(h, log, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h[0] == 1 && h[1] == 2 && h[2] == 3);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenGraphDestroy(inner));
  OK(birenEventDestroy(e1));
  OK(birenEventDestroy(e2));
  OK(birenStreamDestroy(cs));
  OK(birenStreamDestroy(s));
  OK(birenStreamDestroy(other));
  OK(birenFree(log));
  OK(birenFree(next));
  return 0;
}

/* A launch whose graph has event nodes, captured into another stream's capture: it becomes a
 * child graph node with the event nodes inside, and nothing runs or is recorded meanwhile. */
static int launch_with_event_nodes_is_captured_as_a_child(void) {
  int *d, h = 0;
  birenStream_t cs;
  birenEvent_t ev;
  birenGraph_t g, outer;
  birenGraphExec_t e, oe;
  birenGraphNode_t a, r;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMemset(d, 0, sizeof(int)));
  OK(birenStreamCreateWithFlags(&cs, birenStreamNonBlocking));
  OK(birenEventCreate(&ev));
  OK(birenGraphCreate(&g, 0));
  OK(add_put(&a, g, NULL, 0, d, 0, 6));
  OK(birenGraphAddEventRecordNode(&r, g, &a, 1, ev));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenStreamBeginCapture(cs, birenStreamCaptureModeGlobal));
  OK(birenGraphLaunch(e, cs));
  OK(birenStreamEndCapture(cs, &outer));
  size_t n = 0;
  OK(birenGraphGetNodes(outer, NULL, &n));
  EXPECT(n == 1);
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 0);
  OK(birenGraphInstantiate(&oe, outer, 0));
  OK(birenGraphLaunch(oe, cs));
  OK(birenEventSynchronize(ev));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 6);
  OK(birenStreamSynchronize(cs));
  OK(birenGraphExecDestroy(oe));
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(outer));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(ev));
  OK(birenStreamDestroy(cs));
  OK(birenFree(d));
  return 0;
}

/* Many launches of one exec with both kinds of event nodes, on two streams in turn. */
static int relaunch_with_event_nodes(void) {
  int *d, h = 0;
  birenStream_t s1, s2;
  birenEvent_t in, out;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t w, a, r;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenStreamCreateWithFlags(&s1, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s2, birenStreamNonBlocking));
  OK(birenEventCreate(&in));
  OK(birenEventCreate(&out));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddEventWaitNode(&w, g, NULL, 0, in));
  OK(add_put(&a, g, &w, 1, d, 0, 9));
  OK(birenGraphAddEventRecordNode(&r, g, &a, 1, out));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenEventRecord(in, s2));
  for (int i = 0; i < 50; i++) {
    birenStream_t s = (i & 1) ? s1 : s2;
    OK(birenGraphLaunch(e, s));
    OK(birenEventRecord(in, s));
  }
  OK(birenEventSynchronize(out));
  OK(birenDeviceSynchronize());
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 9);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(in));
  OK(birenEventDestroy(out));
  OK(birenStreamDestroy(s1));
  OK(birenStreamDestroy(s2));
  OK(birenFree(d));
  return 0;
}


/* The lanes of an exec's event nodes are reused by its launches, made again after a reset, and
 * outlive a destroyed exec until their work is done. */
static void host_count(void *p) { __atomic_fetch_add((int *)p, 1, __ATOMIC_SEQ_CST); }

static int event_nodes_after_reset_and_exec_destroy(void) {
  int *d, h = 0, count = 0;
  birenStream_t s, other;
  birenEvent_t in, out;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t w, a, r;
  birenHostNodeParams hp = {host_count, &count};
  OK(birenEventCreate(&in));
  OK(birenEventCreate(&out));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddEventWaitNode(&w, g, NULL, 0, in));
  OK(birenGraphAddHostNode(&a, g, &w, 1, &hp));
  OK(birenGraphAddEventRecordNode(&r, g, &a, 1, out));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenEventRecord(in, s));
  OK(birenGraphLaunch(e, s));
  OK(birenEventSynchronize(out));
  EXPECT(load_int(&count) == 1);
  /* A reset ends the device's streams (the lanes included) and its events; the exec survives
   * and its next launches make new lanes. */
  OK(birenDeviceReset());
  for (int i = 0; i < 3; i++) OK(birenGraphLaunch(e, NULL));
  OK(birenStreamSynchronize(NULL));
  EXPECT(load_int(&count) == 4);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  /* An exec destroyed while its launches wait at a wait node: they still run once the event
   * is recorded. */
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenEventCreate(&in));
  OK(birenEventCreate(&out));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddEventWaitNode(&w, g, NULL, 0, in));
  OK(add_put(&a, g, &w, 1, d, 0, 5));
  OK(birenGraphAddEventRecordNode(&r, g, &a, 1, out));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&other, birenStreamNonBlocking));
  OK(birenGraphLaunch(e, s)); /* waits for in's next record (never recorded yet) */
  OK(birenGraphLaunch(e, s));
  OK(birenGraphExecDestroy(e));
  EXPECT_CODE(birenEventQuery(out), BIREN_ERROR_NOT_READY);
  OK(birenEventRecord(in, other));
  OK(birenStreamSynchronize(s));
  OK(birenEventSynchronize(out));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 5);
  OK(birenDeviceSynchronize());
  OK(birenGraphDestroy(g));
  OK(birenFree(d));
  OK(birenEventDestroy(in));
  OK(birenEventDestroy(out));
  OK(birenStreamDestroy(s));
  OK(birenStreamDestroy(other));
  return 0;
}

static const test_case tests[] = {
    TEST(record_node_completes_when_its_dependencies_have),
    TEST(record_node_in_a_child_graph),
    TEST(record_node_from_a_capture),
    TEST(external_flags_outside_a_capture_are_ordinary),
    TEST(wait_node_waits_for_work_that_waits_for_the_graph),
    TEST(record_closing_a_cycle_through_a_wait_node_is_refused),
    TEST(wait_node_holds_only_its_dependents_and_deadlock_is_reported),
    TEST(wait_node_takes_the_record_at_launch),
    TEST(wait_node_from_a_capture_in_a_child_graph),
    TEST(launch_with_event_nodes_is_captured_as_a_child),
    TEST(relaunch_with_event_nodes),
    TEST(event_nodes_after_reset_and_exec_destroy),
};

int main(void) {
  want_two_compute_units();
  if (birenInit() != BIREN_SUCCESS) return 2;
  register_kernels();
  return RUN_TESTS("graph events", tests, reset_device, 30);
}
