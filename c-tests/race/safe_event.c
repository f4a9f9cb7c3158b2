/* safe_event.c -- kernel B in stream 2 waits for an event recorded after kernel A in
 * stream 1.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(0), s2 = stream(0);
  birenEvent_t ev = event();
  launch_fill(d, 1, s1);
  CHECK(birenEventRecord(ev, s1));
  CHECK(birenStreamWaitEvent(s2, ev));
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B summed stale data");
}
