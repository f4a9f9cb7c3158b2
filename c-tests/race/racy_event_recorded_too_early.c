/* racy_event_recorded_too_early.c -- the event is recorded in stream 1 before the kernel that
 * writes, so stream 2's wait orders nothing that matters.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(0), s2 = stream(0);
  birenEvent_t ev = event();
  CHECK(birenEventRecord(ev, s1)); /* too early */
  launch_fill(d, 1, s1);
  CHECK(birenStreamWaitEvent(s2, ev));
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B summed stale data");
}
