/* Kernel node arguments in CUDA's driver-style packed form (birenKernelNodeParams.extra with
 * BIREN_LAUNCH_PARAM_BUFFER_POINTER / _BUFFER_SIZE / _END): the buffer laid out as a C struct of
 * the arguments, for registered and BIREN_KERNEL kernels, in birenGraphAddKernelNode and
 * birenGraphExecKernelNodeSetParams; malformed lists refused with INVALID_VALUE and a validator
 * finding, nothing added or changed. */
#include "timed_kernels.h"

/* args: (int *out, int i, double v, char c): out[i] = (int)v * 1000 + c. Registered. */
static void mixed(void **args) {
  int *out = *(int **)args[0];
  int i = *(int *)args[1];
  double v = *(double *)args[2];
  char c = *(char *)args[3];
  out[i] = (int)v * 1000 + c;
}

/* The same arguments as a C struct: the layout the packed buffer has. */
typedef struct mixed_args {
  int *out;
  int i;
  double v;
  char c;
} mixed_args;

static void unregistered(void **args) { (void)args; }

BIREN_KERNEL(store_sum, (int *) out, (short) a, (long long) b) {
  if (birenThreadIdx().x == 0) *out = a + (int)b;
}

typedef struct store_sum_args {
  int *out;
  short a;
  long long b;
} store_sum_args;

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

static birenKernelNodeParams packed(birenKernel_t f, void **extra) {
  birenKernelNodeParams p;
  memset(&p, 0, sizeof p);
  p.func = f;
  p.gridDim = birenDim3(1, 1, 1);
  p.blockDim = birenDim3(1, 1, 1);
  p.kernelParams = NULL;
  p.extra = extra;
  return p;
}

static int run_graph(birenGraphExec_t e) {
  OK(birenGraphLaunch(e, NULL));
  OK(birenStreamSynchronize(NULL));
  return 0;
}

/* A registered kernel's arguments from a packed buffer; the values are copied when the node is
 * made (the buffer may change afterwards); the size may be sizeof the struct or the end of its
 * last member. */
static int packed_arguments_of_a_registered_kernel(void) {
  int *out, h[2] = {0, 0};
  OK(birenMalloc((void **)&out, sizeof h));
  OK(birenMemset(out, 0, sizeof h));
  mixed_args a = {out, 1, 42.0, 7};
  size_t size = sizeof a;
  void *extra[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_BUFFER_SIZE, &size, BIREN_LAUNCH_PARAM_END};
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t n1, n2;
  OK(birenGraphCreate(&g, 0));
  birenKernelNodeParams p = packed(mixed, extra);
  OK(birenGraphAddKernelNode(&n1, g, NULL, 0, &p));
  /* The buffer changes after the node was made: the node keeps the old values. */
  a.v = 5.0;
  a.i = 0;
  a.c = 3;
  /* The end of the last member (25 bytes) instead of sizeof; size given before the pointer. */
  size_t end = offsetof(mixed_args, c) + sizeof(char);
  void *extra2[] = {BIREN_LAUNCH_PARAM_BUFFER_SIZE, &end, BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_END};
  p = packed(mixed, extra2);
  OK(birenGraphAddKernelNode(&n2, g, &n1, 1, &p));
  a.v = 0;
  OK(birenGraphInstantiate(&e, g, 0));
  if (run_graph(e)) return 1;
  OK(birenMemcpy(h, out, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h[1] == 42007);
  EXPECT(h[0] == 5003);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenFree(out));
  return 0;
}

/* A BIREN_KERNEL kernel (sizes from its registration) with packed arguments. */
static int packed_arguments_of_a_block_kernel(void) {
  int *out, h = 0;
  OK(birenMalloc((void **)&out, sizeof h));
  store_sum_args a = {out, 40, 2};
  size_t size = sizeof a;
  void *extra[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_BUFFER_SIZE, &size, BIREN_LAUNCH_PARAM_END};
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t n;
  OK(birenGraphCreate(&g, 0));
  birenKernelNodeParams p = packed(store_sum, extra);
  p.blockDim = birenDim3(32, 1, 1);
  OK(birenGraphAddKernelNode(&n, g, NULL, 0, &p));
  OK(birenGraphInstantiate(&e, g, 0));
  if (run_graph(e)) return 1;
  OK(birenMemcpy(&h, out, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 42);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenFree(out));
  return 0;
}

/* Malformed lists: INVALID_VALUE with a finding naming extra; no node is added. */
static int malformed_lists_are_refused(void) {
  int *out;
  OK(birenMalloc((void **)&out, sizeof(int)));
  mixed_args a = {out, 0, 1.0, 1};
  size_t size = sizeof a, small = 24, big = 40, zero = 0;
  void *ok_args[4] = {&a.out, &a.i, &a.v, &a.c};
  birenGraph_t g;
  birenGraphNode_t n;
  OK(birenGraphCreate(&g, 0));
  OK(birenSetValidatorCallback(collect, NULL));
  OK(birenSetDeviceValidator(1));
  void *no_end[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_BUFFER_SIZE, &size, (void *)0x7};
  void *unknown[] = {(void *)0x3, &a, BIREN_LAUNCH_PARAM_END};
  void *twice[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_END};
  void *too_small[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_BUFFER_SIZE, &small, BIREN_LAUNCH_PARAM_END};
  void *too_big[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_BUFFER_SIZE, &big, BIREN_LAUNCH_PARAM_END};
  void *null_size[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_BUFFER_SIZE, NULL, BIREN_LAUNCH_PARAM_END};
  void *size_only[] = {BIREN_LAUNCH_PARAM_BUFFER_SIZE, &size, BIREN_LAUNCH_PARAM_END};
  void *null_buffer[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, NULL, BIREN_LAUNCH_PARAM_BUFFER_SIZE, &size, BIREN_LAUNCH_PARAM_END};
  /* A buffer pointer without a size has no effect (as in CUDA): no arguments, but four needed. */
  void *pointer_only[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_END};
  void *empty[] = {BIREN_LAUNCH_PARAM_END};
  void *zero_size[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_BUFFER_SIZE, &zero, BIREN_LAUNCH_PARAM_END};
  void **bad[] = {no_end, unknown, twice, too_small, too_big, null_size, size_only, null_buffer, pointer_only, empty, zero_size};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    g_nlines = 0;
    birenKernelNodeParams p = packed(mixed, bad[i]);
    birenError_t r = birenGraphAddKernelNode(&n, g, NULL, 0, &p);
    if (r != BIREN_ERROR_INVALID_VALUE) {
      fprintf(stderr, "    list %zu: %s\n", i, birenGetErrorName(r));
      return 1;
    }
    EXPECT(saw("extra") || saw("argument"));
  }
  /* Both kernelParams and extra. */
  void *good[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &a, BIREN_LAUNCH_PARAM_BUFFER_SIZE, &size, BIREN_LAUNCH_PARAM_END};
  birenKernelNodeParams p = packed(mixed, good);
  p.kernelParams = ok_args;
  g_nlines = 0;
  EXPECT_CODE(birenGraphAddKernelNode(&n, g, NULL, 0, &p), BIREN_ERROR_INVALID_VALUE);
  EXPECT(saw("both"));
  /* An unregistered kernel: its argument sizes are unknown. */
  p = packed(unregistered, good);
  g_nlines = 0;
  EXPECT_CODE(birenGraphAddKernelNode(&n, g, NULL, 0, &p), BIREN_ERROR_INVALID_VALUE);
  EXPECT(saw("not registered"));
  OK(birenSetDeviceValidator(0));
  OK(birenSetValidatorCallback(NULL, NULL));
  size_t count = 99;
  OK(birenGraphGetNodes(g, NULL, &count));
  EXPECT(count == 0);
  /* The good list works. */
  p = packed(mixed, good);
  OK(birenGraphAddKernelNode(&n, g, NULL, 0, &p));
  OK(birenGraphDestroy(g));
  OK(birenFree(out));
  return 0;
}

/* birenGraphExecKernelNodeSetParams with packed arguments: later launches take them; a malformed
 * list is refused and the exec keeps its parameters. */
static int exec_set_params_with_packed_arguments(void) {
  int *out, h = 0;
  OK(birenMalloc((void **)&out, sizeof h));
  mixed_args a = {out, 0, 1.0, 1};
  void *args[4] = {&a.out, &a.i, &a.v, &a.c};
  birenKernelNodeParams p = packed(mixed, NULL);
  p.kernelParams = args;
  birenGraph_t g;
  birenGraphExec_t e;
  birenGraphNode_t n;
  OK(birenGraphCreate(&g, 0));
  OK(birenGraphAddKernelNode(&n, g, NULL, 0, &p));
  OK(birenGraphInstantiate(&e, g, 0));
  if (run_graph(e)) return 1;
  OK(birenMemcpy(&h, out, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 1001);
  mixed_args b = {out, 0, 9.0, 9};
  size_t size = sizeof b, small = 8;
  void *extra[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &b, BIREN_LAUNCH_PARAM_BUFFER_SIZE, &size, BIREN_LAUNCH_PARAM_END};
  p = packed(mixed, extra);
  OK(birenGraphExecKernelNodeSetParams(e, n, &p));
  b.v = 0;
  if (run_graph(e)) return 1;
  OK(birenMemcpy(&h, out, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 9009);
  void *bad[] = {BIREN_LAUNCH_PARAM_BUFFER_POINTER, &b, BIREN_LAUNCH_PARAM_BUFFER_SIZE, &small, BIREN_LAUNCH_PARAM_END};
  p = packed(mixed, bad);
  EXPECT_CODE(birenGraphExecKernelNodeSetParams(e, n, &p), BIREN_ERROR_INVALID_VALUE);
  p.extra = extra;
  p.kernelParams = args;
  EXPECT_CODE(birenGraphExecKernelNodeSetParams(e, n, &p), BIREN_ERROR_INVALID_VALUE);
  OK(birenMemset(out, 0, sizeof h));
  if (run_graph(e)) return 1;
  OK(birenMemcpy(&h, out, sizeof h, birenMemcpyDeviceToHost));
  EXPECT(h == 9009);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenFree(out));
  return 0;
}

/* A kernel node's dynamic shared memory is bounded as a launch's: by sharedMemPerBlock and by the
 * kernel's birenFuncAttributeMaxDynamicSharedMemorySize, with the launch's code. */
static int kernel_nodes_check_the_dynamic_shared_memory_limit(void) {
  birenGraph_t g;
  birenGraphNode_t n = NULL;
  int *out = NULL, i = 0;
  double v = 1;
  char c = 2;
  void *args[4] = {&out, &i, &v, &c};
  birenKernelNodeParams p = packed(mixed, NULL);
  p.kernelParams = args;
  OK(birenMalloc((void **)&out, sizeof(int)));
  OK(birenGraphCreate(&g, 0));
  OK(birenFuncSetAttribute(mixed, birenFuncAttributeMaxDynamicSharedMemorySize, 1024));
  p.sharedMemBytes = 2048;
  EXPECT_CODE(birenLaunchKernel(mixed, p.gridDim, p.blockDim, args, 2048, NULL), BIREN_ERROR_INVALID_CONFIGURATION);
  EXPECT_CODE(birenGraphAddKernelNode(&n, g, NULL, 0, &p), BIREN_ERROR_INVALID_CONFIGURATION);
  EXPECT(n == NULL);
  p.sharedMemBytes = 48 * 1024 + 1;
  EXPECT_CODE(birenGraphAddKernelNode(&n, g, NULL, 0, &p), BIREN_ERROR_INVALID_CONFIGURATION);
  p.sharedMemBytes = 1024;
  OK(birenGraphAddKernelNode(&n, g, NULL, 0, &p));
  OK(birenFuncSetAttribute(mixed, birenFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024));
  OK(birenGraphDestroy(g));
  OK(birenFree(out));
  return 0;
}

static const test_case tests[] = {
    TEST(packed_arguments_of_a_registered_kernel),
    TEST(packed_arguments_of_a_block_kernel),
    TEST(malformed_lists_are_refused),
    TEST(exec_set_params_with_packed_arguments),
    TEST(kernel_nodes_check_the_dynamic_shared_memory_limit),
};

int main(void) {
  if (birenInit() != BIREN_SUCCESS) return 2;
  size_t sizes[4] = {sizeof(int *), sizeof(int), sizeof(double), sizeof(char)};
  if (birenKernelRegister(mixed, "mixed", 4, sizes) != BIREN_SUCCESS) return 2;
  return RUN_TESTS("graph extra", tests, reset_device, 20);
}
