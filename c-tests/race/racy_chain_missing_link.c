/* racy_chain_missing_link.c -- stream 1 -> stream 2 is ordered by an event, stream 2 ->
 * stream 3 is not: stream 3 reads what stream 2 wrote.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *a = dev_ints(), *b = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1), s3 = stream(1);
  birenEvent_t e1 = event();
  launch_fill(a, 1, s1);
  CHECK(birenEventRecord(e1, s1));
  CHECK(birenStreamWaitEvent(s2, e1));
  launch_add(b, a, s2); /* b = 0 + 1 */
  launch_sum(b, out, s3); /* missing: wait for an event after the add */
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "stream 3 summed b before the add");
}
