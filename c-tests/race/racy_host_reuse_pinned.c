/* racy_host_reuse_pinned.c -- the host overwrites (with a synchronous copy) a page-locked
 * buffer that an asynchronous copy in a non-blocking stream is still reading.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *h, *d;
  CHECK(birenMallocHost((void **)&h, N * sizeof(int)));
  CHECK(birenMalloc((void **)&d, N * sizeof(int)));
  int *other = dev_ints(); /* zeros */
  for (int i = 0; i < N; i++) h[i] = 7;
  birenStream_t s = stream(1);
  CHECK(birenMemcpyAsync(d, h, N * sizeof(int), birenMemcpyHostToDevice, s));
  /* reuses h at once: the copy above may not have read it yet */
  CHECK(birenMemcpy(h, other, N * sizeof(int), birenMemcpyDeviceToHost));
  CHECK(birenStreamSynchronize(s));
  int back[N];
  CHECK(birenMemcpy(back, d, sizeof back, birenMemcpyDeviceToHost));
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= back[i] == 7;
  return verdict(ok, "the device got the overwritten buffer");
}
