/* racy_missing_event.c -- kernel B in stream 2 sums what kernel A in stream 1 writes, and
 * nothing orders them (the event was taken away).
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
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B summed stale data");
}
