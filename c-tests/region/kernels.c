/* Kernels with barriers, one per rule of biren-cc's region form (c-tests/test_region.sh builds
 * this file twice: with the plain compiler, fiber form, and with biren-cc, region form; both
 * builds must pass, and biren-cc must report every kernel here in loops). Each test checks the
 * kernel's result against the host's. */
#include "../harness.h"

#ifndef __cplusplus
#define CAST(T, x) (x)
#else
#define CAST(T, x) static_cast<T>(x)
#endif

/* Barrier at top level and in a uniform for loop; a variable recomputed per region (t). */
BIREN_KERNEL(reduce, (const float *) in, (float *) out, (int) n) {
  BIREN_SHARED float s[256];
  unsigned t = threadIdx.x;
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  s[t] = i < n ? in[i] : 0.0f;
  birenSyncThreads();
  for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    birenSyncThreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

/* A while loop whose condition reads a variable each thread keeps (checked at run time), and
 * a value live across the barrier inside it (v). Hillis-Steele inclusive scan of one block. */
BIREN_KERNEL(scan_while, (const int *) in, (int *) out) {
  BIREN_SHARED int s[128];
  unsigned t = threadIdx.x;
  unsigned off = 1;
  s[t] = in[blockIdx.x * blockDim.x + t];
  birenSyncThreads();
  while (off < blockDim.x) {
    int v = 0;
    if (t >= off) v = s[t - off];
    birenSyncThreads();
    s[t] += v;
    birenSyncThreads();
    off *= 2;
  }
  out[blockIdx.x * blockDim.x + t] = s[t];
}

/* A do loop with barriers, rotating a block's values `r` times through shared memory. */
BIREN_KERNEL(rotate_do, (int *) data, (int) r) {
  BIREN_SHARED int s[64];
  unsigned t = threadIdx.x, nt = blockDim.x;
  int x = data[blockIdx.x * nt + t];
  int j = 0;
  do {
    s[(t + 1) % nt] = x;
    birenSyncThreads();
    x = s[t];
    birenSyncThreads();
    j++;
  } while (j < r);
  data[blockIdx.x * nt + t] = x;
}

/* A uniform if/else (a parameter's condition) holding barriers in both branches. */
BIREN_KERNEL(uniform_if, (const int *) in, (int *) out, (int) mode) {
  BIREN_SHARED int s[64];
  unsigned t = threadIdx.x;
  s[t] = in[t];
  birenSyncThreads();
  if (mode > 0) {
    int a = s[(t + 1) % blockDim.x];
    birenSyncThreads();
    s[t] = a * 2;
  } else {
    int b = s[(t + blockDim.x - 1) % blockDim.x];
    birenSyncThreads();
    s[t] = b + 1000;
  }
  birenSyncThreads();
  out[t] = s[t];
}

/* Nested loops, 2-D blocks: the tiled matrix multiply (TILE x TILE tiles of A and B). */
#define TILE 8
BIREN_KERNEL(matmul, (const float *) A, (const float *) B, (float *) C, (int) n) {
  BIREN_SHARED float As[TILE][TILE];
  BIREN_SHARED float Bs[TILE][TILE];
  unsigned tx = threadIdx.x, ty = threadIdx.y;
  unsigned row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    As[ty][tx] = A[row * (unsigned)n + (unsigned)k0 + tx];
    Bs[ty][tx] = B[((unsigned)k0 + ty) * (unsigned)n + col];
    birenSyncThreads();
    for (int k = 0; k < TILE; k++) sum += As[ty][k] * Bs[k][tx];
    birenSyncThreads();
  }
  C[row * (unsigned)n + col] = sum;
}

/* CUDA's matrixMul shape: the loop's bounds and steps are locals of one value for the block
 * (declared once, from the block's index and the parameters), read by the loop's header. */
BIREN_KERNEL(matmul_ranges, (const float *) A, (const float *) B, (float *) C, (int) n) {
  BIREN_SHARED float As[TILE][TILE];
  BIREN_SHARED float Bs[TILE][TILE];
  int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
  int aBegin = n * TILE * (int)blockIdx.y;
  int aEnd = aBegin + n - 1;
  int aStep = TILE;
  int bBegin = TILE * (int)blockIdx.x;
  int bStep = TILE * n;
  float sum = 0.0f;
  for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
    As[ty][tx] = A[a + n * ty + tx];
    Bs[ty][tx] = B[b + n * ty + tx];
    birenSyncThreads();
    for (int k = 0; k < TILE; k++) sum += As[ty][k] * Bs[k][tx];
    birenSyncThreads();
  }
  C[n * TILE * (int)blockIdx.y + TILE * (int)blockIdx.x + n * ty + tx] = sum;
}

/* Arrays and structs live across barriers, kept per thread. */
struct pair_s {
  int a;
  float b;
};
BIREN_KERNEL(live_values, (int *) out) {
  BIREN_SHARED int s[32];
  int acc[4];
  struct pair_s p;
  unsigned t = threadIdx.x;
  for (int q = 0; q < 4; q++) acc[q] = (int)t * 10 + q;
  p.a = (int)t;
  p.b = 0.5f * (float)t;
  s[t] = (int)t;
  birenSyncThreads();
  p.a += s[31 - t];
  acc[3] += s[(t + 1) % 32];
  birenSyncThreads();
  out[t] = acc[0] + acc[1] + acc[2] + acc[3] + p.a + (int)(p.b * 2.0f);
}

/* Dynamic shared memory; a partial last block whose extra threads skip the work but reach the
 * barriers. Reverses each block's slice. */
BIREN_KERNEL(reverse_dyn, (const int *) in, (int *) out, (int) n) {
  int *s = (int *)birenSharedMemory();
  unsigned t = threadIdx.x;
  int i = (int)(blockIdx.x * blockDim.x + t);
  int last = (int)(blockIdx.x * blockDim.x + blockDim.x) <= n ? (int)blockDim.x : n - (int)(blockIdx.x * blockDim.x);
  if (i < n) s[t] = in[i];
  birenSyncThreads();
  if (i < n) out[i] = s[last - 1 - (int)t];
}

/* A 3-D block: each thread writes its linear index into shared memory, then reads the
 * mirrored thread's. */
BIREN_KERNEL(mirror3d, (int *) out) {
  BIREN_SHARED int s[4][4][4];
  unsigned x = threadIdx.x, y = threadIdx.y, z = threadIdx.z;
  s[z][y][x] = (int)((z * 4 + y) * 4 + x);
  birenSyncThreads();
  out[((blockIdx.x * 4 + z) * 4 + y) * 4 + x] = s[3 - z][3 - y][3 - x] + 1000 * (int)blockIdx.x;
}

/* Threads return after the last barrier (the usual `if (t != 0) return;`). */
BIREN_KERNEL(late_return, (int *) out) {
  BIREN_SHARED int s[64];
  unsigned t = threadIdx.x;
  s[t] = (int)t;
  birenSyncThreads();
  if (t != 0) return;
  int sum = 0;
  for (unsigned k = 0; k < blockDim.x; k++) sum += s[k];
  out[blockIdx.x] = sum;
}

/* Warp shuffles of every kind, full masks, a width; blocks whose last warp is partial. */
BIREN_KERNEL(shuffles, (int *) out, (int) w) {
  int v = (int)(threadIdx.x + threadIdx.y * blockDim.x) * 3 + 1;
  int a, b, c, d;
  unsigned t = threadIdx.x + threadIdx.y * blockDim.x;
  a = birenShflDownSyncInt(0xffffffffu, v, 3);
  b = birenShflUpSyncInt(0xffffffffu, v, 2, w);
  c = birenShflXorSyncInt(0xffffffffu, v, 5, w);
  d = birenShflSyncInt(0xffffffffu, v, 7, w);
  out[4 * t] = a;
  out[4 * t + 1] = b;
  out[4 * t + 2] = c;
  out[4 * t + 3] = d;
}

/* A condition the compiler takes for uniform, that is not: each thread's ticket. */
BIREN_KERNEL(divergent_if, (int *) counter, (int *) out) {
  int mine = birenAtomicAddInt(counter, 1) < 5;
  if (mine) {
    birenSyncThreads();
  }
  out[0] = 1;
}

/* A trap after a barrier ends the launch in either form (the trap names its thread). */
BIREN_KERNEL(trap_after_barrier, (int *) out) {
  BIREN_SHARED int s[32];
  s[threadIdx.x] = (int)threadIdx.x;
  birenSyncThreads();
  if (threadIdx.x == 3) birenTrap();
  out[threadIdx.x] = s[31 - threadIdx.x];
}

/* Threads of a partial block return before a barrier the others reach. */
BIREN_KERNEL(early_return, (int *) out, (int) n) {
  BIREN_SHARED int s[64];
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  s[threadIdx.x] = i;
  birenSyncThreads();
  out[i] = s[threadIdx.x];
}

/* A scan in each row of a 2-D block: two buffers swapped by a variable all threads hold the
 * same value of (kept once for the block); an `if` on x >= off among other statements (two
 * thread loops, the condition a constant in each), one on x < E with an else; rows whose
 * width is no multiple of a vector. */
BIREN_KERNEL(scan_rows, (const int *) in, (int *) out, (int) valid) {
  BIREN_SHARED int buf[2][2][64];
  int t = (int)threadIdx.x, y = (int)threadIdx.y, from = 0, off;
  int g = ((int)blockIdx.x * 2 + y) * (int)blockDim.x + t;
  buf[0][y][t] = in[g];
  birenSyncThreads();
  for (off = 1; off < (int)blockDim.x; off <<= 1) {
    int v = buf[from][y][t];
    if (t >= off) v += buf[from][y][t - off];
    buf[1 - from][y][t] = v;
    from = 1 - from;
    birenSyncThreads();
  }
  int r = buf[from][y][t];
  if (t < valid) {
    r += 1000;
  } else {
    r = -r;
  }
  out[g] = r;
}

/* A tiled transpose: x and y kept across the barrier, reassigned after it from the indices
 * only; each region that reads them recomputes them from the assignment that reaches it. */
BIREN_KERNEL(transpose_tile, (const int *) in, (int *) out, (int) n) {
  BIREN_SHARED int tile[16][17];
  int x = (int)blockIdx.x * 16 + (int)threadIdx.x, y = (int)blockIdx.y * 16 + (int)threadIdx.y, j;
  for (j = 0; j < 16; j += 4)
    if (x < n && y + j < n) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  birenSyncThreads();
  x = (int)blockIdx.y * 16 + (int)threadIdx.x;
  y = (int)blockIdx.x * 16 + (int)threadIdx.y;
  for (j = 0; j < 16; j += 4)
    if (x < n && y + j < n) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j] + x - (y + j);
}

/* Warp votes and a warp barrier: ballot, any and all in a 2-D block whose last warp is partial
 * (lanes beyond the block's last thread take no part), birenSyncWarp between a write of shared
 * memory and a read of the neighbour lane's. */
BIREN_KERNEL(votes, (unsigned *) out) {
  BIREN_SHARED int s[128];
  unsigned t = threadIdx.x + threadIdx.y * blockDim.x;
  unsigned b, a, l;
  s[t] = (int)t * 3;
  birenSyncWarp(0xffffffffu);
  b = birenBallotSync(0xffffffffu, t % 3 == 0);
  a = (unsigned)birenAnySync(0xffffffffu, t == 40);
  l = (unsigned)birenAllSync(0xffffffffu, t != 33);
  out[4 * t] = b;
  out[4 * t + 1] = a;
  out[4 * t + 2] = l;
  out[4 * t + 3] = (unsigned)s[t ^ 1u];
}

/* Atomics on shared memory (BIREN_SHARED arrays, a struct's members, birenSharedMemory(); the
 * typed names, as C99 has no generic ones):
 * region form makes them plain read-modify-writes, as one OS thread runs the whole block; the
 * atomic on global memory stays atomic. Every operation, with order-independent results, and
 * the old values they return. */
BIREN_KERNEL(shared_atomics, (unsigned *) out, (unsigned *) global) {
  BIREN_SHARED unsigned s[8];
  BIREN_SHARED struct { int lo; float f; } st;
  unsigned *d = (unsigned *)birenSharedMemory();
  unsigned t = threadIdx.x;
  if (t < 8) s[t] = t == 5 ? 100u : t == 7 ? 50u : 0u;
  if (t < 4) d[t] = t == 2 ? ~0u : 0u;
  if (t == 0) {
    st.lo = 1000;
    st.f = 0.0f;
  }
  birenSyncThreads();
  birenAtomicAddUint(&s[t % 4], t);
  birenAtomicMaxUint(&s[4], t);
  birenAtomicMinUint(s + 5, t + 7);
  if (birenAtomicIncUint(&s[6], 9u) == 0) birenAtomicAddUint(&global[1], 1u);
  birenAtomicDecUint(&s[7], 100u);
  birenAtomicOrUint(&d[0], 1u << (t % 32));
  birenAtomicXorUint(d + 1, t);
  birenAtomicAndUint(&d[2], ~(1u << (t % 32)));
  if (birenAtomicCASUint(&d[3], 0u, 7u) == 0) birenAtomicAddUint(&global[2], 1u);
  birenAtomicSubUint(&d[3], 0u);
  birenAtomicAddInt(&st.lo, 1);
  birenAtomicAddFloat(&st.f, 0.5f);
  birenAtomicAddUint(&global[0], 1u);
  birenSyncThreads();
  if (t < 8) out[blockIdx.x * 14 + t] = s[t];
  if (t < 4) out[blockIdx.x * 14 + 8 + t] = d[t];
  if (t == 0) {
    out[blockIdx.x * 14 + 12] = (unsigned)st.lo;
    out[blockIdx.x * 14 + 13] = (unsigned)st.f;
  }
}

static int test_scan_rows(void) {
  enum { G = 3, BX = 45, N = G * 2 * BX };
  int h[N], r[N], *d, *o;
  for (int i = 0; i < N; i++) h[i] = (i * 7) % 11 - 3;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMalloc((void **)&o, sizeof r));
  OK(birenMemcpy(d, h, sizeof h, birenMemcpyHostToDevice));
  OK(BIREN_LAUNCH(scan_rows, birenDim3(G, 1, 1), birenDim3(BX, 2, 1), 0, 0, d, o, 20));
  OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
  for (int row = 0; row < G * 2; row++) {
    int sum = 0;
    for (int t = 0; t < BX; t++) {
      sum += h[row * BX + t];
      EXPECT(r[row * BX + t] == (t < 20 ? sum + 1000 : -sum));
    }
  }
  OK(birenFree(d));
  OK(birenFree(o));
  return 0;
}

static int test_transpose_tile(void) {
  enum { N = 37, G = (N + 15) / 16 };
  int h[N * N], r[N * N], *d, *o;
  for (int i = 0; i < N * N; i++) h[i] = i * 3 + 1;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMalloc((void **)&o, sizeof r));
  OK(birenMemcpy(d, h, sizeof h, birenMemcpyHostToDevice));
  OK(BIREN_LAUNCH(transpose_tile, birenDim3(G, G, 1), birenDim3(16, 4, 1), 0, 0, d, o, N));
  OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
  for (int row = 0; row < N; row++)
    for (int c = 0; c < N; c++) EXPECT(r[row * N + c] == h[c * N + row] + c - row);
  OK(birenFree(d));
  OK(birenFree(o));
  return 0;
}

static int test_votes(void) {
  enum { BX = 24, BY = 3, NT = BX * BY };
  unsigned r[4 * NT], *o;
  OK(birenMalloc((void **)&o, sizeof r));
  OK(BIREN_LAUNCH(votes, birenDim3(2, 1, 1), birenDim3(BX, BY, 1), 0, 0, o));
  OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
  for (unsigned t = 0; t < NT; t++) {
    unsigned w = t / 32, bits = 0;
    for (unsigned l = 0; l < 32 && w * 32 + l < NT; l++)
      if ((w * 32 + l) % 3 == 0) bits |= 1u << l;
    EXPECT(r[4 * t] == bits);
    EXPECT(r[4 * t + 1] == (w == 1 ? 1u : 0u));
    EXPECT(r[4 * t + 2] == (w == 1 ? 0u : 1u));
    EXPECT(r[4 * t + 3] == (t ^ 1u) * 3);
  }
  OK(birenFree(o));
  return 0;
}

static int test_shared_atomics(void) {
  enum { G = 3, B = 64 };
  unsigned r[G * 14], g[3], *o, *dg;
  OK(birenMalloc((void **)&o, sizeof r));
  OK(birenMalloc((void **)&dg, sizeof g));
  OK(birenMemset(dg, 0, sizeof g));
  OK(BIREN_LAUNCH(shared_atomics, birenDim3(G, 1, 1), birenDim3(B, 1, 1), 4 * sizeof(unsigned), 0, o, dg));
  OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
  OK(birenMemcpy(g, dg, sizeof g, birenMemcpyDeviceToHost));
  for (int b = 0; b < G; b++) {
    const unsigned *x = r + b * 14;
    for (unsigned k = 0; k < 4; k++) EXPECT(x[k] == 480 + 16 * k); /* the sum of t over t % 4 == k */
    EXPECT(x[4] == B - 1);
    EXPECT(x[5] == 7);
    EXPECT(x[6] == B % 10);
    EXPECT(x[7] == 100 - (B - 51));
    EXPECT(x[8] == ~0u);
    EXPECT(x[9] == 0);
    EXPECT(x[10] == 0);
    EXPECT(x[11] == 7);
    EXPECT(x[12] == 1000 + B);
    EXPECT(x[13] == B / 2);
  }
  EXPECT(g[0] == G * B);
  EXPECT(g[1] == G * ((B + 9) / 10));
  EXPECT(g[2] == G);
  OK(birenFree(o));
  OK(birenFree(dg));
  return 0;
}

static int test_reduce(void) {
  enum { N = 5000, B = 256, G = (N + B - 1) / B };
  float *h = CAST(float *, malloc(N * sizeof(float))), ho[G], *d, *o;
  for (int i = 0; i < N; i++) h[i] = (float)(i % 13);
  OK(birenMalloc((void **)&d, N * sizeof(float)));
  OK(birenMalloc((void **)&o, sizeof ho));
  OK(birenMemcpy(d, h, N * sizeof(float), birenMemcpyHostToDevice));
  int n = N;
  OK(BIREN_LAUNCH(reduce, birenDim3(G, 1, 1), birenDim3(B, 1, 1), 0, 0, d, o, n));
  OK(birenMemcpy(ho, o, sizeof ho, birenMemcpyDeviceToHost));
  for (int b = 0; b < G; b++) {
    float e = 0;
    for (int i = b * B; i < (b + 1) * B && i < N; i++) e += h[i];
    EXPECT(ho[b] == e);
  }
  OK(birenFree(d));
  OK(birenFree(o));
  free(h);
  return 0;
}

static int test_scan_while(void) {
  enum { B = 128, G = 3, N = B * G };
  int h[N], r[N], *d, *o;
  for (int i = 0; i < N; i++) h[i] = i % 7 - 3;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMalloc((void **)&o, sizeof h));
  OK(birenMemcpy(d, h, sizeof h, birenMemcpyHostToDevice));
  OK(BIREN_LAUNCH(scan_while, birenDim3(G, 1, 1), birenDim3(B, 1, 1), 0, 0, d, o));
  OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
  for (int b = 0; b < G; b++) {
    int acc = 0;
    for (int i = 0; i < B; i++) {
      acc += h[b * B + i];
      EXPECT(r[b * B + i] == acc);
    }
  }
  OK(birenFree(d));
  OK(birenFree(o));
  return 0;
}

static int test_rotate_do(void) {
  enum { B = 64, G = 2, N = B * G };
  int h[N], r[N], *d, rot = 5;
  for (int i = 0; i < N; i++) h[i] = i * 3;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMemcpy(d, h, sizeof h, birenMemcpyHostToDevice));
  OK(BIREN_LAUNCH(rotate_do, birenDim3(G, 1, 1), birenDim3(B, 1, 1), 0, 0, d, rot));
  OK(birenMemcpy(r, d, sizeof r, birenMemcpyDeviceToHost));
  for (int b = 0; b < G; b++)
    for (int t = 0; t < B; t++) EXPECT(r[b * B + t] == h[b * B + (t - rot + B * 8) % B]);
  OK(birenFree(d));
  return 0;
}

static int test_uniform_if(void) {
  enum { B = 64 };
  int h[B], r[B], *d, *o;
  for (int i = 0; i < B; i++) h[i] = i + 1;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMalloc((void **)&o, sizeof h));
  OK(birenMemcpy(d, h, sizeof h, birenMemcpyHostToDevice));
  for (int mode = 0; mode < 2; mode++) {
    OK(BIREN_LAUNCH(uniform_if, birenDim3(1, 1, 1), birenDim3(B, 1, 1), 0, 0, d, o, mode));
    OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
    for (int t = 0; t < B; t++) EXPECT(r[t] == (mode ? h[(t + 1) % B] * 2 : h[(t + B - 1) % B] + 1000));
  }
  OK(birenFree(d));
  OK(birenFree(o));
  return 0;
}

static int test_matmul(void) {
  enum { N = 32 };
  float *a = CAST(float *, malloc(N * N * sizeof(float))), *b = CAST(float *, malloc(N * N * sizeof(float)));
  float *c = CAST(float *, malloc(N * N * sizeof(float))), *dA, *dB, *dC;
  for (int i = 0; i < N * N; i++) {
    a[i] = (float)(i % 5);
    b[i] = (float)(i % 3) - 1.0f;
  }
  OK(birenMalloc((void **)&dA, N * N * sizeof(float)));
  OK(birenMalloc((void **)&dB, N * N * sizeof(float)));
  OK(birenMalloc((void **)&dC, N * N * sizeof(float)));
  OK(birenMemcpy(dA, a, N * N * sizeof(float), birenMemcpyHostToDevice));
  OK(birenMemcpy(dB, b, N * N * sizeof(float), birenMemcpyHostToDevice));
  int n = N;
  OK(BIREN_LAUNCH(matmul, birenDim3(N / TILE, N / TILE, 1), birenDim3(TILE, TILE, 1), 0, 0, dA, dB, dC, n));
  OK(birenMemcpy(c, dC, N * N * sizeof(float), birenMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float e = 0;
      for (int k = 0; k < N; k++) e += a[i * N + k] * b[k * N + j];
      EXPECT(c[i * N + j] == e);
    }
  OK(birenMemset(dC, 0, N * N * sizeof(float)));
  OK(BIREN_LAUNCH(matmul_ranges, birenDim3(N / TILE, N / TILE, 1), birenDim3(TILE, TILE, 1), 0, 0, dA, dB, dC, n));
  OK(birenMemcpy(c, dC, N * N * sizeof(float), birenMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      float e = 0;
      for (int k = 0; k < N; k++) e += a[i * N + k] * b[k * N + j];
      EXPECT(c[i * N + j] == e);
    }
  OK(birenFree(dA));
  OK(birenFree(dB));
  OK(birenFree(dC));
  free(a);
  free(b);
  free(c);
  return 0;
}

static int test_live_values(void) {
  int r[32], *o;
  OK(birenMalloc((void **)&o, sizeof r));
  OK(BIREN_LAUNCH(live_values, birenDim3(1, 1, 1), birenDim3(32, 1, 1), 0, 0, o));
  OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
  for (int t = 0; t < 32; t++) {
    int e = (t * 10) + (t * 10 + 1) + (t * 10 + 2) + (t * 10 + 3 + (t + 1) % 32) + (t + 31 - t) + t;
    EXPECT(r[t] == e);
  }
  OK(birenFree(o));
  return 0;
}

static int test_reverse_dyn(void) {
  enum { N = 300, B = 64, G = (N + B - 1) / B };
  int h[N], r[N], *d, *o, n = N;
  for (int i = 0; i < N; i++) h[i] = i * 7;
  OK(birenMalloc((void **)&d, sizeof h));
  OK(birenMalloc((void **)&o, sizeof h));
  OK(birenMemcpy(d, h, sizeof h, birenMemcpyHostToDevice));
  OK(BIREN_LAUNCH(reverse_dyn, birenDim3(G, 1, 1), birenDim3(B, 1, 1), B * sizeof(int), 0, d, o, n));
  OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
  for (int b = 0; b < G; b++) {
    int lo = b * B, cnt = (lo + B <= N) ? B : N - lo;
    for (int t = 0; t < cnt; t++) EXPECT(r[lo + t] == h[lo + cnt - 1 - t]);
  }
  OK(birenFree(d));
  OK(birenFree(o));
  return 0;
}

static int test_mirror3d(void) {
  enum { G = 3, N = G * 64 };
  int r[N], *o;
  OK(birenMalloc((void **)&o, sizeof r));
  OK(BIREN_LAUNCH(mirror3d, birenDim3(G, 1, 1), birenDim3(4, 4, 4), 0, 0, o));
  OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
  for (int b = 0; b < G; b++)
    for (int l = 0; l < 64; l++) EXPECT(r[b * 64 + l] == 63 - l + 1000 * b);
  OK(birenFree(o));
  return 0;
}

static int test_late_return(void) {
  enum { G = 4 };
  int r[G], *o;
  OK(birenMalloc((void **)&o, sizeof r));
  OK(BIREN_LAUNCH(late_return, birenDim3(G, 1, 1), birenDim3(64, 1, 1), 0, 0, o));
  OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
  for (int b = 0; b < G; b++) EXPECT(r[b] == 63 * 64 / 2);
  OK(birenFree(o));
  return 0;
}

/* The launch fails (sticky); a reset clears it. */
static int expect_launch_failure(void) {
  EXPECT_CODE(birenDeviceSynchronize(), BIREN_ERROR_LAUNCH_FAILURE);
  OK(birenDeviceReset());
  return 0;
}

static int test_divergent_if_fails(void) {
  int *c, *o;
  OK(birenMalloc((void **)&c, sizeof(int)));
  OK(birenMalloc((void **)&o, sizeof(int)));
  OK(birenMemset(c, 0, sizeof(int)));
  OK(BIREN_LAUNCH(divergent_if, birenDim3(1, 1, 1), birenDim3(32, 1, 1), 0, 0, c, o));
  return expect_launch_failure();
}

static int test_early_return_fails(void) {
  int *o, n = 40;
  OK(birenMalloc((void **)&o, 64 * sizeof(int)));
  OK(BIREN_LAUNCH(early_return, birenDim3(1, 1, 1), birenDim3(64, 1, 1), 0, 0, o, n));
  return expect_launch_failure();
}

static int test_trap_fails_the_launch(void) {
  int *o;
  OK(birenMalloc((void **)&o, 32 * sizeof(int)));
  OK(BIREN_LAUNCH(trap_after_barrier, birenDim3(2, 1, 1), birenDim3(32, 1, 1), 0, 0, o));
  return expect_launch_failure();
}

static int test_early_return_whole_block_passes(void) {
  int *o, n = 64, r[64];
  OK(birenMalloc((void **)&o, 128 * sizeof(int)));
  /* The second block's threads all return: no barrier is left waiting. */
  OK(BIREN_LAUNCH(early_return, birenDim3(2, 1, 1), birenDim3(64, 1, 1), 0, 0, o, n));
  OK(birenMemcpy(r, o, sizeof r, birenMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++) EXPECT(r[i] == i);
  OK(birenFree(o));
  return 0;
}

static unsigned fake_region(birenKernelCtx *ctx, void **args, unsigned count) {
  (void)ctx;
  (void)args;
  return count;
}

/* The lane a shuffle reads (CUDA's rules; a lane beyond the block's last thread: the caller's). */
static unsigned shfl_src(unsigned t, int kind, unsigned p, unsigned w, unsigned nt) {
  unsigned l = t & 31u, seg = l & ~(w - 1u), lw = l & (w - 1u), s;
  switch (kind) {
  case 0: s = seg + (p & (w - 1u)); break;
  case 1: if (p > lw) return t; s = l - p; break;
  case 2: if (p >= w || lw + p >= w) return t; s = l + p; break;
  default: s = l ^ p; if (s >= 32u || (s & ~(w - 1u)) > seg) return t; break;
  }
  s += t & ~31u;
  return s >= nt ? t : s;
}

static int test_shuffles(void) {
  static const unsigned shapes[3][3] = {{64, 1, 32}, {120, 1, 16}, {16, 6, 8}};
  int *o, r[4 * 128];
  OK(birenMalloc((void **)&o, sizeof r));
  for (int k = 0; k < 3; k++) {
    unsigned bx = shapes[k][0], by = shapes[k][1], nt = bx * by;
    int w = (int)shapes[k][2];
    OK(BIREN_LAUNCH(shuffles, birenDim3(1, 1, 1), birenDim3(bx, by, 1), 0, 0, o, w));
    OK(birenMemcpy(r, o, 4 * nt * sizeof(int), birenMemcpyDeviceToHost));
    for (unsigned t = 0; t < nt; t++) {
      EXPECT(r[4 * t] == (int)shfl_src(t, 2, 3, 32, nt) * 3 + 1);
      EXPECT(r[4 * t + 1] == (int)shfl_src(t, 1, 2, (unsigned)w, nt) * 3 + 1);
      EXPECT(r[4 * t + 2] == (int)shfl_src(t, 3, 5, (unsigned)w, nt) * 3 + 1);
      EXPECT(r[4 * t + 3] == (int)shfl_src(t, 0, 7, (unsigned)w, nt) * 3 + 1);
    }
  }
  OK(birenFree(o));
  return 0;
}

static int test_register_regions_checks_arguments(void) {
  EXPECT_CODE(birenKernelRegisterRegions(NULL, fake_region), BIREN_ERROR_INVALID_VALUE);
  EXPECT_CODE(birenKernelRegisterRegions(reduce, NULL), BIREN_ERROR_INVALID_VALUE);
  /* Outside a kernel the region calls do nothing harmful. */
  EXPECT(birenRegionScratch(64) != NULL);
  birenRegionDivergence("k", "f.c", 1, 0, birenDim3(0, 0, 0));
  return 0;
}

int main(void) {
  OK(birenInit());
  static const test_case tests[] = {
      TEST(test_register_regions_checks_arguments), TEST(test_shuffles), TEST(test_shared_atomics), TEST(test_scan_rows), TEST(test_transpose_tile), TEST(test_votes),
      TEST(test_reduce),        TEST(test_scan_while),   TEST(test_rotate_do),
      TEST(test_uniform_if),    TEST(test_matmul),       TEST(test_live_values),
      TEST(test_reverse_dyn),   TEST(test_mirror3d),     TEST(test_late_return),
      TEST(test_early_return_whole_block_passes), TEST(test_divergent_if_fails),
      TEST(test_early_return_fails), TEST(test_trap_fails_the_launch),
  };
  return run_tests("region", tests, sizeof tests / sizeof tests[0], NULL, 120);
}
