/* Texture and surface objects: creation, queries, misuse, and every fetch rule against values
 * computed by hand (CUDA's "Texture Fetching": texel centres, 9-bit linear weights, address
 * modes, normalized reads, tex1Dfetch out of range). Built as C and as C++
 * (c-tests/test_textures.sh), where CUDA's templates tex2D<T>, surf2Dwrite, ... are checked. */
#include "compat.h"
#include <math.h>
#include <stdint.h>

/* Fetch kinds of the kernel below. */
enum { T1D = 1, T2D, T3D, T2DL, TFETCH, T2D4, T2DU4, TFETCHI, T2DN, T1DU, CXX2D, CXX2D4, TCUBE, TCUBEL1, TCUBEL9, CXXCUBE, CXXCUBEL1 };

/* Thread i fetches at (c[3i], c[3i+1], c[3i+2]) and writes up to 4 floats to out[4i..]. */
BIREN_KERNEL(fetch_k, (unsigned long long) t, (int) op, (const float *) c, (float *) out, (int) n) {
  int i = threadIdx.x;
  if (i >= n) return;
  float x = c[3 * i], y = c[3 * i + 1], z = c[3 * i + 2];
  float *o = out + 4 * i;
  switch (op) {
  case T1D: o[0] = birenTex1DFloat(t, x); break;
  case T2D: o[0] = birenTex2DFloat(t, x, y); break;
  case T3D: o[0] = birenTex3DFloat(t, x, y, z); break;
  case T2DL: o[0] = birenTex2DLayeredFloat(t, x, y, (int)z); break;
  case TFETCH: o[0] = birenTex1DfetchFloat(t, (int)x); break;
  case TFETCHI: o[0] = (float)birenTex1DfetchInt(t, (int)x); break;
  case T1DU: o[0] = (float)birenTex1DUchar(t, x); break;
  case TCUBE: o[0] = birenTexCubemapFloat(t, x, y, z); break;
  case TCUBEL1: o[0] = birenTexCubemapLayeredFloat(t, x, y, z, 1); break;
  case TCUBEL9: o[0] = birenTexCubemapLayeredFloat(t, x, y, z, 9); break;
  case T2D4: {
    float4 v = birenTex2DFloat4(t, x, y);
    o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
    break;
  }
  case T2DU4: {
    uchar4 v = birenTex2DUchar4(t, x, y);
    o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
    break;
  }
#ifdef __cplusplus
  case CXX2D: o[0] = tex2D<float>(t, x, y); break;
  case CXXCUBE: o[0] = texCubemap<float>(t, x, y, z); break;
  case CXXCUBEL1: o[0] = texCubemapLayered<float>(t, x, y, z, 1); break;
  case CXX2D4: {
    float4 v = tex2D<float4>(t, x, y);
    o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
    break;
  }
#endif
  default: break;
  }
}

#define MAXN 32
/* Runs n fetches of kind op through t; out gets 4 floats per fetch. */
static int run(birenTextureObject_t t, int op, const float *coords, int n, float *out) {
  float *dc, *dout;
  OK(birenMalloc((void **)&dc, sizeof(float) * 3 * MAXN));
  OK(birenMalloc((void **)&dout, sizeof(float) * 4 * MAXN));
  OK(birenMemcpy(dc, coords, sizeof(float) * 3 * (size_t)n, birenMemcpyHostToDevice));
  OK(birenMemset(dout, 0, sizeof(float) * 4 * MAXN));
  birenError_t e = BIREN_LAUNCH(fetch_k, birenDim3(1, 1, 1), birenDim3(MAXN, 1, 1), 0, NULL, t, op, dc, dout, n);
  if (e == BIREN_SUCCESS) e = birenDeviceSynchronize();
  if (e != BIREN_SUCCESS) return (int)e;
  OK(birenMemcpy(out, dout, sizeof(float) * 4 * (size_t)n, birenMemcpyDeviceToHost));
  OK(birenFree(dc));
  OK(birenFree(dout));
  return 0;
}

static birenTextureDesc tdesc(int addr, int filter, int read, int norm) {
  birenTextureDesc d;
  memset(&d, 0, sizeof d);
  d.addressMode[0] = d.addressMode[1] = d.addressMode[2] = (birenTextureAddressMode)addr;
  d.filterMode = (birenTextureFilterMode)filter;
  d.readMode = (birenTextureReadMode)read;
  d.normalizedCoords = norm;
  return d;
}

static birenResourceDesc of_array(birenArray_t a) {
  birenResourceDesc r;
  memset(&r, 0, sizeof r);
  r.resType = birenResourceTypeArray;
  r.res.array.array = a;
  return r;
}

/* A w x h float array holding T[y][x] = 10 y + x, and a texture on it. */
static birenArray_t grid_array(int w, int h) {
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t a = NULL;
  float v[64];
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) v[y * w + x] = (float)(10 * y + x);
  if (birenMallocArray(&a, &f, (size_t)w, (size_t)h, 0) != BIREN_SUCCESS) return NULL;
  if (birenMemcpy2DToArray(a, 0, 0, v, (size_t)w * 4, (size_t)w * 4, (size_t)h, birenMemcpyHostToDevice) != BIREN_SUCCESS) return NULL;
  return a;
}

static int point_sampling_and_address_modes(void) {
  birenArray_t a = grid_array(4, 3);
  EXPECT(a != NULL);
  birenResourceDesc r = of_array(a);
  birenTextureDesc d = tdesc(birenAddressModeClamp, birenFilterModePoint, birenReadModeElementType, 0);
  birenTextureObject_t t = 0;
  OK(birenCreateTextureObject(&t, &r, &d, NULL));
  EXPECT(t != 0);
  /* Texel (i, j) spans [i, i+1) x [j, j+1): floor, then clamp to the edge. */
  float c[] = {1.5f, 2.5f, 0, 0.99f, 0.0f, 0, -3.0f, 1.2f, 0, 100.0f, 100.0f, 0, 3.999f, 1.0f, 0};
  float o[4 * 5];
  EXPECT(0 == run(t, T2D, c, 5, o));
  EXPECT(o[0] == 21.0f && o[4] == 0.0f && o[8] == 10.0f && o[12] == 23.0f && o[16] == 13.0f);
  /* Border: outside reads the border colour. */
  birenTextureDesc b = tdesc(birenAddressModeBorder, birenFilterModePoint, birenReadModeElementType, 0);
  b.borderColor[0] = 7.0f;
  birenTextureObject_t tb;
  OK(birenCreateTextureObject(&tb, &r, &b, NULL));
  float cb[] = {4.0f, 0.5f, 0, -0.01f, 0.5f, 0, 3.5f, 2.5f, 0, 0.5f, 3.0f, 0};
  EXPECT(0 == run(tb, T2D, cb, 4, o));
  EXPECT(o[0] == 7.0f && o[4] == 7.0f && o[8] == 23.0f && o[12] == 7.0f);
  /* Normalized coordinates: wrap and mirror (x: 4 texels, y: 3). */
  birenTextureDesc wr = tdesc(birenAddressModeWrap, birenFilterModePoint, birenReadModeElementType, 1);
  birenTextureDesc mi = tdesc(birenAddressModeMirror, birenFilterModePoint, birenReadModeElementType, 1);
  birenTextureObject_t tw, tm;
  OK(birenCreateTextureObject(&tw, &r, &wr, NULL));
  OK(birenCreateTextureObject(&tm, &r, &mi, NULL));
  /* x 1.125 -> 0.125 -> texel 0; x -0.125 -> 0.875 -> texel 3; y 0.5 -> row 1. */
  float cw[] = {1.125f, 0.5f, 0, -0.125f, 0.5f, 0, 0.375f, 2.9f, 0};
  EXPECT(0 == run(tw, T2D, cw, 3, o));
  EXPECT(o[0] == 10.0f && o[4] == 13.0f && o[8] == 21.0f); /* 2.9 -> 0.9 -> row 2 */
  /* Mirror: 1.125 -> 0.875 -> texel 3; -0.125 -> 0.125 -> texel 0; 2.1 (y) -> 0.1 -> row 0. */
  float cm[] = {1.125f, 0.5f, 0, -0.125f, 0.5f, 0, 0.375f, 2.1f, 0};
  EXPECT(0 == run(tm, T2D, cm, 3, o));
  EXPECT(o[0] == 13.0f && o[4] == 10.0f && o[8] == 1.0f);
  /* Wrap without normalized coordinates clamps (CUDA). */
  birenTextureDesc wu = tdesc(birenAddressModeWrap, birenFilterModePoint, birenReadModeElementType, 0);
  birenTextureObject_t twu;
  OK(birenCreateTextureObject(&twu, &r, &wu, NULL));
  float cu[] = {5.0f, 0.5f, 0};
  EXPECT(0 == run(twu, T2D, cu, 1, o));
  EXPECT(o[0] == 3.0f);
  OK(birenDestroyTextureObject(t));
  OK(birenDestroyTextureObject(tb));
  OK(birenDestroyTextureObject(tw));
  OK(birenDestroyTextureObject(tm));
  OK(birenDestroyTextureObject(twu));
  OK(birenFreeArray(a));
  return 0;
}

static float lerp9(float a, float b, float x) { /* the 9-bit weight of frac(x - 0.5) */
  float xb = x - 0.5f, f = floorf(xb);
  float w = floorf((xb - f) * 256.0f + 0.5f) / 256.0f;
  return (1.0f - w) * a + w * b;
}

static int linear_filtering_with_9_bit_weights(void) {
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t a;
  OK(birenMallocArray(&a, &f, 3, 0, 0));
  float v[3] = {4.0f, 5.0f, 6.0f};
  OK(birenMemcpyToArray(a, 0, 0, v, sizeof v, birenMemcpyHostToDevice));
  birenResourceDesc r = of_array(a);
  birenTextureDesc d = tdesc(birenAddressModeClamp, birenFilterModeLinear, birenReadModeElementType, 0);
  birenTextureObject_t t;
  OK(birenCreateTextureObject(&t, &r, &d, NULL));
  /* 0.75: a = 0.25 -> 4.25; 1.0: a = 0.5 -> 4.5; 0.5 + 1/3: a = 85/256 (not 1/3) ->
   * 4 + 85/256; 0.5 + 0.999: a rounds to 256/256 -> 5; below the first centre: clamped, 4. */
  float c[] = {0.75f, 0, 0, 1.0f, 0, 0, 0.5f + 1.0f / 3.0f, 0, 0, 1.499f, 0, 0, 0.2f, 0, 0, 2.75f, 0, 0};
  float o[4 * 6];
  EXPECT(0 == run(t, T1D, c, 6, o));
  EXPECT(o[0] == 4.25f && o[4] == 4.5f);
  EXPECT(o[8] == 4.0f + 85.0f / 256.0f && o[8] != 4.0f + 1.0f / 3.0f);
  EXPECT(o[12] == 5.0f);
  EXPECT(o[16] == 4.0f);
  EXPECT(o[20] == 6.0f); /* past the last centre: both texels clamp to the last */
  EXPECT(o[8] == lerp9(4.0f, 5.0f, 0.5f + 1.0f / 3.0f));
  OK(birenDestroyTextureObject(t));
  /* Bilinear on a 2 x 2 texture [[0, 1], [10, 11]]. */
  birenArray_t g = grid_array(2, 2);
  birenResourceDesc rg = of_array(g);
  OK(birenCreateTextureObject(&t, &rg, &d, NULL));
  /* (1, 1): the four texels' mean, 5.5; (0.75, 1.25): a = .25, b = .75:
   * .75*.25*0 + .25*.25*1 + .75*.75*10 + .25*.75*11 = 7.75. */
  float c2[] = {1.0f, 1.0f, 0, 0.75f, 1.25f, 0, 0.0f, 0.0f, 0};
  EXPECT(0 == run(t, T2D, c2, 3, o));
  EXPECT(o[0] == 5.5f && o[4] == 7.75f && o[8] == 0.0f);
  /* Border with linear filtering: outside texels weigh in as the border colour (100). */
  birenTextureDesc bd = tdesc(birenAddressModeBorder, birenFilterModeLinear, birenReadModeElementType, 0);
  bd.borderColor[0] = 100.0f;
  birenTextureObject_t tb;
  OK(birenCreateTextureObject(&tb, &rg, &bd, NULL));
  float c3[] = {0.0f, 0.5f, 0}; /* a = .5 between border and T[0][0] = 0, row 0 only */
  EXPECT(0 == run(tb, T2D, c3, 1, o));
  EXPECT(o[0] == 50.0f);
  OK(birenDestroyTextureObject(t));
  OK(birenDestroyTextureObject(tb));
  OK(birenFreeArray(a));
  OK(birenFreeArray(g));
  return 0;
}

/* CUDA's bilinear rule on the host: 9-bit weights, indices clamped to the edge. */
static float bilinear_ref(const float *v, int w, int h, float x, float y) {
  float xb = x - 0.5f, yb = y - 0.5f, fx = floorf(xb), fy = floorf(yb);
  float a = floorf((xb - fx) * 256.0f + 0.5f) / 256.0f, b = floorf((yb - fy) * 256.0f + 0.5f) / 256.0f;
  int i = (int)fx, j = (int)fy;
#define CL(k, n) ((k) < 0 ? 0 : (k) > (n) - 1 ? (n) - 1 : (k))
  float v00 = v[CL(j, h) * w + CL(i, w)], v01 = v[CL(j, h) * w + CL(i + 1, w)];
  float v10 = v[CL(j + 1, h) * w + CL(i, w)], v11 = v[CL(j + 1, h) * w + CL(i + 1, w)];
#undef CL
  return (1 - a) * (1 - b) * v00 + a * (1 - b) * v01 + (1 - a) * b * v10 + a * b * v11;
}

/* The header's short paths (float texels, clamped, unnormalized: point and bilinear) give what
 * the same fetches with normalized coordinates give (exact for sizes that are powers of two; the
 * bilinear one through the general sampler, the point one through its own inline path) and what
 * the rule gives, inside, at the edges and beyond them; a linear texture wider than the short
 * path takes (8192) gives the rule's values too. */
static int short_paths_agree_with_the_general_sampler(void) {
  enum { W = 8, H = 4 };
  birenArray_t a = grid_array(W, H);
  EXPECT(a != NULL);
  float v[W * H];
  for (int i = 0; i < W * H; i++) v[i] = (float)(10 * (i / W) + i % W);
  birenResourceDesc r = of_array(a);
  birenTextureObject_t pf, pg, lf, lg;
  birenTextureDesc d = tdesc(birenAddressModeClamp, birenFilterModePoint, birenReadModeElementType, 0);
  OK(birenCreateTextureObject(&pf, &r, &d, NULL));
  d.normalizedCoords = 1;
  OK(birenCreateTextureObject(&pg, &r, &d, NULL));
  d = tdesc(birenAddressModeClamp, birenFilterModeLinear, birenReadModeElementType, 0);
  OK(birenCreateTextureObject(&lf, &r, &d, NULL));
  d.normalizedCoords = 1;
  OK(birenCreateTextureObject(&lg, &r, &d, NULL));
  for (int round = 0; round < 4; round++) {
    float c[3 * MAXN], cn[3 * MAXN], o1[4 * MAXN], o2[4 * MAXN];
    for (int k = 0; k < MAXN; k++) {
      int n = round * MAXN + k;
      c[3 * k] = -1.3f + 0.0791f * (float)n; /* -1.3 .. 8.8 */
      c[3 * k + 1] = -1.1f + 0.0503f * (float)((n * 7) % 128); /* -1.1 .. 5.3 */
      c[3 * k + 2] = 0;
      cn[3 * k] = c[3 * k] / W;
      cn[3 * k + 1] = c[3 * k + 1] / H;
      cn[3 * k + 2] = 0;
    }
    EXPECT(0 == run(pf, T2D, c, MAXN, o1));
    EXPECT(0 == run(pg, T2D, cn, MAXN, o2));
    for (int k = 0; k < MAXN; k++) {
      float x = c[3 * k], y = c[3 * k + 1];
      int i = x < 0 ? 0 : x >= W ? W - 1 : (int)x, j = y < 0 ? 0 : y >= H ? H - 1 : (int)y;
      EXPECT(o1[4 * k] == o2[4 * k] && o1[4 * k] == v[j * W + i]);
    }
    EXPECT(0 == run(lf, T2D, c, MAXN, o1));
    EXPECT(0 == run(lg, T2D, cn, MAXN, o2));
    for (int k = 0; k < MAXN; k++) {
      float want = bilinear_ref(v, W, H, c[3 * k], c[3 * k + 1]);
      EXPECT(fabsf(o1[4 * k] - o2[4 * k]) < 1e-4f && fabsf(o1[4 * k] - want) < 1e-4f);
    }
  }
  OK(birenDestroyTextureObject(pf));
  OK(birenDestroyTextureObject(pg));
  OK(birenDestroyTextureObject(lf));
  OK(birenDestroyTextureObject(lg));
  OK(birenFreeArray(a));
  /* 9000 x 1: the general sampler's bilinear, near both ends. */
  enum { WIDE = 9000 };
  static float wv[WIDE];
  for (int i = 0; i < WIDE; i++) wv[i] = (float)(i % 101);
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t wa;
  OK(birenMallocArray(&wa, &f, WIDE, 1, 0));
  OK(birenMemcpy2DToArray(wa, 0, 0, wv, sizeof wv, sizeof wv, 1, birenMemcpyHostToDevice));
  r = of_array(wa);
  d = tdesc(birenAddressModeClamp, birenFilterModeLinear, birenReadModeElementType, 0);
  OK(birenCreateTextureObject(&lf, &r, &d, NULL));
  float c[] = {0.3f, 0.5f, 0, 100.7f, 0.5f, 0, 8998.75f, 0.5f, 0, 8999.9f, 0.5f, 0, 9100.0f, 0.5f, 0};
  float o[4 * 5];
  EXPECT(0 == run(lf, T2D, c, 5, o));
  for (int k = 0; k < 5; k++) EXPECT(fabsf(o[4 * k] - bilinear_ref(wv, WIDE, 1, c[3 * k], c[3 * k + 1])) < 1e-4f);
  OK(birenDestroyTextureObject(lf));
  OK(birenFreeArray(wa));
  return 0;
}

/* Thread i: the inline fetch and the general sampler (the header's birenTexSlowF_) at
 * (c[2i], c[2i+1]), in 2-D and in 1-D; out[4i..4i+3]. */
BIREN_KERNEL(agree_k, (unsigned long long) t, (const float *) c, (float *) out, (int) n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = c[2 * i], y = c[2 * i + 1];
  out[4 * i] = birenTex2DFloat(t, x, y);
  birenTexSlowF_(t, 2, x, y, 0.0f, -1, 1, &out[4 * i + 1]);
  out[4 * i + 2] = birenTex1DFloat(t, x);
  birenTexSlowF_(t, 1, x, 0.0f, 0.0f, -1, 1, &out[4 * i + 3]);
}

/* Coordinates for the comparison below: scale times every texel boundary k/n of n texels
 * (k = -2n .. 3n) and the floats either side of it, a sweep over [-3, 3), zeros, tiny and
 * huge values, infinities and NaN. Returns how many (x, y) pairs (at most max). */
static int edge_coords(float *c, int max, int nx, int ny, float scale) {
  int n = 0;
  for (int k = -2 * nx; k <= 3 * nx && n + 3 <= max; k++) {
    float b = (float)k / (float)nx * scale;
    float v[3] = {nextafterf(b, -INFINITY), b, nextafterf(b, INFINITY)};
    for (int j = 0; j < 3; j++, n++) {
      c[2 * n] = v[j];
      c[2 * n + 1] = (float)((k * 5 + j) % (3 * ny) - ny) / (float)ny * scale; /* -1 .. 2 */
    }
  }
  for (int k = -2 * ny; k <= 3 * ny && n + 3 <= max; k++) {
    float b = (float)k / (float)ny * scale;
    float v[3] = {nextafterf(b, -INFINITY), b, nextafterf(b, INFINITY)};
    for (int j = 0; j < 3; j++, n++) {
      c[2 * n] = (float)((k * 3 + j) % 11) * 0.173f * scale;
      c[2 * n + 1] = v[j];
    }
  }
  for (int k = 0; k < 600 && n < max; k++, n++) {
    c[2 * n] = (-3.0f + 0.01f * (float)k) * scale;
    c[2 * n + 1] = (2.9f - 0.0097f * (float)k) * scale;
  }
  const float odd[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-10f, -1e-10f, 0.99999994f, 1.0f, 1.0000001f,
                       -0.99999994f, 1e7f, -1e7f, 8388608.5f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN};
  int m = (int)(sizeof odd / sizeof odd[0]);
  for (int i = 0; i < m && n < max; i++)
    for (int j = 0; j < m && n < max; j++, n++) {
      c[2 * n] = odd[i];
      c[2 * n + 1] = odd[j];
    }
  return n;
}

/* The inline point paths give the general sampler's texel to the bit, for normalized
 * coordinates under every mix of wrap, mirror and clamp and for unnormalized ones, on sizes
 * that are powers of two and that are not (their texel boundaries k/n are not floats). A float4
 * texture fetched as float reads each texel's first channel. */
static int point_paths_agree_with_the_general_sampler_bit_for_bit(void) {
  enum { MAXC = 2048 };
  static float c[2 * MAXC], o[4 * MAXC];
  float *dc, *dout;
  OK(birenMalloc((void **)&dc, sizeof c));
  OK(birenMalloc((void **)&dout, sizeof o));
  const int sizes[][2] = {{7, 5}, {8, 4}, {1, 3}};
  const int modes[][2] = {{birenAddressModeWrap, birenAddressModeWrap},
                          {birenAddressModeMirror, birenAddressModeMirror},
                          {birenAddressModeClamp, birenAddressModeClamp},
                          {birenAddressModeWrap, birenAddressModeMirror},
                          {birenAddressModeMirror, birenAddressModeClamp},
                          {birenAddressModeClamp, birenAddressModeWrap}};
  for (int sz = 0; sz < 3; sz++) {
    int w = sizes[sz][0], h = sizes[sz][1];
    birenArray_t a = grid_array(w, h);
    EXPECT(a != NULL);
    birenResourceDesc r = of_array(a);
    for (int m = 0; m <= 6; m++) {
      int norm = m < 6; /* m == 6: unnormalized coordinates, clamped */
      birenTextureDesc d = tdesc(birenAddressModeClamp, birenFilterModePoint, birenReadModeElementType, norm);
      if (norm) {
        d.addressMode[0] = (birenTextureAddressMode)modes[m][0];
        d.addressMode[1] = (birenTextureAddressMode)modes[m][1];
      }
      birenTextureObject_t t;
      OK(birenCreateTextureObject(&t, &r, &d, NULL));
      EXPECT(birenTexTable[t & BIREN_TEX_TABLE_MASK_].fast == (norm ? 3 : 1)); /* the inline path */
      int n = edge_coords(c, MAXC, w, h, norm ? 1.0f : (float)w);
      OK(birenMemcpy(dc, c, sizeof(float) * 2 * (size_t)n, birenMemcpyHostToDevice));
      OK(BIREN_LAUNCH(agree_k, birenDim3((unsigned)(n + 255) / 256, 1, 1), birenDim3(256, 1, 1), 0, NULL, t, dc, dout, n));
      OK(birenDeviceSynchronize());
      OK(birenMemcpy(o, dout, sizeof(float) * 4 * (size_t)n, birenMemcpyDeviceToHost));
      int bad = 0;
      for (int i = 0; i < n; i++)
        if (memcmp(&o[4 * i], &o[4 * i + 1], sizeof(float)) != 0 || memcmp(&o[4 * i + 2], &o[4 * i + 3], sizeof(float)) != 0) {
          if (bad++ < 3)
            fprintf(stderr, "  %dx%d modes %d: (%a, %a): inline %g %g, general %g %g\n", w, h, m, (double)c[2 * i],
                    (double)c[2 * i + 1], (double)o[4 * i], (double)o[4 * i + 2], (double)o[4 * i + 1], (double)o[4 * i + 3]);
        }
      EXPECT(bad == 0);
      OK(birenDestroyTextureObject(t));
    }
    OK(birenFreeArray(a));
  }
  /* float4 texels: texel i's x at 16 i bytes, whatever the path. */
  birenChannelFormatDesc f4 = birenCreateChannelDesc(32, 32, 32, 32, birenChannelFormatKindFloat);
  birenArray_t a4;
  float v4[4 * 4 * 2];
  for (int i = 0; i < 4 * 4 * 2; i++) v4[i] = (float)i;
  OK(birenMallocArray(&a4, &f4, 4, 2, 0));
  OK(birenMemcpy2DToArray(a4, 0, 0, v4, 64, 64, 2, birenMemcpyHostToDevice));
  birenResourceDesc r4 = of_array(a4);
  birenTextureDesc d4 = tdesc(birenAddressModeClamp, birenFilterModePoint, birenReadModeElementType, 0);
  birenTextureObject_t t4;
  OK(birenCreateTextureObject(&t4, &r4, &d4, NULL));
  float c4[] = {2.5f, 1.5f, 0, 0.5f, 0.5f, 0};
  float o4[4 * 2];
  EXPECT(0 == run(t4, T2D, c4, 2, o4));
  EXPECT(o4[0] == 24.0f && o4[4] == 0.0f);
  OK(birenDestroyTextureObject(t4));
  OK(birenFreeArray(a4));
  OK(birenFree(dc));
  OK(birenFree(dout));
  return 0;
}

static int three_d_layered_and_pitch2d(void) {
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t a, l;
  OK(birenMalloc3DArray(&a, &f, make_birenExtent(2, 2, 2), 0));
  OK(birenMalloc3DArray(&l, &f, make_birenExtent(2, 2, 3), birenArrayLayered));
  float v[8], lv[12];
  for (int i = 0; i < 8; i++) v[i] = (float)i; /* x + 2y + 4z */
  for (int i = 0; i < 12; i++) lv[i] = (float)(100 * (i / 4) + i % 4);
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_birenPitchedPtr(v, 8, 8, 2);
  p.dstArray = a;
  p.extent = make_birenExtent(2, 2, 2);
  p.kind = birenMemcpyHostToDevice;
  OK(birenMemcpy3D(&p));
  p.srcPtr = make_birenPitchedPtr(lv, 8, 8, 2);
  p.dstArray = l;
  p.extent = make_birenExtent(2, 2, 3);
  OK(birenMemcpy3D(&p));
  birenResourceDesc r = of_array(a), rl = of_array(l);
  birenTextureDesc pt = tdesc(birenAddressModeClamp, birenFilterModePoint, birenReadModeElementType, 0);
  birenTextureDesc ln = tdesc(birenAddressModeClamp, birenFilterModeLinear, birenReadModeElementType, 0);
  birenTextureObject_t tp, tl, tlay;
  OK(birenCreateTextureObject(&tp, &r, &pt, NULL));
  OK(birenCreateTextureObject(&tl, &r, &ln, NULL));
  OK(birenCreateTextureObject(&tlay, &rl, &pt, NULL));
  float c[] = {1.5f, 0.5f, 1.5f, 1.0f, 1.0f, 1.0f};
  float o[8];
  EXPECT(0 == run(tp, T3D, c, 1, o));
  EXPECT(o[0] == 5.0f);
  EXPECT(0 == run(tl, T3D, c + 3, 1, o));
  EXPECT(o[0] == 3.5f); /* the mean of 0..7 */
  float cl[] = {1.5f, 1.5f, 2.0f, 0.5f, 0.5f, 9.0f}; /* layer 9 clamps to 2 */
  EXPECT(0 == run(tlay, T2DL, cl, 2, o));
  EXPECT(o[0] == 203.0f && o[4] == 200.0f);
  OK(birenDestroyTextureObject(tp));
  OK(birenDestroyTextureObject(tl));
  OK(birenDestroyTextureObject(tlay));
  OK(birenFreeArray(a));
  OK(birenFreeArray(l));
  /* Pitched linear memory. */
  float *d;
  size_t pitch;
  OK(birenMallocPitch((void **)&d, &pitch, 3 * sizeof(float), 2));
  float rows[2][3] = {{1, 2, 3}, {4, 5, 6}};
  OK(birenMemcpy2D(d, pitch, rows, sizeof rows[0], sizeof rows[0], 2, birenMemcpyHostToDevice));
  birenResourceDesc rp;
  memset(&rp, 0, sizeof rp);
  rp.resType = birenResourceTypePitch2D;
  rp.res.pitch2D.devPtr = d;
  rp.res.pitch2D.desc = f;
  rp.res.pitch2D.width = 3;
  rp.res.pitch2D.height = 2;
  rp.res.pitch2D.pitchInBytes = pitch;
  birenTextureObject_t t2;
  OK(birenCreateTextureObject(&t2, &rp, &pt, NULL));
  float cp[] = {2.5f, 1.5f, 0};
  EXPECT(0 == run(t2, T2D, cp, 1, o));
  EXPECT(o[0] == 6.0f);
  OK(birenDestroyTextureObject(t2));
  OK(birenFree(d));
  return 0;
}

/* A cube map of 2 x 2 float faces (cubes: 1, or 2 layered), layer l holding 100 l + 10 y + x. */
static birenArray_t cube_array(int cubes) {
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t a = NULL;
  float v[48];
  for (int i = 0; i < 24 * cubes; i++) v[i] = (float)(100 * (i / 4) + 10 * (i % 4 / 2) + i % 2);
  unsigned flags = birenArrayCubemap | (cubes > 1 ? birenArrayLayered : 0);
  if (birenMalloc3DArray(&a, &f, make_birenExtent(2, 2, (size_t)(6 * cubes)), flags) != BIREN_SUCCESS) return NULL;
  birenMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_birenPitchedPtr(v, 8, 2, 2);
  p.dstArray = a;
  p.extent = make_birenExtent(2, 2, (size_t)(6 * cubes));
  p.kind = birenMemcpyHostToDevice;
  if (birenMemcpy3D(&p) != BIREN_SUCCESS) return NULL;
  return a;
}

/* Cube maps: the face of the largest component (ties x, y, z), the face's coordinates
 * ((s/|m| + 1) / 2, (t/|m| + 1) / 2) from CUDA's table, filtering clamped inside the face. */
static int cube_maps(void) {
  birenArray_t a = cube_array(1);
  EXPECT(a != NULL);
  birenChannelFormatDesc got;
  birenExtent e;
  unsigned flags;
  OK(birenArrayGetInfo(&got, &e, &flags, a));
  EXPECT(e.width == 2 && e.height == 2 && e.depth == 6 && flags == birenArrayCubemap);
  birenResourceDesc r = of_array(a);
  /* Wrap and unnormalized coordinates: neither applies to cube map fetches. */
  birenTextureDesc pt = tdesc(birenAddressModeWrap, birenFilterModePoint, birenReadModeElementType, 0);
  birenTextureDesc ln = tdesc(birenAddressModeWrap, birenFilterModeLinear, birenReadModeElementType, 1);
  birenTextureObject_t tp, tl;
  OK(birenCreateTextureObject(&tp, &r, &pt, NULL));
  OK(birenCreateTextureObject(&tl, &r, &ln, NULL));
  /* Each direction's face, s, t worked out by hand; u = (s/|m| + 1), v = (t/|m| + 1) in texels
   * of a 2-texel face. */
  float c[] = {
      1.0f, 0.5f, -0.5f,   /* +x: s = -z = 0.5, t = -y = -0.5: u 1.5, v 0.5 -> 1 */
      -1.0f, -0.5f, -0.5f, /* -x: s = z = -0.5, t = -y = 0.5: u 0.5, v 1.5 -> 110 */
      0.5f, 2.0f, 1.0f,    /* +y: s = x = 0.5, t = z = 1 (m 2): u 1.25, v 1.5 -> 211 */
      -0.5f, -1.0f, 0.5f,  /* -y: s = x = -0.5, t = -z = -0.5: u 0.5, v 0.5 -> 300 */
      0.5f, 0.5f, 1.0f,    /* +z: s = x = 0.5, t = -y = -0.5: u 1.5, v 0.5 -> 401 */
      0.5f, -0.5f, -1.0f,  /* -z: s = -x = -0.5, t = -y = 0.5: u 0.5, v 1.5 -> 510 */
      1.0f, 1.0f, 0.0f,    /* tie x = y: +x; s = 0, t = -1: u 1, v 0 -> 1 */
      1.0f, -1.0f, -1.0f,  /* tie of all three: +x; s = 1, t = 1: u 2, v 2, clamped -> 11 */
  };
  float want[] = {1, 110, 211, 300, 401, 510, 1, 11};
  float o[4 * 8];
  EXPECT(0 == run(tp, TCUBE, c, 8, o));
  for (int i = 0; i < 8; i++) EXPECT(o[4 * i] == want[i]);
  /* Linear: (1, 0, 0) is the face's centre, the mean of its four texels (0 1 10 11); at the
   * corner (1, -1, -1) the texels past the edge are the edge's (wrap notwithstanding). */
  float cl[] = {1.0f, 0.0f, 0.0f, 1.0f, -1.0f, -1.0f, 4.0f, 0.0f, 0.0f};
  EXPECT(0 == run(tl, TCUBE, cl, 3, o));
  EXPECT(o[0] == 5.5f && o[4] == 11.0f && o[8] == 5.5f);
  OK(birenDestroyTextureObject(tp));
  OK(birenDestroyTextureObject(tl));
  OK(birenFreeArray(a));
  /* Layered: cube 1's faces are layers 6..11; a cube past the last clamps to it. */
  a = cube_array(2);
  EXPECT(a != NULL);
  r = of_array(a);
  OK(birenCreateTextureObject(&tp, &r, &pt, NULL));
  EXPECT(0 == run(tp, TCUBEL1, c + 6, 2, o));
  EXPECT(o[0] == 811.0f && o[4] == 900.0f);
  EXPECT(0 == run(tp, TCUBEL9, c + 15, 1, o));
  EXPECT(o[0] == 1110.0f);
  OK(birenDestroyTextureObject(tp));
  OK(birenFreeArray(a));
  return 0;
}

/* Cube map arrays' extents and the seamless filtering this runtime does not offer. */
static int cube_map_errors(void) {
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t a = (birenArray_t)(uintptr_t)0x1234;
  EXPECT_FAIL(birenMalloc3DArray(&a, &f, make_birenExtent(4, 3, 6), birenArrayCubemap), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMalloc3DArray(&a, &f, make_birenExtent(4, 4, 12), birenArrayCubemap), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMalloc3DArray(&a, &f, make_birenExtent(4, 4, 0), birenArrayCubemap), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMalloc3DArray(&a, &f, make_birenExtent(4, 4, 7), birenArrayCubemap | birenArrayLayered), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMalloc3DArray(&a, &f, make_birenExtent(32769, 32769, 6), birenArrayCubemap), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenMallocArray(&a, &f, 4, 4, birenArrayCubemap), BIREN_ERROR_INVALID_VALUE);
  EXPECT(a == (birenArray_t)(uintptr_t)0x1234); /* nothing written */
  a = cube_array(1);
  EXPECT(a != NULL);
  birenResourceDesc r = of_array(a);
  birenTextureDesc d = tdesc(birenAddressModeClamp, birenFilterModeLinear, birenReadModeElementType, 1);
  d.seamlessCubemap = 1;
  birenTextureObject_t t = 77;
  EXPECT_FAIL(birenCreateTextureObject(&t, &r, &d, NULL), BIREN_ERROR_NOT_SUPPORTED);
  EXPECT(t == 77);
  OK(birenFreeArray(a));
  /* On another resource the flag means nothing. */
  a = grid_array(4, 3);
  r = of_array(a);
  OK(birenCreateTextureObject(&t, &r, &d, NULL));
  OK(birenDestroyTextureObject(t));
  OK(birenFreeArray(a));
  return 0;
}

static int read_modes_and_tex1dfetch(void) {
  /* Normalized reads: 8-bit unsigned / 255, signed / 127 at least -1, 16-bit / 65535. */
  birenChannelFormatDesc u8 = birenCreateChannelDesc(8, 0, 0, 0, birenChannelFormatKindUnsigned);
  birenChannelFormatDesc s8 = birenCreateChannelDesc(8, 0, 0, 0, birenChannelFormatKindSigned);
  birenChannelFormatDesc s16 = birenCreateChannelDesc(16, 0, 0, 0, birenChannelFormatKindSigned);
  birenArray_t au, as, a16;
  OK(birenMallocArray(&au, &u8, 3, 0, 0));
  OK(birenMallocArray(&as, &s8, 3, 0, 0));
  OK(birenMallocArray(&a16, &s16, 3, 0, 0));
  unsigned char hu[3] = {255, 128, 0};
  signed char hs[3] = {-128, 127, -64};
  short h16[3] = {-32768, 32767, 1000};
  OK(birenMemcpyToArray(au, 0, 0, hu, 3, birenMemcpyHostToDevice));
  OK(birenMemcpyToArray(as, 0, 0, hs, 3, birenMemcpyHostToDevice));
  OK(birenMemcpyToArray(a16, 0, 0, h16, 6, birenMemcpyHostToDevice));
  birenTextureDesc n = tdesc(birenAddressModeClamp, birenFilterModePoint, birenReadModeNormalizedFloat, 0);
  birenResourceDesc r1 = of_array(au), r2 = of_array(as), r3 = of_array(a16);
  birenTextureObject_t tu, ts, t16, tue;
  OK(birenCreateTextureObject(&tu, &r1, &n, NULL));
  OK(birenCreateTextureObject(&ts, &r2, &n, NULL));
  OK(birenCreateTextureObject(&t16, &r3, &n, NULL));
  float c[] = {0.5f, 0, 0, 1.5f, 0, 0, 2.5f, 0, 0};
  float o[16];
  EXPECT(0 == run(tu, T1D, c, 3, o));
  EXPECT(o[0] == 1.0f && o[4] == 128.0f / 255.0f && o[8] == 0.0f);
  EXPECT(0 == run(ts, T1D, c, 3, o));
  EXPECT(o[0] == -1.0f && o[4] == 1.0f && o[8] == -64.0f / 127.0f);
  EXPECT(0 == run(t16, T1D, c, 3, o));
  EXPECT(o[0] == -1.0f && o[4] == 1.0f && o[8] == 1000.0f / 32767.0f);
  /* Element type: the integer itself. */
  birenTextureDesc e = tdesc(birenAddressModeClamp, birenFilterModePoint, birenReadModeElementType, 0);
  OK(birenCreateTextureObject(&tue, &r1, &e, NULL));
  EXPECT(0 == run(tue, T1DU, c, 3, o));
  EXPECT(o[0] == 255.0f && o[4] == 128.0f && o[8] == 0.0f);
  /* uchar4 texels: element type and normalized float4. */
  birenChannelFormatDesc c4 = birenCreateChannelDesc(8, 8, 8, 8, birenChannelFormatKindUnsigned);
  birenArray_t a4;
  OK(birenMallocArray(&a4, &c4, 2, 1, 0));
  unsigned char px[8] = {10, 20, 30, 255, 51, 102, 153, 204};
  OK(birenMemcpy2DToArray(a4, 0, 0, px, 8, 8, 1, birenMemcpyHostToDevice));
  birenResourceDesc r4 = of_array(a4);
  birenTextureObject_t t4e, t4n;
  OK(birenCreateTextureObject(&t4e, &r4, &e, NULL));
  OK(birenCreateTextureObject(&t4n, &r4, &n, NULL));
  float c4c[] = {1.5f, 0.5f, 0};
  EXPECT(0 == run(t4e, T2DU4, c4c, 1, o));
  EXPECT(o[0] == 51.0f && o[1] == 102.0f && o[2] == 153.0f && o[3] == 204.0f);
  EXPECT(0 == run(t4n, T2D4, c4c, 1, o));
  EXPECT(o[0] == 51.0f / 255.0f && o[1] == 102.0f / 255.0f && o[3] == 204.0f / 255.0f);
  /* tex1Dfetch on linear memory: texel i; out of range 0 whatever the address mode. */
  float *d;
  OK(birenMalloc((void **)&d, 8 * sizeof(float)));
  float lin[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  OK(birenMemcpy(d, lin, sizeof lin, birenMemcpyHostToDevice));
  birenResourceDesc rl;
  memset(&rl, 0, sizeof rl);
  rl.resType = birenResourceTypeLinear;
  rl.res.linear.devPtr = d;
  rl.res.linear.desc = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  rl.res.linear.sizeInBytes = sizeof lin;
  birenTextureObject_t tl;
  OK(birenCreateTextureObject(&tl, &rl, &e, NULL));
  float cf[] = {3, 0, 0, 7, 0, 0, 8, 0, 0, -1, 0, 0};
  EXPECT(0 == run(tl, TFETCH, cf, 4, o));
  EXPECT(o[0] == 3.0f && o[4] == 7.0f && o[8] == 0.0f && o[12] == 0.0f);
  birenTextureObject_t all[] = {tu, ts, t16, tue, t4e, t4n, tl};
  for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) OK(birenDestroyTextureObject(all[i]));
  OK(birenFree(d));
  OK(birenFreeArray(au));
  OK(birenFreeArray(as));
  OK(birenFreeArray(a16));
  OK(birenFreeArray(a4));
  return 0;
}

static int create_errors_and_queries(void) {
  birenArray_t a = grid_array(4, 3);
  birenResourceDesc r = of_array(a);
  birenTextureDesc d = tdesc(birenAddressModeBorder, birenFilterModeLinear, birenReadModeElementType, 1);
  d.borderColor[2] = 0.5f;
  birenTextureObject_t t = 12345;
  EXPECT_FAIL(birenCreateTextureObject(NULL, &r, &d, NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenCreateTextureObject(&t, NULL, &d, NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenCreateTextureObject(&t, &r, NULL, NULL), BIREN_ERROR_INVALID_VALUE);
  birenResourceViewDesc view;
  memset(&view, 0, sizeof view);
  EXPECT_FAIL(birenCreateTextureObject(&t, &r, &d, &view), BIREN_ERROR_NOT_SUPPORTED);
  birenTextureDesc bad = d;
  bad.addressMode[1] = (birenTextureAddressMode)4;
  EXPECT_FAIL(birenCreateTextureObject(&t, &r, &bad, NULL), BIREN_ERROR_INVALID_VALUE);
  bad = d;
  bad.sRGB = 1;
  EXPECT_FAIL(birenCreateTextureObject(&t, &r, &bad, NULL), BIREN_ERROR_NOT_SUPPORTED);
  bad = d;
  bad.readMode = birenReadModeNormalizedFloat; /* of 32-bit floats */
  EXPECT_FAIL(birenCreateTextureObject(&t, &r, &bad, NULL), BIREN_ERROR_INVALID_VALUE);
  birenResourceDesc rb = r;
  rb.resType = (birenResourceType)7;
  EXPECT_FAIL(birenCreateTextureObject(&t, &rb, &d, NULL), BIREN_ERROR_INVALID_VALUE);
  rb.resType = birenResourceTypeMipmappedArray;
  EXPECT_FAIL(birenCreateTextureObject(&t, &rb, &d, NULL), BIREN_ERROR_NOT_SUPPORTED);
  rb = of_array((birenArray_t)(uintptr_t)0x99);
  EXPECT_FAIL(birenCreateTextureObject(&t, &rb, &d, NULL), BIREN_ERROR_INVALID_HANDLE);
  /* Linear filtering of element-type integers: refused. */
  birenChannelFormatDesc i32 = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindSigned);
  birenArray_t ai;
  OK(birenMallocArray(&ai, &i32, 4, 0, 0));
  birenResourceDesc ri = of_array(ai);
  EXPECT_FAIL(birenCreateTextureObject(&t, &ri, &d, NULL), BIREN_ERROR_INVALID_VALUE);
  /* Linear memory outside its allocation, pitch2D rows wider than the pitch. */
  float *dev;
  OK(birenMalloc((void **)&dev, 64));
  birenResourceDesc rl;
  memset(&rl, 0, sizeof rl);
  rl.resType = birenResourceTypeLinear;
  rl.res.linear.devPtr = dev;
  rl.res.linear.desc = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  rl.res.linear.sizeInBytes = 65;
  EXPECT_FAIL(birenCreateTextureObject(&t, &rl, &d, NULL), BIREN_ERROR_INVALID_VALUE);
  rl.res.linear.desc.y = 16;
  rl.res.linear.sizeInBytes = 64;
  EXPECT_FAIL(birenCreateTextureObject(&t, &rl, &d, NULL), BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR);
  birenResourceDesc rp;
  memset(&rp, 0, sizeof rp);
  rp.resType = birenResourceTypePitch2D;
  rp.res.pitch2D.devPtr = dev;
  rp.res.pitch2D.desc = rl.res.linear.desc;
  rp.res.pitch2D.desc.y = 0;
  rp.res.pitch2D.width = 5;
  rp.res.pitch2D.height = 2;
  rp.res.pitch2D.pitchInBytes = 16;
  EXPECT_FAIL(birenCreateTextureObject(&t, &rp, &d, NULL), BIREN_ERROR_INVALID_VALUE);
  EXPECT(t == 12345); /* nothing written */
  /* Queries give back what was given. */
  OK(birenCreateTextureObject(&t, &r, &d, NULL));
  birenResourceDesc gr;
  birenTextureDesc gd;
  OK(birenGetTextureObjectResourceDesc(&gr, t));
  EXPECT(gr.resType == birenResourceTypeArray && gr.res.array.array == a);
  OK(birenGetTextureObjectTextureDesc(&gd, t));
  EXPECT(memcmp(&gd, &d, sizeof d) == 0);
  EXPECT_FAIL(birenGetTextureObjectTextureDesc(NULL, t), BIREN_ERROR_INVALID_VALUE);
  OK(birenDestroyTextureObject(t));
  EXPECT_FAIL(birenDestroyTextureObject(t), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_FAIL(birenGetTextureObjectResourceDesc(&gr, t), BIREN_ERROR_INVALID_HANDLE);
  EXPECT_FAIL(birenDestroyTextureObject(0xdeadbeefULL), BIREN_ERROR_INVALID_HANDLE);
  OK(birenDestroyTextureObject(0));
  /* Surfaces need birenArraySurfaceLoadStore and an array. */
  birenSurfaceObject_t s = 777;
  EXPECT_FAIL(birenCreateSurfaceObject(&s, &r), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenCreateSurfaceObject(&s, &rl), BIREN_ERROR_INVALID_VALUE);
  EXPECT_FAIL(birenCreateSurfaceObject(NULL, &r), BIREN_ERROR_INVALID_VALUE);
  EXPECT(s == 777);
  OK(birenFree(dev));
  OK(birenFreeArray(ai));
  OK(birenFreeArray(a));
  return 0;
}

/* Writes v + 1000 y at (x, y) through surface s, reads it back through (x, y) into out. */
BIREN_KERNEL(surf_k, (unsigned long long) s, (int) w, (int) mode, (float *) out) {
  int x = threadIdx.x, y = blockIdx.x;
  if (mode == 0) {
    birenSurf2DwriteFloat((float)(x + 1000 * y), s, x * 4, y);
    out[y * w + x] = birenSurf2DreadFloat(s, x * 4, y);
  } else if (mode == 1) {
    out[y * w + x] = birenSurf2DreadFloat(s, (x + 3) * 4, y, birenBoundaryModeZero);
  } else if (mode == 2) {
    out[y * w + x] = birenSurf2DreadFloat(s, (x + 3) * 4, y + 5, birenBoundaryModeClamp);
  } else {
    birenSurf2DwriteFloat(1.0f, s, (x + 3) * 4, y); /* trap */
  }
}

static int surfaces_and_boundary_modes(void) {
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t a;
  OK(birenMallocArray(&a, &f, 4, 2, birenArraySurfaceLoadStore));
  birenResourceDesc r = of_array(a);
  birenSurfaceObject_t s;
  OK(birenCreateSurfaceObject(&s, &r));
  float *d;
  OK(birenMalloc((void **)&d, 8 * sizeof(float)));
  OK(BIREN_LAUNCH(surf_k, birenDim3(2, 1, 1), birenDim3(4, 1, 1), 0, NULL, s, 4, 0, d));
  float o[8], back[8];
  OK(birenMemcpy(o, d, sizeof o, birenMemcpyDeviceToHost));
  OK(birenMemcpy2DFromArray(back, 16, a, 0, 0, 16, 2, birenMemcpyDeviceToHost));
  for (int i = 0; i < 8; i++) EXPECT(o[i] == (float)(i % 4 + 1000 * (i / 4)) && back[i] == o[i]);
  /* Zero: x + 3 past the edge reads 0; clamp: reads the edge (x 3, row 1). */
  OK(BIREN_LAUNCH(surf_k, birenDim3(2, 1, 1), birenDim3(4, 1, 1), 0, NULL, s, 4, 1, d));
  OK(birenMemcpy(o, d, sizeof o, birenMemcpyDeviceToHost));
  EXPECT(o[0] == 3.0f && o[1] == 0.0f && o[4] == 1003.0f && o[7] == 0.0f);
  OK(BIREN_LAUNCH(surf_k, birenDim3(2, 1, 1), birenDim3(4, 1, 1), 0, NULL, s, 4, 2, d));
  OK(birenMemcpy(o, d, sizeof o, birenMemcpyDeviceToHost));
  for (int i = 0; i < 8; i++) EXPECT(o[i] == 1003.0f);
  birenResourceDesc gr;
  OK(birenGetSurfaceObjectResourceDesc(&gr, s));
  EXPECT(gr.res.array.array == a);
  OK(birenDestroySurfaceObject(s));
  EXPECT_FAIL(birenDestroySurfaceObject(s), BIREN_ERROR_INVALID_HANDLE);
  OK(birenFree(d));
  OK(birenFreeArray(a));
  return 0;
}

#ifdef __cplusplus
BIREN_KERNEL(cxx_surf_k, (unsigned long long) s, (float *) out) {
  int x = threadIdx.x;
  surf2Dwrite<float>((float)x * 2.0f, s, x * 4, 1);
  surf2Dwrite(make_float1(0.0f).x, s, x * 4, 0);
  out[x] = surf2Dread<float>(s, x * 4, 1) + surf2Dread<float>(s, (x + 10) * 4, 1, birenBoundaryModeZero);
}

/* CUDA's templates: birenCreateChannelDesc<T>(), default arguments, tex2D<T>, surf2Dwrite. */
static int cxx_templates(void) {
  birenChannelFormatDesc f = birenCreateChannelDesc<float>();
  EXPECT(f.x == 32 && f.y == 0 && f.f == birenChannelFormatKindFloat);
  birenChannelFormatDesc u4 = birenCreateChannelDesc<uchar4>();
  EXPECT(u4.x == 8 && u4.w == 8 && u4.f == birenChannelFormatKindUnsigned);
  birenArray_t a;
  OK(birenMallocArray(&a, &f, 4, 3)); /* flags default to 0 */
  float v[12];
  for (int i = 0; i < 12; i++) v[i] = (float)(10 * (i / 4) + i % 4);
  OK(birenMemcpy2DToArray(a, 0, 0, v, 16, 16, 3, birenMemcpyHostToDevice));
  birenResourceDesc r = of_array(a);
  birenTextureDesc d = tdesc(birenAddressModeClamp, birenFilterModeLinear, birenReadModeElementType, 0);
  birenTextureObject_t t;
  OK(birenCreateTextureObject(&t, &r, &d, NULL));
  float c[] = {1.5f, 2.5f, 0, 1.0f, 1.0f, 0};
  float o[8];
  EXPECT(0 == run(t, CXX2D, c, 2, o));
  EXPECT(o[0] == 21.0f && o[4] == 5.5f);
  OK(birenDestroyTextureObject(t));
  /* texCubemap<T>, texCubemapLayered<T>: -y's texel (0, 0), cube 1's +x texel (1, 0). */
  birenArray_t ca = cube_array(2);
  EXPECT(ca != NULL);
  birenResourceDesc rc = of_array(ca);
  birenTextureDesc pt = tdesc(birenAddressModeClamp, birenFilterModePoint, birenReadModeElementType, 1);
  OK(birenCreateTextureObject(&t, &rc, &pt, NULL));
  float cc[] = {-0.5f, -1.0f, 0.5f, 1.0f, 0.5f, -0.5f};
  EXPECT(0 == run(t, CXXCUBE, cc, 1, o));
  EXPECT(o[0] == 300.0f);
  EXPECT(0 == run(t, CXXCUBEL1, cc + 3, 1, o));
  EXPECT(o[0] == 601.0f);
  OK(birenDestroyTextureObject(t));
  OK(birenFreeArray(ca));
  birenArray_t sa;
  OK(birenMallocArray(&sa, &f, 4, 2, birenArraySurfaceLoadStore));
  birenResourceDesc rs = of_array(sa);
  birenSurfaceObject_t s;
  OK(birenCreateSurfaceObject(&s, &rs));
  float *dd;
  OK(birenMalloc((void **)&dd, 16));
  OK(BIREN_LAUNCH(cxx_surf_k, birenDim3(1, 1, 1), birenDim3(4, 1, 1), 0, NULL, s, dd));
  OK(birenMemcpy(o, dd, 16, birenMemcpyDeviceToHost));
  EXPECT(o[0] == 0.0f && o[1] == 2.0f && o[3] == 6.0f);
  OK(birenDestroySurfaceObject(s));
  OK(birenFree(dd));
  OK(birenFreeArray(sa));
  OK(birenFreeArray(a));
  return 0;
}
#endif

/* Misuse fails the launch with BIREN_ERROR_ILLEGAL_ADDRESS (sticky: each ends with a reset). */
static int misuse_fails_the_launch(void) {
  float o[4];
  float c[] = {0.5f, 0.5f, 0};
  birenArray_t a = grid_array(4, 3);
  birenResourceDesc r = of_array(a);
  birenTextureDesc d = tdesc(birenAddressModeClamp, birenFilterModePoint, birenReadModeElementType, 0);
  birenTextureObject_t t;
  OK(birenCreateTextureObject(&t, &r, &d, NULL));
  OK(birenDestroyTextureObject(t));
  capture_start();
  EXPECT(run(t, T2D, c, 1, o) == BIREN_ERROR_ILLEGAL_ADDRESS);
  capture_stop();
  EXPECT(captured("was destroyed"));
  OK(birenDeviceReset());
  /* A fetch through an object whose array was freed. */
  a = grid_array(4, 3);
  r = of_array(a);
  OK(birenCreateTextureObject(&t, &r, &d, NULL));
  float okc[] = {1.5f, 2.5f, 0};
  EXPECT(0 == run(t, T2D, okc, 1, o));
  EXPECT(o[0] == 21.0f);
  OK(birenFreeArray(a));
  capture_start();
  EXPECT(run(t, T2D, c, 1, o) == BIREN_ERROR_ILLEGAL_ADDRESS);
  capture_stop();
  EXPECT(captured("freed"));
  OK(birenDeviceReset());
  /* A forged value; a surface object used as a texture. */
  capture_start();
  EXPECT(run(0x1234567ULL, T2D, c, 1, o) == BIREN_ERROR_ILLEGAL_ADDRESS);
  capture_stop();
  EXPECT(captured("never was one"));
  OK(birenDeviceReset());
  /* A cube map fetch through a destroyed object. */
  a = cube_array(1);
  r = of_array(a);
  OK(birenCreateTextureObject(&t, &r, &d, NULL));
  OK(birenDestroyTextureObject(t));
  float cube_c[] = {1.0f, 0.0f, 0.0f};
  capture_start();
  EXPECT(run(t, TCUBE, cube_c, 1, o) == BIREN_ERROR_ILLEGAL_ADDRESS);
  capture_stop();
  EXPECT(captured("was destroyed"));
  OK(birenDeviceReset());
  /* Surface trap mode. */
  birenChannelFormatDesc f = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  OK(birenMallocArray(&a, &f, 4, 2, birenArraySurfaceLoadStore));
  r = of_array(a);
  birenSurfaceObject_t s;
  OK(birenCreateSurfaceObject(&s, &r));
  float *dd;
  OK(birenMalloc((void **)&dd, 64));
  capture_start();
  birenError_t e = BIREN_LAUNCH(surf_k, birenDim3(2, 1, 1), birenDim3(4, 1, 1), 0, NULL, s, 4, 3, dd);
  if (e == BIREN_SUCCESS) e = birenDeviceSynchronize();
  capture_stop();
  EXPECT(e == BIREN_ERROR_ILLEGAL_ADDRESS);
  EXPECT(captured("outside the surface"));
  OK(birenDeviceReset());
  return 0;
}

static const test_case tests[] = {
    TEST(point_sampling_and_address_modes),
    TEST(linear_filtering_with_9_bit_weights),
    TEST(short_paths_agree_with_the_general_sampler),
    TEST(point_paths_agree_with_the_general_sampler_bit_for_bit),
    TEST(three_d_layered_and_pitch2d),
    TEST(cube_maps),
    TEST(cube_map_errors),
    TEST(read_modes_and_tex1dfetch),
    TEST(create_errors_and_queries),
    TEST(surfaces_and_boundary_modes),
#ifdef __cplusplus
    TEST(cxx_templates),
#endif
    TEST(misuse_fails_the_launch),
};

int main(void) {
  unsetenv("BIREN_VALIDATOR");
  setenv("BIREN_DEVICE_MEMORY", "64M", 1);
  return RUN_TESTS("textures", tests, compat_init, 60);
}
