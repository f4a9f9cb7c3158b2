/* safe_free_async_implicit_order.c -- two birenFreeAsync calls in another stream than the one
 * whose kernel used the memory, both ordered without an event: one in the legacy default
 * stream (which waits for the blocking stream's work), one in a non-blocking stream after the
 * host synchronized the kernel's stream.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  birenStream_t s1 = stream(0), s2 = stream(1);
  int *d, *e;
  long *out = dev_long();
  CHECK(birenMallocAsync((void **)&d, N * sizeof(int), s1));
  CHECK(birenMallocAsync((void **)&e, N * sizeof(int), s1));
  launch_fill(d, 1, s1);
  launch_fill(e, 1, s1);
  launch_sum(e, out, s1);
  CHECK(birenFreeAsync(d, 0)); /* the default stream waits for s1 (a blocking stream) */
  CHECK(birenStreamSynchronize(s1));
  CHECK(birenFreeAsync(e, s2)); /* after the host synchronized s1 */
  CHECK(birenDeviceSynchronize());
  return verdict(read_long(out) == N, "the sum is wrong");
}
