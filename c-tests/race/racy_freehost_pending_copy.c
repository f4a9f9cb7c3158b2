/* racy_freehost_pending_copy.c -- birenFreeHost of a page-locked buffer that an asynchronous
 * copy in a non-blocking stream is still reading (the program synchronizes only afterwards).
 * verdict: racy
 * fuzz: no
 */
#include "race.h"

int main(void) {
  setup();
  int *h;
  CHECK(birenMallocHost((void **)&h, N * sizeof(int)));
  for (int i = 0; i < N; i++) h[i] = i;
  int *d = dev_ints();
  birenStream_t s = stream(1);
  CHECK(birenMemcpyAsync(d, h, N * sizeof(int), birenMemcpyHostToDevice, s));
  CHECK(birenFreeHost(h)); /* the copy may still be reading it */
  CHECK(birenStreamSynchronize(s));
  return 0;
}
