/* convolutionSeparable: a separable 17-tap filter; the taps live in a constant symbol (BIREN_CONSTANT_ARRAY + birenMemcpyToSymbol), the tiles in static shared arrays (BIREN_SHARED). main.cpp, convolutionSeparable.cu and convolutionSeparable_gold.cpp in one file.
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/2_Concepts_and_Techniques/convolutionSeparable
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
#include <assert.h>

#define KERNEL_RADIUS 8
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)

/* __constant__ float c_Kernel[KERNEL_LENGTH]; */
BIREN_CONSTANT_ARRAY(float, c_Kernel, KERNEL_LENGTH);

static void setConvolutionKernel(float *h_Kernel) {
  checkBirenErrors(birenMemcpyToSymbol(c_Kernel, h_Kernel, KERNEL_LENGTH * sizeof(float), 0, birenMemcpyHostToDevice));
}

#define ROWS_BLOCKDIM_X 16
#define ROWS_BLOCKDIM_Y 4
#define ROWS_RESULT_STEPS 8
#define ROWS_HALO_STEPS 1

/* __global__ void convolutionRowsKernel(float *d_Dst, float *d_Src, int imageW, int imageH, int pitch) */
static void convolutionRowsKernel(void **args) {
  float *d_Dst = *(float **)args[0], *d_Src = *(float **)args[1];
  int imageW = *(int *)args[2], pitch = *(int *)args[4];
  BIREN_SHARED float s_Data[ROWS_BLOCKDIM_Y][(ROWS_RESULT_STEPS + 2 * ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X];
  dim3 tid = birenThreadIdx(), bid = birenBlockIdx();
  const int tx = (int)tid.x, ty = (int)tid.y;
  const int baseX = ((int)bid.x * ROWS_RESULT_STEPS - ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X + tx;
  const int baseY = (int)bid.y * ROWS_BLOCKDIM_Y + ty;
  d_Src += baseY * pitch + baseX;
  d_Dst += baseY * pitch + baseX;
  for (int i = ROWS_HALO_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i++)
    s_Data[ty][tx + i * ROWS_BLOCKDIM_X] = d_Src[i * ROWS_BLOCKDIM_X];
  for (int i = 0; i < ROWS_HALO_STEPS; i++)
    s_Data[ty][tx + i * ROWS_BLOCKDIM_X] = (baseX >= -i * ROWS_BLOCKDIM_X) ? d_Src[i * ROWS_BLOCKDIM_X] : 0;
  for (int i = ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS + ROWS_HALO_STEPS; i++)
    s_Data[ty][tx + i * ROWS_BLOCKDIM_X] = (imageW - baseX > i * ROWS_BLOCKDIM_X) ? d_Src[i * ROWS_BLOCKDIM_X] : 0;
  birenSyncThreads(); /* cg::sync(cta) */
  for (int i = ROWS_HALO_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i++) {
    float sum = 0;
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)
      sum += c_Kernel[KERNEL_RADIUS - j] * s_Data[ty][tx + i * ROWS_BLOCKDIM_X + j];
    d_Dst[i * ROWS_BLOCKDIM_X] = sum;
  }
}

static void convolutionRowsGPU(float *d_Dst, float *d_Src, int imageW, int imageH) {
  assert(ROWS_BLOCKDIM_X * ROWS_HALO_STEPS >= KERNEL_RADIUS);
  assert(imageW % (ROWS_RESULT_STEPS * ROWS_BLOCKDIM_X) == 0);
  assert(imageH % ROWS_BLOCKDIM_Y == 0);
  dim3 blocks = birenDim3(imageW / (ROWS_RESULT_STEPS * ROWS_BLOCKDIM_X), imageH / ROWS_BLOCKDIM_Y, 1);
  dim3 threads = birenDim3(ROWS_BLOCKDIM_X, ROWS_BLOCKDIM_Y, 1);
  checkBirenErrors(BIREN_LAUNCH(convolutionRowsKernel, blocks, threads, 0, NULL, d_Dst, d_Src, imageW, imageH, imageW));
  getLastBirenError("convolutionRowsKernel() execution failed\n");
}

#define COLUMNS_BLOCKDIM_X 16
#define COLUMNS_BLOCKDIM_Y 8
#define COLUMNS_RESULT_STEPS 8
#define COLUMNS_HALO_STEPS 1

/* __global__ void convolutionColumnsKernel(float *d_Dst, float *d_Src, int imageW, int imageH, int pitch) */
static void convolutionColumnsKernel(void **args) {
  float *d_Dst = *(float **)args[0], *d_Src = *(float **)args[1];
  int imageH = *(int *)args[3], pitch = *(int *)args[4];
  BIREN_SHARED float s_Data[COLUMNS_BLOCKDIM_X][(COLUMNS_RESULT_STEPS + 2 * COLUMNS_HALO_STEPS) * COLUMNS_BLOCKDIM_Y + 1];
  dim3 tid = birenThreadIdx(), bid = birenBlockIdx();
  const int tx = (int)tid.x, ty = (int)tid.y;
  const int baseX = (int)bid.x * COLUMNS_BLOCKDIM_X + tx;
  const int baseY = ((int)bid.y * COLUMNS_RESULT_STEPS - COLUMNS_HALO_STEPS) * COLUMNS_BLOCKDIM_Y + ty;
  d_Src += baseY * pitch + baseX;
  d_Dst += baseY * pitch + baseX;
  for (int i = COLUMNS_HALO_STEPS; i < COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS; i++)
    s_Data[tx][ty + i * COLUMNS_BLOCKDIM_Y] = d_Src[i * COLUMNS_BLOCKDIM_Y * pitch];
  for (int i = 0; i < COLUMNS_HALO_STEPS; i++)
    s_Data[tx][ty + i * COLUMNS_BLOCKDIM_Y] = (baseY >= -i * COLUMNS_BLOCKDIM_Y) ? d_Src[i * COLUMNS_BLOCKDIM_Y * pitch] : 0;
  for (int i = COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS; i < COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS + COLUMNS_HALO_STEPS; i++)
    s_Data[tx][ty + i * COLUMNS_BLOCKDIM_Y] =
        (imageH - baseY > i * COLUMNS_BLOCKDIM_Y) ? d_Src[i * COLUMNS_BLOCKDIM_Y * pitch] : 0;
  birenSyncThreads();
  for (int i = COLUMNS_HALO_STEPS; i < COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS; i++) {
    float sum = 0;
    for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)
      sum += c_Kernel[KERNEL_RADIUS - j] * s_Data[tx][ty + i * COLUMNS_BLOCKDIM_Y + j];
    d_Dst[i * COLUMNS_BLOCKDIM_Y * pitch] = sum;
  }
}

static void convolutionColumnsGPU(float *d_Dst, float *d_Src, int imageW, int imageH) {
  assert(COLUMNS_BLOCKDIM_Y * COLUMNS_HALO_STEPS >= KERNEL_RADIUS);
  assert(imageW % COLUMNS_BLOCKDIM_X == 0);
  assert(imageH % (COLUMNS_RESULT_STEPS * COLUMNS_BLOCKDIM_Y) == 0);
  dim3 blocks = birenDim3(imageW / COLUMNS_BLOCKDIM_X, imageH / (COLUMNS_RESULT_STEPS * COLUMNS_BLOCKDIM_Y), 1);
  dim3 threads = birenDim3(COLUMNS_BLOCKDIM_X, COLUMNS_BLOCKDIM_Y, 1);
  checkBirenErrors(BIREN_LAUNCH(convolutionColumnsKernel, blocks, threads, 0, NULL, d_Dst, d_Src, imageW, imageH, imageW));
  getLastBirenError("convolutionColumnsKernel() execution failed\n");
}

/* convolutionSeparable_gold.cpp */
static void convolutionRowCPU(float *h_Dst, float *h_Src, float *h_Kernel, int imageW, int imageH, int kernelR) {
  for (int y = 0; y < imageH; y++)
    for (int x = 0; x < imageW; x++) {
      float sum = 0;
      for (int k = -kernelR; k <= kernelR; k++) {
        int d = x + k;
        if (d >= 0 && d < imageW) sum += h_Src[y * imageW + d] * h_Kernel[kernelR - k];
      }
      h_Dst[y * imageW + x] = sum;
    }
}

static void convolutionColumnCPU(float *h_Dst, float *h_Src, float *h_Kernel, int imageW, int imageH, int kernelR) {
  for (int y = 0; y < imageH; y++)
    for (int x = 0; x < imageW; x++) {
      float sum = 0;
      for (int k = -kernelR; k <= kernelR; k++) {
        int d = y + k;
        if (d >= 0 && d < imageH) sum += h_Src[d * imageW + x] * h_Kernel[kernelR - k];
      }
      h_Dst[y * imageW + x] = sum;
    }
}

int main(int argc, char **argv) {
  checkBirenErrors(birenInit());
  const int imageW = sampleFullSize() ? 3072 : 512; /* original: 3072 x 3072, 16 iterations */
  const int imageH = sampleFullSize() ? 3072 : 512;
  const int iterations = sampleFullSize() ? 16 : 2;
  printf("[%s] - Starting...\n", argv[0]);
  findBirenDevice(argc, argv);
  printf("Image Width x Height = %i x %i\n\n", imageW, imageH);
  printf("Allocating and initializing host arrays...\n");
  float *h_Kernel = (float *)malloc(KERNEL_LENGTH * sizeof(float));
  float *h_Input = (float *)malloc(imageW * imageH * sizeof(float));
  float *h_Buffer = (float *)malloc(imageW * imageH * sizeof(float));
  float *h_OutputCPU = (float *)malloc(imageW * imageH * sizeof(float));
  float *h_OutputGPU = (float *)malloc(imageW * imageH * sizeof(float));
  srand(200);
  for (unsigned int i = 0; i < KERNEL_LENGTH; i++) h_Kernel[i] = (float)(rand() % 16);
  for (unsigned i = 0; i < (unsigned)(imageW * imageH); i++) h_Input[i] = (float)(rand() % 16);
  printf("Allocating and initializing BIREN arrays...\n");
  float *d_Input, *d_Output, *d_Buffer;
  checkBirenErrors(birenMalloc((void **)&d_Input, imageW * imageH * sizeof(float)));
  checkBirenErrors(birenMalloc((void **)&d_Output, imageW * imageH * sizeof(float)));
  checkBirenErrors(birenMalloc((void **)&d_Buffer, imageW * imageH * sizeof(float)));
  setConvolutionKernel(h_Kernel);
  checkBirenErrors(birenMemcpy(d_Input, h_Input, imageW * imageH * sizeof(float), birenMemcpyHostToDevice));
  printf("Running GPU convolution (%u identical iterations)...\n\n", iterations);
  double t0 = 0;
  for (int i = -1; i < iterations; i++) {
    if (i == 0) {
      checkBirenErrors(birenDeviceSynchronize());
      t0 = sdkNowMs();
    }
    convolutionRowsGPU(d_Buffer, d_Input, imageW, imageH);
    convolutionColumnsGPU(d_Output, d_Buffer, imageW, imageH);
  }
  checkBirenErrors(birenDeviceSynchronize());
  double gpuTime = (sdkNowMs() - t0) / iterations / 1000.0;
  printf("convolutionSeparable, Throughput = %.4f MPixels/sec, Time = %.5f s, Size = %u Pixels\n",
         (1.0e-6 * (double)(imageW * imageH) / gpuTime), gpuTime, (imageW * imageH));
  printf("\nReading back GPU results...\n\n");
  checkBirenErrors(birenMemcpy(h_OutputGPU, d_Output, imageW * imageH * sizeof(float), birenMemcpyDeviceToHost));
  printf("Checking the results...\n");
  printf(" ...running convolutionRowCPU()\n");
  convolutionRowCPU(h_Buffer, h_Input, h_Kernel, imageW, imageH, KERNEL_RADIUS);
  printf(" ...running convolutionColumnCPU()\n");
  convolutionColumnCPU(h_OutputCPU, h_Buffer, h_Kernel, imageW, imageH, KERNEL_RADIUS);
  printf(" ...comparing the results\n");
  double sum = 0, delta = 0;
  for (unsigned i = 0; i < (unsigned)(imageW * imageH); i++) {
    delta += (h_OutputGPU[i] - h_OutputCPU[i]) * (h_OutputGPU[i] - h_OutputCPU[i]);
    sum += h_OutputCPU[i] * h_OutputCPU[i];
  }
  double L2norm = sqrt(delta / sum);
  printf(" ...Relative L2 norm: %E\n\n", L2norm);
  printf("Shutting down...\n");
  checkBirenErrors(birenFree(d_Buffer));
  checkBirenErrors(birenFree(d_Output));
  checkBirenErrors(birenFree(d_Input));
  free(h_OutputGPU);
  free(h_OutputCPU);
  free(h_Buffer);
  free(h_Input);
  free(h_Kernel);
  if (L2norm > 1e-6) {
    printf("Test failed!\n");
    exit(EXIT_FAILURE);
  }
  printf("Test passed\n");
  exit(EXIT_SUCCESS);
}
