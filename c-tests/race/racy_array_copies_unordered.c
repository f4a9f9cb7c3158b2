/* racy_array_copies_unordered.c -- stream 1 copies host rows into a 2-D array
 * (birenMemcpy2DToArrayAsync); stream 2 copies the same region out of the array
 * (birenMemcpy2DFromArrayAsync); nothing orders the streams.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

enum { AW = 16, AH = 8 };

int main(void) {
  setup();
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindSigned);
  birenArray_t a;
  CHECK(birenMallocArray(&a, &f, AW, AH, 0));
  static int zero[AH][AW], in[AH][AW], out[AH][AW];
  for (int y = 0; y < AH; y++)
    for (int x = 0; x < AW; x++) in[y][x] = 1 + y * AW + x;
  CHECK(birenMemcpy2DToArray(a, 0, 0, zero, sizeof zero[0], sizeof zero[0], AH, birenMemcpyHostToDevice));
  int *pinned;
  CHECK(birenMallocHost((void **)&pinned, sizeof in));
  memcpy(pinned, in, sizeof in);
  birenStream_t s1 = stream(1), s2 = stream(1);
  /* Rows 2..5, texels 4..11: written in s1, read in s2. */
  CHECK(birenMemcpy2DToArrayAsync(a, 4 * sizeof(int), 2, pinned + 2 * AW + 4, AW * sizeof(int), 8 * sizeof(int), 4,
                                  birenMemcpyHostToDevice, s1));
  CHECK(birenMemcpy2DFromArrayAsync(out, sizeof out[0], a, 4 * sizeof(int), 2, 8 * sizeof(int), 4,
                                    birenMemcpyDeviceToHost, s2));
  CHECK(birenDeviceSynchronize());
  int ok = 1;
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 8; x++) ok &= out[y][x] == in[y + 2][x + 4];
  CHECK(birenFreeHost(pinned));
  CHECK(birenFreeArray(a));
  return verdict(ok, "the copy out of the array ran before the copy into it");
}
