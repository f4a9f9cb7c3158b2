/* bench/peer/pocl_kernels.cl -- the kernels of bench/barriers.c in OpenCL C 1.2, line for line
 * (birenSyncThreads() is barrier(CLK_LOCAL_MEM_FENCE), birenSharedMemory() a __local kernel
 * argument, BIREN_SHARED a __local array, birenAtomicAdd atomic_add). Run on PoCL by
 * bench/peer/pocl_host.c. */

#define BR_BLOCK 256
#define BR_TILE 16
#define BR_TT 32
#define BR_TROWS 8
#define BR_HIST_PER 16

__kernel void kb_vadd(__global const float *a, __global const float *b, __global float *c, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) c[i] = a[i] + b[i];
}

__kernel void kb_reduce(__global const float *in, __global float *out, int n, __local float *sh) {
  uint t = get_local_id(0), s;
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  sh[t] = i < n ? in[i] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) out[get_group_id(0)] = sh[0];
}

__kernel void kb_matmul(__global const float *A, __global const float *B, __global float *C, int n, __local float *As) {
  __local float *Bs = As + BR_TILE * BR_TILE;
  int tx = (int)get_local_id(0), ty = (int)get_local_id(1);
  int row = (int)get_group_id(1) * BR_TILE + ty, col = (int)get_group_id(0) * BR_TILE + tx;
  float acc = 0.0f;
  int t, k;
  for (t = 0; t < n / BR_TILE; ++t) {
    As[ty * BR_TILE + tx] = A[row * n + t * BR_TILE + tx];
    Bs[ty * BR_TILE + tx] = B[(t * BR_TILE + ty) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (k = 0; k < BR_TILE; ++k) acc += As[ty * BR_TILE + k] * Bs[k * BR_TILE + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[row * n + col] = acc;
}

__kernel void kb_scan(__global const float *in, __global float *out, int n) {
  __local float buf[2][BR_BLOCK];
  int t = (int)get_local_id(0), i = get_group_id(0) * get_local_size(0) + get_local_id(0), from = 0, off;
  buf[0][t] = i < n ? in[i] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (off = 1; off < (int)get_local_size(0); off <<= 1) {
    float v = buf[from][t];
    if (t >= off) v += buf[from][t - off];
    buf[1 - from][t] = v;
    from = 1 - from;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (i < n) out[i] = buf[from][t];
}

__kernel void kb_hist(__global const uchar *data, __global uint *hist, int n) {
  __local uint bins[256];
  int t = (int)get_local_id(0), base = get_group_id(0) * get_local_size(0) * BR_HIST_PER, k;
  bins[t] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (k = 0; k < BR_HIST_PER; k++) {
    int i = base + k * (int)get_local_size(0) + t;
    if (i < n) atomic_add(&bins[data[i]], 1u);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (bins[t]) atomic_add(&hist[t], bins[t]);
}

__kernel void kb_transpose(__global const float *in, __global float *out, int n) {
  __local float tile[BR_TT][BR_TT + 1];
  int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
  int x = (int)get_group_id(0) * BR_TT + lx, y = (int)get_group_id(1) * BR_TT + ly, j;
  for (j = 0; j < BR_TT; j += BR_TROWS)
    if (x < n && y + j < n) tile[ly + j][lx] = in[(size_t)(y + j) * n + x];
  barrier(CLK_LOCAL_MEM_FENCE);
  x = (int)get_group_id(1) * BR_TT + lx;
  y = (int)get_group_id(0) * BR_TT + ly;
  for (j = 0; j < BR_TT; j += BR_TROWS)
    if (x < n && y + j < n) out[(size_t)(y + j) * n + x] = tile[lx][ly + j];
}

__kernel void kb_bitonic(__global const uint *in, __global uint *out) {
  __local uint s[BR_BLOCK];
  uint t = get_local_id(0), base = get_group_id(0) * get_local_size(0), k, j;
  s[t] = in[base + t];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (k = 2; k <= get_local_size(0); k <<= 1)
    for (j = k >> 1; j > 0; j >>= 1) {
      uint p = t ^ j;
      if (p > t) {
        uint a = s[t], b = s[p];
        if ((a > b) == ((t & k) == 0)) s[t] = b, s[p] = a;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  out[base + t] = s[t];
}
