/* racy_kernel_then_copy_other_stream.c -- a kernel in stream 1 writes; an asynchronous copy to a
 * page-locked buffer in stream 2 reads, with no event between them.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints(), *h;
  CHECK(birenMallocHost((void **)&h, N * sizeof(int)));
  birenStream_t s1 = stream(1), s2 = stream(1);
  launch_fill(d, 5, s1);
  CHECK(birenMemcpyAsync(h, d, N * sizeof(int), birenMemcpyDeviceToHost, s2));
  CHECK(birenDeviceSynchronize());
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= h[i] == 5;
  return verdict(ok, "the copy read stale data");
}
