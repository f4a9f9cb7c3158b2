/* safe_loop_with_events.c -- the event pattern in a loop of 20 iterations, the writer of the
 * next iteration ordered after the reader by a second event.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s1 = stream(1), s2 = stream(1);
  birenEvent_t written = event(), read = event();
  int ok = 1;
  long h[20];
  for (int it = 0; it < 20; it++) {
    launch_fill(d, it, s1);
    CHECK(birenEventRecord(written, s1));
    CHECK(birenStreamWaitEvent(s2, written));
    launch_sum(d, out, s2);
    CHECK(birenMemcpyAsync(&h[it], out, sizeof(long), birenMemcpyDeviceToHost, s2));
    CHECK(birenEventRecord(read, s2));
    CHECK(birenStreamWaitEvent(s1, read));
  }
  CHECK(birenDeviceSynchronize());
  for (int it = 0; it < 20; it++) ok &= h[it] == (long)it * N;
  return verdict(ok, "an iteration summed the wrong data");
}
