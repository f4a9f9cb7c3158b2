/* safe_surface_write_then_copy.c -- a kernel in stream 1 writes a 2-D array through a surface
 * object; stream 2 waits for an event recorded after the kernel and copies the array out; a
 * kernel in stream 2 then fetches from the array through a texture object while nothing else
 * writes it.
 * verdict: race-free
 */
#include "race.h"

enum { AW = 16, AH = 8 };

BIREN_KERNEL(paint, (unsigned long long) surf, (int) v) {
  int x = (int)threadIdx.x, y = (int)blockIdx.x;
  birenSurf2DwriteInt(v + y * AW + x, surf, x * (int)sizeof(int), y);
}

BIREN_KERNEL(look, (unsigned long long) tex, (int *) dst) {
  int x = (int)threadIdx.x, y = (int)blockIdx.x;
  dst[y * AW + x] = birenTex2DInt(tex, (float)x + 0.5f, (float)y + 0.5f);
}

int main(void) {
  setup();
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindSigned);
  birenArray_t a;
  CHECK(birenMallocArray(&a, &f, AW, AH, birenArraySurfaceLoadStore));
  static int zero[AH][AW], out[AH][AW], seen[AH][AW];
  CHECK(birenMemcpy2DToArray(a, 0, 0, zero, sizeof zero[0], sizeof zero[0], AH, birenMemcpyHostToDevice));
  birenResourceDesc r;
  memset(&r, 0, sizeof r);
  r.resType = birenResourceTypeArray;
  r.res.array.array = a;
  birenSurfaceObject_t s;
  CHECK(birenCreateSurfaceObject(&s, &r));
  birenTextureDesc td;
  memset(&td, 0, sizeof td);
  td.filterMode = birenFilterModePoint;
  td.readMode = birenReadModeElementType;
  birenTextureObject_t t;
  CHECK(birenCreateTextureObject(&t, &r, &td, NULL));
  int *d;
  CHECK(birenMalloc((void **)&d, sizeof seen));
  birenStream_t s1 = stream(1), s2 = stream(1);
  birenEvent_t e = event();
  CHECK(BIREN_LAUNCH(paint, birenDim3(AH, 1, 1), birenDim3(AW, 1, 1), 0, s1, s, 1));
  CHECK(birenEventRecord(e, s1));
  CHECK(birenStreamWaitEvent(s2, e));
  CHECK(birenMemcpy2DFromArrayAsync(out, sizeof out[0], a, 0, 0, sizeof out[0], AH, birenMemcpyDeviceToHost, s2));
  CHECK(BIREN_LAUNCH(look, birenDim3(AH, 1, 1), birenDim3(AW, 1, 1), 0, s2, t, d));
  CHECK(birenDeviceSynchronize());
  CHECK(birenMemcpy(seen, d, sizeof seen, birenMemcpyDeviceToHost));
  int ok = 1;
  for (int y = 0; y < AH; y++)
    for (int x = 0; x < AW; x++) ok &= out[y][x] == 1 + y * AW + x && seen[y][x] == out[y][x];
  CHECK(birenDestroyTextureObject(t));
  CHECK(birenDestroySurfaceObject(s));
  CHECK(birenFreeArray(a));
  CHECK(birenFree(d));
  return verdict(ok, "the copy or the fetches missed the kernel's writes");
}
