/* safe_default_stream_idle_writer.c -- the writer in a blocking stream has long finished when the
 * default stream reads: the legacy rule still orders them (no false report when the dependency
 * was already met).
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  birenStream_t s = stream(0);
  launch_fill(d, 8, s);
  /* wait without telling the runtime (a plain busy loop): the writer is done long before the
   * default stream's work is enqueued, so the runtime adds no dependency for it */
  for (volatile long spin = 0; spin < 100000000L; spin++) {
  }
  long *out = dev_long();
  launch_sum(d, out, NULL);
  return verdict(read_long(out) == 8 * N, "the default stream read stale data");
}
