/* simplePitchLinearTexture: shifting a matrix's elements through textures with wrap addressing
 * (periodic boundary conditions), once from pitched linear memory (a pitch2D resource) and
 * once from an accelerator array, to show the difference in using each.
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples,
 * Samples/0_Introduction/simplePitchLinearTexture (https://github.com/NVIDIA/cuda-samples):
 * cuda -> biren, the kernels as BIREN_KERNEL functions, the program's structure, its reference
 * and its check (helper_image.h's compareData with the original's epsilon 0 and threshold
 * 0.15) kept. The original is 2048 x 2048 with 100 repetitions; make test runs 256 x 256 with 2
 * (BIREN_SAMPLES_FULL=1: the original's). As in the original, the pitch2D resource is given the
 * host rows' pitch, which equals birenMallocPitch's here (rows of a multiple of 512 bytes).
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

#define TILE_DIM 16 /* tile/block size */

static const char *sSDKsample = "simplePitchLinearTexture";

/* NB: (1) the second argument "pitch" is in elements, not bytes
 *     (2) normalized coordinates are used (required for wrap address mode) */

/* Shifts matrix elements using pitch linear array */
BIREN_KERNEL(shiftPitchLinear, (float *) odata, (int) pitch, (int) width, (int) height, (int) shiftX, (int) shiftY,
             (birenTextureObject_t) texRefPL) {
  int xid = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  int yid = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  odata[yid * pitch + xid] = birenTex2DFloat(texRefPL, (float)(xid + shiftX) / (float)width, (float)(yid + shiftY) / (float)height);
}

/* Shifts matrix elements using regular array */
BIREN_KERNEL(shiftArray, (float *) odata, (int) pitch, (int) width, (int) height, (int) shiftX, (int) shiftY,
             (birenTextureObject_t) texRefArray) {
  int xid = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  int yid = (int)(blockIdx.y * blockDim.y + threadIdx.y);
  odata[yid * pitch + xid] = birenTex2DFloat(texRefArray, (float)(xid + shiftX) / (float)width, (float)(yid + shiftY) / (float)height);
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
  /* Set array size (original: 2048 x 2048) */
  const int nx = sampleFullSize() ? 2048 : 256;
  const int ny = nx;
  const int num_reps = sampleFullSize() ? 100 : 2; /* NUM_REPS */
  /* Setup shifts applied to x and y data */
  const int x_shift = 5;
  const int y_shift = 7;
  int bTestResult = 1;

  if ((nx % TILE_DIM != 0) || (ny % TILE_DIM != 0)) {
    printf("nx and ny must be multiples of TILE_DIM\n");
    exit(EXIT_FAILURE);
  }
  /* Setup execution configuration parameters */
  dim3 dimGrid = birenDim3(nx / TILE_DIM, ny / TILE_DIM, 1), dimBlock = birenDim3(TILE_DIM, TILE_DIM, 1);
  findBirenDevice(argc, argv);

  /* Events for timing */
  birenEvent_t start, stop;
  checkBirenErrors(birenEventCreate(&start));
  checkBirenErrors(birenEventCreate(&stop));

  /* Host allocation and initialization */
  float *h_idata = (float *)malloc(sizeof(float) * nx * ny);
  float *h_odata = (float *)malloc(sizeof(float) * nx * ny);
  float *gold = (float *)malloc(sizeof(float) * nx * ny);
  for (int i = 0; i < nx * ny; ++i) h_idata[i] = (float)i;

  /* Device memory allocation: pitch linear input data */
  float *d_idataPL;
  size_t d_pitchBytes;
  checkBirenErrors(birenMallocPitch((void **)&d_idataPL, &d_pitchBytes, nx * sizeof(float), ny));
  /* Array input data */
  birenArray_t d_idataArray;
  birenChannelFormatDesc channelDesc = birenCreateChannelDesc(32, 0, 0, 0, birenChannelFormatKindFloat);
  checkBirenErrors(birenMallocArray(&d_idataArray, &channelDesc, nx, ny, 0));
  /* Pitch linear output data */
  float *d_odata;
  checkBirenErrors(birenMallocPitch((void **)&d_odata, &d_pitchBytes, nx * sizeof(float), ny));

  /* Copy host data to device: pitch linear, then the array */
  size_t h_pitchBytes = nx * sizeof(float);
  checkBirenErrors(birenMemcpy2D(d_idataPL, d_pitchBytes, h_idata, h_pitchBytes, nx * sizeof(float), ny, birenMemcpyHostToDevice));
  checkBirenErrors(birenMemcpyToArray(d_idataArray, 0, 0, h_idata, nx * ny * sizeof(float), birenMemcpyHostToDevice));

  birenTextureObject_t texRefPL;
  birenTextureObject_t texRefArray;
  birenResourceDesc texRes;
  memset(&texRes, 0, sizeof(birenResourceDesc));
  texRes.resType = birenResourceTypePitch2D;
  texRes.res.pitch2D.devPtr = d_idataPL;
  texRes.res.pitch2D.desc = channelDesc;
  texRes.res.pitch2D.width = nx;
  texRes.res.pitch2D.height = ny;
  texRes.res.pitch2D.pitchInBytes = h_pitchBytes;
  birenTextureDesc texDescr;
  memset(&texDescr, 0, sizeof(birenTextureDesc));
  texDescr.normalizedCoords = 1;
  texDescr.filterMode = birenFilterModePoint;
  texDescr.addressMode[0] = birenAddressModeWrap;
  texDescr.addressMode[1] = birenAddressModeWrap;
  texDescr.readMode = birenReadModeElementType;
  checkBirenErrors(birenCreateTextureObject(&texRefPL, &texRes, &texDescr, NULL));
  memset(&texRes, 0, sizeof(birenResourceDesc));
  memset(&texDescr, 0, sizeof(birenTextureDesc));
  texRes.resType = birenResourceTypeArray;
  texRes.res.array.array = d_idataArray;
  texDescr.normalizedCoords = 1;
  texDescr.filterMode = birenFilterModePoint;
  texDescr.addressMode[0] = birenAddressModeWrap;
  texDescr.addressMode[1] = birenAddressModeWrap;
  texDescr.readMode = birenReadModeElementType;
  checkBirenErrors(birenCreateTextureObject(&texRefArray, &texRes, &texDescr, NULL));

  /* Reference calculation */
  for (int j = 0; j < ny; ++j) {
    int jshift = (j + y_shift) % ny;
    for (int i = 0; i < nx; ++i) {
      int ishift = (i + x_shift) % nx;
      gold[j * nx + i] = h_idata[jshift * nx + ishift];
    }
  }

  /* Run ShiftPitchLinear kernel */
  checkBirenErrors(birenMemset2D(d_odata, d_pitchBytes, 0, nx * sizeof(float), ny));
  checkBirenErrors(birenEventRecord(start, 0));
  for (int i = 0; i < num_reps; ++i)
    checkBirenErrors(BIREN_LAUNCH(shiftPitchLinear, dimGrid, dimBlock, 0, NULL, d_odata, (int)(d_pitchBytes / sizeof(float)),
                                  nx, ny, x_shift, y_shift, texRefPL));
  checkBirenErrors(birenEventRecord(stop, 0));
  checkBirenErrors(birenEventSynchronize(stop));
  float timePL;
  checkBirenErrors(birenEventElapsedTime(&timePL, start, stop));
  /* Check results */
  checkBirenErrors(birenMemcpy2D(h_odata, h_pitchBytes, d_odata, d_pitchBytes, nx * sizeof(float), ny, birenMemcpyDeviceToHost));
  int res = compareData(gold, h_odata, nx * ny, 0.0f, 0.15f);
  if (!res) {
    printf("*** shiftPitchLinear failed ***\n");
    bTestResult = 0;
  }

  /* Run ShiftArray kernel */
  checkBirenErrors(birenMemset2D(d_odata, d_pitchBytes, 0, nx * sizeof(float), ny));
  checkBirenErrors(birenEventRecord(start, 0));
  for (int i = 0; i < num_reps; ++i)
    checkBirenErrors(BIREN_LAUNCH(shiftArray, dimGrid, dimBlock, 0, NULL, d_odata, (int)(d_pitchBytes / sizeof(float)), nx, ny,
                                  x_shift, y_shift, texRefArray));
  checkBirenErrors(birenEventRecord(stop, 0));
  checkBirenErrors(birenEventSynchronize(stop));
  float timeArray;
  checkBirenErrors(birenEventElapsedTime(&timeArray, start, stop));
  /* Check results */
  checkBirenErrors(birenMemcpy2D(h_odata, h_pitchBytes, d_odata, d_pitchBytes, nx * sizeof(float), ny, birenMemcpyDeviceToHost));
  res = compareData(gold, h_odata, nx * ny, 0.0f, 0.15f);
  if (!res) {
    printf("*** shiftArray failed ***\n");
    bTestResult = 0;
  }

  float bandwidthPL = 2.f * 1000.f * nx * ny * sizeof(float) / (1.e+9f) / (timePL / num_reps);
  float bandwidthArray = 2.f * 1000.f * nx * ny * sizeof(float) / (1.e+9f) / (timeArray / num_reps);
  printf("\nBandwidth (GB/s) for pitch linear: %.2e; for array: %.2e\n", bandwidthPL, bandwidthArray);
  float fetchRatePL = nx * ny / 1.e+6f / (timePL / (1000.0f * num_reps));
  float fetchRateArray = nx * ny / 1.e+6f / (timeArray / (1000.0f * num_reps));
  printf("\nTexture fetch rate (Mpix/s) for pitch linear: %.2e; for array: %.2e\n\n", fetchRatePL, fetchRateArray);

  /* Cleanup */
  free(h_idata);
  free(h_odata);
  free(gold);
  checkBirenErrors(birenDestroyTextureObject(texRefPL));
  checkBirenErrors(birenDestroyTextureObject(texRefArray));
  checkBirenErrors(birenFree(d_idataPL));
  checkBirenErrors(birenFreeArray(d_idataArray));
  checkBirenErrors(birenFree(d_odata));
  checkBirenErrors(birenEventDestroy(start));
  checkBirenErrors(birenEventDestroy(stop));
  return bTestResult;
}

int main(int argc, char **argv) {
  checkBirenErrors(birenInit());
  printf("%s starting...\n\n", sSDKsample);
  int bTestResult = runTest(argc, argv);
  printf("%s completed, returned %s\n", sSDKsample, bTestResult ? "OK" : "ERROR!");
  exit(bTestResult ? EXIT_SUCCESS : EXIT_FAILURE);
}
