/* racy_2d_copy_vs_kernel.c -- a kernel in stream 1 fills a buffer; a 2D copy in stream 2 reads
 * rows of it (16 rows of 8 ints, pitch 16 ints) into another buffer, and nothing orders them.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

int main(void) {
  setup();
  int *d = dev_ints(), *e = dev_ints();
  birenStream_t s1 = stream(0), s2 = stream(0);
  launch_fill(d, 1, s1);
  CHECK(birenMemcpy2DAsync(e, 16 * sizeof(int), d, 16 * sizeof(int), 8 * sizeof(int), 16,
                           birenMemcpyDeviceToDevice, s2));
  CHECK(birenDeviceSynchronize());
  int h[N];
  CHECK(birenMemcpy(h, e, sizeof h, birenMemcpyDeviceToHost));
  int ok = 1;
  for (int r = 0; r < 16; r++)
    for (int c = 0; c < 8; c++) ok &= h[r * 16 + c] == 1;
  return verdict(ok, "the 2D copy read rows before the kernel wrote them");
}
