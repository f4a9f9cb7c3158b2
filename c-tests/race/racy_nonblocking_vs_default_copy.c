/* racy_nonblocking_vs_default_copy.c -- a kernel in a non-blocking stream writes; a synchronous
 * birenMemcpy (legacy default stream) reads, assuming the default stream waits for every stream.
 * It does not wait for non-blocking ones.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints();
  birenStream_t s = stream(1);
  int h[N];
  launch_fill(d, 1, s);
  CHECK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= h[i] == 1;
  CHECK(birenDeviceSynchronize());
  return verdict(ok, "the copy read stale data");
}
