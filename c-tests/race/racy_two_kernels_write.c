/* racy_two_kernels_write.c -- two kernels in two streams write the same buffer; the program
 * assumes stream 2's kernel runs last.
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
  launch_fill(d, 2, s2);
  CHECK(birenDeviceSynchronize());
  launch_sum(d, out, NULL);
  return verdict(read_long(out) == 2 * N, "stream 1's kernel ran last");
}
