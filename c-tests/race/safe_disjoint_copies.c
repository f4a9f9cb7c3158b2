/* safe_disjoint_copies.c -- two streams upload disjoint halves of one allocation from one
 * page-locked buffer, and a kernel in a third stream writes a different allocation.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints(), *other = dev_ints(), *h;
  CHECK(birenMallocHost((void **)&h, N * sizeof(int)));
  for (int i = 0; i < N; i++) h[i] = 1;
  birenStream_t s1 = stream(1), s2 = stream(1), s3 = stream(1);
  CHECK(birenMemcpyAsync(d, h, N / 2 * sizeof(int), birenMemcpyHostToDevice, s1));
  CHECK(birenMemcpyAsync(d + N / 2, h + N / 2, N / 2 * sizeof(int), birenMemcpyHostToDevice, s2));
  launch_fill(other, 9, s3);
  CHECK(birenDeviceSynchronize());
  long *out = dev_long();
  launch_sum(d, out, NULL);
  return verdict(read_long(out) == N, "an upload is missing");
}
