/*
 * valgrind/launch_count.c -- a fixed launch workload for instruction counting (BENCHMARKS.md).
 *
 *   valgrind --tool=callgrind --separate-threads=yes build/valgrind/launch_count N [streams]
 *
 * Launches N empty 1x1 kernels round-robin over `streams` non-blocking streams (default 1), then
 * synchronizes the device. Run it with N and with 0 and divide the difference by N: the
 * instructions one launch costs, per thread (the host thread's are the enqueue path).
 */
#include "biren_runtime.h"

#include <stdio.h>
#include <stdlib.h>

static void k_empty(void **args) { (void)args; }

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000;
  int ns = argc > 2 ? atoi(argv[2]) : 1;
  if (ns < 1 || ns > 4096 || n < 0) {
    fprintf(stderr, "usage: %s N [streams 1..4096]\n", argv[0]);
    return 1;
  }
  if (birenInit() != BIREN_SUCCESS) return 1;
  birenStream_t *s = calloc((size_t)ns, sizeof *s);
  if (!s) return 1;
  for (int i = 0; i < ns; i++)
    if (birenStreamCreateWithFlags(&s[i], birenStreamNonBlocking) != BIREN_SUCCESS) return 1;
  dim3 one = birenDim3(1, 1, 1);
  for (long i = 0; i < n; i++)
    if (birenLaunchKernel(k_empty, one, one, NULL, 0, s[i % ns]) != BIREN_SUCCESS) return 1;
  if (birenDeviceSynchronize() != BIREN_SUCCESS) return 1;
  for (int i = 0; i < ns; i++) birenStreamDestroy(s[i]);
  free(s);
  printf("%ld launches on %d streams\n", n, ns);
  return 0;
}
