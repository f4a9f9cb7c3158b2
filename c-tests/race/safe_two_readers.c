/* safe_two_readers.c -- two kernels in two unordered streams only read the same buffer.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *o1 = dev_long(), *o2 = dev_long();
  launch_fill(d, 1, NULL);
  CHECK(birenDeviceSynchronize());
  birenStream_t s1 = stream(1), s2 = stream(1);
  launch_sum(d, o1, s1);
  launch_sum(d, o2, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(o1) == N && read_long(o2) == N, "a reader saw the wrong data");
}
