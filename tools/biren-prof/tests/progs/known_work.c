/* known_work.c: work whose summary biren-prof's tests know in advance (tests/examples.rs).
 *
 *   known_work [CODE | term | reset-term]
 *
 * Launches "scale" 5 times on stream 1 and "fill" 3 times on stream 2; copies 4096 bytes HtoD,
 * 1024 DtoH, 2048 DtoD and 512 HtoH (the last two synchronous) and fills 300 bytes; synchronizes
 * both streams and the device. Echoes one line of stdin to stdout ("stdin: ..."), writes one
 * line to stderr, and exits with CODE (default 0). "term" raises SIGTERM instead of exiting
 * (the runtime writes no trace then); "reset-term" calls birenDeviceReset first (which writes
 * the trace so far), then raises SIGTERM.
 */
#include "biren_runtime.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BYTES = 4096 };

/* args: (unsigned char *p). p[i] *= 2 for 256 bytes. */
static void scale(void **args) {
  unsigned char *p = *(unsigned char **)args[0];
  unsigned i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  p[i] = (unsigned char)(p[i] * 2);
}

/* args: (unsigned char *p). p[i] = 7 for 256 bytes. */
static void fill(void **args) {
  unsigned char *p = *(unsigned char **)args[0];
  unsigned i = birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x;
  p[i] = 7;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "0";
  size_t one_ptr = sizeof(void *);
  unsigned char *h, *d_a, *d_b, host_src[512], host_dst[512];
  birenStream_t s1, s2;
  BIREN_CHECK(birenInit());
  BIREN_CHECK(birenKernelRegister(scale, "scale", 1, &one_ptr));
  BIREN_CHECK(birenKernelRegister(fill, "fill", 1, &one_ptr));
  BIREN_CHECK(birenMallocHost((void **)&h, BYTES));
  BIREN_CHECK(birenMalloc((void **)&d_a, BYTES));
  BIREN_CHECK(birenMalloc((void **)&d_b, BYTES));
  BIREN_CHECK(birenStreamCreate(&s1));
  BIREN_CHECK(birenStreamCreate(&s2));
  memset(h, 1, BYTES);
  memset(host_src, 2, sizeof host_src);

  BIREN_CHECK(birenMemcpyAsync(d_a, h, BYTES, birenMemcpyHostToDevice, s1));
  for (int i = 0; i < 5; i++)
    BIREN_CHECK(birenLaunchKernel(scale, birenDim3(4, 1, 1), birenDim3(64, 1, 1), (void *[]){&d_a}, 0, s1));
  for (int i = 0; i < 3; i++)
    BIREN_CHECK(birenLaunchKernel(fill, birenDim3(4, 1, 1), birenDim3(64, 1, 1), (void *[]){&d_b}, 0, s2));
  BIREN_CHECK(birenMemsetAsync(d_b + 1024, 0, 300, s2));
  BIREN_CHECK(birenMemcpyAsync(h, d_b, 1024, birenMemcpyDeviceToHost, s2));
  BIREN_CHECK(birenStreamSynchronize(s1));
  BIREN_CHECK(birenStreamSynchronize(s2));
  BIREN_CHECK(birenMemcpy(d_b + 2048, d_a, 2048, birenMemcpyDeviceToDevice));
  BIREN_CHECK(birenMemcpy(host_dst, host_src, sizeof host_src, birenMemcpyHostToHost));
  BIREN_CHECK(birenDeviceSynchronize());
  if (h[0] != 7 || host_dst[0] != 2) {
    fprintf(stderr, "known_work: wrong results\n");
    return 99;
  }

  char line[256];
  if (fgets(line, sizeof line, stdin) != NULL) printf("stdin: %s", line);
  printf("known_work: done\n");
  fprintf(stderr, "known_work: a line on stderr\n");
  fflush(NULL);
  if (strcmp(mode, "reset-term") == 0) BIREN_CHECK(birenDeviceReset());
  if (strcmp(mode, "term") == 0 || strcmp(mode, "reset-term") == 0) raise(SIGTERM);
  return atoi(mode);
}
