/* racy_memsets_overlap_one_byte.c -- two memsets in two streams meant to cover disjoint halves
 * overlap by one byte; the program expects the second half's value there.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  unsigned char *d;
  CHECK(birenMalloc((void **)&d, 1024));
  birenStream_t s1 = stream(1), s2 = stream(1);
  CHECK(birenMemsetAsync(d + 511, 2, 513, s2));
  CHECK(birenMemsetAsync(d, 1, 512, s1)); /* one byte too many */
  CHECK(birenDeviceSynchronize());
  unsigned char h[1024];
  CHECK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  return verdict(h[511] == 2, "byte 511 was overwritten by the first half");
}
