/* A C99 program using CUDA's runtime API through cuda_runtime_api.h and the small headers. */
#include <cuda_runtime_api.h>
#include <driver_types.h>
#include <builtin_types.h>
#include <vector_types.h>
#include <vector_functions.h>
#include <driver_functions.h>
#include <host_defines.h>
#include <device_launch_parameters.h>
#include <cuda_profiler_api.h>
#include <math_constants.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

int other_unit(void);

int main(void) {
  float *d = NULL;
  float h[4] = {1, 2, 3, 4}, back[4] = {0, 0, 0, 0};
  struct cudaDeviceProp prop;
  cudaError_t e;
  float4 v = make_float4(1, 2, 3, 4);
  dim3 block = {32, 1, 1};
  if (cudaMalloc((void **)&d, sizeof h) != cudaSuccess) return 1;
  if (cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice) != cudaSuccess) return 2;
  if (cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
  if (back[3] != 4.0f || v.w != 4.0f || block.x != 32) return 4;
  e = cudaMalloc((void **)&d, (size_t)1 << 60);
  if (e != cudaErrorMemoryAllocation || strcmp(cudaGetErrorName(e), "cudaErrorMemoryAllocation") != 0) return 5;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 6) return 6;
  if (cudaEventRecord(NULL, 0) != cudaErrorInvalidResourceHandle) return 7;
  if (cudaProfilerStart() != cudaSuccess || cudaProfilerStop() != cudaSuccess) return 8;
  if (cudaFree(d) != cudaSuccess) return 9;
  if (other_unit() != 0) return 10;
  if (CUDART_PI_F != 3.141592654f || CUDART_PI != 3.1415926535897931 || !(CUDART_INF_F > CUDART_MAX_NORMAL_F) ||
      CUDART_NAN == CUDART_NAN)
    return 11;
  printf("c program: ok\n");
  return 0;
}
