/* safe_rerecorded_event.c -- a wait captures the event's record at the time of the wait; the
 * event is re-recorded later in another stream, which does not weaken the first wait.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1), s3 = stream(1);
  birenEvent_t ev = event();
  launch_fill(d, 1, s1);
  CHECK(birenEventRecord(ev, s1));
  CHECK(birenStreamWaitEvent(s2, ev));
  CHECK(birenEventRecord(ev, s3)); /* re-recorded: the wait above keeps the first record */
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B summed stale data");
}
