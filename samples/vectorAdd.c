/* vectorAdd: element-wise addition of two vectors.
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/0_Introduction/vectorAdd
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

/* __global__ void vectorAdd(const float *A, const float *B, float *C, int numElements) */
static void vectorAdd(void **args) {
  const float *A = *(const float **)args[0];
  const float *B = *(const float **)args[1];
  float *C = *(float **)args[2];
  int numElements = *(int *)args[3];
  int i = (int)(birenBlockDim().x * birenBlockIdx().x + birenThreadIdx().x);
  if (i < numElements) C[i] = A[i] + B[i] + 0.0f;
}

int main(void) {
  checkBirenErrors(birenInit());
  int numElements = 50000;
  size_t size = numElements * sizeof(float);
  printf("[Vector addition of %d elements]\n", numElements);
  float *h_A = (float *)malloc(size), *h_B = (float *)malloc(size), *h_C = (float *)malloc(size);
  if (h_A == NULL || h_B == NULL || h_C == NULL) {
    fprintf(stderr, "Failed to allocate host vectors!\n");
    exit(EXIT_FAILURE);
  }
  for (int i = 0; i < numElements; ++i) {
    h_A[i] = rand() / (float)RAND_MAX;
    h_B[i] = rand() / (float)RAND_MAX;
  }
  float *d_A = NULL, *d_B = NULL, *d_C = NULL;
  checkBirenErrors(birenMalloc((void **)&d_A, size));
  checkBirenErrors(birenMalloc((void **)&d_B, size));
  checkBirenErrors(birenMalloc((void **)&d_C, size));
  printf("Copy input data from the host memory to the BIREN device\n");
  checkBirenErrors(birenMemcpy(d_A, h_A, size, birenMemcpyHostToDevice));
  checkBirenErrors(birenMemcpy(d_B, h_B, size, birenMemcpyHostToDevice));
  int threadsPerBlock = 256;
  int blocksPerGrid = (numElements + threadsPerBlock - 1) / threadsPerBlock;
  printf("BIREN kernel launch with %d blocks of %d threads\n", blocksPerGrid, threadsPerBlock);
  checkBirenErrors(BIREN_LAUNCH(vectorAdd, birenDim3((unsigned)blocksPerGrid, 1, 1), birenDim3((unsigned)threadsPerBlock, 1, 1), 0,
                                NULL, d_A, d_B, d_C, numElements));
  getLastBirenError("vectorAdd kernel launch failed");
  printf("Copy output data from the BIREN device to the host memory\n");
  checkBirenErrors(birenMemcpy(h_C, d_C, size, birenMemcpyDeviceToHost));
  for (int i = 0; i < numElements; ++i) {
    if (fabs(h_A[i] + h_B[i] - h_C[i]) > 1e-5) {
      fprintf(stderr, "Result verification failed at element %d!\n", i);
      exit(EXIT_FAILURE);
    }
  }
  printf("Test PASSED\n");
  checkBirenErrors(birenFree(d_A));
  checkBirenErrors(birenFree(d_B));
  checkBirenErrors(birenFree(d_C));
  free(h_A);
  free(h_B);
  free(h_C);
  printf("Done\n");
  return 0;
}
