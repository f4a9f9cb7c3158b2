/* An image resampled through a texture: a 8 x 4 picture in an array, enlarged 4x by a kernel
 * that fetches each output pixel with bilinear filtering (birenTex2DFloat), then printed with
 * the nearest-texel enlargement beside it. */
#include <biren_runtime.h>
#include <stdio.h>
#include <string.h>

enum { W = 8, H = 4, S = 4 };

BIREN_KERNEL(resample, (unsigned long long) tex, (float *) out) {
  int x = threadIdx.x, y = blockIdx.x;
  /* Output pixel centre (x + 0.5) / S in texel coordinates. */
  out[y * W * S + x] = birenTex2DFloat(tex, (x + 0.5f) / S, (y + 0.5f) / S);
}

static void show(const char *title, const float *img) {
  static const char ramp[] = " .:-=+*#%@";
  printf("%s\n", title);
  for (int y = 0; y < H * S; y++) {
    for (int x = 0; x < W * S; x++) putchar(ramp[(int)(img[y * W * S + x] * 9.0f + 0.5f)]);
    putchar('\n');
  }
}

int main(void) {
  float pic[H][W] = {{0, 0, 1, 1, 1, 1, 0, 0}, {0, 1, 0, 0, 0, 0, 1, 0}, {0, 1, 0, 1, 1, 0, 1, 0}, {0, 0, 1, 1, 1, 1, 0, 0}};
  static float out[H * S][W * S];
  float *d;
  BIREN_CHECK(birenInit());
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t a;
  BIREN_CHECK(birenMallocArray(&a, &f, W, H, 0));
  BIREN_CHECK(birenMemcpy2DToArray(a, 0, 0, pic, sizeof pic[0], sizeof pic[0], H, birenMemcpyHostToDevice));
  BIREN_CHECK(birenMalloc((void **)&d, sizeof out));
  birenResourceDesc r;
  memset(&r, 0, sizeof r);
  r.resType = birenResourceTypeArray;
  r.res.array.array = a;
  birenTextureDesc t;
  memset(&t, 0, sizeof t);
  t.addressMode[0] = t.addressMode[1] = birenAddressModeClamp;
  for (int filter = 0; filter < 2; filter++) {
    birenTextureObject_t tex;
    t.filterMode = filter ? birenFilterModeLinear : birenFilterModePoint;
    BIREN_CHECK(birenCreateTextureObject(&tex, &r, &t, NULL));
    BIREN_CHECK(BIREN_LAUNCH(resample, birenDim3(H * S, 1, 1), birenDim3(W * S, 1, 1), 0, NULL, tex, d));
    BIREN_CHECK(birenMemcpy(out, d, sizeof out, birenMemcpyDeviceToHost));
    show(filter ? "bilinear (birenFilterModeLinear):" : "nearest texel (birenFilterModePoint):", &out[0][0]);
    BIREN_CHECK(birenDestroyTextureObject(tex));
  }
  BIREN_CHECK(birenFree(d));
  BIREN_CHECK(birenFreeArray(a));
  return 0;
}
