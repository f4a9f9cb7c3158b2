/* racy_sync_wrong_stream.c -- the host synchronizes stream 3 instead of stream 1, then
 * downloads in stream 2 what stream 1 writes (all non-blocking).
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints(), *h;
  CHECK(birenMallocHost((void **)&h, N * sizeof(int)));
  birenStream_t s1 = stream(1), s2 = stream(1), s3 = stream(1);
  launch_fill(d, 4, s1);
  CHECK(birenStreamSynchronize(s3)); /* the wrong stream */
  CHECK(birenMemcpyAsync(h, d, N * sizeof(int), birenMemcpyDeviceToHost, s2));
  CHECK(birenStreamSynchronize(s2));
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= h[i] == 4;
  CHECK(birenDeviceSynchronize());
  return verdict(ok, "the download read stale data");
}
