#!/usr/bin/env python3
"""Writes the textures-and-surfaces part of the header's hand-written trailer into cbindgen.toml,
between its two marker lines: the descriptor layout the library exports, the inline fetch and
surface functions (one per result type, generated here), and the C++ templates. Run
`python3 tools/texture_header.py && make header` after editing."""
import re
import sys

BEGIN = "/* ---- BEGIN textures (tools/texture_header.py) ---- */"
END = "/* ---- END textures ---- */"
out = []
w = out.append

w(BEGIN)
w(r"""/* ---- Textures and surfaces in kernels (CUDA's texture and surface functions) ---------------
 * Fetches, in C (CUDA's parameters, the result type as suffix):
 *   birenTex1DfetchT(t, int i)       tex1Dfetch: texel i, no filtering; out of range: 0
 *   birenTex1DT(t, float x)          tex1D
 *   birenTex2DT(t, float x, float y) tex2D
 *   birenTex3DT(t, float x, float y, float z)              tex3D
 *   birenTex2DLayeredT(t, float x, float y, int layer)    tex2DLayered (layer clamped)
 *   birenTexCubemapT(t, float x, float y, float z)         texCubemap
 *   birenTexCubemapLayeredT(t, float x, float y, float z, int layer)  texCubemapLayered
 * with T one of Float Float2 Float4 (filtered, and normalized reads of 8/16-bit formats: these
 * return float types) and Int Int2 Int4 Uint Uint4 Uchar Uchar4 Char Short Ushort (element type,
 * point sampling). In C++ CUDA's templates tex1Dfetch<T>, tex1D<T>, tex2D<T>, tex3D<T>,
 * tex2DLayered<T>, texCubemap<T>, texCubemapLayered<T> for the matching types.
 *
 * The rules are CUDA's ("Texture Fetching" in its programming guide). Coordinates address
 * texels at their centres: texel i spans [i, i + 1) (normalized: [i/N, (i+1)/N)). Point
 * sampling reads texel floor(x). Linear filtering reads texels i = floor(x - 0.5) and i + 1 with
 * weights 1 - a and a, a = frac(x - 0.5) rounded to 9-bit fixed point with 8 fractional bits
 * (a multiple of 1/256), in each dimension (2 texels in 1-D, 4 in 2-D, 8 in 3-D). Address
 * modes per dimension: clamp (to the edge texel), border (texels outside read the border
 * colour), wrap and mirror (normalized coordinates only; otherwise they clamp). Normalized-float
 * reads divide unsigned 8/16-bit values by 255/65535 and signed ones by 127/32767 (at least -1).
 *
 * Cube maps (an array made with birenArrayCubemap): (x, y, z) is a direction from the cube's
 * centre. The face is that of its component m of largest magnitude (ties: x before y before z):
 * |x| the faces +x (layer 0: s = -z, t = -y) and -x (1: s = z, t = -y), |y| +y (2: s = x,
 * t = z) and -y (3: s = x, t = -z), |z| +z (4: s = x, t = -y) and -z (5: s = -x, t = -y); the
 * face is read at normalized coordinates ((s / |m| + 1) / 2, (t / |m| + 1) / 2) with the
 * texture's filter and read modes. Filtering stays inside the face: its coordinates clamp to
 * the face's edge texels whatever the address modes (seamless filtering across faces is not
 * offered). texCubemapLayered reads cube `layer` (faces 6 layer .. 6 layer + 5; clamped to the
 * cubes there are).
 *
 * The fetch is inline: it reads the object's descriptor in the table the library exports
 * (birenTexTable), checks that the descriptor is the object's, and reads the texels. A
 * destroyed texture object, a value that is not one, or an object whose array was freed fails
 * the launch with BIREN_ERROR_ILLEGAL_ADDRESS (the validator names which).
 *
 * Surfaces: birenSurf1DwriteT(v, s, xBytes[, mode]), birenSurf2DwriteT(v, s, xBytes, y[, mode]),
 * birenSurf3DwriteT(v, s, xBytes, y, z[, mode]) and birenSurf{1,2,3}DreadT(s, xBytes, ...[, mode])
 * for the suffixes above (x in bytes, as CUDA). An access past the array's edge: mode
 * birenBoundaryModeTrap (the default) fails the launch with BIREN_ERROR_ILLEGAL_ADDRESS,
 * birenBoundaryModeClamp clamps the coordinates, birenBoundaryModeZero reads 0 and drops
 * writes. In C++ CUDA's surf1Dwrite(v, s, x[, mode]), surf2Dwrite, surf3Dwrite and
 * surf1Dread<T>(s, x[, mode]), surf2Dread<T>, surf3Dread<T> (and the surfNDread(&v, ...) form).
 */
#include <string.h>
/** A texture or surface object's descriptor (read by the inline fetches; the library writes it). */
typedef struct birenTexSlot_ {
  unsigned long long key;
  const char *base;
  size_t pitch, slice;
  int width, height, depth;
  float fwidth, fheight, fdepth;
  float border[4];
  unsigned char format, channels, texel, normalized, linear, readNormalized, addr[3], dims, layered;
  /* The short paths, for one-channel float texels read as they are: 1 point, 2 linear
   * filtering, with unnormalized coordinates and every dimension clamped; 3 point with
   * normalized coordinates, x and y each wrapped, mirrored or clamped; 0 the general sampler. */
  unsigned char fast;
  float xmax, ymax, zmax; /* the last texel's coordinates: width - 1, height - 1, depth - 1 */
} birenTexSlot_;
#define BIREN_TEX_TABLE_MASK_ 16383u
#ifdef __cplusplus
extern "C" {
#endif
/* const: kernels only read the descriptors, and the library writes a slot only while no live
 * object's key is in it, so the compiler may keep a descriptor in registers for a whole block
 * (the fetch's checks and fields are then read once, not once per thread). */
/** The texture objects' descriptors (indexed by the object's low bits). */
extern const birenTexSlot_ birenTexTable[BIREN_TEX_TABLE_MASK_ + 1];
/** The surface objects' descriptors. */
extern const birenTexSlot_ birenSurfTable[BIREN_TEX_TABLE_MASK_ + 1];
#ifdef __cplusplus
}
#endif
#if defined(__GNUC__) || defined(__clang__)
#define BIREN_UNLIKELY_(c) __builtin_expect(!!(c), 0)
#define BIREN_TEX_OUTLINE_ __attribute__((noinline, unused))
/* cold: the compiler then keeps a fetch loop's values in registers across the call (it is
 * taken for the formats and modes the short paths do not cover, and for invalid objects). */
#define BIREN_TEX_COLD_ __attribute__((noinline, unused, cold))
#else
#define BIREN_UNLIKELY_(c) (c)
#define BIREN_TEX_OUTLINE_ inline
#define BIREN_TEX_COLD_ inline
#endif
static inline float birenTexBits_(unsigned u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
/* A half float's value (IEEE binary16), without libm. */
static inline float birenTexHalf_(unsigned short h) {
  unsigned e = (h >> 10) & 31u, m = h & 1023u, sign = (unsigned)(h & 0x8000u) << 16;
  if (e == 0) return (sign ? -1.0f : 1.0f) * (float)m * (1.0f / 16777216.0f);
  if (e == 31) return birenTexBits_(sign | 0x7f800000u | (m << 13));
  return birenTexBits_(sign | ((e + 112u) << 23) | (m << 13));
}
/* floorf without libm (exact: floats of 2^23 and more are integers). */
static inline float birenTexFloor_(float x) {
  float t;
  if (!(x < 8388608.0f && x > -8388608.0f)) return x;
  t = (float)(int)x;
  return t > x ? t - 1.0f : t;
}
/* Channel c of the texel at p as a float (normalized-float reads divided). */
static inline float birenTexChanF_(const birenTexSlot_ *s, const char *p, int c) {
  switch (s->format) {
  case 0: return ((const float *)p)[c];
  case 1: { float v = (float)((const unsigned char *)p)[c]; return s->readNormalized ? v / 255.0f : v; }
  case 2: { float v = (float)((const signed char *)p)[c]; return s->readNormalized ? (v / 127.0f < -1.0f ? -1.0f : v / 127.0f) : v; }
  case 3: { float v = (float)((const unsigned short *)p)[c]; return s->readNormalized ? v / 65535.0f : v; }
  case 4: { float v = (float)((const short *)p)[c]; return s->readNormalized ? (v / 32767.0f < -1.0f ? -1.0f : v / 32767.0f) : v; }
  case 5: return (float)((const unsigned *)p)[c];
  case 6: return (float)((const int *)p)[c];
  default: return birenTexHalf_(((const unsigned short *)p)[c]);
  }
}
/* Channel c of the texel at p as its integer value. */
static inline long long birenTexChanI_(const birenTexSlot_ *s, const char *p, int c) {
  switch (s->format) {
  case 1: return ((const unsigned char *)p)[c];
  case 2: return ((const signed char *)p)[c];
  case 3: return ((const unsigned short *)p)[c];
  case 4: return ((const short *)p)[c];
  case 5: return ((const unsigned *)p)[c];
  case 6: return ((const int *)p)[c];
  default: return (long long)birenTexChanF_(s, p, c);
  }
}
/* A point fetch's texel index in one dimension, x in texels clamped to [0, last] (NaN: 0).
 * Written as a compare and a min, which compilers emit without branches. The low bound -0.5
 * truncates to texel 0 as 0 would, and stays in a register (a zero is rebuilt each time). */
static inline size_t birenTexPointIdx_(float x, float last) {
  x = x > -0.5f ? x : -0.5f;
  x = x < last ? x : last;
  return (size_t)(long long)x;
}
/* A normalized coordinate of a point fetch after wrap (mode 0) or mirror (2) into [0, 1]; as it
 * is for the other modes. */
static inline float birenTexPointWrap_(float x, int mode) {
  if (mode == 0) x -= birenTexFloor_(x);
  else if (mode == 2) { x -= 2.0f * birenTexFloor_(x * 0.5f); if (x > 1.0f) x = 2.0f - x; }
  return x;
}
/* Point sampling in one dimension: the texel index, or -1 (border). */
static inline int birenTexPoint_(float x, float fn, int norm, int mode) {
  if (norm) x = birenTexPointWrap_(x, mode) * fn;
  if (mode == 3) return (x >= 0.0f && x < fn) ? (int)x : -1;
  return (int)birenTexPointIdx_(x, fn - 1.0f);
}
/* A texel index after the address mode (linear filtering's neighbours). */
static inline int birenTexWrapIdx_(int i, int n, int mode) {
  switch (mode) {
  case 0: return i < 0 ? i + n : i >= n ? i - n : i;
  case 2: if (i < 0) i += 2 * n; if (i >= 2 * n) i -= 2 * n; return i < n ? i : 2 * n - 1 - i;
  case 3: return (i < 0 || i >= n) ? -1 : i;
  default: return i < 0 ? 0 : i >= n ? n - 1 : i;
  }
}
/* Linear filtering in one dimension: the two texels and the second one's 9-bit weight. */
static inline float birenTexLinear_(float x, int n, float fn, int norm, int mode, int *j0, int *j1) {
  float f, a;
  int i;
  if (norm) {
    if (mode == 0) x -= birenTexFloor_(x);
    else if (mode == 2) x -= 2.0f * birenTexFloor_(x * 0.5f);
    x *= fn;
  }
  x -= 0.5f;
  if (!(x > -2.0f)) x = -2.0f;
  if (x > 2.0f * fn + 1.0f) x = 2.0f * fn + 1.0f;
  f = birenTexFloor_(x);
  a = (float)(int)((x - f) * 256.0f + 0.5f) * (1.0f / 256.0f);
  i = (int)f;
  *j0 = birenTexWrapIdx_(i, n, mode);
  *j1 = birenTexWrapIdx_(i + 1, n, mode);
  return a;
}
/* The texel (ix, iy, iz) or NULL (border). */
static inline const char *birenTexAt_(const birenTexSlot_ *s, const char *base, int ix, int iy, int iz) {
  if ((ix | iy | iz) < 0) return 0;
  return base + (size_t)iz * s->slice + (size_t)iy * s->pitch + (size_t)ix * s->texel;
}
/* Samples `dims` dimensions (layer: the layer's base) into out[0..nch), as floats. */
static inline void birenTexSampleF_(const birenTexSlot_ *s, const char *base, int dims, float x, float y, float z, int nch, float *out) {
  int c;
  if (!s->linear) {
    int ix = birenTexPoint_(x, s->fwidth, s->normalized, s->addr[0]);
    int iy = dims > 1 ? birenTexPoint_(y, s->fheight, s->normalized, s->addr[1]) : 0;
    int iz = dims > 2 ? birenTexPoint_(z, s->fdepth, s->normalized, s->addr[2]) : 0;
    const char *p = birenTexAt_(s, base, ix, iy, iz);
    for (c = 0; c < nch; c++) out[c] = !p ? s->border[c] : c < s->channels ? birenTexChanF_(s, p, c) : 0.0f;
    return;
  } else {
    int x0, x1, y0 = 0, y1 = 0, z0 = 0, z1 = 0, k;
    float a = birenTexLinear_(x, s->width, s->fwidth, s->normalized, s->addr[0], &x0, &x1);
    float b = dims > 1 ? birenTexLinear_(y, s->height, s->fheight, s->normalized, s->addr[1], &y0, &y1) : 0.0f;
    float g = dims > 2 ? birenTexLinear_(z, s->depth, s->fdepth, s->normalized, s->addr[2], &z0, &z1) : 0.0f;
    for (c = 0; c < nch; c++) out[c] = 0.0f;
    for (k = 0; k < (1 << dims); k++) {
      int ix = (k & 1) ? x1 : x0, iy = (k & 2) ? y1 : y0, iz = (k & 4) ? z1 : z0;
      float wgt = ((k & 1) ? a : 1.0f - a) * (dims > 1 ? ((k & 2) ? b : 1.0f - b) : 1.0f) *
                  (dims > 2 ? ((k & 4) ? g : 1.0f - g) : 1.0f);
      const char *p = birenTexAt_(s, base, ix, iy, iz);
      for (c = 0; c < nch; c++) out[c] += wgt * (!p ? s->border[c] : c < s->channels ? birenTexChanF_(s, p, c) : 0.0f);
    }
  }
}
/* Samples as integers (element-type reads: point sampling). */
static inline void birenTexSampleI_(const birenTexSlot_ *s, const char *base, int dims, float x, float y, float z, int nch, long long *out) {
  int c;
  int ix = birenTexPoint_(x, s->fwidth, s->normalized, s->addr[0]);
  int iy = dims > 1 ? birenTexPoint_(y, s->fheight, s->normalized, s->addr[1]) : 0;
  int iz = dims > 2 ? birenTexPoint_(z, s->fdepth, s->normalized, s->addr[2]) : 0;
  const char *p = birenTexAt_(s, base, ix, iy, iz);
  for (c = 0; c < nch; c++) out[c] = !p ? (long long)s->border[c] : c < s->channels ? birenTexChanI_(s, p, c) : 0;
}
#ifdef __cplusplus
extern "C" {
#endif""")

w(r"""/**
 * The slow path of a fetch through `t`, a texture object with no live descriptor (destroyed, never
 * one, or its array freed): reports it (validator) and fails the calling kernel's launch with
 * BIREN_ERROR_ILLEGAL_ADDRESS; outside a kernel it only reports. Called by the header's fetches.
 */
void birenTexInvalid(unsigned long long t);
/**
 * The slow path of a surface access: `s` has no live descriptor (outOfRange 0), or (x bytes, y,
 * z) is outside the surface in trap mode (outOfRange 1). Reports it and fails the launch with
 * BIREN_ERROR_ILLEGAL_ADDRESS. `loop`: the caller's biren_loop_, or NULL.
 */
void birenSurfInvalid(birenKernelLoop *loop, unsigned long long s, int x, int y, int z, int outOfRange);
#ifdef __cplusplus
}
#endif
/* The descriptor of texture object t, or NULL (after the slow path). */
static BIREN_INLINE_ const birenTexSlot_ *birenTexSlotOf_(unsigned long long t) {
  const birenTexSlot_ *s = &birenTexTable[t & BIREN_TEX_TABLE_MASK_];
  if (BIREN_UNLIKELY_(s->key != t)) {
    birenTexInvalid(t);
    return 0;
  }
  return s;
}
/* tex1Dfetch: texel i of a 1-D texture, all channels as floats (0 out of range). */
static inline void birenTexFetchF_(unsigned long long t, int i, int nch, float *out) {
  const birenTexSlot_ *s = birenTexSlotOf_(t);
  int c;
  if (!s || (unsigned)i >= (unsigned)s->width) { for (c = 0; c < nch; c++) out[c] = 0.0f; return; }
  for (c = 0; c < nch; c++) out[c] = c < s->channels ? birenTexChanF_(s, s->base + (size_t)i * s->texel, c) : 0.0f;
}
static inline void birenTexFetchI_(unsigned long long t, int i, int nch, long long *out) {
  const birenTexSlot_ *s = birenTexSlotOf_(t);
  int c;
  if (!s || (unsigned)i >= (unsigned)s->width) { for (c = 0; c < nch; c++) out[c] = 0; return; }
  for (c = 0; c < nch; c++) out[c] = c < s->channels ? birenTexChanI_(s, s->base + (size_t)i * s->texel, c) : 0;
}
/* The layer's base of a layered texture (layer clamped to the layers there are). */
static inline const char *birenTexLayer_(const birenTexSlot_ *s, int layer) {
  if (layer < 0) layer = 0;
  if (layer >= s->depth) layer = s->depth - 1;
  return s->base + (size_t)layer * s->slice;
}
/* A cube map fetch's face (CUDA's selection, see above) and its coordinates in texels. */
static inline int birenTexCubeFace_(const birenTexSlot_ *s, float x, float y, float z, float *u, float *v) {
  float ax = x < 0.0f ? -x : x, ay = y < 0.0f ? -y : y, az = z < 0.0f ? -z : z, m, sc, tc;
  int face;
  if (ax >= ay && ax >= az) { m = ax; face = x >= 0.0f ? 0 : 1; sc = x >= 0.0f ? -z : z; tc = -y; }
  else if (ay >= az) { m = ay; face = y >= 0.0f ? 2 : 3; sc = x; tc = y >= 0.0f ? z : -z; }
  else { m = az; face = z >= 0.0f ? 4 : 5; sc = z >= 0.0f ? x : -x; tc = -y; }
  *u = (sc / m + 1.0f) * 0.5f * s->fwidth;
  *v = (tc / m + 1.0f) * 0.5f * s->fheight;
  return face;
}
/* A cube map fetch's face layer (of cube `cube`, clamped to the cubes there are), or NULL after
 * the slow path for an object with no live descriptor; *c becomes a copy of the descriptor that
 * samples the face at (*u, *v): unnormalized texel coordinates, clamped to the face. */
static inline const char *birenTexCubeAt_(unsigned long long t, float x, float y, float z, int cube, birenTexSlot_ *c, float *u, float *v) {
  const birenTexSlot_ *s = birenTexSlotOf_(t);
  int face, cubes;
  if (!s) return 0;
  face = birenTexCubeFace_(s, x, y, z, u, v);
  cubes = s->depth / 6;
  if (cube >= cubes) cube = cubes - 1;
  if (cube < 0) cube = 0;
  *c = *s;
  c->normalized = 0;
  c->addr[0] = c->addr[1] = 1;
  return birenTexLayer_(s, cube * 6 + face);
}
/* Cube map fetches (cube: the cube of a layered cube map, 0 otherwise), out of line. */
static BIREN_TEX_OUTLINE_ void birenTexCubeF_(unsigned long long t, float x, float y, float z, int cube, int nch, float *out) {
  birenTexSlot_ c;
  float u, v;
  int i;
  const char *base = birenTexCubeAt_(t, x, y, z, cube, &c, &u, &v);
  if (!base) for (i = 0; i < nch; i++) out[i] = 0.0f;
  else birenTexSampleF_(&c, base, 2, u, v, 0.0f, nch, out);
}
static BIREN_TEX_OUTLINE_ void birenTexCubeI_(unsigned long long t, float x, float y, float z, int cube, int nch, long long *out) {
  birenTexSlot_ c;
  float u, v;
  int i;
  const char *base = birenTexCubeAt_(t, x, y, z, cube, &c, &u, &v);
  if (!base) for (i = 0; i < nch; i++) out[i] = 0;
  else birenTexSampleI_(&c, base, 2, u, v, 0.0f, nch, out);
}
/* Every other fetch of float results: checks t, then the general sampler (out of line, so that
 * the inline fast paths stay small). */
static BIREN_TEX_COLD_ void birenTexSlowF_(unsigned long long t, int dims, float x, float y, float z, int layer, int nch, float *out) {
  const birenTexSlot_ *s = birenTexSlotOf_(t);
  int c;
  if (!s) { for (c = 0; c < nch; c++) out[c] = 0.0f; return; }
  birenTexSampleF_(s, layer < 0 ? s->base : birenTexLayer_(s, layer), dims, x, y, z, nch, out);
}
/* A fetch of float results. The common cases (one channel of float texels: the descriptor's
 * `fast`) take a few instructions inline. The descriptor's fields, and which path to take (0
 * when the key is not t's), are read and computed without branches before any: values computed
 * on every call from a table the compiler takes as const are kept in registers for all of a
 * block's threads, so that per thread a point fetch is one compare, a clamp and a load. */
static BIREN_INLINE_ void birenTexF_(unsigned long long t, int dims, float x, float y, float z, int layer, int nch, float *out) {
  const birenTexSlot_ *s = &birenTexTable[t & BIREN_TEX_TABLE_MASK_];
  const unsigned fast = (nch == 1 && layer < 0 ? (unsigned)s->fast : 0u) & (0u - (unsigned)(s->key == t));
  const char *const base = s->base;
  const size_t pitch = s->pitch;
  const float xmax = s->xmax, ymax = s->ymax;
  const int wl = s->width - 1, hl = s->height - 1;
  if (fast == 1) {
    /* Point, unnormalized coordinates: clamp, truncate, load. */
    const char *row = base;
    if (dims > 1) row += birenTexPointIdx_(y, ymax) * pitch;
    if (dims > 2) row += birenTexPointIdx_(z, s->zmax) * s->slice;
    out[0] = ((const float *)row)[birenTexPointIdx_(x, xmax)];
    return;
  }
  /* Marked unlikely only so that compilers lay it out after the other two and give them the
   * registers: its wrap and mirror steps cost more than a few spills. */
  if (BIREN_UNLIKELY_(fast == 3) && dims <= 2) {
    /* Point, normalized coordinates: the general sampler's steps (birenTexPoint_) for the
     * modes the descriptor allows here, so the same texel to the bit. */
    const char *row = base;
    if (dims > 1) row += birenTexPointIdx_(birenTexPointWrap_(y, s->addr[1]) * s->fheight, ymax) * pitch;
    out[0] = ((const float *)row)[birenTexPointIdx_(birenTexPointWrap_(x, s->addr[0]) * s->fwidth, xmax)];
    return;
  }
  if (fast == 2 && dims == 2) {
    /* Bilinear, clamped, as lerps in fixed point. With xb = x - 0.5 clamped to [0, width - 1],
     * q = xb * 256 rounded holds the first texel (q >> 8) and the 9-bit weight of the second
     * (q & 255, in 256ths). Clamping the coordinate instead of the texels' indices gives the
     * same texels and weights wherever they matter: below the first centre and past the last
     * one both texels are the edge texel, which a lerp returns exactly whatever its weight.
     * Exact while xb * 256 is under 2^22: `fast` is 2 only for sizes up to 8192. */
    float xb = x - 0.5f, yb = y - 0.5f, a, b, top, bottom;
    unsigned qx, qy, i0, i1, j0;
    const float *r0, *r1;
    /* The low clamp at -1/1024 rather than 0 gives the same q (0) and lets compilers use one
     * max instruction (a zero bound makes them keep the sign of -0). */
    xb = xb > -0.0009765625f ? xb : -0.0009765625f;
    yb = yb > -0.0009765625f ? yb : -0.0009765625f;
    xb = xb < xmax ? xb : xmax;
    yb = yb < ymax ? yb : ymax;
    qx = (unsigned)(int)(xb * 256.0f + 0.5f);
    qy = (unsigned)(int)(yb * 256.0f + 0.5f);
    i0 = qx >> 8;
    j0 = qy >> 8;
    a = (float)(int)(qx & 255u) * (1.0f / 256.0f);
    b = (float)(int)(qy & 255u) * (1.0f / 256.0f);
    i1 = i0 < (unsigned)wl ? i0 + 1 : (unsigned)wl;
    r0 = (const float *)(base + (size_t)j0 * pitch);
    r1 = j0 < (unsigned)hl ? (const float *)((const char *)r0 + pitch) : r0;
    top = r0[i0] + a * (r0[i1] - r0[i0]);
    bottom = r1[i0] + a * (r1[i1] - r1[i0]);
    out[0] = top + b * (bottom - top);
    return;
  }
  birenTexSlowF_(t, dims, x, y, z, layer, nch, out);
}
static inline void birenTexI_(unsigned long long t, int dims, float x, float y, float z, int layer, int nch, long long *out) {
  const birenTexSlot_ *s = birenTexSlotOf_(t);
  int c;
  if (!s) { for (c = 0; c < nch; c++) out[c] = 0; return; }
  birenTexSampleI_(s, layer < 0 ? s->base : birenTexLayer_(s, layer), dims, x, y, z, nch, out);
}
/* A surface access's address, or NULL (zero mode, or after the slow path). */
static inline char *birenSurfAt_(birenKernelLoop *l, unsigned long long sv, int x, int y, int z, int size, int mode) {
  const birenTexSlot_ *s = &birenSurfTable[sv & BIREN_TEX_TABLE_MASK_];
  if (BIREN_UNLIKELY_(s->key != sv)) {
    birenSurfInvalid(l, sv, x, y, z, 0);
    return 0;
  }
  if (BIREN_UNLIKELY_(x < 0 || (size_t)x + (size_t)size > s->pitch || (unsigned)y >= (unsigned)s->height ||
                      (unsigned)z >= (unsigned)s->depth)) {
    if (mode == 0) return 0;
    if (mode != 1) {
      birenSurfInvalid(l, sv, x, y, z, 1);
      return 0;
    }
    if (x < 0) x = 0;
    if ((size_t)x + (size_t)size > s->pitch) x = (int)(s->pitch - (size_t)size);
    y = y < 0 ? 0 : y >= s->height ? s->height - 1 : y;
    z = z < 0 ? 0 : z >= s->depth ? s->depth - 1 : z;
  }
  return (char *)s->base + (size_t)z * s->slice + (size_t)y * s->pitch + (size_t)x;
}""")

# Result types: suffix, C type, channel count, float?, constructor
TYPES = [
    ("Float", "float", 1, True), ("Float2", "float2", 2, True), ("Float4", "float4", 4, True),
    ("Int", "int", 1, False), ("Int2", "int2", 2, False), ("Int4", "int4", 4, False),
    ("Uint", "unsigned int", 1, False), ("Uint4", "uint4", 4, False),
    ("Uchar", "unsigned char", 1, False), ("Uchar4", "uchar4", 4, False),
    ("Char", "char", 1, False), ("Short", "short", 1, False), ("Ushort", "unsigned short", 1, False),
]
FIELDS = ["x", "y", "z", "w"]


def ret(ty, n, isf):
    """Statements turning v[0..n) into a `ty` and returning it."""
    if n == 1:
        return f"return ({ty})v[0];"
    comp = ty[:-1]
    mk = f"make_{ty}(" + ", ".join(f"({'float' if isf else {'int': 'int', 'uint': 'unsigned int', 'uchar': 'unsigned char'}[comp]})v[{i}]" for i in range(n)) + ")"
    return f"return {mk};"


FETCHES = [
    # name, params decl, call args (dims, x, y, z, layer)
    ("Tex1D", "float x", "1, x, 0.0f, 0.0f, -1", "tex1D", "float x", "x"),
    ("Tex2D", "float x, float y", "2, x, y, 0.0f, -1", "tex2D", "float x, float y", "x, y"),
    ("Tex3D", "float x, float y, float z", "3, x, y, z, -1", "tex3D", "float x, float y, float z", "x, y, z"),
    ("Tex2DLayered", "float x, float y, int layer", "2, x, y, 0.0f, layer", "tex2DLayered", "float x, float y, int layer", "x, y, layer"),
]
cpp = []
for suf, ty, n, isf in TYPES:
    vt = "float" if isf else "long long"
    kind = "F" if isf else "I"
    w(f"/** CUDA's tex1Dfetch<{ty}>: texel i (0 out of range). */")
    w(f"static BIREN_INLINE_ {ty} birenTex1Dfetch{suf}(unsigned long long t, int i) {{ {vt} v[{n}]; birenTexFetch{kind}_(t, i, {n}, v); {ret(ty, n, isf)} }}")
    cpp.append(f"template <> BIREN_INLINE_ {ty} tex1Dfetch<{ty}>(birenTextureObject_t t, int i) {{ return birenTex1Dfetch{suf}(t, i); }}")
    for name, params, args, cname, cparams, cargs in FETCHES:
        w(f"/** CUDA's {cname}<{ty}>. */")
        w(f"static BIREN_INLINE_ {ty} biren{name}{suf}(unsigned long long t, {params}) {{ {vt} v[{n}]; biren{'TexF_' if isf else 'TexI_'}(t, {args}, {n}, v); {ret(ty, n, isf)} }}")
        cpp.append(f"template <> BIREN_INLINE_ {ty} {cname}<{ty}>(birenTextureObject_t t, {cparams}) {{ return biren{name}{suf}(t, {cargs}); }}")
    w(f"/** CUDA's texCubemap<{ty}>: the cube map's texel in direction (x, y, z). */")
    w(f"static BIREN_INLINE_ {ty} birenTexCubemap{suf}(unsigned long long t, float x, float y, float z) {{ {vt} v[{n}]; birenTexCube{kind}_(t, x, y, z, 0, {n}, v); {ret(ty, n, isf)} }}")
    cpp.append(f"template <> BIREN_INLINE_ {ty} texCubemap<{ty}>(birenTextureObject_t t, float x, float y, float z) {{ return birenTexCubemap{suf}(t, x, y, z); }}")
    w(f"/** CUDA's texCubemapLayered<{ty}>: cube `layer`'s texel in direction (x, y, z). */")
    w(f"static BIREN_INLINE_ {ty} birenTexCubemapLayered{suf}(unsigned long long t, float x, float y, float z, int layer) {{ {vt} v[{n}]; birenTexCube{kind}_(t, x, y, z, layer, {n}, v); {ret(ty, n, isf)} }}")
    cpp.append(f"template <> BIREN_INLINE_ {ty} texCubemapLayered<{ty}>(birenTextureObject_t t, float x, float y, float z, int layer) {{ return birenTexCubemapLayered{suf}(t, x, y, z, layer); }}")
    # surfaces
    for d, coords, cdecl in [(1, "x", "int x"), (2, "x, y", "int x, int y"), (3, "x, y, z", "int x, int y, int z")]:
        at = {1: "x, 0, 0", 2: "x, y, 0", 3: "x, y, z"}[d]
        w(f"static inline void birenSurf{d}Dwrite{suf}In_(birenKernelLoop *l, {ty} v, unsigned long long s, {cdecl}, int mode) {{ char *p = birenSurfAt_(l, s, {at}, (int)sizeof v, mode); if (p) memcpy(p, &v, sizeof v); }}")
        w(f"static inline {ty} birenSurf{d}Dread{suf}In_(birenKernelLoop *l, unsigned long long s, {cdecl}, int mode) {{ {ty} v; char *p = birenSurfAt_(l, s, {at}, (int)sizeof v, mode); if (p) memcpy(&v, p, sizeof v); else memset(&v, 0, sizeof v); return v; }}")
        na = d + 2
        w(f"/** CUDA's surf{d}Dwrite<{ty}>: (value, surf, {coords.replace('x', 'xBytes', 1)}[, boundaryMode]); see the surface section. */")
        w(f"#define birenSurf{d}Dwrite{suf}(...) BIREN_PP_CAT(birenSurf{d}Dwrite{suf}_, BIREN_PP_NARGS(__VA_ARGS__))(__VA_ARGS__)")
        w(f"#define birenSurf{d}Dwrite{suf}_{na}(v, s, {coords}) birenSurf{d}Dwrite{suf}In_(biren_loop_, (v), (s), {coords}, 2)")
        w(f"#define birenSurf{d}Dwrite{suf}_{na + 1}(v, s, {coords}, mode) birenSurf{d}Dwrite{suf}In_(biren_loop_, (v), (s), {coords}, (mode))")
        w(f"/** CUDA's surf{d}Dread<{ty}>: (surf, {coords.replace('x', 'xBytes', 1)}[, boundaryMode]); see the surface section. */")
        w(f"#define birenSurf{d}Dread{suf}(...) BIREN_PP_CAT(birenSurf{d}Dread{suf}_, BIREN_PP_NARGS(__VA_ARGS__))(__VA_ARGS__)")
        w(f"#define birenSurf{d}Dread{suf}_{na - 1}(s, {coords}) birenSurf{d}Dread{suf}In_(biren_loop_, (s), {coords}, 2)")
        w(f"#define birenSurf{d}Dread{suf}_{na}(s, {coords}, mode) birenSurf{d}Dread{suf}In_(biren_loop_, (s), {coords}, (mode))")

w("#ifdef __cplusplus")
w("/* CUDA's texture templates: the types above (char and signed char alike). Forced inline like\n * the functions they call: left to the compiler, a fetch in a kernel is often a call per thread\n * that reads the descriptor again each time. */")
for _, cname, _, _ in [(0, "tex1Dfetch", 0, 0), (0, "tex1D", 0, 0), (0, "tex2D", 0, 0), (0, "tex3D", 0, 0), (0, "tex2DLayered", 0, 0), (0, "texCubemap", 0, 0), (0, "texCubemapLayered", 0, 0)]:
    params = {"tex1Dfetch": "int", "tex1D": "float", "tex2D": "float, float", "tex3D": "float, float, float", "tex2DLayered": "float, float, int", "texCubemap": "float, float, float", "texCubemapLayered": "float, float, float, int"}[cname]
    w(f"template <class T> T {cname}(birenTextureObject_t t, {params});")
w("\n".join(cpp))
w("""template <> BIREN_INLINE_ signed char tex1Dfetch<signed char>(birenTextureObject_t t, int i) { return (signed char)birenTex1DfetchChar(t, i); }
template <> BIREN_INLINE_ signed char tex2D<signed char>(birenTextureObject_t t, float x, float y) { return (signed char)birenTex2DChar(t, x, y); }
/* CUDA's surface functions: any type of the texel's size. */
template <class T> inline void surf1Dwrite(T v, birenSurfaceObject_t s, int x, int mode = 2) { char *p = birenSurfAt_(0, s, x, 0, 0, (int)sizeof v, mode); if (p) memcpy(p, &v, sizeof v); }
template <class T> inline void surf2Dwrite(T v, birenSurfaceObject_t s, int x, int y, int mode = 2) { char *p = birenSurfAt_(0, s, x, y, 0, (int)sizeof v, mode); if (p) memcpy(p, &v, sizeof v); }
template <class T> inline void surf3Dwrite(T v, birenSurfaceObject_t s, int x, int y, int z, int mode = 2) { char *p = birenSurfAt_(0, s, x, y, z, (int)sizeof v, mode); if (p) memcpy(p, &v, sizeof v); }
template <class T> inline T surf1Dread(birenSurfaceObject_t s, int x, int mode = 2) { T v; char *p = birenSurfAt_(0, s, x, 0, 0, (int)sizeof v, mode); if (p) memcpy(&v, p, sizeof v); else memset(&v, 0, sizeof v); return v; }
template <class T> inline T surf2Dread(birenSurfaceObject_t s, int x, int y, int mode = 2) { T v; char *p = birenSurfAt_(0, s, x, y, 0, (int)sizeof v, mode); if (p) memcpy(&v, p, sizeof v); else memset(&v, 0, sizeof v); return v; }
template <class T> inline T surf3Dread(birenSurfaceObject_t s, int x, int y, int z, int mode = 2) { T v; char *p = birenSurfAt_(0, s, x, y, z, (int)sizeof v, mode); if (p) memcpy(&v, p, sizeof v); else memset(&v, 0, sizeof v); return v; }
template <class T> inline void surf1Dread(T *v, birenSurfaceObject_t s, int x, int mode = 2) { *v = surf1Dread<T>(s, x, mode); }
template <class T> inline void surf2Dread(T *v, birenSurfaceObject_t s, int x, int y, int mode = 2) { *v = surf2Dread<T>(s, x, y, mode); }
template <class T> inline void surf3Dread(T *v, birenSurfaceObject_t s, int x, int y, int z, int mode = 2) { *v = surf3Dread<T>(s, x, y, z, mode); }
/* CUDA's birenCreateChannelDesc<T>() and the default arguments of the array calls. */
template <class T> inline birenChannelFormatDesc birenCreateChannelDesc(void);""")
CH = [("float", 32, 1, "Float"), ("float2", 32, 2, "Float"), ("float4", 32, 4, "Float"),
      ("int", 32, 1, "Signed"), ("int2", 32, 2, "Signed"), ("int4", 32, 4, "Signed"),
      ("unsigned int", 32, 1, "Unsigned"), ("uint2", 32, 2, "Unsigned"), ("uint4", 32, 4, "Unsigned"),
      ("char", 8, 1, "Signed"), ("signed char", 8, 1, "Signed"), ("char2", 8, 2, "Signed"), ("char4", 8, 4, "Signed"),
      ("unsigned char", 8, 1, "Unsigned"), ("uchar2", 8, 2, "Unsigned"), ("uchar4", 8, 4, "Unsigned"),
      ("short", 16, 1, "Signed"), ("short2", 16, 2, "Signed"), ("short4", 16, 4, "Signed"),
      ("unsigned short", 16, 1, "Unsigned"), ("ushort2", 16, 2, "Unsigned"), ("ushort4", 16, 4, "Unsigned")]
for ty, bits, n, kind in CH:
    b = [bits if i < n else 0 for i in range(4)]
    w(f"template <> inline birenChannelFormatDesc birenCreateChannelDesc<{ty}>(void) {{ return birenCreateChannelDesc({b[0]}, {b[1]}, {b[2]}, {b[3]}, birenChannelFormatKind{kind}); }}")
w("""static inline birenError_t birenMallocArray(birenArray_t *array, const birenChannelFormatDesc *desc, size_t width) { return birenMallocArray(array, desc, width, 0, 0); }
static inline birenError_t birenMallocArray(birenArray_t *array, const birenChannelFormatDesc *desc, size_t width, size_t height) { return birenMallocArray(array, desc, width, height, 0); }
static inline birenError_t birenMalloc3DArray(birenArray_t *array, const birenChannelFormatDesc *desc, birenExtent extent) { return birenMalloc3DArray(array, desc, extent, 0); }
#endif""")
w(END)

text = "\n".join(out)
toml_text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
path = "cbindgen.toml"
src = open(path).read()
if BEGIN in src:
    src = src[: src.index(BEGIN)] + toml_text + src[src.index(END) + len(END):]
else:
    marker = "#endif /* BIREN_RUNTIME_INLINE_H */"
    src = src.replace(marker, toml_text + "\n\n" + marker)
excl = ["birenTexInvalid", "birenSurfInvalid"]
m = re.search(r'^exclude = \[(.*)\]$', src, re.M)
have = [x.strip().strip('"') for x in m.group(1).split(",") if x.strip()]
for e in excl:
    if e not in have:
        have.append(e)
src = src[: m.start()] + "exclude = [" + ", ".join(f'"{x}"' for x in have) + "]" + src[m.end():]
open(path, "w").write(src)
print("cbindgen.toml: textures written", file=sys.stderr)
