// A program header with a device function that tests __CUDA_ARCH__ (cuda_arch.cu).
#pragma once
__device__ inline int header_arch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600
  return __CUDA_ARCH__ + 1;
#else
  return -1;
#endif
}
