/* simpleZeroCopy: a kernel reads and writes mapped page-locked host memory (birenHostAlloc with birenHostAllocMapped, or birenHostRegister with -use_generic_memory).
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/0_Introduction/simpleZeroCopy
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
#include <stdint.h>

/* __global__ void vectorAddGPU(float *a, float *b, float *c, int N) */
static void vectorAddGPU(void **args) {
  float *a = *(float **)args[0], *b = *(float **)args[1], *c = *(float **)args[2];
  int N = *(int *)args[3];
  int idx = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  if (idx < N) c[idx] = a[idx] + b[idx];
}

#define MEMORY_ALIGNMENT 4096
#define ALIGN_UP(x, size) (((size_t)x + (size - 1)) & (~(size_t)(size - 1)))

static int run(int bPinGenericMemory) {
  int idev = 0;
  float *a, *b, *c, *a_UA = NULL, *b_UA = NULL, *c_UA = NULL, *d_a, *d_b, *d_c;
  birenDeviceProp deviceProp;
  printf(bPinGenericMemory ? "> Using Generic System Paged Memory (malloc)\n" : "> Using BIREN Host Allocated (birenHostAlloc)\n");
  checkBirenErrors(birenSetDevice(idev));
  checkBirenErrors(birenGetDeviceProperties(&deviceProp, idev));
  if (!deviceProp.canMapHostMemory) {
    fprintf(stderr, "Device %d does not support mapping CPU host memory!\n", idev);
    exit(EXIT_SUCCESS);
  }
  checkBirenErrors(birenSetDeviceFlags(birenDeviceMapHost));
  int nelem = sampleFullSize() ? 1048576 : 65536; /* original: 1048576 */
  size_t bytes = nelem * sizeof(float);
  if (bPinGenericMemory) {
    a_UA = (float *)malloc(bytes + MEMORY_ALIGNMENT);
    b_UA = (float *)malloc(bytes + MEMORY_ALIGNMENT);
    c_UA = (float *)malloc(bytes + MEMORY_ALIGNMENT);
    a = (float *)ALIGN_UP(a_UA, MEMORY_ALIGNMENT);
    b = (float *)ALIGN_UP(b_UA, MEMORY_ALIGNMENT);
    c = (float *)ALIGN_UP(c_UA, MEMORY_ALIGNMENT);
    checkBirenErrors(birenHostRegister(a, bytes, birenHostRegisterMapped));
    checkBirenErrors(birenHostRegister(b, bytes, birenHostRegisterMapped));
    checkBirenErrors(birenHostRegister(c, bytes, birenHostRegisterMapped));
  } else {
    unsigned flags = birenHostAllocMapped;
    checkBirenErrors(birenHostAlloc((void **)&a, bytes, flags));
    checkBirenErrors(birenHostAlloc((void **)&b, bytes, flags));
    checkBirenErrors(birenHostAlloc((void **)&c, bytes, flags));
  }
  for (int n = 0; n < nelem; n++) {
    a[n] = rand() / (float)RAND_MAX;
    b[n] = rand() / (float)RAND_MAX;
  }
  checkBirenErrors(birenHostGetDevicePointer((void **)&d_a, (void *)a, 0));
  checkBirenErrors(birenHostGetDevicePointer((void **)&d_b, (void *)b, 0));
  checkBirenErrors(birenHostGetDevicePointer((void **)&d_c, (void *)c, 0));
  printf("> vectorAddGPU kernel will add vectors using mapped CPU memory...\n");
  dim3 block = birenDim3(256, 1, 1);
  dim3 grid = birenDim3((unsigned)ceil(nelem / (float)block.x), 1, 1);
  checkBirenErrors(BIREN_LAUNCH(vectorAddGPU, grid, block, 0, NULL, d_a, d_b, d_c, nelem));
  checkBirenErrors(birenDeviceSynchronize());
  getLastBirenError("vectorAddGPU() execution failed");
  printf("> Checking the results from vectorAddGPU() ...\n");
  float errorNorm = 0.f, refNorm = 0.f;
  for (int n = 0; n < nelem; n++) {
    float ref = a[n] + b[n], diff = c[n] - ref;
    errorNorm += diff * diff;
    refNorm += ref * ref;
  }
  errorNorm = (float)sqrt((double)errorNorm);
  refNorm = (float)sqrt((double)refNorm);
  printf("> Releasing CPU memory...\n");
  if (bPinGenericMemory) {
    checkBirenErrors(birenHostUnregister(a));
    checkBirenErrors(birenHostUnregister(b));
    checkBirenErrors(birenHostUnregister(c));
    free(a_UA);
    free(b_UA);
    free(c_UA);
  } else {
    checkBirenErrors(birenFreeHost(a));
    checkBirenErrors(birenFreeHost(b));
    checkBirenErrors(birenFreeHost(c));
  }
  return errorNorm / refNorm < 1.e-6f ? 0 : 1;
}

int main(int argc, char **argv) {
  checkBirenErrors(birenInit());
  if (!checkBirenCapabilities(1, 2)) exit(EXIT_SUCCESS);
  /* The original runs one mode per invocation (-use_generic_memory); the port runs both unless
   * one is asked for. */
  int generic = getCmdLineArgument(argc, argv, "use_generic_memory") != NULL;
  int failed = run(generic);
  if (!generic && argc == 1) failed |= run(1);
  printf("%s\n", failed ? "Test FAILED" : "Test PASSED");
  exit(failed ? EXIT_FAILURE : EXIT_SUCCESS);
}
