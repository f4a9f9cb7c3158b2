/* simpleSurfaceWrite: filling an accelerator array through a surface object (surf2Dwrite in a
 * kernel), then rotating the image by sampling the array through a texture (bilinear, wrap,
 * normalized coordinates).
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/0_Introduction/simpleSurfaceWrite
 * (https://github.com/NVIDIA/cuda-samples): cuda -> biren, the kernels as BIREN_KERNEL
 * functions, the program's structure kept. The original loads teapot512.pgm, writes output.pgm
 * and compares it with ref_rotated.pgm, an image made by the hardware; this port makes its own
 * image (as simpleTexture.c does), writes no file, and compares the result with a CPU rendition
 * of CUDA's fetch rules within the original's MIN_EPSILON_ERROR. The original is 512 x 512;
 * make test runs 128 x 128 (BIREN_SAMPLES_FULL=1: 512 x 512).
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

#define MIN_EPSILON_ERROR 5e-3f

static const float angle = 0.5f; /* angle to rotate image by (in radians) */
static const char *sampleName = "simpleSurfaceWrite";

/* Write to a cuArray (texture data source) using surface writes */
BIREN_KERNEL(surfaceWriteKernel, (float *) gIData, (int) width, (int) height, (birenSurfaceObject_t) outputSurface) {
  /* calculate surface coordinates */
  unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
  (void)height;
  /* read from global memory and write to cuarray (via surface reference) */
  birenSurf2DwriteFloat(gIData[y * (unsigned)width + x], outputSurface, (int)x * 4, (int)y, birenBoundaryModeTrap);
}

/* Transform an image using texture lookups */
BIREN_KERNEL(transformKernel, (float *) gOData, (int) width, (int) height, (float) theta, (birenTextureObject_t) tex) {
  /* calculate normalized texture coordinates */
  unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
  float u = (float)x / (float)width;
  float v = (float)y / (float)height;
  /* transform coordinates */
  u -= 0.5f;
  v -= 0.5f;
  float tu = u * cosf(theta) - v * sinf(theta) + 0.5f;
  float tv = v * cosf(theta) + u * sinf(theta) + 0.5f;
  /* read from texture and write to global memory */
  gOData[y * (unsigned)width + x] = birenTex2DFloat(tex, tu, tv);
}

/* helper_image.h's compareData(reference, data, len, epsilon, threshold): 1 unless more than
 * threshold x len elements differ by more than epsilon. */
static int compareData(const float *ref, const float *data, unsigned len, float epsilon, float threshold) {
  unsigned errors = 0;
  for (unsigned i = 0; i < len; i++)
    if (fabsf(ref[i] - data[i]) > epsilon) errors++;
  if (errors) printf("compareData: %u of %u elements differ\n", errors, len);
  return (float)errors <= threshold * (float)len;
}

static int runTest(int argc, char **argv) {
  /* Use command-line specified device, otherwise device 0 */
  int devID = findBirenDevice(argc, argv);
  /* Get number of SMs on this GPU */
  birenDeviceProp deviceProps;
  checkBirenErrors(birenGetDeviceProperties(&deviceProps, devID));
  printf("Device [%s] has %d Multi-Processors, SM %d.%d\n", deviceProps.name, deviceProps.multiProcessorCount,
         deviceProps.major, deviceProps.minor);

  /* The image (in place of teapot512.pgm) */
  unsigned int width = sampleFullSize() ? 512 : 128, height = width;
  unsigned int size = width * height * sizeof(float);
  float *hData = (float *)malloc(size);
  sampleImage(hData, width, height);
  printf("Made a %u x %u pixels image\n", width, height);

  /* The reference (in place of ref_rotated.pgm): CUDA's fetch rules on the CPU */
  float *hDataRef = (float *)malloc(size);
  for (unsigned y = 0; y < height; y++)
    for (unsigned x = 0; x < width; x++) {
      float u = (float)x / (float)width - 0.5f, v = (float)y / (float)height - 0.5f;
      float tu = u * cosf(angle) - v * sinf(angle) + 0.5f, tv = v * cosf(angle) + u * sinf(angle) + 0.5f;
      hDataRef[y * width + x] = sampleWrapLinear(hData, (int)width, (int)height, tu, tv);
    }

  /* Allocate device memory for result */
  float *dData = NULL;
  checkBirenErrors(birenMalloc((void **)&dData, size));
  /* Allocate array and copy image data */
  birenChannelFormatDesc channelDesc = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  birenArray_t cuArray;
  checkBirenErrors(birenMallocArray(&cuArray, &channelDesc, width, height, birenArraySurfaceLoadStore));
  dim3 dimBlock = birenDim3(8, 8, 1);
  dim3 dimGrid = birenDim3(width / dimBlock.x, height / dimBlock.y, 1);

  birenSurfaceObject_t outputSurface;
  birenResourceDesc surfRes;
  memset(&surfRes, 0, sizeof(birenResourceDesc));
  surfRes.resType = birenResourceTypeArray;
  surfRes.res.array.array = cuArray;
  checkBirenErrors(birenCreateSurfaceObject(&outputSurface, &surfRes));
  checkBirenErrors(birenMemcpy(dData, hData, size, birenMemcpyHostToDevice));
  checkBirenErrors(BIREN_LAUNCH(surfaceWriteKernel, dimGrid, dimBlock, 0, NULL, dData, (int)width, (int)height, outputSurface));

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

  /* Warmup */
  checkBirenErrors(BIREN_LAUNCH(transformKernel, dimGrid, dimBlock, 0, NULL, dData, (int)width, (int)height, angle, tex));
  checkBirenErrors(birenDeviceSynchronize());
  double t0 = sdkNowMs();
  /* Execute the kernel */
  checkBirenErrors(BIREN_LAUNCH(transformKernel, dimGrid, dimBlock, 0, NULL, dData, (int)width, (int)height, angle, tex));
  /* Check if kernel execution generated an error */
  getLastBirenError("Kernel execution failed");
  checkBirenErrors(birenDeviceSynchronize());
  double ms = sdkNowMs() - t0;
  printf("Processing time: %f (ms)\n", ms);
  printf("%.2f Mpixels/sec\n", (width * height / (ms / 1000.0)) / 1e6);

  /* Allocate mem for the result on host side and copy the result from device to host */
  float *hOData = (float *)malloc(size);
  checkBirenErrors(birenMemcpy(hOData, dData, size, birenMemcpyDeviceToHost));
  printf("Comparing with the CPU rendition of the fetch rules\n");
  int testResult = compareData(hOData, hDataRef, width * height, MIN_EPSILON_ERROR, 0.0f);

  checkBirenErrors(birenDestroySurfaceObject(outputSurface));
  checkBirenErrors(birenDestroyTextureObject(tex));
  checkBirenErrors(birenFree(dData));
  checkBirenErrors(birenFreeArray(cuArray));
  free(hData);
  free(hDataRef);
  free(hOData);
  return testResult;
}

int main(int argc, char **argv) {
  checkBirenErrors(birenInit());
  printf("%s starting...\n", sampleName);
  int testResult = runTest(argc, argv);
  printf("%s completed, returned %s\n", sampleName, testResult ? "OK" : "ERROR!");
  exit(testResult ? EXIT_SUCCESS : EXIT_FAILURE);
}
