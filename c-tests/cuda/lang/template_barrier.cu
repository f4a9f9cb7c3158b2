// Kernel templates with barriers in region form: every instantiation gets its own region entry,
// registered when a launch instantiates it. Type and non-type parameters in shared arrays, in a
// loop's bounds and in the types of values kept across barriers; matrixMul's loop whose header
// reads locals of one value for the block; a partial last block.
#include <cstdio>
#include <cuda_runtime.h>

template <typename T, int TILE>
__global__ void tiled_mul(T *C, const T *A, const T *B, int wA, int wB) {
  int bx = blockIdx.x, by = blockIdx.y;
  int tx = threadIdx.x, ty = threadIdx.y;
  int aBegin = wA * TILE * by;
  int aEnd = aBegin + wA - 1;
  int aStep = TILE;
  int bBegin = TILE * bx;
  int bStep = TILE * wB;
  T sum = 0;
  for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
    __shared__ T As[TILE][TILE];
    __shared__ T Bs[TILE][TILE];
    As[ty][tx] = A[a + wA * ty + tx];
    Bs[ty][tx] = B[b + wB * ty + tx];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[wB * TILE * by + TILE * bx + wB * ty + tx] = sum;
}

// A tree reduction over BLOCK threads; each thread keeps an array of T across the barriers.
template <typename T, unsigned BLOCK>
__global__ void block_sum(const T *in, T *sums, T *scaled, int n) {
  __shared__ T s[BLOCK];
  unsigned t = threadIdx.x;
  int i = blockIdx.x * BLOCK + t;
  T pair[2];
  pair[0] = i < n ? in[i] : T(0);
  pair[1] = pair[0] * T(3);
  s[t] = pair[0];
  __syncthreads();
  for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = s[0];
  if (i < n) scaled[i] = pair[1] + s[0];
}

// A template helper with barriers that the kernel template's call leaves unresolved (its
// callee depends on N): region form cannot see into it, so the kernel keeps the fiber form.
template <int N>
__device__ void add_between_barriers(int *s) {
  __syncthreads();
  s[threadIdx.x] += N;
  __syncthreads();
}

template <int N>
__global__ void calls_template_helper(int *out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  add_between_barriers<N>(s);
  out[threadIdx.x] = s[63 - threadIdx.x];
}

static int bad = 0;
#define EXPECT(c, ...) \
  do { \
    if (!(c) && bad++ < 8) printf(__VA_ARGS__); \
  } while (0)

template <typename T, int TILE>
static void check_mul(int n) {
  T *A, *B, *C;
  cudaMallocManaged(&A, n * n * sizeof(T));
  cudaMallocManaged(&B, n * n * sizeof(T));
  cudaMallocManaged(&C, n * n * sizeof(T));
  for (int i = 0; i < n * n; i++) {
    A[i] = (T)(i % 7);
    B[i] = (T)(i % 5) - (T)2;
  }
  tiled_mul<T, TILE><<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(C, A, B, n, n);
  if (cudaDeviceSynchronize() != cudaSuccess) bad++;
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) {
      T e = 0;
      for (int k = 0; k < n; k++) e += A[r * n + k] * B[k * n + c];
      EXPECT(C[r * n + c] == e, "tiled_mul<%d>: C[%d][%d] = %g, want %g\n", TILE, r, c,
             (double)C[r * n + c], (double)e);
    }
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
}

template <typename T, unsigned BLOCK>
static void check_sum(int n) {
  int blocks = (n + BLOCK - 1) / BLOCK;
  T *in, *sums, *scaled;
  cudaMallocManaged(&in, n * sizeof(T));
  cudaMallocManaged(&sums, blocks * sizeof(T));
  cudaMallocManaged(&scaled, n * sizeof(T));
  for (int i = 0; i < n; i++) in[i] = (T)(i % 11);
  block_sum<T, BLOCK><<<blocks, BLOCK>>>(in, sums, scaled, n);
  if (cudaDeviceSynchronize() != cudaSuccess) bad++;
  for (int b = 0; b < blocks; b++) {
    T e = 0;
    for (int i = b * (int)BLOCK; i < n && i < (b + 1) * (int)BLOCK; i++) e += in[i];
    EXPECT(sums[b] == e, "block_sum<%u>: block %d: %g, want %g\n", BLOCK, b, (double)sums[b], (double)e);
    for (int i = b * (int)BLOCK; i < n && i < (b + 1) * (int)BLOCK; i++)
      EXPECT(scaled[i] == in[i] * (T)3 + e, "block_sum<%u>: scaled[%d] = %g\n", BLOCK, i, (double)scaled[i]);
  }
  cudaFree(in);
  cudaFree(sums);
  cudaFree(scaled);
}

int main() {
  check_mul<float, 8>(32);
  check_mul<int, 16>(48);
  check_mul<double, 4>(12);
  check_sum<int, 128>(1000);
  check_sum<float, 64>(130);
  int *out;
  cudaMallocManaged(&out, 64 * sizeof(int));
  calls_template_helper<5><<<1, 64>>>(out);
  if (cudaDeviceSynchronize() != cudaSuccess) bad++;
  for (int t = 0; t < 64; t++)
    EXPECT(out[t] == 63 - t + 5, "calls_template_helper: out[%d] = %d\n", t, out[t]);
  cudaFree(out);
  printf(bad ? "template_barrier: %d wrong\n" : "template_barrier: passed\n", bad);
  return bad != 0;
}
