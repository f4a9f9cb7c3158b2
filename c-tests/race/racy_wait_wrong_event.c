/* racy_wait_wrong_event.c -- stream 2 waits for an event of stream 3 instead of the one
 * recorded after the writer in stream 1.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1), s3 = stream(1);
  birenEvent_t done_writing = event(), other = event();
  launch_fill(d, 1, s1);
  CHECK(birenEventRecord(done_writing, s1));
  CHECK(birenEventRecord(other, s3));
  CHECK(birenStreamWaitEvent(s2, other)); /* the wrong event */
  launch_sum(d, out, s2);
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "B summed stale data");
}
