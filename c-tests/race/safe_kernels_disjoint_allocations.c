/* safe_kernels_disjoint_allocations.c -- two kernels in two streams write different allocations and both
 * read a third.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *a = dev_ints(), *b = dev_ints(), *c = dev_ints();
  launch_fill(c, 1, NULL);
  CHECK(birenDeviceSynchronize());
  birenStream_t s1 = stream(1), s2 = stream(1);
  launch_add(a, c, s1);
  launch_add(b, c, s2);
  CHECK(birenDeviceSynchronize());
  long *oa = dev_long(), *ob = dev_long();
  launch_sum(a, oa, NULL);
  launch_sum(b, ob, NULL);
  return verdict(read_long(oa) == N && read_long(ob) == N, "an add is wrong");
}
