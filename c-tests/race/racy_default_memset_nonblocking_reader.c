/* racy_default_memset_nonblocking_reader.c -- an asynchronous memset on the default stream, then a kernel
 * in a non-blocking stream reads the memory: non-blocking streams do not wait for the default
 * stream.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s = stream(1);
  CHECK(birenMemsetAsync(d, 1, N * sizeof(int), NULL)); /* every byte 1: each int 0x01010101 */
  launch_sum(d, out, s);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == (long)N * 0x01010101, "the sum missed the memset");
}
