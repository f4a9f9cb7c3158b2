/* matrixMul: tiled matrix multiplication with static shared tiles (BIREN_SHARED) and block barriers, timed with events on a non-blocking stream.
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/0_Introduction/matrixMul
 * (https://github.com/NVIDIA/cuda-samples): cuda -> biren, the kernels rewritten as C functions,
 * the program's structure and its own result check kept. The original carries this notice:
 *
 * Copyright (c) 2022, NVIDIA CORPORATION. All rights reserved.
 *
 * Redistribution and use in source and binary forms, with or without modification, are
 * permitted provided that the following conditions are met:
 *  * Redistributions of source code must retain the above copyright notice, this list of
 *    conditions and the following disclaimer.
 *  * Redistributions in binary form must reproduce the above copyright notice, this list of
 *    conditions and the following disclaimer in the documentation and/or other materials
 *    provided with the distribution.
 *  * Neither the name of NVIDIA CORPORATION nor the names of its contributors may be used to
 *    endorse or promote products derived from this software without specific prior written
 *    permission.
 *
 * THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS ``AS IS'' AND ANY EXPRESS OR IMPLIED
 * WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
 * FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT OWNER OR
 * CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
 * CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
 * SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY
 * THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR
 * OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
 * POSSIBILITY OF SUCH DAMAGE.
 */
#include "biren_helpers.h"

/* template <int BLOCK_SIZE> __global__ void MatrixMulCUDA(float *C, float *A, float *B, int wA, int wB)
 * C has no templates: one function per block size, from one macro. */
#define MATRIX_MUL_KERNEL(BLOCK_SIZE)                                                               \
  static void MatrixMul##BLOCK_SIZE(void **args) {                                                \
    float *C = *(float **)args[0], *A = *(float **)args[1], *B = *(float **)args[2];               \
    int wA = *(int *)args[3], wB = *(int *)args[4];                                                \
    int bx = (int)birenBlockIdx().x, by = (int)birenBlockIdx().y;                                  \
    int tx = (int)birenThreadIdx().x, ty = (int)birenThreadIdx().y;                                \
    int aBegin = wA * BLOCK_SIZE * by, aEnd = aBegin + wA - 1, aStep = BLOCK_SIZE;                 \
    int bBegin = BLOCK_SIZE * bx, bStep = BLOCK_SIZE * wB;                                         \
    float Csub = 0;                                                                                \
    for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {                          \
      BIREN_SHARED float As[BLOCK_SIZE][BLOCK_SIZE];                                               \
      BIREN_SHARED float Bs[BLOCK_SIZE][BLOCK_SIZE];                                               \
      As[ty][tx] = A[a + wA * ty + tx];                                                            \
      Bs[ty][tx] = B[b + wB * ty + tx];                                                            \
      birenSyncThreads();                                                                          \
      for (int k = 0; k < BLOCK_SIZE; ++k) Csub += As[ty][k] * Bs[k][tx];                          \
      birenSyncThreads();                                                                          \
    }                                                                                              \
    int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;                                                \
    C[c + wB * ty + tx] = Csub;                                                                    \
  }
MATRIX_MUL_KERNEL(16)
MATRIX_MUL_KERNEL(32)

static void ConstantInit(float *data, int size, float val) {
  for (int i = 0; i < size; ++i) data[i] = val;
}

static int MatrixMultiply(int block_size, dim3 dimsA, dim3 dimsB, int nIter) {
  unsigned size_A = dimsA.x * dimsA.y, size_B = dimsB.x * dimsB.y;
  unsigned mem_size_A = sizeof(float) * size_A, mem_size_B = sizeof(float) * size_B;
  float *h_A, *h_B, *h_C;
  checkBirenErrors(birenMallocHost((void **)&h_A, mem_size_A));
  checkBirenErrors(birenMallocHost((void **)&h_B, mem_size_B));
  const float valB = 0.01f;
  ConstantInit(h_A, size_A, 1.0f);
  ConstantInit(h_B, size_B, valB);
  float *d_A, *d_B, *d_C;
  dim3 dimsC = birenDim3(dimsB.x, dimsA.y, 1);
  unsigned mem_size_C = dimsC.x * dimsC.y * sizeof(float);
  checkBirenErrors(birenMallocHost((void **)&h_C, mem_size_C));
  checkBirenErrors(birenMalloc((void **)&d_A, mem_size_A));
  checkBirenErrors(birenMalloc((void **)&d_B, mem_size_B));
  checkBirenErrors(birenMalloc((void **)&d_C, mem_size_C));
  birenEvent_t start, stop;
  checkBirenErrors(birenEventCreate(&start));
  checkBirenErrors(birenEventCreate(&stop));
  birenStream_t stream;
  checkBirenErrors(birenStreamCreateWithFlags(&stream, birenStreamNonBlocking));
  checkBirenErrors(birenMemcpyAsync(d_A, h_A, mem_size_A, birenMemcpyHostToDevice, stream));
  checkBirenErrors(birenMemcpyAsync(d_B, h_B, mem_size_B, birenMemcpyHostToDevice, stream));
  dim3 threads = birenDim3(block_size, block_size, 1);
  dim3 grid = birenDim3(dimsB.x / threads.x, dimsA.y / threads.y, 1);
  birenKernel_t kernel = block_size == 16 ? MatrixMul16 : MatrixMul32;
  printf("Computing result using BIREN Kernel...\n");
  int wA = (int)dimsA.x, wB = (int)dimsB.x;
  checkBirenErrors(BIREN_LAUNCH(kernel, grid, threads, 0, stream, d_C, d_A, d_B, wA, wB));
  printf("done\n");
  checkBirenErrors(birenStreamSynchronize(stream));
  checkBirenErrors(birenEventRecord(start, stream));
  for (int j = 0; j < nIter; j++) checkBirenErrors(BIREN_LAUNCH(kernel, grid, threads, 0, stream, d_C, d_A, d_B, wA, wB));
  checkBirenErrors(birenEventRecord(stop, stream));
  checkBirenErrors(birenEventSynchronize(stop));
  float msecTotal = 0.0f;
  checkBirenErrors(birenEventElapsedTime(&msecTotal, start, stop));
  float msecPerMatrixMul = msecTotal / nIter;
  double flopsPerMatrixMul = 2.0 * (double)dimsA.x * (double)dimsA.y * (double)dimsB.x;
  double gigaFlops = (flopsPerMatrixMul * 1.0e-9f) / (msecPerMatrixMul / 1000.0f);
  printf("Performance= %.2f GFlop/s, Time= %.3f msec, Size= %.0f Ops, WorkgroupSize= %u threads/block\n", gigaFlops,
         msecPerMatrixMul, flopsPerMatrixMul, threads.x * threads.y);
  checkBirenErrors(birenMemcpyAsync(h_C, d_C, mem_size_C, birenMemcpyDeviceToHost, stream));
  checkBirenErrors(birenStreamSynchronize(stream));
  printf("Checking computed result for correctness: ");
  int correct = 1;
  double eps = 1.e-6; /* machine zero */
  for (int i = 0; i < (int)(dimsC.x * dimsC.y); i++) {
    double abs_err = fabs(h_C[i] - (dimsA.x * valB));
    double dot_length = dimsA.x, abs_val = fabs(h_C[i]);
    double rel_err = abs_err / abs_val / dot_length;
    if (rel_err > eps) {
      printf("Error! Matrix[%05d]=%.8f, ref=%.8f error term is > %E\n", i, h_C[i], dimsA.x * valB, eps);
      correct = 0;
    }
  }
  printf("%s\n", correct ? "Result = PASS" : "Result = FAIL");
  checkBirenErrors(birenFreeHost(h_A));
  checkBirenErrors(birenFreeHost(h_B));
  checkBirenErrors(birenFreeHost(h_C));
  checkBirenErrors(birenFree(d_A));
  checkBirenErrors(birenFree(d_B));
  checkBirenErrors(birenFree(d_C));
  checkBirenErrors(birenEventDestroy(start));
  checkBirenErrors(birenEventDestroy(stop));
  checkBirenErrors(birenStreamDestroy(stream));
  return correct ? EXIT_SUCCESS : EXIT_FAILURE;
}

int main(int argc, char **argv) {
  checkBirenErrors(birenInit());
  printf("[Matrix Multiply Using BIREN] - Starting...\n");
  findBirenDevice(argc, argv);
  /* original: block size 32, 300 timed iterations */
  int block_size = sampleFullSize() ? 32 : 16;
  int nIter = sampleFullSize() ? 300 : 3;
  dim3 dimsA = birenDim3(5 * 2 * block_size, 5 * 2 * block_size, 1);
  dim3 dimsB = birenDim3(5 * 4 * block_size, 5 * 2 * block_size, 1);
  if (dimsA.x != dimsB.y) {
    printf("Error: outer matrix dimensions must be equal. (%d != %d)\n", dimsA.x, dimsB.y);
    exit(EXIT_FAILURE);
  }
  printf("MatrixA(%d,%d), MatrixB(%d,%d)\n", dimsA.x, dimsA.y, dimsB.x, dimsB.y);
  checkBirenErrors(birenProfilerStart());
  int matrix_result = MatrixMultiply(block_size, dimsA, dimsB, nIter);
  checkBirenErrors(birenProfilerStop());
  exit(matrix_result);
}
