/* safe_free_async_ordered.c -- racy_free_async_wrong_stream.c made right twice: a buffer freed
 * in stream 2 after waiting for an event recorded after its last use in stream 1, and a buffer
 * freed in the stream that used it, with no synchronization before either free.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  birenStream_t s1 = stream(0), s2 = stream(0);
  birenEvent_t ev = event();
  int *d, *e;
  long *out = dev_long();
  CHECK(birenMallocAsync((void **)&d, N * sizeof(int), s1));
  CHECK(birenMallocAsync((void **)&e, N * sizeof(int), s1));
  launch_fill(d, 1, s1);
  launch_fill(e, 1, s1);
  launch_sum(e, out, s1);
  CHECK(birenEventRecord(ev, s1));
  CHECK(birenStreamWaitEvent(s2, ev));
  CHECK(birenFreeAsync(d, s2));
  CHECK(birenFreeAsync(e, s1));
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "the sum is wrong");
}
