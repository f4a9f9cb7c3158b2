/* racy_two_memsets.c -- two streams set the same bytes; the program assumes the second
 * one wins.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  unsigned char *d;
  CHECK(birenMalloc((void **)&d, 4096));
  birenStream_t s1 = stream(0), s2 = stream(0);
  CHECK(birenMemsetAsync(d, 1, 4096, s1));
  CHECK(birenMemsetAsync(d, 2, 4096, s2));
  CHECK(birenDeviceSynchronize());
  unsigned char h[4096];
  CHECK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  int ok = 1;
  for (int i = 0; i < 4096; i++) ok &= h[i] == 2;
  return verdict(ok, "the first memset landed last");
}
