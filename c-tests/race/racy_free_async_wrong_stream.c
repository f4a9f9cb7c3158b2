/* racy_free_async_wrong_stream.c -- a buffer from birenMallocAsync is filled by a kernel in
 * stream 1 and freed with birenFreeAsync in stream 2, which does not wait for stream 1: the
 * memory may go back (and be reused) while the kernel still writes it.
 * verdict: racy
 * fuzz: no
 */
#include "race.h"

int main(void) {
  setup();
  birenStream_t s1 = stream(0), s2 = stream(0);
  int *d;
  CHECK(birenMallocAsync((void **)&d, N * sizeof(int), s1));
  launch_fill(d, 1, s1);
  CHECK(birenFreeAsync(d, s2));
  CHECK(birenDeviceSynchronize());
  return 0;
}
