/* Explicit graphs: building (every node kind, edges, cycles refused), queries, clone,
 * instantiate, launch (order, parallelism, relaunch, launches of one exec in order), kernel
 * parameter updates, exec update, a node that traps (sticky), freed memory, reset, DOT output,
 * destroyed and forged handles. */
#include "timed_kernels.h"

#include <pthread.h>

/* args: (int *p, int i, int v): p[i] = v. Registered: values copied when the node is made. */
static void put(void **args) {
  int *p = *(int **)args[0];
  int i = *(int *)args[1];
  int v = *(int *)args[2];
  p[i] = v;
}

/* args: (int *p, int n): p[t] += 1 for every thread t < n. */
static void add_one(void **args) {
  int *p = *(int **)args[0];
  int n = *(int *)args[1];
  int t = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  if (t < n) p[t] += 1;
}

/* args: (int *log, int *next, int tag): appends tag to a log (order of execution). */
static void log_tag(void **args) {
  int *log = *(int **)args[0];
  int *next = *(int **)args[1];
  int tag = *(int *)args[2];
  log[__atomic_fetch_add(next, 1, __ATOMIC_SEQ_CST)] = tag;
}

static void trapper(void **args) {
  (void)args;
  birenTrap();
}

static void empty_kernel(void **args) { (void)args; }

static void host_count(void *p) { __atomic_fetch_add((int *)p, 1, __ATOMIC_SEQ_CST); }

static void register_kernels(void) {
  size_t put_sizes[3] = {sizeof(int *), sizeof(int), sizeof(int)};
  size_t add_sizes[2] = {sizeof(int *), sizeof(int)};
  size_t log_sizes[3] = {sizeof(int *), sizeof(int *), sizeof(int)};
  size_t spin_sizes[2] = {sizeof(interval *), sizeof(double)};
  birenKernelRegister(put, "put", 3, put_sizes);
  birenKernelRegister(add_one, "add_one", 2, add_sizes);
  birenKernelRegister(log_tag, "log_tag", 3, log_sizes);
  birenKernelRegister(timed_spin, "timed_spin", 2, spin_sizes);
  birenKernelRegister(trapper, "trapper", 0, NULL);
}

static birenKernelNodeParams kparams(birenKernel_t f, unsigned grid, unsigned block, void **args) {
  birenKernelNodeParams p;
  memset(&p, 0, sizeof p);
  p.func = f;
  p.gridDim = birenDim3(grid, 1, 1);
  p.blockDim = birenDim3(block, 1, 1);
  p.sharedMemBytes = 0;
  p.kernelParams = args;
  p.extra = NULL;
  return p;
}

/* Adds a put node p[i] = v after deps. */
static birenError_t add_put(birenGraphNode_t *n, birenGraph_t g, const birenGraphNode_t *deps, size_t nd, int *p, int i, int v) {
  void *args[3] = {&p, &i, &v};
  birenKernelNodeParams kp = kparams(put, 1, 1, args);
  return birenGraphAddKernelNode(n, g, deps, nd, &kp);
}

static birenError_t add_log(birenGraphNode_t *n, birenGraph_t g, const birenGraphNode_t *deps, size_t nd, int *log, int *next, int tag) {
  void *args[3] = {&log, &next, &tag};
  birenKernelNodeParams kp = kparams(log_tag, 1, 1, args);
  return birenGraphAddKernelNode(n, g, deps, nd, &kp);
}


/* A graph of one timed_spin node (ms milliseconds, recording into *iv), instantiated. */
static birenError_t spin_graph(birenGraph_t *g, birenGraphExec_t *e, interval *iv, double ms) {
  birenGraphNode_t n;
  void *args[2] = {&iv, &ms};
  birenKernelNodeParams kp = kparams(timed_spin, 1, 1, args);
  birenError_t r = birenGraphCreate(g, 0);
  if (r == BIREN_SUCCESS) r = birenGraphAddKernelNode(&n, *g, NULL, 0, &kp);
  if (r == BIREN_SUCCESS) r = birenGraphInstantiate(e, *g, 0);
  return r;
}

/* ---- Building ------------------------------------------------------------------------------- */

static int create_destroy_and_flags(void) {
  birenGraph_t g;
  EXPECT_CODE(birenGraphCreate(NULL, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphCreate(&g, 1), BIREN_ERROR_INVALID_VALUE);
  OK(birenGraphCreate(&g, 0));
  size_t n = 99;
  OK(birenGraphGetNodes(g, NULL, &n));
  EXPECT(n == 0);
  OK(birenGraphDestroy(g));
  EXPECT_CODE(birenGraphDestroy(g), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenGraphGetNodes(g, NULL, &n), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenGraphDestroy((birenGraph_t)(uintptr_t)0xdeadbeef), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenGraphDestroy(NULL), BIREN_ERROR_INVALID_HANDLE);
  return 0;
}

static int every_node_kind_and_its_type(void) {
  int *d;
  int h[4] = {0};
  birenEvent_t ev;
  birenGraph_t g, child;
  birenGraphNode_t n[9];
  OK(birenMalloc((void **)&d, 64));
  OK(birenEventCreate(&ev));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphCreate(&child, 0));
  OK(birenGraphAddEmptyNode(&n[8], child, NULL, 0));
  OK(add_put(&n[0], g, NULL, 0, d, 0, 1));
  OK(birenGraphAddMemcpyNode1D(&n[1], g, &n[0], 1, h, d, sizeof(int), birenMemcpyDeviceToHost));
  birenMemsetParams mp = {d, 0, 7, 1, 16, 1};
  OK(birenGraphAddMemsetNode(&n[2], g, NULL, 0, &mp));
  int counter = 0;
  birenHostNodeParams hp = {host_count, &counter};
  OK(birenGraphAddHostNode(&n[3], g, NULL, 0, &hp));
  OK(birenGraphAddChildGraphNode(&n[4], g, NULL, 0, child));
  OK(birenGraphAddEmptyNode(&n[5], g, NULL, 0));
  OK(birenGraphAddEventWaitNode(&n[6], g, NULL, 0, ev));
  OK(birenGraphAddEventRecordNode(&n[7], g, NULL, 0, ev));
  birenGraphNodeType want[8] = {birenGraphNodeTypeKernel, birenGraphNodeTypeMemcpy, birenGraphNodeTypeMemset,
                                birenGraphNodeTypeHost, birenGraphNodeTypeGraph, birenGraphNodeTypeEmpty,
                                birenGraphNodeTypeWaitEvent, birenGraphNodeTypeEventRecord};
  for (int i = 0; i < 8; i++) {
    birenGraphNodeType t;
    OK(birenGraphNodeGetType(n[i], &t));
    EXPECT(t == want[i]);
  }
  EXPECT_CODE(birenGraphNodeGetType(n[0], NULL), BIREN_ERROR_INVALID_VALUE);
  size_t count = 0;
  OK(birenGraphGetNodes(g, NULL, &count));
  EXPECT(count == 8);
  OK(birenGraphDestroy(child));
  OK(birenGraphDestroy(g));
  birenGraphNodeType t;
  EXPECT_CODE(birenGraphNodeGetType(n[0], &t), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenGraphNodeGetType((birenGraphNode_t)(uintptr_t)12345, &t), BIREN_ERROR_INVALID_HANDLE);
  OK(birenEventDestroy(ev));
  OK(birenFree(d));
  return 0;
}

static int add_node_argument_errors(void) {
  int *d;
  int h = 0;
  birenGraph_t g, other;
  birenGraphNode_t a, b, x;
  OK(birenMalloc((void **)&d, 64));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphCreate(&other, 0));
  OK(birenGraphAddEmptyNode(&a, g, NULL, 0));
  OK(birenGraphAddEmptyNode(&x, other, NULL, 0));
  EXPECT_CODE(birenGraphAddEmptyNode(NULL, g, NULL, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphAddEmptyNode(&b, g, NULL, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphAddEmptyNode(&b, g, &x, 1), BIREN_ERROR_INVALID_VALUE);
  birenGraphNode_t twice[2] = {a, a};
  EXPECT_CODE(birenGraphAddEmptyNode(&b, g, twice, 2), BIREN_ERROR_INVALID_VALUE);
  birenGraphNode_t forged = (birenGraphNode_t)(uintptr_t)0x777;
  EXPECT_CODE(birenGraphAddEmptyNode(&b, g, &forged, 1), BIREN_ERROR_INVALID_HANDLE);
  /* Kernel parameters. */
  birenKernelNodeParams kp = kparams(NULL, 1, 1, NULL);
  EXPECT_CODE(birenGraphAddKernelNode(&b, g, NULL, 0, &kp), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphAddKernelNode(&b, g, NULL, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  kp = kparams(empty_kernel, 1, 2048, NULL);
  EXPECT_CODE(birenGraphAddKernelNode(&b, g, NULL, 0, &kp), BIREN_ERROR_INVALID_CONFIGURATION);
  kp = kparams(empty_kernel, 0, 1, NULL);
  EXPECT_CODE(birenGraphAddKernelNode(&b, g, NULL, 0, &kp), BIREN_ERROR_INVALID_CONFIGURATION);
  void *extra[1] = {NULL};
  kp = kparams(empty_kernel, 1, 1, NULL);
  kp.extra = extra;
  EXPECT_CODE(birenGraphAddKernelNode(&b, g, NULL, 0, &kp), BIREN_ERROR_INVALID_VALUE);
  kp = kparams(put, 1, 1, NULL); /* registered with 3 arguments: kernelParams needed */
  EXPECT_CODE(birenGraphAddKernelNode(&b, g, NULL, 0, &kp), BIREN_ERROR_INVALID_VALUE);
  /* Copies: as birenMemcpy. */
  EXPECT_CODE(birenGraphAddMemcpyNode1D(&b, g, NULL, 0, &h, d, 65, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_CODE(birenGraphAddMemcpyNode1D(&b, g, NULL, 0, &h, &h, 4, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_DEVICE_POINTER);
  EXPECT_CODE(birenGraphAddMemcpyNode1D(&b, g, NULL, 0, &h, d, 4, (birenMemcpyKind)9), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_CODE(birenGraphAddMemcpyNode1D(&b, g, NULL, 0, NULL, d, 4, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphAddMemcpyNode1D(&b, g, NULL, 0, &h, d, 0, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_VALUE);
  /* Memsets. */
  birenMemsetParams mp = {d, 0, 0, 3, 4, 1};
  EXPECT_CODE(birenGraphAddMemsetNode(&b, g, NULL, 0, &mp), BIREN_ERROR_INVALID_VALUE);
  birenMemsetParams mp2 = {d, 0, 0, 4, 17, 1};
  EXPECT_CODE(birenGraphAddMemsetNode(&b, g, NULL, 0, &mp2), BIREN_ERROR_OUT_OF_BOUNDS);
  birenMemsetParams mp3 = {&h, 0, 0, 1, 4, 1};
  EXPECT_CODE(birenGraphAddMemsetNode(&b, g, NULL, 0, &mp3), BIREN_ERROR_INVALID_DEVICE_POINTER);
  birenMemsetParams mp4 = {d, 8, 0, 4, 4, 2}; /* row of 16 bytes, pitch 8 */
  EXPECT_CODE(birenGraphAddMemsetNode(&b, g, NULL, 0, &mp4), BIREN_ERROR_INVALID_VALUE);
  /* Host nodes, events, child graphs. */
  birenHostNodeParams hp = {NULL, NULL};
  EXPECT_CODE(birenGraphAddHostNode(&b, g, NULL, 0, &hp), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphAddEventRecordNode(&b, g, NULL, 0, (birenEvent_t)(uintptr_t)0x99), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenGraphAddEventWaitNode(&b, g, NULL, 0, NULL), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenGraphAddChildGraphNode(&b, g, NULL, 0, g), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphAddChildGraphNode(&b, g, NULL, 0, NULL), BIREN_ERROR_INVALID_HANDLE);
  /* None of the failures added a node. */
  size_t count = 0;
  OK(birenGraphGetNodes(g, NULL, &count));
  EXPECT(count == 1);
  OK(birenGraphDestroy(g));
  OK(birenGraphDestroy(other));
  OK(birenFree(d));
  return 0;
}

static int edges_queries_and_cycles(void) {
  birenGraph_t g;
  birenGraphNode_t a, b, c, d;
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddEmptyNode(&a, g, NULL, 0));
  OK(birenGraphAddEmptyNode(&b, g, &a, 1));
  OK(birenGraphAddEmptyNode(&c, g, &b, 1));
  OK(birenGraphAddEmptyNode(&d, g, NULL, 0));
  /* c -> a closes a cycle: refused, nothing added. */
  EXPECT_CODE(birenGraphAddDependencies(g, &c, &a, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphAddDependencies(g, &a, &a, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphAddDependencies(g, &a, &b, 1), BIREN_ERROR_INVALID_VALUE); /* present */
  birenGraphNode_t from2[2] = {d, c}, to2[2] = {c, a};
  EXPECT_CODE(birenGraphAddDependencies(g, from2, to2, 2), BIREN_ERROR_INVALID_VALUE); /* all or none */
  size_t ne = 0;
  OK(birenGraphGetEdges(g, NULL, NULL, &ne));
  EXPECT(ne == 2);
  OK(birenGraphAddDependencies(g, &d, &c, 1));
  birenGraphNode_t from[4], to[4];
  ne = 4;
  OK(birenGraphGetEdges(g, from, to, &ne));
  EXPECT(ne == 3);
  EXPECT(from[0] == a && to[0] == b);
  EXPECT(from[1] == b && to[1] == c);
  EXPECT(from[2] == d && to[2] == c);
  EXPECT(from[3] == NULL && to[3] == NULL);
  EXPECT_CODE(birenGraphGetEdges(g, from, NULL, &ne), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphGetEdges(g, NULL, NULL, NULL), BIREN_ERROR_INVALID_VALUE);
  birenGraphNode_t roots[3];
  size_t nr = 3;
  OK(birenGraphGetRootNodes(g, roots, &nr));
  EXPECT(nr == 2 && roots[0] == a && roots[1] == d && roots[2] == NULL);
  birenGraphNode_t all[2];
  size_t nn = 2;
  OK(birenGraphGetNodes(g, all, &nn));
  EXPECT(nn == 4 && all[0] == a && all[1] == b);
  /* Remove. */
  OK(birenGraphRemoveDependencies(g, &a, &b, 1));
  EXPECT_CODE(birenGraphRemoveDependencies(g, &a, &b, 1), BIREN_ERROR_INVALID_VALUE);
  nr = 0;
  OK(birenGraphGetRootNodes(g, NULL, &nr));
  EXPECT(nr == 3);
  /* Now c -> a is legal (a no longer reaches c). */
  OK(birenGraphAddDependencies(g, &c, &a, 1));
  EXPECT_CODE(birenGraphAddDependencies(g, NULL, NULL, 1), BIREN_ERROR_INVALID_VALUE);
  OK(birenGraphDestroy(g));
  return 0;
}

/* ---- Launching -------------------------------------------------------------------------------- */

/* A diamond a -> (b, c) -> d of kernels and a copy: dependencies respected, memory right. */
static int diamond_runs_in_dependency_order(void) {
  int *log, *next, h[4] = {0};
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t a, b, c, d, cp;
  OK(birenMalloc((void **)&log, 64));
  OK(birenMalloc((void **)&next, sizeof(int)));
  OK(birenMemset(next, 0, sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  OK(add_log(&a, g, NULL, 0, log, next, 1));
  OK(add_log(&b, g, &a, 1, log, next, 2));
  OK(add_log(&c, g, &a, 1, log, next, 3));
  birenGraphNode_t bc[2] = {b, c};
  OK(add_log(&d, g, bc, 2, log, next, 4));
  OK(birenGraphAddMemcpyNode1D(&cp, g, &d, 1, h, log, sizeof h, birenMemcpyDeviceToHost));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, NULL));
  OK(birenStreamSynchronize(NULL));
  EXPECT(h[0] == 1 && h[3] == 4);
  EXPECT((h[1] == 2 && h[2] == 3) || (h[1] == 3 && h[2] == 2));
  OK(birenGraphExecDestroy(e));
  EXPECT_CODE(birenGraphExecDestroy(e), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenGraphLaunch(e, NULL), BIREN_ERROR_INVALID_HANDLE);
  OK(birenGraphDestroy(g));
  OK(birenFree(log));
  OK(birenFree(next));
  return 0;
}

/* Independent nodes run in parallel on the compute units: 4 nodes of 100 ms on 2 units take
 * about 200 ms, not 400 (the bound is loose: the machine may be loaded). */
static int independent_nodes_run_in_parallel(void) {
  NEED_TWO_COMPUTE_UNITS();
  interval iv[4];
  birenGraph_t g;
  birenGraphExec_t e;
  OK(birenGraphCreate(&g, 0));
  for (int i = 0; i < 4; i++) {
    interval *p = &iv[i];
    double ms = 100;
    void *args[2] = {&p, &ms};
    birenKernelNodeParams kp = kparams(timed_spin, 1, 1, args);
    birenGraphNode_t n;
    OK(birenGraphAddKernelNode(&n, g, NULL, 0, &kp));
  }
  OK(birenGraphInstantiate(&e, g, 0));
  double t0 = now_s();
  OK(birenGraphLaunch(e, NULL));
  OK(birenDeviceSynchronize());
  double took = now_s() - t0;
  EXPECT(overlap(iv[0], iv[1]) || overlap(iv[0], iv[2]) || overlap(iv[0], iv[3]));
  if (!getenv("BIREN_UNDER_VALGRIND")) EXPECT(took < 0.39); /* serial: >= 0.4 s; valgrind runs one thread at a time */
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  return 0;
}

/* A graph launch is one item of its stream: earlier work first, later work after all of it. */
static int launch_is_ordered_in_its_stream(void) {
  interval before_iv, node_iv, after_iv;
  birenStream_t s;
  birenGraph_t g;
  birenGraphExec_t e;
  OK(birenStreamCreate(&s));
  OK(spin_graph(&g, &e, &node_iv, 30));
  OK(launch_timed_spin(&before_iv, 30, s));
  OK(birenGraphLaunch(e, s));
  OK(launch_timed_spin(&after_iv, 1, s));
  EXPECT_CODE(birenStreamQuery(s), BIREN_ERROR_NOT_READY);
  OK(birenStreamSynchronize(s));
  EXPECT(before(before_iv, node_iv));
  EXPECT(before(node_iv, after_iv));
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(s));
  return 0;
}

/* One exec launched 1000 times: every launch runs all its nodes once. */
static int relaunch_one_exec_many_times(void) {
  int *d, h[2] = {0, 0};
  int counter = 0;
  birenStream_t s;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t k, host;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, 2 * sizeof(int)));
  OK(birenMemset(d, 0, 2 * sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  int n = 2;
  void *args[2] = {&d, &n};
  birenKernelNodeParams kp = kparams(add_one, 1, 2, args);
  OK(birenGraphAddKernelNode(&k, g, NULL, 0, &kp));
  birenHostNodeParams hp = {host_count, &counter};
  OK(birenGraphAddHostNode(&host, g, &k, 1, &hp));
  OK(birenGraphInstantiate(&e, g, 0));
  for (int i = 0; i < 1000; i++) OK(birenGraphLaunch(e, s));
  OK(birenStreamSynchronize(s));
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h[0] == 1000 && h[1] == 1000);
  EXPECT(load_int(&counter) == 1000);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(s));
  OK(birenFree(d));
  return 0;
}

/* Launches of one exec in two streams run one after another, never overlapping. */
static int launches_of_one_exec_never_overlap(void) {
  NEED_TWO_COMPUTE_UNITS();
  interval iv;
  birenStream_t s1, s2;
  birenGraph_t g;
  birenGraphExec_t e;
  OK(birenStreamCreate(&s1));
  OK(birenStreamCreate(&s2));
  OK(spin_graph(&g, &e, &iv, 60));
  double t0 = now_s();
  OK(birenGraphLaunch(e, s1));
  OK(birenGraphLaunch(e, s2));
  OK(birenStreamSynchronize(s2));
  OK(birenStreamSynchronize(s1));
  EXPECT(now_s() - t0 >= 0.115); /* two 60 ms launches in sequence */
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(s1));
  OK(birenStreamDestroy(s2));
  return 0;
}

/* ExecKernelNodeSetParams between launches: the next launch uses the new values, the exec's
 * source graph is untouched. */
static int kernel_params_update_between_launches(void) {
  int *d, h = 0;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t k, other;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  OK(add_put(&k, g, NULL, 0, d, 0, 5));
  OK(birenGraphAddEmptyNode(&other, g, NULL, 0));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, NULL));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 5);
  int i = 0, v = 6;
  void *args[3] = {&d, &i, &v};
  birenKernelNodeParams kp = kparams(put, 1, 1, args);
  OK(birenGraphExecKernelNodeSetParams(e, k, &kp));
  v = 100; /* values were copied: this does not matter */
  OK(birenGraphLaunch(e, NULL));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 6);
  EXPECT_CODE(birenGraphExecKernelNodeSetParams(e, other, &kp), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphExecKernelNodeSetParams(e, k, NULL), BIREN_ERROR_INVALID_VALUE);
  birenKernelNodeParams bad = kparams(put, 1, 4096, args);
  EXPECT_CODE(birenGraphExecKernelNodeSetParams(e, k, &bad), BIREN_ERROR_INVALID_CONFIGURATION);
  /* A node of another graph. */
  birenGraph_t g2;
  birenGraphNode_t k2;
  OK(birenGraphCreate(&g2, 0));
  OK(add_put(&k2, g2, NULL, 0, d, 0, 1));
  EXPECT_CODE(birenGraphExecKernelNodeSetParams(e, k2, &kp), BIREN_ERROR_INVALID_VALUE);
  OK(birenGraphDestroy(g2));
  OK(birenGraphExecDestroy(e));
  EXPECT_CODE(birenGraphExecKernelNodeSetParams(e, k, &kp), BIREN_ERROR_INVALID_HANDLE);
  OK(birenGraphDestroy(g));
  OK(birenFree(d));
  return 0;
}

/* ExecUpdate: same topology takes the new parameters; a different one is refused with the
 * reason, and the exec keeps running the old parameters. */
static int exec_update_same_and_changed_topology(void) {
  int *d, h = 0;
  birenGraph_t g1, g2, g3, g4;
  birenGraphExec_t e;
  birenGraphNode_t n, m;
  birenGraphExecUpdateResultInfo info;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenGraphCreate(&g1, 0));
  OK(add_put(&n, g1, NULL, 0, d, 0, 1));
  OK(birenGraphInstantiate(&e, g1, 0));
  OK(birenGraphCreate(&g2, 0));
  OK(add_put(&n, g2, NULL, 0, d, 0, 2));
  OK(birenGraphExecUpdate(e, g2, &info));
  EXPECT(info.result == birenGraphExecUpdateSuccess);
  OK(birenGraphLaunch(e, NULL));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 2);
  OK(birenGraphCreate(&g3, 0));
  OK(add_put(&n, g3, NULL, 0, d, 0, 3));
  OK(add_put(&m, g3, &n, 1, d, 0, 3));
  EXPECT_CODE(birenGraphExecUpdate(e, g3, &info), BIREN_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT(info.result == birenGraphExecUpdateErrorTopologyChanged);
  OK(birenGraphCreate(&g4, 0));
  OK(birenGraphAddEmptyNode(&m, g4, NULL, 0));
  EXPECT_CODE(birenGraphExecUpdate(e, g4, &info), BIREN_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT(info.result == birenGraphExecUpdateErrorNodeTypeChanged);
  EXPECT(info.errorNode == m);
  EXPECT_CODE(birenGraphExecUpdate(e, g4, NULL), BIREN_ERROR_INVALID_VALUE);
  OK(birenGraphLaunch(e, NULL));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 2);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g1));
  OK(birenGraphDestroy(g2));
  OK(birenGraphDestroy(g3));
  OK(birenGraphDestroy(g4));
  OK(birenFree(d));
  return 0;
}

/* Memset node with 4-byte elements and pitch; a 3-D copy node; a child graph. */
static int memset_memcpy3d_and_child_graph(void) {
  unsigned *d;
  unsigned h[16];
  birenGraph_t g, child;
  birenGraphExec_t e;
  birenGraphNode_t ms, cp, ch;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMemset(d, 0, sizeof h));
  OK(birenGraphCreate(&child, 0));
  /* 2 rows of 3 elements, rows 16 bytes (4 elements) apart. */
  birenMemsetParams mp = {d, 16, 0xA1B2C3D4u, 4, 3, 2};
  OK(birenGraphAddMemsetNode(&ms, child, NULL, 0, &mp));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddChildGraphNode(&ch, g, NULL, 0, child));
  OK(birenGraphDestroy(child)); /* the node keeps its own copy */
  memset(h, 0, sizeof h);
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr.ptr = d;
  p.srcPtr.pitch = 16;
  p.srcPtr.ysize = 4;
  p.dstPtr.ptr = h;
  p.dstPtr.pitch = 16;
  p.dstPtr.ysize = 4;
  p.extent.width = 16;
  p.extent.height = 2;
  p.extent.depth = 1;
  p.kind = birenMemcpyDeviceToHost;
  OK(birenGraphAddMemcpyNode(&cp, g, &ch, 1, &p));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, NULL));
  OK(birenStreamSynchronize(NULL));
  for (int r = 0; r < 2; r++)
    for (int c = 0; c < 4; c++) EXPECT(h[r * 4 + c] == (c < 3 ? 0xA1B2C3D4u : 0u));
  EXPECT(h[8] == 0);
  /* Bad 3-D parameters. */
  birenMemcpy3DParms q = p;
  q.extent.width = 17; /* wider than the pitch: birenMemcpy3D's code */
  EXPECT_CODE(birenGraphAddMemcpyNode(&cp, g, NULL, 0, &q), BIREN_ERROR_INVALID_PITCH_VALUE);
  q = p;
  q.extent.height = 5; /* past the 64-byte allocation */
  q.srcPtr.ysize = 8;
  q.dstPtr.ysize = 8;
  EXPECT_CODE(birenGraphAddMemcpyNode(&cp, g, NULL, 0, &q), BIREN_ERROR_OUT_OF_BOUNDS);
  q = p;
  q.srcArray = (birenArray_t)(uintptr_t)1;
  EXPECT_CODE(birenGraphAddMemcpyNode(&cp, g, NULL, 0, &q), BIREN_ERROR_INVALID_VALUE);
  q = p;
  q.kind = 7;
  EXPECT_CODE(birenGraphAddMemcpyNode(&cp, g, NULL, 0, &q), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_CODE(birenGraphAddMemcpyNode(&cp, g, NULL, 0, NULL), BIREN_ERROR_INVALID_VALUE);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenFree(d));
  return 0;
}

/* Clone: same nodes and edges, new handles; the clone runs the same. */
static int clone_is_independent_and_equal(void) {
  int *d, h = 0;
  birenGraph_t g, c;
  birenGraphExec_t e;
  birenGraphNode_t a, b;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  OK(add_put(&a, g, NULL, 0, d, 0, 8));
  OK(birenGraphAddEmptyNode(&b, g, &a, 1));
  OK(birenGraphClone(&c, g));
  EXPECT_CODE(birenGraphClone(NULL, g), BIREN_ERROR_INVALID_VALUE);
  OK(birenGraphDestroy(g));
  birenGraphNode_t ns[2];
  size_t n = 2, ne = 0;
  OK(birenGraphGetNodes(c, ns, &n));
  EXPECT(n == 2 && ns[0] != a);
  OK(birenGraphGetEdges(c, NULL, NULL, &ne));
  EXPECT(ne == 1);
  OK(birenGraphInstantiateWithFlags(&e, c, birenGraphInstantiateFlagUpload));
  EXPECT_CODE(birenGraphInstantiateWithFlags(&e, c, 4), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphInstantiate(NULL, c, 0), BIREN_ERROR_INVALID_VALUE);
  birenGraphExec_t e2 = NULL;
  EXPECT_CODE(birenGraphInstantiate(&e2, g, 0), BIREN_ERROR_INVALID_HANDLE); /* g destroyed */
  EXPECT(e2 == NULL);
  OK(birenGraphLaunch(e, NULL));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 8);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(c));
  OK(birenFree(d));
  return 0;
}

/* Event nodes: the wait node holds the launch until the event's record; the record node makes
 * the event reached when the launch is. */
static int event_nodes_order_the_launch(void) {
  int *d, h = 0;
  interval spin_iv;
  birenStream_t s1, s2;
  birenEvent_t before_ev, after_ev;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t w, k, r;
  OK(birenStreamCreateWithFlags(&s1, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&s2, birenStreamNonBlocking));
  OK(birenEventCreate(&before_ev));
  OK(birenEventCreate(&after_ev));
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMemset(d, 0, sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddEventWaitNode(&w, g, NULL, 0, before_ev));
  OK(add_put(&k, g, &w, 1, d, 0, 9));
  OK(birenGraphAddEventRecordNode(&r, g, &k, 1, after_ev));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(launch_timed_spin(&spin_iv, 60, s1));
  OK(birenEventRecord(before_ev, s1));
  OK(birenGraphLaunch(e, s2));
  OK(birenEventSynchronize(after_ev));
  double done = now_s();
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 9);
  EXPECT(done >= spin_iv.end);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(before_ev));
  OK(birenEventDestroy(after_ev));
  OK(birenStreamDestroy(s1));
  OK(birenStreamDestroy(s2));
  OK(birenFree(d));
  return 0;
}

/* A node that traps fails the launch with LAUNCH_FAILURE, sticky like a kernel's; the nodes
 * after it do not run; reset clears it and the exec runs again. */
static int trapping_node_fails_the_launch_sticky(void) {
  int *d, h = 0;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t t, after;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMemset(d, 0, sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  birenKernelNodeParams kp = kparams(trapper, 1, 1, NULL);
  OK(birenGraphAddKernelNode(&t, g, NULL, 0, &kp));
  OK(add_put(&after, g, &t, 1, d, 0, 1));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, NULL));
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenMalloc((void **)&d, 4), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT_CODE(birenGraphLaunch(e, NULL), BIREN_ERROR_LAUNCH_FAILURE);
  OK(birenDeviceReset());
  /* Graphs and execs survive a reset; the put node's memory does not. */
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenGraphDestroy(g));
  OK(birenGraphCreate(&g, 0));
  OK(add_put(&after, g, NULL, 0, d, 0, 4));
  birenGraphExec_t e2;
  OK(birenGraphInstantiate(&e2, g, 0));
  OK(birenGraphLaunch(e2, NULL));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 4);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphExecDestroy(e2));
  OK(birenGraphDestroy(g));
  OK(birenFree(d));
  return 0;
}


/* Chains of single-thread kernels run back to back as one dispatch: order kept, a trap in the
 * middle stops the rest, a parameter update of a chain member takes effect. */
static int fused_chain_keeps_order_trap_and_updates(void) {
  int *log, *next, h[8];
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t n[6];
  OK(birenMalloc((void **)&log, sizeof h));
  OK(birenMalloc((void **)&next, sizeof(int)));
  OK(birenMemset(log, 0, sizeof h));
  OK(birenMemset(next, 0, sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  for (int i = 0; i < 6; i++) OK(add_log(&n[i], g, i ? &n[i - 1] : NULL, i ? 1 : 0, log, next, 10 + i));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, NULL));
  OK(birenMemcpy(h, log, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 6; i++) EXPECT(h[i] == 10 + i);
  /* Update node 2 of the chain: it logs 99 now. */
  int zero = 0, tag = 99;
  void *args[3] = {&log, &next, &tag};
  birenKernelNodeParams kp = kparams(log_tag, 1, 1, args);
  OK(birenGraphExecKernelNodeSetParams(e, n[2], &kp));
  OK(birenMemcpy(next, &zero, sizeof zero, birenMemcpyHostToDevice));
  OK(birenGraphLaunch(e, NULL));
  OK(birenMemcpy(h, log, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h[1] == 11 && h[2] == 99 && h[3] == 13);
  OK(birenGraphExecDestroy(e));
  /* A trap in the middle of a chain: the nodes after it do not run. */
  birenGraph_t g2;
  birenGraphNode_t a, t, b;
  OK(birenMemcpy(next, &zero, sizeof zero, birenMemcpyHostToDevice));
  OK(birenMemset(log, 0, sizeof h));
  OK(birenGraphCreate(&g2, 0));
  OK(add_log(&a, g2, NULL, 0, log, next, 1));
  birenKernelNodeParams tp = kparams(trapper, 1, 1, NULL);
  OK(birenGraphAddKernelNode(&t, g2, &a, 1, &tp));
  OK(add_log(&b, g2, &t, 1, log, next, 2));
  int ran = 0;
  birenHostNodeParams hp = {host_count, &ran};
  birenGraphNode_t hn;
  OK(birenGraphAddHostNode(&hn, g2, &b, 1, &hp));
  OK(birenGraphInstantiate(&e, g2, 0));
  OK(birenGraphLaunch(e, NULL));
  EXPECT_CODE(birenStreamSynchronize(NULL), BIREN_ERROR_LAUNCH_FAILURE);
  EXPECT(load_int(&ran) == 0);
  OK(birenDeviceReset());
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenGraphDestroy(g2));
  return 0;
}


/* A wait node on an event never recorded: the launch waits for its next record (BIREN
 * extension); a synchronize whose work can never finish returns DEADLOCK; a record releases it. */
static int wait_node_on_unrecorded_event_deadlock_then_release(void) {
  int *d, h = 0;
  birenStream_t s, other;
  birenEvent_t ev;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t w, k;
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamCreateWithFlags(&other, birenStreamNonBlocking));
  OK(birenEventCreate(&ev));
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMemset(d, 0, sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddEventWaitNode(&w, g, NULL, 0, ev));
  OK(add_put(&k, g, &w, 1, d, 0, 7));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, s));
  EXPECT_CODE(birenStreamSynchronize(s), BIREN_ERROR_DEADLOCK);
  OK(birenEventRecord(ev, other));
  OK(birenStreamSynchronize(s));
  OK(birenMemcpy(&h, d, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 7);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenEventDestroy(ev));
  OK(birenStreamDestroy(s));
  OK(birenStreamDestroy(other));
  OK(birenFree(d));
  return 0;
}

/* A copy node whose device memory was freed: the launch is refused, nothing runs. */
static int launch_with_freed_memory_is_refused(void) {
  int *d, h = 0;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t n;
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddMemcpyNode1D(&n, g, NULL, 0, d, &h, sizeof h, birenMemcpyHostToDevice));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, NULL));
  OK(birenFree(d));
  EXPECT_CODE(birenGraphLaunch(e, NULL), BIREN_ERROR_INVALID_DEVICE_POINTER);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  return 0;
}

/* Destroying a graph does not affect its exec; destroying an exec while its launch runs lets the
 * launch finish. */
static int destroy_while_running(void) {
  interval iv = {0, 0};
  birenGraph_t g;
  birenGraphExec_t e;
  OK(spin_graph(&g, &e, &iv, 40));
  OK(birenGraphDestroy(g));
  OK(birenGraphLaunch(e, NULL));
  OK(birenGraphExecDestroy(e));
  OK(birenDeviceSynchronize());
  EXPECT(iv.end > iv.start);
  return 0;
}

/* A reset drops a launch that has not started, and the device works afterwards. */
static int reset_drops_queued_launch(void) {
  int *d, h = 0;
  interval iv;
  birenStream_t s;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t n;
  OK(birenStreamCreate(&s));
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  birenMemsetParams mp = {d, 0, 1, 4, 1, 1};
  OK(birenGraphAddMemsetNode(&n, g, NULL, 0, &mp));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(launch_timed_spin(&iv, 50, s));
  OK(birenGraphLaunch(e, s));
  OK(birenDeviceReset());
  EXPECT_CODE(birenGraphLaunch(e, s), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_CODE(birenGraphLaunch(e, NULL), BIREN_ERROR_INVALID_DEVICE_POINTER); /* d died */
  OK(birenMalloc((void **)&d, sizeof(int)));
  OK(birenMemcpy(d, &h, sizeof h, birenMemcpyHostToDevice));
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenFree(d));
  return 0;
}

/* Empty graphs and graphs of only empty nodes complete. */
static int empty_graphs_complete(void) {
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t a, b;
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, NULL));
  OK(birenStreamSynchronize(NULL));
  OK(birenGraphExecDestroy(e));
  OK(birenGraphAddEmptyNode(&a, g, NULL, 0));
  for (int i = 0; i < 2000; i++) {
    OK(birenGraphAddEmptyNode(&b, g, &a, 1));
    a = b;
  }
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, NULL));
  OK(birenGraphLaunch(e, NULL));
  OK(birenStreamSynchronize(NULL));
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  return 0;
}

static int dot_print_writes_a_graphviz_file(void) {
  int *d;
  birenGraph_t g, child;
  birenGraphNode_t a, b, c;
  OK(birenMalloc((void **)&d, 64));
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphCreate(&child, 0));
  OK(birenGraphAddEmptyNode(&c, child, NULL, 0));
  OK(add_put(&a, g, NULL, 0, d, 0, 1));
  OK(birenGraphAddChildGraphNode(&b, g, &a, 1, child));
  char path[] = "/tmp/biren_graph_test_XXXXXX";
  int fd = mkstemp(path);
  EXPECT(fd >= 0);
  close(fd);
  OK(birenGraphDebugDotPrint(g, path, birenGraphDebugDotFlagsVerbose));
  FILE *f = fopen(path, "r");
  EXPECT(f != NULL);
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  unlink(path);
  buf[n] = 0;
  EXPECT(strncmp(buf, "digraph", 7) == 0);
  EXPECT(strstr(buf, "kernel put") != NULL);
  EXPECT(strstr(buf, "\"g_0\" -> \"g_1\"") != NULL);
  EXPECT(strstr(buf, "child graph") != NULL);
  EXPECT_CODE(birenGraphDebugDotPrint(g, NULL, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenGraphDebugDotPrint(g, "/nonexistent-dir/x.dot", 0), BIREN_ERROR_OPERATING_SYSTEM);
  OK(birenGraphDestroy(g));
  OK(birenGraphDestroy(child));
  OK(birenFree(d));
  return 0;
}

/* Many threads building, instantiating and launching their own graphs at once. */
static void *graph_worker(void *arg) {
  int *d = (int *)arg;
  birenStream_t s;
  if (birenStreamCreate(&s) != BIREN_SUCCESS) return (void *)1;
  for (int r = 0; r < 20; r++) {
    birenGraph_t g;
    birenGraphExec_t e;
    birenGraphNode_t n;
    int one = 1;
    void *args[2] = {&d, &one};
    birenKernelNodeParams kp = kparams(add_one, 1, 1, args);
    if (birenGraphCreate(&g, 0) || birenGraphAddKernelNode(&n, g, NULL, 0, &kp) || birenGraphInstantiate(&e, g, 0))
      return (void *)1;
    for (int i = 0; i < 10; i++)
      if (birenGraphLaunch(e, s)) return (void *)1;
    if (birenStreamSynchronize(s) || birenGraphExecDestroy(e) || birenGraphDestroy(g)) return (void *)1;
  }
  return birenStreamDestroy(s) ? (void *)1 : NULL;
}

static int threads_build_and_launch_concurrently(void) {
  int *d;
  int h[4];
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMemset(d, 0, sizeof h));
  pthread_t th[4];
  for (int i = 0; i < 4; i++) EXPECT(pthread_create(&th[i], NULL, graph_worker, d + i) == 0);
  for (int i = 0; i < 4; i++) {
    void *r;
    pthread_join(th[i], &r);
    EXPECT(r == NULL);
  }
  OK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  for (int i = 0; i < 4; i++) EXPECT(h[i] == 200);
  OK(birenFree(d));
  return 0;
}


/* ---- Validator ------------------------------------------------------------------------------ */

static char g_lines[16][1024];
static int g_nlines;
static void collect(const char *msg, void *user) {
  (void)user;
  if (g_nlines < 16) snprintf(g_lines[g_nlines++], sizeof g_lines[0], "%s", msg);
}
static int saw(const char *needle) {
  for (int i = 0; i < g_nlines; i++)
    if (strstr(g_lines[i], needle)) return 1;
  return 0;
}

/* The same small kernels launched in the same order again and again: the validator suggests a
 * graph (once); destroying an exec while its launch runs is reported. */
static int validator_advises_graphs_and_reports_misuse(void) {
  int *d;
  OK(birenMalloc((void **)&d, 16));
  g_nlines = 0;
  OK(birenSetValidatorCallback(collect, NULL));
  OK(birenSetDeviceValidator(1));
  for (int i = 0; i < 60; i++) {
    int zero = 0, one = 1, v = i;
    OK(BIREN_LAUNCH(put, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, d, zero, v));
    OK(BIREN_LAUNCH(add_one, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, d, one));
  }
  OK(birenDeviceSynchronize());
  int advised = saw("birenGraphLaunch") && saw("put, add_one");
  /* Exec destroyed while its launch is pending. */
  interval iv;
  birenGraph_t g;
  birenGraphExec_t e;
  OK(spin_graph(&g, &e, &iv, 50));
  OK(birenGraphLaunch(e, NULL));
  OK(birenGraphExecDestroy(e));
  int reported = saw("destroyed while its launch");
  OK(birenDeviceSynchronize());
  OK(birenSetDeviceValidator(0));
  OK(birenSetValidatorCallback(NULL, NULL));
  OK(birenGraphDestroy(g));
  OK(birenFree(d));
  EXPECT(advised);
  EXPECT(reported);
  return 0;
}

static const test_case tests[] = {
    TEST(create_destroy_and_flags),
    TEST(every_node_kind_and_its_type),
    TEST(add_node_argument_errors),
    TEST(edges_queries_and_cycles),
    TEST(diamond_runs_in_dependency_order),
    TEST(independent_nodes_run_in_parallel),
    TEST(launch_is_ordered_in_its_stream),
    TEST(relaunch_one_exec_many_times),
    TEST(launches_of_one_exec_never_overlap),
    TEST(kernel_params_update_between_launches),
    TEST(exec_update_same_and_changed_topology),
    TEST(memset_memcpy3d_and_child_graph),
    TEST(clone_is_independent_and_equal),
    TEST(event_nodes_order_the_launch),
    TEST(trapping_node_fails_the_launch_sticky),
    TEST(fused_chain_keeps_order_trap_and_updates),
    TEST(wait_node_on_unrecorded_event_deadlock_then_release),
    TEST(launch_with_freed_memory_is_refused),
    TEST(destroy_while_running),
    TEST(reset_drops_queued_launch),
    TEST(empty_graphs_complete),
    TEST(dot_print_writes_a_graphviz_file),
    TEST(threads_build_and_launch_concurrently),
    TEST(validator_advises_graphs_and_reports_misuse),
};

int main(void) {
  want_two_compute_units();
  birenGraph_t g;
  if (birenGraphCreate(&g, 0) != BIREN_ERROR_NOT_INITIALIZED) return 2;
  if (birenInit() != BIREN_SUCCESS) return 2;
  register_kernels();
  return RUN_TESTS("graphs", tests, reset_device, 20);
}
