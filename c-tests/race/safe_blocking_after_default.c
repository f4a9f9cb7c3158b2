/* safe_blocking_after_default.c -- an asynchronous memset on the default stream, then a kernel in a
 * blocking stream reads: blocking streams wait for the default stream.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s = stream(0);
  CHECK(birenMemsetAsync(d, 1, N * sizeof(int), NULL));
  launch_sum(d, out, s);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == (long)N * 0x01010101, "the sum missed the memset");
}
