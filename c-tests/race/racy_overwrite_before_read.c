/* racy_overwrite_before_read.c -- write after read: stream 2 clears the buffer that stream 1's
 * kernel is about to sum.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(0), s2 = stream(0);
  launch_fill(d, 1, s1);
  CHECK(birenStreamSynchronize(s1));
  launch_sum(d, out, s1);
  CHECK(birenMemsetAsync(d, 0, N * sizeof(int), s2)); /* may run before the sum */
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "the buffer was cleared before it was summed");
}
