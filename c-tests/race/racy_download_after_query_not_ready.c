/* racy_download_after_query_not_ready.c -- the host asks birenStreamQuery whether stream 1 is done,
 * ignores the answer, and downloads in a non-blocking stream.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints(), *h;
  CHECK(birenMallocHost((void **)&h, N * sizeof(int)));
  birenStream_t s1 = stream(1), s2 = stream(1);
  unsigned char *big;
  CHECK(birenMalloc((void **)&big, 32 << 20));
  CHECK(birenMemsetAsync(big, 0, 32 << 20, s1)); /* slow enough that the query says NOT_READY */
  launch_fill(d, 6, s1);
  birenError_t q = birenStreamQuery(s1);
  if (q != BIREN_SUCCESS && q != BIREN_ERROR_NOT_READY) return 2;
  if (q == BIREN_SUCCESS) {
    fprintf(stderr, "note: stream 1 was already done: this run has no race\n");
    return 3;
  }
  CHECK(birenMemcpyAsync(h, d, N * sizeof(int), birenMemcpyDeviceToHost, s2));
  CHECK(birenDeviceSynchronize());
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= h[i] == 6;
  return verdict(ok, "the download read stale data");
}
