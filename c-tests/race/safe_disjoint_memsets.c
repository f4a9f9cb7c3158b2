/* safe_disjoint_memsets.c -- two streams set disjoint halves of one allocation.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  unsigned char *d;
  CHECK(birenMalloc((void **)&d, 1024));
  birenStream_t s1 = stream(1), s2 = stream(1);
  CHECK(birenMemsetAsync(d, 1, 512, s1));
  CHECK(birenMemsetAsync(d + 512, 2, 512, s2));
  CHECK(birenDeviceSynchronize());
  unsigned char h[1024];
  CHECK(birenMemcpy(h, d, sizeof h, birenMemcpyDeviceToHost));
  int ok = 1;
  for (int i = 0; i < 1024; i++) ok &= h[i] == (i < 512 ? 1 : 2);
  return verdict(ok, "a half is wrong");
}
