/* Pitched and 2D/3D memory: birenMallocPitch, birenMalloc3D, birenMemcpy2D(+Async),
 * birenMemset2D(+Async), birenMemcpy3D(+Async), birenMemset3D(+Async), make_biren* helpers.
 * Every row is checked before a byte moves: a rectangle whose last row runs past its buffer
 * writes nothing, not even its first rows. */
#include "compat.h"
#include <stdint.h>

#define W 100 /* bytes per row */
#define H 8

static void scale_rows(void **args) {
  char *base = *(char **)args[0];
  size_t pitch = *(size_t *)args[1];
  unsigned y = birenBlockIdx().x, x = birenThreadIdx().x;
  unsigned char *row = (unsigned char *)(base + y * pitch);
  row[x] = (unsigned char)(row[x] * 2);
}

static int malloc_pitch_and_2d_round_trip(void) {
  unsigned char *d = NULL;
  size_t pitch = 0;
  OK(birenMallocPitch((void **)&d, &pitch, W, H));
  EXPECT(d != NULL && pitch >= W && pitch % 512 == 0 && (uintptr_t)d % 256 == 0);
  birenPointerAttributes a;
  OK(birenPointerGetAttributes(&a, d));
  EXPECT(a.size == pitch * H);
  OK(birenMemset(d, 0xEE, pitch * H)); /* padding marker */
  unsigned char h[H][W], back[H][W];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) h[y][x] = (unsigned char)(y * 10 + x);
  OK(birenMemcpy2D(d, pitch, h, W, W, H, birenMemcpyHostToDevice));
  OK(BIREN_LAUNCH(scale_rows, birenDim3(H, 1, 1), birenDim3(W, 1, 1), 0, NULL, d, pitch));
  OK(birenMemcpy2D(back, W, d, pitch, W, H, birenMemcpyDeviceToHost));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) EXPECT(back[y][x] == (unsigned char)(2 * (y * 10 + x)));
  /* The padding between rows was not touched. */
  unsigned char *all = malloc(pitch * H);
  OK(birenMemcpy(all, d, pitch * H, birenMemcpyDeviceToHost));
  for (int y = 0; y < H; y++)
    for (size_t x = W; x < pitch; x++) EXPECT(all[y * pitch + x] == 0xEE);
  free(all);
  /* Zero width or height: nothing to do. */
  OK(birenMemcpy2D(d, pitch, h, W, 0, H, birenMemcpyHostToDevice));
  OK(birenMemcpy2D(d, pitch, h, W, W, 0, birenMemcpyHostToDevice));
  void *z = (void *)1;
  size_t zp = 0;
  OK(birenMallocPitch(&z, &zp, 10, 0));
  EXPECT(z == NULL && zp == 512);
  OK(birenFree(d));
  return 0;
}

static int device_to_device_sub_rectangle_and_async(void) {
  unsigned char *a = NULL, *b = NULL;
  size_t pa = 0, pb = 0;
  OK(birenMallocPitch((void **)&a, &pa, 64, 16));
  OK(birenMallocPitch((void **)&b, &pb, 1000, 4));
  EXPECT(pb == 1024);
  OK(birenMemset2D(a, pa, 7, 64, 16));
  OK(birenMemset(b, 0, pb * 4));
  birenStream_t s;
  OK(birenStreamCreate(&s));
  /* rows 2..5, bytes 8..39 of a -> b at column 100 */
  OK(birenMemcpy2DAsync(b + 100, pb, a + 2 * pa + 8, pa, 32, 4, birenMemcpyDeviceToDevice, s));
  OK(birenMemset2DAsync(b + 100, pb, 9, 4, 2, s));
  OK(birenStreamSynchronize(s));
  unsigned char h[4][1024];
  OK(birenMemcpy2D(h, 1024, b, pb, 1024, 4, birenMemcpyDefault));
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 1024; x++) {
      int expect = (x >= 100 && x < 132) ? ((y < 2 && x < 104) ? 9 : 7) : 0;
      EXPECT(h[y][x] == expect);
    }
  OK(birenStreamDestroy(s));
  OK(birenFree(a));
  OK(birenFree(b));
  return 0;
}

static int errors_2d_write_nothing(void) {
  unsigned char *d = NULL, *pinned = NULL;
  size_t pitch = 0;
  OK(birenMallocPitch((void **)&d, &pitch, W, H));
  OK(birenMemset(d, 0x5A, pitch * H));
  unsigned char h[H + 1][W];
  memset(h, 1, sizeof h);
  EXPECT_FAIL(birenMemcpy2D(d, pitch, h, W, W + 1, H, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_PITCH_VALUE);
  EXPECT_FAIL(birenMemcpy2D(d, 64, h, W, W, H, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_PITCH_VALUE);
  EXPECT_FAIL(birenMemcpy2D(d, (size_t)1 << 40, h, W, W, H, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_PITCH_VALUE);
  EXPECT_FAIL(birenMemcpy2D(d, pitch, h, W, W, H, (birenMemcpyKind)9), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_FAIL(birenMemcpy2D(NULL, pitch, h, W, W, H, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpy2D(d, pitch, NULL, W, W, H, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  /* The last row runs past the allocation: the first rows are not written either. */
  EXPECT_FAIL(birenMemcpy2D(d, pitch, h, W, W, H + 1, birenMemcpyHostToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpy2D(d + pitch - W + 1, pitch, h, W, W, H, birenMemcpyHostToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpy2DAsync(d, pitch, h, W, W, H + 1, birenMemcpyHostToDevice, NULL), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpy2D(h, W, d, pitch, W, H + 1, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  /* A host pointer where device memory is promised. */
  EXPECT_FAIL(birenMemcpy2D(h, W, h, W, W, 2, birenMemcpyDeviceToDevice), BIREN_ERROR_INVALID_DEVICE_POINTER);
  /* A page-locked host buffer one row too short. */
  OK(birenMallocHost((void **)&pinned, W * (H - 1)));
  EXPECT_FAIL(birenMemcpy2D(d, pitch, pinned, W, W, H, birenMemcpyHostToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpy2D(pinned, W, d, pitch, W, H, birenMemcpyDeviceToHost), BIREN_ERROR_OUT_OF_BOUNDS);
  /* Fills. */
  EXPECT_FAIL(birenMemset2D(d, pitch, 0, pitch + 1, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemset2D(NULL, pitch, 0, W, H), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemset2D(d, pitch, 0, W, H + 1), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemset2D(h, W, 0, W, 2), BIREN_ERROR_INVALID_DEVICE_POINTER);
  EXPECT_FAIL(birenMemset2DAsync(d, pitch, 0, W, H + 1, NULL), BIREN_ERROR_OUT_OF_BOUNDS);
  OK(birenDeviceSynchronize());
  unsigned char *all = malloc(pitch * H);
  OK(birenMemcpy(all, d, pitch * H, birenMemcpyDeviceToHost));
  for (size_t i = 0; i < pitch * H; i++) EXPECT(all[i] == 0x5A);
  for (int y = 0; y < H - 1; y++)
    for (int x = 0; x < W; x++) EXPECT(h[y][x] == 1);
  free(all);
  OK(birenFreeHost(pinned));
  EXPECT_FAIL(birenMallocPitch(NULL, &pitch, W, H), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocPitch((void **)&d, NULL, W, H), BIREN_ERROR_INVALID_VALUE);
  void *big = (void *)7;
  size_t bp = 3;
  EXPECT_FAIL(birenMallocPitch(&big, &bp, (size_t)1 << 40, 1), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocPitch(&big, &bp, 1024, (size_t)1 << 40), BIREN_ERROR_OUT_OF_MEMORY);
  EXPECT(big == (void *)7 && bp == 3);
  OK(birenFree(d));
  return 0;
}

#define X3 40
#define Y3 5
#define Z3 3

static int malloc3d_and_3d_copies(void) {
  birenPitchedPtr dp;
  birenExtent ext = make_birenExtent(X3, Y3, Z3);
  OK(birenMalloc3D(&dp, ext));
  EXPECT(dp.ptr != NULL && dp.pitch == 512 && dp.xsize == X3 && dp.ysize == Y3);
  OK(birenMemset3D(dp, 0, ext));
  unsigned char h[Z3][Y3][X3], back[Z3][Y3][X3];
  for (int z = 0; z < Z3; z++)
    for (int y = 0; y < Y3; y++)
      for (int x = 0; x < X3; x++) h[z][y][x] = (unsigned char)(z * 50 + y * 7 + x);
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_birenPitchedPtr(h, X3, X3, Y3);
  p.dstPtr = dp;
  p.extent = ext;
  p.kind = birenMemcpyHostToDevice;
  OK(birenMemcpy3D(&p));
  memset(&p, 0, sizeof p);
  p.srcPtr = dp;
  p.dstPtr = make_birenPitchedPtr(back, X3, X3, Y3);
  p.extent = ext;
  p.kind = birenMemcpyDeviceToHost;
  memset(back, 0, sizeof back);
  OK(birenMemcpy3D(&p));
  EXPECT(memcmp(h, back, sizeof h) == 0);
  /* A sub-box with positions, async: (x 4..13, y 1..2, z 1..2) set to 0xFF then read back. */
  OK(birenMemset3DAsync(make_birenPitchedPtr((char *)dp.ptr + 1 * dp.pitch * Y3 + 1 * dp.pitch + 4, dp.pitch, X3, Y3), 0xFF,
                        make_birenExtent(10, 2, 2), NULL));
  memset(&p, 0, sizeof p);
  p.srcPtr = dp;
  p.srcPos = make_birenPos(0, 0, 0);
  p.dstPtr = make_birenPitchedPtr(back, X3, X3, Y3);
  p.extent = ext;
  p.kind = birenMemcpyDefault;
  birenStream_t s;
  OK(birenStreamCreate(&s));
  OK(birenMemcpy3DAsync(&p, s));
  OK(birenStreamSynchronize(s));
  for (int z = 0; z < Z3; z++)
    for (int y = 0; y < Y3; y++)
      for (int x = 0; x < X3; x++) {
        int in = z >= 1 && y >= 1 && y < 3 && x >= 4 && x < 14;
        EXPECT(back[z][y][x] == (in ? 0xFF : h[z][y][x]));
      }
  /* Copy one slice out using positions on the source. */
  unsigned char slice[Y3][X3];
  memset(&p, 0, sizeof p);
  p.srcPtr = dp;
  p.srcPos = make_birenPos(0, 0, 2);
  p.dstPtr = make_birenPitchedPtr(slice, X3, X3, Y3);
  p.extent = make_birenExtent(X3, Y3, 1);
  p.kind = birenMemcpyDeviceToHost;
  OK(birenMemcpy3D(&p));
  EXPECT(memcmp(slice, back[2], sizeof slice) == 0); /* slice 2 as read above, 0xFF box included */
  OK(birenStreamDestroy(s));
  OK(birenFree(dp.ptr));
  return 0;
}

static int errors_3d_write_nothing(void) {
  birenPitchedPtr dp;
  birenExtent ext = make_birenExtent(X3, Y3, Z3);
  OK(birenMalloc3D(&dp, ext));
  OK(birenMemset3D(dp, 0x3C, ext));
  unsigned char h[Z3 + 1][Y3][X3];
  memset(h, 1, sizeof h);
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_birenPitchedPtr(h, X3, X3, Y3);
  p.dstPtr = dp;
  p.extent = ext;
  p.kind = birenMemcpyHostToDevice;
  int dummy;
  p.dstArray = (birenArray_t)&dummy;
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_INVALID_VALUE);
  p.dstArray = NULL;
  p.kind = (birenMemcpyKind)5;
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  p.kind = birenMemcpyHostToDevice;
  p.extent = make_birenExtent(X3 + 1, Y3, Z3);
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_INVALID_PITCH_VALUE); /* over the source pitch */
  p.extent = ext;
  p.dstPos = make_birenPos(0, 1, 0);
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_INVALID_VALUE); /* rows into the next slice */
  p.dstPos = make_birenPos(0, 0, 1);
  p.extent = make_birenExtent(X3, Y3, Z3); /* one slice too many at z = 1 */
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_OUT_OF_BOUNDS);
  p.dstPos = make_birenPos(0, 0, 0);
  p.extent = make_birenExtent(X3, Y3, Z3 + 1);
  EXPECT_FAIL(birenMemcpy3DAsync(&p, NULL), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpy3D(NULL), BIREN_ERROR_INVALID_VALUE);
  p.extent = ext;
  p.srcPtr.ptr = NULL;
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemset3D(dp, 0, make_birenExtent(X3, Y3, Z3 + 1)), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemset3D(dp, 0, make_birenExtent(X3, Y3 + 1, 2)), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemset3D(dp, 0, make_birenExtent(dp.pitch + 1, 1, 1)), BIREN_ERROR_INVALID_VALUE);
  OK(birenDeviceSynchronize());
  unsigned char *all = malloc(dp.pitch * Y3 * Z3);
  OK(birenMemcpy(all, dp.ptr, dp.pitch * Y3 * Z3, birenMemcpyDeviceToHost));
  for (int z = 0; z < Z3; z++)
    for (int y = 0; y < Y3; y++)
      for (int x = 0; x < X3; x++) EXPECT(all[(z * Y3 + y) * dp.pitch + x] == 0x3C);
  free(all);
  birenPitchedPtr keep = make_birenPitchedPtr((void *)9, 9, 9, 9);
  EXPECT_FAIL(birenMalloc3D(NULL, ext), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMalloc3D(&keep, make_birenExtent(1024, (size_t)1 << 30, (size_t)1 << 30)), BIREN_ERROR_OUT_OF_MEMORY);
  EXPECT(keep.ptr == (void *)9 && keep.pitch == 9);
  OK(birenFree(dp.ptr));
  return 0;
}

static int failures_are_reported_by_the_validator(void) {
  unsigned char *d = NULL, h[4 * W];
  size_t pitch = 0;
  OK(birenMallocPitch((void **)&d, &pitch, W, 2));
  capture_start();
  EXPECT_FAIL(birenMemcpy2D(d, pitch, h, W, W, 3, birenMemcpyHostToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpy2D(d, pitch, h, 10, W, 2, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_PITCH_VALUE);
  EXPECT_FAIL(birenMemcpy3D(NULL), BIREN_ERROR_INVALID_VALUE);
  capture_stop();
  EXPECT(captured("birenMemcpy2D") && captured("run"));
  EXPECT(captured("spitch=10"));
  EXPECT(captured("birenMemcpy3D"));
  OK(birenFree(d));
  return 0;
}

static const test_case tests[] = {
    TEST(malloc_pitch_and_2d_round_trip),
    TEST(device_to_device_sub_rectangle_and_async),
    TEST(errors_2d_write_nothing),
    TEST(malloc3d_and_3d_copies),
    TEST(errors_3d_write_nothing),
    TEST(failures_are_reported_by_the_validator),
};

int main(void) {
  unsetenv("BIREN_VALIDATOR");
  setenv("BIREN_DEVICE_MEMORY", "64M", 1);
  return RUN_TESTS("memory2d", tests, compat_init, 30);
}
