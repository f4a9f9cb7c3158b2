/*
 * cuda_fp16.h -- CUDA's half precision for programs built with biren-cc: __half (half) and
 * __half2 (half2), their conversions, operators and intrinsics. Part of the BIREN Runtime's CUDA
 * headers (include/cuda).
 *
 * A __half is IEEE 754 binary16 (1 sign, 5 exponent, 10 fraction bits) stored in 16 bits, as
 * CUDA's; __half2 is two of them, 4-byte aligned. Arithmetic is computed in float or double and
 * rounded once to half, which gives CUDA's correctly rounded results: float's 24 bits are at
 * least 2 * 11 + 2, so +, -, *, / and sqrt rounded twice equal the result rounded once, and a
 * fused multiply-add in double is exact before its rounding wherever the result is finite.
 * Conversions round to nearest even unless the name says otherwise (_rz, _rd, _ru); NaN converts
 * to CUDA's canonical 0x7fff. The math functions (hexp, hsin, ...) are float's rounded to half.
 * Everything is usable in host and device code.
 */
#ifndef BIREN_CUDA_FP16_H
#define BIREN_CUDA_FP16_H
#ifndef __CUDA_FP16_H__
#define __CUDA_FP16_H__
#endif
#define __CUDA_FP16_TYPES_EXIST__

#include "cuda_runtime.h"
#include <math.h>
#include <string.h>

namespace biren_fp16 {
enum round_mode { rn, rz, rd, ru };

/* x rounded to an integer by mode, x >= 0 (the magnitude; `neg` says the value's sign). */
__host__ __device__ inline double round_mag(double x, round_mode m, bool neg) {
  double f = floor(x);
  if (f == x) return x;
  switch (m) {
  case rz: return f;
  case rd: return neg ? f + 1 : f;
  case ru: return neg ? f : f + 1;
  default: {
    double d = x - f;
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return fmod(f, 2.0) != 0 ? f + 1 : f;
  }
  }
}

/* The binary16 bits of d, rounded by mode. */
__host__ __device__ inline unsigned short from_double(double d, round_mode m) {
  if (d != d) return 0x7fff;
  bool neg = signbit(d);
  unsigned short s = neg ? 0x8000 : 0;
  double a = fabs(d);
  bool up = m == rn || (m == ru && !neg) || (m == rd && neg); /* may overflow to infinity */
  if (a == INFINITY) return s | 0x7c00;
  if (a >= 65536.0) return s | (up ? 0x7c00 : 0x7bff);
  if (a < 6.103515625e-05) { /* below 2^-14: subnormal, in units of 2^-24 */
    double r = round_mag(a * 16777216.0, m, neg);
    return s | (unsigned short)r; /* 1024 is the smallest normal's bits */
  }
  int e;
  (void)frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
  int E = e - 1;      /* a in [2^E, 2^(E+1)) */
  double r = round_mag(ldexp(a, 10 - E), m, neg); /* in [1024, 2048] */
  if (r >= 2048.0) {
    r = 1024.0;
    E++;
  }
  if (E > 15) return s | (up ? 0x7c00 : 0x7bff);
  return s | (unsigned short)((E + 15) << 10) | (unsigned short)(r - 1024.0);
}

/* The value of binary16 bits h (exact in float). */
__host__ __device__ inline float to_float(unsigned short h) {
  unsigned e = (h >> 10) & 31u, f = h & 1023u;
  float v;
  if (e == 0)
    v = ldexpf((float)f, -24);
  else if (e == 31)
    v = f ? NAN : INFINITY;
  else
    v = ldexpf((float)(1024u + f), (int)e - 25);
  return (h & 0x8000u) ? -v : v;
}
} // namespace biren_fp16

struct __half_raw {
  unsigned short x;
};
struct __half2_raw {
  unsigned short x, y;
};

struct __align__(2) __half {
  unsigned short __x;
  __half() = default;
  __host__ __device__ __half(const __half_raw &r) : __x(r.x) {}
  __host__ __device__ __half(float f) : __x(biren_fp16::from_double(f, biren_fp16::rn)) {}
  __host__ __device__ __half(double d) : __x(biren_fp16::from_double(d, biren_fp16::rn)) {}
  __host__ __device__ __half(short v) : __x(biren_fp16::from_double(v, biren_fp16::rn)) {}
  __host__ __device__ __half(unsigned short v) : __x(biren_fp16::from_double(v, biren_fp16::rn)) {}
  __host__ __device__ __half(int v) : __x(biren_fp16::from_double(v, biren_fp16::rn)) {}
  __host__ __device__ __half(unsigned int v) : __x(biren_fp16::from_double(v, biren_fp16::rn)) {}
  __host__ __device__ __half(long v) : __x(biren_fp16::from_double((double)v, biren_fp16::rn)) {}
  __host__ __device__ __half(unsigned long v) : __x(biren_fp16::from_double((double)v, biren_fp16::rn)) {}
  __host__ __device__ __half(long long v) : __x(biren_fp16::from_double((double)v, biren_fp16::rn)) {}
  __host__ __device__ __half(unsigned long long v) : __x(biren_fp16::from_double((double)v, biren_fp16::rn)) {}
  __host__ __device__ operator float() const { return biren_fp16::to_float(__x); }
  __host__ __device__ operator __half_raw() const { return __half_raw{__x}; }
  __host__ __device__ __half &operator=(const __half_raw &r) { __x = r.x; return *this; }
  __host__ __device__ __half &operator=(float f) { return *this = __half(f); }
  __host__ __device__ __half &operator=(double d) { return *this = __half(d); }
};
typedef __half half;

struct __align__(4) __half2 {
  __half x, y;
  __half2() = default;
  __host__ __device__ __half2(const __half &a, const __half &b) : x(a), y(b) {}
  __host__ __device__ __half2(const __half2_raw &r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
  __host__ __device__ operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
  __host__ __device__ __half2 &operator=(const __half2_raw &r) { return *this = __half2(r); }
};
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7c00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7fffU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7bffU)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3c00U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)

/* ---- Conversions ---------------------------------------------------------------------------- */
#define BIREN_FP16_H_(bits) __half(__half_raw{(unsigned short)(bits)})
__host__ __device__ inline __half __float2half(float f) { return __half(f); }
__host__ __device__ inline __half __float2half_rn(float f) { return __half(f); }
__host__ __device__ inline __half __float2half_rz(float f) { return BIREN_FP16_H_(biren_fp16::from_double(f, biren_fp16::rz)); }
__host__ __device__ inline __half __float2half_rd(float f) { return BIREN_FP16_H_(biren_fp16::from_double(f, biren_fp16::rd)); }
__host__ __device__ inline __half __float2half_ru(float f) { return BIREN_FP16_H_(biren_fp16::from_double(f, biren_fp16::ru)); }
__host__ __device__ inline __half __double2half(double d) { return __half(d); }
__host__ __device__ inline float __half2float(__half h) { return (float)h; }
__host__ __device__ inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
__host__ __device__ inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
__host__ __device__ inline __half2 __float22half2_rn(float2 v) { return __half2(__half(v.x), __half(v.y)); }
__host__ __device__ inline float2 __half22float2(__half2 v) { return make_float2((float)v.x, (float)v.y); }
__host__ __device__ inline float __low2float(__half2 v) { return (float)v.x; }
__host__ __device__ inline float __high2float(__half2 v) { return (float)v.y; }
__host__ __device__ inline __half __low2half(__half2 v) { return v.x; }
__host__ __device__ inline __half __high2half(__half2 v) { return v.y; }
__host__ __device__ inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
__host__ __device__ inline __half2 __half2half2(__half a) { return __half2(a, a); }
__host__ __device__ inline __half2 __low2half2(__half2 v) { return __half2(v.x, v.x); }
__host__ __device__ inline __half2 __high2half2(__half2 v) { return __half2(v.y, v.y); }
__host__ __device__ inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
__host__ __device__ inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
__host__ __device__ inline __half2 __lowhigh2highlow(__half2 v) { return __half2(v.y, v.x); }
__host__ __device__ inline short __half_as_short(__half h) { return (short)h.__x; }
__host__ __device__ inline unsigned short __half_as_ushort(__half h) { return h.__x; }
__host__ __device__ inline __half __short_as_half(short s) { return BIREN_FP16_H_(s); }
__host__ __device__ inline __half __ushort_as_half(unsigned short s) { return BIREN_FP16_H_(s); }

/* Integers from a half by mode (CUDA: NaN gives 0; out of range saturates). */
template <class I> __host__ __device__ inline I biren_fp16_to_int_(__half h, biren_fp16::round_mode m, double lo, double hi) {
  float f = (float)h;
  if (f != f) return (I)0;
  double r = f < 0 ? -biren_fp16::round_mag(-(double)f, m, true) : biren_fp16::round_mag(f, m, false);
  return r <= lo ? (I)lo : r >= hi ? (I)hi : (I)r;
}
#define BIREN_FP16_TO_INT_(name, I, lo, hi)                                                          \
  __host__ __device__ inline I name##_rn(__half h) { return biren_fp16_to_int_<I>(h, biren_fp16::rn, lo, hi); } \
  __host__ __device__ inline I name##_rz(__half h) { return biren_fp16_to_int_<I>(h, biren_fp16::rz, lo, hi); } \
  __host__ __device__ inline I name##_rd(__half h) { return biren_fp16_to_int_<I>(h, biren_fp16::rd, lo, hi); } \
  __host__ __device__ inline I name##_ru(__half h) { return biren_fp16_to_int_<I>(h, biren_fp16::ru, lo, hi); }
BIREN_FP16_TO_INT_(__half2int, int, -2147483648.0, 2147483647.0)
BIREN_FP16_TO_INT_(__half2uint, unsigned int, 0.0, 4294967295.0)
BIREN_FP16_TO_INT_(__half2short, short, -32768.0, 32767.0)
BIREN_FP16_TO_INT_(__half2ushort, unsigned short, 0.0, 65535.0)
BIREN_FP16_TO_INT_(__half2ll, long long, -9223372036854775808.0, 9223372036854775807.0)
BIREN_FP16_TO_INT_(__half2ull, unsigned long long, 0.0, 18446744073709551615.0)
#undef BIREN_FP16_TO_INT_
#define BIREN_FP16_FROM_INT_(name, I)                                                               \
  __host__ __device__ inline __half name##_rn(I v) { return BIREN_FP16_H_(biren_fp16::from_double((double)v, biren_fp16::rn)); } \
  __host__ __device__ inline __half name##_rz(I v) { return BIREN_FP16_H_(biren_fp16::from_double((double)v, biren_fp16::rz)); } \
  __host__ __device__ inline __half name##_rd(I v) { return BIREN_FP16_H_(biren_fp16::from_double((double)v, biren_fp16::rd)); } \
  __host__ __device__ inline __half name##_ru(I v) { return BIREN_FP16_H_(biren_fp16::from_double((double)v, biren_fp16::ru)); }
BIREN_FP16_FROM_INT_(__int2half, int)
BIREN_FP16_FROM_INT_(__uint2half, unsigned int)
BIREN_FP16_FROM_INT_(__short2half, short)
BIREN_FP16_FROM_INT_(__ushort2half, unsigned short)
BIREN_FP16_FROM_INT_(__ll2half, long long)
BIREN_FP16_FROM_INT_(__ull2half, unsigned long long)
#undef BIREN_FP16_FROM_INT_

/* ---- Arithmetic ----------------------------------------------------------------------------- */
__host__ __device__ inline __half biren_fp16_sat_(float f) { return __half(f != f ? 0.0f : f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : f); }
__host__ __device__ inline __half __hadd(__half a, __half b) { return __half((float)a + (float)b); }
__host__ __device__ inline __half __hsub(__half a, __half b) { return __half((float)a - (float)b); }
__host__ __device__ inline __half __hmul(__half a, __half b) { return __half((float)a * (float)b); }
__host__ __device__ inline __half __hdiv(__half a, __half b) { return __half((float)a / (float)b); }
__host__ __device__ inline __half __hfma(__half a, __half b, __half c) { return __half((double)(float)a * (double)(float)b + (double)(float)c); }
__host__ __device__ inline __half __hneg(__half a) { return BIREN_FP16_H_(a.__x ^ 0x8000u); }
__host__ __device__ inline __half __habs(__half a) { return BIREN_FP16_H_(a.__x & 0x7fffu); }
__host__ __device__ inline __half __hadd_sat(__half a, __half b) { return biren_fp16_sat_((float)__hadd(a, b)); }
__host__ __device__ inline __half __hsub_sat(__half a, __half b) { return biren_fp16_sat_((float)__hsub(a, b)); }
__host__ __device__ inline __half __hmul_sat(__half a, __half b) { return biren_fp16_sat_((float)__hmul(a, b)); }
__host__ __device__ inline __half __hfma_sat(__half a, __half b, __half c) { return biren_fp16_sat_((float)__hfma(a, b, c)); }
__host__ __device__ inline __half __hmin(__half a, __half b) { float x = a, y = b; return x != x ? b : y != y ? a : x < y ? a : b; }
__host__ __device__ inline __half __hmax(__half a, __half b) { float x = a, y = b; return x != x ? b : y != y ? a : x > y ? a : b; }

#define BIREN_FP16_PAIR_(name2, name1)                                                              \
  __host__ __device__ inline __half2 name2(__half2 a, __half2 b) { return __half2(name1(a.x, b.x), name1(a.y, b.y)); }
BIREN_FP16_PAIR_(__hadd2, __hadd)
BIREN_FP16_PAIR_(__hsub2, __hsub)
BIREN_FP16_PAIR_(__hmul2, __hmul)
BIREN_FP16_PAIR_(__h2div, __hdiv)
BIREN_FP16_PAIR_(__hadd2_sat, __hadd_sat)
BIREN_FP16_PAIR_(__hsub2_sat, __hsub_sat)
BIREN_FP16_PAIR_(__hmul2_sat, __hmul_sat)
BIREN_FP16_PAIR_(__hmin2, __hmin)
BIREN_FP16_PAIR_(__hmax2, __hmax)
__host__ __device__ inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
__host__ __device__ inline __half2 __hfma2_sat(__half2 a, __half2 b, __half2 c) { return __half2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)); }
__host__ __device__ inline __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
__host__ __device__ inline __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }

/* ---- Comparisons: ordered (false with a NaN) and unordered (the `u` forms: true) ------------- */
__host__ __device__ inline bool __hisnan(__half a) { return (a.__x & 0x7fffu) > 0x7c00u; }
__host__ __device__ inline int __hisinf(__half a) { return a.__x == 0x7c00u ? 1 : a.__x == 0xfc00u ? -1 : 0; }
#define BIREN_FP16_CMP_(name, op)                                                                   \
  __host__ __device__ inline bool name(__half a, __half b) { return (float)a op (float)b; }         \
  __host__ __device__ inline bool name##u(__half a, __half b) { return __hisnan(a) || __hisnan(b) || ((float)a op (float)b); } \
  __host__ __device__ inline __half2 name##2(__half2 a, __half2 b) { return __half2(__half(name(a.x, b.x) ? 1.0f : 0.0f), __half(name(a.y, b.y) ? 1.0f : 0.0f)); } \
  __host__ __device__ inline __half2 name##u2(__half2 a, __half2 b) { return __half2(__half(name##u(a.x, b.x) ? 1.0f : 0.0f), __half(name##u(a.y, b.y) ? 1.0f : 0.0f)); }
BIREN_FP16_CMP_(__heq, ==)
BIREN_FP16_CMP_(__hlt, <)
BIREN_FP16_CMP_(__hle, <=)
BIREN_FP16_CMP_(__hgt, >)
BIREN_FP16_CMP_(__hge, >=)
#undef BIREN_FP16_CMP_
/* __hne is true for a NaN only in its unordered form, as CUDA's. */
__host__ __device__ inline bool __hne(__half a, __half b) { return !__hisnan(a) && !__hisnan(b) && (float)a != (float)b; }
__host__ __device__ inline bool __hneu(__half a, __half b) { return !((float)a == (float)b); }
__host__ __device__ inline __half2 __hne2(__half2 a, __half2 b) { return __half2(__half(__hne(a.x, b.x) ? 1.0f : 0.0f), __half(__hne(a.y, b.y) ? 1.0f : 0.0f)); }
__host__ __device__ inline __half2 __hneu2(__half2 a, __half2 b) { return __half2(__half(__hneu(a.x, b.x) ? 1.0f : 0.0f), __half(__hneu(a.y, b.y) ? 1.0f : 0.0f)); }
__host__ __device__ inline __half2 __hisnan2(__half2 a) { return __half2(__half(__hisnan(a.x) ? 1.0f : 0.0f), __half(__hisnan(a.y) ? 1.0f : 0.0f)); }
#define BIREN_FP16_BCMP_(name)                                                                      \
  __host__ __device__ inline bool __hb##name##2(__half2 a, __half2 b) { return __h##name(a.x, b.x) && __h##name(a.y, b.y); } \
  __host__ __device__ inline bool __hb##name##u2(__half2 a, __half2 b) { return __h##name##u(a.x, b.x) && __h##name##u(a.y, b.y); }
BIREN_FP16_BCMP_(eq)
BIREN_FP16_BCMP_(ne)
BIREN_FP16_BCMP_(lt)
BIREN_FP16_BCMP_(le)
BIREN_FP16_BCMP_(gt)
BIREN_FP16_BCMP_(ge)
#undef BIREN_FP16_BCMP_

/* ---- Math: float's function, rounded to half ------------------------------------------------ */
#define BIREN_FP16_MATH_(name, expr)                                                                \
  __host__ __device__ inline __half h##name(__half a) { float x = (float)a; return __half(expr); } \
  __host__ __device__ inline __half2 h2##name(__half2 a) { return __half2(h##name(a.x), h##name(a.y)); }
BIREN_FP16_MATH_(sqrt, sqrtf(x))
BIREN_FP16_MATH_(rsqrt, 1.0f / sqrtf(x))
BIREN_FP16_MATH_(rcp, 1.0f / x)
BIREN_FP16_MATH_(exp, expf(x))
BIREN_FP16_MATH_(exp2, exp2f(x))
BIREN_FP16_MATH_(exp10, powf(10.0f, x))
BIREN_FP16_MATH_(log, logf(x))
BIREN_FP16_MATH_(log2, log2f(x))
BIREN_FP16_MATH_(log10, log10f(x))
BIREN_FP16_MATH_(sin, sinf(x))
BIREN_FP16_MATH_(cos, cosf(x))
BIREN_FP16_MATH_(floor, floorf(x))
BIREN_FP16_MATH_(ceil, ceilf(x))
BIREN_FP16_MATH_(trunc, truncf(x))
BIREN_FP16_MATH_(rint, rintf(x))
#undef BIREN_FP16_MATH_
#undef BIREN_FP16_PAIR_

/* ---- Operators ------------------------------------------------------------------------------ */
__host__ __device__ inline __half operator+(const __half &a, const __half &b) { return __hadd(a, b); }
__host__ __device__ inline __half operator-(const __half &a, const __half &b) { return __hsub(a, b); }
__host__ __device__ inline __half operator*(const __half &a, const __half &b) { return __hmul(a, b); }
__host__ __device__ inline __half operator/(const __half &a, const __half &b) { return __hdiv(a, b); }
__host__ __device__ inline __half operator-(const __half &a) { return __hneg(a); }
__host__ __device__ inline __half operator+(const __half &a) { return a; }
__host__ __device__ inline __half &operator+=(__half &a, const __half &b) { return a = a + b; }
__host__ __device__ inline __half &operator-=(__half &a, const __half &b) { return a = a - b; }
__host__ __device__ inline __half &operator*=(__half &a, const __half &b) { return a = a * b; }
__host__ __device__ inline __half &operator/=(__half &a, const __half &b) { return a = a / b; }
__host__ __device__ inline __half &operator++(__half &a) { return a = a + __half(1.0f); }
__host__ __device__ inline __half &operator--(__half &a) { return a = a - __half(1.0f); }
__host__ __device__ inline __half operator++(__half &a, int) { __half r = a; ++a; return r; }
__host__ __device__ inline __half operator--(__half &a, int) { __half r = a; --a; return r; }
__host__ __device__ inline bool operator==(const __half &a, const __half &b) { return __heq(a, b); }
__host__ __device__ inline bool operator!=(const __half &a, const __half &b) { return __hneu(a, b); }
__host__ __device__ inline bool operator<(const __half &a, const __half &b) { return __hlt(a, b); }
__host__ __device__ inline bool operator<=(const __half &a, const __half &b) { return __hle(a, b); }
__host__ __device__ inline bool operator>(const __half &a, const __half &b) { return __hgt(a, b); }
__host__ __device__ inline bool operator>=(const __half &a, const __half &b) { return __hge(a, b); }

__host__ __device__ inline __half2 operator+(const __half2 &a, const __half2 &b) { return __hadd2(a, b); }
__host__ __device__ inline __half2 operator-(const __half2 &a, const __half2 &b) { return __hsub2(a, b); }
__host__ __device__ inline __half2 operator*(const __half2 &a, const __half2 &b) { return __hmul2(a, b); }
__host__ __device__ inline __half2 operator/(const __half2 &a, const __half2 &b) { return __h2div(a, b); }
__host__ __device__ inline __half2 operator-(const __half2 &a) { return __hneg2(a); }
__host__ __device__ inline __half2 operator+(const __half2 &a) { return a; }
__host__ __device__ inline __half2 &operator+=(__half2 &a, const __half2 &b) { return a = a + b; }
__host__ __device__ inline __half2 &operator-=(__half2 &a, const __half2 &b) { return a = a - b; }
__host__ __device__ inline __half2 &operator*=(__half2 &a, const __half2 &b) { return a = a * b; }
__host__ __device__ inline __half2 &operator/=(__half2 &a, const __half2 &b) { return a = a / b; }
__host__ __device__ inline bool operator==(const __half2 &a, const __half2 &b) { return __hbeq2(a, b); }
__host__ __device__ inline bool operator!=(const __half2 &a, const __half2 &b) { return __hbneu2(a, b); }

/* ---- Warp shuffles of half and half2 (__shfl*_sync): their bits, as one 32-bit word ---------- */
#define BIREN_FP16_SHFL_(op)                                                                        \
  static inline __half biren##op##In_(birenKernelLoop *l, unsigned mask, __half v, int p, int w) {  \
    return BIREN_FP16_H_(biren##op##In_(l, mask, (unsigned)v.__x, p, w));                           \
  }                                                                                                 \
  static inline __half2 biren##op##In_(birenKernelLoop *l, unsigned mask, __half2 v, int p, int w) { \
    unsigned u = (unsigned)v.x.__x | ((unsigned)v.y.__x << 16);                                     \
    u = biren##op##In_(l, mask, u, p, w);                                                           \
    return __half2(BIREN_FP16_H_(u & 0xffffu), BIREN_FP16_H_(u >> 16));                             \
  }
BIREN_FP16_SHFL_(ShflSync)
BIREN_FP16_SHFL_(ShflUpSync)
BIREN_FP16_SHFL_(ShflDownSync)
BIREN_FP16_SHFL_(ShflXorSync)
#undef BIREN_FP16_SHFL_
#undef BIREN_FP16_H_

#endif /* BIREN_CUDA_FP16_H */
