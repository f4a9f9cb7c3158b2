/* simpleTexture: rotating an image by sampling it through a 2-D texture (bilinear, wrap, normalized coordinates).
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/0_Introduction/simpleTexture
 * (https://github.com/NVIDIA/cuda-samples): cuda -> biren, the kernel rewritten as a C function,
 * the program's structure kept. The original rotates teapot512.pgm and compares the result with
 * ref_rotated.pgm, an image made by the hardware; this port makes its own image (a smooth
 * pattern with edges) and checks the result against a CPU rendition of CUDA's fetch rules
 * (texel centres, wrap, bilinear weights in 9-bit fixed point), within the original's
 * MAX_EPSILON_ERROR. The original carries this notice:
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
#include <math.h>

#define MAX_EPSILON_ERROR 5e-3f
static const float angle = 0.5f; /* angle to rotate image by (in radians) */

/* __global__ void transformKernel(float *outputData, int width, int height, float theta,
 *                                 cudaTextureObject_t tex) */
BIREN_KERNEL(transformKernel, (float *) outputData, (int) width, (int) height, (float) theta,
             (birenTextureObject_t) tex) {
  unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
  float u = (float)x - (float)width / 2;
  float v = (float)y - (float)height / 2;
  float tu = u * cosf(theta) - v * sinf(theta);
  float tv = v * cosf(theta) + u * sinf(theta);
  tu /= (float)width;
  tv /= (float)height;
  /* read from texture and write to global memory */
  outputData[y * width + x] = birenTex2DFloat(tex, tu + 0.5f, tv + 0.5f);
}

int main(void) {
  checkBirenErrors(birenInit());
  unsigned int width = sampleFullSize() ? 512 : 128, height = width;
  unsigned int size = width * height * sizeof(float);
  printf("simpleTexture starting...\n");
  float *hData = (float *)malloc(size);
  sampleImage(hData, width, height);
  printf("Loaded a %u x %u pixels image\n", width, height);

  float *dData = NULL;
  checkBirenErrors(birenMalloc((void **)&dData, size));
  birenChannelFormatDesc channelDesc = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t cuArray;
  checkBirenErrors(birenMallocArray(&cuArray, &channelDesc, width, height, 0));
  checkBirenErrors(birenMemcpyToArray(cuArray, 0, 0, hData, size, birenMemcpyHostToDevice));

  birenTextureObject_t tex;
  birenResourceDesc texRes;
  memset(&texRes, 0, sizeof(birenResourceDesc));
  texRes.resType = birenResourceTypeArray;
  texRes.res.array.array = cuArray;
  birenTextureDesc texDescr;
  memset(&texDescr, 0, sizeof(birenTextureDesc));
  texDescr.normalizedCoords = 1;
  texDescr.filterMode = birenFilterModeLinear;
  texDescr.addressMode[0] = birenAddressModeWrap;
  texDescr.addressMode[1] = birenAddressModeWrap;
  texDescr.readMode = birenReadModeElementType;
  checkBirenErrors(birenCreateTextureObject(&tex, &texRes, &texDescr, NULL));

  dim3 dimBlock = birenDim3(8, 8, 1);
  dim3 dimGrid = birenDim3(width / dimBlock.x, height / dimBlock.y, 1);
  /* Warmup */
  checkBirenErrors(BIREN_LAUNCH(transformKernel, dimGrid, dimBlock, 0, NULL, dData, (int)width, (int)height, angle, tex));
  checkBirenErrors(birenDeviceSynchronize());
  double t0 = sdkNowMs();
  /* Execute the kernel */
  checkBirenErrors(BIREN_LAUNCH(transformKernel, dimGrid, dimBlock, 0, NULL, dData, (int)width, (int)height, angle, tex));
  checkBirenErrors(birenDeviceSynchronize());
  double ms = sdkNowMs() - t0;
  printf("Processing time: %f (ms)\n", ms);
  printf("%.2f Mpixels/sec\n", (width * height / (ms / 1000.0)) / 1e6);

  float *hOutputData = (float *)malloc(size);
  checkBirenErrors(birenMemcpy(hOutputData, dData, size, birenMemcpyDeviceToHost));
  float worst = 0;
  for (unsigned y = 0; y < height; y++)
    for (unsigned x = 0; x < width; x++) {
      float u = (float)x - (float)width / 2, v = (float)y - (float)height / 2;
      float tu = (u * cosf(angle) - v * sinf(angle)) / (float)width;
      float tv = (v * cosf(angle) + u * sinf(angle)) / (float)height;
      float d = fabsf(hOutputData[y * width + x] - sampleWrapLinear(hData, (int)width, (int)height, tu + 0.5f, tv + 0.5f));
      if (d > worst) worst = d;
    }
  int ok = worst <= MAX_EPSILON_ERROR;
  printf("Comparing against the CPU rendition of the fetch rules: largest difference %g\n", worst);
  checkBirenErrors(birenDestroyTextureObject(tex));
  checkBirenErrors(birenFree(dData));
  checkBirenErrors(birenFreeArray(cuArray));
  free(hData);
  free(hOutputData);
  printf("simpleTexture completed, returned %s\n", ok ? "OK" : "ERROR!");
  exit(ok ? EXIT_SUCCESS : EXIT_FAILURE);
}
