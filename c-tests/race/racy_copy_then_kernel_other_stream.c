/* racy_copy_then_kernel_other_stream.c -- an upload in stream 1 and a kernel reading it in stream 2,
 * unordered.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints(), *h;
  long *out = dev_long();
  CHECK(birenMallocHost((void **)&h, N * sizeof(int)));
  for (int i = 0; i < N; i++) h[i] = 1;
  birenStream_t s1 = stream(1), s2 = stream(1);
  CHECK(birenMemcpyAsync(d, h, N * sizeof(int), birenMemcpyHostToDevice, s1));
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "the kernel summed before the upload");
}
