/* Accelerator arrays: birenCreateChannelDesc, birenMallocArray, birenMalloc3DArray,
 * birenArrayGetInfo, birenFreeArray, and the copies into, out of and between arrays
 * (birenMemcpy2DToArray, birenMemcpy2DFromArray, birenMemcpyToArray, birenMemcpyFromArray,
 * birenMemcpy2DArrayToArray, their Async forms, birenMemcpy3D with arrays). Every copy is
 * checked against the array's extent before a byte moves; on error nothing is written. */
#include "compat.h"
#include <stdint.h>

static birenChannelFormatDesc fdesc(void) {
  return birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
}

static int channel_desc_and_malloc_errors(void) {
  birenChannelFormatDesc d = birenCreateChannelDesc(8, 8, 8, 8, birenChannelFormatKindUnsigned);
  EXPECT(d.x == 8 && d.y == 8 && d.z == 8 && d.w == 8 && d.f == birenChannelFormatKindUnsigned);
  birenArray_t a = (birenArray_t)(uintptr_t)0x1234;
  birenChannelFormatDesc bad3 = birenCreateChannelDesc(8, 8, 8, 0, birenChannelFormatKindUnsigned);
  birenChannelFormatDesc bad8f = birenCreateChannelDesc(8, 0, 0, 0, birenChannelFormatKindFloat);
  birenChannelFormatDesc mixed = birenCreateChannelDesc(8, 16, 0, 0, birenChannelFormatKindSigned);
  EXPECT_FAIL(birenMallocArray(&a, &bad3, 4, 4, 0), BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR);
  EXPECT_FAIL(birenMallocArray(&a, &bad8f, 4, 4, 0), BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR);
  EXPECT_FAIL(birenMallocArray(&a, &mixed, 4, 4, 0), BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR);
  birenChannelFormatDesc f = fdesc();
  EXPECT_FAIL(birenMallocArray(&a, &f, 0, 4, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocArray(NULL, &f, 4, 4, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocArray(&a, NULL, 4, 4, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocArray(&a, &f, 4, 4, 0x40), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocArray(&a, &f, 4, 4, birenArrayLayered), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocArray(&a, &f, 131073, 0, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocArray(&a, &f, 4, 65537, 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMalloc3DArray(&a, &f, make_birenExtent(4, 0, 3), 0), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMalloc3DArray(&a, &f, make_birenExtent(4, 4, 0), birenArrayLayered), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMalloc3DArray(&a, &f, make_birenExtent(4, 4, 4), birenArrayCubemap), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocArray(&a, &f, 100000, 65536, 0), BIREN_ERROR_OUT_OF_MEMORY); /* 26 GB */
  EXPECT(a == (birenArray_t)(uintptr_t)0x1234); /* nothing written */
  return 0;
}

static int get_info_and_free(void) {
  birenChannelFormatDesc f = fdesc(), got;
  birenArray_t a1, a2, a3, al;
  OK(birenMallocArray(&a1, &f, 10, 0, 0));
  OK(birenMallocArray(&a2, &f, 10, 5, birenArraySurfaceLoadStore));
  OK(birenMalloc3DArray(&a3, &f, make_birenExtent(4, 3, 2), 0));
  OK(birenMalloc3DArray(&al, &f, make_birenExtent(4, 3, 6), birenArrayLayered));
  birenExtent e;
  unsigned flags = 99;
  OK(birenArrayGetInfo(&got, &e, &flags, a1));
  EXPECT(got.x == 32 && got.y == 0 && got.f == birenChannelFormatKindFloat);
  EXPECT(e.width == 10 && e.height == 0 && e.depth == 0 && flags == 0);
  OK(birenArrayGetInfo(NULL, &e, &flags, a2));
  EXPECT(e.width == 10 && e.height == 5 && e.depth == 0 && flags == birenArraySurfaceLoadStore);
  OK(birenArrayGetInfo(NULL, &e, NULL, a3));
  EXPECT(e.width == 4 && e.height == 3 && e.depth == 2);
  OK(birenArrayGetInfo(NULL, &e, &flags, al));
  EXPECT(e.depth == 6 && flags == birenArrayLayered);
  OK(birenFreeArray(a1));
  e.width = 77;
  EXPECT_FAIL(birenArrayGetInfo(NULL, &e, NULL, a1), BIREN_ERROR_INVALID_HANDLE);
  EXPECT(e.width == 77);
  EXPECT_FAIL(birenFreeArray(a1), BIREN_ERROR_INVALID_HANDLE); /* double free */
  EXPECT_FAIL(birenFreeArray((birenArray_t)(uintptr_t)0xdeadbeef), BIREN_ERROR_INVALID_HANDLE);
  OK(birenFreeArray(NULL));
  /* A stream handle is not an array. */
  birenStream_t s;
  OK(birenStreamCreate(&s));
  EXPECT_FAIL(birenFreeArray((birenArray_t)s), BIREN_ERROR_INVALID_HANDLE);
  OK(birenStreamDestroy(s));
  OK(birenFreeArray(a2));
  OK(birenFreeArray(a3));
  OK(birenFreeArray(al));
  return 0;
}

enum { W = 16, H = 8 };

static int copies_2d_round_trip(void) {
  birenChannelFormatDesc f = fdesc();
  birenArray_t a, b;
  OK(birenMallocArray(&a, &f, W, H, 0));
  OK(birenMallocArray(&b, &f, W, H, 0));
  float h[H][W], back[H][W];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) h[y][x] = (float)(y * 100 + x);
  OK(birenMemcpy2DToArray(a, 0, 0, h, sizeof h[0], sizeof h[0], H, birenMemcpyHostToDevice));
  memset(back, 0, sizeof back);
  OK(birenMemcpy2DFromArray(back, sizeof back[0], a, 0, 0, sizeof back[0], H, birenMemcpyDeviceToHost));
  EXPECT(memcmp(h, back, sizeof h) == 0);
  /* A sub-box: 3 texels from (x=2, y=1) of a to (x=10, y=5) of b. */
  OK(birenMemcpy2D(back, sizeof back[0], back, sizeof back[0], 0, 0, birenMemcpyHostToHost));
  float zero[H][W];
  memset(zero, 0, sizeof zero);
  OK(birenMemcpy2DToArray(b, 0, 0, zero, sizeof zero[0], sizeof zero[0], H, birenMemcpyDefault));
  OK(birenMemcpy2DArrayToArray(b, 10 * 4, 5, a, 2 * 4, 1, 3 * 4, 2, birenMemcpyDeviceToDevice));
  OK(birenMemcpy2DFromArray(back, sizeof back[0], b, 0, 0, sizeof back[0], H, birenMemcpyDefault));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      int in = y >= 5 && y < 7 && x >= 10 && x < 13;
      EXPECT(back[y][x] == (in ? h[y - 4][x - 8] : 0.0f));
    }
  /* Linear runs: birenMemcpyToArray continues over rows. */
  float run[W + 4];
  for (int i = 0; i < W + 4; i++) run[i] = -(float)i;
  OK(birenMemcpyToArray(a, 12 * 4, 2, run, sizeof run, birenMemcpyHostToDevice));
  float out[W + 4];
  OK(birenMemcpyFromArray(out, a, 12 * 4, 2, sizeof out, birenMemcpyDeviceToHost));
  EXPECT(memcmp(out, run, sizeof run) == 0);
  OK(birenMemcpy2DFromArray(back, sizeof back[0], a, 0, 0, sizeof back[0], H, birenMemcpyDeviceToHost));
  EXPECT(back[2][12] == 0.0f && back[2][15] == -3.0f && back[3][0] == -4.0f && back[3][15] == -19.0f);
  EXPECT(back[4][0] == h[4][0] && back[2][11] == h[2][11]);
  /* Async forms on a stream, and device memory as the other side. */
  birenStream_t s;
  OK(birenStreamCreate(&s));
  float *d;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMemcpy2DToArrayAsync(a, 0, 0, h, sizeof h[0], sizeof h[0], H, birenMemcpyHostToDevice, s));
  OK(birenMemcpy2DFromArrayAsync(d, sizeof h[0], a, 0, 0, sizeof h[0], H, birenMemcpyDeviceToDevice, s));
  OK(birenMemcpyToArrayAsync(b, 0, 0, d, sizeof h, birenMemcpyDeviceToDevice, s));
  OK(birenMemcpyFromArrayAsync(back, b, 0, 0, sizeof back, birenMemcpyDeviceToHost, s));
  OK(birenStreamSynchronize(s));
  EXPECT(memcmp(h, back, sizeof h) == 0);
  OK(birenStreamDestroy(s));
  OK(birenFree(d));
  OK(birenFreeArray(a));
  OK(birenFreeArray(b));
  return 0;
}

static int copy_errors_write_nothing(void) {
  birenChannelFormatDesc f = fdesc();
  birenArray_t a;
  OK(birenMallocArray(&a, &f, W, H, 0));
  float h[H][W], back[H][W];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) h[y][x] = 1.0f;
  float zero[H][W];
  memset(zero, 0, sizeof zero);
  OK(birenMemcpy2DToArray(a, 0, 0, zero, sizeof zero[0], sizeof zero[0], H, birenMemcpyHostToDevice));
  size_t row = sizeof h[0];
  /* Outside the array: wider than a row, one texel right, one row down, past the end. */
  EXPECT_FAIL(birenMemcpy2DToArray(a, 0, 0, h, row + 4, row + 4, H, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpy2DToArray(a, 4, 0, h, row, row, 1, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpy2DToArray(a, 0, 1, h, row, row, H, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpy2DToArray(a, SIZE_MAX, 0, h, row, 1, 1, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpy2DFromArray(back, row, a, 0, 1, row, H, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpyToArray(a, 0, 0, h, sizeof h + 4, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpyToArray(a, row, 0, h, 4, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpyToArray(a, 0, H, h, 4, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMemcpy2DArrayToArray(a, 4, 0, a, 0, 0, row, 1, birenMemcpyDeviceToDevice), BIREN_ERROR_INVALID_VALUE);
  /* Pitches and kinds. */
  EXPECT_FAIL(birenMemcpy2DToArray(a, 0, 0, h, 8, row, 2, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_PITCH_VALUE);
  EXPECT_FAIL(birenMemcpy2DToArray(a, 0, 0, h, row, row, H, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_FAIL(birenMemcpy2DToArray(a, 0, 0, h, row, row, H, birenMemcpyHostToHost), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_FAIL(birenMemcpy2DToArray(a, 0, 0, h, row, row, H, (birenMemcpyKind)9), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_FAIL(birenMemcpy2DFromArray(back, row, a, 0, 0, row, H, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_FAIL(birenMemcpy2DArrayToArray(a, 0, 0, a, 0, 0, 4, 1, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  EXPECT_FAIL(birenMemcpyToArray(a, 0, 0, h, 4, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  /* The other side: NULL, or device memory too short (its rows checked before a byte moves). */
  EXPECT_FAIL(birenMemcpy2DToArray(a, 0, 0, NULL, row, row, H, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  float *d;
  OK(birenMalloc((void **)&d, row * 2));
  EXPECT_FAIL(birenMemcpy2DToArray(a, 0, 0, d, row, row, 3, birenMemcpyDeviceToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  EXPECT_FAIL(birenMemcpyFromArray(d, a, 0, 0, row * 3, birenMemcpyDeviceToDevice), BIREN_ERROR_OUT_OF_BOUNDS);
  /* A freed or forged array. */
  birenArray_t gone;
  OK(birenMallocArray(&gone, &f, 4, 0, 0));
  OK(birenFreeArray(gone));
  EXPECT_FAIL(birenMemcpyToArray(gone, 0, 0, h, 4, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_FAIL(birenMemcpy2DFromArray(back, row, (birenArray_t)(uintptr_t)8, 0, 0, 4, 1, birenMemcpyDeviceToHost), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_FAIL(birenMemcpyToArrayAsync(a, 0, 0, h, 4, birenMemcpyHostToDevice, (birenStream_t)(uintptr_t)77), BIREN_ERROR_INVALID_HANDLE);
  /* Nothing was written by any of them. */
  OK(birenMemcpy2DFromArray(back, row, a, 0, 0, row, H, birenMemcpyDeviceToHost));
  EXPECT(memcmp(back, zero, sizeof zero) == 0);
  /* Zero sizes do nothing and succeed. */
  OK(birenMemcpy2DToArray(a, 0, 0, h, row, 0, H, birenMemcpyHostToDevice));
  OK(birenMemcpyToArray(a, 0, 0, h, 0, birenMemcpyHostToDevice));
  OK(birenFree(d));
  OK(birenFreeArray(a));
  return 0;
}

static int copies_3d_with_arrays(void) {
  enum { X = 5, Y = 4, Z = 3 };
  birenChannelFormatDesc f = birenCreateChannelDesc(16, 16, 0, 0, birenChannelFormatKindSigned); /* 4 bytes */
  birenArray_t a, l;
  OK(birenMalloc3DArray(&a, &f, make_birenExtent(X, Y, Z), 0));
  OK(birenMalloc3DArray(&l, &f, make_birenExtent(X, Y, Z), birenArrayLayered));
  int32_t h[Z][Y][X], back[Z][Y][X];
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < Y; y++)
      for (int x = 0; x < X; x++) h[z][y][x] = z * 10000 + y * 100 + x;
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_birenPitchedPtr(h, X * 4, X * 4, Y);
  p.dstArray = a;
  p.extent = make_birenExtent(X, Y, Z); /* texels */
  p.kind = birenMemcpyHostToDevice;
  OK(birenMemcpy3D(&p));
  /* Array to layered array, then back to the host through an async copy. */
  memset(&p, 0, sizeof p);
  p.srcArray = a;
  p.dstArray = l;
  p.extent = make_birenExtent(X, Y, Z);
  p.kind = birenMemcpyDeviceToDevice;
  OK(birenMemcpy3D(&p));
  memset(back, 0, sizeof back);
  memset(&p, 0, sizeof p);
  p.srcArray = l;
  p.dstPtr = make_birenPitchedPtr(back, X * 4, X * 4, Y);
  p.extent = make_birenExtent(X, Y, Z);
  p.kind = birenMemcpyDeviceToHost;
  OK(birenMemcpy3DAsync(&p, NULL));
  OK(birenDeviceSynchronize());
  EXPECT(memcmp(h, back, sizeof h) == 0);
  /* A box at a position (texels): 2 x 1 x 1 from (3, 2, 1). */
  int32_t two[2] = {0, 0};
  memset(&p, 0, sizeof p);
  p.srcArray = a;
  p.srcPos = make_birenPos(3, 2, 1);
  p.dstPtr = make_birenPitchedPtr(two, 8, 8, 1);
  p.extent = make_birenExtent(2, 1, 1);
  p.kind = birenMemcpyDeviceToHost;
  OK(birenMemcpy3D(&p));
  EXPECT(two[0] == 10203 && two[1] == 10204);
  /* Errors: outside the array, both array and pointer, a freed array, a host kind. */
  p.srcPos = make_birenPos(4, 2, 1);
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_INVALID_VALUE);
  p.srcPos = make_birenPos(0, 0, 3);
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_INVALID_VALUE);
  p.srcPos = make_birenPos(0, 0, 0);
  p.srcPtr = make_birenPitchedPtr(h, X * 4, X * 4, Y);
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_INVALID_VALUE);
  p.srcPtr = make_birenPitchedPtr(NULL, 0, 0, 0);
  p.kind = birenMemcpyHostToDevice;
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  p.kind = birenMemcpyDeviceToHost;
  EXPECT(two[0] == 10203 && two[1] == 10204);
  OK(birenFreeArray(a));
  EXPECT_FAIL(birenMemcpy3D(&p), BIREN_ERROR_INVALID_HANDLE);
  OK(birenFreeArray(l));
  return 0;
}

/* Stream capture takes array copies as memcpy nodes: nothing moves until the graph runs. */
static int captured_array_copies_run_in_the_graph(void) {
  birenChannelFormatDesc f = fdesc();
  birenArray_t a;
  OK(birenMallocArray(&a, &f, W, H, 0));
  float h[H][W], back[H][W], zero[H][W];
  memset(zero, 0, sizeof zero);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) h[y][x] = (float)(y * W + x);
  OK(birenMemcpy2DToArray(a, 0, 0, zero, sizeof zero[0], sizeof zero[0], H, birenMemcpyHostToDevice));
  birenStream_t s;
  OK(birenStreamCreateWithFlags(&s, birenStreamNonBlocking));
  OK(birenStreamBeginCapture(s, birenStreamCaptureModeGlobal));
  OK(birenMemcpy2DToArrayAsync(a, 0, 0, h, sizeof h[0], sizeof h[0], H, birenMemcpyHostToDevice, s));
  OK(birenMemcpyFromArrayAsync(back, a, 0, 0, sizeof back, birenMemcpyDeviceToHost, s));
  birenGraph_t g;
  OK(birenStreamEndCapture(s, &g));
  memset(back, 0, sizeof back);
  OK(birenMemcpy2DFromArray(back, sizeof back[0], a, 0, 0, sizeof back[0], H, birenMemcpyDeviceToHost));
  EXPECT(memcmp(back, zero, sizeof zero) == 0); /* captured, not run */
  birenGraphExec_t e;
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, s));
  OK(birenStreamSynchronize(s));
  EXPECT(memcmp(back, h, sizeof h) == 0);
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenStreamDestroy(s));
  OK(birenFreeArray(a));
  return 0;
}

/* A 3-D copy's parameters for a graph memcpy node: the whole W x H float array on the array
 * side(s), host rows of W floats on the pointer side. */
static birenMemcpy3DParms array_parms(birenArray_t dst, birenArray_t src, void *host, int kind) {
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.dstArray = dst;
  p.srcArray = src;
  if (!dst) p.dstPtr = make_birenPitchedPtr(host, W * sizeof(float), W, H);
  if (!src) p.srcPtr = make_birenPitchedPtr(host, W * sizeof(float), W, H);
  p.extent = make_birenExtent(W, H, 1); /* texels */
  p.kind = kind;
  return p;
}

/* Graph memcpy nodes take arrays as birenMemcpy3D does: checked against the extent when the
 * node is made, nothing moved until the graph runs; their parameters can be set again. */
static int graph_memcpy_nodes_with_arrays(void) {
  birenChannelFormatDesc f = fdesc();
  birenArray_t a, b;
  OK(birenMallocArray(&a, &f, W, H, 0));
  OK(birenMallocArray(&b, &f, W, H, 0));
  static float h[H][W], back[H][W], zero[H][W], other[H][W];
  memset(zero, 0, sizeof zero);
  memset(back, 0, sizeof back);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) h[y][x] = (float)(y * W + x), other[y][x] = (float)(1000 + y);
  OK(birenMemcpy2DToArray(a, 0, 0, zero, sizeof zero[0], sizeof zero[0], H, birenMemcpyHostToDevice));
  OK(birenMemcpy2DToArray(b, 0, 0, zero, sizeof zero[0], sizeof zero[0], H, birenMemcpyHostToDevice));
  birenGraph_t g;
  OK(birenGraphCreate(&g, 0));
  birenGraphNode_t in, across, out, empty;
  birenMemcpy3DParms p = array_parms(a, NULL, h, birenMemcpyHostToDevice);
  OK(birenGraphAddMemcpyNode(&in, g, NULL, 0, &p));
  p = array_parms(b, a, NULL, birenMemcpyDeviceToDevice);
  OK(birenGraphAddMemcpyNode(&across, g, &in, 1, &p));
  p = array_parms(NULL, b, back, birenMemcpyDefault);
  OK(birenGraphAddMemcpyNode(&out, g, &across, 1, &p));
  OK(birenGraphAddEmptyNode(&empty, g, NULL, 0));
  /* Nothing has moved yet. */
  float probe[H][W];
  OK(birenMemcpy2DFromArray(probe, sizeof probe[0], a, 0, 0, sizeof probe[0], H, birenMemcpyDeviceToHost));
  EXPECT(memcmp(probe, zero, sizeof zero) == 0);
  birenGraphExec_t e;
  OK(birenGraphInstantiate(&e, g, 0));
  OK(birenGraphLaunch(e, NULL));
  OK(birenStreamSynchronize(NULL));
  EXPECT(memcmp(back, h, sizeof h) == 0);

  /* Checked against the extent at creation: a box past the array, a freed array, a kind that
   * makes an array host memory, both an array and a pointer; nothing is added. */
  birenGraphNode_t bad = (birenGraphNode_t)(uintptr_t)0x77;
  p = array_parms(a, NULL, h, birenMemcpyHostToDevice);
  p.dstPos = make_birenPos(1, 0, 0); /* one texel over the row's end */
  EXPECT_FAIL(birenGraphAddMemcpyNode(&bad, g, NULL, 0, &p), BIREN_ERROR_INVALID_VALUE);
  p = array_parms(a, NULL, h, birenMemcpyHostToDevice);
  p.extent.height = H + 1;
  EXPECT_FAIL(birenGraphAddMemcpyNode(&bad, g, NULL, 0, &p), BIREN_ERROR_INVALID_VALUE);
  p = array_parms(a, NULL, h, birenMemcpyDeviceToHost);
  EXPECT_FAIL(birenGraphAddMemcpyNode(&bad, g, NULL, 0, &p), BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
  p = array_parms(a, NULL, h, birenMemcpyHostToDevice);
  p.dstPtr = p.srcPtr;
  EXPECT_FAIL(birenGraphAddMemcpyNode(&bad, g, NULL, 0, &p), BIREN_ERROR_INVALID_VALUE);
  size_t n = 0;
  OK(birenGraphGetNodes(g, NULL, &n));
  EXPECT(n == 4 && bad == (birenGraphNode_t)(uintptr_t)0x77);

  /* The exec's node: a sub-box (rows 2..3, texels 4..11) of a into `other`'s rows 0..1. */
  memcpy(back, zero, sizeof back);
  p = array_parms(NULL, b, back, birenMemcpyDeviceToHost);
  p.srcPos = make_birenPos(4, 2, 0);
  p.extent = make_birenExtent(8, 2, 1);
  OK(birenGraphExecMemcpyNodeSetParams(e, out, &p));
  OK(birenGraphLaunch(e, NULL));
  OK(birenStreamSynchronize(NULL));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) EXPECT(back[y][x] == (y < 2 && x < 8 ? h[y + 2][x + 4] : 0.0f));
  p.srcPos = make_birenPos(9, 2, 0); /* 9 + 8 > W */
  EXPECT_FAIL(birenGraphExecMemcpyNodeSetParams(e, out, &p), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenGraphExecMemcpyNodeSetParams(e, empty, &p), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenGraphExecMemcpyNodeSetParams(e, out, NULL), BIREN_ERROR_INVALID_VALUE);

  /* The graph's node: the input comes from `other`; the exec keeps what it had. */
  p = array_parms(a, NULL, other, birenMemcpyHostToDevice);
  OK(birenGraphMemcpyNodeSetParams(in, &p));
  p.dstPos = make_birenPos(0, 1, 0); /* a row too far */
  EXPECT_FAIL(birenGraphMemcpyNodeSetParams(in, &p), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenGraphMemcpyNodeSetParams(empty, &p), BIREN_ERROR_INVALID_VALUE);
  memcpy(back, zero, sizeof back);
  OK(birenGraphLaunch(e, NULL));
  OK(birenStreamSynchronize(NULL));
  EXPECT(back[0][0] == h[2][4]);
  birenGraphExec_t e2;
  OK(birenGraphInstantiate(&e2, g, 0));
  memcpy(back, zero, sizeof back);
  OK(birenGraphLaunch(e2, NULL));
  OK(birenStreamSynchronize(NULL));
  EXPECT(memcmp(back, other, sizeof other) == 0);

  /* birenGraphExecUpdate takes the graph's array parameters into the first exec. */
  birenGraphExecUpdateResultInfo info;
  OK(birenGraphExecUpdate(e, g, &info));
  memcpy(back, zero, sizeof back);
  OK(birenGraphLaunch(e, NULL));
  OK(birenStreamSynchronize(NULL));
  EXPECT(memcmp(back, other, sizeof other) == 0);

  /* An array freed since the node was made: the launch fails, nothing is copied. */
  OK(birenGraphExecDestroy(e2));
  OK(birenFreeArray(b));
  p = array_parms(NULL, b, back, birenMemcpyDeviceToHost);
  EXPECT_FAIL(birenGraphMemcpyNodeSetParams(out, &p), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_FAIL(birenGraphLaunch(e, NULL), BIREN_ERROR_INVALID_DEVICE_POINTER);
  OK(birenStreamSynchronize(NULL));
  OK(birenGraphExecDestroy(e));
  OK(birenGraphDestroy(g));
  OK(birenFreeArray(a));
  return 0;
}

static int failures_are_reported_by_the_validator(void) {
  birenChannelFormatDesc f = fdesc();
  birenArray_t a;
  OK(birenMallocArray(&a, &f, 4, 4, 0));
  float h[32];
  capture_start();
  EXPECT_FAIL(birenMemcpy2DToArray(a, 4, 0, h, 16, 16, 1, birenMemcpyHostToDevice), BIREN_ERROR_INVALID_VALUE);
  birenChannelFormatDesc bad = birenCreateChannelDesc(8, 8, 8, 0, birenChannelFormatKindUnsigned);
  birenArray_t b;
  EXPECT_FAIL(birenMallocArray(&b, &bad, 4, 4, 0), BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR);
  OK(birenFreeArray(a));
  EXPECT_FAIL(birenFreeArray(a), BIREN_ERROR_INVALID_HANDLE);
  capture_stop();
  EXPECT(captured("birenMemcpy2DToArray") && captured("outside the array"));
  EXPECT(captured("birenMallocArray") && captured("not a texel format"));
  EXPECT(captured("birenFreeArray") && captured("not a live array"));
  return 0;
}

static const test_case tests[] = {
    TEST(channel_desc_and_malloc_errors),
    TEST(get_info_and_free),
    TEST(copies_2d_round_trip),
    TEST(copy_errors_write_nothing),
    TEST(copies_3d_with_arrays),
    TEST(captured_array_copies_run_in_the_graph),
    TEST(graph_memcpy_nodes_with_arrays),
    TEST(failures_are_reported_by_the_validator),
};

int main(void) {
  unsetenv("BIREN_VALIDATOR");
  setenv("BIREN_DEVICE_MEMORY", "64M", 1);
  return RUN_TESTS("arrays", tests, compat_init, 30);
}
