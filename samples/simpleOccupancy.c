/* simpleOccupancy: the occupancy calculator (birenOccupancy*) picks a launch configuration.
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/0_Introduction/simpleOccupancy
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

static const int manualBlockSize = 32;

/* __global__ void square(int *array, int arrayCount) */
static void square(void **args) {
  int *array = *(int **)args[0];
  int arrayCount = *(int *)args[1];
  int idx = (int)(birenThreadIdx().x + birenBlockIdx().x * birenBlockDim().x);
  if (idx < arrayCount) array[idx] *= array[idx];
}

static double reportPotentialOccupancy(birenKernel_t kernel, int blockSize, size_t dynamicSMem) {
  int device, numBlocks;
  birenDeviceProp prop;
  checkBirenErrors(birenGetDevice(&device));
  checkBirenErrors(birenGetDeviceProperties(&prop, device));
  checkBirenErrors(birenOccupancyMaxActiveBlocksPerMultiprocessor(&numBlocks, kernel, blockSize, dynamicSMem));
  int activeWarps = numBlocks * blockSize / prop.warpSize;
  int maxWarps = prop.maxThreadsPerMultiProcessor / prop.warpSize;
  return (double)activeWarps / maxWarps;
}

static int launchConfig(int *array, int arrayCount, int automatic) {
  int blockSize, minGridSize, gridSize;
  size_t dynamicSMemUsage = 0;
  birenEvent_t start, end;
  float elapsedTime;
  checkBirenErrors(birenEventCreate(&start));
  checkBirenErrors(birenEventCreate(&end));
  if (automatic) {
    checkBirenErrors(birenOccupancyMaxPotentialBlockSize(&minGridSize, &blockSize, square, dynamicSMemUsage, arrayCount));
    printf("Suggested block size: %d\nMinimum grid size for maximum occupancy: %d\n", blockSize, minGridSize);
  } else {
    blockSize = manualBlockSize;
  }
  gridSize = (arrayCount + blockSize - 1) / blockSize;
  checkBirenErrors(birenEventRecord(start, NULL));
  checkBirenErrors(BIREN_LAUNCH(square, birenDim3((unsigned)gridSize, 1, 1), birenDim3((unsigned)blockSize, 1, 1), dynamicSMemUsage,
                                NULL, array, arrayCount));
  checkBirenErrors(birenEventRecord(end, NULL));
  checkBirenErrors(birenDeviceSynchronize());
  double potentialOccupancy = reportPotentialOccupancy(square, blockSize, dynamicSMemUsage);
  printf("Potential occupancy: %g%%\n", potentialOccupancy * 100);
  checkBirenErrors(birenEventElapsedTime(&elapsedTime, start, end));
  printf("Elapsed time: %gms\n", elapsedTime);
  checkBirenErrors(birenEventDestroy(start));
  checkBirenErrors(birenEventDestroy(end));
  return 0;
}

static int test(int automaticLaunchConfig, const int count) {
  int size = count * (int)sizeof(int);
  int *array = (int *)malloc(size), *dArray;
  for (int i = 0; i < count; i += 1) array[i] = i;
  checkBirenErrors(birenMalloc((void **)&dArray, size));
  checkBirenErrors(birenMemcpy(dArray, array, size, birenMemcpyHostToDevice));
  for (int i = 0; i < count; i += 1) array[i] = 0;
  launchConfig(dArray, count, automaticLaunchConfig);
  checkBirenErrors(birenMemcpy(array, dArray, size, birenMemcpyDeviceToHost));
  checkBirenErrors(birenFree(dArray));
  for (int i = 0; i < count; i += 1) {
    if (array[i] != i * i) {
      printf("element %d expected %d actual %d\n", i, i * i, array[i]);
      return 1;
    }
  }
  free(array);
  return 0;
}

int main(void) {
  checkBirenErrors(birenInit());
  const int count = sampleFullSize() ? 1000000 : 20000; /* original: 1000000 */
  printf("starting Simple Occupancy\n\n[ Manual configuration with %d threads per block ]\n", manualBlockSize);
  if (test(0, count)) {
    fprintf(stderr, "Test failed\n");
    return -1;
  }
  printf("\n[ Automatic, occupancy-based configuration ]\n");
  if (test(1, count)) {
    fprintf(stderr, "Test failed\n");
    return -1;
  }
  printf("\nTest PASSED\n");
  return 0;
}
