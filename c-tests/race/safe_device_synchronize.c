/* safe_device_synchronize.c -- birenDeviceSynchronize between a writer and a reader in two
 * non-blocking streams.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1);
  launch_fill(d, 1, s1);
  CHECK(birenDeviceSynchronize());
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B summed stale data");
}
