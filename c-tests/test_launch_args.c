/* Launches checked like calls. BIREN_LAUNCH of a BIREN_KERNEL kernel converts each argument to
 * its parameter's type as a call does (each numeric conversion below, compared with the same
 * call of a host function); a launch of a kernel whose signature is known (BIREN_KERNEL,
 * birenKernelRegister) whose arguments differ in number or size is refused with
 * BIREN_ERROR_INVALID_VALUE before anything is enqueued, through every launch path:
 * BIREN_LAUNCH where the definition is not in view, birenLaunchKernelArgs, birenLaunchKernel
 * and birenLaunchCooperativeKernel (a NULL array or entry: their arrays carry no length), graph
 * kernel nodes (kernelParams, extra) and birenGraphExecKernelNodeSetParams. Built as C99 by
 * `make test-c`; test_launch_typed.sh builds it as C11 and C++11 too, checks the validator's
 * messages, and that a wrong number of arguments does not compile. */
#include "harness.h"

/* What a parameter received, as the kernel saw it. */
typedef struct seen {
  long long ll;
  float f;
  unsigned u;
  double d;
  short s;
  unsigned char uc;
  int i;
  int *p;
} seen;

/* A call of this host function converts its arguments as the typed launch must. */
static seen as_call(long long ll, float f, unsigned u, double d, short s, unsigned char uc, int i, int *p) {
  seen r;
  r.ll = ll;
  r.f = f;
  r.u = u;
  r.d = d;
  r.s = s;
  r.uc = uc;
  r.i = i;
  r.p = p;
  return r;
}

BIREN_KERNEL(record, (long long) ll, (float) f, (unsigned) u, (double) d, (short) s, (unsigned char) uc, (int) i,
             (int *) p, (seen *) out) {
  if (threadIdx.x == 0) *out = as_call(ll, f, u, d, s, uc, i, p);
}

static int same(const seen *a, const seen *b) {
  return a->ll == b->ll && a->f == b->f && a->u == b->u && a->d == b->d && a->s == b->s && a->uc == b->uc &&
         a->i == b->i && a->p == b->p;
}

/* Each argument of another type than its parameter's: int -5 to long long (was 4294967291),
 * 3.0 (double) to float (was 0), a size_t to unsigned (8 bytes for 4), int to double, int to
 * short and unsigned char (wrapping), double to int (truncation), and a pointer. */
static int typed_launch_converts_as_a_call(void) {
  int neg = -5, seven = 7, big = 70000, wide = 300, x = 0;
  size_t count = (size_t)123456;
  double three = 3.0, frac = 2.9;
  seen got, *pg = &got, want;
  memset(&got, 0, sizeof got);
  OK(BIREN_LAUNCH(record, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, neg, three, count, seven, big, wide, frac,
                  &x, pg));
  OK(birenDeviceSynchronize());
  want = as_call(neg, (float)three, (unsigned)count, seven, (short)big, (unsigned char)wide, (int)frac, &x);
  EXPECT(got.ll == -5);
  EXPECT(got.f == 3.0f);
  EXPECT(got.u == 123456u);
  EXPECT(same(&got, &want));
  /* expressions and literals too, the converted values copied at launch */
  OK(BIREN_LAUNCH(record, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, neg * 2, 0.5, count + 1, 1.25f, 7, 'a',
                  frac * 2, &x + 0, pg));
  neg = 0;
  OK(birenDeviceSynchronize());
  want = as_call(-10, 0.5f, 123457u, 1.25, 7, 'a', 5, &x);
  EXPECT(same(&got, &want));
  return 0;
}

/* ---- the runtime's check, where the compiler cannot see the signature ------------------------- */

static int runs; /* launches of the kernels below that ran */

/* Launched here before its BIREN_KERNEL definition is in view: by the arguments' own types. */
void later(void **args);

static birenError_t launch_later_ll(long long a, float b) {
  return BIREN_LAUNCH(later, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, a, b);
}
static birenError_t launch_later_one(int a) { return BIREN_LAUNCH(later, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, a); }
static birenError_t launch_later_ok(int a, float b) {
  return BIREN_LAUNCH(later, birenDim3(1, 1, 1), birenDim3(1, 1, 1), 0, NULL, a, b);
}

BIREN_KERNEL(later, (int) a, (float) b) {
  if (threadIdx.x == 0 && a == 2 && b == 0.5f) __atomic_fetch_add(&runs, 1, __ATOMIC_RELAXED);
}

/* A per-thread kernel registered with its sizes (int *, int). */
static void plain_add(void **args) {
  int *p = *(int **)args[0];
  int v = *(int *)args[1];
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static void register_plain_add(void) {
  static const size_t sizes[2] = {sizeof(int *), sizeof(int)};
  birenError_t e = birenKernelRegister(plain_add, "plain_add", 2, sizes);
  if (e != BIREN_SUCCESS) fprintf(stderr, "    birenKernelRegister returned %s\n", birenGetErrorName(e));
}

static int launch_where_the_definition_is_not_in_view(void) {
  runs = 0;
  EXPECT_CODE(launch_later_ll(2, 0.5f), BIREN_ERROR_INVALID_VALUE); /* 8 bytes for 4 */
  EXPECT_CODE(launch_later_one(2), BIREN_ERROR_INVALID_VALUE);      /* one for two */
  OK(birenDeviceSynchronize());
  EXPECT(runs == 0);
  OK(launch_later_ok(2, 0.5f));
  OK(birenDeviceSynchronize());
  EXPECT(runs == 1);
  return 0;
}

static int registered_kernel_through_BIREN_LAUNCH(void) {
  int n = 0, *pn = &n, one = 1;
  long long wide = 1;
  register_plain_add();
  EXPECT_CODE(BIREN_LAUNCH(plain_add, birenDim3(1, 1, 1), birenDim3(4, 1, 1), 0, NULL, pn, wide),
              BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(BIREN_LAUNCH(plain_add, birenDim3(1, 1, 1), birenDim3(4, 1, 1), 0, NULL, pn, one, one),
              BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(BIREN_LAUNCH(plain_add, birenDim3(1, 1, 1), birenDim3(4, 1, 1), 0, NULL, pn), BIREN_ERROR_INVALID_VALUE);
  OK(birenDeviceSynchronize());
  EXPECT(n == 0);
  OK(BIREN_LAUNCH(plain_add, birenDim3(1, 1, 1), birenDim3(4, 1, 1), 0, NULL, pn, one));
  OK(birenDeviceSynchronize());
  EXPECT(n == 4);
  return 0;
}

static int launch_kernel_args_checks_number_and_sizes(void) {
  int n = 0, *pn = &n, one = 1;
  long long wide = 1;
  void *args3[3];
  size_t sizes3[3];
  args3[0] = &pn;
  args3[1] = &one;
  args3[2] = &one;
  sizes3[0] = sizeof pn;
  sizes3[1] = sizeof one;
  sizes3[2] = sizeof one;
  register_plain_add();
  /* plain_add (int *, int) */
  EXPECT_CODE(birenLaunchKernelArgs(plain_add, birenDim3(1, 1, 1), birenDim3(1, 1, 1), args3, sizes3, 3, 0, NULL),
              BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenLaunchKernelArgs(plain_add, birenDim3(1, 1, 1), birenDim3(1, 1, 1), args3, sizes3, 1, 0, NULL),
              BIREN_ERROR_INVALID_VALUE);
  args3[1] = &wide;
  sizes3[1] = sizeof wide;
  EXPECT_CODE(birenLaunchKernelArgs(plain_add, birenDim3(1, 1, 1), birenDim3(1, 1, 1), args3, sizes3, 2, 0, NULL),
              BIREN_ERROR_INVALID_VALUE);
  /* later (int, float): a pointer's 8 bytes for the int */
  runs = 0;
  sizes3[0] = sizeof(int *);
  EXPECT_CODE(birenLaunchKernelArgs(later, birenDim3(1, 1, 1), birenDim3(1, 1, 1), args3, sizes3, 2, 0, NULL),
              BIREN_ERROR_INVALID_VALUE);
  OK(birenDeviceSynchronize());
  EXPECT(n == 0 && runs == 0);
  args3[1] = &one;
  sizes3[1] = sizeof one;
  OK(birenLaunchKernelArgs(plain_add, birenDim3(1, 1, 1), birenDim3(2, 1, 1), args3, sizes3, 2, 0, NULL));
  OK(birenDeviceSynchronize());
  EXPECT(n == 2);
  return 0;
}

/* birenLaunchKernel's array carries no length (CUDA's): a NULL array or entry is what can be
 * refused. */
static int launch_kernel_refuses_missing_arguments(void) {
  int n = 0, *pn = &n, one = 1;
  void *args[2];
  register_plain_add();
  args[0] = &pn;
  args[1] = NULL;
  EXPECT_CODE(birenLaunchKernel(plain_add, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL),
              BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenLaunchKernel(plain_add, birenDim3(1, 1, 1), birenDim3(1, 1, 1), args, 0, NULL),
              BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenLaunchCooperativeKernel(plain_add, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL),
              BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenLaunchKernel(record, birenDim3(1, 1, 1), birenDim3(1, 1, 1), NULL, 0, NULL),
              BIREN_ERROR_INVALID_VALUE);
  OK(birenDeviceSynchronize());
  EXPECT(n == 0);
  args[1] = &one;
  OK(birenLaunchKernel(plain_add, birenDim3(1, 1, 1), birenDim3(3, 1, 1), args, 0, NULL));
  OK(birenLaunchCooperativeKernel(plain_add, birenDim3(1, 1, 1), birenDim3(3, 1, 1), args, 0, NULL));
  OK(birenDeviceSynchronize());
  EXPECT(n == 6);
  return 0;
}

static birenKernelNodeParams node_params(birenKernel_t f, void **args) {
  birenKernelNodeParams p;
  memset(&p, 0, sizeof p);
  p.func = f;
  p.gridDim = birenDim3(1, 1, 1);
  p.blockDim = birenDim3(2, 1, 1);
  p.kernelParams = args;
  return p;
}

static int graph_kernel_nodes_check_their_arguments(void) {
  int n = 0, *pn = &n, one = 1;
  void *args[2], *extra[5];
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t node, bad;
  birenKernelNodeParams p;
  struct {
    int *p;
    int v;
    long long more;
  } packed;
  size_t packed_size = sizeof packed;
  register_plain_add();
  args[0] = &pn;
  args[1] = NULL;
  OK(birenGraphCreate(&g, 0));
  p = node_params(plain_add, NULL);
  EXPECT_CODE(birenGraphAddKernelNode(&bad, g, NULL, 0, &p), BIREN_ERROR_INVALID_VALUE);
  p = node_params(plain_add, args);
  EXPECT_CODE(birenGraphAddKernelNode(&bad, g, NULL, 0, &p), BIREN_ERROR_INVALID_VALUE);
  /* packed arguments: a buffer 8 bytes too long for (int *, int) */
  packed.p = pn;
  packed.v = 1;
  packed.more = 0;
  extra[0] = BIREN_LAUNCH_PARAM_BUFFER_POINTER;
  extra[1] = &packed;
  extra[2] = BIREN_LAUNCH_PARAM_BUFFER_SIZE;
  extra[3] = &packed_size;
  extra[4] = BIREN_LAUNCH_PARAM_END;
  p = node_params(plain_add, NULL);
  p.extra = extra;
  EXPECT_CODE(birenGraphAddKernelNode(&bad, g, NULL, 0, &p), BIREN_ERROR_INVALID_VALUE);
  args[1] = &one;
  p = node_params(plain_add, args);
  OK(birenGraphAddKernelNode(&node, g, NULL, 0, &p));
  OK(birenGraphInstantiate(&e, g, 0));
  args[1] = NULL;
  EXPECT_CODE(birenGraphExecKernelNodeSetParams(e, node, &p), BIREN_ERROR_INVALID_VALUE);
  p.kernelParams = NULL;
  EXPECT_CODE(birenGraphExecKernelNodeSetParams(e, node, &p), BIREN_ERROR_INVALID_VALUE);
  OK(birenGraphLaunch(e, NULL));
  OK(birenDeviceSynchronize());
  EXPECT(n == 2); /* the node's arguments as they were */
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  return 0;
}

static void reset_device(void) {
  birenError_t e = birenDeviceReset();
  if (e != BIREN_SUCCESS) fprintf(stderr, "    before_each: birenDeviceReset returned %s\n", birenGetErrorName(e));
}

static const test_case tests[] = {
    TEST(typed_launch_converts_as_a_call),
    TEST(launch_where_the_definition_is_not_in_view),
    TEST(registered_kernel_through_BIREN_LAUNCH),
    TEST(launch_kernel_args_checks_number_and_sizes),
    TEST(launch_kernel_refuses_missing_arguments),
    TEST(graph_kernel_nodes_check_their_arguments),
};

int main(void) {
  if (getenv("BIREN_COMPUTE_UNITS") == NULL) setenv("BIREN_COMPUTE_UNITS", "2", 1);
  if (birenInit() != BIREN_SUCCESS) return 2;
  return RUN_TESTS("launch arguments", tests, reset_device, 60);
}
