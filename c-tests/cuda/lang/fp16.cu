// cuda_fp16.h: every binary16 value converts to float and back unchanged; float-to-half rounding
// (to nearest even, and the directed modes), arithmetic and fused multiply-add against the
// compiler's own _Float16 (libgcc's conversions, independent of the header) where it has one;
// the operators, comparisons and integer conversions; and half2 arithmetic in a kernel with
// barriers, checked against the same operations on the host.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

static int failures = 0;
#define CHECK(cond, ...)                                                                            \
  do {                                                                                              \
    if (!(cond) && failures++ < 20) {                                                               \
      printf("fp16: line %d: ", __LINE__);                                                          \
      printf(__VA_ARGS__);                                                                          \
      printf("\n");                                                                                 \
    }                                                                                               \
  } while (0)

static unsigned rng = 12345u;
static unsigned next_rand() { return rng = rng * 1664525u + 1013904223u; }
static float bits_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static __half bits_half(unsigned short u) { return __ushort_as_half(u); }
static bool is_nan_bits(unsigned short h) { return (h & 0x7fffu) > 0x7c00u; }

#if defined(__FLT16_MAX__)
static unsigned short ref_bits(_Float16 h) { unsigned short u; memcpy(&u, &h, 2); return u; }
static _Float16 ref_half(unsigned short u) { _Float16 h; memcpy(&h, &u, 2); return h; }
/* Bits equal, or both NaN (CUDA's NaN is 0x7fff; the compiler's may differ). */
static bool same(unsigned short a, unsigned short b) { return a == b || (is_nan_bits(a) && is_nan_bits(b)); }
#endif

// Rounded to the next half below or above x (by magnitude order of the bits): the neighbours
// the directed modes must choose between.
static float ordered(unsigned short h) { return __half2float(bits_half(h)); }

__global__ void dot(const half2 *a, const half2 *b, float *out, int n) {
  __shared__ half2 s[128];
  half2 v = __float2half2_rn(0.f);
  for (int i = threadIdx.x; i < n; i += blockDim.x) v = __hfma2(a[i], b[i], v);
  s[threadIdx.x] = v;
  __syncthreads();
  for (int k = 64; k > 0; k >>= 1) {
    if ((int)threadIdx.x < k) s[threadIdx.x] = s[threadIdx.x] + s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[0] = __low2float(s[0]);
    out[1] = __high2float(s[0]);
    out[2] = __half2float(hsqrt(__float2half(2.0f)));
    out[3] = (float)__half2int_rn(__float2half(2.5f));
    out[4] = __hlt(__float2half(1.0f), __float2half(2.0f)) ? 1.0f : 0.0f;
  }
}

// Shuffles of half and half2: a warp sum by __shfl_down_sync, a broadcast by __shfl_sync.
__global__ void warp_sum(half2 *o) {
  half2 v = __floats2half2_rn((float)threadIdx.x, 1.0f);
  for (int d = 16; d > 0; d >>= 1) v = v + __shfl_down_sync(0xffffffffu, v, d);
  __half h = __shfl_sync(0xffffffffu, __float2half((float)threadIdx.x), 3);
  __half x = __shfl_xor_sync(0xffffffffu, __float2half((float)threadIdx.x), 1);
  if (threadIdx.x == 0) { o[0] = v; o[1] = __halves2half2(h, x); }
}

int main() {
  // Every value: half -> float -> half is the identity (NaN: CUDA's 0x7fff).
  for (unsigned u = 0; u < 65536; u++) {
    float f = __half2float(bits_half((unsigned short)u));
    unsigned short back = __half_as_ushort(__float2half(f));
    if (is_nan_bits((unsigned short)u))
      CHECK(std::isnan(f) && back == 0x7fff, "NaN %04x -> %g -> %04x", u, f, back);
    else
      CHECK(back == u, "%04x -> %g -> %04x", u, f, back);
#if defined(__FLT16_MAX__)
    float r = (float)ref_half((unsigned short)u);
    CHECK(same(__half_as_ushort(__float2half(r)), (unsigned short)u) && (std::isnan(r) ? std::isnan(f) : r == f),
          "%04x: %g, the compiler's %g", u, f, r);
#endif
  }
  // Known values: halfway cases round to even, overflow, subnormals, signed zero.
  CHECK(__half_as_ushort(__float2half(1.0f)) == 0x3c00, "1.0");
  CHECK(__half_as_ushort(__float2half(1.0f + 1.0f / 2048)) == 0x3c00, "1 + 2^-11 rounds to even (down)");
  CHECK(__half_as_ushort(__float2half(1.0f + 3.0f / 2048)) == 0x3c02, "1 + 3 * 2^-11 rounds to even (up)");
  CHECK(__half_as_ushort(__float2half(65504.0f)) == 0x7bff, "max");
  CHECK(__half_as_ushort(__float2half(65519.0f)) == 0x7bff, "65519 rounds down");
  CHECK(__half_as_ushort(__float2half(65520.0f)) == 0x7c00, "65520 overflows");
  CHECK(__half_as_ushort(__float2half_rz(1e6f)) == 0x7bff, "rz saturates");
  CHECK(__half_as_ushort(__float2half_rd(-1e6f)) == 0xfc00, "rd of a large negative: -inf");
  CHECK(__half_as_ushort(__float2half(5.960464477539063e-08f)) == 0x0001, "smallest subnormal");
  CHECK(__half_as_ushort(__float2half(2.9802322387695312e-08f)) == 0x0000, "half of it rounds to even: 0");
  CHECK(__half_as_ushort(__float2half(-0.0f)) == 0x8000, "-0");
  CHECK(__half_as_ushort(__float2half(NAN)) == 0x7fff, "NaN");
  // fma rounds once: 3 * (683 / 2048) is 1 + 2^-11, halfway between two halves, and the smallest
  // subnormal decides it upwards (rounded in float first, it would be lost and the tie go down).
  CHECK(__half_as_ushort(__hfma(__float2half(3.0f), __float2half(683.0f / 2048), bits_half(1))) == 0x3c01,
        "fma rounds once: %04x", __half_as_ushort(__hfma(__float2half(3.0f), __float2half(683.0f / 2048), bits_half(1))));

  // Random floats, and every halfway point between neighbouring halves with a nudge either side.
  for (int i = 0; i < 2000000; i++) {
    float f = bits_float(next_rand());
    if (i < 3 * 31744) {
      unsigned short h = (unsigned short)(i / 3);
      double mid = ((double)ordered(h) + (double)ordered((unsigned short)(h + 1))) / 2;
      f = (float)mid;
      if (i % 3 == 1) f = nextafterf(f, INFINITY);
      if (i % 3 == 2) f = nextafterf(f, 0.0f);
      if (next_rand() & 1) f = -f;
    }
    unsigned short rn = __half_as_ushort(__float2half_rn(f));
#if defined(__FLT16_MAX__)
    CHECK(same(rn, ref_bits((_Float16)f)), "%a -> %04x, the compiler's %04x", f, rn, ref_bits((_Float16)f));
#endif
    if (std::isnan(f)) continue;
    float d = __half2float(__float2half_rd(f)), up = __half2float(__float2half_ru(f));
    float z = __half2float(__float2half_rz(f)), n = __half2float(bits_half(rn));
    CHECK(d <= f && f <= up, "%a: rd %a, ru %a", f, d, up);
    CHECK(std::fabs(z) <= std::fabs(f), "%a: rz %a", f, z);
    CHECK(n == d || n == up, "%a: rn %a is neither rd %a nor ru %a", f, n, d, up);
    if (d != up && std::isfinite(d) && std::isfinite(up))
      CHECK(__half_as_ushort(__float2half_rd(f)) + (f > 0 ? 1 : -1) == __half_as_ushort(__float2half_ru(f)) ||
                (d == 0 && up == 0),
            "%a: rd %a and ru %a are not neighbours", f, d, up);
  }

  // Arithmetic on random halves.
  for (int i = 0; i < 300000; i++) {
    __half a = bits_half((unsigned short)next_rand()), b = bits_half((unsigned short)next_rand());
    __half c = bits_half((unsigned short)next_rand());
#if defined(__FLT16_MAX__)
    _Float16 ra = ref_half(__half_as_ushort(a)), rb = ref_half(__half_as_ushort(b)), rc = ref_half(__half_as_ushort(c));
    CHECK(same(__half_as_ushort(__hadd(a, b)), ref_bits((_Float16)(ra + rb))), "add");
    CHECK(same(__half_as_ushort(__hsub(a, b)), ref_bits((_Float16)(ra - rb))), "sub");
    CHECK(same(__half_as_ushort(__hmul(a, b)), ref_bits((_Float16)(ra * rb))), "mul");
    CHECK(same(__half_as_ushort(__hdiv(a, b)), ref_bits((_Float16)(ra / rb))), "div");
    CHECK(same(__half_as_ushort(__hfma(a, b, c)), ref_bits((_Float16)std::fma((double)ra, (double)rb, (double)rc))),
          "fma %04x %04x %04x", __half_as_ushort(a), __half_as_ushort(b), __half_as_ushort(c));
#endif
    float fa = a, fb = b;
    CHECK(__heq(a, b) == (fa == fb) && __hlt(a, b) == (fa < fb) && __hgeu(a, b) == !(fa < fb), "comparisons");
    CHECK((a != b) == !(fa == fb), "!= is unordered");
    CHECK(__hisnan(a) == std::isnan(fa), "isnan");
  }
  // Operators, half2, integers.
  half h = 1.5f;
  h += __float2half(2.0f);
  h = h * __float2half(2.0f) - __float2half(1.0f);
  CHECK(__half2float(h) == 6.0f, "operators: %g", __half2float(h));
  half2 p(1.0f, -2.0f), q = __floats2half2_rn(3.0f, 4.0f);
  half2 r = __hfma2(p, q, p) / __float2half2_rn(2.0f);
  CHECK(__low2float(r) == 2.0f && __high2float(r) == -5.0f, "half2: %g %g", __low2float(r), __high2float(r));
  CHECK(__hbeq2(__hmax2(p, q), q) && !__hbeq2(p, q) && __hble2(p, q), "half2 comparisons");
  CHECK(__half2int_rn(__float2half(2.5f)) == 2 && __half2int_rn(__float2half(3.5f)) == 4, "int rn");
  CHECK(__half2int_rz(__float2half(-2.75f)) == -2 && __half2int_rd(__float2half(-2.25f)) == -3, "int rz/rd");
  CHECK(__half2uint_rn(__float2half(-3.0f)) == 0 && __half2short_rz(CUDART_INF_FP16) == 32767, "saturation");
  CHECK(__half2int_rn(CUDART_NAN_FP16) == 0, "NaN to int");
  CHECK(__half_as_ushort(__int2half_rn(2049)) == __half_as_ushort(__float2half(2048.0f)), "int to half rounds to even");
  CHECK(__hisinf(CUDART_INF_FP16) == 1 && __hisinf(__hneg(CUDART_INF_FP16)) == -1, "isinf");
  CHECK(sizeof(half) == 2 && sizeof(half2) == 4 && alignof(half2) == 4, "sizes");

  // In a kernel: a dot product of 4096 half2 pairs with a shared-memory tree (barriers).
  const int n = 4096;
  half2 *a, *b;
  float *out;
  cudaMallocManaged(&a, n * sizeof(half2));
  cudaMallocManaged(&b, n * sizeof(half2));
  cudaMallocManaged(&out, 5 * sizeof(float));
  for (int i = 0; i < n; i++) {
    a[i] = __floats2half2_rn((float)(i % 4), (float)(i % 3) * 0.5f);
    b[i] = __floats2half2_rn((float)(i % 2), 0.25f);
  }
  dot<<<1, 128>>>(a, b, out, n);
  CHECK(cudaDeviceSynchronize() == cudaSuccess, "kernel failed");
  half2 s[128];
  for (int t = 0; t < 128; t++) {
    s[t] = __float2half2_rn(0.f);
    for (int i = t; i < n; i += 128) s[t] = __hfma2(a[i], b[i], s[t]);
  }
  for (int k = 64; k > 0; k >>= 1)
    for (int t = 0; t < k; t++) s[t] = s[t] + s[t + k];
  CHECK(out[0] == __low2float(s[0]) && out[1] == __high2float(s[0]), "kernel dot %g %g, host %g %g", out[0], out[1],
        __low2float(s[0]), __high2float(s[0]));
  CHECK(out[2] == __half2float(__float2half(sqrtf(2.0f))) && out[3] == 2.0f && out[4] == 1.0f, "kernel intrinsics");
  half2 *w;
  cudaMallocManaged(&w, 2 * sizeof(half2));
  warp_sum<<<1, 32>>>(w);
  CHECK(cudaDeviceSynchronize() == cudaSuccess, "warp_sum failed");
  CHECK(__low2float(w[0]) == 496.0f && __high2float(w[0]) == 32.0f && __low2float(w[1]) == 3.0f &&
            __high2float(w[1]) == 1.0f,
        "shuffles: %g %g %g %g", __low2float(w[0]), __high2float(w[0]), __low2float(w[1]), __high2float(w[1]));
  if (failures) {
    printf("fp16: %d failures\n", failures);
    return 1;
  }
  printf("fp16: all passed\n");
  return 0;
}
