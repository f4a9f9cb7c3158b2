/* safe_stream_query_success.c -- the host polls birenStreamQuery until the writer's stream is
 * idle, then downloads in a non-blocking stream.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints(), *h;
  CHECK(birenMallocHost((void **)&h, N * sizeof(int)));
  birenStream_t s1 = stream(1), s2 = stream(1);
  launch_fill(d, 2, s1);
  birenError_t q;
  while ((q = birenStreamQuery(s1)) == BIREN_ERROR_NOT_READY) {
  }
  CHECK(q);
  CHECK(birenMemcpyAsync(h, d, N * sizeof(int), birenMemcpyDeviceToHost, s2));
  CHECK(birenStreamSynchronize(s2));
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= h[i] == 2;
  return verdict(ok, "the download read stale data");
}
