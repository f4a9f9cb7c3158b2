/* safe_2d_disjoint_columns.c -- two 2D fills in two unordered streams write the left and the
 * right half of every row of one pitched allocation: the same allocation, interleaved rows,
 * no common byte.
 * verdict: race-free
 */
#include "race.h"

int main(void) {
  setup();
  enum { W = 64, H = 32 };
  unsigned char *d;
  size_t pitch;
  CHECK(birenMallocPitch((void **)&d, &pitch, W, H));
  birenStream_t s1 = stream(0), s2 = stream(0);
  CHECK(birenMemset2DAsync(d, pitch, 1, W / 2, H, s1));
  CHECK(birenMemset2DAsync(d + W / 2, pitch, 2, W / 2, H, s2));
  CHECK(birenDeviceSynchronize());
  unsigned char h[W * H];
  CHECK(birenMemcpy2D(h, W, d, pitch, W, H, birenMemcpyDeviceToHost));
  int ok = 1;
  for (int r = 0; r < H; r++)
    for (int c = 0; c < W; c++) ok &= h[r * W + c] == (c < W / 2 ? 1 : 2);
  return verdict(ok, "a fill went outside its half");
}
