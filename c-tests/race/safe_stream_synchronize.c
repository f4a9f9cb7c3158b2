/* safe_stream_synchronize.c -- the host synchronizes the writer's stream before a non-blocking
 * stream reads.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1);
  launch_fill(d, 1, s1);
  CHECK(birenStreamSynchronize(s1));
  launch_sum(d, out, s2);
  CHECK(birenStreamSynchronize(s2));
  return verdict(read_long(out) == N, "B summed stale data");
}
