/* safe_chain_of_three_events.c -- stream 1 -> 2 -> 3 -> 4 ordered by a chain of three events;
 * stream 4 reads what stream 1 wrote.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *a = dev_ints(), *b = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1), s3 = stream(1), s4 = stream(1);
  birenEvent_t e1 = event(), e2 = event(), e3 = event();
  launch_fill(a, 1, s1);
  CHECK(birenEventRecord(e1, s1));
  CHECK(birenStreamWaitEvent(s2, e1));
  launch_add(b, a, s2);
  CHECK(birenEventRecord(e2, s2));
  CHECK(birenStreamWaitEvent(s3, e2));
  CHECK(birenEventRecord(e3, s3));
  CHECK(birenStreamWaitEvent(s4, e3));
  launch_sum(a, out, s4);
  launch_add(b, a, s4); /* b = 2: after stream 2's add, through the chain */
  CHECK(birenDeviceSynchronize());
  long *o2 = dev_long();
  launch_sum(b, o2, NULL);
  return verdict(read_long(out) == N && read_long(o2) == 2 * N, "the chain did not order");
}
