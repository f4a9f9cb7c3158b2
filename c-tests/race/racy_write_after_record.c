/* racy_write_after_record.c -- stream 2 waits for an event recorded after the first write
 * but reads memory that stream 1 writes again after the record.
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
  launch_fill(d, 1, s1);
  CHECK(birenEventRecord(ev, s1));
  launch_fill(d, 2, s1); /* after the record: not covered by the wait */
  CHECK(birenStreamWaitEvent(s2, ev));
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B saw the second write");
}
