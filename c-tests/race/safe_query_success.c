/* safe_query_success.c -- the host polls birenEventQuery until the writer's event is reached,
 * then reads in a non-blocking stream: a query that returns SUCCESS synchronizes.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1);
  birenEvent_t ev = event();
  launch_fill(d, 1, s1);
  CHECK(birenEventRecord(ev, s1));
  birenError_t q;
  while ((q = birenEventQuery(ev)) == BIREN_ERROR_NOT_READY) {
  }
  CHECK(q);
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B summed stale data");
}
