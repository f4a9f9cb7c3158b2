/* safe_future_wait.c -- stream 2 waits for the first record of an event that stream 1
 * records after its write (BIREN extension: a wait before the record).
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1);
  birenEvent_t ev = event();
  CHECK(birenStreamWaitEvent(s2, ev));
  launch_sum(d, out, s2);
  launch_fill(d, 1, s1);
  CHECK(birenEventRecord(ev, s1));
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B summed stale data");
}
