/*
 * biren_vector_types.h -- CUDA's vector types for BIREN kernels and host code: char1..4,
 * uchar1..4, short1..4, ushort1..4, int1..4, uint1..4, long1..4, ulong1..4, longlong1..4,
 * ulonglong1..4, float1..4, double1..4 (members x, y, z, w) and their make_<type>N constructors,
 * with CUDA's alignment for the 2- and 4-element types (GCC and Clang; other compilers get the
 * natural alignment). Included by biren_runtime.h; define BIREN_NO_VECTOR_TYPES before including
 * it to leave the names free. (dim3 is declared by biren_runtime.h.)
 * Part of the BIREN Runtime API (installed beside biren_runtime.h).
 */
#ifndef BIREN_VECTOR_TYPES_H
#define BIREN_VECTOR_TYPES_H

#if defined(__GNUC__) || defined(__clang__)
#define BIREN_VEC_ALIGN_(n) __attribute__((aligned(n)))
#else
#define BIREN_VEC_ALIGN_(n)
#endif

typedef struct char1 { char x; } char1;
static inline char1 make_char1(char x) { char1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(2) char2 { char x; char y; } char2;
static inline char2 make_char2(char x, char y) { char2 r; r.x = x; r.y = y; return r; }
typedef struct char3 { char x; char y; char z; } char3;
static inline char3 make_char3(char x, char y, char z) { char3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(4) char4 { char x; char y; char z; char w; } char4;
static inline char4 make_char4(char x, char y, char z, char w) { char4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct uchar1 { unsigned char x; } uchar1;
static inline uchar1 make_uchar1(unsigned char x) { uchar1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(2) uchar2 { unsigned char x; unsigned char y; } uchar2;
static inline uchar2 make_uchar2(unsigned char x, unsigned char y) { uchar2 r; r.x = x; r.y = y; return r; }
typedef struct uchar3 { unsigned char x; unsigned char y; unsigned char z; } uchar3;
static inline uchar3 make_uchar3(unsigned char x, unsigned char y, unsigned char z) { uchar3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(4) uchar4 { unsigned char x; unsigned char y; unsigned char z; unsigned char w; } uchar4;
static inline uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) { uchar4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct short1 { short x; } short1;
static inline short1 make_short1(short x) { short1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(4) short2 { short x; short y; } short2;
static inline short2 make_short2(short x, short y) { short2 r; r.x = x; r.y = y; return r; }
typedef struct short3 { short x; short y; short z; } short3;
static inline short3 make_short3(short x, short y, short z) { short3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(8) short4 { short x; short y; short z; short w; } short4;
static inline short4 make_short4(short x, short y, short z, short w) { short4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct ushort1 { unsigned short x; } ushort1;
static inline ushort1 make_ushort1(unsigned short x) { ushort1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(4) ushort2 { unsigned short x; unsigned short y; } ushort2;
static inline ushort2 make_ushort2(unsigned short x, unsigned short y) { ushort2 r; r.x = x; r.y = y; return r; }
typedef struct ushort3 { unsigned short x; unsigned short y; unsigned short z; } ushort3;
static inline ushort3 make_ushort3(unsigned short x, unsigned short y, unsigned short z) { ushort3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(8) ushort4 { unsigned short x; unsigned short y; unsigned short z; unsigned short w; } ushort4;
static inline ushort4 make_ushort4(unsigned short x, unsigned short y, unsigned short z, unsigned short w) { ushort4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct int1 { int x; } int1;
static inline int1 make_int1(int x) { int1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(8) int2 { int x; int y; } int2;
static inline int2 make_int2(int x, int y) { int2 r; r.x = x; r.y = y; return r; }
typedef struct int3 { int x; int y; int z; } int3;
static inline int3 make_int3(int x, int y, int z) { int3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(16) int4 { int x; int y; int z; int w; } int4;
static inline int4 make_int4(int x, int y, int z, int w) { int4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct uint1 { unsigned int x; } uint1;
static inline uint1 make_uint1(unsigned int x) { uint1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(8) uint2 { unsigned int x; unsigned int y; } uint2;
static inline uint2 make_uint2(unsigned int x, unsigned int y) { uint2 r; r.x = x; r.y = y; return r; }
typedef struct uint3 { unsigned int x; unsigned int y; unsigned int z; } uint3;
static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { uint3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(16) uint4 { unsigned int x; unsigned int y; unsigned int z; unsigned int w; } uint4;
static inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { uint4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct long1 { long x; } long1;
static inline long1 make_long1(long x) { long1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(16) long2 { long x; long y; } long2;
static inline long2 make_long2(long x, long y) { long2 r; r.x = x; r.y = y; return r; }
typedef struct long3 { long x; long y; long z; } long3;
static inline long3 make_long3(long x, long y, long z) { long3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(16) long4 { long x; long y; long z; long w; } long4;
static inline long4 make_long4(long x, long y, long z, long w) { long4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct ulong1 { unsigned long x; } ulong1;
static inline ulong1 make_ulong1(unsigned long x) { ulong1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(16) ulong2 { unsigned long x; unsigned long y; } ulong2;
static inline ulong2 make_ulong2(unsigned long x, unsigned long y) { ulong2 r; r.x = x; r.y = y; return r; }
typedef struct ulong3 { unsigned long x; unsigned long y; unsigned long z; } ulong3;
static inline ulong3 make_ulong3(unsigned long x, unsigned long y, unsigned long z) { ulong3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(16) ulong4 { unsigned long x; unsigned long y; unsigned long z; unsigned long w; } ulong4;
static inline ulong4 make_ulong4(unsigned long x, unsigned long y, unsigned long z, unsigned long w) { ulong4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct longlong1 { long long x; } longlong1;
static inline longlong1 make_longlong1(long long x) { longlong1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(16) longlong2 { long long x; long long y; } longlong2;
static inline longlong2 make_longlong2(long long x, long long y) { longlong2 r; r.x = x; r.y = y; return r; }
typedef struct longlong3 { long long x; long long y; long long z; } longlong3;
static inline longlong3 make_longlong3(long long x, long long y, long long z) { longlong3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(16) longlong4 { long long x; long long y; long long z; long long w; } longlong4;
static inline longlong4 make_longlong4(long long x, long long y, long long z, long long w) { longlong4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct ulonglong1 { unsigned long long x; } ulonglong1;
static inline ulonglong1 make_ulonglong1(unsigned long long x) { ulonglong1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(16) ulonglong2 { unsigned long long x; unsigned long long y; } ulonglong2;
static inline ulonglong2 make_ulonglong2(unsigned long long x, unsigned long long y) { ulonglong2 r; r.x = x; r.y = y; return r; }
typedef struct ulonglong3 { unsigned long long x; unsigned long long y; unsigned long long z; } ulonglong3;
static inline ulonglong3 make_ulonglong3(unsigned long long x, unsigned long long y, unsigned long long z) { ulonglong3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(16) ulonglong4 { unsigned long long x; unsigned long long y; unsigned long long z; unsigned long long w; } ulonglong4;
static inline ulonglong4 make_ulonglong4(unsigned long long x, unsigned long long y, unsigned long long z, unsigned long long w) { ulonglong4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct float1 { float x; } float1;
static inline float1 make_float1(float x) { float1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(8) float2 { float x; float y; } float2;
static inline float2 make_float2(float x, float y) { float2 r; r.x = x; r.y = y; return r; }
typedef struct float3 { float x; float y; float z; } float3;
static inline float3 make_float3(float x, float y, float z) { float3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(16) float4 { float x; float y; float z; float w; } float4;
static inline float4 make_float4(float x, float y, float z, float w) { float4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

typedef struct double1 { double x; } double1;
static inline double1 make_double1(double x) { double1 r; r.x = x; return r; }
typedef struct BIREN_VEC_ALIGN_(16) double2 { double x; double y; } double2;
static inline double2 make_double2(double x, double y) { double2 r; r.x = x; r.y = y; return r; }
typedef struct double3 { double x; double y; double z; } double3;
static inline double3 make_double3(double x, double y, double z) { double3 r; r.x = x; r.y = y; r.z = z; return r; }
typedef struct BIREN_VEC_ALIGN_(16) double4 { double x; double y; double z; double w; } double4;
static inline double4 make_double4(double x, double y, double z, double w) { double4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

#endif /* BIREN_VECTOR_TYPES_H */
