/* Two streams with an event edge and copies; run with BIREN_TRACE set (see test_trace.sh). */
#include "biren_runtime.h"
#include <stdio.h>

static void kernel_a(void **args) {
  int *x = *(int **)args[0];
  x[birenThreadIdx().x] = (int)birenThreadIdx().x;
}

static void kernel_b(void **args) {
  int *x = *(int **)args[0];
  x[birenThreadIdx().x] *= 2;
}

int main(void) {
  int h[64] = {0}, *d;
  birenStream_t s1, s2;
  birenEvent_t e;
  size_t sz = sizeof(int *);
  BIREN_CHECK(birenInit());
  BIREN_CHECK(birenKernelRegister(kernel_a, "kernel_a", 1, &sz));
  BIREN_CHECK(birenKernelRegister(kernel_b, "kernel_b", 1, &sz));
  BIREN_CHECK(birenStreamCreate(&s1));
  BIREN_CHECK(birenStreamCreate(&s2));
  BIREN_CHECK(birenEventCreate(&e));
  BIREN_CHECK(birenMalloc((void **)&d, sizeof h));
  BIREN_CHECK(birenMemcpyAsync(d, h, sizeof h, birenMemcpyHostToDevice, s1));
  BIREN_CHECK(BIREN_LAUNCH(kernel_a, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, s1, d));
  BIREN_CHECK(birenEventRecord(e, s1));
  BIREN_CHECK(birenStreamWaitEvent(s2, e));
  BIREN_CHECK(BIREN_LAUNCH(kernel_b, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, s2, d));
  BIREN_CHECK(birenMemcpyAsync(h, d, sizeof h, birenMemcpyDeviceToHost, s2));
  BIREN_CHECK(birenStreamSynchronize(s2));
  printf("h[5]=%d\n", h[5]);
  /* Synchronous calls on an idle device (done at once, on the calling thread, when not tracing):
   * the trace still shows the copy with its kind and the host's wait with its call site. */
  int h2[64];
  BIREN_CHECK(birenMemcpy(h2, d, sizeof h2, birenMemcpyDeviceToHost)); /* SYNC_MEMCPY_LINE */
  BIREN_CHECK(birenMemset(d, 0, sizeof h));
  BIREN_CHECK(birenDeviceSynchronize());
  /* Leave a pending wait at exit: the trace must still be well-formed. */
  birenEvent_t never;
  BIREN_CHECK(birenEventCreate(&never));
  BIREN_CHECK(birenStreamWaitEvent(s1, never));
  BIREN_CHECK(BIREN_LAUNCH(kernel_a, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, s1, d));
  return h[5] == 10 ? 0 : 1;
}
