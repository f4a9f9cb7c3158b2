/* A second translation unit (C++) of the same program: its own wrappers and auto-init. */
#include <cuda_runtime_api.h>
#include <biren_cuda_runtime_cxx.h>

extern "C" int other_unit(void) {
  int *p = nullptr;
  if (cudaMalloc(&p, 16 * sizeof(int)) != cudaSuccess) return 1;
  if (cudaMemset(p, 0, 16 * sizeof(int)) != cudaSuccess) return 2;
  cudaError_t (*fp)(void *) = cudaFree; /* a pointer to a wrapper */
  return fp(p) == cudaSuccess ? 0 : 3;
}
