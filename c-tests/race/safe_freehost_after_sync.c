/* safe_freehost_after_sync.c -- birenFreeHost of a page-locked buffer after synchronizing the
 * stream whose copy read it.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *h;
  CHECK(birenMallocHost((void **)&h, N * sizeof(int)));
  for (int i = 0; i < N; i++) h[i] = 1;
  int *d = dev_ints();
  long *out = dev_long();
  birenStream_t s = stream(1);
  CHECK(birenMemcpyAsync(d, h, N * sizeof(int), birenMemcpyHostToDevice, s));
  CHECK(birenStreamSynchronize(s));
  CHECK(birenFreeHost(h));
  launch_sum(d, out, s);
  CHECK(birenStreamSynchronize(s));
  return verdict(read_long(out) == N, "the upload is wrong");
}
