/* racy_future_wait_recorded_too_early.c -- stream 2 waits for the first record of an event (BIREN
 * extension); stream 1 records it before its write.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1);
  birenEvent_t ev = event();
  CHECK(birenStreamWaitEvent(s2, ev)); /* waits for the next record */
  launch_sum(d, out, s2);
  CHECK(birenEventRecord(ev, s1)); /* recorded before the write */
  launch_fill(d, 1, s1);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B summed stale data");
}
