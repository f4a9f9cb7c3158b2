/* A diamond graph (kernel -> two kernels -> copy) launched twice, for test_graph_trace.sh. */
#include "biren_runtime.h"

#include <stdio.h>

static void work(void **args) {
  int *p = *(int **)args[0];
  p[birenThreadIdx().x] += 1;
}

int main(void) {
  BIREN_CHECK(birenInit());
  size_t sizes[1] = {sizeof(int *)};
  BIREN_CHECK(birenKernelRegister(work, "work", 1, sizes));
  int *d, h[2];
  BIREN_CHECK(birenMalloc((void **)&d, sizeof h));
  BIREN_CHECK(birenMemset(d, 0, sizeof h));
  birenStream_t s;
  BIREN_CHECK(birenStreamCreate(&s));
  birenGraph_t g;
  birenGraphNode_t a, b, c, cp;
  BIREN_CHECK(birenGraphCreate(&g, 0));
  void *args[1] = {&d};
  birenKernelNodeParams p = {work, {1, 1, 1}, {2, 1, 1}, 0, args, NULL};
  BIREN_CHECK(birenGraphAddKernelNode(&a, g, NULL, 0, &p));
  BIREN_CHECK(birenGraphAddKernelNode(&b, g, &a, 1, &p));
  BIREN_CHECK(birenGraphAddKernelNode(&c, g, &a, 1, &p));
  birenGraphNode_t bc[2] = {b, c};
  BIREN_CHECK(birenGraphAddMemcpyNode1D(&cp, g, bc, 2, h, d, sizeof h, birenMemcpyDeviceToHost));
  birenGraphExec_t e;
  BIREN_CHECK(birenGraphInstantiate(&e, g, 0));
  BIREN_CHECK(birenGraphLaunch(e, s));
  BIREN_CHECK(birenGraphLaunch(e, s));
  BIREN_CHECK(birenStreamSynchronize(s));
  printf("%d %d\n", h[0], h[1]);
  BIREN_CHECK(birenGraphExecDestroy(e));
  BIREN_CHECK(birenGraphDestroy(g));
  BIREN_CHECK(birenStreamDestroy(s));
  BIREN_CHECK(birenFree(d));
  return h[0] == 6 && h[1] == 6 ? 0 : 1;
}
