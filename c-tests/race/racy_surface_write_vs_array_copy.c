/* racy_surface_write_vs_array_copy.c -- a kernel in stream 1 writes a 2-D array through a
 * surface object (birenSurf2DwriteInt); stream 2 copies the array out (birenMemcpy2DFromArrayAsync)
 * and nothing orders them. The kernel's arguments hold no pointer: race detection sees the
 * array through the surface object.
 * verdict: racy
 * fuzz: yes
 */
#include "race.h"

enum { AW = 16, AH = 8 };

BIREN_KERNEL(paint, (unsigned long long) surf, (int) v) {
  int x = (int)threadIdx.x, y = (int)blockIdx.x;
  birenSurf2DwriteInt(v + y * AW + x, surf, x * (int)sizeof(int), y);
}

int main(void) {
  setup();
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindSigned);
  birenArray_t a;
  CHECK(birenMallocArray(&a, &f, AW, AH, birenArraySurfaceLoadStore));
  static int zero[AH][AW], out[AH][AW];
  CHECK(birenMemcpy2DToArray(a, 0, 0, zero, sizeof zero[0], sizeof zero[0], AH, birenMemcpyHostToDevice));
  birenResourceDesc r;
  memset(&r, 0, sizeof r);
  r.resType = birenResourceTypeArray;
  r.res.array.array = a;
  birenSurfaceObject_t s;
  CHECK(birenCreateSurfaceObject(&s, &r));
  birenStream_t s1 = stream(1), s2 = stream(1);
  CHECK(BIREN_LAUNCH(paint, birenDim3(AH, 1, 1), birenDim3(AW, 1, 1), 0, s1, s, 1));
  CHECK(birenMemcpy2DFromArrayAsync(out, sizeof out[0], a, 0, 0, sizeof out[0], AH, birenMemcpyDeviceToHost, s2));
  CHECK(birenDeviceSynchronize());
  int ok = 1;
  for (int y = 0; y < AH; y++)
    for (int x = 0; x < AW; x++) ok &= out[y][x] == 1 + y * AW + x;
  CHECK(birenDestroySurfaceObject(s));
  CHECK(birenFreeArray(a));
  return verdict(ok, "the copy read the array before the kernel wrote it");
}
