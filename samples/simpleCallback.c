/* simpleCallback: host threads queue work on every device; a stream callback (birenStreamAddCallback) hands each result to a postprocessing thread.
 * Ported to the BIREN Runtime from NVIDIA's CUDA samples, Samples/0_Introduction/simpleCallback
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
#include <pthread.h>

#define N_workloads 8
#define N_elements_per_workload 100000

/* The sample's CUTBarrier (multithreading.h), with pthreads. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int count, target;
} thread_barrier = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, N_workloads};

static void cutIncrementBarrier(void) {
  pthread_mutex_lock(&thread_barrier.lock);
  thread_barrier.count++;
  pthread_cond_broadcast(&thread_barrier.cond);
  pthread_mutex_unlock(&thread_barrier.lock);
}
static void cutWaitForBarrier(void) {
  pthread_mutex_lock(&thread_barrier.lock);
  while (thread_barrier.count < thread_barrier.target) pthread_cond_wait(&thread_barrier.cond, &thread_barrier.lock);
  pthread_mutex_unlock(&thread_barrier.lock);
}
static void cutStartThread(void *(*f)(void *), void *arg) {
  pthread_t t;
  if (pthread_create(&t, NULL, f, arg) != 0) exit(EXIT_FAILURE);
  pthread_detach(t);
}

typedef struct {
  int id;
  int birenDeviceID;
  int *h_data;
  int *d_data;
  birenStream_t stream;
  int success;
} heterogeneous_workload;

static void myStreamCallback(birenStream_t stream, birenError_t status, void *data);

/* __global__ void incKernel(int *data, int N) */
static void incKernel(void **args) {
  int *data = *(int **)args[0];
  int N = *(int *)args[1];
  int i = (int)(birenBlockIdx().x * birenBlockDim().x + birenThreadIdx().x);
  if (i < N) data[i]++;
}

static void *launch(void *void_arg) {
  heterogeneous_workload *workload = (heterogeneous_workload *)void_arg;
  checkBirenErrors(birenSetDevice(workload->birenDeviceID));
  checkBirenErrors(birenStreamCreate(&workload->stream));
  checkBirenErrors(birenMalloc((void **)&workload->d_data, N_elements_per_workload * sizeof(int)));
  checkBirenErrors(birenHostAlloc((void **)&workload->h_data, N_elements_per_workload * sizeof(int), birenHostAllocPortable));
  for (int i = 0; i < N_elements_per_workload; ++i) workload->h_data[i] = workload->id + i;
  dim3 block = birenDim3(512, 1, 1);
  dim3 grid = birenDim3((N_elements_per_workload + block.x - 1) / block.x, 1, 1);
  checkBirenErrors(birenMemcpyAsync(workload->d_data, workload->h_data, N_elements_per_workload * sizeof(int),
                                    birenMemcpyHostToDevice, workload->stream));
  checkBirenErrors(BIREN_LAUNCH(incKernel, grid, block, 0, workload->stream, workload->d_data, N_elements_per_workload));
  checkBirenErrors(birenMemcpyAsync(workload->h_data, workload->d_data, N_elements_per_workload * sizeof(int),
                                    birenMemcpyDeviceToHost, workload->stream));
  checkBirenErrors(birenStreamAddCallback(workload->stream, myStreamCallback, workload, 0));
  return NULL;
}

static void *postprocess(void *void_arg) {
  heterogeneous_workload *workload = (heterogeneous_workload *)void_arg;
  checkBirenErrors(birenSetDevice(workload->birenDeviceID));
  workload->success = 1;
  for (int i = 0; i < N_workloads; ++i) workload->success &= workload->h_data[i] == i + workload->id + 1;
  checkBirenErrors(birenFree(workload->d_data));
  checkBirenErrors(birenFreeHost(workload->h_data));
  checkBirenErrors(birenStreamDestroy(workload->stream));
  cutIncrementBarrier();
  return NULL;
}

static void myStreamCallback(birenStream_t stream, birenError_t status, void *data) {
  (void)stream;
  checkBirenErrors(status);
  cutStartThread(postprocess, data);
}

int main(void) {
  int N_gpus, max_gpus = 0, gpuInfo[32];
  checkBirenErrors(birenInit());
  printf("Starting simpleCallback\n");
  checkBirenErrors(birenGetDeviceCount(&N_gpus));
  printf("Found %d BIREN capable GPUs\n", N_gpus);
  for (int devid = 0; devid < N_gpus && devid < 32; devid++) {
    birenDeviceProp deviceProp;
    birenSetDevice(devid);
    birenGetDeviceProperties(&deviceProp, devid);
    int SMversion = (deviceProp.major << 4) + deviceProp.minor;
    printf("GPU[%d] %s supports SM %d.%d, %s GPU Callback Functions\n", devid, deviceProp.name, deviceProp.major,
           deviceProp.minor, SMversion >= 0x11 ? "capable" : "NOT capable");
    if (SMversion >= 0x11) gpuInfo[max_gpus++] = devid;
  }
  printf("%d GPUs available to run Callback Functions\n", max_gpus);
  heterogeneous_workload *workloads = (heterogeneous_workload *)malloc(N_workloads * sizeof(heterogeneous_workload));
  printf("Starting %d heterogeneous computing workloads\n", N_workloads);
  for (int i = 0; i < N_workloads; ++i) {
    workloads[i].id = i;
    workloads[i].birenDeviceID = gpuInfo[i % max_gpus];
    cutStartThread(launch, &workloads[i]);
  }
  cutWaitForBarrier();
  printf("Total of %d workloads finished:\n", N_workloads);
  int success = 1;
  for (int i = 0; i < N_workloads; ++i) success &= workloads[i].success;
  printf("%s\n", success ? "Success" : "Failure");
  free(workloads);
  exit(success ? EXIT_SUCCESS : EXIT_FAILURE);
}
