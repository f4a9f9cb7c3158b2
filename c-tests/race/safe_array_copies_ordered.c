/* safe_array_copies_ordered.c -- stream 1 copies host rows into a 2-D array; stream 2 waits for
 * an event recorded after that copy, then copies the region on into a second array
 * (birenMemcpy3DAsync with srcArray and dstArray) and out of it to the host. A copy in stream 1
 * into other rows of the array (rows 6..7) needs no order with stream 2's reads of rows 2..5.
 * verdict: race-free
 */
#include "race.h"

enum { AW = 16, AH = 8 };

int main(void) {
  setup();
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindSigned);
  birenArray_t a, b;
  CHECK(birenMallocArray(&a, &f, AW, AH, 0));
  CHECK(birenMallocArray(&b, &f, AW, AH, 0));
  static int zero[AH][AW], in[AH][AW], out[AH][AW];
  for (int y = 0; y < AH; y++)
    for (int x = 0; x < AW; x++) in[y][x] = 1 + y * AW + x;
  CHECK(birenMemcpy2DToArray(a, 0, 0, zero, sizeof zero[0], sizeof zero[0], AH, birenMemcpyHostToDevice));
  CHECK(birenMemcpy2DToArray(b, 0, 0, zero, sizeof zero[0], sizeof zero[0], AH, birenMemcpyHostToDevice));
  int *pinned;
  CHECK(birenMallocHost((void **)&pinned, sizeof in));
  memcpy(pinned, in, sizeof in);
  birenStream_t s1 = stream(1), s2 = stream(1);
  birenEvent_t e = event();
  CHECK(birenMemcpy2DToArrayAsync(a, 4 * sizeof(int), 2, pinned + 2 * AW + 4, AW * sizeof(int), 8 * sizeof(int), 4,
                                  birenMemcpyHostToDevice, s1));
  CHECK(birenEventRecord(e, s1));
  CHECK(birenMemcpy2DToArrayAsync(a, 0, 6, pinned + 6 * AW, AW * sizeof(int), AW * sizeof(int), 2,
                                  birenMemcpyHostToDevice, s1));
  CHECK(birenStreamWaitEvent(s2, e));
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcArray = a;
  p.dstArray = b;
  p.srcPos = make_birenPos(4, 2, 0);
  p.dstPos = make_birenPos(4, 2, 0);
  p.extent = make_birenExtent(8, 4, 1);
  p.kind = birenMemcpyDeviceToDevice;
  CHECK(birenMemcpy3DAsync(&p, s2));
  CHECK(birenMemcpy2DFromArrayAsync(out, sizeof out[0], b, 4 * sizeof(int), 2, 8 * sizeof(int), 4,
                                    birenMemcpyDeviceToHost, s2));
  CHECK(birenDeviceSynchronize());
  int ok = 1;
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 8; x++) ok &= out[y][x] == in[y + 2][x + 4];
  CHECK(birenFreeHost(pinned));
  CHECK(birenFreeArray(a));
  CHECK(birenFreeArray(b));
  return verdict(ok, "the copies did not see each other's data");
}
