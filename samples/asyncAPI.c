/* asyncAPI: events time asynchronous copies and a kernel while the host keeps counting.
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/0_Introduction/asyncAPI
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

/* __global__ void increment_kernel(int *g_data, int inc_value) */
static void increment_kernel(void **args) {
  int *g_data = *(int **)args[0];
  int inc_value = *(int *)args[1];
  int idx = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  g_data[idx] = g_data[idx] + inc_value;
}

static int correct_output(int *data, const int n, const int x) {
  for (int i = 0; i < n; i++)
    if (data[i] != x) {
      printf("Error! data[%d] = %d, ref = %d\n", i, data[i], x);
      return 0;
    }
  return 1;
}

int main(int argc, char *argv[]) {
  checkBirenErrors(birenInit());
  printf("[%s] - Starting...\n", argv[0]);
  int devID = findBirenDevice(argc, argv);
  birenDeviceProp deviceProps;
  checkBirenErrors(birenGetDeviceProperties(&deviceProps, devID));
  printf("BIREN device [%s]\n", deviceProps.name);
  int n = sampleFullSize() ? 16 * 1024 * 1024 : 1024 * 1024; /* original: 16 * 1024 * 1024 */
  int nbytes = n * (int)sizeof(int);
  int value = 26;
  int *a = 0;
  checkBirenErrors(birenMallocHost((void **)&a, nbytes));
  memset(a, 0, nbytes);
  int *d_a = 0;
  checkBirenErrors(birenMalloc((void **)&d_a, nbytes));
  checkBirenErrors(birenMemset(d_a, 255, nbytes));
  dim3 threads = birenDim3(512, 1, 1);
  dim3 blocks = birenDim3(n / threads.x, 1, 1);
  birenEvent_t start, stop;
  checkBirenErrors(birenEventCreate(&start));
  checkBirenErrors(birenEventCreate(&stop));
  checkBirenErrors(birenDeviceSynchronize());
  float gpu_time = 0.0f;
  checkBirenErrors(birenProfilerStart());
  double t0 = sdkNowMs();
  birenEventRecord(start, 0);
  birenMemcpyAsync(d_a, a, nbytes, birenMemcpyHostToDevice, 0);
  BIREN_LAUNCH(increment_kernel, blocks, threads, 0, 0, d_a, value);
  birenMemcpyAsync(a, d_a, nbytes, birenMemcpyDeviceToHost, 0);
  birenEventRecord(stop, 0);
  double cpu_ms = sdkNowMs() - t0;
  checkBirenErrors(birenProfilerStop());
  unsigned long int counter = 0;
  while (birenEventQuery(stop) == BIREN_ERROR_NOT_READY) counter++;
  checkBirenErrors(birenEventElapsedTime(&gpu_time, start, stop));
  printf("time spent executing by the GPU: %.2f\n", gpu_time);
  printf("time spent by CPU in BIREN calls: %.2f\n", cpu_ms);
  printf("CPU executed %lu iterations while waiting for GPU to finish\n", counter);
  int bFinalResults = correct_output(a, n, value);
  checkBirenErrors(birenEventDestroy(start));
  checkBirenErrors(birenEventDestroy(stop));
  checkBirenErrors(birenFreeHost(a));
  checkBirenErrors(birenFree(d_a));
  exit(bFinalResults ? EXIT_SUCCESS : EXIT_FAILURE);
}
