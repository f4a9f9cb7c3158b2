/* safe_event_synchronize.c -- birenEventSynchronize on an event recorded after the writer.
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
  CHECK(birenEventSynchronize(ev));
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B summed stale data");
}
