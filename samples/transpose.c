/* transpose: copies and transposes of a matrix through static shared tiles (BIREN_SHARED), each checked against the CPU result. (The diagonal, fine- and coarse-grained variants of the original are not ported.)
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/6_Performance/transpose
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

#define TILE_DIM 32
#define BLOCK_ROWS 16

typedef struct {
  float *odata, *idata;
  int width, height;
  int bx, by, tx, ty;
} tctx;

static tctx ctx_of(void **args) {
  tctx c;
  c.odata = *(float **)args[0];
  c.idata = *(float **)args[1];
  c.width = *(int *)args[2];
  c.height = *(int *)args[3];
  c.bx = (int)birenBlockIdx().x;
  c.by = (int)birenBlockIdx().y;
  c.tx = (int)birenThreadIdx().x;
  c.ty = (int)birenThreadIdx().y;
  return c;
}

/* __global__ void copy(float *odata, float *idata, int width, int height) */
static void copy(void **args) {
  tctx c = ctx_of(args);
  int index = c.bx * TILE_DIM + c.tx + c.width * (c.by * TILE_DIM + c.ty);
  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) c.odata[index + i * c.width] = c.idata[index + i * c.width];
}

static void copySharedMem(void **args) {
  tctx c = ctx_of(args);
  BIREN_SHARED float tile[TILE_DIM][TILE_DIM];
  int xIndex = c.bx * TILE_DIM + c.tx, yIndex = c.by * TILE_DIM + c.ty;
  int index = xIndex + c.width * yIndex;
  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
    if (xIndex < c.width && yIndex < c.height) tile[c.ty + i][c.tx] = c.idata[index + i * c.width];
  birenSyncThreads();
  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
    if (xIndex < c.height && yIndex < c.width) c.odata[index + i * c.width] = tile[c.ty + i][c.tx];
}

static void transposeNaive(void **args) {
  tctx c = ctx_of(args);
  int xIndex = c.bx * TILE_DIM + c.tx, yIndex = c.by * TILE_DIM + c.ty;
  int index_in = xIndex + c.width * yIndex, index_out = yIndex + c.height * xIndex;
  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) c.odata[index_out + i] = c.idata[index_in + i * c.width];
}

static void transposeCoalesced(void **args) {
  tctx c = ctx_of(args);
  BIREN_SHARED float tile[TILE_DIM][TILE_DIM];
  int index_in = c.bx * TILE_DIM + c.tx + (c.by * TILE_DIM + c.ty) * c.width;
  int index_out = c.by * TILE_DIM + c.tx + (c.bx * TILE_DIM + c.ty) * c.height;
  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) tile[c.ty + i][c.tx] = c.idata[index_in + i * c.width];
  birenSyncThreads();
  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) c.odata[index_out + i * c.height] = tile[c.tx][c.ty + i];
}

static void transposeNoBankConflicts(void **args) {
  tctx c = ctx_of(args);
  BIREN_SHARED float tile[TILE_DIM][TILE_DIM + 1];
  int index_in = c.bx * TILE_DIM + c.tx + (c.by * TILE_DIM + c.ty) * c.width;
  int index_out = c.by * TILE_DIM + c.tx + (c.bx * TILE_DIM + c.ty) * c.height;
  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) tile[c.ty + i][c.tx] = c.idata[index_in + i * c.width];
  birenSyncThreads();
  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) c.odata[index_out + i * c.height] = tile[c.tx][c.ty + i];
}

static void computeTransposeGold(float *gold, float *idata, const int size_x, const int size_y) {
  for (int y = 0; y < size_y; ++y)
    for (int x = 0; x < size_x; ++x) gold[(x * size_y) + y] = idata[(y * size_x) + x];
}

/* helper_image.h's compareData(reference, data, len, epsilon, threshold): 1 when they agree. */
static int compareData(const float *ref, const float *data, unsigned len, float epsilon) {
  for (unsigned i = 0; i < len; i++)
    if (fabsf(ref[i] - data[i]) > epsilon) return 0;
  return 1;
}

int main(int argc, char **argv) {
  checkBirenErrors(birenInit());
  printf("Transpose Starting...\n\n");
  findBirenDevice(argc, argv);
  /* original: 1024 x 1024, 100 repetitions */
  int size_x = sampleFullSize() ? 1024 : 256, size_y = size_x;
  int num_reps = sampleFullSize() ? 100 : 2;
  dim3 grid = birenDim3(size_x / TILE_DIM, size_y / TILE_DIM, 1), threads = birenDim3(TILE_DIM, BLOCK_ROWS, 1);
  size_t mem_size = sizeof(float) * size_x * size_y;
  float *h_idata = (float *)malloc(mem_size), *h_odata = (float *)malloc(mem_size);
  float *transposeGold = (float *)malloc(mem_size), *gold;
  float *d_idata, *d_odata;
  checkBirenErrors(birenMalloc((void **)&d_idata, mem_size));
  checkBirenErrors(birenMalloc((void **)&d_odata, mem_size));
  for (int i = 0; i < size_x * size_y; ++i) h_idata[i] = (float)i;
  checkBirenErrors(birenMemcpy(d_idata, h_idata, mem_size, birenMemcpyHostToDevice));
  computeTransposeGold(transposeGold, h_idata, size_x, size_y);
  printf("\nMatrix size: %dx%d (%dx%d tiles), tile size: %dx%d, block size: %dx%d\n\n", size_x, size_y,
         size_x / TILE_DIM, size_y / TILE_DIM, TILE_DIM, TILE_DIM, TILE_DIM, BLOCK_ROWS);
  birenEvent_t start, stop;
  checkBirenErrors(birenEventCreate(&start));
  checkBirenErrors(birenEventCreate(&stop));
  struct { birenKernel_t k; const char *name; } kernels[] = {
      {copy, "simple copy       "},         {copySharedMem, "shared memory copy"},
      {transposeNaive, "naive             "}, {transposeCoalesced, "coalesced         "},
      {transposeNoBankConflicts, "optimized         "},
  };
  int success = 1;
  for (int k = 0; k < 5; k++) {
    birenKernel_t kernel = kernels[k].k;
    gold = (kernel == copy || kernel == copySharedMem) ? h_idata : transposeGold;
    checkBirenErrors(birenMemset(d_odata, 0, mem_size));
    checkBirenErrors(BIREN_LAUNCH(kernel, grid, threads, 0, NULL, d_odata, d_idata, size_x, size_y));
    checkBirenErrors(birenEventRecord(start, 0));
    for (int i = 0; i < num_reps; i++) checkBirenErrors(BIREN_LAUNCH(kernel, grid, threads, 0, NULL, d_odata, d_idata, size_x, size_y));
    checkBirenErrors(birenEventRecord(stop, 0));
    checkBirenErrors(birenEventSynchronize(stop));
    float kernelTime;
    checkBirenErrors(birenEventElapsedTime(&kernelTime, start, stop));
    checkBirenErrors(birenMemcpy(h_odata, d_odata, mem_size, birenMemcpyDeviceToHost));
    int res = compareData(gold, h_odata, size_x * size_y, 0.01f);
    if (!res) {
      printf("*** %s kernel FAILED ***\n", kernels[k].name);
      success = 0;
    }
    float kernelBandwidth = 2.0f * 1000.0f * mem_size / (1024 * 1024 * 1024) / (kernelTime / num_reps);
    printf("transpose %s, Throughput = %.4f GB/s, Time = %.5f ms, Size = %u fp32 elements, NumDevsUsed = %u, Workgroup = %u\n",
           kernels[k].name, kernelBandwidth, kernelTime / num_reps, (unsigned)(size_x * size_y), 1, TILE_DIM * BLOCK_ROWS);
  }
  free(h_idata);
  free(h_odata);
  free(transposeGold);
  birenFree(d_idata);
  birenFree(d_odata);
  checkBirenErrors(birenEventDestroy(start));
  checkBirenErrors(birenEventDestroy(stop));
  if (!success) {
    printf("Test failed!\n");
    exit(EXIT_FAILURE);
  }
  printf("Test passed\n");
  exit(EXIT_SUCCESS);
}
